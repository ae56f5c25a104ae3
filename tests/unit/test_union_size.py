"""How many queries one union candidate search holds: against a count of random hits by brute force."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.keys import union_size


def _random_hits_reference(documents: int, c: int, k: int) -> float:
    """Expected random documents passing: sum over which of the 8 block fields match, by enumeration."""
    p = min(1.0, c / 256)
    total = 0.0
    for matched in itertools.product((0, 1), repeat=8):
        if sum(matched) >= 8 - k:
            prob = 1.0
            for m in matched:
                prob *= p if m else 1 - p
            total += prob
    return documents * total


@settings(max_examples=40)
@given(st.integers(0, 10**9), st.integers(0, 7))
def test_union_size_is_the_largest_that_lets_in_no_more_random_hits_than_queries(documents: int, k: int) -> None:
    size = union_size(documents, k)
    assert 1 <= size <= 100
    if size > 1:
        assert _random_hits_reference(documents, size, k) <= size + 1e-9
    if size < 100:
        assert _random_hits_reference(documents, size + 1, k) > size + 1 - 1e-9
    # Five-block terms fix 40 bits each: a lookup of the terms layout within k <= 3 holds the most.
    assert union_size(documents, k, "terms") == (100 if k <= 3 else size)


def test_union_size_shrinks_as_the_index_grows() -> None:
    sizes = [union_size(n, 3) for n in (1_000, 100_000, 10_000_000)]
    assert sizes == sorted(sizes, reverse=True) and sizes[1] == 22
