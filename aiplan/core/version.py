"""The package version (one home: pyproject.toml reads it)."""

__version__ = "0.1.0"
