"""The index keys (simdup_es.keys): each fast encoder against its reference, and what the keys promise: a
fingerprint within k shares what a lookup within k asks for; a part sharing 6 of 8 blocks shares a quad."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es import keys, reference
from simdup_es.errors import ConfigError
from simdup_es.es import bodies

u64 = st.integers(0, 2**64 - 1)


@st.composite
def near_pairs(draw: st.DrawFn) -> tuple[int, int]:
    """Two fingerprints that differ in a chosen set of byte blocks (0 to 8 of them)."""
    a = draw(u64)
    b = a
    for j in draw(st.sets(st.integers(0, 7))):
        b ^= draw(st.integers(1, 255)) << (8 * j)
    return a, b


@given(u64)
def test_each_encoder_is_its_reference(fingerprint: int) -> None:
    assert keys.block_terms(fingerprint) == reference.block_terms_reference(fingerprint)
    assert keys.quad_keys([fingerprint])[0].tolist() == reference.quad_keys_reference(fingerprint)
    assert keys.five_keys([fingerprint])[0].tolist() == reference.five_keys_reference(fingerprint)
    assert keys.quad_terms(fingerprint) == [reference.b64_term_reference(q, 6) for q in reference.quad_keys_reference(fingerprint)]
    assert keys.doc_terms(fingerprint) == [reference.b64_term_reference(f, 8) for f in reference.five_keys_reference(fingerprint)]
    quads, fives = keys.quad_terms(fingerprint), keys.doc_terms(fingerprint)
    assert len(quads) == 6 == len(set(quads)) and all(len(t) == 6 for t in quads)
    assert len(fives) == 56 == len(set(fives)) and all(len(t) == 8 for t in fives)


@settings(max_examples=200, deadline=None)
@given(st.lists(u64, max_size=40))
def test_the_json_writers_write_what_json_writes(values: list[int]) -> None:
    assert keys.hex_terms(values) == reference.hex_terms_reference(values)
    assert json.loads(f"[{keys.hex_json(values)}]") == reference.hex_terms_reference(values)
    assert keys.key_terms(values) == reference.key_terms_reference(values)
    assert json.loads(f"[{keys.key_terms_json(values)}]") == reference.key_terms_reference(values)
    assert json.loads(f"[{keys.quad_terms_json(values)}]") == [t for f in values for t in keys.quad_terms(f)]
    assert keys.quad_keys(values).shape == (len(values), 6)
    for fp in values[:3]:
        for layout in keys.LAYOUTS:
            assert json.loads("{" + keys.doc_fields_json(fp, layout) + "}") == keys.doc_fields(fp, layout)


def test_the_quads_hold_every_six_blocks_and_the_terms_are_the_measured_ones() -> None:
    assert len(keys.QUAD_BLOCKS) == 6 and len(keys.FIVE_BLOCKS) == 56
    sixes = list(itertools.combinations(range(8), keys.PART_MATCH))
    assert all(any(set(q) <= set(six) for q in keys.QUAD_BLOCKS) for six in sixes)
    # Hand-computed: n, then the quad's bytes (0xDA, 0x14, 0x85, 0x2E for blocks 0-3), in base64 digits.
    assert keys.quad_terms(0xE28764262E8514DA)[:2] == ["DaFIUu", "HaFCZk"]
    assert keys.quad_terms(0xE28764262E8514DA)[-1] == "UmZIfi"
    assert keys.key_terms([0x00A3F1C2D4E5F607, 2**64 - 1, 1]) == ["AKPxwtT", "_______", "AAAAAAA"]
    # The encodings the scale measurements were made with (docs/scale.md), unchanged (from that release's code).
    assert keys.doc_terms(0xE28764262E8514DA)[:2] == ["ANoUhS4m", "AdoUhS5k"]


@settings(max_examples=400, deadline=None)
@given(near_pairs())
def test_parts_sharing_6_of_8_blocks_share_a_quad_and_the_check_keeps_exactly_them(pair: tuple[int, int]) -> None:
    a, b = pair
    equal = reference.shared_blocks_reference(a, b)
    shared = set(keys.quad_terms(a)) & set(keys.quad_terms(b))
    assert equal < keys.PART_MATCH or shared  # no part sharing 6 blocks is missed
    assert not shared or equal >= 4  # a quad is 4 equal blocks
    assert bool(keys.part_match(np.uint64(a), np.uint64(b))) == (equal >= keys.PART_MATCH)
    # A fingerprint with m equal blocks shares C(m, 5) five-block terms: what a terms lookup within 8 - m asks for.
    assert len(set(keys.doc_terms(a)) & set(keys.doc_terms(b))) == (math.comb(equal, 5) if equal >= 5 else 0)


def _held(fingerprint: int, layout: str) -> dict[str, set[str]]:
    """The terms a document of ``fingerprint`` holds, by field."""
    return {f"{keys.ROOT}.{name}": set(value if isinstance(value, list) else [value])
            for name, value in keys.doc_fields(fingerprint, layout).items()}


@settings(max_examples=300, deadline=None)
@given(near_pairs(), st.integers(0, 7), st.sampled_from(keys.LAYOUTS))
def test_a_document_within_k_shares_what_a_lookup_within_k_asks_for(pair: tuple[int, int], k: int, layout: str) -> None:
    a, b = pair
    held, equal = _held(b, layout), reference.shared_blocks_reference(a, b)
    pairs, least = keys.doc_query(a, k, layout)
    assert (sum(term in held[field] for field, term in pairs) >= least) == (equal >= 8 - k)  # exact on blocks
    # The union of several lookups holds every one's candidates.
    union, fields = keys.doc_union([a, a ^ 0xFF, 12345], k, layout)
    assert equal < 8 - k or sum(bool(held[field] & set(terms)) for field, terms in union.items()) >= fields


def test_the_terms_layout_asks_for_blocks_past_k_3_and_both_layouts_refuse_what_no_lookup_answers() -> None:
    assert keys.doc_query(1, 3, "terms")[1] == 1 and keys.doc_query(1, 0, "terms")[1] == 56
    assert keys.doc_query(1, 4, "terms") == keys.doc_query(1, 4, "8x8")
    assert keys.doc_query(1, 7, "8x8")[1] == 1
    for bad in (-1, 8, 3.5, True, "3"):
        with pytest.raises(ConfigError, match="k must be a whole number from 0 to 7"):
            keys.doc_query(1, bad, "8x8")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="layout is one of 8x8, terms"):
        keys.doc_fields(1, "4x16")


def test_a_candidate_query_is_one_terms_filter_where_one_term_suffices() -> None:
    body = bodies.candidate_search(0xE28764262E8514DA, "v", 3, "terms")["query"]["bool"]
    assert body["filter"] == [{"terms": {keys.DOC_TERMS: keys.doc_terms(0xE28764262E8514DA)}}, {"term": {keys.VERSION: "v"}}]
    blocks = bodies.candidate_search(0xE28764262E8514DA, "v", 2)["query"]["bool"]
    assert blocks["minimum_should_match"] == 6 and len(blocks["should"]) == 8
    assert blocks["filter"] == [{"term": {keys.VERSION: "v"}}]
