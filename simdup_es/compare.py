"""The comparison matrix: which sentences of two texts were copied.

:func:`compare` is a pure function from two unified texts and parameters to a
:class:`Comparison`. It does no I/O except, when asked for synonyms without a
thesaurus, loading the Cilin lexicon once per process (see
:func:`simdup_es.thesaurus.cilin_thesaurus`).

The method (Lv, Duan, Wu and He, "Similarity Retrieval Algorithm based on Multilevel Fingerprint Comparison Matrix")
------------------------------------------
Both texts are split into sentences (:func:`simdup_es.sentences.split_sentences`),
lengths counted in units (CJK characters, Latin words). For sentences ``d_i`` of
``a`` and ``d'_j`` of ``b``::

    p_ij = min(LCS/Num(d_i), LCS/Num(d'_j)) = LCS / max(Num(d_i), Num(d'_j))

A pair with ``p_ij >= similar_weight`` is a candidate (``Q_ij = 1``); with
``p_ij >= right_weight`` it is similar outright (rule ``"lcs"``). A candidate below
``right_weight`` goes to the word-level check (rule ``"synonyms"``)::

    w_ij = min((rightWord + similarWord_i) / Num_words(d_i),
               (rightWord + similarWord_j) / Num_words(d'_j))

and is similar when ``w_ij >= right_weight``. With the words ``W_i`` and ``W_j``
that ``segment`` returns for the two sentences, as multisets:

- ``Num_words(d)`` is the number of words (with repeats);
- ``rightWord`` is the size of the multiset intersection ``W_i ∩ W_j``: a word
  occurring twice in one sentence and once in the other counts once;
- ``similarWord_i`` counts the words of ``W_i`` left without an exact partner
  (``W_i - W_j``, with multiplicity) that are synonyms (share a thesaurus group)
  of at least one word of ``W_j`` likewise left over (``W_j - W_i``), and
  ``similarWord_j`` the other way round. Words already matched exactly are not
  offered again as synonym partners, so one word never earns credit twice.
  Without synonyms (``use_synonyms=False``) both are 0 and ``w_ij`` is the
  exact word overlap.

Document similarity of ``a`` against ``b`` is the number of units in ``a``'s
sentences marked similar (to any sentence of ``b``) divided by the units of
``a``; and the other way round for ``b``. It is asymmetric: a short text copied
whole into a long one scores 1 against it, the long one scores little.

Whole-text measures: ``LCS`` is over the unit sequences of the two
texts (sentence breaks ignored); resemblance ``R = LCS / (|a| + |b| - LCS)``,
containment of ``a`` in ``b`` = ``LCS / |a|`` and of ``b`` in ``a`` = ``LCS / |b|``
(Zhou et al.'s ``C(A, B) = LCS / |B|``). Bit-parallel LCS costs ``|a| * |b| / 64`` word
operations, about 0.1 s at 45,000 units each. Above :data:`EXACT_LCS_MAX_CELLS`
(``|a| * |b|``) the LCS is instead the best chain of sentence pairs in order
(a dynamic programme over the matrix, summing the sentence LCS of the candidate
pairs): a common subsequence, so a lower bound that counts only copied
sentences, not the 10–30 % of units unrelated texts share by chance.
``Comparison.lcs_exact`` says which one was used.

Trimming boilerplate (Zhou, Guo and Zhao's LCS method for similar microblog pages, optional): one LCS alignment of the whole texts
marks the units it uses; :func:`simdup_es.lcs.trusted_span` finds the dense
central stretch of each text; the sentences with at least half their units in it
form the *core*. Pairs, similarities and R/C are then computed over the cores
only. This helps when copies carry different headers, ads or signatures; it also
means the rest of a long text around a copied passage counts as boilerplate, so
leave it off to ask "how much of b is copied from a". Beyond
:data:`ALIGNMENT_MAX_CELLS` the per-unit marks come from the matrix instead
(each sentence weighted by its best ``p_ij``).

Speed
-----
The candidate pairs come from :mod:`simdup_es.matrix`: every unit one code point, ranked by
frequency, and the matrix scored in bulk by RapidFuzz (its module docstring has the measurements).

The word-level check segments each sentence it needs once per call. The default
segmenter, :func:`simdup_es.tokens.dictionary_words`, is jieba's dictionary
without the HMM run by jieba-rs: about 10 µs per sentence of 40 characters,
against 96 µs in Python jieba (127 µs with its HMM). A 50 x 50 pair with 7
word-level checks takes about 1.4 ms, 0.2 ms of it segmenting (see
``benchmarks/bench_compare.py``). Where one text is compared with many, pass a
:class:`CachedSegmenter` so its sentences are segmented once in all.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache, lru_cache, partial
from itertools import chain
from typing import Any, Literal

import numpy as np
from rapidfuzz.distance import LCSseq

from . import native
from . import sentences as sentences_module
from .config import require_ints
from .errors import ConfigError
from .lcs import (
    DEFAULT_TRIM_SLOPE,
    DEFAULT_TRIM_WINDOW,
    alignment_masks,
    containment,
    resemblance,
    trusted_span,
)
from .matrix import (
    GROUPED_MIN_PAIRS,
    Coded,
    Encoded,
    Pairs,
    RawCodes,
    candidate_pairs,
    codes_text,
    folded_sentences,
    rank_first,
    rank_second_folded,
    raw_codes,
)
from .sentences import (
    DEFAULT_MIN_UNITS,
    WORD_BASE,
    Scan,
    Sentence,
    SentenceView,
    WordCodes,
    split_sentences,
    split_sentences_points,
    unwrap_lines,
)
from .thesaurus import Thesaurus, cilin_thesaurus
from .tokens import dictionary_words
from .winnow import GramIndex, shared_runs_with

__all__ = [
    "ALIGNMENT_MAX_CELLS",
    "Bound",
    "CachedSegmenter",
    "EXACT_LCS_MAX_CELLS",
    "CompareParams",
    "Limits",
    "CompareStats",
    "Comparison",
    "PreparedText",
    "Screen",
    "SentencePair",
    "SentencePairs",
    "compare",
    "compare_screened",
    "prepare",
    "word_score",
]

log = logging.getLogger(__name__)

Rule = Literal["lcs", "synonyms"]
Segmenter = Callable[[str], Sequence[str]]
Scans = Callable[[tuple[str, int]], Scan]
"""``(text, min_units)`` to its :func:`simdup_es.sentences.scan`, from a cache or not."""

EXACT_LCS_MAX_CELLS = 2_000_000_000
ALIGNMENT_MAX_CELLS = 400_000_000
# Above this many cells (|a| * |b|) the whole-text LCS first drops the units the other text lacks.
_FILTER_MIN_CELLS = 10_000_000
_NATIVE_LCS_FROM = 1 << 17
"""From this many units of the longer text, the compiled core (where it computes) finds the whole-text LCS."""


@dataclass(frozen=True)
class Limits:
    """The sizes from which :func:`compare` takes its paths for long texts; a test lowers them to 0 to take a
    path at any size. Each gives the same comparison, but past ``exact_lcs_cells`` the whole-text LCS.

    Attributes
    ----------
    exact_lcs_cells:
        Above this many cells (``|a| * |b|`` units) the whole-text LCS is the best chain of sentence pairs,
        a lower bound (``Comparison.lcs_exact`` false): :data:`EXACT_LCS_MAX_CELLS`.
    alignment_cells:
        Above this many, the trimmed cores are found from the matrix rather than one alignment of the
        whole texts: :data:`ALIGNMENT_MAX_CELLS`.
    grouped_pairs:
        From this many sentence pairs, the matrix leaves out the sentences that cannot reach
        ``similar_weight`` and is scored in groups of similar length (:func:`simdup_es.matrix.candidate_pairs`).
    """

    exact_lcs_cells: int = EXACT_LCS_MAX_CELLS
    alignment_cells: int = ALIGNMENT_MAX_CELLS
    grouped_pairs: int = GROUPED_MIN_PAIRS


@dataclass(frozen=True)
class CompareParams:
    """Parameters of the comparison matrix.

    Attributes
    ----------
    similar_weight:
        ``similarWeight``: pairs with ``p_ij`` at or above it are candidates.
    right_weight:
        ``rightWeight``: candidates with ``p_ij`` at or above it are similar
        outright; the others must reach it with ``w_ij``. Greater than
        ``similar_weight``.
    min_units:
        Sentences with fewer units are merged into a neighbour
        (:func:`simdup_es.sentences.split_sentences`).
    use_synonyms:
        Count thesaurus synonyms in the word-level check.
    trim_boilerplate:
        Score only the trusted central part of each text (Zhou et al.).
    trim_window, trim_slope:
        Smoothing window (units) and slope threshold of the trusted part
        (:func:`simdup_es.lcs.trusted_span`).
    run_units:
        Units of both texts inside a common run of at least this many units are
        marked copied (``Comparison.runs_a``/``runs_b``), within sentences as well as
        across them: a sentence that lost a clause or gained a prefix falls below
        ``right_weight`` as a whole, but its copied run is still seen. Eight CJK
        characters are rarely shared by chance outside set phrases.
    unwrap:
        Read a hard-wrapped text (PDF, mail, licence files) as its sentences: a line
        break after a full line that does not end a sentence does not end one
        (:func:`simdup_es.sentences.unwrap_lines`; offsets are unchanged). Off by
        default: on the evaluation (docs/evaluation.md) it cost licence texts, which
        are re-wrapped there, recall and precision (joined lines make long sentences
        that one changed sentence spoils as a whole).
    """

    similar_weight: float = 0.6
    right_weight: float = 0.8
    min_units: int = DEFAULT_MIN_UNITS
    use_synonyms: bool = True
    trim_boilerplate: bool = False
    trim_window: int = DEFAULT_TRIM_WINDOW
    trim_slope: float = DEFAULT_TRIM_SLOPE
    run_units: int = 8
    unwrap: bool = False

    def __post_init__(self) -> None:
        for name in ("similar_weight", "right_weight", "trim_slope"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{name} must be a number, got {value!r}")
        if not 0.0 < self.similar_weight <= 1.0:
            raise ConfigError(f"similar_weight must be in (0, 1], got {self.similar_weight}")
        if not self.similar_weight < self.right_weight <= 1.0:
            raise ConfigError(
                f"right_weight must be greater than similar_weight ({self.similar_weight}) and at most 1, "
                f"got {self.right_weight}"
            )
        require_ints(self, ("min_units", "trim_window", "run_units"))
        if not 0.0 < self.trim_slope < 1.0:
            raise ConfigError(f"trim_slope must be between 0 and 1 (exclusive), got {self.trim_slope}")
        for name in ("use_synonyms", "trim_boilerplate", "unwrap"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be true or false, got {getattr(self, name)!r}")


@dataclass(frozen=True, slots=True)
class SentencePair:
    """Sentence ``i`` of ``a`` and sentence ``j`` of ``b``, marked similar.

    Offsets are character offsets into the texts given to :func:`compare`.
    ``w`` is ``None`` when ``p`` alone decided (rule ``"lcs"``).
    """

    i: int
    j: int
    a_start: int
    a_end: int
    b_start: int
    b_end: int
    lcs: int
    p: float
    w: float | None
    rule: Rule


class SentencePairs(Sequence[SentencePair]):
    """The pairs a comparison marked similar, ordered by ``(i, j)``: a tuple of :class:`SentencePair`, each made
    when first read. A search reads only which sentences are marked (:attr:`i`, :attr:`j`): a 2 kB copy marks
    about 50 pairs, and their objects took a third of its word-level check. Equal to the tuple of its pairs.

    ``i``, ``j``, ``lcs`` (int64), ``p`` and ``w`` (float64; ``w`` is read only where ``by_lcs`` is false) are
    the pairs' columns, ``by_lcs`` whether ``p`` alone decided (rule ``"lcs"``); ``sentences_a`` and
    ``sentences_b`` the sentences they index.
    """

    __slots__ = ("_made", "by_lcs", "i", "j", "lcs", "p", "sentences_a", "sentences_b", "w")

    def __init__(self, i: np.ndarray, j: np.ndarray, lcs: np.ndarray, p: np.ndarray, w: np.ndarray,
                 by_lcs: np.ndarray, sentences_a: Sequence[Sentence], sentences_b: Sequence[Sentence]) -> None:
        self.i, self.j, self.lcs, self.p, self.w, self.by_lcs = i, j, lcs, p, w, by_lcs
        self.sentences_a, self.sentences_b = sentences_a, sentences_b
        self._made: tuple[SentencePair, ...] | None = None

    def _pairs(self) -> tuple[SentencePair, ...]:
        if self._made is None:
            self._made = tuple(self._rows(0, len(self)))
        return self._made

    def _rows(self, first: int, stop: int) -> Iterator[SentencePair]:
        """Pairs ``first`` to ``stop`` made (not kept)."""
        i, j = self.i[first:stop], self.j[first:stop]
        columns = (i.tolist(), j.tolist(), *_bounds(self.sentences_a, i), *_bounds(self.sentences_b, j),
                   self.lcs[first:stop].tolist(), self.p[first:stop].tolist(), self.w[first:stop].tolist(),
                   self.by_lcs[first:stop].tolist())
        for i_, j_, a_start, a_end, b_start, b_end, lcs, p, w, by_lcs in zip(*columns, strict=True):
            yield (SentencePair(i_, j_, a_start, a_end, b_start, b_end, lcs, p, None, "lcs") if by_lcs
                   else SentencePair(i_, j_, a_start, a_end, b_start, b_end, lcs, p, w, "synonyms"))

    def __len__(self) -> int:
        return int(self.i.size)

    def __getitem__(self, k):  # type: ignore[no-untyped-def,override]
        return self._pairs()[k]

    def __iter__(self) -> Iterator[SentencePair]:
        if self._made is not None:
            return iter(self._made)
        # Read through once (a long comparison written out as JSON): made a block at a time, none kept (a block's
        # columns as lists of numbers: some 350 bytes a pair).
        return (pair for first in range(0, len(self), 1024) for pair in self._rows(first, first + 1024))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SentencePairs):
            other = other._pairs()
        return self._pairs() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._pairs())

    def __repr__(self) -> str:
        return repr(self._pairs())


def _bounds(sentences: Sequence[Sentence], rows: np.ndarray) -> tuple[list[int], list[int]]:
    """The start and end of sentences ``rows``: read from the table of a :class:`SentenceView`, whose sentences are
    made when read."""
    if isinstance(sentences, SentenceView):
        picked = sentences.columns[rows]
        return picked[:, 0].tolist(), picked[:, 1].tolist()
    made = [sentences[k] for k in rows.tolist()]
    return [s.start for s in made], [s.end for s in made]


@dataclass(frozen=True, slots=True)
class CompareStats:
    """How much work the matrix took: for tuning and benchmarks."""

    pairs: int  # n * m sentence pairs in scope
    candidates: int  # pairs with p >= similar_weight (Q_ij = 1)
    word_checks: int  # candidates that needed the word-level check


def sentence_dict(s: Sentence) -> dict[str, Any]:
    """A sentence of :meth:`Comparison.to_dict`."""
    return {"index": s.index, "start": s.start, "end": s.end, "units": s.n_units, "text": s.text}


def pair_dict(p: SentencePair) -> dict[str, Any]:
    """A pair of :meth:`Comparison.to_dict` (its floats rounded to 6 digits)."""
    return {"i": p.i, "j": p.j, "a": [p.a_start, p.a_end], "b": [p.b_start, p.b_end], "lcs": p.lcs,
            "p": round(p.p, 6), "w": None if p.w is None else round(p.w, 6), "rule": p.rule}


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare`.

    Attributes
    ----------
    sentences_a, sentences_b:
        All sentences of both texts, with offsets: a tuple, or a
        :class:`~simdup_es.sentences.SentenceView` equal to it (a long text's, and ``b``'s as a search's scan
        of a stored text holds them: sentences made when read).
    pairs:
        Every pair marked similar, ordered by ``(i, j)``. A sentence may be in
        several pairs. A :class:`SentencePairs` (equal to the tuple of its pairs) or a tuple.
    similarity_a, similarity_b:
        Document similarity: units of ``a``'s marked sentences / units of
        ``a``, and the same for ``b``. Within the cores when trimming.
    units_a, units_b:
        Units counted (``|a|``, ``|b|``): the whole texts, or the cores.
    lcs, lcs_exact:
        Whole-text LCS in units, and whether it is exact (see the module docstring).
    resemblance, containment_a_in_b, containment_b_in_a:
        ``LCS / (|a| + |b| - LCS)``, ``LCS / |a|`` and ``LCS / |b|``.
    core_a, core_b:
        With ``trim_boilerplate``: the kept sentences as an index range
        ``(first, stop)`` (empty when nothing was trusted). ``None`` otherwise.
    runs_a, runs_b:
        One flag per unit of each whole text (units in text order): whether it lies in
        a run of at least ``params.run_units`` units the other text has too.
    """

    sentences_a: tuple[Sentence, ...] | SentenceView
    sentences_b: tuple[Sentence, ...] | SentenceView
    pairs: Sequence[SentencePair]
    similarity_a: float
    similarity_b: float
    units_a: int
    units_b: int
    lcs: int
    lcs_exact: bool
    resemblance: float
    containment_a_in_b: float
    containment_b_in_a: float
    core_a: tuple[int, int] | None
    core_b: tuple[int, int] | None
    params: CompareParams
    stats: CompareStats = field(default_factory=lambda: CompareStats(0, 0, 0))
    runs_a: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool), compare=False, repr=False)
    runs_b: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool), compare=False, repr=False)
    # Units per sentence, when known (a 5 MB query has 100,000 sentences to count otherwise).
    lengths_a: np.ndarray | None = field(default=None, compare=False, repr=False)
    lengths_b: np.ndarray | None = field(default=None, compare=False, repr=False)

    def unit_counts(self, side: Literal["a", "b"]) -> np.ndarray:
        """Units of each sentence of a side (int64)."""
        known = self.lengths_a if side == "a" else self.lengths_b
        if known is not None:
            return known
        sentences = self.sentences_a if side == "a" else self.sentences_b
        return np.fromiter((s.n_units for s in sentences), dtype=np.int64, count=len(sentences))

    @property
    def marked_a(self) -> frozenset[int]:
        """Indices of ``a``'s sentences marked similar."""
        if isinstance(self.pairs, SentencePairs):  # no pair object made
            return frozenset(self.pairs.i.tolist())
        return frozenset(p.i for p in self.pairs)

    @property
    def marked_b(self) -> frozenset[int]:
        """Indices of ``b``'s sentences marked similar."""
        if isinstance(self.pairs, SentencePairs):
            return frozenset(self.pairs.j.tolist())
        return frozenset(p.j for p in self.pairs)

    def core_offsets(self, side: Literal["a", "b"]) -> tuple[int, int] | None:
        """Character offsets ``(start, end)`` of a side's core, ``None`` without trimming."""
        core = self.core_a if side == "a" else self.core_b
        sentences = self.sentences_a if side == "a" else self.sentences_b
        if core is None:
            return None
        first, stop = core
        if first >= stop:
            return (0, 0)
        return (sentences[first].start, sentences[stop - 1].end)

    def _core_dict(self, side: Literal["a", "b"]) -> dict[str, list[int]] | None:
        core = self.core_a if side == "a" else self.core_b
        if core is None:
            return None
        return {"sentences": list(core), "chars": list(self.core_offsets(side) or ())}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (floats rounded to 6 digits; sentence texts included)."""
        return {
            "scores": {
                "similarity_a": round(self.similarity_a, 6),
                "similarity_b": round(self.similarity_b, 6),
                "resemblance": round(self.resemblance, 6),
                "containment_a_in_b": round(self.containment_a_in_b, 6),
                "containment_b_in_a": round(self.containment_b_in_a, 6),
                "lcs": self.lcs,
                "lcs_exact": self.lcs_exact,
                "units_a": self.units_a,
                "units_b": self.units_b,
            },
            "pairs": [pair_dict(p) for p in self.pairs],
            "sentences_a": [sentence_dict(s) for s in self.sentences_a],
            "sentences_b": [sentence_dict(s) for s in self.sentences_b],
            "core_a": self._core_dict("a"),
            "core_b": self._core_dict("b"),
            "params": asdict(self.params),
            "stats": asdict(self.stats),
        }


# --------------------------------------------------------------------------- matrix
# ------------------------------------------------------------------- word level


def word_score(
    words_i: Mapping[str, int],
    words_j: Mapping[str, int],
    thesaurus: Thesaurus | None,
) -> float:
    """``w_ij`` of the comparison matrix from the word multisets of two sentences.

    ``words_i`` and ``words_j`` map each word to its (positive) count, e.g. a
    :class:`collections.Counter`. See the module docstring for ``rightWord`` and
    ``similarWord``. 0 when either sentence has no word.
    """
    n_i = sum(words_i.values())
    n_j = sum(words_j.values())
    if not n_i or not n_j:
        return 0.0
    # Plain dict work rather than Counter arithmetic (& and -), which builds
    # Counters in Python loops: this runs for every pair of the word-level check.
    right = sum(min(words_i[x], words_j[x]) for x in words_i.keys() & words_j.keys())
    similar_i = similar_j = 0
    if thesaurus is not None and right < min(n_i, n_j):
        get_i, get_j = words_i.get, words_j.get
        # The words left without an exact partner, with the counts left over.
        left_i = {x: c - get_j(x, 0) for x, c in words_i.items() if c > get_j(x, 0)}
        left_j = {x: c - get_i(x, 0) for x, c in words_j.items() if c > get_i(x, 0)}
        ids = thesaurus.group_ids
        ids_i = list(map(ids, left_i))
        ids_j = list(map(ids, left_j))
        groups_i = set(chain.from_iterable(ids_i))
        groups_j = set(chain.from_iterable(ids_j))
        if not groups_i.isdisjoint(groups_j):
            similar_i = sum(c for c, g in zip(left_i.values(), ids_i) if not groups_j.isdisjoint(g))
            similar_j = sum(c for c, g in zip(left_j.values(), ids_j) if not groups_i.isdisjoint(g))
    return min((right + similar_i) / n_i, (right + similar_j) / n_j)


class CachedSegmenter:
    """A segmenter that remembers the words of the last ``maxsize`` sentences.

    :func:`compare` segments each sentence it needs once per call; across calls
    it keeps nothing. Where one text is compared with many others (``simdup
    search`` compares the query with every candidate), wrap the segmenter once
    and pass the wrapper to every call: the query's sentences are then segmented
    once in all. Keyed by sentence text; results are returned as tuples, so a
    caller cannot change what is cached. Thread-safe (:func:`functools.lru_cache`).

    >>> seg = CachedSegmenter(str.split, maxsize=1000)
    >>> seg("a b a")
    ('a', 'b', 'a')
    """

    __slots__ = ("_cached", "_counts", "segment")

    def __init__(self, segment: Segmenter, maxsize: int = 4096) -> None:
        if isinstance(maxsize, bool) or not isinstance(maxsize, int) or maxsize < 1:
            raise ConfigError(f"maxsize must be a positive integer, got {maxsize!r}")
        self.segment = segment
        self._cached = lru_cache(maxsize=maxsize)(lambda text: tuple(segment(text)))
        self._counts = lru_cache(maxsize=maxsize)(lambda text: _word_counts(self, text))

    def counts(self, text: str) -> Counter[str]:
        """The words of ``text`` with their counts, blanks left out, as the word-level check reads
        them; cached like the words (the same object each time: read it, do not change it)."""
        got: Counter[str] = self._counts(text)
        return got

    def __call__(self, text: str) -> tuple[str, ...]:
        result: tuple[str, ...] = self._cached(text)
        return result

    def cache_info(self) -> Any:
        """Hits, misses and size, as :func:`functools.lru_cache` reports them."""
        return self._cached.cache_info()

    def counts_info(self) -> Any:
        """:meth:`cache_info` of :meth:`counts` (what :func:`compare` asks for)."""
        return self._counts.cache_info()

    def cache_clear(self) -> None:
        self._cached.cache_clear()
        self._counts.cache_clear()


def _word_counts(segment: Segmenter, text: str) -> Counter[str]:
    # str.strip is "" exactly for empty and whitespace-only tokens.
    return Counter(filter(str.strip, segment(text)))


# ------------------------------------------------------------------------ compare


def _whole_lcs(a: Coded, b: Coded, cand: Pairs, core_a: range, core_b: range, max_cells: int) -> tuple[int, bool]:
    """LCS of the concatenated units of the cores: exact up to ``max_cells`` (``|a| * |b|``), else the sentence-chain
    bound."""
    sa, sb = a.lengths[: core_a.start].sum(), b.lengths[: core_b.start].sum()
    codes_a = a.codes[sa : sa + a.lengths[core_a.start : core_a.stop].sum()]
    codes_b = b.codes[sb : sb + b.lengths[core_b.start : core_b.stop].sum()]
    if len(codes_a) * len(codes_b) > max_cells:
        return _chain_bound((cand.i, cand.j, cand.lcs), core_a, core_b), False
    if len(codes_a) * len(codes_b) < _FILTER_MIN_CELLS:
        text_a = a.whole if len(codes_a) == len(a.codes) else codes_text(codes_a)
        return int(LCSseq.similarity(text_a, codes_text(codes_b))), True
    # A unit the other text lacks is in no common subsequence: leave it out (the LCS is the
    # same, and bit-parallel LCS costs the product of the lengths).
    top = int(max(codes_a.max(initial=0), codes_b.max(initial=0))) + 1
    in_a, in_b = np.zeros(top, dtype=bool), np.zeros(top, dtype=bool)
    in_a[codes_a], in_b[codes_b] = True, True
    kept_a, kept_b = codes_a[in_b[codes_a]], codes_b[in_a[codes_b]]
    core = native.module()
    if core is not None and max(kept_a.size, kept_b.size) >= _NATIVE_LCS_FROM:
        # RapidFuzz's bit vectors cover the longer text: some 60 bytes a unit (90 MB for 1.5 million); the compiled
        # core's the shorter one. The same length.
        return int(core.lcs_length(np.ascontiguousarray(kept_a, dtype=np.uint32),
                                   np.ascontiguousarray(kept_b, dtype=np.uint32))), True
    return int(LCSseq.similarity(codes_text(kept_a), codes_text(kept_b))), True


def _chain_bound(cand: tuple[np.ndarray, np.ndarray, np.ndarray], core_a: range, core_b: range) -> int:
    """Heaviest chain of candidate pairs with strictly increasing i and j, by sentence LCS.

    Concatenating the pairs' common subsequences gives a common subsequence of the
    texts, so this is a lower bound of their LCS. Only the K candidates take part:
    rows in order, a Fenwick tree over j for "best chain ending left of j" gives
    O(K log m) time and O(m) memory, where a dense n x m table would not fit for
    the texts this is meant for.
    """
    ii, jj, lcs = cand
    inside = (ii >= core_a.start) & (ii < core_a.stop) & (jj >= core_b.start) & (jj < core_b.stop)
    ii, jj, lcs = ii[inside], jj[inside] - core_b.start, lcs[inside]
    size = len(core_b)
    tree = [0] * (size + 1)  # Fenwick tree of prefix maxima over j (1-based)
    order = np.lexsort((jj, ii))
    rows_i, rows_j, rows_w = ii[order].tolist(), jj[order].tolist(), lcs[order].tolist()
    best = 0
    k = 0
    while k < len(rows_i):
        row = rows_i[k]
        updates = []
        while k < len(rows_i) and rows_i[k] == row:
            j, w = rows_j[k], rows_w[k]
            prefix, x = 0, j  # best chain ending at a column < j, from earlier rows
            while x > 0:
                prefix = max(prefix, tree[x])
                x -= x & -x
            updates.append((j, prefix + w))
            k += 1
        # Insert after the whole row, so two pairs of one row never chain.
        for j, value in updates:
            best = max(best, value)
            x = j + 1
            while x <= size:
                if tree[x] < value:
                    tree[x] = value
                x += x & -x
    return best


def _core(weights: np.ndarray, sentences: Sequence[Sentence], params: CompareParams) -> range:
    """Sentence indices with at least half their units inside the trusted span."""
    lo, hi = trusted_span(weights, window=params.trim_window, slope=params.trim_slope)
    kept = []
    pos = 0
    for s in sentences:
        n = s.n_units
        overlap = min(pos + n, hi) - max(pos, lo)
        if 2 * overlap >= n:
            kept.append(s.index)
        pos += n
    return range(kept[0], kept[-1] + 1) if kept else range(0)


class PreparedText:
    """The query's side of :func:`compare`, worked out once (:func:`prepare`).

    A search compares one query with each of its candidates. Its sentences, their
    codes and the hashed, sorted grams of its shared runs do not depend on the
    other text, so they are computed here once and reused: for a 5 MB query this
    is most of each comparison's work. :func:`compare` prepares a text given as a string
    each time; pass a prepared one to reuse it (:func:`simdup_es.search.comparer` keeps its last two).
    Thread-safe: the lazily filled parts are the same whoever fills them.
    """

    __slots__ = ("_compiled", "_folded", "_grams", "coded", "min_units", "sentences", "table", "text", "unwrap", "values",
                 "words")

    def __init__(self, text: str, sentences: Sequence[Sentence], raw: list[str] | RawCodes, words: dict[str, str] | None,
                 min_units: int, unwrap: bool) -> None:
        self.text = text
        # A long text's sentences stay rows of a table (SentenceView), made when read: not 250 bytes each.
        self.sentences = sentences if isinstance(sentences, SentenceView) else tuple(sentences)
        self.words = words  # the word codes the text took; None: texts are coded pair by pair
        self.min_units = min_units
        self.unwrap = unwrap
        self.values, self.table, self.coded = rank_first(raw)
        self._folded: Sequence[str] | None = None
        self._grams: dict[int, GramIndex] = {}
        self._compiled: dict[int, Any] = {}

    def folded(self) -> Sequence[str]:
        if self._folded is None:
            self._folded = folded_sentences(self.coded)
        return self._folded

    def grams(self, k: int) -> GramIndex:
        got = self._grams.get(k)
        if got is None:
            got = self._grams[k] = GramIndex(self.coded.codes, k)
        return got

    def shared_runs(self, k: int, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:func:`simdup_es.winnow.shared_runs_with` of :meth:`grams` and ``b``'s codes, by the compiled core where
        it computes (:mod:`simdup_es.native`; the grams copied into it once)."""
        core = native.module()
        if core is None:
            return shared_runs_with(self.grams(k), b)
        compiled = self._compiled.get(k)
        if compiled is None:  # the grams made in it from the codes: no index of them in numpy (16 bytes a unit)
            index = self._grams.get(k)
            compiled = self._compiled[k] = (core.Grams(index.sorted, index.order, index.n, k) if index is not None
                                            else core.Grams.of_codes(np.ascontiguousarray(self.coded.codes, dtype=np.uint32), k))
        runs_a, runs_b = compiled.shared_runs(np.ascontiguousarray(b, dtype=np.uint32))
        return np.frombuffer(runs_a, dtype=bool), np.frombuffer(runs_b, dtype=bool)


def prepare(a: str, params: CompareParams = CompareParams(), *, scans: Scans | None = None) -> PreparedText:
    """``a`` ready to be compared with many texts (the same results as giving :func:`compare` the text);
    ``scans``: as :func:`compare` takes them."""
    min_units, unwrap = params.min_units, params.unwrap
    text = unwrap_lines(a) if unwrap else a  # same length: offsets into the text given stay right
    try:
        codes = WordCodes()
        sentences, points, lengths = split_sentences_points(text, codes, min_units=min_units, scans=scans or native.scan)
        return PreparedText(text, sentences, (points, lengths), dict(codes), min_units, unwrap)
    except OverflowError:
        sentences = split_sentences(text, min_units=min_units)
        return PreparedText(text, sentences, raw_codes([s.units for s in sentences], [])[0], None, min_units, unwrap)


def _candidate_points(text: str, words: Mapping[str, str], min_units: int, scans: Scans | None
                      ) -> tuple[list[Sentence] | SentenceView, np.ndarray, np.ndarray]:
    """:func:`simdup_es.sentences.split_sentences_points` of a candidate with the query's word codes
    (``WordCodes(words)``), without copying them for each candidate and numbering its new words one by one: each
    distinct word is looked up once, and those the query lacks are numbered in order of first appearance, as
    :class:`~simdup_es.sentences.WordCodes` numbers them. Past its code points, :class:`OverflowError` likewise. The
    sentences as the scan holds them: a view, which makes a sentence when read (and a short text's keeps it)."""
    sentences, unit_points, word_at, found, lengths = (scans or native.scan)((text, min_units))
    if found:
        distinct = list(dict.fromkeys(found))
        codes = list(map(words.get, distinct))
        new = codes.count(None)
        if len(words) + new > sentences_module._WORD_CODES:  # read when called, as WordCodes reads it
            raise OverflowError(f"more than {sentences_module._WORD_CODES} distinct words to code")
        fresh = iter(range(WORD_BASE + len(words), WORD_BASE + len(words) + new))
        points = np.array([next(fresh) if c is None else ord(c) for c in codes], dtype=np.uint32)
        at = {w: k for k, w in enumerate(distinct)}
        unit_points = unit_points.copy()
        unit_points[word_at] = points[np.fromiter(map(at.__getitem__, found), dtype=np.int64, count=len(found))]
    return (sentences if isinstance(sentences, SentenceView) else list(sentences)), unit_points[: int(lengths.sum())], \
        lengths


def _pair_up(query: PreparedText, b: str, scans: Scans | None
             ) -> tuple[PreparedText, Sequence[Sentence], Coded, Encoded]:
    """``b`` split and coded against the query; the query recoded when their words do not fit one code table."""
    try:
        if query.words is None:
            raise OverflowError("the query alone has more words than codes")
        sentences_b, points_b, lengths_b = _candidate_points(b, query.words, query.min_units, scans)
        raw_b: list[str] | RawCodes = (points_b, lengths_b)
    except OverflowError:  # more distinct words than private-use code points: number them pair by pair
        sentences_a = split_sentences(query.text, min_units=query.min_units)
        sentences_b = split_sentences(b, min_units=query.min_units)
        raw_a, raw_b = raw_codes([s.units for s in sentences_a], [s.units for s in sentences_b])
        query = PreparedText(query.text, sentences_a, raw_a, None, query.min_units, query.unwrap)
    coded_b, distinct, folded_b = rank_second_folded(query.values, query.table, raw_b)
    enc = Encoded(query.coded.sentences, coded_b.sentences, query.folded() if distinct > 256 else None, folded_b)
    return query, sentences_b, coded_b, enc


def compare(
    a: str | PreparedText,
    b: str,
    params: CompareParams = CompareParams(),  # frozen, so one shared default is safe
    *,
    segment: Segmenter | None = None,
    thesaurus: Thesaurus | None = None,
    workers: int | None = None,
    limits: Limits = Limits(),
    scans: Scans | None = None,
) -> Comparison:
    """Compare two unified texts sentence by sentence.

    Parameters
    ----------
    a, b:
        Unified texts (:func:`simdup_es.text.unify`); ``a`` is the query, or the
        query prepared with the same ``params`` (:func:`prepare`).
        Offsets in the result refer to them.
    params:
        Thresholds and options.
    segment:
        Word segmenter for the word-level check; ``None`` (default) is
        :func:`simdup_es.tokens.dictionary_words` (jieba's dictionary, no HMM,
        stop words dropped). It should drop punctuation and spaces; tokens that
        are only whitespace are dropped here too. Where one text is compared
        with many, wrap it in a :class:`CachedSegmenter`.
    thesaurus:
        Synonym groups for the word-level check. ``None`` with
        ``params.use_synonyms`` loads Cilin (once per process); ignored when
        ``use_synonyms`` is false.
    workers:
        Threads for the matrix: ``None`` (default) uses all cores only when there
        are at least :data:`simdup_es.matrix.PARALLEL_MIN_PAIRS` sentence pairs (below that,
        threads cost more than they save); ``1`` one core; ``-1`` all cores.
    limits:
        The sizes from which long texts take their own paths (:class:`Limits`).
    scans:
        The sentence scans of texts (:func:`simdup_es.sentences.scan`), from a cache that keeps those of
        texts compared again and again (:class:`simdup_es.caches.TextCaches`); ``None`` scans each text.

    Returns
    -------
    Comparison
        Texts without any unit give no sentences and all scores 0.

    Raises
    ------
    ConfigError
        ``a`` was prepared with another ``min_units`` or ``unwrap`` than ``params``.
    ThesaurusError
        Synonyms are on, no thesaurus was given and Cilin cannot be loaded.
    TooManyPairs
        Within :func:`simdup_es.matrix.bounded_pairs` (the server), the texts have more pairs of similar sentences
        than :data:`simdup_es.matrix.MAX_CANDIDATES`, or :data:`simdup_es.matrix.CANDIDATES_PER_SENTENCE` a
        sentence if more (texts of many repeated sentences).
    """
    got = _compare(a, b, params, None, segment=segment, thesaurus=thesaurus, workers=workers, limits=limits,
                   scans=scans)
    assert got is not None  # no screen, no refusal
    return got


class Bound:
    """What a comparison could mark copied at most, per unit of each side (in a sentence that may
    be marked, or in a shared run), and the units of each side's sentences (:func:`compare_screened`).

    ``copied_a`` may be given as a function, called on first use: the query's side is the long
    one, and a screen may decide on the candidate's side alone.
    """

    __slots__ = ("_copied_a", "copied_b", "lengths_a", "lengths_b")

    def __init__(self, copied_a: np.ndarray | Callable[[], np.ndarray], copied_b: np.ndarray, lengths_a: np.ndarray,
                 lengths_b: np.ndarray) -> None:
        self._copied_a = copied_a
        self.copied_b = copied_b
        self.lengths_a = lengths_a
        self.lengths_b = lengths_b

    @property
    def copied_a(self) -> np.ndarray:
        if callable(self._copied_a):
            self._copied_a = self._copied_a()
        return self._copied_a


Screen = Callable[[Bound], bool]
"""Whether a comparison with this :class:`Bound` could still matter; ``False`` spares the rest of it."""


def compare_screened(
    a: str | PreparedText,
    b: str,
    params: CompareParams,
    screen: Screen,
    *,
    segment: Segmenter | None = None,
    thesaurus: Thesaurus | None = None,
    workers: int | None = None,
    limits: Limits = Limits(),
    scans: Scans | None = None,
) -> Comparison | None:
    """:func:`compare`, or ``None`` when ``screen`` refuses an upper bound of what it could find.

    The bound is worked out from the matrix's candidate pairs (the marked pairs are among
    them) and the shared runs, before the word-level check, the whole-text LCS and the
    scores: a superset of what the comparison marks copied (:func:`_copied_bound`), so a
    screen that refuses only what cannot be a copy loses nothing. With ``trim_boilerplate``
    the shares are of the cores, which the bound does not know: every pair is compared.
    """
    return _compare(a, b, params, None if params.trim_boilerplate else screen, segment=segment, thesaurus=thesaurus,
                    workers=workers, limits=limits, scans=scans)


def _compare(a: str | PreparedText, b: str, params: CompareParams, screen: Screen | None, *, segment: Segmenter | None,
             thesaurus: Thesaurus | None, workers: int | None, limits: Limits, scans: Scans | None) -> Comparison | None:
    query = a if isinstance(a, PreparedText) else prepare(a, params, scans=scans)
    if (query.min_units, query.unwrap) != (params.min_units, params.unwrap):
        raise ConfigError(f"the query was prepared with min_units={query.min_units} and unwrap={query.unwrap}, "
                          f"not {params.min_units} and {params.unwrap}: prepare it with the same parameters")
    b = unwrap_lines(b) if params.unwrap else b
    query, sentences_b, coded_b, enc = _pair_up(query, b, scans)
    n_a, n_b = query.coded.lengths, coded_b.lengths
    cand = candidate_pairs(query.coded, query.values.size, coded_b, enc, params.similar_weight, workers,
                           limits.grouped_pairs)
    runs_a, runs_b = query.shared_runs(params.run_units, coded_b.codes)
    if screen is not None and not screen(_copied_bound(cand, (runs_a, runs_b), n_a, n_b)):
        return None
    core_a, core_b = range(len(n_a)), range(len(n_b))
    if params.trim_boilerplate:
        core_a, core_b = _cores(query, sentences_b, coded_b, cand, params, limits.alignment_cells)
        cand = cand.within(core_a, core_b)
    pairs, word_checks = _similar_pairs(query.sentences, sentences_b, cand, params, segment, thesaurus)
    total, exact = _whole_lcs(query.coded, coded_b, cand, core_a, core_b, limits.exact_lcs_cells)
    return _comparison(query, sentences_b, coded_b, cand, pairs, word_checks, (core_a, core_b), (runs_a, runs_b),
                       (total, exact), params)


def _copied_bound(cand: Pairs, runs: tuple[np.ndarray, np.ndarray], n_a: np.ndarray, n_b: np.ndarray) -> Bound:
    """Units in a sentence of a candidate pair (the marked pairs are among them) or in a shared run."""
    in_a = np.zeros(n_a.size, dtype=bool)
    in_b = np.zeros(n_b.size, dtype=bool)
    in_a[cand.i] = True
    in_b[cand.j] = True
    return Bound(lambda: np.repeat(in_a, n_a) | runs[0], np.repeat(in_b, n_b) | runs[1], n_a, n_b)


def _comparison(query: PreparedText, sentences_b: Sequence[Sentence], coded_b: Coded, cand: Pairs,
                pairs: SentencePairs, word_checks: int, cores: tuple[range, range],
                runs: tuple[np.ndarray, np.ndarray], lcs: tuple[int, bool], params: CompareParams) -> Comparison:
    """The scores of the pairs found, and the whole-text ``lcs`` (and whether it is exact), as a :class:`Comparison`."""
    n_a, n_b = query.coded.lengths, coded_b.lengths
    core_a, core_b = cores
    units_a = int(n_a[core_a.start : core_a.stop].sum())
    units_b = int(n_b[core_b.start : core_b.stop].sum())
    marked_a, marked_b = np.unique(pairs.i), np.unique(pairs.j)
    total, exact = lcs
    if not exact:
        log.debug("texts of %d and %d units: LCS bounded from the sentence matrix", units_a, units_b)
    trimmed = params.trim_boilerplate
    return Comparison(
        sentences_a=query.sentences,
        sentences_b=sentences_b if isinstance(sentences_b, SentenceView) else tuple(sentences_b),
        pairs=pairs,
        similarity_a=int(n_a[marked_a].sum()) / units_a if units_a else 0.0,
        similarity_b=int(n_b[marked_b].sum()) / units_b if units_b else 0.0,
        units_a=units_a,
        units_b=units_b,
        lcs=total,
        lcs_exact=exact,
        resemblance=resemblance(total, units_a, units_b),
        containment_a_in_b=containment(total, units_a),
        containment_b_in_a=containment(total, units_b),
        core_a=(core_a.start, core_a.stop) if trimmed else None,
        core_b=(core_b.start, core_b.stop) if trimmed else None,
        params=params,
        stats=CompareStats(len(core_a) * len(core_b), int(cand.i.size), word_checks),
        runs_a=runs[0],
        runs_b=runs[1],
        lengths_a=n_a,
        lengths_b=n_b,
    )


def _cores(query: PreparedText, sentences_b: Sequence[Sentence], coded_b: Coded, cand: Pairs,
           params: CompareParams, max_cells: int) -> tuple[range, range]:
    """The trusted cores of both texts (boilerplate trimming), by an alignment of the whole texts up to
    ``max_cells`` (``|a| * |b|``), past it by each sentence's best ``p``."""
    whole_a, whole_b = query.coded.whole, coded_b.whole
    if len(whole_a) * len(whole_b) <= max_cells:
        weights_a, weights_b = alignment_masks(whole_a, whole_b)
    else:
        best_a = np.zeros(len(query.sentences))
        best_b = np.zeros(len(sentences_b))
        np.maximum.at(best_a, cand.i, cand.p)
        np.maximum.at(best_b, cand.j, cand.p)
        weights_a, weights_b = np.repeat(best_a, query.coded.lengths), np.repeat(best_b, coded_b.lengths)
    return _core(weights_a, query.sentences, params), _core(weights_b, sentences_b, params)


def _similar_pairs(sentences_a: Sequence[Sentence], sentences_b: Sequence[Sentence], cand: Pairs,
                   params: CompareParams, segment: Segmenter | None,
                   thesaurus: Thesaurus | None) -> tuple[SentencePairs, int]:
    """The candidates marked similar, by ``p`` or the word-level check, ordered by ``(i, j)``; and
    how many needed the word-level check."""
    if segment is None:
        segment = dictionary_words
    thes: Thesaurus | None = None
    if params.use_synonyms:
        thes = thesaurus if thesaurus is not None else cilin_thesaurus()
    # Each sentence is segmented at most once per call, however many pairs it is
    # in (keyed by text, so a sentence found in both texts counts once too); with a
    # CachedSegmenter, once for all the calls that share it.
    words = segment.counts if isinstance(segment, CachedSegmenter) else cache(partial(_word_counts, segment))
    right = params.right_weight
    order = np.lexsort((cand.j, cand.i))
    ii, jj, lcs, p = cand.i[order], cand.j[order], cand.lcs[order], cand.p[order]
    by_lcs = p >= right
    check = np.flatnonzero(~by_lcs)
    checked = [(words(sentences_a[i].text), words(sentences_b[j].text))
               for i, j in zip(ii[check].tolist(), jj[check].tolist(), strict=True)]
    w = np.full(ii.size, np.nan)
    w[check] = _word_scores(checked, thes)  # each a float64: compared as the Python float it was
    keep = by_lcs | (w >= right)
    return SentencePairs(ii[keep], jj[keep], lcs[keep], p[keep], w[keep], by_lcs[keep], sentences_a,
                         sentences_b), len(checked)


def _word_scores(pairs: list[tuple[Counter[str], Counter[str]]], thesaurus: Thesaurus | None) -> list[float]:
    """:func:`word_score` of each pair of word counts, by the compiled core where it computes
    (:mod:`simdup_es.native`: the counts and the thesaurus's groups read in place)."""
    core = native.module()
    if core is None or not pairs:
        return [word_score(a, b, thesaurus) for a, b in pairs]
    scores: list[float] = core.word_scores(pairs, None if thesaurus is None else thesaurus.group_index())
    return scores

