"""aiplan.calibration."""
