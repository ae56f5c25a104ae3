"""Longest common subsequence and the measures built on it (and Zhou, Guo and Zhao's LCS method for similar microblog pages).

The LCS length is RapidFuzz's bit-parallel ``LCSseq`` (:func:`lcs_length`); property tests
hold it to the textbook dynamic programme (:func:`simdup_es.reference.lcs_length_reference`).

RapidFuzz is fastest on ``str``: a unit sequence (see :mod:`simdup_es.sentences`)
is turned into a string with one code point per distinct unit by
:class:`UnitCodec`, so Chinese characters and English words compare alike, and
units seen early (usually the frequent ones) get code points below 256, which
RapidFuzz handles with plain array lookups instead of a hash map (about 6x faster
on sentence-sized strings). :mod:`simdup_es.compare` goes further and numbers
units by frequency with numpy.

Everything here is pure: sequences and numbers in, numbers out.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

import numpy as np
from rapidfuzz.distance import LCSseq

from .errors import ConfigError

__all__ = [
    "DEFAULT_TRIM_SLOPE",
    "DEFAULT_TRIM_WINDOW",
    "UnitCodec",
    "alignment_masks",
    "containment",
    "lcs_length",
    "resemblance",
    "trusted_span",
]

DEFAULT_TRIM_WINDOW = 16
DEFAULT_TRIM_SLOPE = 0.5

_SURROGATES = range(0xD800, 0xE000)


class UnitCodec(dict):  # type: ignore[type-arg]
    """Maps units to single code points, one table per comparison.

    Code points are handed out in order of first appearance, skipping the
    surrogate range. Frequent units (的, 是, the, of) tend to appear early, so they
    land below 256 where RapidFuzz is fastest. Equal units get equal code points,
    so the LCS of two encoded strings is the LCS of the unit sequences.
    """

    __slots__ = ()

    def __missing__(self, unit: Hashable) -> str:
        n = len(self)
        if n >= _SURROGATES.start:
            n += len(_SURROGATES)
        if n > 0x10FFFF:
            raise ConfigError("more than 1.1 million distinct units in one comparison")
        code = self[unit] = chr(n)
        return code

    def encode(self, seq: Iterable[Hashable]) -> str:
        """One code point per unit of ``seq``."""
        # map() over __getitem__ runs in C; only new units reach Python (__missing__).
        # About 3x faster than a loop with dict.get.
        return "".join(map(self.__getitem__, seq))


def lcs_length(a: Sequence[Hashable] | str, b: Sequence[Hashable] | str, *, score_cutoff: int | None = None) -> int:
    """Length of the longest common subsequence of ``a`` and ``b`` (RapidFuzz).

    ``a`` and ``b`` are strings or sequences of hashable units. With
    ``score_cutoff``, results below it come back as 0 (and are cheaper).
    """
    return int(LCSseq.similarity(a, b, score_cutoff=score_cutoff))


def resemblance(lcs: int, len_a: int, len_b: int) -> float:
    """``R(A, B) = |LCS| / (|A| + |B| - |LCS|)``, in [0, 1].

    Symmetric; 1 only for equal sequences. 0 when both are empty.
    """
    if len_a < 0 or len_b < 0 or lcs < 0 or lcs > min(len_a, len_b):
        raise ConfigError(f"LCS length {lcs} is impossible for lengths {len_a} and {len_b}")
    union = len_a + len_b - lcs
    return lcs / union if union else 0.0


def containment(lcs: int, len_contained: int) -> float:
    """``C(A, B) = |LCS| / |B|``: how much of B is found, in order, in A.

    ``len_contained`` is ``|B|``. Near 1 when B is a short text copied inside a
    long A, however long A is. 0 when B is empty.
    """
    if lcs < 0 or lcs > len_contained:
        raise ConfigError(f"LCS length {lcs} is not within 0..{len_contained}")
    return lcs / len_contained if len_contained else 0.0


def alignment_masks(a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
    """Which positions of ``a`` and ``b`` one longest common subsequence uses.

    Returns two boolean arrays of ``len(a)`` and ``len(b)``. Memory is about
    ``len(a) * len(b) / 8`` bytes while RapidFuzz builds the alignment, so callers
    bound the lengths (see :mod:`simdup_es.compare`).
    """
    mask_a = np.zeros(len(a), dtype=bool)
    mask_b = np.zeros(len(b), dtype=bool)
    for op in LCSseq.opcodes(a, b):
        if op.tag == "equal":
            mask_a[op.src_start : op.src_end] = True
            mask_b[op.dest_start : op.dest_end] = True
    return mask_a, mask_b


def trusted_span(
    matched: Sequence[float] | np.ndarray,
    *,
    window: int = DEFAULT_TRIM_WINDOW,
    slope: float = DEFAULT_TRIM_SLOPE,
) -> tuple[int, int]:
    """The trusted, central part of a text's LCS: ``(start, end)`` in units.

    Zhou, Guo and Zhao, "A novel method for detecting similar microblog pages
    based on longest common subsequence", observe that boilerplate (ads, headers, signatures) sits at
    the head and tail of a page while the shared text is continuous and central.
    It cuts the text into blocks, takes a base region of heavy blocks, and widens
    it left and right for as long as the *slope* of the LCS (matched units per unit
    of text) stays above a threshold. Our reading of that, made exact:

    1. ``matched[k]`` is 1 where unit ``k`` is part of the LCS (fractions are
       allowed, e.g. a sentence's share of matched units);
    2. it is smoothed by a moving average over ``window`` units (16 by default),
       so single chance matches inside boilerplate and single edits inside the
       copied text do not cut the span;
    3. the span is the stretch that maximises the sum of ``smoothed - slope``:
       every unit inside pulls its weight above the slope threshold on balance,
       and no extension at either end would (ties go to the longer span).

    Two unrelated texts still share some 10–30 % of their units by chance (的,
    是, the, of), while copied text is matched almost completely, so the default
    ``slope`` of 0.5 separates them. When nothing rises above the threshold the
    span is empty: ``(0, 0)``.

    Parameters
    ----------
    matched:
        Per-unit match weights in [0, 1].
    window:
        Smoothing window in units (>= 1).
    slope:
        Threshold in (0, 1).
    """
    if window < 1:
        raise ConfigError(f"window must be at least 1, got {window}")
    if not 0.0 < slope < 1.0:
        raise ConfigError(f"slope must be between 0 and 1 (exclusive), got {slope}")
    x = np.asarray(matched, dtype=np.float64)
    n = x.size
    if n == 0:
        return (0, 0)
    if window > 1:
        # Centred moving average, shrinking at the ends so edge units are not
        # diluted by imaginary zeros beyond the text.
        csum = np.concatenate(([0.0], np.cumsum(x)))
        half = window // 2
        idx = np.arange(n)
        lo = np.maximum(idx - half, 0)
        hi = np.minimum(idx - half + window, n)
        x = (csum[hi] - csum[lo]) / (hi - lo)
    gain = np.concatenate(([0.0], np.cumsum(x - slope)))
    # Best span [i, j): maximise gain[j] - gain[i] with i < j. The running minimum
    # of the prefix gives the best start for every end.
    run_min = np.minimum.accumulate(gain[:-1])
    value = gain[1:] - run_min
    best = value.max()
    if best <= 1e-9:
        return (0, 0)
    tol = 1e-9 * max(1.0, abs(best))
    end = int(np.flatnonzero(value >= best - tol)[-1]) + 1
    start = int(np.flatnonzero(gain[:end] <= run_min[end - 1] + tol)[0])
    return (start, end)
