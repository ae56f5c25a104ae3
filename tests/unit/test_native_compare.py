"""The compiled core's part of each comparison gives the Python modules' figures bit for bit: the candidate's
units coded as the query's, the runs two texts share, the word-level check, each text's common text by the keys'
counts, the copied units that count and every share a judgement reads; on any codes and texts (hypothesis) and
on pairs of the corpus's documents judged as a search judges them (its common text counted over the corpus).

Both implementations run in this process: ``both`` and ``on_native`` (test_native.py) pick one per call.
"""

from __future__ import annotations

import functools
from collections import Counter
from types import ModuleType
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.commontext import EXCLUDED, KeyCounts, Rarity, rarity
from simdup_es.compare import CompareParams, _word_scores, compare_screened, word_score
from simdup_es.matrix import SlicedStrings, rank_first, rank_second, rank_second_folded
from simdup_es.levels import Key, Levels, Part
from simdup_es.multilevel import (
    CommonText,
    MultiParams,
    PartCandidate,
    _covers,
    _bound_share,
    copied_shares,
    could_be_copy,
    judge,
    rank_candidates,
)
from simdup_es.reference import rank_candidates_reference
import simdup_es.sentences as sentences_module
from simdup_es.sentences import Sentence
from simdup_es.text import unify
from simdup_es.thesaurus import Thesaurus
from simdup_es.winnow import KEY_K, GramIndex, gram_hashes, shared_runs_with, unit_codes, winnowed
from tests._data import load_corpus
from tests.unit.test_native import both, on_native

ALPHABET = "的一是在不了有和人这中大"  # few characters: texts share grams, runs and sentences by chance
codes_st = st.lists(st.integers(0, 4), max_size=60).map(lambda v: np.array(v, dtype=np.uint64))
text_st = st.lists(st.sampled_from([*ALPHABET, "。", "，", "\n", "! ", "abc "]), max_size=120).map("".join)


def counts_of(codes: np.ndarray, data: st.DataObject) -> KeyCounts:
    """Counts for some of the grams of ``codes`` and a few other keys, drawn."""
    grams = sorted(set(gram_hashes(codes, KEY_K).tolist()))
    keys = data.draw(st.lists(st.sampled_from(grams), unique=True)) if grams else []
    keys += data.draw(st.lists(st.integers(0, 2**64 - 1), max_size=3))
    numbers = data.draw(st.lists(st.integers(0, 60), min_size=len(keys), max_size=len(keys)))
    return KeyCounts.of_pairs(keys, numbers, 1000)


def multi_params(data: st.DataObject) -> MultiParams:
    return MultiParams(passage_units=data.draw(st.integers(1, 40)), short_units=data.draw(st.integers(1, 30)),
                       passage_gap=data.draw(st.integers(0, 10)), short_common=data.draw(st.integers(0, 40)))


@given(codes_st, codes_st, st.integers(1, 6))
@settings(max_examples=300, deadline=None)
def test_the_runs_two_texts_share(compiled: ModuleType, a: np.ndarray, b: np.ndarray, k: int) -> None:
    index = GramIndex(a, k)
    got = compiled.Grams(index.sorted, index.order, index.n, k).shared_runs(b.astype(np.uint32))
    want = shared_runs_with(index, b)
    assert [np.frombuffer(x, dtype=bool).tolist() for x in got] == [x.tolist() for x in want]


@given(st.lists(st.integers(0, 4), max_size=80).map(lambda v: np.array(v, dtype=np.uint64)), st.data())
@settings(max_examples=300, deadline=None)
def test_the_common_text_of_a_text(compiled: ModuleType, codes: np.ndarray, data: st.DataObject) -> None:
    counts = counts_of(codes, data)
    common = data.draw(st.integers(0, 50))
    short = data.draw(st.integers(0, common))
    got, want = both(compiled, lambda: rarity(codes, counts, common, short))
    assert got.held.tolist() == want.held.tolist() and got.common.tolist() == want.common.tolist()
    assert got.held.dtype == np.int16  # counts up to 60


@pytest.mark.parametrize(("count", "width"), [(32_767, np.int16), (32_768, np.int32), (2**31, np.int64),
                                              (EXCLUDED, np.int64)])
def test_the_compiled_rarity_holds_its_counts_in_the_narrowest_width(compiled: ModuleType, count: int,
                                                                      width: type) -> None:
    codes = np.arange(40, dtype=np.uint64) % 7
    counts = KeyCounts.of_pairs(gram_hashes(codes, KEY_K).tolist(), [count] * 40, 10**6)
    got, want = both(compiled, lambda: rarity(codes, counts, 5, 2))
    assert got.held.dtype == width and want.held.dtype == np.int64
    assert got.held.tolist() == want.held.tolist() and count in got.held.tolist()


@given(st.lists(st.booleans(), max_size=120), st.data())
@settings(max_examples=300, deadline=None)
def test_the_share_a_bound_could_count(compiled: ModuleType, copied: list[bool], data: st.DataObject) -> None:
    n = len(copied)
    held = np.array(data.draw(st.lists(st.sampled_from([0, 0, 0, 5, 20, 50]), min_size=n, max_size=n)),
                    data.draw(st.sampled_from([np.int16, np.int32, np.int64])))
    side = data.draw(st.sampled_from([None, Rarity(held, held > 20), Rarity.none(n + 1)]))
    params, smaller = multi_params(data), data.draw(st.integers(0, 200))
    got, want = both(compiled, lambda: _bound_share(np.array(copied, dtype=bool), side, params, smaller))
    assert got == want


class DrawnSides:
    """What :func:`copied_shares` reads of a comparison, drawn rather than compared: each side's units per
    sentence (some empty), marked sentences, shared runs and core."""

    def __init__(self, data: st.DataObject) -> None:
        for side in "ab":
            lengths = np.array(data.draw(st.lists(st.integers(0, 12), max_size=14)), dtype=np.int64)
            n = int(lengths.sum())
            setattr(self, f"lengths_{side}", lengths)
            setattr(self, f"sentences_{side}", [None] * lengths.size)
            setattr(self, f"units_{side}", n)
            setattr(self, f"marked_{side}", data.draw(st.sets(st.integers(0, max(lengths.size - 1, 0)), max_size=lengths.size)
                                                     if lengths.size else st.just(set())))
            setattr(self, f"runs_{side}", np.array(data.draw(st.one_of(st.just([]), st.lists(st.booleans(), min_size=n,
                                                                                               max_size=n))), dtype=bool))
            ends = st.integers(0, lengths.size)
            setattr(self, f"core_{side}", data.draw(st.none() | st.tuples(ends, ends).map(lambda c: tuple(sorted(c)))))

    def unit_counts(self, side: str) -> np.ndarray:
        return getattr(self, f"lengths_{side}")  # type: ignore[no-any-return]


def drawn_rarity(units: int, data: st.DataObject) -> Rarity:
    """Per unit ``held`` in runs of the same count (some at sentences' edges by chance), ``common`` over some
    threshold or drawn apart from it; or all 0, or of another length (nothing common)."""
    held = np.array(data.draw(st.lists(st.sampled_from([0, 0, 0, 0, 5, 20, 50, 40_000, EXCLUDED]), min_size=units,
                                       max_size=units)), dtype=np.int64)
    # in any width that holds it, as the compiled core's rarity makes it
    width = data.draw(st.sampled_from([np.int16, np.int32, np.int64]))
    if held.size and held.max() <= np.iinfo(width).max:
        held = held.astype(width)
    common = data.draw(st.sampled_from(["over", "drawn", "zero", "other"]))
    if common == "zero":
        return Rarity(np.zeros(units, np.int64), held > 20)
    if common == "other":
        return Rarity.none(units + 1)
    flags = held > 20 if common == "over" else np.array(data.draw(st.lists(st.booleans(), min_size=units,
                                                                          max_size=units)), dtype=bool)
    return Rarity(held, flags)


@given(st.data())
@settings(max_examples=500, deadline=None)
def test_the_shares_of_drawn_sides(compiled: ModuleType, data: st.DataObject) -> None:
    """Every share and stretch of held text of each side, its held and common carried to its sentences' edges,
    on drawn sentences, marks, runs, cores and counts (empty sentences, runs across sentences, edges)."""
    sides = DrawnSides(data)
    rarities = data.draw(st.none() | st.just((drawn_rarity(sides.units_a, data), drawn_rarity(sides.units_b, data))))
    params = multi_params(data)
    got, want = both(compiled, lambda: copied_shares(sides, params, rarities))  # type: ignore[arg-type]  # drawn
    assert got == want


def judged(a: str, b: str, counts: KeyCounts, params: MultiParams, trim: bool = False) -> tuple[Any, ...]:
    """Everything a search reads of a comparison of ``a`` with ``b``: the screen's answer, the comparison, its
    shares and the judgement, with the common text of ``counts`` (``trim``: the comparison's cores only)."""
    common = CommonText.of(counts, a, params)
    sides = (common.query, common.rarity(b))
    compare_params = CompareParams(trim_boilerplate=trim)
    comparison = compare_screened(a, b, compare_params, lambda bound: True)
    assert comparison is not None
    bound = functools.partial(could_be_copy, params=params, sides=sides)
    screened = compare_screened(a, b, compare_params, bound)
    return (comparison, comparison.runs_a.tolist(), comparison.runs_b.tolist(), sides[0].held.tolist(),
            sides[1].common.tolist(), screened is None, copied_shares(comparison, params, sides),
            judge("b", comparison, None, params, sides))


@given(text_st, text_st, st.data())
@settings(max_examples=150, deadline=None)
def test_a_comparison_and_its_judgement(compiled: ModuleType, a: str, b: str, data: st.DataObject) -> None:
    a, b = unify(a), unify(b + a[: data.draw(st.integers(0, len(a)))])  # b may hold a's beginning
    keys = np.unique(np.concatenate([gram_hashes(unit_codes(t), KEY_K) for t in (a, b)]))
    numbers = data.draw(st.lists(st.sampled_from([0, 3, 12, 40]), min_size=keys.size, max_size=keys.size))
    counts = KeyCounts.of_pairs(keys.tolist(), numbers, 1000)
    params, trim = multi_params(data), data.draw(st.booleans())
    got, want = both(compiled, lambda: judged(a, b, counts, params, trim))
    assert got == want


def test_every_figure_on_pairs_of_corpus_documents(compiled: ModuleType) -> None:
    """Pairs of the corpus's pages (which carry footers and template lines many of them share): each page with
    the next, and with a copy of its first half pasted into the next; the keys counted over the pages."""
    texts = [unify(d["text"]) for d in load_corpus("zh-docs.jsonl")[:300]]
    held: Counter[int] = Counter()
    for text in texts:
        held.update(set(winnowed(text)[0].tolist()))
    counts = KeyCounts.of_pairs(held.keys(), held.values(), len(texts))
    pairs = [(a, b) for a, b in zip(texts, texts[1:])]
    pairs += [(a, b[: len(b) // 2] + a[: len(a) // 2] + b[len(b) // 2 :]) for a, b in zip(texts[::3], texts[1::3])]
    got, want = both(compiled, lambda: [judged(a, b, counts, MultiParams()) for a, b in pairs])
    assert got == want
    figures = [(j[6], j[7].kind if j[7] is not None else None) for j in want]
    assert sum(f[1] is not None for f in figures) >= 90  # the pasted halves were judged copies
    assert sum(f[0].common_a > 0 for f in figures) >= 20  # and common text was there to tell apart


units_st = st.lists(st.text(st.sampled_from([*ALPHABET, "a", "\U000f0001", "\U000f0002"]), max_size=12), max_size=8)


def coded_second(raw_a: list[str], raw_b: list[str]) -> tuple[Any, ...]:
    values, table, _ = rank_first(raw_a)
    coded, distinct = rank_second(values, table, raw_b)
    return coded.codes.tolist(), coded.sentences, coded.lengths.tolist(), coded.whole, distinct


@given(units_st, units_st)
@settings(max_examples=300, deadline=None)
def test_a_candidate_coded_as_the_query_was(compiled: ModuleType, raw_a: list[str], raw_b: list[str]) -> None:
    got, want = both(compiled, lambda: coded_second(raw_a, raw_b))
    assert got == want


def folded_second(raw_a: list[str], raw_b: list[str]) -> tuple[Any, ...]:
    values, table, _ = rank_first(raw_a)
    coded, distinct, folded = rank_second_folded(values, table, raw_b)
    return coded.codes.tolist(), coded.sentences, coded.lengths.tolist(), coded.whole, distinct, folded


wide_st = st.lists(st.text(st.sampled_from([chr(0x4E00 + c) for c in range(300)] + ["a", "\U000f0001"]), max_size=40),
                   max_size=12)


@given(st.one_of(units_st, wide_st), st.one_of(units_st, wide_st), st.booleans())
@settings(max_examples=300, deadline=None)
def test_a_candidate_coded_and_folded_as_the_query_was(compiled: ModuleType, raw_a: list[str], raw_b: list[str],
                                                       long: bool) -> None:
    """With more than 256 distinct units the candidate's sentences come folded too; the same as :func:`rank_second`
    and :func:`simdup_es.matrix.folded_sentences` of it. A long text's (``long``: every text is) come as slices of
    one string."""
    with mock.patch.object(sentences_module, "VIEW_SENTENCES", 1 if long else sentences_module.VIEW_SENTENCES):
        got, want = both(compiled, lambda: folded_second(raw_a, raw_b))
        assert got == want and got[:5] == coded_second(raw_a, raw_b)
    assert (got[5] is not None) == (got[4] > 256)
    assert isinstance(got[1], SlicedStrings) == (long and bool(raw_b)) and isinstance(got[5], SlicedStrings | None)


def test_a_candidate_coded_and_folded_with_every_width() -> None:
    """Past 256 distinct units the folded sentences are those of :func:`simdup_es.matrix.folded_sentences`; no
    unit of the candidate, and more than 256 of the query, still folds its (empty) sentences."""
    from simdup_es.matrix import folded_sentences
    raw_a = ["".join(map(chr, range(0x4E00, 0x4E00 + 200)))]
    raw_b = ["".join(map(chr, range(0x4E00 + 100, 0x4E00 + 400))), "abc"]
    values, table, _ = rank_first(raw_a)
    coded, distinct, folded = rank_second_folded(values, table, raw_b)
    assert distinct == 403 and folded == folded_sentences(coded) and max(map(max, folded)) < "\u0100"
    assert rank_second_folded(values, table, raw_b[1:])[2] is None
    wide_a = rank_first(["".join(map(chr, range(0x4E00, 0x4E00 + 300)))])
    assert rank_second_folded(wide_a[0], wide_a[1], ["", ""])[2] == ["", ""]


@given(st.lists(st.integers(0, 40), min_size=3000, max_size=6000).map(lambda v: np.array(v, dtype=np.uint64)),
       st.lists(st.integers(0, 40), max_size=3000).map(lambda v: np.array(v, dtype=np.uint64)), st.integers(1, 3))
@settings(max_examples=30, deadline=None)
def test_the_runs_two_long_texts_share(compiled: ModuleType, a: np.ndarray, b: np.ndarray, k: int) -> None:
    """Thousands of grams: the compiled core finds them by buckets of their hashes' top bits, as by binary search."""
    index = GramIndex(a, k)
    got = compiled.Grams(index.sorted, index.order, index.n, k).shared_runs(b.astype(np.uint32))
    want = shared_runs_with(index, b)
    assert [np.frombuffer(x, dtype=bool).tolist() for x in got] == [x.tolist() for x in want]


def test_codes_past_the_surrogates(compiled: ModuleType) -> None:
    """More distinct units than code points below the surrogates: the codes skip them, as the Python modules'."""
    raw_b = ["".join(map(chr, range(0x4E00, 0x4E00 + 20_000))), "".join(map(chr, range(0x20000, 0x20000 + 40_000)))]
    got, want = both(compiled, lambda: coded_second(["的一是"], raw_b))
    assert got == want and max(got[0]) > 0xE000


VOCABULARY = ["我们", "他们", "人们", "高兴", "快乐", "开心", "书", "本", "看", "读", "x"]
counts_st = st.dictionaries(st.sampled_from(VOCABULARY), st.integers(1, 3), max_size=8).map(Counter)
thesaurus_st = st.none() | st.lists(st.lists(st.sampled_from(VOCABULARY), min_size=2, max_size=4), max_size=5).map(
    lambda groups: Thesaurus.from_groups({f"g{k}": g for k, g in enumerate(groups)}))


@given(st.lists(st.tuples(counts_st, counts_st), max_size=6), thesaurus_st)
@settings(max_examples=300, deadline=None)
def test_the_word_level_check(compiled: ModuleType, pairs: list[tuple[Counter[str], Counter[str]]],
                              thesaurus: Thesaurus | None) -> None:
    with on_native(compiled):
        got = _word_scores(pairs, thesaurus)
    assert got == [word_score(a, b, thesaurus) for a, b in pairs]


@given(st.data())
@settings(max_examples=300, deadline=None)
def test_what_each_candidate_covers_of_the_query(compiled: ModuleType, data: st.DataObject) -> None:
    # A query of sentences, parts over them and keys (a value drawn from few, so that some repeat), and
    # candidates matching some of each: the units under them, under the parts, the longest run and the
    # distinct key values, by the compiled core, the numpy path and (through the rank) the reference.
    lengths = data.draw(st.lists(st.integers(1, 30), min_size=1, max_size=6))
    starts = np.cumsum([0, *lengths]).tolist()
    sentences = tuple(Sentence(i, i, i + 1, "x", n) for i, n in enumerate(lengths))
    bounds = data.draw(st.lists(st.tuples(st.integers(0, len(lengths) - 1), st.integers(1, len(lengths))), max_size=4))
    parts = tuple(Part(a, max(a + 1, b), 0, 0, starts[max(a + 1, b)] - starts[a]) for a, b in bounds)
    positions = sorted(data.draw(st.lists(st.integers(0, starts[-1] + 2), unique=True, max_size=20)))
    keys = tuple(Key(data.draw(st.integers(0, 3)), at) for at in positions)
    query = Levels("v", starts[-1], sentences, parts, tuple(1 for _ in parts), keys)
    subsets = st.frozensets(st.integers(0, len(keys) - 1)) if keys else st.just(frozenset())
    part_sets = st.frozensets(st.integers(0, len(parts) - 1)) if parts else st.just(frozenset())
    found = [PartCandidate(f"c{i}", data.draw(part_sets), data.draw(subsets), data.draw(st.integers(1, 200)))
             for i in range(data.draw(st.integers(1, 5)))]
    got, want = both(compiled, lambda: _covers(query, found))
    assert [a.tolist() for a in got] == [a.tolist() for a in want]
    ranked, _ = both(compiled, lambda: rank_candidates(query, found, MultiParams(min_coverage=0.0)))
    assert ranked == rank_candidates_reference(query, found, MultiParams(min_coverage=0.0))


@given(codes_st, codes_st, st.integers(1, 6))
@settings(max_examples=300, deadline=None)
def test_grams_made_from_the_codes_are_those_of_the_index(compiled: ModuleType, a: np.ndarray, b: np.ndarray,
                                                          k: int) -> None:
    """Grams.of_codes hashes and sorts the grams itself: the same runs as the index numpy makes (GramIndex)."""
    got = compiled.Grams.of_codes(a.astype(np.uint32), k).shared_runs(b.astype(np.uint32))
    want = shared_runs_with(GramIndex(a, k), b)
    assert [np.frombuffer(x, dtype=bool).tolist() for x in got] == [x.tolist() for x in want]


def test_grams_of_codes_take_grams_of_one_unit_or_more(compiled: ModuleType) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        compiled.Grams.of_codes(np.arange(5, dtype=np.uint32), 0)


@given(st.lists(st.integers(0, 5), max_size=150), st.lists(st.integers(0, 5), max_size=150))
@settings(max_examples=300, deadline=None)
def test_the_compiled_lcs_length_is_the_reference(compiled: ModuleType, a: list[int], b: list[int]) -> None:
    from rapidfuzz.distance import LCSseq

    from simdup_es.reference import lcs_length_reference

    got = compiled.lcs_length(np.array(a, dtype=np.uint32), np.array(b, dtype=np.uint32))
    assert got == lcs_length_reference(a, b) == LCSseq.similarity(a, b)


@given(text_st, text_st)
@settings(max_examples=100, deadline=None)
def test_a_whole_text_lcs_by_the_compiled_core_is_the_same_comparison(compiled: ModuleType, a: str, b: str) -> None:
    """Long texts' whole LCS by the compiled core (forced at any size): the same comparison as RapidFuzz's."""
    import simdup_es.compare as compare_module
    from simdup_es.compare import Limits, compare

    params, filtered = CompareParams(use_synonyms=False), Limits(grouped_pairs=0)
    want = compare(unify(a), unify(b), params, limits=filtered).to_dict()
    kept = (compare_module._NATIVE_LCS_FROM, compare_module._FILTER_MIN_CELLS)
    compare_module._NATIVE_LCS_FROM, compare_module._FILTER_MIN_CELLS = 0, 0
    try:
        got = compare(unify(a), unify(b), params, limits=filtered).to_dict()
    finally:
        compare_module._NATIVE_LCS_FROM, compare_module._FILTER_MIN_CELLS = kept
    assert got == want
