"""The faster search path gives what the slow, obviously-correct one gives, to the last bit."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.compare import Bound, CompareParams, compare, compare_screened
from simdup_es.errors import ConfigError
from simdup_es.levels import Key, Levels, Part
from simdup_es.lru import ByteLRU, CacheInfo
from simdup_es.multilevel import (
    CommonText,
    MultiParams,
    PartCandidate,
    copied_units,
    could_be_copy,
    judge,
    rank_candidates,
)
from simdup_es.reference import rank_candidates_reference
from simdup_es.caches import TextCaches
from simdup_es.commontext import KeyCounts
from simdup_es.sentences import Sentence, scan, split_sentences_coded
from simdup_es.text import unify
from simdup_es.winnow import winnowed

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@st.composite
def _query_and_found(draw):  # type: ignore[no-untyped-def]
    """A query's levels (sentences, parts, keys with positions) and the candidates a store could return."""
    lengths = draw(st.lists(st.integers(1, 30), min_size=0, max_size=12))
    units = sum(lengths)
    sentences = tuple(Sentence(i, i, i + 1, "x", n) for i, n in enumerate(lengths))
    bounds = st.tuples(st.integers(0, len(lengths)), st.integers(0, len(lengths))).map(sorted)
    parts = tuple(Part(a, b, 0, 0, 0) for a, b in draw(st.lists(bounds, max_size=5)))
    # few values, so that a query repeats a key value at several positions
    keys = tuple(Key(v, p) for v, p in draw(st.lists(st.tuples(st.integers(0, 6), st.integers(0, max(units - 1, 0))),
                                                      max_size=25 if units else 0)))
    query = Levels("v", units, sentences, parts, tuple(None for _ in parts), keys)
    cand = st.builds(PartCandidate, st.text("abcdef", min_size=1, max_size=3),
                     st.frozensets(st.integers(0, len(parts) - 1), max_size=len(parts)) if parts else st.just(frozenset()),
                     st.frozensets(st.integers(0, len(keys) - 1), max_size=len(keys)) if keys else st.just(frozenset()),
                     st.integers(0, 400))
    return query, draw(st.lists(cand, max_size=8))


@settings(max_examples=300, deadline=None)
@given(_query_and_found(), st.sampled_from([MultiParams(), MultiParams(min_coverage=0.0, passage_units=7),
                                            MultiParams(min_coverage=0.0, short_units=3)]))
def test_rank_candidates_equals_the_reference(drawn, params: MultiParams) -> None:  # type: ignore[no-untyped-def]
    query, found = drawn
    assert rank_candidates(query, found, params) == rank_candidates_reference(query, found, params)


# --------------------------------------------------------------------------- the stored-text caches


def test_a_byte_lru_keeps_the_most_recent_entries_within_its_budget() -> None:
    made: list[str] = []

    def make(key: str) -> str:
        made.append(key)
        return key.upper()

    cache = ByteLRU(make, lambda k, v: len(k), max_bytes=10)
    assert [cache(k) for k in ("aaaa", "bbbb", "aaaa")] == ["AAAA", "BBBB", "AAAA"]
    assert made == ["aaaa", "bbbb"]  # the second "aaaa" was a hit, and made it the most recent
    cache("cccc")  # 12 bytes: the least recently used ("bbbb") goes
    assert "bbbb" not in cache and "aaaa" in cache and "cccc" in cache
    assert cache.info() == CacheInfo(hits=1, misses=3, entries=2, bytes=8, max_bytes=10)
    assert cache("x" * 11) == "X" * 11 and "x" * 11 not in cache  # larger than the budget: made, not kept
    assert cache.info().bytes == 8
    cache.max_bytes = 4  # a smaller budget drops entries at once, oldest first
    assert "aaaa" not in cache and "cccc" in cache and cache.info().bytes == 4
    cache.clear()
    assert cache.info() == CacheInfo(0, 0, 0, 0, 4)
    with pytest.raises(ConfigError):
        ByteLRU(make, lambda k, v: 1, max_bytes=-1)
    with pytest.raises(ConfigError):
        cache.max_bytes = True


def test_a_byte_lru_makes_the_missing_keys_of_many_in_one_call() -> None:
    calls: list[list[str]] = []

    def make_many(keys: list[str]) -> list[str]:
        calls.append(keys)
        return [k.upper() for k in keys]

    cache = ByteLRU(str.upper, lambda k, v: len(k), max_bytes=10)
    cache("bb")
    assert cache.many(["aa", "bb", "cc", "aa"], make_many) == ["AA", "BB", "CC", "AA"]
    assert calls == [["aa", "cc"]]  # a hit and a repeated key are not made again
    assert cache.many(["cc", "aa"], make_many) == ["CC", "AA"] and len(calls) == 1
    assert cache.info() == CacheInfo(hits=3, misses=3, entries=3, bytes=6, max_bytes=10)
    # 5 more bytes drop the least recently used ("bb"); 11 bytes are made, not kept
    assert cache.many(["ddddd", "e" * 11], make_many) == ["DDDDD", "E" * 11]
    assert "bb" not in cache and "aa" in cache and "ddddd" in cache and "e" * 11 not in cache and cache.info().bytes == 9


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["軟體測試。", "软件测试", "  ＡＢＣ\r\n\r\n", "后來的發展", "", "x\u3000y", "臺灣"]), max_size=6)
       .map(lambda parts: "".join(parts)), st.integers(0, 7), st.sampled_from([20_000, 30, 5]))
def test_stored_texts_unified_in_batches_equal_each_unified_alone(text: str, at: int, chars: int) -> None:
    from simdup_es.search import _UnifiedTexts
    from simdup_es.store.base import StoredDoc

    docs = [StoredDoc(f"d{i}", i, "v", text[i:] + f"第{i}篇", None) for i in range(8)]
    # A batch cut short by its characters too.
    got = _UnifiedTexts(docs, "v", [d.id for d in docs], TextCaches(), ahead_chars=chars)
    order = [f"d{(at + i) % 8}" for i in range(8)]  # read from any one onwards, wrapping round
    assert [got[i].text for i in order] == [unify(text[int(i[1:]):] + f"第{i[1:]}篇") for i in order]
    assert all(got[i].fingerprint == int(i[1:]) for i in order)


def test_cached_scans_and_unified_texts_equal_fresh_ones_and_stay_within_budget() -> None:
    texts = [f"第{i}段文字在这里。它有两句话, 和 some English words {i}。\n第二行没有词" * (1 + i % 5) for i in range(60)]
    caches = TextCaches(unified_bytes=20_000, scans_bytes=20_000)
    scans, unified = caches.scans, caches.unified
    for _ in range(2):
        for t in texts:
            fresh = scan((t, 4))
            # The second from the cache, as the first made it.
            assert split_sentences_coded(t, None, scans=scans) == split_sentences_coded(t, None, scans=scans) == \
                split_sentences_coded(t, None)
            got = scans((t, 4))
            assert got[0] == fresh[0] and got[3] == fresh[3]  # sentences, words; then the arrays
            assert all(got[k].tolist() == fresh[k].tolist() for k in (1, 2, 4))
            assert caches.unify(t) == caches.unify(t) == unify(t)  # the second from the cache
            assert scans.info().bytes <= 20_000 and unified.info().bytes <= 20_000
    assert scans.info().hits > 0 and unified.info().hits > 0
    assert 0 < scans.info().entries < len(texts)  # bounded: not every text is kept



# --------------------------------------------------------------------------- the screen


_SENTENCE = st.lists(st.sampled_from("的是在一不了有和人这中大为上个国我以要他"), min_size=1, max_size=14).map("".join)
_WORDS = st.sampled_from(["", " alpha", " beta 42", " x1 y2"])


@st.composite
def _pair(draw):  # type: ignore[no-untyped-def]
    """Two texts of a few sentences from few characters (so that sentences match), sharing some sentences."""
    a = draw(st.lists(st.tuples(_SENTENCE, _WORDS).map("".join), max_size=8))
    own = draw(st.lists(st.tuples(_SENTENCE, _WORDS).map("".join), max_size=8))
    b = draw(st.permutations(own + draw(st.lists(st.sampled_from(a), max_size=6)) if a else own))
    sep = draw(st.sampled_from(["。", "\n", "!"]))
    return sep.join(a), sep.join(b)


_PARAMS = [MultiParams(), MultiParams(short_units=1, passage_units=3, passage_gap=0),
           MultiParams(partial_threshold=0.05, whole_share=0.1, passage_gap=2, short_units=3),
           MultiParams(partial_threshold=0.9, whole_share=0.95, passage_units=5, short_units=2, passage_gap=1, short_common=3)]


@settings(max_examples=400, deadline=None)
@given(_pair(), st.sampled_from(_PARAMS), st.sampled_from([CompareParams(), CompareParams(run_units=3, similar_weight=0.3,
                                                                                         right_weight=0.5)]),
       st.lists(st.integers(0, 30), max_size=12))
def test_the_bounds_hold_every_copied_unit_and_the_screen_refuses_no_copy(pair, params: MultiParams,
                                                                          cparams: CompareParams,
                                                                          held: list[int]) -> None:  # type: ignore[no-untyped-def]
    a, b = (unify(t) for t in pair)
    keys = winnowed(a)[0].tolist()  # some of a's keys held by up to 30 of 100 documents: common, frequent or rare
    common = CommonText.of(KeyCounts.of_pairs(keys[: len(held)], held[: len(keys)], 100), a, params)
    bounds: list[Bound] = []
    got = compare_screened(a, b, cparams, lambda bound: bounds.append(bound) or True)
    c = compare(a, b, cparams)
    assert got == c and len(bounds) == 1  # a screen that refuses nothing changes nothing
    for bound in bounds:
        for side, upper in (("a", bound.copied_a), ("b", bound.copied_b)):
            copied, _ = copied_units(c, side)  # type: ignore[arg-type]
            assert upper.shape == copied.shape and not (copied & ~upper).any()
        for sides in (None, (common.rarity(a), common.rarity(b))):
            if judge("x", c, None, params, sides) is not None:
                assert could_be_copy(bound, params, sides)
    refused = compare_screened(a, b, cparams, lambda bound: False)
    assert refused is None or cparams.trim_boilerplate


def test_the_screen_spares_unrelated_texts_and_keeps_copies() -> None:
    article = (FIXTURES / "zh_article.txt").read_text(encoding="utf-8")
    other = (FIXTURES / "zh_other.txt").read_text(encoding="utf-8")
    a, b = unify(article), unify(other)
    screen = functools.partial(could_be_copy, params=MultiParams())
    assert compare_screened(a, b, CompareParams(), screen) is None
    assert judge("x", compare(a, b), None) is None
    half = unify("\n".join(article.splitlines()[:20]) + "\n" + other)
    assert compare_screened(a, half, CompareParams(), screen) == compare(a, half)
    # trimming: the bound does not know the cores, so nothing is screened
    trim = CompareParams(trim_boilerplate=True)
    assert compare_screened(a, b, trim, lambda bound: False) == compare(a, b, trim)
