"""The Kibana saved objects (kibana/saved_objects.ndjson) are well formed and use only mapped fields.

No Kibana runs here, so this checks what an import into Kibana 8.19 would trip over:
the NDJSON shape, the migration versions, that every reference resolves inside the
file, and that every field an object names (saved search columns, sort and filters,
Lens columns, formulas and KQL) exists in the shipped mappings (mappings/*.json) with a
type the operation can use. The one exception is the date field of the "duplicate share
over time" panel: simdup's mappings have no date field, so that panel names the
placeholder ``@timestamp`` (kibana/README.md tells users to point it at theirs).

The OpenSearch Dashboards variant (kibana/saved_objects.opensearch-dashboards.ndjson) gets
the same checks against what OpenSearch Dashboards (a fork of Kibana 7.10) knows: its
saved object types, their strict attribute mappings and migration versions, its
dashboard panel format, and the fields its Visualize and Vega panels name.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any
from collections.abc import Iterator

import pytest

from simdup_es import keys
from simdup_es.store import elasticsearch as ess

ROOT = Path(__file__).resolve().parents[2]
NDJSON = ROOT / "kibana" / "saved_objects.ndjson"
OSD_NDJSON = ROOT / "kibana" / "saved_objects.opensearch-dashboards.ndjson"
README = ROOT / "kibana" / "README.md"
IMPORT_SCRIPT = ROOT / "kibana" / "import.sh"
COMPOSE = ROOT / "docker" / "compose.yml"
MAPPING_FILES = [ROOT / "mappings" / "component-template.json", ROOT / "mappings" / "index-template.json"]

DATA_VIEW = "simdup-data-view"
EXPECTED = {
    ("index-pattern", DATA_VIEW),
    ("search", "simdup-duplicate-groups"),
    ("lens", "simdup-largest-groups"),
    ("lens", "simdup-duplicate-kinds"),
    ("lens", "simdup-duplicate-share"),
    ("lens", "simdup-duplicate-share-over-time"),
    ("dashboard", "simdup-dashboard"),
}
# Kibana 8.19 refuses a document whose version is newer than the ones it knows and
# migrates older ones up. Each value is the version the object is written in: the
# latest migration of index-pattern (8.0.0) and lens (8.9.0), model version 5 of search
# (10.5.0, in exports since early 2025) and model version 2 of dashboard (10.2.0, since 8.14; 8.19
# adds only the optional `sections`). coreMigrationVersion is 8.8.0 for every 8.8+ object.
CORE_MIGRATION_VERSION = "8.8.0"
TYPE_MIGRATION_VERSION = {"index-pattern": "8.0.0", "search": "10.5.0", "lens": "8.9.0", "dashboard": "10.2.0"}
# Attributes the field walker below understands; a new one must be taught to it first.
KNOWN_ATTRIBUTES = {
    "index-pattern": {"title", "name", "timeFieldName", "fieldAttrs", "fieldFormatMap"},
    "search": {"title", "description", "columns", "sort", "grid", "hideChart", "isTextBasedQuery",
               "kibanaSavedObjectMeta"},
    "lens": {"title", "description", "visualizationType", "state"},
    "dashboard": {"title", "description", "panelsJSON", "optionsJSON", "timeRestore", "timeFrom", "timeTo",
                  "refreshInterval", "kibanaSavedObjectMeta", "version"},
}

# The user's date field: only here, only as the x axis of the over-time panel.
DATE_PLACEHOLDER = "@timestamp"
DATE_PLACEHOLDER_USE = ("simdup-duplicate-share-over-time", "date_histogram")

RECORDS = "___records___"  # Lens's pseudo-field for count()
NUMERIC = {"byte", "short", "integer", "long", "unsigned_long", "float", "half_float", "double", "scaled_float"}
AGGREGATABLE = NUMERIC | {"keyword", "constant_keyword", "boolean", "date", "date_nanos", "ip"}
# What each use needs of a field's mapping ("any" = just that it exists).
NEEDS = {
    "terms": "aggregatable",
    "sort": "aggregatable",
    "max": "numeric", "min": "numeric", "sum": "numeric", "average": "numeric", "median": "numeric",
    "unique_count": "aggregatable",
    "cardinality": "aggregatable",
    "date_histogram": "date",
    "time_field": "date",
    "column": "any",
    "kql": "any",
    "exists": "any",
    "label": "any",
    "format": "any",
}
# Fields every index has besides its mapping: the saved search shows _id (a link to the report).
META_FIELDS = {"_id": {"type": "keyword", "doc_values": False}}


# --- loading -------------------------------------------------------------------------------


def _lines() -> list[str]:
    return NDJSON.read_text(encoding="utf-8").splitlines()


def _objects() -> list[dict[str, Any]]:
    return [json.loads(line) for line in _lines()]


def _by_id() -> dict[str, dict[str, Any]]:
    return {obj["id"]: obj for obj in _objects()}


def _mapped_fields() -> tuple[dict[str, dict], list[tuple[str, dict]]]:
    """Dotted field path -> mapping, from both templates; plus dynamic-template path patterns."""
    fields: dict[str, dict] = {}
    dynamic: list[tuple[str, dict]] = []

    def walk(properties: dict, prefix: str) -> None:
        for name, mapping in properties.items():
            path = f"{prefix}{name}"
            if "properties" in mapping:
                walk(mapping["properties"], f"{path}.")
            else:
                fields[path] = mapping
                for sub, sub_mapping in mapping.get("fields", {}).items():
                    fields[f"{path}.{sub}"] = sub_mapping

    for path in MAPPING_FILES:
        mappings = json.loads(path.read_text(encoding="utf-8"))["template"]["mappings"]
        walk(mappings.get("properties", {}), "")
        for entry in mappings.get("dynamic_templates", []):
            for spec in entry.values():
                if "path_match" in spec:
                    dynamic.append((spec["path_match"], spec["mapping"]))
    return fields, dynamic


def _mapping_of(field: str) -> dict | None:
    if field in META_FIELDS:
        return META_FIELDS[field]
    fields, dynamic = _mapped_fields()
    if field in fields:
        return fields[field]
    return next((mapping for pattern, mapping in dynamic if fnmatch.fnmatchcase(field, pattern)), None)


# --- which fields an object names ----------------------------------------------------------

_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
_KQL_FIELD = re.compile(r"([A-Za-z_@][\w.@-]*)\s*(?::|<=|>=|<|>)")
_FORMULA_QUERY = re.compile(r"\b(?:kql|lucene)\s*=\s*'((?:[^'\\]|\\.)*)'")
_FORMULA_FIELD = re.compile(r"\b(\w+)\(\s*([A-Za-z_@][\w.@-]*)\s*[,)]")


def _kql_fields(query: str) -> list[str]:
    """Field names in a KQL query of the simple ``field: value`` / ``field >= value`` kind."""
    return _KQL_FIELD.findall(_QUOTED.sub('""', query))


def _formula_fields(formula: str) -> Iterator[tuple[str, str]]:
    """(use, field) for a Lens formula: ``max(dup_group_size)``, ``count(kql='dup_group:*')``."""
    for query in _FORMULA_QUERY.findall(formula):
        yield from (("kql", field) for field in _kql_fields(query))
    yield from _FORMULA_FIELD.findall(_FORMULA_QUERY.sub("", formula))


def _query_fields(query: dict | None) -> Iterator[tuple[str, str]]:
    if query and query.get("query"):
        assert query.get("language") == "kuery", f"only KQL is checked, got {query}"
        yield from (("kql", field) for field in _kql_fields(query["query"]))


def _filter_fields(filters: list[dict]) -> Iterator[tuple[str, str]]:
    for flt in filters:
        meta = flt.get("meta", {})
        if meta.get("key"):
            yield "exists" if meta.get("type") == "exists" else "kql", meta["key"]
        for clause, body in flt.get("query", {}).items():
            if clause == "exists":
                yield "exists", body["field"]
            else:  # term, terms, range, match, match_phrase: {field: ...}
                yield from (("kql", field) for field in body)


def _search_source_fields(attributes: dict) -> Iterator[tuple[str, str]]:
    source = json.loads(attributes["kibanaSavedObjectMeta"]["searchSourceJSON"])
    yield from _query_fields(source.get("query"))
    yield from _filter_fields(source.get("filter", []))


def referenced_fields(obj: dict) -> list[tuple[str, str]]:
    """Every (use, field) an object names. Uses are keys of NEEDS (Lens operations included)."""
    attributes = obj["attributes"]
    unknown = set(attributes) - KNOWN_ATTRIBUTES[obj["type"]]
    assert not unknown, f"{obj['id']}: attributes {sorted(unknown)} are not checked for fields; teach referenced_fields"
    found: list[tuple[str, str]] = []
    if obj["type"] == "index-pattern":
        if attributes.get("timeFieldName"):
            found.append(("time_field", attributes["timeFieldName"]))
        found += [("label", field) for field in json.loads(attributes.get("fieldAttrs", "{}"))]
        found += [("format", field) for field in json.loads(attributes.get("fieldFormatMap", "{}"))]
    elif obj["type"] == "search":
        found += [("column", column) for column in attributes["columns"]]
        found += [("sort", field) for field, _direction in attributes["sort"]]
        found += _search_source_fields(attributes)
    elif obj["type"] == "lens":
        state = attributes["state"]
        found += _query_fields(state["query"])
        found += _filter_fields(state["filters"])
        for layer in state["datasourceStates"]["formBased"]["layers"].values():
            for column in layer["columns"].values():
                if column.get("sourceField", RECORDS) != RECORDS:
                    found.append((column["operationType"], column["sourceField"]))
                found += _query_fields(column.get("filter"))
                params = column.get("params", {})
                found += _formula_fields(params.get("formula", ""))
                found += [("terms", field) for field in params.get("secondaryFields", [])]
    elif obj["type"] == "dashboard":
        found += _search_source_fields(attributes)
        for panel in json.loads(attributes["panelsJSON"]):
            # By-value panels would carry their own Lens state; these are by reference.
            assert panel.get("embeddableConfig", {}).get("attributes") is None, "by-value panels are not checked"
    return found


def _all_referenced() -> list[tuple[str, str, str]]:
    return [(obj["id"], use, field) for obj in _objects() for use, field in referenced_fields(obj)]


# --- structure -----------------------------------------------------------------------------


def test_every_line_is_a_saved_object() -> None:
    lines = _lines()
    assert lines, "kibana/saved_objects.ndjson is empty"
    for number, line in enumerate(lines, 1):
        assert line.strip(), f"line {number} is blank"
        obj = json.loads(line)
        assert isinstance(obj, dict), f"line {number}"
        for key in ("id", "type", "attributes", "references"):
            assert key in obj, f"line {number} has no {key}"
        assert isinstance(obj["attributes"], dict), f"line {number}"
        assert obj["attributes"].get("title"), f"line {number}: the import needs a title"
        assert isinstance(obj["references"], list)


def test_the_objects_are_the_expected_ones_with_stable_ids() -> None:
    objects = _objects()
    assert Counter(obj["id"] for obj in objects).most_common(1)[0][1] == 1, "duplicate ids"
    assert {(obj["type"], obj["id"]) for obj in objects} == EXPECTED


@pytest.mark.parametrize("obj", _objects(), ids=lambda obj: obj["id"])
def test_migration_versions_are_ones_kibana_8_19_knows(obj: dict) -> None:
    assert obj["coreMigrationVersion"] == CORE_MIGRATION_VERSION
    assert obj["typeMigrationVersion"] == TYPE_MIGRATION_VERSION[obj["type"]]
    assert "migrationVersion" not in obj, "the pre-8.8 field; use typeMigrationVersion"


def test_references_resolve_to_objects_in_the_file() -> None:
    present = {(obj["type"], obj["id"]) for obj in _objects()}
    for obj in _objects():
        names = [ref["name"] for ref in obj["references"]]
        assert len(names) == len(set(names)), f"{obj['id']}: duplicate reference names"
        for ref in obj["references"]:
            assert (ref["type"], ref["id"]) in present, f"{obj['id']} references missing {ref['type']} {ref['id']}"


def test_the_data_view_matches_simdup_indices() -> None:
    view = _by_id()[DATA_VIEW]["attributes"]
    index_template = json.loads(MAPPING_FILES[1].read_text(encoding="utf-8"))
    assert view["title"] in index_template["index_patterns"]
    # No time field: simdup's own mappings have no date (kibana/README.md says how to add one).
    assert "timeFieldName" not in view


def test_the_saved_search_lists_documents_with_a_group() -> None:
    search = _by_id()["simdup-duplicate-groups"]
    attributes = search["attributes"]
    assert attributes["columns"] == ["_id", "title", keys.GROUP, keys.GROUP_SIZE, keys.GROUP_KIND]
    assert attributes["sort"][0] == [keys.GROUP_SIZE, "desc"]
    source = json.loads(attributes["kibanaSavedObjectMeta"]["searchSourceJSON"])
    assert [f["query"] for f in source["filter"]] == [{"exists": {"field": keys.GROUP}}]
    refs = {ref["name"]: ref for ref in search["references"]}
    names = [source["indexRefName"]] + [f["meta"]["indexRefName"] for f in source["filter"]]
    for name in names:
        assert refs[name]["id"] == DATA_VIEW, name


def _lens_layers(obj: dict) -> dict[str, dict]:
    return obj["attributes"]["state"]["datasourceStates"]["formBased"]["layers"]


def _accessors(visualization: dict) -> set[str]:
    """Column ids a Lens visualization state points at (table, metric, XY)."""
    ids = {c["columnId"] for c in visualization.get("columns", [])}
    single = ("metricAccessor", "secondaryMetricAccessor", "maxAccessor", "breakdownByAccessor")
    ids |= {visualization[k] for k in single if k in visualization}
    for layer in visualization.get("layers", []):
        ids |= set(layer.get("accessors", [])) | ({layer["xAccessor"]} if "xAccessor" in layer else set())
        ids |= {layer["splitAccessor"]} if "splitAccessor" in layer else set()
    return ids


@pytest.mark.parametrize("lens_id", sorted(i for t, i in EXPECTED if t == "lens"))
def test_lens_state_is_self_consistent(lens_id: str) -> None:
    lens = _by_id()[lens_id]
    refs = {ref["name"]: ref for ref in lens["references"]}
    columns: dict[str, dict] = {}
    for layer_id, layer in _lens_layers(lens).items():
        assert refs[f"indexpattern-datasource-layer-{layer_id}"]["id"] == DATA_VIEW
        assert sorted(layer["columnOrder"]) == sorted(layer["columns"]), f"{lens_id}/{layer_id}: columnOrder"
        columns.update(layer["columns"])
    for column_id, column in columns.items():
        for ref in column.get("references", []):
            assert ref in columns, f"{lens_id}: column {column_id} references missing {ref}"
        order_by = column.get("params", {}).get("orderBy", {})
        if order_by.get("type") == "column":
            assert order_by["columnId"] in columns
    visualization = lens["attributes"]["state"]["visualization"]
    assert _accessors(visualization) and _accessors(visualization) <= set(columns), f"{lens_id}: visualization columns"
    layer_ids = {visualization.get("layerId")} | {layer["layerId"] for layer in visualization.get("layers", [])}
    assert layer_ids - {None} == set(_lens_layers(lens)), f"{lens_id}: visualization and datasource layers differ"


def test_largest_groups_is_a_terms_on_dup_group_by_count() -> None:
    (layer,) = _lens_layers(_by_id()["simdup-largest-groups"]).values()
    (terms,) = [c for c in layer["columns"].values() if c["operationType"] == "terms"]
    assert terms["sourceField"] == keys.GROUP
    assert terms["params"]["orderDirection"] == "desc"
    assert layer["columns"][terms["params"]["orderBy"]["columnId"]]["operationType"] in {"count", "max"}


def test_duplicate_kinds_is_a_terms_on_dup_kind_with_documents_and_groups() -> None:
    (layer,) = _lens_layers(_by_id()["simdup-duplicate-kinds"]).values()
    by_operation = {c["operationType"]: c for c in layer["columns"].values()}
    assert set(by_operation) == {"terms", "count", "unique_count"}
    assert by_operation["terms"]["sourceField"] == keys.GROUP_KIND
    assert by_operation["unique_count"]["sourceField"] == keys.GROUP
    assert layer["columns"][by_operation["terms"]["params"]["orderBy"]["columnId"]]["operationType"] == "count"


def test_the_data_view_labels_the_group_fields() -> None:
    attrs = json.loads(_by_id()[DATA_VIEW]["attributes"]["fieldAttrs"])
    assert set(attrs) == {keys.GROUP, keys.GROUP_SIZE, keys.GROUP_KIND}
    assert attrs[keys.GROUP_KIND] == {"customLabel": "Duplicate kind"}


@pytest.mark.parametrize("lens_id", ["simdup-duplicate-share", "simdup-duplicate-share-over-time"])
def test_the_share_is_documents_with_a_group_over_all(lens_id: str) -> None:
    (layer,) = _lens_layers(_by_id()[lens_id]).values()
    (formula,) = [c for c in layer["columns"].values() if c["operationType"] == "formula"]
    assert formula["params"]["formula"] == f"count(kql='{keys.GROUP}:*') / count()"
    assert not formula["params"]["isFormulaBroken"]
    counts = [c for c in layer["columns"].values() if c["operationType"] == "count"]
    assert sorted(json.dumps(c.get("filter")) for c in counts) == sorted(
        [json.dumps({"query": f"{keys.GROUP}:*", "language": "kuery"}), "null"]
    )


def test_dashboard_panels_resolve_and_fit_the_grid() -> None:
    dashboard = _by_id()["simdup-dashboard"]
    refs = {ref["name"]: ref for ref in dashboard["references"]}
    panels = json.loads(dashboard["attributes"]["panelsJSON"])
    json.loads(dashboard["attributes"]["optionsJSON"])
    cells: set[tuple[int, int]] = set()
    shown = set()
    for panel in panels:
        ref = refs[f"{panel['panelIndex']}:{panel['panelRefName']}"]
        assert ref["type"] == panel["type"]
        shown.add(ref["id"])
        grid = panel["gridData"]
        assert grid["i"] == panel["panelIndex"] and grid["x"] + grid["w"] <= 48
        xs, ys = range(grid["x"], grid["x"] + grid["w"]), range(grid["y"], grid["y"] + grid["h"])
        area = {(x, y) for x in xs for y in ys}
        assert not cells & area, f"panel {panel['panelIndex']} overlaps another"
        cells |= area
    assert len({p["panelIndex"] for p in panels}) == len(panels)
    assert shown == {i for t, i in EXPECTED if t in {"lens", "search"}}


# --- fields ----------------------------------------------------------------------------------


def test_the_field_walker_sees_the_fields_the_objects_use() -> None:
    fields = {field for _id, _use, field in _all_referenced()}
    assert {"title", keys.GROUP, keys.GROUP_SIZE, keys.GROUP_KIND, DATE_PLACEHOLDER} <= fields


def test_every_referenced_field_is_mapped() -> None:
    missing = sorted(
        {f"{field} (used by {obj_id} as {use})"
         for obj_id, use, field in _all_referenced()
         if field != DATE_PLACEHOLDER and _mapping_of(field) is None}
    )
    assert not missing, (
        "fields not in mappings/component-template.json or mappings/index-template.json: "
        + "; ".join(missing)
    )


def _wrong_types(referenced: list[tuple[str, str, str]]) -> list[str]:
    wrong = []
    for obj_id, use, field in referenced:
        mapping = _mapping_of(field)
        if mapping is None:
            continue  # reported by test_every_referenced_field_is_mapped
        need = NEEDS[use]
        kind = mapping.get("type", "object")
        ok = {
            "any": True,
            "numeric": kind in NUMERIC,
            "date": kind in {"date", "date_nanos"},
            "aggregatable": kind in AGGREGATABLE and mapping.get("doc_values", True) is not False,
        }[need]
        if not ok:
            wrong.append(f"{obj_id} uses {field} ({kind}, doc_values={mapping.get('doc_values', True)}) as {use}")
    return wrong


def test_every_referenced_field_has_a_type_its_use_needs() -> None:
    wrong = _wrong_types(_all_referenced())
    assert not wrong, "; ".join(wrong)


def test_the_date_placeholder_is_used_only_where_documented() -> None:
    uses = [(obj_id, use) for obj_id, use, field in _all_referenced() if field == DATE_PLACEHOLDER]
    assert uses and set(uses) == {DATE_PLACEHOLDER_USE}
    # Nowhere else, not even in a title: kibana/import.sh rewrites it with sed.
    assert all(DATE_PLACEHOLDER not in line for line in _lines() if json.loads(line)["id"] != DATE_PLACEHOLDER_USE[0])
    readme = README.read_text(encoding="utf-8")
    assert DATE_PLACEHOLDER in readme and "SIMDUP_DATE_FIELD" in readme


# --- the import path -----------------------------------------------------------------------


def test_the_import_script_installs_the_templates_the_store_uses() -> None:
    script = IMPORT_SCRIPT.read_text(encoding="utf-8")
    assert f"COMPONENT_TEMPLATE={ess.COMPONENT_TEMPLATE}\n" in script
    assert f"INDEX_TEMPLATE={ess.INDEX_TEMPLATE}\n" in script
    assert "/api/saved_objects/_import?overwrite=true" in script and "kbn-xsrf: true" in script


def test_compose_runs_the_import_with_the_repo_files_read_only() -> None:
    compose = COMPOSE.read_text(encoding="utf-8")
    assert "../kibana:/simdup/kibana:ro" in compose and "../mappings:/simdup/mappings:ro" in compose
    assert "/simdup/kibana/import.sh" in compose
    versions = set(re.findall(r"image: docker\.elastic\.co/\S+:(\S+)", compose))
    assert len(versions) == 1, f"Elasticsearch and Kibana images differ: {versions}"


# --- the OpenSearch Dashboards variant -------------------------------------------------------

# OpenSearch Dashboards has no Lens: the three Lens panels are a Visualize data table and two
# Vega panels there, under the same ids so that links and re-imports line up.
OSD_EXPECTED = {(("visualization" if kind == "lens" else kind), obj_id) for kind, obj_id in EXPECTED}
# The latest migration of each type in OpenSearch Dashboards 2.x/3.x (Kibana 7.10's): an
# object claiming a newer one is refused, an older one is migrated up.
OSD_MIGRATION_VERSION = {"index-pattern": "7.6.0", "search": "7.9.3", "visualization": "7.10.0", "dashboard": "7.9.3"}
# Attributes in each type's mapping there; its saved objects index is strict, so any other
# attribute fails the import (Kibana 8's data view `name`, the saved search's `grid`...).
OSD_ATTRIBUTES = {
    "index-pattern": {"title", "timeFieldName", "fields", "fieldFormatMap", "intervalName", "notExpandable",
                      "sourceFilters", "type", "typeMeta"},
    "search": {"title", "description", "columns", "sort", "columnWidths", "hits", "version", "kibanaSavedObjectMeta"},
    "visualization": {"title", "description", "visState", "uiStateJSON", "savedSearchRefName", "version",
                      "kibanaSavedObjectMeta"},
    "dashboard": {"title", "description", "panelsJSON", "optionsJSON", "timeRestore", "timeFrom", "timeTo",
                  "refreshInterval", "hits", "version", "kibanaSavedObjectMeta"},
}
VEGA_IDS = ["simdup-duplicate-share", "simdup-duplicate-share-over-time"]


def _osd_objects() -> list[dict[str, Any]]:
    return [json.loads(line) for line in OSD_NDJSON.read_text(encoding="utf-8").splitlines()]


def _osd_by_id() -> dict[str, dict[str, Any]]:
    return {obj["id"]: obj for obj in _osd_objects()}


def _vega_spec(obj: dict) -> dict[str, Any]:
    vis_state = json.loads(obj["attributes"]["visState"])
    assert vis_state["type"] == "vega"
    return json.loads(vis_state["params"]["spec"])  # strict JSON, which Vega's HJSON reader accepts


def _query_dsl_fields(node: Any) -> Iterator[tuple[str, str]]:
    """(use, field) for the exists filters and date histograms of a request body."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "exists":
                yield "exists", value["field"]
            elif key == "date_histogram":
                yield "date_histogram", value["field"]
            elif key in {"terms", "max", "min", "sum", "avg"} and "field" in value:
                yield {"avg": "average"}.get(key, key), value["field"]
            yield from _query_dsl_fields(value)
    elif isinstance(node, list):
        for item in node:
            yield from _query_dsl_fields(item)


def osd_referenced_fields(obj: dict) -> list[tuple[str, str]]:
    attributes = obj["attributes"]
    found: list[tuple[str, str]] = []
    if obj["type"] == "search":
        found += [("column", column) for column in attributes["columns"]]
        found += [("sort", field) for field, _direction in attributes["sort"]]
    if obj["type"] == "index-pattern":
        found += [("format", field) for field in json.loads(attributes.get("fieldFormatMap", "{}"))]
    if "kibanaSavedObjectMeta" in attributes:
        source = json.loads(attributes["kibanaSavedObjectMeta"]["searchSourceJSON"])
        found += _query_fields(source.get("query"))
        for flt in source.get("filter", []):  # Kibana 7's filter shape: the clause beside meta
            found += _query_dsl_fields({k: v for k, v in flt.items() if k not in {"meta", "$state"}})
    if obj["type"] == "visualization":
        vis_state = json.loads(attributes["visState"])
        for agg in vis_state["aggs"]:
            if "field" in agg["params"]:
                found.append(({"avg": "average"}.get(agg["type"], agg["type"]), agg["params"]["field"]))
        if vis_state["type"] == "vega":
            spec = _vega_spec(obj)
            found += _query_dsl_fields(spec["data"]["url"]["body"])
            if "%timefield%" in spec["data"]["url"]:
                found.append(("time_field", spec["data"]["url"]["%timefield%"]))
    return found


def _osd_all_referenced() -> list[tuple[str, str, str]]:
    return [(obj["id"], use, field) for obj in _osd_objects() for use, field in osd_referenced_fields(obj)]


def test_osd_objects_are_the_same_ids_as_the_kibana_ones() -> None:
    objects = _osd_objects()
    assert len(objects) == len({obj["id"] for obj in objects}), "duplicate ids"
    assert {(obj["type"], obj["id"]) for obj in objects} == OSD_EXPECTED
    assert {obj["id"] for obj in objects} == {obj["id"] for obj in _objects()}


@pytest.mark.parametrize("obj", _osd_objects(), ids=lambda obj: obj["id"])
def test_osd_objects_use_only_what_opensearch_dashboards_knows(obj: dict) -> None:
    assert set(obj) <= {"id", "type", "attributes", "references", "migrationVersion"}, "Kibana 8 fields"
    assert obj["migrationVersion"] == {obj["type"]: OSD_MIGRATION_VERSION[obj["type"]]}
    assert obj["attributes"].get("title"), "the import needs a title"
    unknown = set(obj["attributes"]) - OSD_ATTRIBUTES[obj["type"]]
    assert not unknown, f"not in OpenSearch Dashboards' strict mapping: {sorted(unknown)}"


def test_the_kibana_file_would_not_import_into_opensearch_dashboards() -> None:
    """Why the variant exists: Lens, and attributes outside OpenSearch Dashboards' mappings."""
    problems = [obj["id"] for obj in _objects()
                if obj["type"] not in OSD_ATTRIBUTES or set(obj["attributes"]) - OSD_ATTRIBUTES[obj["type"]]]
    assert {"simdup-data-view", "simdup-duplicate-groups", "simdup-largest-groups"} <= set(problems)


def test_osd_references_resolve_to_objects_in_the_file() -> None:
    present = {(obj["type"], obj["id"]) for obj in _osd_objects()}
    for obj in _osd_objects():
        names = [ref["name"] for ref in obj["references"]]
        assert len(names) == len(set(names)), f"{obj['id']}: duplicate reference names"
        for ref in obj["references"]:
            assert (ref["type"], ref["id"]) in present, f"{obj['id']} references missing {ref['type']} {ref['id']}"
        meta = obj["attributes"].get("kibanaSavedObjectMeta")
        if meta:
            source = json.loads(meta["searchSourceJSON"])
            wanted = [source["indexRefName"]] if "indexRefName" in source else []
            wanted += [f["meta"]["indexRefName"] for f in source.get("filter", [])]
            assert set(wanted) <= set(names), f"{obj['id']}: unresolved indexRefName"


def test_osd_data_view_and_vega_panels_read_simdup_indices() -> None:
    view = _osd_by_id()[DATA_VIEW]["attributes"]
    kibana_view = _by_id()[DATA_VIEW]["attributes"]
    assert view == {"title": kibana_view["title"], "fieldFormatMap": kibana_view["fieldFormatMap"]}
    for vega_id in VEGA_IDS:
        url = _vega_spec(_osd_by_id()[vega_id])["data"]["url"]
        assert url["index"] == view["title"], vega_id
        assert url["%context%"] is True, f"{vega_id} must follow the dashboard's query and filters"


def test_osd_saved_search_matches_the_kibana_one() -> None:
    osd, kibana = _osd_by_id()["simdup-duplicate-groups"], _by_id()["simdup-duplicate-groups"]
    for key in ("title", "columns", "sort"):
        assert osd["attributes"][key] == kibana["attributes"][key], key
    (flt,) = json.loads(osd["attributes"]["kibanaSavedObjectMeta"]["searchSourceJSON"])["filter"]
    assert flt["exists"] == {"field": keys.GROUP} and flt["meta"]["type"] == "exists"


def _osd_terms_table(vis_id: str, field: str) -> tuple[dict, set[tuple[str, str | None]]]:
    """The terms bucket of an OpenSearch Dashboards table on ``field``, ordered by count, and its metrics."""
    vis_state = json.loads(_osd_by_id()[vis_id]["attributes"]["visState"])
    assert vis_state["type"] == "table"
    aggs = {agg["id"]: agg for agg in vis_state["aggs"]}
    (terms,) = [a for a in aggs.values() if a["type"] == "terms"]
    assert terms["schema"] == "bucket" and terms["params"]["field"] == field
    assert aggs[terms["params"]["orderBy"]]["type"] == "count"
    return terms, {(a["type"], a["params"].get("field")) for a in aggs.values() if a["schema"] == "metric"}


def test_osd_largest_groups_is_a_terms_on_dup_group_by_count() -> None:
    terms, metrics = _osd_terms_table("simdup-largest-groups", keys.GROUP)
    assert terms["params"]["size"] == 20 and terms["params"]["order"] == "desc"
    assert metrics == {("count", None), ("max", keys.GROUP_SIZE)}


def test_osd_duplicate_kinds_is_a_terms_on_dup_kind_with_documents_and_groups() -> None:
    _, metrics = _osd_terms_table("simdup-duplicate-kinds", keys.GROUP_KIND)
    assert metrics == {("count", None), ("cardinality", keys.GROUP)}


@pytest.mark.parametrize("vega_id", VEGA_IDS)
def test_osd_share_is_documents_with_a_group_over_all(vega_id: str) -> None:
    spec = _vega_spec(_osd_by_id()[vega_id])
    body = spec["data"]["url"]["body"]
    assert body["size"] == 0
    (calculate,) = [t for t in spec["transform"] if "calculate" in t]
    if vega_id == "simdup-duplicate-share":
        filters = body["aggs"]["share"]["filters"]["filters"]
        assert filters == {"grouped": {"exists": {"field": keys.GROUP}}, "all": {"match_all": {}}}
        assert spec["data"]["format"]["property"] == "aggregations.share.buckets"
        assert "datum.grouped.doc_count / datum.all.doc_count" in calculate["calculate"]
    else:
        histogram = body["aggs"]["per_interval"]
        assert histogram["aggs"] == {"grouped": {"filter": {"exists": {"field": keys.GROUP}}}}
        assert spec["data"]["format"]["property"] == "aggregations.per_interval.buckets"
        assert "datum.grouped.doc_count / datum.doc_count" in calculate["calculate"]
        assert spec["encoding"]["x"]["field"] == "key"
    assert spec["encoding"][("text" if vega_id == "simdup-duplicate-share" else "y")]["field"] == calculate["as"]


def test_osd_dashboard_panels_resolve_and_fit_the_grid() -> None:
    dashboard = _osd_by_id()["simdup-dashboard"]
    refs = {ref["name"]: ref for ref in dashboard["references"]}
    panels = json.loads(dashboard["attributes"]["panelsJSON"])
    cells: set[tuple[int, int]] = set()
    for panel in panels:
        assert "type" not in panel and "id" not in panel, "Kibana 7 panels point at objects by reference only"
        grid = panel["gridData"]
        assert grid["i"] == panel["panelIndex"] and grid["x"] + grid["w"] <= 48
        xs, ys = range(grid["x"], grid["x"] + grid["w"]), range(grid["y"], grid["y"] + grid["h"])
        area = {(x, y) for x in xs for y in ys}
        assert not cells & area, f"panel {panel['panelIndex']} overlaps another"
        cells |= area
    assert sorted(p["panelRefName"] for p in panels) == sorted(refs)
    assert {ref["id"] for ref in refs.values()} == {i for t, i in OSD_EXPECTED if t in {"visualization", "search"}}
    # Same layout as the Kibana dashboard.
    kibana_panels = json.loads(_by_id()["simdup-dashboard"]["attributes"]["panelsJSON"])
    assert sorted(json.dumps(p["gridData"]) for p in panels) == sorted(json.dumps(p["gridData"]) for p in kibana_panels)


def test_osd_field_walker_sees_the_fields_the_objects_use() -> None:
    fields = {field for _id, _use, field in _osd_all_referenced()}
    assert {"title", keys.GROUP, keys.GROUP_SIZE, keys.GROUP_KIND, DATE_PLACEHOLDER} <= fields


def test_osd_every_referenced_field_is_mapped_with_a_type_its_use_needs() -> None:
    referenced = [ref for ref in _osd_all_referenced() if ref[2] != DATE_PLACEHOLDER]
    missing = sorted({f"{field} ({obj_id})" for obj_id, _use, field in referenced if _mapping_of(field) is None})
    assert not missing, "not in mappings/*.json: " + "; ".join(missing)
    wrong = _wrong_types(referenced)
    assert not wrong, "; ".join(wrong)


def test_osd_date_placeholder_is_used_only_by_the_over_time_panel() -> None:
    uses = {(obj_id, use) for obj_id, use, field in _osd_all_referenced() if field == DATE_PLACEHOLDER}
    over_time = "simdup-duplicate-share-over-time"
    assert uses == {(over_time, "date_histogram"), (over_time, "time_field")}
    lines = OSD_NDJSON.read_text(encoding="utf-8").splitlines()
    assert all(DATE_PLACEHOLDER not in line for line in lines if json.loads(line)["id"] != DATE_PLACEHOLDER_USE[0])


def test_the_import_script_picks_the_file_for_the_dashboards_it_finds() -> None:
    script = IMPORT_SCRIPT.read_text(encoding="utf-8")
    assert OSD_NDJSON.name in script and NDJSON.name in script
    # OpenSearch Dashboards wants its own XSRF header and announces itself with osd-name.
    assert "osd-xsrf: true" in script and "kbn-xsrf: true" in script and "osd-name" in script
    assert "SIMDUP_DASHBOARDS" in script and "SIMDUP_DASHBOARDS" in README.read_text(encoding="utf-8")
