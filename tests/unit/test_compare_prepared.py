"""A query prepared once (simdup_es.compare.prepare) gives what the plain call gives, bit for bit.

And the large-matrix path (sentences that cannot reach ``similar_weight`` left out of the
matrix) gives what the full matrix gives, and both what the naive reference gives.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdup_es.compare as compare_module
import simdup_es.sentences as sentences_module
from simdup_es.compare import CompareParams, Comparison, Limits, compare, prepare
from simdup_es.sentences import WordCodes, split_sentences_points
from simdup_es.errors import ConfigError
from simdup_es.reference import lcs_length_reference, shared_runs_reference

PARAMS = CompareParams(use_synonyms=False)
CHARS = "的是在一不了有和人这中大为上个国"  # few units: sentences share many, pairs pass the threshold
WORDS = ["alpha", "beta", "gamma", "x1"]


def segment(text: str) -> list[str]:
    return list(text)


unit = st.one_of(st.sampled_from(CHARS), st.sampled_from(WORDS).map(lambda w: f" {w} "))
sentence = st.lists(unit, min_size=1, max_size=14).map(lambda units: "".join(units) + "。")
text = st.lists(sentence, max_size=12).map("".join)


def same(x: Comparison, y: Comparison) -> None:
    assert x.to_dict() == y.to_dict()
    assert x.runs_a.tolist() == y.runs_a.tolist() and x.runs_b.tolist() == y.runs_b.tolist()
    assert (x.similarity_a, x.similarity_b, x.lcs) == (y.similarity_a, y.similarity_b, y.lcs)  # floats, unrounded


def fresh(a: str, b: str, limits: Limits = Limits()) -> Comparison:
    return compare(a, b, PARAMS, segment=segment, limits=limits)  # nothing kept from an earlier call


@settings(max_examples=150, deadline=None)
@given(text, text, st.lists(text, max_size=3))
def test_a_prepared_query_reused_across_texts_gives_the_plain_result(a: str, b: str, others: list[str]) -> None:
    query = prepare(a, PARAMS)
    for other in others:  # whatever it was compared with before
        compare(query, other, PARAMS, segment=segment)
    same(compare(query, b, PARAMS, segment=segment), fresh(a, b))


@settings(max_examples=100, deadline=None)
@given(text, text)
def test_leaving_out_hopeless_sentences_changes_nothing(a: str, b: str) -> None:
    """The row filter (normally above 100,000 pairs) forced on and off: the same comparison,
    and its pairs are exactly those the naive LCS of each sentence pair puts at or above the threshold."""
    filtered = fresh(a, b, Limits(grouped_pairs=0))
    full = fresh(a, b, Limits(grouped_pairs=10**12))
    same(filtered, full)
    for side, sentences in (("a", full.sentences_a), ("b", full.sentences_b)):
        assert full.unit_counts(side).tolist() == [s.n_units for s in sentences]
    units_a = [s.units for s in full.sentences_a]
    units_b = [s.units for s in full.sentences_b]
    expected = set()
    for i, x in enumerate(units_a):
        for j, y in enumerate(units_b):
            if lcs_length_reference(x, y) / max(len(x), len(y)) >= PARAMS.right_weight:
                expected.add((i, j))
    assert {(p.i, p.j) for p in full.pairs if p.rule == "lcs"} == expected
    whole_a = [u for s in units_a for u in s]
    whole_b = [u for s in units_b for u in s]
    assert full.lcs == lcs_length_reference(whole_a, whole_b)
    ra, rb = shared_runs_reference([hash(u) for u in whole_a], [hash(u) for u in whole_b], PARAMS.run_units)
    assert full.runs_a.tolist() == ra and full.runs_b.tolist() == rb


def test_a_query_prepared_with_other_parameters_is_refused() -> None:
    query = prepare("我们应该采用更好的方法来提高工作效率。", CompareParams(min_units=2))
    with pytest.raises(ConfigError, match="prepare it with the same parameters"):
        compare(query, "我们应该采用更好的方法。", CompareParams(min_units=4))


def test_a_query_with_more_words_than_codes_is_compared_pair_by_pair() -> None:
    """Past the private-use code points the query is coded with each text in turn: still the same result."""
    words = " ".join(f"w{i}" for i in range(140_000)) + "。"
    b = "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10。共同的句子在这里出现。"
    got = compare(words + "共同的句子在这里出现。", b, PARAMS, segment=segment)
    assert got.lcs == 20 == got.units_b and [p.j for p in got.pairs] == [1] and bool(got.runs_b.all())
    assert compare(words + "共同的句子在这里出现。", b, PARAMS, segment=segment).to_dict() == got.to_dict()


def test_a_long_query_is_prepared_once_within_keeping_and_not_kept_after_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server answers one long query and then others: its preparation (some 60 bytes a character) is kept for
    its search's comparisons only. Outside any block the last long one of the thread is kept; short ones, the last
    two."""
    from simdup_es import search

    made: list[str] = []
    monkeypatch.setattr(search, "KEEP_PREPARED_CHARS", 30)
    monkeypatch.setattr(search, "prepare", lambda a, **kw: made.append(a) or prepare(a, **kw))
    comparer = search.MatrixComparer(PARAMS)
    long, short, b = "我们应该采用更好的方法来提高工作效率。" * 3, "我们应该采用更好的方法。", "更好的方法来提高工作效率。"
    with comparer.keeping():
        first = comparer(long, b)
        with comparer.keeping():  # nested: the outer block keeps it
            same(comparer(long, b), first)
        same(comparer(long, b), first)
    assert made == [long] and comparer._held.texts is None  # the block's is gone with it
    same(comparer(long, b), first)  # after the block: prepared again, and kept as the thread's last long one
    same(comparer(long, b), first)
    assert made == [long] * 2
    other = long + "新的句子在这里出现了。"
    comparer(other, b)
    comparer(long, b)  # one long one kept at a time
    assert made == [long] * 2 + [other, long]
    comparer(short, b)
    comparer(short, b)
    assert made == [long] * 2 + [other, long, short]
    same(first, fresh(long, b))
    with comparer.keeping():  # within a block the thread's last long one outside is not what it keeps
        comparer(long, b)
    assert made[-1] == long and len(made) == 6


def test_a_service_keeps_no_long_text_prepared_after_its_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server's requests (Service.compare, search, report) compare within MatrixComparer.keeping: the thread
    that answered keeps no long text's preparation after it."""
    from simdup_es import search
    from simdup_es.service import Query, Service

    monkeypatch.setattr(search, "KEEP_PREPARED_CHARS", 30)
    service = Service(None, comparer=search.MatrixComparer(PARAMS))
    long = "我们应该采用更好的方法来提高工作效率。" * 3
    assert service.compare(Query(text=long), Query(text="更好的方法来提高工作效率。")).verdict.comparison.units_a == 54
    assert not service.comparer._held.__dict__.get("last") and service.comparer._held.texts is None


@settings(max_examples=60, deadline=None)
@given(text, text)
def test_sentences_held_as_views_give_the_same_comparison(a: str, b: str) -> None:
    """Texts of many sentences keep them as rows of a table (SentenceView), and their coded strings as slices of one
    (SlicedStrings): the same comparison as tuples and lists give."""
    import simdup_es.sentences as sentences_module

    plain = fresh(a, b)
    kept = sentences_module.VIEW_SENTENCES
    sentences_module.VIEW_SENTENCES = 1
    try:
        viewed = fresh(a, b)
        prepared = compare(prepare(a, PARAMS), b, PARAMS, segment=segment)
        filtered = fresh(a, b, Limits(grouped_pairs=0))  # the rows that may match, read from the sliced strings
    finally:
        sentences_module.VIEW_SENTENCES = kept
    for got in (viewed, prepared, filtered):
        same(got, plain)
        assert got == plain
    if a.strip("。"):
        assert isinstance(viewed.sentences_a, sentences_module.SentenceView)


def test_sliced_strings_read_as_the_list_of_their_pieces() -> None:
    from simdup_es.matrix import SlicedStrings

    whole, lengths = "abcdefghij", [3, 0, 4, 2, 1]
    pieces = ["abc", "", "defg", "hi", "j"]
    sliced = SlicedStrings(whole, lengths)
    assert len(sliced) == 5 and list(sliced) == pieces and sliced == pieces and sliced == SlicedStrings(whole, lengths)
    assert [sliced[i] for i in range(-5, 5)] == pieces + pieces
    assert sliced[1:4] == pieces[1:4] and sliced[::2] == pieces[::2] and sliced[4:1] == []
    with pytest.raises(IndexError):
        sliced[5]
    assert sliced != pieces[:-1] and list(SlicedStrings("", [])) == []
    assert sliced.lengths().tolist() == lengths


@given(st.lists(st.text(max_size=6), max_size=12), st.data())
def test_sliced_strings_picked_are_the_pieces_in_that_order(pieces: list[str], data: st.DataObject) -> None:
    from simdup_es.matrix import SlicedStrings

    sliced = SlicedStrings("".join(pieces), [len(p) for p in pieces])
    rows = data.draw(st.lists(st.integers(0, len(pieces) - 1), max_size=20) if pieces else st.just([]))
    picked = sliced.picked(np.array(rows, dtype=np.int64))
    assert isinstance(picked, SlicedStrings) and list(picked) == [pieces[i] for i in rows]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 300), st.integers(0xD700, 0xE100), st.integers(0xF0000, 0x10FFFF)),
                max_size=80))
def test_ranking_a_long_text_by_counts_gives_what_unique_gives(points: list[int]) -> None:
    """rank_first counts a long text's code points (_rank_counted) instead of np.unique: the same values, table, codes
    and strings."""
    import numpy as np

    from simdup_es import matrix

    raw = np.array(points, dtype=np.uint32)
    lengths = np.array([len(points) // 2, len(points) - len(points) // 2], dtype=np.int64)
    want = matrix.rank_first((raw, lengths))
    kept = matrix._COUNTED_FROM
    matrix._COUNTED_FROM = 1
    try:
        got = matrix.rank_first((raw, lengths))
    finally:
        matrix._COUNTED_FROM = kept
    for x, y in zip(got[:2], want[:2], strict=True):
        assert x.dtype == y.dtype and x.tolist() == y.tolist()
    assert got[2].codes.dtype == want[2].codes.dtype and got[2].codes.tolist() == want[2].codes.tolist()
    assert list(got[2].sentences) == list(want[2].sentences) and got[2].whole == want[2].whole


_WORDS = ["alpha", "beta", "gamma", "Delta", "x1", "42", "ls", "grep", "éclair", "中文"]


@given(st.lists(st.sampled_from([*_WORDS, "你好", "。", " ", "\n", "世界"]), max_size=30),
       st.lists(st.sampled_from(_WORDS), max_size=6), st.integers(1, 3))
def test_a_candidate_coded_with_the_query_words(parts: list[str], query_words: list[str], min_units: int) -> None:
    """Its units as split_sentences_points codes them with a copy of the query's WordCodes (new words numbered in
    order of first appearance after the query's), and the query's words left as they were."""
    text = " ".join(parts)
    words = WordCodes()
    for w in query_words:
        words[w.casefold()]
    before = dict(words)
    got = compare_module._candidate_points(text, words, min_units, None)
    want = split_sentences_points(text, WordCodes(words), min_units=min_units)
    assert list(got[0]) == want[0] and got[1].tolist() == want[1].tolist() and got[2].tolist() == want[2].tolist()
    assert got[1].dtype == want[1].dtype and dict(words) == before


def test_a_candidate_with_more_words_than_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the private-use code points, OverflowError as WordCodes raises it (the pair is then coded on its own)."""
    monkeypatch.setattr(sentences_module, "_WORD_CODES", 3)
    words = WordCodes()
    words["alpha"]
    compare_module._candidate_points("alpha beta gamma alpha", words, 1, None)  # 3 codes: fits
    with pytest.raises(OverflowError):
        split_sentences_points("alpha beta gamma delta", WordCodes(words), min_units=1)
    with pytest.raises(OverflowError):
        compare_module._candidate_points("alpha beta gamma delta", words, 1, None)
    plain = compare("alpha beta gamma delta epsilon.", "alpha beta gamma delta zeta.")
    assert plain.lcs == 4 and [(p.i, p.j) for p in plain.pairs] == [(0, 0)]
