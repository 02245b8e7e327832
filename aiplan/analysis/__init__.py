"""aiplan.analysis."""
