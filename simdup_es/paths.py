"""Where simdup's files are: its cache folder and installed packages' data, and writing cache files whole."""

from __future__ import annotations

import importlib.util
import logging
import os
import tempfile
import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import IO

from .errors import ConfigError

log = logging.getLogger(__name__)


#: The variable that names simdup's cache folder.
CACHE_ENV = "SIMDUP_CACHE"


def cache_dir() -> Path | None:
    """Where simdup keeps caches (derived tables, rebuilt when missing): the first folder of these it can write.

    ``$SIMDUP_CACHE``; the user's cache folder (``$XDG_CACHE_HOME/simdup-es``, else
    ``~/.cache/simdup-es``); ``simdup-es-<uid>`` in the temporary folder. ``None`` when none
    can be written (a service account without a home, a read-only container): nothing is
    cached, every start builds the tables again, and a warning names ``SIMDUP_CACHE``.
    Looked for once per process for the same environment.
    """
    env = os.environ
    return _cache_dir(env.get(CACHE_ENV) or None, env.get("XDG_CACHE_HOME") or None, env.get("HOME"),
                      tempfile.gettempdir())


@lru_cache(maxsize=8)
def _cache_dir(chosen: str | None, xdg: str | None, home: str | None, tmp: str) -> Path | None:
    tried: list[str] = []
    for path in _cache_choices(chosen, xdg, tmp):
        why = _unwritable(path, private=path.parent == Path(tmp))
        if why is None:
            if chosen is not None and tried:
                log.warning("cannot write the cache folder %s=%s (%s); caching in %s instead", CACHE_ENV, chosen,
                            tried[0].rpartition(": ")[2], path)
            elif tried:
                log.info("caching in %s (%s); set %s to choose the folder", path, "; ".join(tried), CACHE_ENV)
            return path
        tried.append(f"{path}: {why}")
    log.warning("no cache folder can be written (%s): tables are built again at every start, which costs about a "
                "second; set %s to a folder you can write", "; ".join(tried), CACHE_ENV)
    return None


def _cache_choices(chosen: str | None, xdg: str | None, tmp: str) -> list[Path]:
    """The cache folders to try, in order (no home folder: none in it)."""
    choices = [Path(chosen)] if chosen else []
    if xdg and os.path.isabs(xdg):
        choices.append(Path(xdg) / "simdup-es")
    else:
        try:
            choices.append(Path.home() / ".cache" / "simdup-es")
        except RuntimeError:  # no HOME and no password entry
            pass
    user = os.getuid() if hasattr(os, "getuid") else "user"  # (Windows: the temporary folder is the user's own)
    return choices + [Path(tmp) / f"simdup-es-{user}"]


def _unwritable(path: Path, *, private: bool = False) -> str | None:
    """Why ``path`` cannot be the cache folder (made if missing), or ``None`` when it can.

    A folder in the shared temporary folder (``private``) must be the user's own and
    closed to others: another user could have put one there, with tables of theirs.
    """
    try:
        path.mkdir(mode=0o700 if private else 0o777, parents=not private, exist_ok=True)
        st = path.stat()
    except OSError as exc:
        return exc.strerror or str(exc)
    if private and hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o022):
        return "another user's, or open to others"
    if not os.access(path, os.W_OK | os.X_OK):
        return "not writable"
    return None


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
