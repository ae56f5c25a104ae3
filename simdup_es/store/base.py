"""The store seam: what the pipeline needs from a place that keeps fingerprints.

A :class:`Store` writes and reads documents (:meth:`~Store.put`,
:meth:`~Store.get`), finds candidates by shared blocks (:meth:`~Store.candidates`),
and serves whole-store jobs such as duplicate groups: a consistent
:meth:`~Store.scan` of every fingerprint, :meth:`~Store.texts` of some documents,
and :meth:`~Store.write_groups`. One contract test suite (``tests/contract``)
holds every store to the same results.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..config import BlockLayout

MAX_ID_BYTES = 512
"""Longest id in UTF-8 bytes (Elasticsearch refuses a whole bulk request for a longer ``_id``)."""
_U64 = 1 << 64


class Closing:
    """``with thing: ...`` calls ``thing.close()`` on the way out."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class StoredDoc:
    """A document as a store keeps it.

    ``group`` and ``group_size`` are the duplicate group ``simdup groups`` wrote
    (``None`` when the document is in none); :meth:`Store.put` ignores them.
    """

    id: str
    fingerprint: int
    version: str
    text: str | None = None
    title: str | None = None
    group: str | None = None
    group_size: int | None = None

    def problem(self) -> str | None:
        """Why a store cannot keep this document, or ``None``: the same rules for every store."""
        if not isinstance(self.id, str) or not self.id:
            return "id must be a non-empty string"
        if len(self.id.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES:
            return f"id is longer than {MAX_ID_BYTES} bytes"
        fp = self.fingerprint
        if isinstance(fp, bool) or not isinstance(fp, (int, np.integer)):
            return f"fingerprint must be an integer, got {type(fp).__name__}"
        if not 0 <= int(fp) < _U64:
            return f"fingerprint {fp} is outside 0..2**64-1 (not a 64-bit unsigned integer)"
        if not isinstance(self.version, str) or not self.version:
            return "fingerprint version must be a non-empty string"
        if not all(v is None or isinstance(v, str) for v in (self.title, self.text)):
            return "title and text must be strings or None"
        return None


@dataclass
class BulkReport:
    """What a bulk write did: ids written, and ``(id, reason)`` for each failure.

    ``missing`` counts updates of documents that no longer exist (deleted since
    they were read); they are neither written nor failed.
    """

    written: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    missing: int = 0


Key = tuple[str, ...]
"""A document's name for group ids and messages: ``(index, _id)`` in Elasticsearch, ``(id,)`` embedded."""


@dataclass
class Members:
    """Documents a :class:`FingerprintScan` found, by position."""

    keys: list[Key] = field(default_factory=list)
    refs: list[Any] = field(default_factory=list)
    """The store's handle on each document, for :meth:`Store.texts` and :meth:`Store.write_groups`."""
    nodes: list[int] = field(default_factory=list)
    """The node of each document (the value ``wanted`` gave its fingerprint), ``-1`` for none."""
    current: dict[int, tuple[str | None, int | None]] = field(default_factory=dict)
    """Stored ``(group, group size)`` of the documents that have either."""


class FingerprintScan(Protocol):
    """A consistent view of every stored fingerprint (one point in time); close it when done."""

    def fingerprints(self) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Every fingerprint, without ids: ``(fingerprints uint64, version codes, version names)``.

        ``names[codes[i]]`` is the version of ``fingerprints[i]``.
        """

    def members(self, wanted: Mapping[tuple[int, str], int]) -> Members:
        """Documents whose ``(fingerprint, version)`` is a key of ``wanted``, and those in a group now."""

    def close(self) -> None:
        """Release the snapshot."""

    def __enter__(self) -> FingerprintScan: ...

    def __exit__(self, *exc: object) -> None: ...


@runtime_checkable
class Store(Protocol):
    """Keeps fingerprinted documents and finds candidates by shared blocks.

    ``candidates`` may return documents further than ``layout.k`` away (the caller
    re-ranks by exact distance) but must never miss one within ``layout.k`` that has
    the same fingerprint version.
    """

    layout: BlockLayout
    """``layout.k`` is the distance ``candidates`` guarantees; ``layout.blocks`` shapes
    the Elasticsearch block fields only (the embedded store cuts its own tables)."""

    def setup(self) -> None:
        """Create what the store needs (index, tables); safe to call again."""

    def put(self, docs: Sequence[StoredDoc]) -> BulkReport:
        """Insert or replace documents by id.

        Never raises for a single document (:meth:`StoredDoc.problem` says why one
        is refused): ``written + len(failed) == len(docs)``.
        """

    def candidates(self, fingerprint: int, version: str, *, exclude_id: str | None = None) -> tuple[list[str], np.ndarray]:
        """Ids and fingerprints (``uint64``) of documents sharing at least ``layout.min_match`` blocks."""

    def get(self, ids: Iterable[str]) -> list[StoredDoc]:
        """Documents by id, with text, title and group; unknown ids are left out."""

    def count(self) -> int:
        """Number of documents."""

    def refresh(self) -> None:
        """Make all writes visible to ``candidates``, ``count`` and ``scan``."""

    def scan(self) -> FingerprintScan:
        """A consistent view of every fingerprint, for jobs over the whole store."""

    def texts(self, refs: Sequence[Any], field: str = "text") -> list[str | None]:
        """The text (``field`` in Elasticsearch) of documents a scan found; ``None`` where there is none."""

    def write_groups(self, writes: Sequence[tuple[Any, str | None, int | None]]) -> BulkReport:
        """Set (or, with ``None``, clear) ``(group, size)`` of documents a scan found; nothing else changes."""

    def close(self) -> None:
        """Release connections and files."""
