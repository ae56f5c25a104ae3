"""The evaluation's oracle: is a hit between two texts a copy, knowing what the stored corpus holds in common?

A hit is right when labelled; or when at least 20 % of the smaller side's 8-character
shingles are in the other; or when the two texts share a run of at least 30 characters
whose every 8-shingle is held by at most ``max(10, 1 % of the corpus)`` stored documents
(the corpus: every stored document of the run). Otherwise it is wrong. Texts are compared
unified (:func:`simdup_es.text.unify`: NFKC, Traditional to Simplified, case-folded) with
their white space removed.

Text that more documents hold is *common* (a footer, a navigation line, a template
sentence, a standard clause): sharing it makes no copy, however long the shared run. The
thresholds follow MOSS's ``-m`` (a passage in more than 10 programs is ignored) and scale
with the store.

Shingles are hashed to 64 bits (eight rounds of a SplitMix64 step over the code points: not
linear, so two different shingles collide only by chance, about once in 2**64). Document
frequencies are counted once per run over the stored corpus (:class:`ShingleIndex`); a
verdict then costs two sorted lookups and, for a run long enough, a substring check that
makes it exact. :func:`verdict_reference` is the slow, obviously correct twin on Python sets of
strings.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

SHINGLE = 8
SHARE = 0.2  # of the smaller side's shingles
RUN = 30  # characters of a shared run of rare text
SENTENCE = 13  # characters: a shorter shared run of rare text is no copied sentence (CNKI's 13)
COMMON_MIN = 10  # documents: a shingle is common above max(COMMON_MIN, COMMON_SHARE * corpus)
COMMON_SHARE = 0.01

_SPACE = re.compile(r"\s+")
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def squeeze(unified: str) -> str:
    """A unified text without white space: the oracle's characters."""
    return _SPACE.sub("", unified)


def _mix(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> np.uint64(30))
    h = h * _M1
    h = h ^ (h >> np.uint64(27))
    h = h * _M2
    return h ^ (h >> np.uint64(31))


def shingle_hashes(chars: str, n: int = SHINGLE) -> np.ndarray:
    """The 64-bit hash of each ``n``-character shingle of ``chars``, in order (one of the whole text when shorter)."""
    if not chars:
        return np.zeros(0, dtype=np.uint64)
    cp = np.frombuffer(chars.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    if cp.size < n:  # the whole text, marked by its length
        h = np.full(1, np.uint64(cp.size), dtype=np.uint64)
        for c in cp:
            h = _mix((h + _GOLDEN) ^ c)
        return h
    m = cp.size - n + 1
    h = np.full(m, np.uint64(n), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(n):
            h = _mix((h + _GOLDEN) ^ cp[j : j + m])
    return h


def member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Whether each of ``values`` is in ``sorted_set`` (sorted, distinct): a binary search each."""
    if not sorted_set.size:
        return np.zeros(values.size, dtype=bool)
    at = np.minimum(np.searchsorted(sorted_set, values), sorted_set.size - 1)
    return sorted_set[at] == values


@dataclass(frozen=True)
class Text:
    """A text as the oracle reads it: its characters and the hash of each shingle, in order and distinct."""

    chars: str
    hashes: np.ndarray
    distinct: np.ndarray

    @classmethod
    def of(cls, unified: str) -> Text:
        chars = squeeze(unified)
        hashes = shingle_hashes(chars)
        return cls(chars, hashes, np.unique(hashes))


class ShingleIndex:
    """How many stored documents hold each shingle, counted once over the corpus."""

    def __init__(self, texts: Iterable[Text]) -> None:
        parts = [t.distinct for t in texts]
        self.documents = len(parts)
        allh = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
        self.keys, counts = np.unique(allh, return_counts=True)
        self.counts = counts.astype(np.int64)
        self.common = max(COMMON_MIN, int(COMMON_SHARE * self.documents))
        self.common_keys = self.keys[self.counts > self.common]  # few: looked up for every verdict

    def frequency(self, hashes: np.ndarray) -> np.ndarray:
        """Stored documents holding each shingle (0 for one no stored document holds)."""
        if not self.keys.size:
            return np.zeros(hashes.size, dtype=np.int64)
        order = np.argsort(hashes)  # sorted needles: a lookup in a table of millions stays in cache
        at = np.minimum(np.searchsorted(self.keys, hashes[order]), self.keys.size - 1)
        out = np.empty(hashes.size, dtype=np.int64)
        out[order] = np.where(self.keys[at] == hashes[order], self.counts[at], 0)
        return out

    def is_common(self, hashes: np.ndarray) -> np.ndarray:
        """Whether more than ``common`` stored documents hold each shingle."""
        return member(hashes, self.common_keys)


def shared_share(a: Text, b: Text) -> float:
    """Share of the smaller side's distinct shingles found in the other."""
    small, big = (a, b) if a.distinct.size <= b.distinct.size else (b, a)
    if not small.distinct.size:
        return 0.0
    return int(member(small.distinct, big.distinct).sum()) / small.distinct.size


def true_runs(flags: np.ndarray, at_least: int) -> list[tuple[int, int]]:
    """(start, length) of each run of True in ``flags`` at least ``at_least`` long."""
    if not flags.size:
        return []
    edges = np.diff(np.concatenate(([0], flags.astype(np.int8), [0])))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return [(int(s), int(e - s)) for s, e in zip(starts, stops, strict=True) if e - s >= at_least]


def rare_run(a: Text, b: Text, index: ShingleIndex, run: int = RUN) -> bool:
    """Whether ``a`` and ``b`` share a run of at least ``run`` characters whose every shingle is held by at
    most ``index.common`` stored documents."""
    if len(a.chars) < run or len(b.chars) < run:
        return False
    rare_shared = member(a.hashes, b.distinct) & ~index.is_common(a.hashes)
    need = run - SHINGLE + 1  # shingles of a run of `run` characters
    for start, length in true_runs(rare_shared, need):
        # every shingle of the window is in b, but perhaps not in one place: the window itself must be
        if any(a.chars[s : s + run] in b.chars for s in range(start, start + length - need + 1)):
            return True
    return False


def shares_common(a: Text, b: Text, index: ShingleIndex) -> bool:
    """Whether the two texts share a shingle that more than ``index.common`` stored documents hold."""
    shared = a.distinct[member(a.distinct, b.distinct)]
    return bool(index.is_common(shared).any())


def rare_chars(a: Text, b: Text, index: ShingleIndex) -> int:
    """Characters of the longest stretch of ``a`` whose every shingle is rare and in ``b`` (not checked to be
    in one place in ``b``: a bound of the longest shared run of rare text)."""
    runs = true_runs(member(a.hashes, b.distinct) & ~index.is_common(a.hashes), 1)
    return max(n for _, n in runs) + SHINGLE - 1 if runs else 0


@dataclass(frozen=True)
class Verdict:
    """Why the oracle takes a hit (``share`` or ``rare run``) or not (``None``), the shared share, whether the
    two texts share common text, and (for a hit it rejects) the characters of their longest stretch of shared
    rare text (:func:`rare_chars`; 0 otherwise)."""

    reason: str | None
    share: float
    common: bool
    rare: int = 0

    @property
    def common_only(self) -> bool:
        """A wrong hit between texts that share common text and no rare sentence (under ``SENTENCE`` characters)."""
        return self.reason is None and self.common and self.rare < SENTENCE


def verdict(a: Text, b: Text, index: ShingleIndex) -> Verdict:
    """The oracle on an unlabelled hit."""
    share = shared_share(a, b)
    reason = "share" if share >= SHARE else "rare run" if rare_run(a, b, index) else None
    return Verdict(reason, share, shares_common(a, b, index), 0 if reason else rare_chars(a, b, index))


# ---------------------------------------------------------------- the reference


def verdict_reference(a: str, b: str, corpus: Mapping[str, str]) -> str | None:
    """:func:`verdict`'s reason on squeezed texts, with sets of shingle strings over ``corpus`` (squeezed texts)."""

    def grams(s: str) -> set[str]:
        return {s[i : i + SHINGLE] for i in range(len(s) - SHINGLE + 1)} if len(s) >= SHINGLE else ({s} if s else set())

    ga, gb = grams(a), grams(b)
    small, big = (ga, gb) if len(ga) <= len(gb) else (gb, ga)
    if small and len(small & big) / len(small) >= SHARE:
        return "share"
    df: Counter[str] = Counter(g for text in corpus.values() for g in grams(text))
    common = max(COMMON_MIN, int(COMMON_SHARE * len(corpus)))
    for i in range(len(a) - RUN + 1):
        window = a[i : i + RUN]
        if window in b and all(df[g] <= common for g in grams(window)):
            return "rare run"
    return None
