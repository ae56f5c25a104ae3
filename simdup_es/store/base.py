"""The store seam: what the pipeline needs from a place that keeps fingerprints."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from ..config import BlockLayout


@dataclass(frozen=True)
class StoredDoc:
    """A document as a store keeps it."""

    id: str
    fingerprint: int
    version: str
    text: str | None = None
    title: str | None = None


@dataclass
class BulkReport:
    """What a bulk write did: ids written, and ``(id, reason)`` for each failure."""

    written: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)


@runtime_checkable
class Store(Protocol):
    """Keeps fingerprinted documents and finds candidates by shared blocks.

    ``candidates`` may return documents further than ``layout.k`` away (the caller
    re-ranks by exact distance) but must never miss one within ``layout.k`` that has
    the same fingerprint version.
    """

    layout: BlockLayout

    def setup(self) -> None:
        """Create what the store needs (index, tables); safe to call again."""

    def put(self, docs: Sequence[StoredDoc]) -> BulkReport:
        """Insert or replace documents by id.

        Never raises for a single document: ``written + len(failed) == len(docs)``.
        """

    def candidates(self, fingerprint: int, version: str, *, exclude_id: str | None = None) -> tuple[list[str], np.ndarray]:
        """Ids and fingerprints (``uint64``) of documents sharing at least ``layout.min_match`` blocks."""

    def get(self, ids: Iterable[str]) -> list[StoredDoc]:
        """Documents by id, with text and title; unknown ids are left out."""

    def count(self) -> int:
        """Number of documents."""

    def refresh(self) -> None:
        """Make all writes visible to ``candidates`` and ``count``."""

    def close(self) -> None:
        """Release connections and files."""
