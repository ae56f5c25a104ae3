"""A deduplicated dataset: keep one record of each set of near-duplicates, by a stated rule.

The pipeline, for records read from anywhere (files, a store)::

    fingerprints of every record                        all cores (Fingerprinter.map_items)
      -> candidate pairs: fingerprint distance <= k      pure (simdup_es.join, Manku's tables)
      -> records in the order of the keep rule           pure (:func:`priority`)
      -> each record, in that order, is removed when      pure, given ``is_copy``
         a kept candidate is a confirmed copy of it,
         else kept (:func:`choose`)
      -> confirmed copy: the same unified text, or the    the comparison matrix
         comparison matrix finds most of both texts
         copied (``min_share`` of each side's units in
         copied passages, as a whole copy is judged)

Every removed record therefore has a kept twin it was compared with and found a copy of;
no chain can make a record the duplicate of one it shares little with. The same
functions run on a Dask cluster for inputs past one machine (:mod:`simdup_es.dask_dedup`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .errors import ConfigError
from .join import join_pairs
from .keys import check_k

__all__ = [
    "KEEP_RULES", "DedupParams", "DedupSummary", "Deduplicated", "Entry", "KeepRule", "Removed", "candidate_pairs",
    "choose", "dedup_records", "copy_check", "neighbours", "priority", "rank_value",
]

KeepHow = Literal["first", "longest", "earliest", "latest"]
KEEP_RULES: tuple[KeepHow, ...] = ("first", "longest", "earliest", "latest")


@dataclass(frozen=True)
class KeepRule:
    """Which record of a set of duplicates is kept.

    ``first``: the first read (input order); ``longest``: the longest text; ``earliest`` /
    ``latest``: the smallest / largest value of the record field ``by`` (numbers as numbers,
    other values as their text: ISO dates order right; a record without one comes last).
    Ties go to the first read.
    """

    how: KeepHow = "first"
    by: str | None = None

    def __post_init__(self) -> None:
        if self.how not in KEEP_RULES:
            raise ConfigError(f"keep rule must be one of {', '.join(KEEP_RULES)}, got {self.how!r}")
        if (self.how in ("earliest", "latest")) != (self.by is not None):
            raise ConfigError(f"--keep {self.how} " + ("needs --by FIELD: the record field to order by"
                                                      if self.by is None else "takes no --by (only earliest and latest)"))


@dataclass(frozen=True)
class DedupParams:
    """When two records are duplicates.

    Attributes
    ----------
    k:
        Fingerprint distance up to which two records are compared, 0 to :data:`simdup_es.keys.MAX_K`
        (the matrix decides every pair: past ``simdup groups``' 3 it finds copies edited
        further, at more comparisons and a slower join).
    min_share:
        Share of each side's units in copied passages (the comparison matrix) for the pair to
        be duplicates: 0.8, as ``simdup search`` calls a whole copy a near-duplicate.
    min_verbatim:
        Share of each side's units in runs of 8 units or more the other has word for word
        (the comparison's ``runs_a``/``runs_b``). The matrix marks sentences alike by their LCS,
        and two short sentences with two words swapped (大写 and 小写: upper and lower case) are
        alike to it; as duplicates of a dataset, two records must also share most of their text
        as it is.
    """

    k: int = 6
    min_share: float = 0.8
    min_verbatim: float = 0.5

    def __post_init__(self) -> None:
        check_k(self.k)
        for name in ("min_share", "min_verbatim"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be between 0 and 1, got {getattr(self, name)}")


@dataclass(frozen=True)
class Entry:
    """What dedup keeps of a record while it works: no text."""

    key: str
    source: str
    length: int
    rank: Any = None  # the ``by`` field's value


@dataclass(frozen=True)
class Removed:
    """A removed record's twin: the kept record it is a copy of, their fingerprint distance and copied shares."""

    twin: int
    distance: int
    shares: tuple[float, float]


@dataclass
class DedupSummary:
    """What one dedup run read, kept, removed and rejected, and where the time went."""

    read: int = 0
    kept: int = 0
    removed: int = 0
    rejected: int = 0
    pairs: int = 0
    """Candidate pairs (fingerprint distance <= k)."""
    compared: int = 0
    """Pairs the comparison matrix judged (identical texts need none)."""
    seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**{k: v for k, v in self.__dict__.items() if k != "seconds"},
                "seconds": {k: round(v, 3) for k, v in self.seconds.items()}}


# --- pure -----------------------------------------------------------------------------------


def rank_value(value: Any) -> tuple[int, float | str]:
    """A ``by`` value as a sort key: numbers in their order, then other values by their text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value):
        return 0, float(value)
    return 1, str(value)


def priority(entries: Sequence[Entry], rule: KeepRule) -> list[int]:
    """Positions in the order the rule keeps them: the first of each set of duplicates in it is kept."""
    positions = range(len(entries))
    if rule.how == "first":
        return list(positions)
    if rule.how == "longest":
        return sorted(positions, key=lambda p: -entries[p].length)  # stable: ties by input order
    known = [p for p in positions if entries[p].rank is not None]
    missing = [p for p in positions if entries[p].rank is None]
    if rule.how == "earliest":
        return sorted(known, key=lambda p: rank_value(entries[p].rank)) + missing
    return sorted(known, key=lambda p: (rank_value(entries[p].rank), -p), reverse=True) + missing


def candidate_pairs(fingerprints: np.ndarray, valid: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs of positions ``(i, j, distance)`` with fingerprints within ``k`` (only where ``valid``)."""
    pos = np.flatnonzero(np.asarray(valid, dtype=bool))
    i, j, d = join_pairs(np.asarray(fingerprints, dtype=np.uint64)[pos], k)
    return pos[i], pos[j], d


def neighbours(i: np.ndarray, j: np.ndarray, d: np.ndarray) -> dict[int, list[tuple[int, int]]]:
    """Each position's candidates ``(other, distance)``, nearest first (ties by position)."""
    out: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for a, b, dist in zip(i.tolist(), j.tolist(), d.tolist()):
        out[a].append((b, dist))
        out[b].append((a, dist))
    for found in out.values():
        found.sort(key=lambda x: (x[1], x[0]))
    return out


IsCopy = Callable[[int, int], "tuple[float, float] | None"]
"""``is_copy(kept, other)``: the copied shares of the two when ``other`` is a duplicate of ``kept``, else ``None``."""


def choose(order: Sequence[int], near: Mapping[int, Sequence[tuple[int, int]]], is_copy: IsCopy) -> dict[int, Removed]:
    """The removed positions with their twins: in ``order``, a position is removed when one of its candidates
    (``near``, nearest first) is kept and ``is_copy`` of the two, else kept.

    ``is_copy`` is asked only about a position and a kept candidate, once a pair.
    :func:`simdup_es.reference.choose_reference` is the reference.
    """
    kept: set[int] = set()
    removed: dict[int, Removed] = {}
    for p in order:
        for q, distance in near.get(p, ()):
            if q in kept and (shares := is_copy(q, p)) is not None:
                removed[p] = Removed(q, distance, shares)
                break
        else:
            kept.add(p)
    return removed


def copy_check(compare: Callable[[str, str], Any], params: DedupParams) -> Callable[[str, str], tuple[float, float] | None]:
    """``(a, b) -> shares or None`` over unified texts: identical texts are copies; otherwise the comparison matrix
    must find at least ``params.min_share`` of each side in copied passages (:func:`simdup_es.multilevel.copied_shares`)
    and ``params.min_verbatim`` of each in runs both have word for word."""
    from .multilevel import copied_shares

    def check(a: str, b: str) -> tuple[float, float] | None:
        if a == b:
            return 1.0, 1.0
        comparison = compare(a, b)
        shares = copied_shares(comparison)
        cq, cm = shares.copied_a, shares.copied_b
        if min(cq, cm) < params.min_share:
            return None
        verbatim = min(float(np.mean(comparison.runs_a)) if len(comparison.runs_a) else 0.0,
                       float(np.mean(comparison.runs_b)) if len(comparison.runs_b) else 0.0)
        return (cq, cm) if verbatim >= params.min_verbatim else None

    return check


@dataclass
class Deduplicated:
    """The outcome of :func:`dedup_records`: every record read (rejects aside), and the removed ones' twins."""

    entries: list[Entry]
    removed: dict[int, Removed]
    summary: DedupSummary


def dedup_records(records: Iterable[Any], fingerprinter: Any, *, rule: KeepRule = KeepRule(),
                  params: DedupParams = DedupParams(), compare: Callable[[str, str], Any] | None = None,
                  rank: Callable[[Any], Any] = lambda record: None, on_reject: Callable[[Any, str], None],
                  workers: int | None = None, on_progress: Callable[[str, int], None] | None = None) -> Deduplicated:
    """Deduplicate :class:`~simdup_es.sources.Record` items on this machine (texts held in memory).

    ``rank(record)`` is its ``by`` value; ``on_reject(record, reason)`` hears each record
    that cannot be fingerprinted; ``on_progress(phase, done)`` hears ``fingerprint`` and
    ``compare`` as they go. ``compare`` is the comparison matrix
    (:func:`simdup_es.search.comparer` by default).
    """
    from .groups import Clock
    from .search import comparer
    from .sources import record_doc
    from .text import unify

    summary = DedupSummary()
    clock = Clock(summary.seconds)
    entries: list[Entry] = []
    texts: list[str] = []
    fps: list[int] = []
    with clock("fingerprint"):
        for record, result in fingerprinter.map_items(records, record_doc, workers=workers):
            summary.read += 1
            if result.error is not None:
                summary.rejected += 1
                on_reject(record, result.reason)
                continue
            entries.append(Entry(record.key, record.source, len(record.text), rank(record)))
            texts.append(record.text)
            fps.append(result.unwrap().value)
            if on_progress is not None:
                on_progress("fingerprint", summary.read)
    with clock("pairs"):
        i, j, d = candidate_pairs(np.array(fps, dtype=np.uint64), np.ones(len(fps), bool), params.k)
        near = neighbours(i, j, d)
        summary.pairs = len(i)
    check = copy_check(compare or comparer(), params)
    unified: dict[int, str] = {}

    def is_copy(kept: int, other: int) -> tuple[float, float] | None:
        for p in (kept, other):
            if p not in unified:
                unified[p] = unify(texts[p])
        summary.compared += unified[kept] != unified[other]
        if on_progress is not None:
            on_progress("compare", summary.compared)
        return check(unified[kept], unified[other])

    with clock("compare"):
        removed = choose(priority(entries, rule), near, is_copy)
    summary.removed, summary.kept = len(removed), len(entries) - len(removed)
    return Deduplicated(entries, removed, summary)
