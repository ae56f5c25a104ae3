"""Winnowed keys and shared runs (simdup_es.winnow): fast kernels against their references, and the guarantee."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.levels import PartParams, text_keys
from simdup_es.reference import gram_hashes_reference, shared_runs_reference, unit_codes_reference, winnow_reference
import simdup_es.winnow as winnow_module
from simdup_es.sentences import unit_points
from simdup_es.winnow import (
    GramIndex,
    batch_codes,
    gram_hashes,
    shared_runs,
    shared_runs_with,
    unit_codes,
    winnow,
    winnow_many,
)

codes = st.lists(st.integers(0, 6), max_size=60)  # few values: grams repeat, windows tie


@settings(max_examples=200, deadline=None)
@given(codes, st.integers(1, 6), st.integers(1, 8), st.sampled_from([1, 2, 3, 1 << 14]))
def test_gram_hashes_and_winnowing_equal_their_references(seq: list[int], k: int, w: int, block: int) -> None:
    """Winnowed a block of windows at a time too (blocks of 1, 2, 3: windows across them)."""
    hashes = gram_hashes(np.array(seq, dtype=np.uint64), k)
    assert hashes.tolist() == gram_hashes_reference(seq, k)
    with mock.patch.object(winnow_module, "WINDOW_BLOCK", block):
        values, positions = winnow(hashes, w)
    assert (values.tolist(), positions.tolist()) == winnow_reference(hashes.tolist(), w)


@settings(max_examples=200, deadline=None)
@given(codes, codes, st.integers(1, 6))
def test_shared_runs_equal_the_reference(a: list[int], b: list[int], k: int) -> None:
    ma, mb = shared_runs(np.array(a, dtype=np.uint64), np.array(b, dtype=np.uint64), k)
    ra, rb = shared_runs_reference(a, b, k)
    assert ma.tolist() == ra and mb.tolist() == rb


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=10, max_size=40), codes, codes)
def test_a_shared_run_of_w_plus_k_minus_1_units_always_shares_a_key(run: list[int], left: list[int], right: list[int]) -> None:
    k, w = 5, 6
    run = run[: w + k - 1] if len(run) >= w + k - 1 else run + [7] * (w + k - 1 - len(run))
    one = np.array(left + run, dtype=np.uint64)
    two = np.array(run + right, dtype=np.uint64)
    keys_one = set(winnow(gram_hashes(one, k), w)[0].tolist())
    keys_two = set(winnow(gram_hashes(two, k), w)[0].tolist())
    assert keys_one & keys_two


def test_keys_ignore_punctuation_spaces_and_case_and_carry_their_unit_offsets() -> None:
    a = text_keys("第一句话在这里写得足够长一些，Hello World 然后继续写。")
    b = text_keys("第一句话 在这里写得足够长一些 hello world。。然后继续写")
    assert [k.key for k in a] == [k.key for k in b] and a
    assert [k.position for k in a] == [k.position for k in b]
    assert all(0 <= k.position <= len(unit_codes("第一句话在这里写得足够长一些hello world然后继续写")) - 5 for k in a)
    assert text_keys("太短了") == [] and text_keys("", PartParams()) == []


def test_a_character_replaced_in_a_short_post_leaves_shared_keys() -> None:
    post = "今天在图书馆读完了一本关于宋代城市生活的书收获很多推荐给大家"
    edited = post.replace("城", "都")
    assert {k.key for k in text_keys(post)} & {k.key for k in text_keys(edited)}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["中", "文", "字", "a", "word", "3.14", "，", " ", "。", "don't", "\U00020000"]), max_size=30))
def test_unit_codes_are_code_points_of_characters_and_hashes_of_words(pieces: list[str]) -> None:
    import xxhash

    from simdup_es.sentences import units

    text = "".join(pieces)
    want = [ord(u) if len(u) == 1 else max(xxhash.xxh3_64_intdigest(u.encode("utf-8")), 1 << 21) for u in units(text)]
    assert unit_codes(text).tolist() == want


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=60), st.lists(st.integers(0, 3), max_size=60), st.integers(1, 5),
       st.lists(st.lists(st.integers(0, 3), max_size=30), max_size=3))
def test_shared_runs_with_a_prepared_side_equal_the_plain_ones(a: list[int], b: list[int], k: int,
                                                                others: list[list[int]]) -> None:
    """One GramIndex reused across texts gives what shared_runs gives on each, bit for bit."""
    index = GramIndex(np.array(a, dtype=np.uint64), k)
    for other in [*others, b]:
        got = shared_runs_with(index, np.array(other, dtype=np.uint64))
        plain = shared_runs(np.array(a, dtype=np.uint64), np.array(other, dtype=np.uint64), k)
        assert got[0].dtype == plain[0].dtype == bool
        assert got[0].tolist() == plain[0].tolist() and got[1].tolist() == plain[1].tolist()
    ra, rb = shared_runs_reference(a, b, k)
    assert got[0].tolist() == ra and got[1].tolist() == rb


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from("的是在一不了有和人这中大为上个国。, \n"), st.sampled_from(["alpha", "Beta", "x1", "42", "é"])),
                max_size=40).map(" ".join))
def test_unit_codes_equal_the_reference(text: str) -> None:
    got = unit_codes(text)
    assert got.dtype == np.uint64 and got.tolist() == unit_codes_reference(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(codes, max_size=6), st.integers(1, 6), st.integers(1, 8), st.sampled_from([1, 3, 1 << 14]))
def test_a_batch_winnows_as_its_texts_one_by_one(texts: list[list[int]], k: int, w: int, block: int) -> None:
    first = np.cumsum([0, *map(len, texts)])
    with mock.patch.object(winnow_module, "WINDOW_BLOCK", block):
        got = winnow_many(np.array([c for t in texts for c in t], dtype=np.uint64), first, k, w)
    for (values, positions), seq in zip(got, texts, strict=True):
        assert (values.tolist(), positions.tolist()) == winnow_reference(gram_hashes_reference(seq, k), w)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(st.sampled_from("的是一了。, \nAbß3.İ'\U00020000"), max_size=20), max_size=5))
def test_a_batch_s_unit_codes_are_its_texts_codes_end_to_end(texts: list[str]) -> None:
    found = unit_points(texts)
    codes = batch_codes(found)
    for t, text in enumerate(texts):
        assert codes[found.first[t] : found.first[t + 1]].tolist() == unit_codes_reference(text)
