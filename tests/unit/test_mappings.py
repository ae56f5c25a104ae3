"""The shipped mappings agree with schema.py: a field renamed in one place fails here."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es import schema
from simdup_es.config import BlockLayout
from simdup_es.store import elasticsearch as ess

MAPPINGS = resources.files("simdup_es.mappings")


def _json(name: str) -> dict:
    return json.loads(MAPPINGS.joinpath(name).read_text(encoding="utf-8"))


def _field(properties: dict, dotted: str) -> dict:
    """The mapping of ``a.b.c`` in nested ``properties``; KeyError if absent."""
    *parents, leaf = dotted.split(".")
    for name in parents:
        properties = properties[name]["properties"]
    return properties[leaf]


def test_both_templates_ship_in_the_package() -> None:
    names = {p.name for p in MAPPINGS.iterdir()}
    assert {"component-template.json", "index-template.json"} <= names


def test_component_template_has_every_fingerprint_field_as_keyword() -> None:
    props = _json("component-template.json")["template"]["mappings"]["properties"]
    wanted = [schema.FP, schema.VERSION] + [schema.block_field(schema.DEFAULT_LAYOUT, j) for j in range(8)]
    for dotted in wanted:
        assert _field(props, dotted)["type"] == "keyword", dotted
    assert _field(props, schema.ERROR)["type"] == "keyword"
    assert props[schema.GROUP]["type"] == "keyword" and props[schema.GROUP_SIZE]["type"] == "integer"
    assert props[schema.GROUP_KIND]["type"] == "keyword"  # Kibana filters and aggregates on it
    # ... and nothing else: a stale field name would linger here unnoticed.
    assert set(props) == {schema.ROOT, schema.GROUP, schema.GROUP_SIZE, schema.GROUP_KIND}
    levels = {schema.ID, schema.UNITS, schema.PARTS_CUT, schema.KEYS, schema.PARTS, schema.PART_TERMS, schema.DOC_TERMS,
              schema.PART_QUADS, schema.PART_FPS}
    assert {f"{schema.ROOT}.{name}" for name in props[schema.ROOT]["properties"]} == set(wanted) | {schema.ERROR} | levels


def test_level_fields_follow_the_schema() -> None:
    props = _json("component-template.json")["template"]["mappings"]["properties"]
    assert _field(props, schema.KEYS)["type"] == "keyword" and _field(props, schema.KEYS)["doc_values"] is False
    # The candidates' tie order sorts on the id and reads the units: doc values, no index needed.
    assert _field(props, schema.ID) == {"type": "keyword", "index": False}
    assert _field(props, schema.UNITS) == {"type": "integer", "index": False}
    assert _field(props, schema.PARTS_CUT)["type"] == "integer"
    parts = _field(props, schema.PARTS)
    assert parts["type"] == "nested"  # 5 of 8 blocks within one part, not across parts
    fields = [schema.part_block_field(schema.DEFAULT_LAYOUT, j) for j in range(8)]
    assert {f"{schema.PARTS}.{name}" for name in parts["properties"]} == set(fields)
    assert all(_field(props, f) == _field(props, schema.block_field(schema.DEFAULT_LAYOUT, 0)) for f in fields)


def test_the_level_terms_schema_writes_fit_the_mapping() -> None:
    obj = schema.levels_object("doc-1", 120, [0xE28764262E8514DA], [1, 2**64 - 1], 0)
    props = _json("component-template.json")["template"]["mappings"]["properties"][schema.ROOT]["properties"]
    assert set(obj) == set(schema.LEVEL_NAMES) and set(obj) <= set(props)
    assert obj[schema.KEYS_NAME] == ["0000000000000001", "ffffffffffffffff"]
    (part,) = obj[schema.PARTS_NAME]
    assert set(part) == set(props[schema.PARTS_NAME]["properties"])
    assert part == {schema.block_name(schema.DEFAULT_LAYOUT, j): v for j, v in enumerate(("da", "14", "85", "2e", "26", "64", "87", "e2"))}


def test_block_fields_are_for_term_matching_only() -> None:
    props = _json("component-template.json")["template"]["mappings"]["properties"]
    for j in range(schema.DEFAULT_LAYOUT.blocks):
        mapping = _field(props, schema.block_field(schema.DEFAULT_LAYOUT, j))
        assert mapping["index_options"] == "docs" and mapping["norms"] is False and mapping["doc_values"] is False
    # The re-rank reads the full fingerprint from doc values.
    assert _field(props, schema.FP).get("doc_values", True) is True


def test_the_block_terms_schema_writes_fit_the_mapping() -> None:
    obj = schema.fingerprint_object(0xE28764262E8514DA, "1.test")
    props = _json("component-template.json")["template"]["mappings"]["properties"][schema.ROOT]["properties"]
    assert set(obj) == set(props) - {schema.ERROR.split(".")[1], schema.DOC_TERMS_NAME} - set(schema.LEVEL_NAMES) - {
        f for fields in schema.PART_FIELDS.values() for f in fields}
    assert all(isinstance(v, str) for v in obj.values())


@pytest.mark.parametrize("layout", [BlockLayout(4, 3), BlockLayout(16, 3), BlockLayout(2, 1)])
def test_other_layouts_get_keyword_fields_from_the_dynamic_template(layout: BlockLayout) -> None:
    entry, parts_entry = _json("component-template.json")["template"]["mappings"]["dynamic_templates"]
    (template,) = entry.values()
    (parts_template,) = parts_entry.values()
    assert parts_template["mapping"] == template["mapping"]
    for j in range(layout.blocks):
        assert schema.part_block_field(layout, j).startswith(parts_template["path_match"].removesuffix("*"))
        assert not schema.part_block_field(layout, j).startswith(template["path_match"].removesuffix("*"))
    assert template["mapping"]["type"] == "keyword"
    prefix = template["path_match"].removesuffix("*")
    assert template["path_match"].endswith("*") and template["match_mapping_type"] == "string"
    for j in range(layout.blocks):
        assert schema.block_field(layout, j).startswith(prefix)
    assert not schema.FP.startswith(prefix) and not schema.VERSION.startswith(prefix)


def test_index_template_composes_the_component_and_adds_title_and_text() -> None:
    body = _json("index-template.json")
    assert body["composed_of"] == [ess.COMPONENT_TEMPLATE]
    assert all(p.startswith("simdup-") for p in body["index_patterns"])
    mappings = body["template"]["mappings"]
    assert mappings["_source"]["enabled"] is True  # the re-ranker reads the text back
    for name in ("title", "text"):
        assert mappings["properties"][name] == {"type": "text", "analyzer": "standard"}
    # Shards and replicas: nothing a cluster owner would not expect.
    settings = body["template"].get("settings", {}).get("index", {})
    assert "number_of_shards" not in settings and "number_of_replicas" not in settings


def test_explicit_mappings_match_the_templates() -> None:
    full = ess.index_mappings((schema.DEFAULT_LAYOUT, BlockLayout(4, 3)))
    for j in range(8):
        assert _field(full["properties"], schema.block_field(schema.DEFAULT_LAYOUT, j))["type"] == "keyword"
    for j in range(4):
        assert _field(full["properties"], schema.block_field(BlockLayout(4, 3), j))["type"] == "keyword"
        assert _field(full["properties"], schema.part_block_field(BlockLayout(4, 3), j))["type"] == "keyword"
    assert _field(full["properties"], "text")["type"] == "text"
    assert full["dynamic_templates"] == _json("component-template.json")["template"]["mappings"]["dynamic_templates"]


def test_missing_level_fields_names_what_an_old_index_lacks() -> None:
    full = ess.index_mappings()
    assert ess.missing_level_fields({"new": {"mappings": full}}, (schema.DEFAULT_LAYOUT,)) == {}
    old = json.loads(json.dumps(full))
    del old["_meta"]  # made before layouts were recorded: nested parts
    for name in schema.LEVEL_NAMES:
        del old["properties"][schema.ROOT]["properties"][name]
    missing = ess.missing_level_fields({"old": {"mappings": old}}, (schema.DEFAULT_LAYOUT,))["old"]
    assert {schema.ID, schema.UNITS, schema.PARTS_CUT, schema.KEYS, schema.PARTS} <= set(missing)
    # Written without the mapping, parts became a plain object: refused too.
    old["properties"][schema.ROOT]["properties"][schema.PARTS_NAME] = {"properties": {"b0": {"type": "keyword"}}}
    assert schema.PARTS in ess.missing_level_fields({"old": {"mappings": old}}, (schema.DEFAULT_LAYOUT,))["old"]


def test_the_group_fields_are_in_every_index_simdup_creates() -> None:
    """``dup_kind`` with the group fields: an index made by ``setup`` maps them whatever its name."""
    from simdup_es.es.mappings import group_mapping, index_mappings

    assert set(group_mapping()) == {schema.GROUP, schema.GROUP_SIZE, schema.GROUP_KIND}
    props = index_mappings()["properties"]
    assert all(props[name] == mapping for name, mapping in group_mapping().items())


_LAYOUTS = st.lists(st.sampled_from([BlockLayout(b, k) for b in (1, 2, 4, 8, 16, 32, 64) for k in (0, b // 2)]),
                    min_size=1, max_size=3, unique=True).map(tuple)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=2**64 - 1), _LAYOUTS)
def test_block_terms_are_the_reference(fingerprint: int, layouts: tuple[BlockLayout, ...]) -> None:
    assert schema.block_terms(fingerprint, layouts) == schema.block_terms_reference(fingerprint, layouts)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=2**64 - 1), max_size=60))
def test_key_terms_are_each_key_term(keys: list[int]) -> None:
    assert schema.key_terms(keys) == [schema.key_term(k) for k in keys]
