"""The one place the package's version is written (read by ``pyproject.toml`` too)."""

__version__ = "0.3.0"
