"""The faster search path gives what the slow, obviously-correct one gives, to the last bit."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.levels import Key, Levels, Part
from simdup_es.multilevel import MultiParams, PartCandidate, rank_candidates, rank_candidates_reference
from simdup_es.sentences import Sentence


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
@given(_query_and_found(), st.sampled_from([MultiParams(), MultiParams(min_coverage=0.0, passage_units=7)]))
def test_rank_candidates_equals_the_reference(drawn, params: MultiParams) -> None:  # type: ignore[no-untyped-def]
    query, found = drawn
    assert rank_candidates(query, found, params) == rank_candidates_reference(query, found, params)
