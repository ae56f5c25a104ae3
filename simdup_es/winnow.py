"""Unit k-grams: winnowed keys that find any copied run of text, and the runs two texts share.

Keys (Schleimer, Wilkerson and Aiken, "Winnowing: local algorithms for document
fingerprinting", SIGMOD 2003, the method of MOSS): every run of ``k`` consecutive
units (CJK characters, Latin words; punctuation and spaces do not count) is hashed
to 64 bits, and of every ``w`` consecutive hashes the smallest is kept (the
rightmost of equal ones), with its unit offset. Two texts that share a run of at
least ``w + k - 1`` units share a key, whatever surrounds the run and whatever was
edited elsewhere, even inside the same sentence: every window of ``w`` hashes
inside the run is the same in both texts, so both keep its smallest. About
``2 / (w + 1)`` of the hashes are kept.

Runs (:func:`shared_runs`): the units of each text covered by a k-gram of at
least ``min_units`` units that the other text has too; what a copy shares, inside
sentences as well as across them.

Pure and deterministic: numpy over unit codes, with a slow, obviously-correct
``*_reference`` twin of each kernel in :mod:`simdup_es.reference`.
"""

from __future__ import annotations


import numpy as np
import xxhash

from .sentences import UnitPoints, unit_points

__all__ = [
    "KEY_K",
    "KEY_W",
    "GramIndex",
    "batch_codes",
    "gram_cover",
    "gram_hashes",
    "shared_runs",
    "shared_runs_with",
    "unit_codes",
    "winnow",
    "winnow_many",
    "winnowed",
]

KEY_K = 5
"""Units per hashed gram: 5 CJK characters (two or three words) or 5 Latin words."""
KEY_W = 6
"""Grams per window: a shared run of ``KEY_W + KEY_K - 1 = 10`` units is always found
(a short clause); 2 / 7 of the grams are kept, about 0.29 keys per unit."""

_BASE = np.uint64(0x100000001B3)  # odd multiplier of the polynomial gram hash
_M1 = np.uint64(0xBF58476D1CE4E5B9)  # SplitMix64 finalizer: spreads the polynomial's bits
_M2 = np.uint64(0x94D049BB133111EB)


def unit_codes(text: str) -> np.ndarray:
    """One unsigned 64-bit code per unit of ``text`` (:func:`simdup_es.sentences.units`).

    A unit of one character (a CJK character, a one-letter word) is its code point, a
    longer Latin word or number the XXH3-64 of its UTF-8 (plus 2**21, past every code
    point, where the hash is small).
    """
    return batch_codes(unit_points([text]))


def batch_codes(found: UnitPoints) -> np.ndarray:
    """:func:`unit_codes` of a batch's units (:func:`simdup_es.sentences.unit_points`), text after text."""
    codes = found.points.astype(np.uint64)
    if found.words:  # each distinct word hashed once
        hashed = {w: ord(w) if len(w) == 1 else max(xxhash.xxh3_64_intdigest(w.encode("utf-8")), 1 << 21)
                  for w in set(found.words)}
        codes[found.word_at] = np.fromiter(map(hashed.__getitem__, found.words), dtype=np.uint64, count=len(found.words))
    return codes


def gram_hashes(codes: np.ndarray, k: int) -> np.ndarray:
    """64-bit hash of each run of ``k`` codes, ``len(codes) - k + 1`` of them (none when shorter)."""
    n = len(codes) - k + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint64)
    codes = np.asarray(codes, dtype=np.uint64)
    h = np.zeros(n, dtype=np.uint64)
    for t in range(k):  # unsigned arithmetic wraps modulo 2**64
        h = h * _BASE + codes[t : t + n]
    h ^= h >> np.uint64(30)
    h *= _M1
    h ^= h >> np.uint64(27)
    h *= _M2
    h ^= h >> np.uint64(31)
    return h


WINDOW_BLOCK = 1 << 14  # windows of winnowing read at a time (argmin copies its block of w hashes each)


def _rightmost_minima(hashes: np.ndarray, w: int) -> np.ndarray:
    """The position of the rightmost minimum of every window of ``w`` consecutive ``hashes`` (at least ``w``),
    :data:`WINDOW_BLOCK` windows at a time: argmin over the reversed windows copies them, 8 bytes a hash ``w``
    times over, which for a whole text of 75,000 units was 3.6 MB."""
    count = len(hashes) - w + 1
    picked = np.empty(count, dtype=np.int64)
    for first in range(0, count, WINDOW_BLOCK):
        last = min(first + WINDOW_BLOCK, count)
        windows = np.lib.stride_tricks.sliding_window_view(hashes[first : last + w - 1], w)
        picked[first:last] = np.arange(first, last) + (w - 1 - np.argmin(windows[:, ::-1], axis=1))
    return picked


def winnow(hashes: np.ndarray, w: int) -> tuple[np.ndarray, np.ndarray]:
    """The kept hashes and their positions (ascending): the smallest of every ``w`` consecutive hashes.

    Ties go to the rightmost (robust winnowing: a run of equal hashes keeps one). Fewer
    than ``w`` hashes form one window.
    """
    n = len(hashes)
    if n == 0:
        return hashes[:0], np.zeros(0, dtype=np.int64)
    w = min(w, n)
    picked = _rightmost_minima(hashes, w)
    # Non-decreasing (a window's rightmost minimum is never left of the previous one's), so
    # dropping repeats is np.unique without its sort.
    positions = picked[np.concatenate(([True], picked[1:] != picked[:-1]))]
    return hashes[positions], positions


def winnow_many(codes: np.ndarray, first: np.ndarray, k: int, w: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`winnow` of :func:`gram_hashes` of each text of a batch, with numpy over the batch at once.

    ``codes`` are the units of the texts end to end (:func:`batch_codes`), ``first`` each text's first unit
    and then their number. Returns each text's kept hashes and their positions in the text: the same as
    one text at a time, without numpy's cost per call for each of them.
    """
    hashes = gram_hashes(codes, k)
    starts, stops = first[:-1], np.maximum(first[1:] - k + 1, first[:-1])  # each text's grams
    grams = stops - starts
    picked = np.zeros(0, dtype=np.int64)
    if len(hashes) >= w:  # every window of w grams of the batch, the rightmost minimum of each
        picked = _rightmost_minima(hashes, w)
    out = []
    for start, n in zip(starts.tolist(), grams.tolist(), strict=True):
        if n < w:  # one window, shorter than w (or none)
            chosen = [start + n - 1 - int(np.argmin(hashes[start : start + n][::-1]))] if n else []
            positions = np.array(chosen, dtype=np.int64)
        else:
            positions = picked[start : start + n - w + 1]
            positions = positions[np.concatenate(([True], positions[1:] != positions[:-1]))]
        out.append((hashes[positions], positions - start))
    return out


def winnowed(text: str, k: int = KEY_K, w: int = KEY_W) -> tuple[np.ndarray, np.ndarray]:
    """The winnowed keys of a unified text and the unit offset each one starts at."""
    return winnow(gram_hashes(unit_codes(text), k), w)


def shared_runs(a: np.ndarray, b: np.ndarray, min_units: int) -> tuple[np.ndarray, np.ndarray]:
    """Which units of ``a`` and of ``b`` lie in a run of ``min_units`` codes that both have.

    ``a`` and ``b`` are code sequences (:func:`unit_codes`, or any integers coded alike
    for both). Grams are matched as multisets: a gram that ``a`` has once marks only
    its first occurrence in ``b``, so a phrase one text repeats (a list of examples
    built on one pattern) is not copied text many times over. Returns two boolean
    arrays of their lengths.
    """
    return shared_runs_with(GramIndex(a, min_units), b)


class GramIndex:
    """The grams of one code sequence, hashed and sorted once, for :func:`shared_runs_with`.

    A long text compared with many others (a 5 MB query against each candidate)
    would otherwise hash and sort its grams again for every one of them.
    """

    __slots__ = ("k", "n", "order", "sorted")

    def __init__(self, codes: np.ndarray, k: int) -> None:
        self.k = k
        self.n = len(codes)
        hashes = gram_hashes(codes, k)
        # Stable: equal grams stay in text order, so the first occurrences come first.
        self.order = np.argsort(hashes, kind="stable")
        self.sorted = hashes[self.order]


def shared_runs_with(a: GramIndex, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`shared_runs` of ``a``'s codes and ``b``, touching ``a``'s grams only
    where ``b`` has the same: the work on ``a``'s side beyond two boolean arrays of its length
    is ``O(len(b) log len(a))``, and beyond that only the grams both have are sorted (a
    candidate that copies nothing shares a few)."""
    k = a.k
    hb = gram_hashes(b, k)
    lo = np.searchsorted(a.sorted, hb, side="left")
    count = np.searchsorted(a.sorted, hb, side="right") - lo  # how often a holds each gram of b
    shared = np.flatnonzero(count)
    starts_a = np.zeros(max(a.n - k + 1, 0), dtype=bool)
    starts_b = np.zeros(len(hb), dtype=bool)
    if shared.size:
        # Every occurrence of a value is in ``shared`` or none is, so ranks among equal values
        # are those over all of b's grams.
        sub = hb[shared]
        order = np.argsort(sub, kind="stable")
        ranked = sub[order]
        rank = np.empty(sub.size, dtype=np.int64)
        rank[order] = np.arange(sub.size) - np.searchsorted(ranked, ranked, side="left")
        # b's side: each gram among as many first occurrences of its value as a holds.
        starts_b[shared] = rank < count[shared]
        # a's side: of each gram value b holds c times, the first c occurrences in a.
        first = np.concatenate(([True], ranked[1:] != ranked[:-1]))
        at = order[first]  # one gram of b per distinct value, and how many times b holds it
        times = np.diff(np.append(np.flatnonzero(first), sub.size))
        take = np.minimum(times, count[shared[at]])
        begin = lo[shared[at]]
        total = int(take.sum())
        offsets = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(take) - take, take)
        starts_a[a.order[np.repeat(begin, take) + offsets]] = True
    return gram_cover(starts_a, a.n, k), gram_cover(starts_b, len(b), k)


def gram_cover(starts: np.ndarray, n: int, k: int) -> np.ndarray:
    """Units covered by the grams of ``k`` starting where ``starts`` is true: unit ``i`` when a gram
    starts in ``i - k + 1 .. i``."""
    seen = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(starts, out=seen[1 : starts.size + 1])
    seen[starts.size + 1 :] = seen[starts.size]
    return seen[1:] > seen[np.maximum(np.arange(1, n + 1) - k, 0)]


