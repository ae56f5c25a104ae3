"""How many queries one union candidate search holds: against a count of random hits by brute force."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.config import BlockLayout
from simdup_es.es.bodies import union_size


def _random_hits_reference(documents: int, c: int, layout: BlockLayout) -> float:
    """Expected random documents passing: sum over which fields match, by enumeration."""
    p = min(1.0, c / 2**layout.bits_per_block)
    total = 0.0
    for matched in itertools.product((0, 1), repeat=layout.blocks):
        if sum(matched) >= layout.min_match:
            prob = 1.0
            for m in matched:
                prob *= p if m else 1 - p
            total += prob
    return documents * total


@settings(max_examples=40)
@given(st.integers(0, 10**9), st.sampled_from([BlockLayout(8, k) for k in range(4)] + [BlockLayout(4, 3), BlockLayout(16, 3)]))
def test_union_size_is_the_largest_that_lets_in_no_more_random_hits_than_queries(documents: int,
                                                                                 layout: BlockLayout) -> None:
    size = union_size(documents, layout)
    assert 1 <= size <= 100
    if size > 1:
        assert _random_hits_reference(documents, size, layout) <= size + 1e-9
    if size < 100:
        assert _random_hits_reference(documents, size + 1, layout) > size + 1 - 1e-9


def test_union_size_shrinks_as_the_index_grows() -> None:
    sizes = [union_size(n) for n in (1_000, 100_000, 10_000_000)]
    assert sizes == sorted(sizes, reverse=True) and sizes[1] == 22
