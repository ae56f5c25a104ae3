"""Parts without nested documents: 56 flat terms a part (exact for 5 of 8 blocks), or 14 quad terms a part
and its fingerprint (every part sharing 5 of 8 blocks shares a quad; the search checks the rest)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es import schema
from simdup_es import simhash as sh
from simdup_es.config import BlockLayout
from simdup_es.errors import ConfigError, StoreError
from simdup_es.es import bodies
from simdup_es.es import layout as index_layout
from simdup_es.es.mappings import index_mappings, missing_level_fields

u64 = st.integers(0, 2**64 - 1)


def _equal_blocks(a: int, b: int) -> int:
    return sum(x == y for x, y in zip(sh.blocks(a), sh.blocks(b)))


@st.composite
def near_pairs(draw: st.DrawFn) -> tuple[int, int]:
    """Two fingerprints that differ in a chosen set of byte blocks (0 to 8 of them)."""
    a = draw(u64)
    changed = draw(st.sets(st.integers(0, 7)))
    b = a
    for j in changed:
        b ^= draw(st.integers(1, 255)) << (8 * j)
    return a, b


@given(u64)
def test_flat_terms_are_the_reference(fingerprint: int) -> None:
    terms = schema.flat_part_terms(fingerprint)
    assert terms == schema.flat_part_terms_reference(fingerprint)
    assert len(terms) == 56 == len(set(terms)) and all(len(t) == 8 for t in terms)


@settings(max_examples=300)
@given(near_pairs())
def test_parts_share_a_flat_term_exactly_when_5_of_8_blocks_are_equal(pair: tuple[int, int]) -> None:
    a, b = pair
    shared = set(schema.flat_part_terms(a)) & set(schema.flat_part_terms(b))
    assert bool(shared) == (_equal_blocks(a, b) >= 5)
    # A part sharing m blocks shares C(m, 5) terms: what the clause for a smaller k asks for.
    m = _equal_blocks(a, b)
    assert len(shared) == (0 if m < 5 else {5: 1, 6: 6, 7: 21, 8: 56}[m])


@given(st.lists(u64, max_size=6))
def test_flat_terms_json_is_every_part_s_terms(parts: list[int]) -> None:
    got = json.loads("[" + schema.flat_terms_json(parts) + "]")
    assert got == [t for f in parts for t in schema.flat_part_terms_reference(f)]


def test_document_json_writes_flat_terms_and_no_nested_parts() -> None:
    parts = [0xE28764262E8514DA, 0x0123456789ABCDEF]
    doc = json.loads(bodies.document_json(1, "v", "t", None, (schema.DEFAULT_LAYOUT,), ("d", 10, parts, [5], 0),
                                          schema.FLAT))
    assert schema.PARTS_NAME not in doc[schema.ROOT]
    assert doc[schema.ROOT][schema.PART_TERMS_NAME] == json.loads("[" + schema.flat_terms_json(parts) + "]")
    assert doc[schema.ROOT] == {**doc[schema.ROOT], **schema.levels_object("d", 10, parts, [5], 0, part_layout=schema.FLAT)}
    nested = json.loads(bodies.document_json(1, "v", "t", None, (schema.DEFAULT_LAYOUT,), ("d", 10, parts, [5], 0)))
    assert schema.PART_TERMS_NAME not in nested[schema.ROOT] and len(nested[schema.ROOT][schema.PARTS_NAME]) == 2


def test_a_flat_part_clause_is_one_terms_query_for_k_3() -> None:
    body = bodies.part_search([(0, 0xE28764262E8514DA)], [(0, 7)], "v", part_layout=schema.FLAT)
    clause = body["query"]["bool"]["should"][1]["constant_score"]
    assert clause["_name"] == "p0"
    assert clause["filter"] == {"terms": {schema.PART_TERMS: schema.flat_part_terms(0xE28764262E8514DA)}}
    assert "nested" not in json.dumps(body)


@pytest.mark.parametrize(("k", "needed"), [(2, 6), (1, 21), (0, 56)])
def test_a_smaller_k_asks_for_as_many_terms_as_a_part_sharing_8_minus_k_blocks_has(k: int, needed: int) -> None:
    clause = bodies.flat_part_clause(0xE28764262E8514DA, BlockLayout(8, k))
    assert clause["bool"]["minimum_should_match"] == needed and len(clause["bool"]["should"]) == 56


@pytest.mark.parametrize("layout", [BlockLayout(8, 4), BlockLayout(4, 3), BlockLayout(16, 3)])
def test_flat_parts_refuse_a_layout_their_terms_cannot_answer(layout: BlockLayout) -> None:
    with pytest.raises(ConfigError, match="5 equal"):
        bodies.flat_part_clause(1, layout)


def test_new_indices_record_quad_parts_and_their_blocks() -> None:
    assert index_mappings()["_meta"] == {"simdup": {"parts": "quads", "blocks": 8}}
    assert index_mappings((BlockLayout(4, 3),), "nested")["_meta"] == {"simdup": {"parts": "nested", "blocks": 4}}


def _answer(meta: dict | None, parts_mapped: bool = True) -> dict:
    props = {schema.ROOT: {"properties": {schema.PARTS_NAME: {"type": "nested"}} if parts_mapped else {}}}
    return {"mappings": {"properties": props, **({"_meta": meta} if meta is not None else {})}}


def test_the_recorded_layout_of_old_new_and_upgraded_indices() -> None:
    assert index_layout.recorded({"old": _answer(None)}) == ("nested", None)  # made before layouts were recorded
    assert index_layout.recorded({"fresh": _answer(None, parts_mapped=False)}) == ("quads", None)  # new to simdup
    assert index_layout.recorded({"i": _answer({"simdup": {"parts": "flat", "blocks": 4}})}) == ("flat", 4)
    with pytest.raises(StoreError, match="different layouts"):
        index_layout.recorded({"a": _answer(None), "b": _answer({"simdup": {"parts": "flat", "blocks": 8}})})


def test_missing_level_fields_follow_the_recorded_part_layout() -> None:
    for parts, field in [("quads", schema.PART_FPS_NAME), ("flat", schema.PART_TERMS_NAME), ("nested+quads", schema.PART_QUADS_NAME)]:
        full = index_mappings(parts=parts)
        assert missing_level_fields({"i": {"mappings": full}}, (schema.DEFAULT_LAYOUT,)) == {}
        del full["properties"][schema.ROOT]["properties"][field]
        assert missing_level_fields({"i": {"mappings": full}}, (schema.DEFAULT_LAYOUT,)) == {"i": [f"{schema.ROOT}.{field}"]}


@given(st.lists(u64, max_size=5), st.sampled_from([("nested", "flat"), ("nested", "quads"), ("flat", "quads")]))
def test_a_move_writes_the_parts_a_write_in_the_new_layout_would(parts: list[int], move: tuple[str, str]) -> None:
    old, new = move
    source = {schema.ROOT: schema.levels_object("d", 1, parts, [], 0, part_layout=old)}
    update = index_layout.part_update(source, old, new)[schema.ROOT]
    assert update == {**dict.fromkeys(schema.PART_FIELDS[old]), **schema.parts_object(parts, new)}
    assert all(update[f] is None for f in schema.PART_FIELDS[old])


def test_parts_move_only_to_a_later_layout() -> None:
    assert index_layout.later("flat", "nested") and index_layout.later("quads", "nested") and index_layout.later("quads", "flat")
    assert not index_layout.later("nested", "flat") and not index_layout.later("flat", "quads")
    assert index_layout.searched("flat+quads") == ("flat", "quads") and index_layout.written("flat+quads") == "quads"
    assert index_layout.written("nested") == "nested"


@settings(max_examples=200)
@given(near_pairs())
def test_the_terms_document_layout_finds_exactly_the_fingerprints_sharing_5_of_8_blocks(pair: tuple[int, int]) -> None:
    a, b = pair
    query = bodies.candidate_terms_query(a, "v")
    (terms, version) = query["bool"]["filter"]
    assert version == {"term": {schema.VERSION: "v"}}
    stored = json.loads(bodies.document_json(b, "v", None, None, (schema.DEFAULT_LAYOUT,), doc_terms=True))
    hit = bool(set(terms["terms"][schema.DOC_TERMS]) & set(stored[schema.ROOT][schema.DOC_TERMS_NAME]))
    assert hit == (_equal_blocks(a, b) >= 5)
    assert (a ^ b).bit_count() > 3 or hit  # exact for distance <= 3


def test_the_terms_layout_is_recorded() -> None:
    assert index_mappings(doc_terms=True)["_meta"] == {"simdup": {"parts": "quads", "blocks": 8, "doc_terms": True}}
    assert schema.doc_terms_of(index_mappings(doc_terms=True)["_meta"]) and not schema.doc_terms_of(index_mappings()["_meta"])


@given(u64)
def test_quad_terms_are_the_reference(fingerprint: int) -> None:
    terms = schema.quad_part_terms(fingerprint)
    assert terms == schema.quad_part_terms_reference(fingerprint)
    assert len(terms) == 14 == len(set(terms)) and all(len(t) == 6 for t in terms)


@settings(max_examples=300)
@given(near_pairs())
def test_parts_sharing_5_of_8_blocks_share_a_quad_and_the_check_keeps_exactly_them(pair: tuple[int, int]) -> None:
    a, b = pair
    shared = set(schema.quad_part_terms(a)) & set(schema.quad_part_terms(b))
    assert _equal_blocks(a, b) < 5 or shared  # no part sharing 5 blocks is missed
    assert not shared or _equal_blocks(a, b) >= 4  # a quad is 4 equal blocks
    hit = {"fields": {schema.PART_FPS: [f"{a ^ (2**64 - 1):016x}", f"{b:016x}"]}}  # another part, unlike a in every block
    assert bodies.checked(hit, frozenset({3}), {3: a}, 5) == (frozenset({3}) if _equal_blocks(a, b) >= 5 else frozenset())


def test_a_hit_without_part_fingerprints_keeps_what_it_matched() -> None:
    # flat or nested parts, while an index moves to quads: their terms are exact
    assert bodies.checked({"fields": {}}, frozenset({0, 2}), {0: 1, 2: 2}, 5) == {0, 2}


@given(st.lists(u64, max_size=6))
def test_quad_terms_json_is_every_part_s_terms_and_the_flat_terms_give_the_parts_back(parts: list[int]) -> None:
    assert json.loads("[" + schema.quad_terms_json(parts) + "]") == [t for f in parts for t in schema.quad_part_terms_reference(f)]
    assert json.loads("[" + schema.part_fps_json(parts) + "]") == [f"{f:016x}" for f in parts]
    assert schema.flat_part_fingerprints([t for f in parts for t in schema.flat_part_terms(f)]) == parts


def test_document_json_writes_quad_terms_and_part_fingerprints() -> None:
    parts = [0xE28764262E8514DA, 7]
    doc = json.loads(bodies.document_json(1, "v", "t", None, (schema.DEFAULT_LAYOUT,), ("d", 10, parts, [5], 0),
                                          schema.QUADS))
    assert doc[schema.ROOT] == {**doc[schema.ROOT], **schema.levels_object("d", 10, parts, [5], 0, part_layout="quads")}
    assert schema.PART_TERMS_NAME not in doc[schema.ROOT] and schema.PARTS_NAME not in doc[schema.ROOT]


def test_a_quad_part_search_asks_for_the_part_fingerprints_and_either_layout_while_moving() -> None:
    body = bodies.part_search([(0, 0xE28764262E8514DA)], [], "v", part_layout="quads")
    assert body["docvalue_fields"] == [schema.UNITS, schema.PART_FPS]
    clause = body["query"]["bool"]["should"][0]["constant_score"]
    assert clause["filter"] == {"terms": {schema.PART_QUADS: schema.quad_part_terms(0xE28764262E8514DA)}}
    moving = bodies.part_search([(0, 5)], [], "v", part_layout="flat+quads")["query"]["bool"]["should"][0]
    assert moving["constant_score"]["filter"]["bool"]["should"] == [bodies.flat_part_clause(5), bodies.quad_part_clause(5)]
    assert bodies.part_search([(0, 5)], [], "v", part_layout="flat")["docvalue_fields"] == [schema.UNITS]
