"""What a search works out of stored texts again and again, kept between searches within byte budgets.

The copies of a widely copied text are candidates of query after query, and ``simdup serve``
answers many queries in one process: a stored text's unified form, its sentence scan, its unit codes
(what its common text is told by, :mod:`simdup_es.commontext`) and the map from its unified form back
to its own characters are kept, least recently used first out, each
cache bounded by what it holds (a stored text may be 100 characters or 5 MB, see
:class:`~simdup_es.lru.ByteLRU`). Keys are the texts themselves, never document ids: a document
replaced or deleted cannot be answered from a cache as it was.

A :class:`TextCaches` belongs to one comparer (:func:`simdup_es.search.comparer`), which a
service (:class:`simdup_es.service.Service`) keeps for its lifetime; nothing is shared between
comparers, and nothing is kept by a module.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from . import native
from .commontext import codes_of_scan
from .lru import ByteLRU
from .sentences import Scan, scan_bytes
from .text import unify, unify_many

if TYPE_CHECKING:  # the maps' module loads with the first map: a command line that shows none starts without it
    from .offsets import Unified

__all__ = ["CODES_BYTES", "MAPPED_CHARS", "SCAN_BYTES", "UNIFIED_BYTES", "TextCaches"]

UNIFIED_BYTES = 32 * 2**20
"""The unified stored texts (each about twice its text's bytes)."""
SCAN_BYTES = 64 * 2**20
"""The sentence scans of stored texts: about 25 kB for a text of 2,000 characters."""
CODES_BYTES = 16 * 2**20
"""The unit codes of stored texts: 8 bytes a unit."""
MAPPED_CHARS = 2_000_000
"""The maps of the stored texts reports and served searches show, in characters of those texts."""


class TextCaches:
    """The unified texts, sentence scans, unit codes and maps of stored texts (module docstring), each within its
    budget.

    ``unified``, ``scans``, ``codes`` and ``mapped`` are the :class:`~simdup_es.lru.ByteLRU` caches: read their
    use with ``.info()``, change a budget with ``.max_bytes`` (0 keeps nothing). Thread-safe: a
    server's worker threads share one.
    """

    def __init__(self, unified_bytes: int = UNIFIED_BYTES, scans_bytes: int = SCAN_BYTES,
                 mapped_chars: int = MAPPED_CHARS, codes_bytes: int = CODES_BYTES) -> None:
        self.unified: ByteLRU[str, str] = ByteLRU(
            unify, lambda text, unified: sys.getsizeof(text) + sys.getsizeof(unified), unified_bytes)
        self.scans: ByteLRU[tuple[str, int], Scan] = ByteLRU(native.scan, scan_bytes, scans_bytes)
        self.codes: ByteLRU[tuple[str, int], np.ndarray] = ByteLRU(self._codes, lambda _, codes: codes.nbytes, codes_bytes)
        self.mapped: ByteLRU[str, Unified] = ByteLRU(self._map, lambda text, _: len(text), mapped_chars)

    def unify(self, text: str) -> str:
        """:func:`~simdup_es.text.unify` of a stored text, kept."""
        return self.unified(text)

    def unify_many(self, texts: Sequence[str]) -> list[str]:
        """:meth:`unify` of each text, those not kept unified in one :func:`~simdup_es.text.unify_many` call."""
        return self.unified.many(texts, unify_many)  # type: ignore[arg-type]  # list[UnifiedText] is a list[str]

    def _codes(self, key: tuple[str, int]) -> np.ndarray:
        """:func:`simdup_es.winnow.unit_codes` of ``(text, min_units)``, from the text's sentence scan (kept too)."""
        _, points, word_at, words, _ = self.scans(key)
        return codes_of_scan(points, word_at, words)

    def _map(self, text: str) -> Unified:
        from .offsets import unify_mapped

        # The unified text the search made is reused: mapping costs several times unifying.
        return unify_mapped(text, self.unified(text))

    def clear(self) -> None:
        for cache in (self.unified, self.scans, self.codes, self.mapped):
            cache.clear()
