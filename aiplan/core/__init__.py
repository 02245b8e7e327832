"""aiplan.core."""
