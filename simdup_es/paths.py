"""Where simdup's files are: its cache folder and installed packages' data, and writing cache files whole."""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO

from .errors import ConfigError


def cache_dir() -> Path:
    """Where simdup keeps caches: ``$SIMDUP_CACHE``, else ``~/.cache/simdup-es``."""
    path = Path(os.environ.get("SIMDUP_CACHE") or Path.home() / ".cache" / "simdup-es")
    path.mkdir(parents=True, exist_ok=True)
    return path


def package_dir(name: str) -> Path:
    """Where an installed package's files are, for its data; the package is not imported."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"the {name} package is not installed; install simdup-es with its dependencies")
    return Path(spec.submodule_search_locations[0])


def write_atomically(path: Path, write: Callable[[IO[bytes]], object]) -> None:
    """Write ``path`` whole or not at all, through ``write``: a temporary file, then a rename.

    A process reading it meanwhile sees the old file or the new one. Raises OSError.
    """
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") as f:
            write(f)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # left only when writing failed (a full or read-only folder)
