"""Plain types every layer may use: the result of a bulk write, a ``with`` helper, byte sizes, and counts of a
long mask read at some positions.

This module imports nothing from the package, so :mod:`simdup_es.errors`, the
Elasticsearch layer (:mod:`simdup_es.es`) and the stores (:mod:`simdup_es.store`)
can all depend on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(?:([kmgtp])i?b?|b)?\s*", re.IGNORECASE)
_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def byte_size(text: str) -> int | None:
    """Bytes from ``10M``, ``512k``, ``1.5MB``, ``100gb`` or ``2000`` (k, M, G, T, P are powers of 1024, as
    Elasticsearch's sizes); ``None`` when ``text`` is not a size."""
    found = _SIZE.fullmatch(text)
    return int(float(found[1]) * _UNITS[found[2].lower()] if found[2] else float(found[1])) if found else None


COUNT_BLOCK = 1 << 16  # items of a mask counted at a time by counts_before (512 KiB of running counts)


def counts_before(marked: np.ndarray, at: np.ndarray) -> np.ndarray:
    """How many of ``marked`` (a boolean array) lie before each of the positions ``at`` (``0 .. marked.size``, any
    order), as int64: the running count read where asked, counted :data:`COUNT_BLOCK` items at a time rather than
    made for the whole mask (a 5 MB text has 1.7 million characters: 7 to 14 MB of counts, beside what is kept)."""
    at = np.asarray(at, dtype=np.int64)
    order = np.argsort(at, kind="stable")
    where = at[order]
    out = np.zeros(at.size, dtype=np.int64)
    lo, total = int(np.searchsorted(where, 0, side="right")), 0  # position 0: none before it
    for first in range(0, marked.size, COUNT_BLOCK):
        running = np.cumsum(marked[first : first + COUNT_BLOCK], dtype=np.int64)
        hi = int(np.searchsorted(where, first + running.size, side="right"))
        out[order[lo:hi]] = total + running[where[lo:hi] - first - 1]
        total, lo = total + int(running[-1]), hi
    return out


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
