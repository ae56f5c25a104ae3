"""Near-duplicate search over a store: candidates, exact re-rank, comparison matrix.

Pure apart from the store it is handed: no client, no files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from . import simhash as sh
from .compare import Comparison
from .fingerprint import Fingerprint
from .store.base import Store, StoredDoc
from .text import unify


@dataclass(frozen=True)
class Match:
    """A stored document within distance ``k`` of the query."""

    id: str
    distance: int
    fingerprint: int

    @property
    def similarity(self) -> float:
        return sh.similarity(self.distance)


def rerank(query: int, ids: list[str], fingerprints: np.ndarray, k: int) -> list[Match]:
    """Exact Hamming re-rank: candidates within ``k``, nearest first (ties by id)."""
    if not ids:
        return []
    distances = sh.hamming_many(query, fingerprints)
    keep = np.flatnonzero(distances <= k)
    matches = [Match(ids[i], int(distances[i]), int(fingerprints[i])) for i in keep]
    return sorted(matches, key=lambda m: (m.distance, m.id))


def near_duplicates(store: Store, fingerprint: Fingerprint, *, exclude_id: str | None = None) -> list[Match]:
    """Documents in ``store`` within ``store.layout.k`` of ``fingerprint`` (re-rank 1)."""
    ids, fps = store.candidates(fingerprint.value, fingerprint.version, exclude_id=exclude_id)
    return rerank(fingerprint.value, ids, fps, store.layout.k)


@dataclass(frozen=True)
class Hit:
    """A near-duplicate with its stored document and, after re-rank 2, the sentence comparison."""

    match: Match
    doc: StoredDoc | None
    comparison: Comparison | None = None

    @property
    def copied(self) -> float:
        """The larger document similarity of the two directions (SPEC §6), 0 before re-rank 2."""
        c = self.comparison
        return max(c.similarity_a, c.similarity_b) if c else 0.0


def sentence_rerank(
    query_text: str, matches: Sequence[Match], docs: Mapping[str, StoredDoc], compare: Callable[[str, str], Comparison]
) -> list[Hit]:
    """Re-rank 2: compare the query with each match sentence by sentence.

    ``compare`` takes two unified texts (e.g. :func:`simdup_es.compare.compare`
    with parameters bound). Hits are ordered by the share of text copied (larger
    direction) and then by distance; a match whose text the store does not keep
    is left unscored, at the end.
    """
    query = unify(query_text)
    hits = []
    for m in matches:
        doc = docs.get(m.id)
        comparison = compare(query, unify(doc.text)) if doc is not None and doc.text else None
        hits.append(Hit(m, doc, comparison))
    return sorted(hits, key=lambda h: (h.comparison is None, -h.copied, h.match.distance, h.match.id))
