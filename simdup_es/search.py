"""Near-duplicate search over a store: candidates, exact re-rank, optional comparison matrix.

Pure apart from the store it is handed: no client, no files.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import simhash as sh
from .fingerprint import Fingerprint
from .store.base import Store


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
