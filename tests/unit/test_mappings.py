"""The shipped mappings agree with keys.py: a field renamed in one place fails here; an index's record is read back."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from simdup_es import keys
from simdup_es.errors import StoreError
from simdup_es.es import mappings as es_mappings

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


def test_component_template_has_every_field_keys_writes_and_nothing_else() -> None:
    props = _json("component-template.json")["template"]["mappings"]["properties"]
    wanted = [keys.FP, keys.VERSION, keys.ERROR, keys.DOC_TERMS, keys.KEYS, keys.PART_QUADS] + [
        keys.block_field(j) for j in range(8)]
    for dotted in wanted:
        assert _field(props, dotted)["type"] == "keyword", dotted
    assert props[keys.GROUP]["type"] == "keyword" and props[keys.GROUP_SIZE]["type"] == "integer"
    assert props[keys.GROUP_KIND]["type"] == "keyword"  # Kibana filters and aggregates on it
    # ... and nothing else: a stale field name would linger here unnoticed.
    assert set(props) == {keys.ROOT, keys.GROUP, keys.GROUP_SIZE, keys.GROUP_KIND}
    levels = {f"{keys.ROOT}.{name}" for name in keys.LEVEL_NAMES}
    assert {f"{keys.ROOT}.{name}" for name in props[keys.ROOT]["properties"]} == set(wanted) | levels | {keys.UNIFIED}
    # New indices made from the template record this schema.
    assert _json("component-template.json")["template"]["mappings"]["_meta"] == keys.index_meta()


def test_level_and_key_fields_are_mapped_for_what_is_asked_of_them() -> None:
    props = _json("component-template.json")["template"]["mappings"]["properties"]
    for field in (keys.KEYS, keys.PART_QUADS, keys.DOC_TERMS, *(keys.block_field(j) for j in range(8))):
        mapping = _field(props, field)  # term matching only
        assert mapping["index_options"] == "docs" and mapping["norms"] is False and mapping["doc_values"] is False
    # The re-rank reads the full fingerprint from doc values; the part check, the part fingerprints.
    assert _field(props, keys.FP).get("doc_values", True) is True
    assert _field(props, keys.PART_FPS) == {"type": "keyword", "index": False}
    # The candidates' tie order sorts on the id and reads the units: doc values, no index needed.
    assert _field(props, keys.ID) == {"type": "keyword", "index": False}
    assert _field(props, keys.UNITS) == {"type": "integer", "index": False}
    assert _field(props, keys.PARTS_CUT)["type"] == "integer"
    # The unified text is only read back from _source: neither indexed nor a doc value (and so of any length).
    assert _field(props, keys.UNIFIED) == {"type": "keyword", "index": False, "doc_values": False}


@pytest.mark.parametrize("layout", keys.LAYOUTS)
def test_what_keys_writes_fits_the_mapping(layout: str) -> None:
    props = _json("component-template.json")["template"]["mappings"]["properties"][keys.ROOT]["properties"]
    obj = {**keys.fingerprint_object(0xE28764262E8514DA, "1.test", layout),
           **keys.levels_object("doc-1", 120, [0xE28764262E8514DA], [1, 2**64 - 1], 0)}
    assert set(obj) <= set(props) and set(props) - set(obj) == {"error", keys.UNIFIED_NAME} | (
        {keys.DOC_TERMS_NAME} if layout == "8x8" else set())
    assert obj[keys.KEYS_NAME] == ["AAAAAAA", "_______"] and obj[keys.PART_FPS_NAME] == ["e28764262e8514da"]
    assert [obj[name] for name in keys.BLOCK_NAMES] == ["da", "14", "85", "2e", "26", "64", "87", "e2"]


def test_index_template_composes_the_component_and_adds_title_and_text() -> None:
    body = _json("index-template.json")
    assert body["composed_of"] == [es_mappings.COMPONENT_TEMPLATE]
    assert all(p.startswith("simdup-") for p in body["index_patterns"])
    mappings = body["template"]["mappings"]
    assert mappings["_source"]["enabled"] is True  # the re-ranker reads the text back
    for name in ("title", "text"):
        assert mappings["properties"][name] == {"type": "text", "analyzer": "standard"}
    # Shards and replicas: nothing a cluster owner would not expect.
    settings = body["template"].get("settings", {}).get("index", {})
    assert "number_of_shards" not in settings and "number_of_replicas" not in settings


def test_explicit_mappings_match_the_templates_and_record_the_layout() -> None:
    for layout in keys.LAYOUTS:
        full = es_mappings.index_mappings(layout)
        assert full["properties"][keys.ROOT] == _json("component-template.json")["template"]["mappings"]["properties"][keys.ROOT]
        assert _field(full["properties"], "text")["type"] == "text"
        assert full["_meta"] == {"simdup": {"schema": keys.SCHEMA, "layout": layout}}
        assert es_mappings.layout_of({"i": {"mappings": full}}) == layout


def test_the_group_fields_are_in_every_index_simdup_creates() -> None:
    """``dup_kind`` with the group fields: an index made by ``setup`` maps them whatever its name."""
    assert set(es_mappings.group_mapping()) == {keys.GROUP, keys.GROUP_SIZE, keys.GROUP_KIND}
    props = es_mappings.index_mappings()["properties"]
    assert all(props[name] == mapping for name, mapping in es_mappings.group_mapping().items())


def _answer(meta: dict | None, simdup_fields: bool = True) -> dict:
    props = {keys.ROOT: {"properties": {"fp": {"type": "keyword"}}}} if simdup_fields else {"text": {"type": "text"}}
    return {"mappings": {"properties": props, **({"_meta": meta} if meta is not None else {})}}


def test_an_index_of_another_schema_or_none_is_refused_with_the_way_to_replace_it() -> None:
    assert es_mappings.layout_of({"a": _answer(keys.index_meta("terms")), "b": _answer(keys.index_meta("terms"))}) == "terms"
    for meta in (None, {"simdup": {"parts": "flat", "blocks": 8}}, {"simdup": {"schema": keys.SCHEMA + 1}}):
        with pytest.raises(StoreError, match="(earlier|another) build of simdup-es.*make a new index.*alias") as caught:
            es_mappings.layout_of({"ok": _answer(keys.index_meta()), "old": _answer(meta)})
        assert "'old'" in str(caught.value)
    with pytest.raises(StoreError, match="no simdup fields: fingerprint its documents with 'simdup backfill"):
        es_mappings.layout_of({"theirs": _answer(None, simdup_fields=False)})
    with pytest.raises(StoreError, match="different document layouts"):
        es_mappings.layout_of({"a": _answer(keys.index_meta("8x8")), "b": _answer(keys.index_meta("terms"))})
    assert es_mappings.new_to_simdup(_answer(None, simdup_fields=False)["mappings"])
    assert not es_mappings.new_to_simdup(_answer(None)["mappings"])
