"""Loom's Python frontend."""

__version__ = "0.1.0"
