"""The sentence matrix of two texts: every pair of sentences whose LCS ratio may reach a threshold.

:func:`simdup_es.compare.compare` marks copied sentences among the pairs :func:`candidate_pairs`
finds; :func:`lcs_matrix` is the same work on two lists of unit sequences, as an ``n x m`` matrix.

For sentences ``d_i`` of ``a`` and ``d'_j`` of ``b``, ``p_ij = LCS / max(Num(d_i), Num(d'_j))``
(units: CJK characters, Latin words); a pair is a candidate at ``p_ij >= similar_weight``.

Every unit becomes one code point, numbered by frequency over both texts (the
most common unit gets 0). :func:`simdup_es.sentences.split_sentences_coded`
finds the units of a whole text with numpy and codes them as it splits (a CJK
character stands for itself, a Latin word gets a private-use code point), so no
step runs in Python per unit. Ranking costs about as much as it saves at 50 x 50
sentences and pays above: RapidFuzz looks code points below 256 up in an array
and the others in a hash map, so the whole-text LCS on ranked strings is about
3x faster (measured: 0.09 against 0.27 ms at 50 x 50, 39 against 140 ms at
1000 x 1000). The matrix is computed in bulk with ``rapidfuzz.process.cdist``
and ``score_cutoff=similar_weight``; when there are more than 256 distinct units,
on *folded* strings in which every code point is below 256 (the 160 most common
units keep their own, rarer ones share). Folding can only add matches, so the
folded ``p`` is an upper bound and no candidate is lost, while RapidFuzz runs its
8-bit fast path (measured: 2.5x faster than on wide strings at 50 x 50, 10x at
200 x 200). The few pairs that pass are recomputed exactly. Pairs that cannot
reach ``similar_weight`` because of their lengths (``p_ij <= min(n, m) / max(n, m)``)
are rejected by ``score_cutoff`` at once, and in large matrices not even visited
(see :func:`_rough_matrix`). ``workers`` spreads ``cdist`` over threads; it pays
only for large matrices (:data:`PARALLEL_MIN_PAIRS`).
"""

from __future__ import annotations

import contextvars
import re
import sys
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NamedTuple, cast, overload

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import LCSseq

from . import native
from .common import counts_before
from .errors import ConfigError, TooManyPairs
from .lcs import UnitCodec
from . import sentences as _sentences
from .sentences import WORD_BASE, WordCodes

__all__ = ["GROUPED_MIN_PAIRS", "PARALLEL_MIN_PAIRS", "Coded", "Encoded", "Pairs", "bounded_pairs", "candidate_pairs",
           "RawCodes", "codes_text", "folded_sentences", "lcs_matrix", "rank_first", "rank_second", "rank_second_folded",
           "raw_codes"]

# Below this many sentence pairs, threads cost more than they save.
PARALLEL_MIN_PAIRS = 250_000
_CUTOFF_MARGIN = 1e-4
# Matrices of at least this many pairs are scored in groups of similar length
# (measured: at 200 x 200 the extra cdist calls cost more than they save; at
# 1000 x 1000 sentences of 20-60 units, grouping saves about 20 %, more when
# lengths vary more).
GROUPED_MIN_PAIRS = 100_000
_GROUP_SPAN = 1.1
# The most sentence pairs one cdist call scores: its answer is a dense float32 matrix, 4 bytes a pair,
# so this bounds the matrix's memory (1 MiB) whatever the texts (:class:`_Scorer`); for a 0.9 MB request
# the largest block was 206 MB without it. (Smaller blocks cost time: 1 << 16 took a 0.5 MB comparison
# 1.35x the CPU.) float32 is exact enough: the LCS read back from a score (rint(p * max(n, m)), below)
# is off by at most max(n, m) * 2**-24, far below one half for any sentence.
BLOCK_PAIRS = 1 << 18
# The most sentence pairs that may reach similar_weight a comparison takes: MAX_CANDIDATES, or
# CANDIDATES_PER_SENTENCE a sentence of the two texts if more; past it, TooManyPairs. Each pair costs some
# 300 bytes by the end of a comparison: texts whose every sentence is like every other (one sentence 5,000
# times, 120 kB) would make 25 million. Texts of the corpus make up to 7 a sentence (two of 5 MB: 1.2
# million). Read when a matrix is scored, and only within bounded_pairs() (the server: one request must not
# take the machine); a command run by hand compares what it is given.
MAX_CANDIDATES = 100_000
CANDIDATES_PER_SENTENCE = 20
_BOUNDED: contextvars.ContextVar[bool] = contextvars.ContextVar("simdup_bounded_pairs", default=False)


@contextmanager
def bounded_pairs() -> Iterator[None]:
    """Within the block (this thread or task), a comparison takes at most :data:`MAX_CANDIDATES` pairs of similar
    sentences, or :data:`CANDIDATES_PER_SENTENCE` a sentence of the two texts if more; past it, :class:`TooManyPairs`."""
    token = _BOUNDED.set(True)
    try:
        yield
    finally:
        _BOUNDED.reset(token)
# Folded code points: the _FOLD_KEEP most common units keep their own, the
# rest share the remaining ones.
_FOLD_KEEP = 160
_FOLD_SPAN = 256 - _FOLD_KEEP
# Multi-character units (words) are coded in the private-use planes 15 and 16.
_WORD_FIRST = chr(WORD_BASE)
_PRIVATE_PLANES = re.compile("[\U000F0000-\U0010FFFF]")


@dataclass(frozen=True)
class Encoded:
    """Both texts' sentences as strings of one code point per unit.

    Codes are dense and ranked by frequency, ``a``'s units first (the most common
    unit of ``a`` is chr(0)), then those only ``b`` has: the common units have code
    points below 256, and ``a``'s codes do not depend on ``b``, so a query compared
    with many texts is coded once (:class:`PreparedText`). Any one-to-one coding
    gives the same LCS; folding (below) only widens the candidates checked exactly.
    ``folded_*`` are the same sentences with every code point below 256 (rare
    units share code points); ``None`` when the exact strings already are.
    """

    a: Sequence[str]
    b: Sequence[str]
    folded_a: Sequence[str] | None
    folded_b: Sequence[str] | None


def raw_codes(
    units_a: Sequence[Sequence[Hashable]], units_b: Sequence[Sequence[Hashable]]
) -> tuple[list[str], list[str]]:
    """One code point per unit, before ranking, for units given as sequences.

    A one-character unit is itself, a longer one (a Latin word or number) gets a
    private-use code point, as :func:`simdup_es.sentences.split_sentences_coded`
    codes them. Units that are not strings, or more distinct words than
    private-use code points, are numbered one by one instead.
    """
    try:
        words = WordCodes()
        return _word_codes(units_a, words), _word_codes(units_b, words)
    except (OverflowError, TypeError):
        codec = UnitCodec()
        return [codec.encode(u) for u in units_a], [codec.encode(u) for u in units_b]


def _word_codes(sentences_units: Sequence[Sequence[Hashable]], words: WordCodes) -> list[str]:
    out = []
    for units in cast("Sequence[Sequence[str]]", sentences_units):
        joined = "".join(units)  # TypeError for units that are not strings
        # A regular expression finds a private-use character faster than max()
        # walks the string (which makes an object of every character).
        if len(joined) != len(units) or _PRIVATE_PLANES.search(joined):
            joined = "".join([u if len(u) == 1 and u < _WORD_FIRST else words[u] for u in units])
        out.append(joined)
    return out


def _split_lengths(whole: str, lengths: Sequence[int]) -> list[str] | SlicedStrings:
    if len(lengths) >= _sentences.VIEW_SENTENCES:  # a long text's: cut when read (a string each: 100 bytes a sentence)
        return SlicedStrings(whole, lengths)
    out = []
    pos = 0
    for n in lengths:
        out.append(whole[pos : pos + n])
        pos += n
    return out


class SlicedStrings(Sequence[str]):
    """The pieces of ``whole`` of these ``lengths`` in turn, each cut from it when read (a slice: a list of them)."""

    __slots__ = ("bounds", "whole")

    def __init__(self, whole: str, lengths: Sequence[int] | np.ndarray) -> None:
        self.whole = whole
        self.bounds = np.zeros(len(lengths) + 1, dtype=np.int64)  # 8 bytes a piece (a list of ints: 40)
        np.cumsum(np.asarray(lengths, dtype=np.int64), out=self.bounds[1:])

    def __len__(self) -> int:
        return len(self.bounds) - 1

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        picked = range(len(self))[i]  # an index or slice checked and made positive as a list's
        if isinstance(picked, int):
            return self.whole[int(self.bounds[picked]) : int(self.bounds[picked + 1])]
        if picked.step != 1:
            return [self[k] for k in picked]
        bounds = self.bounds[picked.start : max(picked.start, picked.stop) + 1].tolist()
        return [self.whole[a:b] for a, b in zip(bounds, bounds[1:])]

    def lengths(self) -> np.ndarray:
        """Each piece's length (int64)."""
        return np.diff(self.bounds)

    def picked(self, rows: np.ndarray) -> SlicedStrings:
        """These pieces (indices, in this order), sliced from a new whole: what ``[self[i] for i in rows]`` holds
        without a string each."""
        starts, lengths = self.bounds[rows], self.bounds[rows + 1] - self.bounds[rows]
        # Each kept character's place in ``whole``: its piece's start, moved to where the piece lands, plus its place.
        at = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(int(lengths.sum()))
        chars = np.frombuffer(self.whole.encode("utf-32-le"), dtype="<u4")
        return SlicedStrings(codes_text(chars[at]), lengths)

    def __iter__(self) -> Iterator[str]:
        for first in range(0, len(self), 4096):  # a few at a time: the bounds are not all made ints at once
            bounds = self.bounds[first : first + 4097].tolist()
            yield from map(self.whole.__getitem__, map(slice, bounds[:-1], bounds[1:]))

    def __eq__(self, other: object) -> bool:
        return list(self) == (list(other) if isinstance(other, SlicedStrings) else other)

    __hash__ = None  # type: ignore[assignment]  # as a list's


class Coded(NamedTuple):
    """One text's sentences as strings of one code point per unit, and those codes as an array."""

    codes: np.ndarray  # uint32, one per unit of the whole text
    sentences: list[str] | SlicedStrings  # a long text's: cut from ``whole`` when read
    lengths: np.ndarray  # int64 units per sentence
    whole: str  # "".join(sentences)


def _no_surrogates(rank: np.ndarray) -> np.ndarray:
    """Dense ranks as code points, past the surrogates (which a str cannot hold alone)."""
    codes = rank.astype(np.uint32)
    codes[codes >= 0xD800] += 0x800
    return codes


def _coded(codes: np.ndarray, lengths: np.ndarray) -> Coded:
    whole = codes_text(codes)
    return Coded(codes, _split_lengths(whole, lengths.tolist()), lengths, whole)


def _lengths(raw: list[str]) -> np.ndarray:
    return np.fromiter(map(len, raw), dtype=np.int64, count=len(raw))


RawCodes = tuple[np.ndarray, np.ndarray]
"""A text's sentences' raw unit codes (before ranking) as one array of code points, sentence after sentence, and each
sentence's number of units (:func:`simdup_es.sentences.split_sentences_points`): the strings of
:func:`simdup_es.sentences.split_sentences_coded` joined, and their lengths."""


def _raw(raw: list[str] | RawCodes) -> RawCodes:
    return raw if isinstance(raw, tuple) else (_code_points("".join(raw)), _lengths(raw))


def rank_first(raw_a: list[str] | RawCodes) -> tuple[np.ndarray, np.ndarray, Coded]:
    """Code ``a``'s units by their frequency in ``a`` (the most common gets 0). ``raw_a``: a string of raw codes a
    sentence, or them all as :data:`RawCodes`.

    Returns the distinct raw code points (sorted), the code each one got, and ``a`` coded.
    """
    raw, lengths = _raw(raw_a)
    if not raw.size:
        empty = np.zeros(0, dtype=np.uint32)
        return empty, empty, _coded(empty, lengths)
    if raw.size >= _COUNTED_FROM and int(raw.max()) < 0x110000:
        return _rank_counted(raw, lengths)
    values, inverse, counts = np.unique(raw, return_inverse=True, return_counts=True)
    rank = np.empty(counts.size, dtype=np.int64)
    rank[np.argsort(-counts, kind="stable")] = np.arange(counts.size)
    table = _no_surrogates(rank)
    return values, table, _coded(table[inverse.reshape(-1)], lengths)


_COUNTED_FROM = 1 << 18
"""From this many units, :func:`rank_first` counts them by code point (:func:`_rank_counted`)."""


def _rank_counted(raw: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, Coded]:
    """:func:`rank_first` of code points by a count of each (13 MB, whatever their number) and a table from code point
    to code, not by ``np.unique``: its sort, inverse and their temporaries take some 30 bytes a unit (a 5 MB query's,
    47 MB at once). The same values, table and codes."""
    every = np.bincount(raw)
    values = np.flatnonzero(every).astype(raw.dtype)
    counts = every[values]
    del every
    rank = np.empty(counts.size, dtype=np.int64)
    rank[np.argsort(-counts, kind="stable")] = np.arange(counts.size)
    table = _no_surrogates(rank)
    code_of = np.zeros(int(values[-1]) + 1, dtype=table.dtype)
    code_of[values] = table
    return values, table, _coded(code_of[raw], lengths)


def rank_second(values: np.ndarray, table: np.ndarray, raw_b: list[str] | RawCodes) -> tuple[Coded, int]:
    """Code ``b``'s units as :func:`rank_first` coded ``a``'s; units ``a`` lacks follow, by their
    frequency in ``b``. Returns ``b`` coded and the number of distinct units of both texts. The compiled core
    codes it where it computes (:mod:`simdup_es.native`)."""
    coded, distinct, _ = _rank_second(values, table, raw_b, False)
    return coded, distinct


def rank_second_folded(values: np.ndarray, table: np.ndarray, raw_b: list[str] | RawCodes
                       ) -> tuple[Coded, int, list[str] | SlicedStrings | None]:
    """:func:`rank_second`, and ``b``'s sentences folded (:func:`folded_sentences`) when the two texts have more than
    256 distinct units (else ``None``): what the matrix reads of ``b``, in one call to the compiled core."""
    return _rank_second(values, table, raw_b, True)


def _rank_second(values: np.ndarray, table: np.ndarray, raw_b: list[str] | RawCodes, fold: bool
                 ) -> tuple[Coded, int, list[str] | SlicedStrings | None]:
    raw, lengths = _raw(raw_b)
    if not raw.size:
        empty = _coded(raw.astype(np.uint32), lengths)
        return empty, values.size, folded_sentences(empty) if fold and values.size > 256 else None
    if (core := native.module()) is not None:
        codes, whole, sentences, distinct, folded = core.rank_second(
            np.asarray(values, dtype=np.uint32), np.asarray(table, dtype=np.uint32), raw, lengths,
            (_FOLD_KEEP, _FOLD_SPAN) if fold else None, _sentences.VIEW_SENTENCES)
        if isinstance(sentences, str):  # a long text's, whole (as _split_lengths keeps it)
            sentences = SlicedStrings(sentences, lengths)
            folded = None if folded is None else SlicedStrings(folded, lengths)
        return Coded(np.frombuffer(codes, dtype=np.uint32), sentences, lengths, whole), distinct, folded
    seen, inverse, counts = np.unique(raw, return_inverse=True, return_counts=True)
    at = np.minimum(np.searchsorted(values, seen), max(values.size - 1, 0))
    known = values[at] == seen if values.size else np.zeros(seen.size, dtype=bool)
    rank = np.empty(seen.size, dtype=np.int64)
    new = np.flatnonzero(~known)
    rank[new[np.argsort(-counts[new], kind="stable")]] = values.size + np.arange(new.size)
    codes = _no_surrogates(rank)
    codes[known] = table[at[known]]
    coded, distinct = _coded(codes[inverse.reshape(-1)], lengths), values.size + new.size
    return coded, distinct, folded_sentences(coded) if fold and distinct > 256 else None


def folded_sentences(coded: Coded) -> list[str] | SlicedStrings:
    """The sentences with every code point below 256: the :data:`_FOLD_KEEP` most common units
    keep theirs, the rest share the others."""
    codes = coded.codes
    folded = np.where(codes < _FOLD_KEEP, codes, _FOLD_KEEP + codes % _FOLD_SPAN).astype(np.uint8)
    return _split_lengths(folded.tobytes().decode("latin-1"), coded.lengths.tolist())


def _encode(raw_a: list[str], raw_b: list[str]) -> Encoded:
    """Both texts coded by frequency (:func:`rank_first`, :func:`rank_second`; numpy work)."""
    values, table, a = rank_first(raw_a)
    b, distinct = rank_second(values, table, raw_b)
    wide = distinct > 256
    return Encoded(a.sentences, b.sentences, folded_sentences(a) if wide else None, folded_sentences(b) if wide else None)


def _candidates(enc: Encoded, similar_weight: float, workers: int, grouped: int, block_pairs: int | None = None,
                max_pairs: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(i, j, lcs)`` of every pair with ``p_ij >= similar_weight`` (and a few just below); scored in groups
    of similar length from ``grouped`` pairs, ``block_pairs`` at a time (:func:`_rough_matrix`); more than
    ``max_pairs`` that may reach ``similar_weight``: :class:`TooManyPairs` (``None``: :data:`BLOCK_PAIRS`, and
    within :func:`bounded_pairs` :data:`MAX_CANDIDATES` or :data:`CANDIDATES_PER_SENTENCE` a sentence)."""
    ea, eb = enc.a, enc.b
    empty = np.zeros(0, dtype=np.int64)
    if not ea or not eb:
        return empty, empty, empty
    # Below the threshold by a margin: RapidFuzz turns a normalised cutoff into a
    # distance cutoff with some rounding, and with a margin of 1e-9 it dropped
    # pairs exactly at the threshold (3 of 10 units at 0.3). Extra pairs let in by
    # the margin are removed by the exact check in the callers.
    cutoff = max(similar_weight - _CUTOFF_MARGIN, 0.0)
    # With more than 256 distinct units, two passes: folded strings (RapidFuzz's
    # 8-bit fast path) find a superset of the candidates, exact strings confirm.
    wide = enc.folded_a is not None and enc.folded_b is not None
    first = enc.folded_a if enc.folded_a is not None else ea
    second = enc.folded_b if enc.folded_b is not None else eb
    lens_a, lens_b = _lengths_of(ea), _lengths_of(eb)
    if max_pairs is None:
        max_pairs = max(MAX_CANDIDATES, CANDIDATES_PER_SENTENCE * (len(ea) + len(eb))) if _BOUNDED.get() else sys.maxsize
    scorer = _Scorer(cutoff, workers, BLOCK_PAIRS if block_pairs is None else block_pairs, max_pairs)
    ii, jj, rough = _rough_matrix(first, second, lens_a, lens_b, similar_weight, scorer, grouped)
    if wide:
        sim = LCSseq.similarity
        pairs = zip(ii.tolist(), jj.tolist(), strict=True)
        lcs = np.fromiter((sim(ea[i], eb[j]) for i, j in pairs), dtype=np.int64, count=ii.size)
    else:
        lcs = np.rint(rough * np.maximum(lens_a[ii], lens_b[jj])).astype(np.int64)
    return ii, jj, lcs


def _lengths_of(sentences: Sequence[str]) -> np.ndarray:
    if isinstance(sentences, SlicedStrings):
        return sentences.lengths()
    return np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))


class _Scorer:
    """``rapidfuzz.process.cdist`` at or above ``cutoff``, at most ``block_pairs`` pairs a call, counting the pairs
    found against ``max_pairs`` (:class:`TooManyPairs` past it)."""

    def __init__(self, cutoff: float, workers: int, block_pairs: int, max_pairs: int) -> None:
        if block_pairs < 1:
            raise ConfigError(f"block_pairs must be at least 1, got {block_pairs}")
        self.cutoff, self.workers, self.block_pairs, self.max_pairs = cutoff, workers, block_pairs, max_pairs
        self.found = 0

    def whole(self, rows: Sequence[str], cols: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """What :meth:`__call__` yields, joined, when the pairs fit one block (``None`` when they do not): a 2 kB
        candidate's ~2,000 pairs in one call, without the blocks' glue (half the time of the matrix's pairs besides
        RapidFuzz's)."""
        if not cols or len(cols) > self.block_pairs or len(rows) > self.block_pairs // len(cols):
            return None
        block = process.cdist(rows, cols, scorer=LCSseq.normalized_similarity, score_cutoff=self.cutoff,
                              dtype=np.float32, workers=self.workers)
        flat = np.flatnonzero(block)  # row by row, as np.nonzero
        self.found += flat.size
        if self.found > self.max_pairs:
            raise TooManyPairs(self.max_pairs)
        bi, bj = np.divmod(flat, len(cols))
        return bi.astype(np.int64), bj.astype(np.int64), block.reshape(-1)[flat]

    def __call__(self, rows: Sequence[str], cols: Sequence[str]) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """``(i, j, p)`` of the pairs at or above the cutoff, block by block (``i``, ``j``: into ``rows``, ``cols``)."""
        width = max(1, min(len(cols), self.block_pairs))
        height = max(1, self.block_pairs // width)
        for c0 in range(0, len(cols), width):
            for r0 in range(0, len(rows), height):
                block = process.cdist(rows[r0 : r0 + height], cols[c0 : c0 + width], scorer=LCSseq.normalized_similarity,
                                      score_cutoff=self.cutoff, dtype=np.float32, workers=self.workers)
                bi, bj = np.nonzero(block)
                self.found += bi.size
                if self.found > self.max_pairs:
                    raise TooManyPairs(self.max_pairs)
                yield bi + r0, bj + c0, block[bi, bj]


def _rough_matrix(
    first: Sequence[str],
    second: Sequence[str],
    lens_a: np.ndarray,
    lens_b: np.ndarray,
    similar_weight: float,
    scorer: _Scorer,
    grouped: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(i, j, p)`` of the pairs RapidFuzz scores at or above the ``scorer``'s cutoff.

    Since ``LCS <= min(n, m)``, ``p <= min(n, m) / max(n, m)``: a sentence of n
    units can only match sentences of ``similar_weight * n`` to
    ``n / similar_weight`` units. For large matrices the sentences of ``a`` are
    grouped by length (each group spanning a factor of :data:`_GROUP_SPAN`) and
    each group is scored only against the slice of length-sorted ``b`` it can
    match. Matrices of fewer than ``grouped`` pairs are scored whole, where the
    groups' calls would cost more than the pairs they skip. Either way no ``cdist``
    call scores more than the ``scorer``'s block of pairs: its answer is dense.
    """
    n, m = len(first), len(second)
    found_i, found_j, found_p = [], [], []
    if n * m < grouped:
        if (whole := scorer.whole(first, second)) is not None:
            return whole
        for bi, bj, bp in scorer(first, second):
            found_i.append(bi)
            found_j.append(bj)
            found_p.append(bp)
        return _joined(found_i, found_j, found_p)
    order_a = np.argsort(lens_a, kind="stable")
    order_b = np.argsort(lens_b, kind="stable")
    sorted_b = lens_b[order_b]
    second_sorted = second.picked(order_b) if isinstance(second, SlicedStrings) else [second[j] for j in order_b.tolist()]
    start = 0
    while start < n:
        low = int(lens_a[order_a[start]])
        stop = int(np.searchsorted(lens_a[order_a], low * _GROUP_SPAN, side="right"))
        high = int(lens_a[order_a[stop - 1]])
        # Slightly wider than the bound, never narrower: exact ratios are checked later.
        lo_b = int(np.searchsorted(sorted_b, similar_weight * low - 1e-6, side="left"))
        hi_b = int(np.searchsorted(sorted_b, high / similar_weight + 1e-6, side="right"))
        if lo_b < hi_b:
            rows = order_a[start:stop]
            for bi, bj, bp in scorer([first[i] for i in rows.tolist()], second_sorted[lo_b:hi_b]):
                found_i.append(rows[bi])
                found_j.append(order_b[lo_b + bj])
                found_p.append(bp)
        start = stop
    return _joined(found_i, found_j, found_p)


def _joined(found_i: list[np.ndarray], found_j: list[np.ndarray], found_p: list[np.ndarray]
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not found_i:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    return np.concatenate(found_i).astype(np.int64), np.concatenate(found_j).astype(np.int64), np.concatenate(found_p)


def _exact_p(lcs: np.ndarray, n_a: np.ndarray, n_b: np.ndarray) -> np.ndarray:
    # lcs / max(n, m) is bit-for-bit min(lcs / n, lcs / m): the same division.
    p: np.ndarray = lcs / np.maximum(n_a, n_b)
    return p


def _auto_workers(workers: int | None, pairs: int) -> int:
    if workers is not None:
        return workers
    return -1 if pairs >= PARALLEL_MIN_PAIRS else 1


def lcs_matrix(
    units_a: Sequence[Sequence[Hashable]],
    units_b: Sequence[Sequence[Hashable]],
    *,
    similar_weight: float = 0.6,
    workers: int | None = 1,
    grouped_pairs: int = GROUPED_MIN_PAIRS,
    block_pairs: int = BLOCK_PAIRS,
    max_pairs: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The sentence LCS matrix and ``P``, kept only where ``p_ij >= similar_weight``.

    Parameters
    ----------
    units_a, units_b:
        Unit sequences of the sentences of each text (``Sentence.units``):
        non-empty strings, or other hashable values.
    similar_weight:
        Entries below it are 0 in both matrices (they are not computed exactly).
    workers:
        Threads for RapidFuzz (``-1``: all cores; ``None``: all cores only for
        large matrices).
    grouped_pairs:
        From this many pairs the matrix is scored in groups of sentences of similar length
        (the same result; a test sets 0 to take that path at any size).
    block_pairs:
        The most pairs scored at a time (the same result; it bounds the memory of the scoring).
    max_pairs:
        The most pairs that may reach ``similar_weight``; ``None``: no limit, or within :func:`bounded_pairs`
        :data:`MAX_CANDIDATES` or :data:`CANDIDATES_PER_SENTENCE` a sentence of both lists if more.

    Returns
    -------
    (L, P):
        ``n x m`` int64 and float64 arrays; ``P[i, j] = L[i, j] / max(Num(d_i), Num(d'_j))``.

    Raises
    ------
    ConfigError
        ``similar_weight`` is not in (0, 1], a sentence has no unit, or a unit
        is the empty string.
    TooManyPairs
        More than ``max_pairs`` pairs may reach ``similar_weight``.
    """
    if not 0.0 < similar_weight <= 1.0:
        raise ConfigError(f"similar_weight must be in (0, 1], got {similar_weight}")
    if any(len(u) == 0 for u in (*units_a, *units_b)):
        raise ConfigError("every sentence needs at least one unit (p is undefined for empty ones)")
    if any("" in u for u in (*units_a, *units_b)):
        raise ConfigError("a unit is the empty string (units are characters or words, never empty)")
    n, m = len(units_a), len(units_b)
    enc = _encode(*raw_codes(units_a, units_b))
    ii, jj, lcs = _candidates(enc, similar_weight, _auto_workers(workers, n * m), grouped_pairs, block_pairs, max_pairs)
    L = np.zeros((n, m), dtype=np.int64)
    P = np.zeros((n, m), dtype=np.float64)
    if ii.size:
        na = np.array([len(u) for u in units_a], dtype=np.int64)
        nb = np.array([len(u) for u in units_b], dtype=np.int64)
        p = _exact_p(lcs, na[ii], nb[jj])
        keep = p >= similar_weight
        L[ii[keep], jj[keep]] = lcs[keep]
        P[ii[keep], jj[keep]] = p[keep]
    return L, P


def codes_text(codes: np.ndarray) -> str:
    return str(np.ascontiguousarray(codes, dtype="<u4").data, "utf-32-le")  # decoded in place: no bytes copy


def candidate_pairs(coded_a: Coded, distinct_a: int, coded_b: Coded, enc: Encoded, similar_weight: float,
                    workers: int | None, grouped_pairs: int = GROUPED_MIN_PAIRS) -> Pairs:
    """The candidate pairs with ``p_ij >= similar_weight``, exactly, of ``a`` coded by :func:`rank_first`
    (``distinct_a`` units) and ``b`` by :func:`rank_second`.

    In matrices of ``grouped_pairs`` pairs or more only the sentences that can reach ``similar_weight``
    take part: a sentence's LCS with any other is at most its units that the other text has at all (a
    5 MB query against one document: most of its sentences are out at once).
    """
    n_a, n_b = coded_a.lengths, coded_b.lengths
    pairs = len(n_a) * len(n_b)
    rows_a = rows_b = None
    if pairs >= grouped_pairs:
        codes_a, codes_b = coded_a.codes, coded_b.codes
        in_b = np.zeros(int(max(codes_a.max(initial=0), codes_b.max(initial=0))) + 1, dtype=bool)
        in_b[codes_b] = True
        # b's codes for units a has are a's (all below the first code a lacks, rank_second)
        first_new = int(_no_surrogates(np.array([distinct_a]))[0])
        rows_a = _may_match(coded_a, in_b[codes_a], similar_weight)
        rows_b = _may_match(coded_b, codes_b < first_new, similar_weight)
        enc = Encoded(_rows(enc.a, rows_a), _rows(enc.b, rows_b), _rows(enc.folded_a, rows_a),
                       _rows(enc.folded_b, rows_b))
    ii, jj, lcs = _candidates(enc, similar_weight, _auto_workers(workers, pairs), grouped_pairs)
    if rows_a is not None and rows_b is not None:
        ii, jj = rows_a[ii], rows_b[jj]
    p = _exact_p(lcs, n_a[ii], n_b[jj]) if ii.size else np.zeros(0)
    keep = p >= similar_weight
    return Pairs(ii[keep], jj[keep], lcs[keep], p[keep])


@overload
def _rows(sentences: Sequence[str], rows: np.ndarray) -> list[str] | SlicedStrings: ...
@overload
def _rows(sentences: None, rows: np.ndarray) -> None: ...
def _rows(sentences: Sequence[str] | None, rows: np.ndarray) -> list[str] | SlicedStrings | None:
    if isinstance(sentences, SlicedStrings):
        return sentences.picked(rows)
    return None if sentences is None else [sentences[i] for i in rows.tolist()]


def _may_match(coded: Coded, present: np.ndarray, similar_weight: float) -> np.ndarray:
    """The sentences with at least ``similar_weight`` of their units ``present`` (in the other text)."""
    # Read at the sentences' bounds (counts_before): no running count of a unit's bytes for the whole text (a
    # 5 MB query has 1.5 million units).
    lengths = np.asarray(coded.lengths, dtype=np.int64)
    found = np.diff(counts_before(present, np.concatenate(([0], np.cumsum(lengths)))))
    # The margin of _candidates: never narrower than the exact check that follows.
    return np.flatnonzero(found >= (similar_weight - _CUTOFF_MARGIN) * coded.lengths)


class Pairs(NamedTuple):
    """The candidate pairs: sentence indices, their LCS and ``p``."""

    i: np.ndarray
    j: np.ndarray
    lcs: np.ndarray
    p: np.ndarray

    def within(self, core_a: range, core_b: range) -> Pairs:
        ii, jj = self.i, self.j
        inside = (ii >= core_a.start) & (ii < core_a.stop) & (jj >= core_b.start) & (jj < core_b.stop)
        return Pairs(ii[inside], jj[inside], self.lcs[inside], self.p[inside])


def _code_points(s: str) -> np.ndarray:
    """The code points of ``s`` (the matrix's unit codes may include surrogates)."""
    return np.frombuffer(s.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
