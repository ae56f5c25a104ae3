"""The mappings simdup puts on Elasticsearch, read from the JSON shipped in ``simdup_es.mappings``.

Pure apart from reading those package files: no client. Field names come from
:mod:`simdup_es.schema`; a unit test holds the JSON to them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Any

from .. import schema
from ..config import BlockLayout

COMPONENT_TEMPLATE = "simdup-fingerprint"
"""Name of the component template with the fingerprint fields (``mappings/component-template.json``)."""
INDEX_TEMPLATE = "simdup"
"""Name of the index template for ``simdup-*`` indices (``mappings/index-template.json``)."""


@cache
def _load(name: str) -> str:
    return resources.files("simdup_es.mappings").joinpath(name).read_text(encoding="utf-8")


def component_template() -> dict[str, Any]:
    """Body of ``PUT _component_template/simdup-fingerprint``: the fingerprint fields."""
    return json.loads(_load("component-template.json"))


def index_template() -> dict[str, Any]:
    """Body of ``PUT _index_template/simdup``: ``simdup-*`` indices, with ``title`` and ``text``."""
    return json.loads(_load("index-template.json"))


def _block_mapping() -> dict[str, Any]:
    """The mapping of one block field (the one the dynamic template gives)."""
    dynamic = component_template()["template"]["mappings"]["dynamic_templates"]
    return next(iter(dynamic[0].values()))["mapping"]


def fingerprint_mapping(layouts: Iterable[BlockLayout] = (schema.DEFAULT_LAYOUT,)) -> dict[str, Any]:
    """The ``simdup`` object's mapping, with explicit block fields (of documents and parts) for every layout."""
    simdup = copy.deepcopy(component_template()["template"]["mappings"]["properties"][schema.ROOT])
    parts = simdup["properties"][schema.PARTS_NAME]["properties"]
    for layout in layouts:
        for j in range(layout.blocks):
            simdup["properties"].setdefault(schema.block_name(layout, j), _block_mapping())
            parts.setdefault(schema.block_name(layout, j), _block_mapping())
    return simdup


def index_mappings(layouts: Iterable[BlockLayout] = (schema.DEFAULT_LAYOUT,), parts: str = schema.QUADS,
                   doc_terms: bool = False) -> dict[str, Any]:
    """Full mappings of an index simdup creates: component template + index template fields, and
    in ``_meta`` its layout (:func:`simdup_es.schema.index_meta`: ``parts``, the blocks of ``layouts[0]``)."""
    layouts = tuple(layouts)
    component = component_template()["template"]["mappings"]
    owned = index_template()["template"]["mappings"]
    return {
        **{k: v for k, v in owned.items() if k != "properties"},
        "_meta": schema.index_meta(parts, layouts[0].blocks, doc_terms),
        "dynamic_templates": component["dynamic_templates"],
        "properties": {**owned["properties"], **group_mapping(), schema.ROOT: fingerprint_mapping(layouts)},
    }


GROUP_FIELDS = (schema.GROUP, schema.GROUP_SIZE, schema.GROUP_KIND)


def group_mapping() -> dict[str, Any]:
    """Mappings of the fields ``simdup groups`` writes: ``dup_group``, ``dup_group_size``, ``dup_kind``.

    Taken from the component template (``mappings/component-template.json``), so the two cannot differ.
    """
    props = component_template()["template"]["mappings"]["properties"]
    return {name: props[name] for name in GROUP_FIELDS}


def missing_keyword_fields(mappings: dict[str, Any], layouts: Iterable[BlockLayout]) -> dict[str, list[str]]:
    """``{index: [field, ...]}``: fingerprint fields a ``GET _mapping`` answer does not map as ``keyword``.

    A term query on an unmapped block field matches nothing, so an index missing
    one would silently return no candidates.
    """
    needed = ["fp", "version"] + [schema.block_name(lay, j) for lay in layouts for j in range(lay.blocks)]
    out = {}
    for name, body in mappings.items():
        props = body.get("mappings", {}).get("properties", {}).get(schema.ROOT, {}).get("properties", {})
        missing = [f"{schema.ROOT}.{f}" for f in needed if props.get(f, {}).get("type") != "keyword"]
        if missing:
            out[name] = missing
    return out


def missing_level_fields(mappings: dict[str, Any], layouts: Iterable[BlockLayout]) -> dict[str, list[str]]:
    """``{index: [field, ...]}``: level fields (issue 11) a ``GET _mapping`` answer lacks or maps otherwise.

    Written to an index without them, dynamic mapping would make ``parts`` a plain
    object (5 of 8 no longer within one part) and ``sk`` a text field.
    """
    wanted = fingerprint_mapping(layouts)["properties"]
    out = {}
    for name, body in mappings.items():
        props = body.get("mappings", {}).get("properties", {}).get(schema.ROOT, {}).get("properties", {})
        written = schema.layout_of(body.get("mappings", {}).get("_meta"))[0].split("+")[-1]  # see es.layout.written
        needed = [*schema.LEVEL_NAMES[:-1], *schema.PART_FIELDS[written]]
        missing = [f"{schema.ROOT}.{f}" for f in needed
                   if props.get(f, {}).get("type", "object") != wanted[f].get("type", "object")]
        part_props = props.get(schema.PARTS_NAME, {}).get("properties", {})
        missing += [] if written != schema.NESTED else [f"{schema.PARTS}.{f}" for f in wanted[schema.PARTS_NAME]["properties"]
                                                        if part_props.get(f, {}).get("type") != "keyword"]
        if missing:
            out[name] = missing
    return out


__all__ = [
    "COMPONENT_TEMPLATE",
    "GROUP_FIELDS",
    "INDEX_TEMPLATE",
    "component_template",
    "fingerprint_mapping",
    "group_mapping",
    "index_mappings",
    "index_template",
    "missing_keyword_fields",
    "missing_level_fields",
]
