"""Multilevel retrieval: find edited and partial copies through part fingerprints and winnowed keys.

The pipeline for one query document::

    levels of the query (simdup_es.levels)                      pure
      -> part_candidates: stored documents sharing a part       the store (one round trip)
         (6 of 8 blocks equal) or a key, with which of the
         query's parts and keys each one matched
      -> key_frequencies: how many stored documents hold each   the store (one round trip)
         of the query's keys (simdup_es.commontext)
      -> rank by evidence: the share of the query, or of the    pure
         candidate, its matched parts and rare keys cover, or
         one long run of them (a passage in a long text)
      -> the comparison matrix both ways decides, best first,   pure (simdup_es.compare)
         until a few in a row are no copy or the limit is met
         copied units: in a marked sentence or a shared run;
         common ones (under keys many stored documents hold)
         count on neither side and are shown apart
         a copy: on both sides a counted passage of rare
         copied units (30 units; or a sentence of 16 under
         keys few documents hold; or half a side)
         near-duplicate: such a copy within document distance
         k, or most of both sides copied (a whole copy)

The document-level path (:func:`simdup_es.search.near_duplicates`) finds the candidates within
distance ``k``; the matrix judges them as the others (a near-duplicate whose text the store does not
keep stays an unscored near-duplicate, :mod:`simdup_es.search`).

What a store must add is :class:`PartStore` (one method to write levels, one to look
them up). :class:`MemoryPartIndex` is the slow, obviously-correct reference both
stores are tested against.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, runtime_checkable

import numpy as np

from . import native
from . import simhash as sh
from .commontext import COMMON_SHARE, Held, KeyCounts, Rarity, common_threshold, held_passages, rarity, \
    to_sentence_edges
from .common import counts_before
from .compare import Bound, Comparison, Screen
from .config import require_ints
from .errors import ConfigError, FingerprintVersionError
from .keys import PART_MATCH, check_k
from .levels import Levels, SentenceRows, U64Keys, part_bounds
from .sentences import unit_spans
from .winnow import KEY_K, KEY_W, unit_codes

if TYPE_CHECKING:  # the stores import this module
    from .store.base import StoredDoc

__all__ = [
    "Candidate",
    "CommonText",
    "Copies",
    "Shares",
    "copied_shares",
    "could_be_copy",
    "counted_units",
    "held_spans",
    "MemoryPartIndex",
    "MultiMatch",
    "MultiParams",
    "PartCandidate",
    "PartStore",
    "StoredText",
    "find_copies",
    "judge",
    "passages",
    "rank_candidates",
]

log = logging.getLogger(__name__)

Kind = Literal["near-duplicate", "partial"]


@dataclass(frozen=True)
class MultiParams:
    """Thresholds of multilevel retrieval, with the defaults the evaluation chose (docs/evaluation.md).

    Attributes
    ----------
    k:
        Document distance up to which a copy is a ``near-duplicate`` (the document-level rule),
        0 to :data:`simdup_es.keys.MAX_K`; the texts must still share a counted passage.
    min_coverage:
        A part candidate goes to the comparison matrix only if its evidence
        (:class:`Candidate`: the share of the query or of itself its matched parts and keys
        cover) is at least this.
    max_candidates, max_misses:
        Part candidates are judged best first, their texts read ``max_candidates`` at a
        time, until ``max_misses`` in a row were no copy or the caller's ``limit`` of
        copies was found: the budget grows with the copies there are, never cutting
        them silently.
    store_limit:
        At first this many candidates are asked of the store (most matched parts and keys
        first, ties by id): a bound on work for queries made of common phrases. When all of
        them were judged and copies kept coming (``Copies.ran_out``), ``find_copies`` of
        :mod:`simdup_es.search` asks for four times as many, while that confirms more
        copies, up to :data:`simdup_es.search.MAX_STORE_LIMIT`.
    common, common_share:
        A key held by more than ``common`` stored documents is common, or, with ``common``
        ``None``, by more than ``common_share`` of the documents that hold keys (at least
        :data:`simdup_es.commontext.COMMON_MIN`): text under such keys is common text
        (:mod:`simdup_es.commontext`), which counts on neither side. MOSS's ``-m``, relative
        to the store's size.
    passage_units:
        Rare copied units (in a run both texts share, or in a sentence the matrix marked,
        and not common) at most ``passage_gap`` apart form a passage; one of at least this
        many counts, wherever it lies.
    short_units, short_common:
        A shorter passage counts from ``short_units`` copied units under no key held by
        more than ``short_common`` documents: one copied sentence, rarer the shorter it is
        (a line two pages of one template share is held by dozens). A side counts those
        units together when they are half of it (a short text with a clause deleted).
    partial_threshold:
        A copy needs at least this share of either side in counted passages (0: any
        counted passage on both sides is one).
    whole_share:
        A copy with at least this share of both sides in counted passages is a
        ``near-duplicate`` (a whole copy) whatever its distance.
    """

    k: int = 3
    min_coverage: float = 0.05
    max_candidates: int = 10
    max_misses: int = 5
    store_limit: int = 100
    common: int | None = None
    common_share: float = COMMON_SHARE
    passage_units: int = 30
    short_units: int = 16
    short_common: int = 30
    passage_gap: int = 8
    partial_threshold: float = 0.0
    whole_share: float = 0.8

    def __post_init__(self) -> None:
        for name in ("min_coverage", "partial_threshold", "whole_share", "common_share"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"{name} must be between 0 and 1, got {value}")
        require_ints(self, ("passage_gap", "short_common"), minimum=0)
        require_ints(self, ("max_candidates", "max_misses", "store_limit", "passage_units", "short_units"))
        if self.common is not None:
            require_ints(self, ("common",), minimum=0)
        check_k(self.k)

    def common_threshold(self, documents: int) -> int:
        """Documents above which a key is common, in a store where ``documents`` hold keys."""
        return common_threshold(documents, self.common, self.common_share)


@dataclass(frozen=True)
class PartCandidate:
    """What a store returns per candidate: which of the query's parts and keys it matched.

    Attributes
    ----------
    id:
        The stored document.
    parts:
        Indices into ``query.parts`` whose fingerprint shares at least
        :data:`~simdup_es.keys.PART_MATCH` blocks with one of the candidate's part fingerprints.
    keys:
        Indices into ``query.keys`` whose key is among the candidate's keys.
    units:
        The candidate's units (``Levels.units``, stored with the document).
    """

    id: str
    parts: frozenset[int]
    keys: frozenset[int]
    units: int


@runtime_checkable
class PartStore(Protocol):
    """What a store adds for multilevel retrieval. Both stores return the same candidates.

    ``part_candidates`` returns every stored document (of ``version``, other than
    ``exclude_id``) with at least one matched part or key, ordered by the number of
    matched parts plus keys (descending) and then by id, cut at ``limit``. Matching
    is exact: a part matches when at least :data:`~simdup_es.keys.PART_MATCH` of its 8
    blocks equal the stored part's (no Hamming re-rank), a key when it is equal.
    """

    def put_levels(self, doc_id: str, levels: Levels) -> None:
        """Store (or replace) a document's part fingerprints, keys and units."""

    def part_candidates(
        self, parts: Sequence[int | None], keys: Sequence[int], version: str, *, exclude_id: str | None = None, limit: int = 100
    ) -> list[PartCandidate]:
        """Candidates for a query's part fingerprints (``None`` = no fingerprint) and keys."""


class MemoryPartIndex:
    """Reference :class:`PartStore` in memory: posting lists per block value and per key.

    Slow in Python terms but obviously correct; it also keeps document fingerprints so the
    evaluation can run the whole pipeline without a store.
    """

    def __init__(self) -> None:
        self.version: str | None = None
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._units: list[int] = []
        self._fps: list[int] = []
        self._alive: list[bool] = []
        self._blocks: list[dict[int, list[int]]] = [defaultdict(list) for _ in range(sh.BLOCKS)]
        self._part_owner: list[int] = []
        self._keys: dict[int, list[int]] = defaultdict(list)
        self._block_arrays: list[dict[int, np.ndarray]] | None = None  # built on first lookup
        self._owner = np.zeros(0, dtype=np.int64)

    def _check(self, version: str) -> None:
        if self.version is None:
            self.version = version
        elif version != self.version:
            raise FingerprintVersionError(
                f"fingerprint versions differ ({version} vs {self.version}): index every document with one fingerprinter"
            )

    def put_levels(self, doc_id: str, levels: Levels, fingerprint: int = 0) -> None:
        self._check(levels.version)
        if doc_id in self._row:  # replace: the old rows stay but no longer answer
            self._alive[self._row[doc_id]] = False
        row = len(self._ids)
        self._ids.append(doc_id)
        self._row[doc_id] = row
        self._units.append(levels.units)
        self._fps.append(fingerprint)
        self._alive.append(True)
        fps, keys = levels.stored()
        for f in fps:
            part = len(self._part_owner)
            self._part_owner.append(row)
            for j, b in enumerate(sh.blocks(f)):
                self._blocks[j][b].append(part)
        for key in keys:
            self._keys[key].append(row)
        self._block_arrays = None

    def __len__(self) -> int:
        return sum(self._alive)

    def near_duplicates(self, fingerprint: int, version: str, *, k: int,
                        exclude_id: str | None = None) -> list[tuple[str, int]]:
        """``(id, distance)`` of documents within ``k`` (brute force), nearest first."""
        if not self._ids or version != self.version:
            return []
        d = sh.hamming_many(fingerprint, np.array(self._fps, dtype=np.uint64))
        out = [(self._ids[r], int(d[r])) for r in np.flatnonzero(d <= k) if self._alive[r]]
        return sorted((x for x in out if x[0] != exclude_id), key=lambda x: (x[1], x[0]))

    def _arrays(self) -> list[dict[int, np.ndarray]]:
        if self._block_arrays is None:
            self._block_arrays = [{b: np.array(rows, dtype=np.int64) for b, rows in t.items()} for t in self._blocks]
            self._owner = np.array(self._part_owner, dtype=np.int64)
        return self._block_arrays

    def part_candidates(
        self, parts: Sequence[int | None], keys: Sequence[int], version: str, *, exclude_id: str | None = None, limit: int = 100
    ) -> list[PartCandidate]:
        if version != self.version:
            return []
        tables = self._arrays()
        part_hits = []
        for i, f in enumerate(parts):
            if f is None:
                continue
            lists = [tables[j].get(b) for j, b in enumerate(sh.blocks(f))]
            rows = np.concatenate([x for x in lists if x is not None] or [np.zeros(0, dtype=np.int64)])
            found, counts = np.unique(rows, return_counts=True)
            part_hits.append((i, np.unique(self._owner[found[counts >= PART_MATCH]])))
        matched = matched_by_document(part_hits, ((i, self._keys.get(key, ())) for i, key in enumerate(keys)))
        return best_candidates([PartCandidate(self._ids[doc], *hits, self._units[doc]) for doc, hits in matched.items()
                                if self._alive[doc] and self._ids[doc] != exclude_id], limit)


    def key_frequencies(self, keys: Sequence[int]) -> KeyCounts:
        """How many live documents hold each key, and how many hold any (:meth:`simdup_es.store.base.Store.key_frequencies`)."""
        alive = [r for r in range(len(self._ids)) if self._alive[r]]
        holding = set().union(*(set(rows) for rows in self._keys.values())) if self._keys else set()
        counts = [len({r for r in self._keys.get(key, ()) if self._alive[r]}) for key in keys]
        return KeyCounts.of_pairs(keys, counts, len(holding.intersection(alive)))


def matched_by_document(part_hits: Iterable[tuple[int, Iterable[int]]], key_hits: Iterable[tuple[int, Iterable[int]]]
                        ) -> dict[int, tuple[frozenset[int], frozenset[int]]]:
    """The query's parts and keys each document (by a store's number) matched, from ``(part or key, documents)``."""
    parts: dict[int, set[int]] = defaultdict(set)
    keys: dict[int, set[int]] = defaultdict(set)
    for hits, pairs in ((parts, part_hits), (keys, key_hits)):
        for i, docs in pairs:
            for doc in np.asarray(docs, dtype=np.int64).tolist():
                hits[doc].add(i)
    return {doc: (frozenset(parts.get(doc, ())), frozenset(keys.get(doc, ()))) for doc in parts.keys() | keys.keys()}


def best_candidates(found: Iterable[PartCandidate], limit: int) -> list[PartCandidate]:
    """The ``limit`` candidates with the most matched parts and keys (ties by id), as a store returns them."""
    return sorted(found, key=lambda c: (-(len(c.parts) + len(c.keys)), c.id))[:limit]


class StoredText(NamedTuple):
    """A stored document's unified text, and its fingerprint when of the query's version."""

    text: str
    fingerprint: int | None = None


@dataclass(frozen=True)
class Candidate:
    """A part candidate: its coverage of the query and of itself, and how likely the matrix confirms it.

    ``evidence`` is the larger coverage (that of itself in full only when its matched keys and
    parts make a run of what a short passage needs, :func:`_short_need`, in proportion below), or, for a
    candidate whose matched keys and parts form one long run (a passage pasted into a long
    document, a small share of both), :data:`LONG_RUN` for a run of ``passage_units``.
    """

    id: str
    coverage_query: float
    coverage_match: float
    evidence: float = 0.0

    @property
    def coverage(self) -> float:
        return max(self.coverage_query, self.coverage_match)


def _judging_order(c: Candidate) -> tuple[float, float, str]:
    """The order candidates are judged in: by evidence plus the smaller of the two coverages. When
    ``limit`` copies are found before every candidate is judged, the query's edited copies (most of
    both sides) come before texts that hold all of it as a small part of theirs, or that it holds."""
    return -(c.evidence + min(c.coverage_query, c.coverage_match)), -c.coverage, c.id


def _unit_starts(query: Levels) -> np.ndarray:
    """The unit offset of each of the query's sentences, and the units after the last."""
    if isinstance(query.sentences, SentenceRows):  # read from their table: no Sentence object made (60 MB for 10 MB)
        rows = query.sentences.table.rows(query.sentences.i)
        return np.cumsum(np.concatenate(([0], query.sentences.table.units[rows.start : rows.stop])), dtype=np.int64)
    return np.cumsum([0, *(s.n_units for s in query.sentences)])


def key_cover(query: Levels, keys: Iterable[int], key_units: int = KEY_K, key_window: int = KEY_W) -> np.ndarray:
    """One flag per unit of the query: under a run the keys ``keys`` (indices) stand for.

    A key covers its gram's ``key_units`` units and, when the next one starts at most
    ``key_window`` units later, the units up to it: winnowing keeps a key in every
    window of a shared run, so keys that close belong to one run.
    """
    covered = np.zeros(query.units, dtype=bool)
    starts = sorted(query.keys[i].position for i in keys)
    for start, after in itertools.zip_longest(starts, starts[1:]):
        end = after if after is not None and after - start <= key_window else start + key_units
        covered[start : max(end, start + key_units)] = True
    return covered


def rare_levels(query: Levels, common: CommonText) -> Levels:
    """The query's levels a store is asked for candidates by: without the keys more than ``common.common`` stored
    documents hold, and without the fingerprints (``None``) of the parts mostly of common text. Pages that share
    only a footer or a template with the query are then no candidates: they neither crowd out the store's cut
    nor use up the judging's misses."""
    values = query.key_array()
    drop = frozenset(common.common_keys(values))
    parts = _common_parts(query, common.query.common).tolist()
    if not drop and not any(parts):
        return query
    keys: Sequence[Any] = query.keys
    if drop and isinstance(query.keys, U64Keys):  # no Key object made (a 10 MB query has a million keys)
        kept = np.ones(len(values), dtype=bool)
        kept[list(drop)] = False
        keys = U64Keys(query.keys.pairs()[kept].tobytes())
    elif drop:
        keys = tuple(k for i, k in enumerate(query.keys) if i not in drop)
    return dataclasses.replace(query, keys=keys, fingerprints=tuple(
        None if gone else f for f, gone in zip(query.fingerprints, parts, strict=True)))


def _common_parts(query: Levels, common: np.ndarray) -> np.ndarray:
    """Whether each of the query's parts is mostly common text (``common``: a flag a unit), half its units or more,
    counted at the parts' bounds (:func:`~simdup_es.common.counts_before`)."""
    first, stop = part_bounds(query.parts)
    if common.size != query.units or not first.size:
        return np.zeros(first.size, dtype=bool)
    starts = _unit_starts(query)
    begin, end = starts[first], starts[stop]
    held = counts_before(common, np.concatenate((begin, end)))
    return (2 * (held[first.size :] - held[: first.size]) >= end - begin) & (end > begin)


LONG_RUN = 0.2
"""The evidence of a candidate whose matched keys and parts form one run of ``passage_units`` (a passage pasted into
a long text: a small share of both)."""


def rank_candidates(query: Levels, found: Sequence[PartCandidate], params: MultiParams = MultiParams()) -> list[Candidate]:
    """Candidates with ``evidence`` of at least ``min_coverage``, in judging order (:class:`Candidate`,
    :func:`_judging_order`).

    The match side's coverage is estimated by the share of its keys the query has (its
    distinct matched keys against the about ``2 / (w + 1)`` keys a text of its units
    has: a phrase the query repeats counts once), or by the query units its matched parts
    cover. Keys matched one by one here and there (set phrases) cover a little of a
    text; a copied passage, one run. The match side's share counts in full only when the longest run
    of query units under its keys and parts has what a short passage needs to count on both sides
    (:func:`_short_need`), in proportion (squared) below: a short text sharing one set phrase would
    otherwise rank ahead of a pasted passage, and its misses end the judging before it. All candidates at
    once, by the stretches of the query they cover (:func:`simdup_es.reference.rank_candidates_reference`
    goes one by one, a flag per unit: a query has up to ``store_limit`` candidates, and 30,000
    characters are 15,000 units). Common keys are not asked of the store (:func:`rare_levels`).
    """
    if not found:
        return []
    n = query.units
    units, part_units, longest, distinct = _covers(query, found)
    # What a short passage needs on both sides: a run shorter counts in proportion, squared (a set phrase is no copy).
    need = np.maximum(_short_need(np.array([c.units for c in found], dtype=np.float64), params), _short_need(n, params))
    density = 2 / (KEY_W + 1)
    out = []
    # Scalar arithmetic as in the reference, so that every float is the same to the last bit.
    for c, u, pu, d, long, nd in zip(found, units.tolist(), part_units.tolist(), distinct.tolist(), longest.tolist(),
                                     need.tolist(), strict=True):
        cq = u / n if n else 0.0
        keys_there = max(1.0, (c.units - KEY_K + 1) * density)
        cm = min(1.0, max(d / keys_there, pu / c.units)) if c.units else 0.0
        evidence = max(cq, cm * min(1.0, (long / nd) ** 2), LONG_RUN * min(1.0, long / params.passage_units))
        if evidence >= params.min_coverage:
            out.append(Candidate(c.id, cq, cm, evidence))
    out.sort(key=_judging_order)
    return out


def _covers(query: Levels, found: Sequence[PartCandidate]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per candidate: the query units under its matched keys or parts, those under its parts, the
    longest run of the former, and how many distinct key values it matched (:func:`key_cover`,
    :func:`simdup_es.reference.part_cover`), from the stretches they cover rather than a flag per unit."""
    rows, n = len(found), query.units
    if (core := native.module()) is not None:
        return _native_covers(core, query, found)
    key_rows = np.fromiter(itertools.chain.from_iterable(itertools.repeat(r, len(c.keys)) for r, c in enumerate(found)),
                           dtype=np.int64)
    key_at = np.fromiter(itertools.chain.from_iterable(c.keys for c in found), dtype=np.int64, count=key_rows.size)
    values, positions = _key_arrays(query)
    # A key covers its gram, and up to the next matched key when that starts at most KEY_W later.
    order = np.lexsort((positions[key_at], key_rows)) if key_at.size else key_at
    r, start = key_rows[order], positions[key_at[order]]
    after = np.append(start[1:], 0)
    close = np.append(r[1:] == r[:-1], False) & (after - start <= KEY_W)
    end = np.maximum(np.where(close, after, start + KEY_K), start + KEY_K)
    starts = _unit_starts(query)
    part_rows = np.fromiter(itertools.chain.from_iterable(itertools.repeat(r, len(c.parts)) for r, c in enumerate(found)),
                            dtype=np.int64)
    part_at = np.fromiter(itertools.chain.from_iterable(c.parts for c in found), dtype=np.int64, count=part_rows.size)
    first, stop = part_bounds(query.parts)
    part_start, part_end = starts[first[part_at]], starts[stop[part_at]]
    runs = _union_runs(n, np.concatenate((r, part_rows)), np.concatenate((start, part_start)),
                       np.concatenate((end, part_end)))
    units, longest = _per_row(rows, runs[0], runs[2])
    part_owner, _, part_sizes = _union_runs(n, part_rows, part_start, part_end)
    part_units = _per_row(rows, part_owner, part_sizes)[0]
    # Distinct key values per candidate (a phrase the query repeats has one value, several keys).
    _, value_ids = np.unique(values, return_inverse=True)
    pairs = np.unique(key_rows * max(1, values.size) + value_ids.reshape(-1)[key_at]) if key_at.size else key_at
    distinct = np.bincount(pairs // max(1, values.size), minlength=rows)
    return units, part_units, longest, distinct


def _native_covers(core: Any, query: Levels, found: Sequence[PartCandidate]
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_covers` by the compiled core, candidate by candidate."""
    values, positions = _key_arrays(query)
    starts, (first, stop) = _unit_starts(query), part_bounds(query.parts)
    spans = list(zip(starts[first].tolist(), starts[stop].tolist(), strict=True))
    out = core.covers(query.units, positions, values, spans, [list(c.keys) for c in found],
                      [list(c.parts) for c in found], KEY_K, KEY_W)
    return tuple(np.array(column, dtype=np.int64) for column in out)  # type: ignore[return-value]


def _union_runs(n: int, row: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The runs of units of ``0 .. n - 1`` inside any of a row's stretches ``start .. end - 1`` (stretches
    that touch make one run, as flags per unit would): the row, first unit and size of each."""
    start, end = np.minimum(start, n), np.minimum(end, n)
    keep = start < end
    # Each row on its own stretch of one line, a unit apart, so that rows never touch.
    first = row[keep] * (n + 1) + start[keep]
    last = row[keep] * (n + 1) + end[keep]
    order = np.argsort(first, kind="stable")
    first, last = first[order], last[order]
    reach = np.maximum.accumulate(last) if last.size else last
    new = np.concatenate(([True], first[1:] > reach[:-1])) if first.size else first.astype(bool)
    begin, group = first[new], np.cumsum(new) - 1
    stop = np.zeros(begin.size, dtype=np.int64)
    np.maximum.at(stop, group, last)
    owner = begin // (n + 1)
    return owner, begin - owner * (n + 1), stop - begin


def _per_row(rows: int, owner: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the units in its runs (:func:`_union_runs`) and the longest run."""
    longest = np.zeros(rows, dtype=np.int64)
    np.maximum.at(longest, owner, sizes)
    return np.bincount(owner, weights=sizes, minlength=rows).astype(np.int64), longest


SHORTEST = 8
"""The fewest copied units that count, however short the side: the comparison's shortest shared run."""


def _short_need(units: np.ndarray | int, params: MultiParams) -> np.ndarray:
    """The copied units a short passage needs to count in a side of ``units``: ``short_units``, or half the side
    (at least :data:`SHORTEST`)."""
    return np.maximum(SHORTEST, np.minimum(params.short_units, np.divide(units, 2)))


def _key_arrays(query: Levels) -> tuple[np.ndarray, np.ndarray]:
    """The query's key values (uint64) and positions (int64), without making the key objects if it can."""
    if isinstance(query.keys, U64Keys):
        pairs = query.keys.pairs()
        return pairs[:, 0], pairs[:, 1].astype(np.int64)
    values = np.array(query.key_values(), dtype=np.uint64)
    return values, np.fromiter((k.position for k in query.keys), dtype=np.int64, count=values.size)


@dataclass(frozen=True)
class MultiMatch:
    """A stored document judged a copy of the query.

    ``distance`` is the document-level Hamming distance (``None`` when the caller did not
    give the fingerprints). ``similarity_*`` are the shares of each side's units in
    sentences the matrix marked copied; ``copied_*`` the shares in counted passages of rare
    copied text (what the kind is decided on, :func:`copied_shares`); ``common_*`` the shares
    of copied text that many stored documents hold (common text: a footer, a template
    sentence), which counts on neither side; ``held_*`` those stretches of common text, each
    with how many documents hold it (:class:`simdup_es.commontext.Held`, in units of each
    side); ``containment_*`` the whole-text LCS containments.
    """

    id: str
    kind: Kind
    distance: int | None
    similarity_query: float
    similarity_match: float
    containment_query_in_match: float
    containment_match_in_query: float
    copied_query: float
    copied_match: float
    comparison: Comparison | None = None
    common_query: float = 0.0
    common_match: float = 0.0
    held_query: tuple[Held, ...] = ()
    held_match: tuple[Held, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """JSON-ready fields; the shares are ``None`` for a near-duplicate whose text the store does not keep.

        ``copied_query``/``copied_match`` are the shares of each side in counted passages of rare copied text
        (what the kind is decided on), ``common_query``/``common_match`` those of the common text the two
        share, ``common_documents`` the most stored documents holding a stretch of it (``None``: none, or an
        excluded document's text only), ``similarity_*`` the matrix's marked sentences."""
        scored = self.comparison is not None
        shares = ("copied_query", "copied_match", "common_query", "common_match", "similarity_query", "similarity_match",
                  "containment_query_in_match", "containment_match_in_query")
        counts = [h.documents for h in self.held_query if not h.excluded]
        return {"id": self.id, "kind": self.kind, "distance": self.distance,
                **{name: round(getattr(self, name), 6) if scored else None for name in shares},
                "common_documents": max(counts, default=None)}


def passages(copied: np.ndarray, gap: int) -> list[tuple[int, int, int]]:
    """``(start, stop, copied units)`` of each stretch of copied units at most ``gap`` apart."""
    firsts, stops, counts = _passage_arrays(copied, gap)
    return list(zip(firsts.tolist(), stops.tolist(), counts.tolist(), strict=True))


def _passage_arrays(copied: np.ndarray, gap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`passages` as three arrays: first unit, unit after the last, copied units."""
    at = np.flatnonzero(copied)
    if not at.size:
        return at, at, at
    cut = np.flatnonzero(np.diff(at) > gap + 1) + 1
    bounds = np.concatenate(([0], cut, [at.size]))
    return at[bounds[:-1]], at[bounds[1:] - 1] + 1, np.diff(bounds)


def copied_units(comparison: Comparison, side: Literal["a", "b"]) -> tuple[np.ndarray, np.ndarray]:
    """Per unit of a side: whether it is copied (in a run both texts share, or in a sentence the
    matrix marked), and the index of its sentence."""
    sentences = comparison.sentences_a if side == "a" else comparison.sentences_b
    runs = comparison.runs_a if side == "a" else comparison.runs_b
    counts = comparison.unit_counts(side)
    marked = np.zeros(len(sentences), dtype=bool)
    marked[list(comparison.marked_a if side == "a" else comparison.marked_b)] = True
    copied = np.repeat(marked, counts)
    if runs.size == copied.size:
        copied |= runs
    core = comparison.core_a if side == "a" else comparison.core_b
    if core is not None:  # trimmed: only the core counts
        before = np.concatenate(([0], np.cumsum(counts)))
        copied[: before[core[0]]] = False
        copied[before[core[1]] :] = False
    return copied, np.repeat(np.arange(len(sentences)), counts)


def counted_units(copied: np.ndarray, side: Rarity | None, params: MultiParams = MultiParams(),
                  smaller: int | None = None) -> np.ndarray:
    """The copied units of a side that count as copied text: in a passage of ``passage_units`` copied units none
    of them common, or of ``short_units`` (or half the smaller text, ``smaller`` units: the side's own by default)
    under no key held by more than ``short_common`` documents; all of the latter when they are half the side
    (:class:`MultiParams`). ``side``: its :class:`~simdup_es.commontext.Rarity` (``None``: nothing is common)."""
    if side is None or side.common.size != copied.size:
        side = Rarity.none(copied.size)
    rare, rarer = copied & ~side.common, copied & ~side.frequent
    out = _filled(copied.size, rare, params.passage_units, params.passage_gap)
    need = float(_short_need(copied.size if smaller is None else min(smaller, copied.size), params))
    if rarer.sum() >= need and 2 * int(rarer.sum()) >= copied.size:  # half the side: a short text copied (nearly) whole
        return out | rarer
    return out | _filled(copied.size, rarer, need, params.passage_gap)


def _filled(n: int, copied: np.ndarray, at_least: float, gap: int) -> np.ndarray:
    """The ``copied`` units in passages (:func:`passages`) of at least ``at_least`` of them."""
    at = np.flatnonzero(copied)
    out = np.zeros(n, dtype=bool)
    if at.size:
        passage = np.concatenate(([0], np.cumsum(np.diff(at) > gap + 1)))  # each copied unit's passage
        out[at[np.bincount(passage)[passage] >= at_least]] = True
    return out


class Shares(NamedTuple):
    """Of each side of a comparison (:func:`copied_shares`): the share in counted passages of rare copied text, the
    share of common text the two share, and its stretches with how many documents hold each."""

    copied_a: float
    copied_b: float
    common_a: float
    common_b: float
    held_a: tuple[Held, ...] = ()
    held_b: tuple[Held, ...] = ()


def copied_shares(comparison: Comparison, params: MultiParams = MultiParams(),
                  sides: tuple[Rarity, Rarity] | None = None) -> Shares:
    """The :class:`Shares` of a comparison, ``sides`` the :class:`~simdup_es.commontext.Rarity` of its texts
    (``None``: nothing is common). The compiled core computes them where it computes (:mod:`simdup_es.native`)."""
    if (core := native.module()) is not None:
        return _native_shares(core, comparison, params, sides)
    out: list[float] = []
    held = []
    smaller = min(comparison.units_a, comparison.units_b)
    for k, side in enumerate(("a", "b")):
        copied, sentence = copied_units(comparison, side)  # type: ignore[arg-type]  # a side's name
        rarity_ = (to_sentence_edges(sides[k], sentence) if sides is not None and sides[k].common.size == copied.size
                   else Rarity.none(copied.size))
        units = comparison.units_a if side == "a" else comparison.units_b
        shared_common = copied & rarity_.common
        out += [int(counted_units(copied, rarity_, params, smaller).sum()) / units if units else 0.0,
                int(shared_common.sum()) / units if units else 0.0]
        held.append(held_passages(shared_common, rarity_.held))
    return Shares(out[0], out[2], out[1], out[3], held[0], held[1])


def _native_shares(core: Any, comparison: Comparison, params: MultiParams, sides: tuple[Rarity, Rarity] | None) -> Shares:
    """:func:`copied_shares` by the compiled core (``side_shares``: :func:`copied_units`, :func:`to_sentence_edges`,
    :func:`counted_units` and :func:`held_passages` of each side in one call)."""
    out: list[float] = []
    held = []
    smaller = min(comparison.units_a, comparison.units_b)
    for k, side in enumerate(("a", "b")):
        a = side == "a"
        rarity_ = sides[k] if sides is not None else Rarity.none(0)
        counted, common, stretches = core.side_shares(
            np.asarray(comparison.unit_counts(side), dtype=np.int64),  # type: ignore[arg-type]  # a side's name
            list(comparison.marked_a if a else comparison.marked_b), _flags(comparison.runs_a if a else comparison.runs_b),
            comparison.core_a if a else comparison.core_b, *_rarity_arrays(rarity_), **_rule(params, smaller), w=KEY_W)
        units = comparison.units_a if a else comparison.units_b
        out += [counted / units if units else 0.0, common / units if units else 0.0]
        held.append(tuple(Held(*s) for s in stretches))
    return Shares(out[0], out[2], out[1], out[3], held[0], held[1])


def _flags(values: np.ndarray) -> np.ndarray:
    """A boolean array as bytes of 0 and 1, as the compiled core reads it (in place: :func:`_read_only`)."""
    return _read_only(np.asarray(values, dtype=bool).view(np.uint8))


def _read_only(values: np.ndarray) -> np.ndarray:
    """A contiguous view of ``values`` marked read-only: the compiled core reads such an array where it lies (a
    long query's ``held`` is 8 bytes a unit) rather than copy it."""
    view = np.ascontiguousarray(values).view()
    view.flags.writeable = False
    return view


def _rarity_arrays(side: Rarity) -> tuple[np.ndarray, np.ndarray]:
    """``held`` (int16, int32 or int64, as :func:`~simdup_es.commontext.rarity` made it) and ``common``, as the
    compiled core reads them in place."""
    held = side.held if side.held.dtype in (np.int16, np.int32, np.int64) else side.held.astype(np.int64)
    return _read_only(held), _flags(side.common)


def _rule(params: MultiParams, smaller: int) -> dict[str, int]:
    """The parameters of :func:`counted_units` as the compiled core takes them."""
    return {"passage_units": params.passage_units, "passage_gap": params.passage_gap,
            "short_units": params.short_units, "smaller": smaller}


def held_spans(comparison: Comparison, side: Literal["a", "b"], held: Sequence[Held]) -> list[tuple[int, int, int]]:
    """``(start, end, documents)`` of each stretch of common text in the characters of a side's (unified) text."""
    sentences = comparison.sentences_a if side == "a" else comparison.sentences_b
    ends = np.cumsum(comparison.unit_counts(side))
    spans: dict[int, list[tuple[int, int]]] = {}

    def unit(k: int) -> tuple[int, int]:
        i = int(np.searchsorted(ends, k, side="right"))
        if i not in spans:
            spans[i] = [(sentences[i].start + a, sentences[i].start + b) for a, b in unit_spans(sentences[i].text)]
        return spans[i][min(k - int(ends[i]) + len(spans[i]), len(spans[i]) - 1)]

    return [(unit(h.start)[0], unit(h.stop - 1)[1], h.documents) for h in held]


def judge(doc_id: str, comparison: Comparison, distance: int | None, params: MultiParams = MultiParams(),
          sides: tuple[Rarity, Rarity] | None = None) -> MultiMatch | None:
    """The kind of copy, or ``None``: a copy has counted passages of rare copied text on both sides
    (:func:`counted_units`), and at least ``partial_threshold`` of either side in them.

    ``near-duplicate``: such a copy within distance ``k``, or with ``whole_share`` of both sides copied;
    otherwise ``partial``. ``sides``: the :class:`~simdup_es.commontext.Rarity` of the query's text and the
    candidate's (``None``: nothing is common, as without a store to ask).
    """
    shares = copied_shares(comparison, params, sides)
    cq, cm = shares.copied_a, shares.copied_b
    if not (cq and cm) or max(cq, cm) < params.partial_threshold:
        return None
    near = (distance is not None and distance <= params.k) or min(cq, cm) >= params.whole_share
    return MultiMatch(doc_id, "near-duplicate" if near else "partial", distance, comparison.similarity_a,
                      comparison.similarity_b, comparison.containment_a_in_b, comparison.containment_b_in_a, cq, cm,
                      comparison, shares.common_a, shares.common_b, shares.held_a, shares.held_b)


def could_be_copy(bound: Bound, params: MultiParams = MultiParams(), sides: tuple[Rarity, Rarity] | None = None) -> bool:
    """Whether :func:`judge` could find a copy in a comparison that marks copied at most ``bound``.

    :func:`counted_units` over the bound's units rather than the copied ones: a passage of copied
    units lies inside one of the bound's, with at least its units, so every share and passage here is
    at least the comparison's. ``False`` only when no copy can be judged. The candidate's side first:
    when nothing of it can count, the query's side is not looked at.
    """
    smaller = int(min(bound.lengths_a.sum(), bound.lengths_b.sum()))
    cm = _bound_share(bound.copied_b, sides[1] if sides is not None else None, params, smaller)
    if not cm:
        return False
    cq = _bound_share(bound.copied_a, sides[0] if sides is not None else None, params, smaller)
    return bool(cq) and max(cq, cm) >= params.partial_threshold


def _bound_share(copied: np.ndarray, side: Rarity | None, params: MultiParams, smaller: int) -> float:
    """The share of a side's units that could count (:func:`counted_units` of a bound of its copied units)."""
    if not copied.size:
        return 0.0
    if (core := native.module()) is not None:
        counted = core.counted(_flags(copied), *_rarity_arrays(side or Rarity.none(0)), **_rule(params, smaller))
    else:
        counted = int(counted_units(copied, side, params, smaller).sum())
    return counted / copied.size


class Copies(list[MultiMatch]):
    """The copies found, best first; ``more`` candidates were left unjudged once ``limit`` copies were found.
    ``ran_out``: judging ended because the candidates did, not on ``max_misses`` misses in a row or at
    ``limit``, and the store's last candidate was among them (a caller whose store cut its candidates
    there asks it for more: past a cut made among candidates too weak to judge, none would be judged
    either). A search over a store (:func:`simdup_es.search.find_copies`) adds what a caller that shows
    them needs: ``text``, the query's text, ``unified``, its unified text when the search made it (to map
    it back, :func:`simdup_es.offsets.unify_mapped`), and ``docs``, the stored document of each copy by id
    (those the store holds)."""

    def __init__(self, matches: Iterable[MultiMatch] = (), more: int = 0, ran_out: bool = False) -> None:
        super().__init__(matches)
        self.more = more
        self.ran_out = ran_out
        self.text: str | None = None
        self.unified: str | None = None
        self.docs: dict[str, StoredDoc] = {}


@dataclass(frozen=True)
class CommonText:
    """What the store holds in common, for the texts of one search: how many stored documents hold each of the
    query's keys (and the keys of excluded texts), the thresholds those counts are read by, how a text's units
    are coded (a search keeps the stored texts' scans: :meth:`simdup_es.search.MatrixComparer.unit_codes`), and
    the query's :class:`~simdup_es.commontext.Rarity`.
    """

    counts: KeyCounts
    common: int
    short_common: int
    query: Rarity
    codes: Callable[[str], np.ndarray] = unit_codes

    @classmethod
    def of(cls, counts: KeyCounts, query_text: str, params: MultiParams = MultiParams(),
           codes: Callable[[str], np.ndarray] = unit_codes) -> CommonText:
        """The counts read by ``params`` (the common threshold relative to ``counts.documents``), for the query
        ``query_text`` (unified)."""
        threshold = params.common_threshold(counts.documents)
        short = min(params.short_common, threshold)
        return cls(counts, threshold, short, rarity(codes(query_text), counts, threshold, short), codes)

    def rarity(self, text: str) -> Rarity:
        """The :class:`~simdup_es.commontext.Rarity` of a unified text."""
        return rarity(self.codes(text), self.counts, self.common, self.short_common)

    @functools.cached_property
    def frequent(self) -> bool:
        """Whether more than ``short_common`` documents hold any key counted: if not, no text has units to tell apart."""
        return bool((self.counts.counts > self.short_common).any())

    def frequent_only(self) -> CommonText:
        """These counts of the keys more than ``short_common`` documents hold only (all a :meth:`rarity` reads), without
        the query's rarity: what to keep of many queries' counts to judge their pairs later."""
        keep = self.counts.counts > self.short_common
        counts = KeyCounts(self.counts.keys[keep], self.counts.counts[keep], self.counts.documents)
        return dataclasses.replace(self, counts=counts, query=Rarity.none(0))

    def common_keys(self, values: Sequence[int] | np.ndarray) -> list[int]:
        """Indices of the ``values`` (keys) that more than ``common`` documents hold."""
        return np.flatnonzero(self.counts.of(values) > self.common).tolist()


def _verdict(doc_id: str, query_text: str, text: str, distance: int | None, compare: Callable[[str, str], Comparison],
             screened: Callable[[str, str, Screen], Comparison | None] | None, common: CommonText | None,
             params: MultiParams) -> MultiMatch | None:
    """:func:`judge` of the query against one stored ``text`` (the screen given :func:`could_be_copy`, when screened)."""
    sides = None if common is None or not common.frequent else (common.query, common.rarity(text))
    comparison = compare(query_text, text) if screened is None else screened(
        query_text, text, functools.partial(could_be_copy, params=params, sides=sides))
    return None if comparison is None else judge(doc_id, comparison, distance, params, sides)


def _copy_order(m: MultiMatch) -> tuple[bool, int, float, str]:
    """Near-duplicates first (by distance), then partial copies by the larger copied share; ties by id."""
    return (m.kind != "near-duplicate", m.distance if m.distance is not None and m.kind == "near-duplicate" else 65,
            -max(m.copied_query, m.copied_match), m.id)


def find_copies(
    query_text: str,
    query: Levels,
    near: Sequence[tuple[str, int]],
    found: Sequence[PartCandidate],
    texts: Callable[[Sequence[str]], Mapping[str, StoredText]],
    compare: Callable[[str, str], Comparison],
    *,
    common: CommonText | None = None,
    query_fingerprint: int | None = None,
    params: MultiParams = MultiParams(),
    limit: int | None = None,
    screened: Callable[[str, str, Screen], Comparison | None] | None = None,
) -> Copies:
    """Judge the document-level near-duplicates and the part candidates of one query.

    Parameters
    ----------
    query_text:
        The query, unified (:func:`simdup_es.text.unify`), as ``query`` was computed from.
    near:
        ``(id, distance)`` from the document-level path (distance <= ``params.k``).
    found:
        The store's :meth:`PartStore.part_candidates` for ``query``.
    texts:
        Unified texts (and fingerprints, when of the query's version) of stored
        documents by id; ids without text are left out.
    compare:
        Two unified texts to a :class:`Comparison` (query first).
    common:
        How many stored documents hold the query's keys (:class:`CommonText`); ``None``: nothing is
        common (no store to ask). ``query`` and ``found`` are then best of the query's rare keys and parts
        (:func:`rare_levels`).
    query_fingerprint:
        To give part candidates their distance.
    limit:
        Stop judging once this many copies were found (``None``: no limit).
    screened:
        ``compare`` that may give up on a candidate that cannot be a copy
        (:func:`simdup_es.compare.compare_screened` with its parameters bound, given
        :func:`could_be_copy` as the screen): the same copies, found sooner.

    Returns
    -------
    Copies
        In :func:`_copy_order`. Every near-duplicate by distance is judged; part candidates best first,
        until ``params.max_misses`` in a row were no copy or ``limit`` copies were found (:class:`MultiParams`).
    """
    distances = dict(near)
    ranked = [c.id for c in rank_candidates(query, found, params) if c.id not in distances]
    # The near-duplicates' texts and the first batch's are read at once (one request to a cluster).
    first = list(distances) + (ranked[: params.max_candidates] if limit is None or len(distances) < limit else [])
    read_first = (set(first), texts(first)) if first else None

    def judged(ids: Sequence[str]) -> Iterator[MultiMatch | None]:
        """The verdict on each of ``ids`` in turn (``None``: no copy, or no stored text)."""
        stored_texts = read_first[1] if read_first is not None and read_first[0].issuperset(ids) else texts(ids)
        for doc_id in ids:
            if (stored := stored_texts.get(doc_id)) is None:
                yield None
                continue
            distance = distances.get(doc_id)
            if distance is None and query_fingerprint is not None and stored.fingerprint is not None:
                distance = sh.hamming(query_fingerprint, stored.fingerprint)
            yield _verdict(doc_id, query_text, stored.text, distance, compare, screened, common, params)

    out = [m for m in judged(list(distances)) if m is not None]
    at = misses = 0  # part candidates judged; rejected in a row
    while at < len(ranked) and misses < params.max_misses and (limit is None or len(out) < limit):
        for match in judged(ranked[at : at + params.max_candidates]):  # texts read a batch at a time
            at += 1
            misses = 0 if match is not None else misses + 1
            if match is not None:
                out.append(match)
            if misses >= params.max_misses or (limit is not None and len(out) >= limit):
                break
    out.sort(key=_copy_order)
    full = limit is not None and len(out) >= limit
    ran_out = 0 < len(ranked) <= at and misses < params.max_misses and found[-1].id in {*ranked, *distances}
    return Copies(out, len(ranked) - at if full else 0, ran_out and not full)
