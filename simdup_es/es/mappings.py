"""The mappings simdup puts on Elasticsearch, read from the JSON shipped in ``simdup_es.mappings``, and what an
index's mapping says of it: its schema and document layout (:func:`layout_of`), where its texts are.

Pure apart from reading those package files: no client. Field names come from
:mod:`simdup_es.keys`; a unit test holds the JSON to them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from .. import keys
from ..errors import StoreError

COMPONENT_TEMPLATE = "simdup-fingerprint"
"""Name of the component template with the fingerprint fields (``mappings/component-template.json``)."""
INDEX_TEMPLATE = "simdup"
"""Name of the index template for ``simdup-*`` indices (``mappings/index-template.json``)."""
GROUP_FIELDS = (keys.GROUP, keys.GROUP_SIZE, keys.GROUP_KIND)
NEW_INDEX = ("make a new index ('simdup setup --index NEW', with --layout for its layout), fill it ('simdup index "
             "--index NEW' from the files, or copy the documents with POST _reindex leaving out '_source.simdup' and "
             "run 'simdup backfill --index NEW --field FIELD'), then point your alias at NEW (docs/elasticsearch.md)")
"""How an index of another schema or layout is replaced: the Elasticsearch way, never in place."""


@cache
def _load(name: str) -> str:
    return resources.files("simdup_es.mappings").joinpath(name).read_text(encoding="utf-8")


def component_template() -> dict[str, Any]:
    """Body of ``PUT _component_template/simdup-fingerprint``: the fingerprint fields."""
    return json.loads(_load("component-template.json"))


def index_template() -> dict[str, Any]:
    """Body of ``PUT _index_template/simdup``: ``simdup-*`` indices, with ``title`` and ``text``."""
    return json.loads(_load("index-template.json"))


def fingerprint_mapping() -> dict[str, Any]:
    """The ``simdup`` object's mapping."""
    return copy.deepcopy(component_template()["template"]["mappings"]["properties"][keys.ROOT])


def index_mappings(layout: str = keys.EIGHT_BY_EIGHT) -> dict[str, Any]:
    """Full mappings of an index simdup creates: component template + index template fields, and in ``_meta``
    the schema and the document ``layout`` (:func:`simdup_es.keys.index_meta`)."""
    owned = index_template()["template"]["mappings"]
    return {
        **{k: v for k, v in owned.items() if k != "properties"},
        "_meta": keys.index_meta(layout),
        "properties": {**owned["properties"], **group_mapping(), keys.ROOT: fingerprint_mapping()},
    }


def group_mapping() -> dict[str, Any]:
    """Mappings of the fields ``simdup groups`` writes: ``dup_group``, ``dup_group_size``, ``dup_kind``.

    Taken from the component template (``mappings/component-template.json``), so the two cannot differ.
    """
    props = component_template()["template"]["mappings"]["properties"]
    return {name: props[name] for name in GROUP_FIELDS}


def new_to_simdup(mapping: Mapping[str, Any]) -> bool:
    """Whether an index's mapping (``GET _mapping``'s ``mappings``) has neither a ``simdup`` record nor ``simdup`` fields."""
    return keys.ROOT not in (mapping.get("_meta") or {}) and keys.ROOT not in mapping.get("properties", {})


def layout_of(answer: Mapping[str, Any]) -> str:
    """The document layout the indices of a ``GET _mapping`` answer record (they must agree), with this schema.

    An index of another schema, or none (made by an earlier build, or new to simdup), is refused with what to do:
    its keys are not what this release asks for, and they are never changed in place.
    """
    found = {}
    for name, body in sorted(answer.items()):
        mapping = body.get("mappings", {})
        schema, layout = keys.recorded(mapping.get("_meta"))
        if schema == keys.SCHEMA:
            found[name] = layout
        elif new_to_simdup(mapping):
            raise StoreError(f"index {name!r} has no simdup fields: fingerprint its documents with 'simdup backfill "
                             f"--index {name} --field FIELD', or 'simdup setup' a new index and 'simdup index' into it")
        elif schema is None:
            raise StoreError(f"index {name!r} has simdup fields but records no index schema (an index made by an earlier "
                             f"build of simdup-es, or mapped by hand; this release searches and writes index schema "
                             f"{keys.SCHEMA}): {NEW_INDEX}")
        else:
            raise StoreError(f"index {name!r} was made by another build of simdup-es (index schema {schema}; this release "
                             f"searches and writes index schema {keys.SCHEMA}): {NEW_INDEX}")
    if len(set(found.values())) > 1:
        raise StoreError(f"the indices {', '.join(found)} were made with different document layouts "
                         f"({', '.join(sorted(set(found.values())))}): search them one at a time")
    return next(iter(found.values()), keys.EIGHT_BY_EIGHT)


def source_fields(answer: Mapping[str, Any]) -> tuple[str, str]:
    """The ``(text, title)`` fields a ``GET _mapping`` answer records; the indices behind an alias must agree."""
    found = {keys.source_fields_of(body.get("mappings", {}).get("_meta")) for body in answer.values()}
    if len(found) > 1:
        raise StoreError(f"the indices {', '.join(sorted(answer))} keep their text in different fields "
                         f"({sorted(found)}): search them one at a time")
    return found.pop() if found else ("text", "title")


def keeps_unified(answer: Mapping[str, Any]) -> bool:
    """Whether every index of a ``GET _mapping`` answer maps :data:`simdup_es.keys.UNIFIED` (an index made before
    it was, and not set up again since, does not: its documents are written without it, as ``simdup.*`` is
    dynamic and would index it otherwise)."""
    return bool(answer) and all(
        keys.UNIFIED_NAME in body.get("mappings", {}).get("properties", {}).get(keys.ROOT, {}).get("properties", {})
        for body in answer.values())


__all__ = [
    "COMPONENT_TEMPLATE",
    "GROUP_FIELDS",
    "INDEX_TEMPLATE",
    "NEW_INDEX",
    "component_template",
    "fingerprint_mapping",
    "group_mapping",
    "index_mappings",
    "index_template",
    "keeps_unified",
    "layout_of",
    "new_to_simdup",
    "source_fields",
]
