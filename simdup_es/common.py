"""Plain types every layer may use: the result of a bulk write, a ``with`` helper, and byte sizes.

This module imports nothing from the package, so :mod:`simdup_es.errors`, the
Elasticsearch layer (:mod:`simdup_es.es`) and the stores (:mod:`simdup_es.store`)
can all depend on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(?:([kmgtp])i?b?|b)?\s*", re.IGNORECASE)
_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def byte_size(text: str) -> int | None:
    """Bytes from ``10M``, ``512k``, ``1.5MB``, ``100gb`` or ``2000`` (k, M, G, T, P are powers of 1024, as
    Elasticsearch's sizes); ``None`` when ``text`` is not a size."""
    found = _SIZE.fullmatch(text)
    return int(float(found[1]) * _UNITS[found[2].lower()] if found[2] else float(found[1])) if found else None


class Closing:
    """``with thing: ...`` calls ``thing.close()`` on the way out."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class BulkReport:
    """What a bulk write did: ids written, and ``(id, reason)`` for each failure.

    ``missing`` counts updates of documents that no longer exist (deleted since
    they were read); they are neither written nor failed.
    """

    written: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    missing: int = 0
    capped: list[tuple[str, str]] = field(default_factory=list)
    """``(id, what)`` of written documents whose levels were cut (:data:`~simdup_es.store.base.MAX_STORED_PARTS`)."""


__all__ = ["BulkReport", "Closing"]
