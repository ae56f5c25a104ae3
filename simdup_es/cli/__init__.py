"""The ``simdup`` command: a thin click layer over the library."""

from __future__ import annotations

from .main import main

__all__ = ["main"]
