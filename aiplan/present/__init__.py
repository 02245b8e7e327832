"""aiplan.present."""
