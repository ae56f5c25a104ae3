"""Multilevel retrieval: find edited and partial copies through part fingerprints and sentence keys.

The pipeline for one query document (issue 11)::

    levels of the query (simdup_es.parts)                       pure
      -> part_candidates: stored documents sharing a part       the store (one round trip)
         (5 of 8 blocks equal) or a sentence key, with which
         of the query's parts and keys each one matched
      -> rank by coverage: the share of the query's units the   pure
         matched parts and keys cover, and the share of the
         candidate's units they make up; keep the best few
      -> the comparison matrix both ways decides                pure (simdup_es.compare)
         near-duplicate: document distance <= k (unchanged)
         partial: at least ``partial_threshold`` of either side
         in copied passages (runs of marked sentences, in order
         on both sides), not counting the query's boilerplate
         (sentence keys many candidates share)

The document-level path (:func:`simdup_es.search.near_duplicates`) is not
changed: its hits are merged in as ``near-duplicate`` results.

What a store must add is :class:`PartStore` (one method to write levels, one to look
them up). :class:`MemoryPartIndex` is the slow, obviously-correct reference both
stores are tested against.
"""

from __future__ import annotations

import bisect
import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from . import simhash as sh
from .compare import Comparison, SentencePair
from .config import BlockLayout, require_ints
from .errors import ConfigError, FingerprintVersionError
from .join import components
from .parts import Levels

__all__ = [
    "Candidate",
    "common_sentences",
    "copied_shares",
    "MemoryPartIndex",
    "MultiMatch",
    "MultiParams",
    "PartCandidate",
    "PartStore",
    "find_copies",
    "judge",
    "passage_pairs",
    "rank_candidates",
]

log = logging.getLogger(__name__)

Kind = Literal["near-duplicate", "partial"]


@dataclass(frozen=True)
class MultiParams:
    """Thresholds of multilevel retrieval, with the defaults the evaluation chose.

    Attributes
    ----------
    k:
        Document distance up to which a hit is a ``near-duplicate`` (the
        document-level rule, SPEC §4).
    min_coverage:
        A part candidate goes to the comparison matrix only if its matched parts and
        keys cover at least this share of the query or of itself.
    max_candidates:
        At most this many part candidates per query go to the matrix (best coverage first).
    store_limit:
        At most this many candidates asked of the store (most matched parts and keys
        first, ties by id); a bound on work for queries made of common sentences.
    partial_threshold:
        A candidate is a ``partial`` copy when at least this share of the query's, or
        of its own, units are in copied passages (see ``passage_sentences``;
        boilerplate sentences not counted, see ``common_keys``).
    common_keys:
        A query sentence whose key the store found in at least this many candidates
        is boilerplate (a template line, a licence notice): it is not evidence of
        copying and does not count toward ``partial_threshold``. 0 counts every
        sentence. Copies of one text share their sentences with a handful of
        documents; templates with dozens. Sentences that hold over half of the query
        are its own text copied widely, not a template, and all count.
    passage_sentences, passage_gap:
        Only marked sentences inside a copied passage count toward
        ``partial_threshold``: at least ``passage_sentences`` query sentences whose
        marked pairs are chained, each next pair at most ``passage_gap`` unmarked
        sentences further on in the query and at most as far on (or on the same
        sentence) in the candidate (:func:`passage_pairs`). A copy is a run of text;
        pages made from one template share lines scattered between their own
        (a repeated notice, an item heading), which chain into no passage.
        ``passage_sentences=1`` counts every marked sentence.
    """

    k: int = 3
    min_coverage: float = 0.05
    max_candidates: int = 10
    store_limit: int = 100
    partial_threshold: float = 0.2
    common_keys: int = 5
    passage_sentences: int = 2
    passage_gap: int = 2

    def __post_init__(self) -> None:
        for name in ("min_coverage", "partial_threshold"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"{name} must be between 0 and 1, got {value}")
        require_ints(self, ("common_keys", "passage_gap"), minimum=0)
        require_ints(self, ("max_candidates", "store_limit", "passage_sentences"))
        if not 0 <= self.k < 64:
            raise ConfigError(f"k must be between 0 and 63, got {self.k}")


@dataclass(frozen=True)
class PartCandidate:
    """What a store returns per candidate: which of the query's parts and keys it matched.

    Attributes
    ----------
    id:
        The stored document.
    parts:
        Indices into ``query.parts`` whose fingerprint shares at least
        ``layout.min_match`` blocks with one of the candidate's part fingerprints.
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
    is exact: a part matches when at least ``layout.min_match`` of its 8 blocks equal
    the stored part's (no Hamming re-rank), a key when it is equal.
    """

    layout: BlockLayout

    def put_levels(self, doc_id: str, levels: Levels) -> None:
        """Store (or replace) a document's part fingerprints, sentence keys and units."""

    def part_candidates(
        self, parts: Sequence[int | None], keys: Sequence[int], version: str, *, exclude_id: str | None = None, limit: int = 100
    ) -> list[PartCandidate]:
        """Candidates for a query's part fingerprints (``None`` = no fingerprint) and sentence keys."""


class MemoryPartIndex:
    """Reference :class:`PartStore` in memory: posting lists per block value and per key.

    Slow in Python terms but obviously correct; it also keeps document fingerprints so the
    evaluation can run the whole pipeline without a store.
    """

    def __init__(self, layout: BlockLayout = BlockLayout()) -> None:
        self.layout = layout
        self.version: str | None = None
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._units: list[int] = []
        self._fps: list[int] = []
        self._alive: list[bool] = []
        self._blocks: list[dict[int, list[int]]] = [defaultdict(list) for _ in range(layout.blocks)]
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
            for j, b in enumerate(sh.blocks(f, self.layout)):
                self._blocks[j][b].append(part)
        for key in keys:
            self._keys[key].append(row)
        self._block_arrays = None

    def __len__(self) -> int:
        return sum(self._alive)

    def near_duplicates(self, fingerprint: int, version: str, *, exclude_id: str | None = None) -> list[tuple[str, int]]:
        """``(id, distance)`` of documents within ``layout.k`` (brute force), nearest first."""
        if not self._ids or version != self.version:
            return []
        d = sh.hamming_many(fingerprint, np.array(self._fps, dtype=np.uint64))
        out = [(self._ids[r], int(d[r])) for r in np.flatnonzero(d <= self.layout.k) if self._alive[r]]
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
        owner = self._owner
        hit_parts: dict[int, set[int]] = defaultdict(set)
        hit_keys: dict[int, set[int]] = defaultdict(set)
        for i, f in enumerate(parts):
            if f is None:
                continue
            lists = [tables[j].get(b) for j, b in enumerate(sh.blocks(f, self.layout))]
            rows = np.concatenate([x for x in lists if x is not None] or [np.zeros(0, dtype=np.int64)])
            found, counts = np.unique(rows, return_counts=True)
            for doc in np.unique(owner[found[counts >= self.layout.min_match]]).tolist():
                hit_parts[doc].add(i)
        for i, key in enumerate(keys):
            for doc in self._keys.get(key, ()):
                hit_keys[doc].add(i)
        out = []
        for doc in hit_parts.keys() | hit_keys.keys():
            if not self._alive[doc] or self._ids[doc] == exclude_id:
                continue
            out.append(PartCandidate(self._ids[doc], frozenset(hit_parts.get(doc, ())), frozenset(hit_keys.get(doc, ())), self._units[doc]))
        out.sort(key=lambda c: (-(len(c.parts) + len(c.keys)), c.id))
        return out[:limit]


@dataclass(frozen=True)
class Candidate:
    """A part candidate with its coverage of the query and of itself."""

    id: str
    coverage_query: float
    coverage_match: float

    @property
    def coverage(self) -> float:
        return max(self.coverage_query, self.coverage_match)


def covered_units(query: Levels, parts: Iterable[int], keys: Iterable[int]) -> int:
    """Units of the query's sentences inside a matched part or having a matched key."""
    sentences: set[int] = set()
    for i in parts:
        p = query.parts[i]
        sentences.update(range(p.first, p.stop))
    sentences.update(query.keys[i].index for i in keys)
    return sum(query.sentences[s].n_units for s in sentences)


def rank_candidates(query: Levels, found: Sequence[PartCandidate], params: MultiParams = MultiParams()) -> list[Candidate]:
    """Candidates covering at least ``min_coverage`` of either side, best first, at most ``max_candidates``.

    The match side's coverage is estimated from the query side (a matched key covers
    the same units in both texts; a matched part about as many).
    """
    out = []
    for c in found:
        units = covered_units(query, c.parts, c.keys)
        cq = units / query.units if query.units else 0.0
        cm = min(1.0, units / c.units) if c.units else 0.0
        if max(cq, cm) >= params.min_coverage:
            out.append(Candidate(c.id, cq, cm))
    out.sort(key=lambda c: (-c.coverage, -c.coverage_query, c.id))
    return out[: params.max_candidates]


@dataclass(frozen=True)
class MultiMatch:
    """A stored document judged a copy of the query.

    ``distance`` is the document-level Hamming distance (``None`` when the caller did not
    give the fingerprints). ``similarity_*`` are the shares of each side's units in
    sentences the matrix marked copied (SPEC §6); ``copied_*`` the same counting only
    copied passages, without the query's boilerplate sentences (what ``partial`` is
    decided on, :func:`copied_shares`); ``containment_*``
    the whole-text LCS containments (SPEC §7).
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

    def to_dict(self) -> dict[str, object]:
        """The issue's fields; the four shares are ``None`` for a near-duplicate whose text the store does not keep."""
        scored = self.comparison is not None
        shares = ("similarity_query", "similarity_match", "containment_query_in_match", "containment_match_in_query")
        return {"id": self.id, "kind": self.kind, "distance": self.distance,
                **{name: round(getattr(self, name), 6) if scored else None for name in shares}}


def common_sentences(query: Levels, found: Sequence[PartCandidate], params: MultiParams = MultiParams()) -> frozenset[int]:
    """Query sentences whose key was found in at least ``params.common_keys`` candidates: boilerplate.

    When such sentences hold most of the query (over half its units), they are the
    query's own text, copied widely, not a template around it: none is boilerplate,
    so an edited copy of a text the store holds many copies of is still found.
    """
    if not params.common_keys:
        return frozenset()
    counts: dict[int, int] = defaultdict(int)
    for c in found:
        for i in c.keys:
            counts[i] += 1
    common = frozenset(query.keys[i].index for i, n in counts.items() if n >= params.common_keys)
    if 2 * sum(query.sentences[i].n_units for i in common) > query.units:
        return frozenset()
    return common


def passage_pairs(pairs: Iterable[SentencePair], min_sentences: int = 2, gap: int = 2) -> list[SentencePair]:
    """The pairs in copied passages, in their order.

    Two pairs ``(i, j)`` and ``(i2, j2)`` are chained when ``0 < i2 - i <= gap + 1``
    and ``0 <= j2 - j <= gap + 1``: the next query sentence, or one after at most
    ``gap`` unmarked ones, matches the same or a following sentence of the other
    text. A passage is a set of chained pairs (transitively) holding at least
    ``min_sentences`` distinct query sentences; pairs in none are left out.
    """
    pairs = sorted(pairs, key=lambda p: (p.i, p.j))
    if min_sentences <= 1:
        return pairs
    by_i: dict[int, tuple[list[int], list[int]]] = {}  # i -> (its js ascending, their positions)
    for n, p in enumerate(pairs):
        js, ns = by_i.setdefault(p.i, ([], []))
        js.append(p.j)
        ns.append(n)
    chained: list[tuple[int, int]] = []
    for n, p in enumerate(pairs):
        for i2 in range(p.i + 1, p.i + gap + 2):
            if i2 in by_i:
                js, ns = by_i[i2]
                chained += [(n, m) for m in ns[bisect.bisect_left(js, p.j) : bisect.bisect_right(js, p.j + gap + 1)]]
    root = components(chained)  # a pair in no chain is a passage of one sentence
    members: dict[int, set[int]] = defaultdict(set)
    for n, r in root.items():
        members[r].add(pairs[n].i)
    return [p for n, p in enumerate(pairs) if n in root and len(members[root[n]]) >= min_sentences]


def copied_shares(
    comparison: Comparison, common_starts: frozenset[int] = frozenset(), params: MultiParams = MultiParams()
) -> tuple[float, float]:
    """Shares of both sides' units in copied passages, leaving out query sentences starting at ``common_starts``.

    The passages (:func:`passage_pairs`, ``params.passage_sentences`` and
    ``params.passage_gap``) are found among the pairs left.
    """
    kept = [p for p in comparison.pairs if p.a_start not in common_starts]
    pairs = passage_pairs(kept, params.passage_sentences, params.passage_gap)
    a = {p.i for p in pairs}
    b = {p.j for p in pairs}
    ua = sum(comparison.sentences_a[i].n_units for i in a)
    ub = sum(comparison.sentences_b[j].n_units for j in b)
    return (ua / comparison.units_a if comparison.units_a else 0.0, ub / comparison.units_b if comparison.units_b else 0.0)


def judge(
    doc_id: str,
    comparison: Comparison,
    distance: int | None,
    params: MultiParams = MultiParams(),
    common_starts: frozenset[int] = frozenset(),
) -> MultiMatch | None:
    """The kind of copy, or ``None``: near-duplicate by distance, else partial by the matrix.

    ``common_starts`` are character offsets of the query's boilerplate sentences
    (see :func:`common_sentences`); their marks do not count toward ``partial``,
    nor do marks outside copied passages (:func:`copied_shares`).
    """
    cq, cm = copied_shares(comparison, common_starts, params)
    if distance is not None and distance <= params.k:
        kind: Kind = "near-duplicate"
    elif max(cq, cm) >= params.partial_threshold:
        kind = "partial"
    else:
        return None
    return MultiMatch(
        doc_id,
        kind,
        distance,
        comparison.similarity_a,
        comparison.similarity_b,
        comparison.containment_a_in_b,
        comparison.containment_b_in_a,
        cq,
        cm,
        comparison,
    )


def find_copies(
    query_text: str,
    query: Levels,
    near: Sequence[tuple[str, int]],
    found: Sequence[PartCandidate],
    texts: Callable[[Sequence[str]], Mapping[str, str]],
    compare: Callable[[str, str], Comparison],
    *,
    fingerprints: Mapping[str, int] | None = None,
    query_fingerprint: int | None = None,
    params: MultiParams = MultiParams(),
) -> list[MultiMatch]:
    """Judge the document-level near-duplicates and the best part candidates of one query.

    Parameters
    ----------
    query_text:
        The query, unified (:func:`simdup_es.text.unify`), as ``query`` was computed from.
    near:
        ``(id, distance)`` from the document-level path (distance <= ``params.k``).
    found:
        The store's :meth:`PartStore.part_candidates` for ``query``.
    texts:
        Unified texts of stored documents by id (ids without text are left out).
    compare:
        Two unified texts to a :class:`Comparison` (query first).
    fingerprints, query_fingerprint:
        Document fingerprints, to give part candidates their distance.

    Returns
    -------
    list[MultiMatch]
        Near-duplicates first (by distance), then partial copies by the larger
        similarity; ties by id.
    """
    distances = dict(near)
    ranked = rank_candidates(query, found, params)
    common = frozenset(query.sentences[i].start for i in common_sentences(query, found, params))
    ids = list(distances) + [c.id for c in ranked if c.id not in distances]
    got = texts(ids)
    out = []
    for doc_id in ids:
        text = got.get(doc_id)
        if not text:
            continue
        distance = distances.get(doc_id)
        if distance is None and fingerprints is not None and query_fingerprint is not None and doc_id in fingerprints:
            distance = sh.hamming(query_fingerprint, fingerprints[doc_id])
        match = judge(doc_id, compare(query_text, text), distance, params, common)
        if match is not None:
            out.append(match)
    out.sort(key=lambda m: (m.kind != "near-duplicate", m.distance if m.kind == "near-duplicate" else 0,
                            -max(m.copied_query, m.copied_match), m.id))
    return out
