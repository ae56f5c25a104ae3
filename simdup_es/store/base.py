"""The store seam: what the pipeline needs from a place that keeps fingerprints.

A :class:`Store` writes and reads documents (:meth:`~Store.put`,
:meth:`~Store.get`, :meth:`~Store.delete`), finds candidates by shared blocks (:meth:`~Store.candidates`)
and, from the finer levels written with a document (:class:`~simdup_es.levels.Levels`),
candidates by shared parts and winnowed keys (:meth:`~Store.part_candidates`),
and serves whole-store jobs such as duplicate groups: a consistent
:meth:`~Store.scan` of every fingerprint, :meth:`~Store.texts` of some documents,
and :meth:`~Store.write_groups`. One contract test suite (``tests/contract``)
holds every store to the same results.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..common import BulkReport
from ..commontext import KeyCounts
from ..errors import ConfigError
from ..keys import StoredKeys, levels_object, members_json
from ..levels import Levels
from ..multilevel import PartCandidate

MAX_ID_BYTES = 512
"""Longest id in UTF-8 bytes (Elasticsearch refuses a whole bulk request for a longer ``_id``)."""
_U64 = 1 << 64
_SURROGATE = re.compile("[\ud800-\udfff]")  # half of a UTF-16 pair: no text encoding can write it

MAX_STORED_PARTS = 1000
"""Most part fingerprints a store keeps per document: a document of about 50,000 units
(overlapping windows of 100), far beyond a page. A longer document keeps an evenly spread
1,000 (its keys are all kept) and :attr:`BulkReport.capped` names it."""
MAX_QUERY_PARTS = 64
"""Most query parts :meth:`Store.part_candidates` looks up (evenly spread over the query).
In Elasticsearch a key is a ``term`` clause and a part one ``terms`` query of its 6 quads:
64 + 400 of them, within the smallest ``indices.query.bool.max_clause_count`` (1,024, on a
small heap). A 2 kB document has about 10 parts and 50 keys."""
MAX_QUERY_KEYS = 400
"""Most query keys :meth:`Store.part_candidates` looks up (evenly spread)."""


def spread(n: int, cap: int) -> list[int]:
    """``min(n, cap)`` indices of ``range(n)``, evenly spread, in order (all of them when ``n <= cap``)."""
    if n <= cap:
        return list(range(n))
    return [i * n // cap for i in range(cap)]


def stored_levels(levels: Levels) -> tuple[list[int], list[int], int]:
    """What a store keeps of ``levels``: part fingerprints, distinct keys, parts left out.

    The same for every store, so that they answer the same candidates.
    """
    fps, keys = levels.stored()
    kept = fps if len(fps) <= MAX_STORED_PARTS else [fps[i] for i in spread(len(fps), MAX_STORED_PARTS)]
    return kept, keys, len(fps) - len(kept)


def stored_keys(fingerprint: int, version: str, levels: Levels, layout: str | None) -> StoredKeys:
    """What a store writes of a document's levels (:class:`~simdup_es.keys.StoredKeys`; the members of ``layout``,
    none for ``None``), by :mod:`simdup_es.keys`: the reference the compiled core's are held to."""
    parts, keys, cut = stored_levels(levels)
    members = None if layout is None else members_json(fingerprint, version, layout, (levels.units, parts, keys, cut))
    return StoredKeys(layout, members, levels.units, cut, np.array(parts, np.uint64).tobytes(),
                      np.array(keys, np.uint64).tobytes(), levels, fingerprint, version)


def levels_fields(doc_id: str, levels: Levels) -> dict[str, object]:
    """The level fields of a document's ``simdup`` object, as the Elasticsearch store writes them: for
    ``simdup backfill``, and for a writer that adds them at ingest (``simdup fingerprint``)."""
    parts, keys, cut = stored_levels(levels)
    return levels_object(doc_id, levels.units, parts, keys, cut)


def capped_note(kept: int, cut: int) -> str:
    """What :attr:`BulkReport.capped` says of a document whose parts were cut."""
    return f"{cut} of {kept + cut} parts left out (at most {MAX_STORED_PARTS} per document)"


def query_terms(parts: Sequence[int | None], keys: Sequence[int]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """``(index, value)`` of the query parts (with a fingerprint) and keys a store looks up.

    At most :data:`MAX_QUERY_PARTS` parts and :data:`MAX_QUERY_KEYS` keys, evenly spread;
    indices refer to the caller's ``parts`` and ``keys``.
    """
    with_fp = [(i, int(f)) for i, f in enumerate(parts) if f is not None]
    some_parts = [with_fp[i] for i in spread(len(with_fp), MAX_QUERY_PARTS)]
    some_keys = [(i, int(keys[i])) for i in spread(len(keys), MAX_QUERY_KEYS)]
    return some_parts, some_keys


NOT_FOUND = "not found"
"""The reason :meth:`Store.delete` gives for an id the store does not have."""


def listed(items: Any, what: str) -> list[Any]:
    """``items`` as a list; a lone string or :class:`StoredDoc`, where a sequence of them is wanted, is refused (a
    string would be taken for its characters: ``delete("doc")`` deleting ``d``, ``o`` and ``c``)."""
    if isinstance(items, (str, StoredDoc)):
        raise ConfigError(f"give the {what} as a list: [{items!r}], not {items!r} alone")
    return list(items)


def id_problem(doc_id: object) -> str | None:
    """Why ``doc_id`` cannot name a stored document (the rules of :meth:`StoredDoc.problem`), or ``None``."""
    return StoredDoc(doc_id, 0, "-").problem()  # type: ignore[arg-type]  # checked there


META_FIELDS = ("url", "author", "date")
"""The fields of a document a store keeps beside its title and text, when the input has them (``simdup index
--url-field``, ``--author-field``, ``--date-field``), for reports to name a source by."""


@dataclass(frozen=True)
class StoredDoc:
    """A document as a store keeps it.

    ``group``, ``group_size`` and ``group_kind`` are the duplicate group ``simdup groups``
    wrote and the strongest kind of link that joined the document to it (``near-duplicate``
    or ``partial``; all ``None`` when the document is in no group); :meth:`Store.put` writes them only
    when asked (``with_groups``).
    """

    id: str
    fingerprint: int
    version: str
    text: str | None = None
    title: str | None = None
    group: str | None = None
    group_size: int | None = None
    levels: Levels | None = None
    """Part fingerprints and winnowed keys (:class:`~simdup_es.parts.PartPrinter`), written by
    :meth:`Store.put` with the document; ``None`` writes the document level only.
    :meth:`Store.get` leaves it ``None``."""
    group_kind: str | None = None
    meta: tuple[tuple[str, str], ...] = ()
    """What the store holds of the document beyond its title: ``(name, value)`` of :data:`META_FIELDS` given at
    index time (a source's address, author and date, which a report shows)."""
    stored: StoredKeys | None = None
    """What a store writes of ``levels``, made with them (``simdup index``'s workers); :meth:`stored_keys`."""
    unified: str | None = None
    """``text`` unified (:func:`simdup_es.text.unify`, as the fingerprint of ``version`` saw it): kept with the
    text, so that a search's judge reads it rather than unifying the text again; ``None``: not kept (an index
    made before the store kept it, or a document written without it). :meth:`Store.get` returns it where kept."""

    def stored_keys(self, layout: str | None) -> StoredKeys | None:
        """What a store writes of :attr:`levels` (``None`` without): :attr:`stored` when it was made of these very
        levels, this fingerprint and version, with ``layout``'s members (or for ``None``: no members wanted), else
        made now (:func:`stored_keys`)."""
        if self.levels is None:
            return None
        made = self.stored
        if (made is not None and made.levels is self.levels and made.fingerprint == self.fingerprint
                and made.version == self.version and (layout is None or made.layout == layout)):
            return made
        return stored_keys(int(self.fingerprint), self.version, self.levels, layout)

    @property
    def group_fields(self) -> tuple[str, int | None, str | None] | None:
        """``(group, group_size, group_kind)``, or ``None`` when the document is in no group."""
        return None if self.group is None else (self.group, self.group_size, self.group_kind)

    def problem(self) -> str | None:
        """Why a store cannot keep this document, or ``None``: the same rules for every store."""
        if not isinstance(self.id, str) or not self.id:
            return "id must be a non-empty string"
        # At most 4 bytes a character: only a long id needs encoding to be measured.
        if len(self.id) > MAX_ID_BYTES // 4 and len(self.id.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES:
            return f"id is longer than {MAX_ID_BYTES} bytes"
        fp = self.fingerprint
        if isinstance(fp, bool) or not isinstance(fp, (int, np.integer)):
            return f"fingerprint must be an integer, got {type(fp).__name__}"
        if not 0 <= int(fp) < _U64:
            return f"fingerprint {fp} is outside 0..2**64-1 (not a 64-bit unsigned integer)"
        if not isinstance(self.version, str) or not self.version:
            return "fingerprint version must be a non-empty string"
        if not all(value is None or isinstance(value, str) for value in (self.title, self.text, self.unified)):
            return "title, text and unified text must be strings or None"
        if self.unified is not None and self.text is None:
            return "a unified text needs the text it was made of"
        if not isinstance(self.meta, tuple) or not all(
                isinstance(p, tuple) and len(p) == 2 and p[0] in META_FIELDS and isinstance(p[1], str) for p in self.meta
        ) or len(dict(self.meta)) != len(self.meta):
            return f"meta must be (name, text) pairs of {', '.join(META_FIELDS)}, each name once"
        for name, value in (("id", self.id), ("title", self.title), ("text", self.text), ("unified text", self.unified),
                            *self.meta):
            if value is not None and (lone := _SURROGATE.search(value)) is not None:
                return (f"{name} holds a lone surrogate (U+{ord(lone.group()):04X} at offset {lone.start()}), which no "
                        "store can write: decode the input with errors='replace', or mend it")
        if self.levels is not None:
            if not isinstance(self.levels, Levels):
                return f"levels must be Levels or None, got {type(self.levels).__name__}"
            if self.levels.version != self.version:
                return f"levels version {self.levels.version} differs from the fingerprint version {self.version}"
            bad = self.levels.not_u64()
            if bad:
                return f"levels hold {bad[0]!r}, not a 64-bit unsigned integer"
        if self.stored is not None and not isinstance(self.stored, StoredKeys):
            return f"stored must be StoredKeys or None, got {type(self.stored).__name__}"
        return None


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
    current: dict[int, tuple[str | None, int | None, str | None]] = field(default_factory=dict)
    """Stored ``(group, group size, group kind)`` of the documents that have any of them."""


@dataclass(frozen=True)
class GroupRow:
    """A document as incremental groups (:mod:`simdup_es.live_groups`) see it: its names, fingerprint and group."""

    key: Key
    """``(index, _id)`` in Elasticsearch, ``(id,)`` embedded: what group ids are made from."""
    ref: Any
    """The store's handle on the document, for :meth:`Store.write_groups`."""
    fingerprint: int
    version: str
    group: str | None = None
    size: int | None = None
    kind: str | None = None

    @property
    def id(self) -> str:
        return self.key[-1]


class FingerprintScan(Protocol):
    """A consistent view of every stored fingerprint (one point in time); close it when done."""

    def fingerprints(self) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Every fingerprint, without ids: ``(fingerprints uint64, version codes, version names)``.

        ``names[codes[i]]`` is the version of ``fingerprints[i]``.
        """

    def members(self, wanted: Mapping[tuple[int, str], int], *, every: bool = False) -> Members:
        """Documents whose ``(fingerprint, version)`` is a key of ``wanted``, and those in a group now.

        With ``every``, every document with a fingerprint (its node ``-1`` when ``wanted``
        does not have it), in one pass: for jobs that look at all of them (``groups --partial``).
        """

    def close(self) -> None:
        """Release the snapshot."""

    def __enter__(self) -> FingerprintScan: ...

    def __exit__(self, *exc: object) -> None: ...


@runtime_checkable
class Store(Protocol):
    """Keeps fingerprinted documents and finds candidates by shared blocks.

    ``candidates`` may return documents further than ``k`` away (the caller re-ranks
    by exact distance) but must never miss one within ``k`` (0 to
    :data:`simdup_es.keys.MAX_K`, given with each lookup) that has the same
    fingerprint version. Parts match by :data:`simdup_es.keys.PART_MATCH` blocks,
    whatever ``k``.
    """

    def setup(self) -> None:
        """Create what the store needs (index, tables); safe to call again."""

    def put(self, docs: Sequence[StoredDoc], *, with_groups: bool = False) -> BulkReport:
        """Insert or replace documents by id.

        Never raises for a single document (:meth:`StoredDoc.problem` says why one
        is refused): ``written + len(failed) == len(docs)``. With ``with_groups`` a
        document's ``group``, ``group_size`` and ``group_kind`` are written too (none
        when ``group`` is ``None``); otherwise they are ignored and the document is in no group.
        """

    def put_keys(self, ids: Sequence[str]) -> list[Key] | None:
        """The :attr:`GroupRow.key` each id gets when put now, or ``None`` when the store cannot
        tell before writing (an Elasticsearch alias or index pattern)."""

    def delete(self, ids: Sequence[str]) -> BulkReport:
        """Delete documents by id, with everything the store keeps of them (text, levels, group).

        After :meth:`refresh` (this process's own deletes need none in the embedded store)
        a deleted document is gone from :meth:`get`, :meth:`candidates`,
        :meth:`part_candidates`, :meth:`scan`, :meth:`count` and :meth:`versions`.
        Never raises for a single id: an unknown id (or one deleted already, or named
        twice) is reported in ``failed`` with the reason ``"not found"``, an invalid one
        with what is wrong with it, so ``written + len(failed) == len(ids)``. The other
        members of a deleted document's duplicate group keep their group fields until
        the next ``simdup groups``.
        """

    def candidates(self, fingerprint: int, version: str, *, k: int,
                   exclude_id: str | None = None) -> tuple[list[str], np.ndarray]:
        """Ids and fingerprints (``uint64``) of documents within ``k`` of ``fingerprint`` (and maybe others)."""

    def candidates_many(self, queries: Sequence[tuple[int, str]], *, k: int) -> list[tuple[list[str], np.ndarray]]:
        """:meth:`candidates` of each ``(fingerprint, version)``, in order (a cluster answers them in few requests)."""

    def part_candidates(
        self, parts: Sequence[int | None], keys: Sequence[int], version: str, *, exclude_id: str | None = None, limit: int = 100
    ) -> list[PartCandidate]:
        """Documents sharing a part (:data:`simdup_es.keys.PART_MATCH` of its 8 blocks) or a key with a query.

        As :meth:`simdup_es.multilevel.PartStore.part_candidates` (the reference is
        :class:`~simdup_es.multilevel.MemoryPartIndex`): every stored document of
        ``version`` (other than ``exclude_id``) with a matched part or key, by matched
        parts plus keys (descending), then id, cut at ``limit``. ``parts`` and ``keys``
        are a query's ``Levels.fingerprints`` and its keys' values; a query longer than
        :data:`MAX_QUERY_PARTS` parts or :data:`MAX_QUERY_KEYS` keys is looked up by an
        evenly spread subset (:func:`query_terms`). Documents written without levels
        are never part candidates.
        """

    def copy_candidates(
        self, fingerprint: int, parts: Sequence[int | None], keys: Sequence[int], version: str, *, k: int,
        exclude_id: str | None = None, limit: int = 100,
    ) -> tuple[tuple[list[str], np.ndarray], list[PartCandidate]]:
        """``(candidates(fingerprint, ..., k=k), part_candidates(parts, keys, ...))`` of one query, both of
        ``version`` (a cluster answers both in one request)."""

    def key_frequencies(self, keys: Sequence[int]) -> KeyCounts:
        """How many stored documents hold each of ``keys`` (winnowed key values), and how many hold any key.

        Exact, and current as :meth:`part_candidates` is: a document written counts with its keys, a
        deleted or replaced one no longer does. Documents of every fingerprint version count (a key is
        a run of text, whoever fingerprinted it). A search asks it once per query, for the query's keys
        (:mod:`simdup_es.commontext`: text that many documents hold is common, not copied).
        """

    def get(self, ids: Iterable[str]) -> list[StoredDoc]:
        """Documents by id, with text, title and group; unknown ids are left out."""

    def count(self) -> int:
        """Number of documents."""

    def count_with_levels(self) -> int:
        """Number of documents stored with their levels (``index --levels document`` writes none)."""

    def versions(self) -> dict[str, int]:
        """Number of documents by fingerprint version (documents without one left out).

        Only documents of a query's version are ever candidates: a store whose
        documents were fingerprinted by another release or other parameters answers
        nothing for them, and a caller should say so.
        """

    def refresh(self) -> None:
        """Make all writes visible to ``candidates``, ``count`` and ``scan``."""

    def force_merge(self) -> None:
        """After a bulk load: make the store as quick to search as it can be; every answer stays the same.

        On a cluster, the index's segments merged into one per shard: a search's level
        keys are looked up once, not once per segment. For an index that is done loading.
        """

    def scan(self) -> FingerprintScan:
        """A consistent view of every fingerprint, for jobs over the whole store."""

    def texts(self, refs: Sequence[Any], field: str | None = None) -> list[str | None]:
        """The text (``field`` in Elasticsearch, by default the one the index records) of documents a scan found;
        ``None`` where there is none."""

    def write_groups(self, writes: Sequence[tuple[Any, str | None, int | None, str | None]]) -> BulkReport:
        """Set (or, with ``None``, clear) ``(group, size, kind)`` of documents a scan found; nothing else changes."""

    def group_rows(self, ids: Sequence[str] = (), groups: Sequence[str] = ()) -> list[GroupRow]:
        """The documents with these ids (in every index of a pattern) and every member of these groups.

        Documents without a fingerprint are left out; each document comes once. As
        :meth:`candidates`, it sees writes after :meth:`refresh`.
        """

    def group_kinds(self) -> dict[str, int]:
        """How many documents have each ``dup_kind`` (``{}`` when no document is in a group)."""

    def close(self) -> None:
        """Release connections and files."""
