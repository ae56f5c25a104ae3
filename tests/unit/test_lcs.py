"""LCS, resemblance, containment and the trusted span (simdup_es.lcs)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simdup_es.errors import ConfigError
from simdup_es.reference import lcs_length_reference
from simdup_es.lcs import (
    UnitCodec,
    alignment_masks,
    containment,
    lcs_length,
    resemblance,
    trusted_span,
)

# Units as the comparison sees them: CJK characters, Latin words, numbers. A
# small pool makes common subsequences likely; the wide pool has code points
# far above 256.
_SMALL_POOL = [*"的是了在人中文字", "the", "of", "data", "3.14"]
_WIDE_POOL = [*map(chr, range(0x4E00, 0x4E00 + 40)), *map(chr, range(0x20000, 0x20008)), "word", "42"]

units_small = st.lists(st.sampled_from(_SMALL_POOL), max_size=40)
units_wide = st.lists(st.sampled_from(_WIDE_POOL), max_size=60)
unit_lists = st.one_of(units_small, units_wide)


def test_seed_003_example() -> None:
    # The worked example of Zhou, Guo and Zhao's LCS paper: A = abcabba, B = cbabac, LCS "caba".
    assert lcs_length("abcabba", "cbabac") == 4
    assert lcs_length_reference("abcabba", "cbabac") == 4


def test_lcs_of_unit_lists() -> None:
    a = ["我们", "提出", "一种", "new", "method"]
    b = ["提出", "了", "一种", "method"]
    assert lcs_length(a, b) == lcs_length_reference(a, b) == 3


@given(unit_lists, unit_lists)
def test_fast_lcs_equals_reference(a: list[str], b: list[str]) -> None:
    expected = lcs_length_reference(a, b)
    assert lcs_length(a, b) == expected
    codec = UnitCodec()
    assert lcs_length(codec.encode(a), codec.encode(b)) == expected


@given(unit_lists, unit_lists, st.integers(min_value=0, max_value=50))
def test_score_cutoff_only_hides_results_below_it(a: list[str], b: list[str], cutoff: int) -> None:
    expected = lcs_length_reference(a, b)
    assert lcs_length(a, b, score_cutoff=cutoff) == (expected if expected >= cutoff else 0)


@given(unit_lists, unit_lists)
def test_resemblance_and_containment_bounds(a: list[str], b: list[str]) -> None:
    lcs = lcs_length_reference(a, b)
    r = resemblance(lcs, len(a), len(b))
    c_a = containment(lcs, len(a))
    c_b = containment(lcs, len(b))
    assert 0.0 <= r <= 1.0
    assert 0.0 <= c_a <= 1.0 and 0.0 <= c_b <= 1.0
    # The union is at least as long as either text.
    assert r <= min(c_a, c_b) + 1e-12
    assert resemblance(lcs, len(b), len(a)) == r
    if a and a == b:
        assert r == c_a == c_b == 1.0


@given(units_wide, units_wide, units_wide)
def test_text_copied_inside_a_longer_one_is_fully_contained(head: list[str], body: list[str], tail: list[str]) -> None:
    long = head + body + tail
    lcs = lcs_length_reference(long, body)
    assert containment(lcs, len(body)) == (1.0 if body else 0.0)


def test_empty_inputs_score_zero() -> None:
    assert resemblance(0, 0, 0) == 0.0
    assert containment(0, 0) == 0.0


@pytest.mark.parametrize(("lcs", "la", "lb"), [(5, 4, 10), (-1, 3, 3), (2, -1, 3)])
def test_impossible_lcs_is_refused(lcs: int, la: int, lb: int) -> None:
    with pytest.raises(ConfigError):
        resemblance(lcs, la, lb)


def test_containment_refuses_lcs_longer_than_text() -> None:
    with pytest.raises(ConfigError):
        containment(6, 5)


def test_codec_gives_equal_units_equal_code_points_and_skips_surrogates() -> None:
    codec = UnitCodec()
    many = [f"w{k}" for k in range(0xD800 + 100)]
    encoded = codec.encode(many)
    assert len(encoded) == len(many) == len(set(encoded))
    assert not any(0xD800 <= ord(ch) < 0xE000 for ch in encoded)
    assert codec.encode(["w0", "w1"]) == encoded[:2]
    encoded.encode("utf-8")  # valid text: no lone surrogate


@given(unit_lists, unit_lists)
def test_alignment_masks_mark_one_lcs(a: list[str], b: list[str]) -> None:
    codec = UnitCodec()
    ea, eb = codec.encode(a), codec.encode(b)
    mask_a, mask_b = alignment_masks(ea, eb)
    lcs = lcs_length_reference(a, b)
    assert mask_a.sum() == mask_b.sum() == lcs
    assert [u for u, m in zip(a, mask_a, strict=True) if m] == [u for u, m in zip(b, mask_b, strict=True) if m]


def test_trusted_span_cuts_unmatched_head_and_tail() -> None:
    rng = np.random.default_rng(7)
    head = rng.random(60) < 0.25  # boilerplate: chance matches only
    body = rng.random(300) < 0.97  # the copied text
    tail = rng.random(80) < 0.25
    start, end = trusted_span(np.concatenate([head, body, tail]))
    assert abs(start - 60) <= 8
    assert abs(end - 360) <= 8


def test_trusted_span_edge_cases() -> None:
    assert trusted_span([]) == (0, 0)
    assert trusted_span(np.zeros(50)) == (0, 0)
    assert trusted_span(np.ones(50)) == (0, 50)
    assert trusted_span([1.0, 0.0, 1.0, 1.0], window=1) == (0, 4)


@given(st.lists(st.floats(min_value=0, max_value=1), max_size=300), st.integers(1, 40))
def test_trusted_span_is_a_valid_range(weights: list[float], window: int) -> None:
    start, end = trusted_span(weights, window=window)
    assert 0 <= start <= end <= len(weights)
    if not any(weights):
        assert (start, end) == (0, 0)
    if end > start:
        # Smoothing may take in a few unmatched units at the edges, never a span
        # with no match near it.
        assert sum(weights[max(0, start - window) : end + window]) > 0


@pytest.mark.parametrize(("window", "slope"), [(0, 0.5), (16, 0.0), (16, 1.0), (16, 1.5)])
def test_trusted_span_parameters_are_validated(window: int, slope: float) -> None:
    with pytest.raises(ConfigError):
        trusted_span([1.0], window=window, slope=slope)
