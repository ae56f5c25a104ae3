"""An index's recorded layout (its mapping's ``_meta``) and the in-place move of its parts to a later layout.

The layout an index was made with (:func:`simdup_es.schema.index_meta`: how parts are
kept, how many blocks the document fingerprint is cut into) lives in its mapping, so
every process that opens the index reads the same one. An index without it was made
before layouts were recorded: nested parts, 8 blocks.

:func:`move_parts` moves an index's parts to a later layout (nested to flat or quads,
flat to quads) in place, without re-reading any text: a nested part's 8 block terms and
a flat part's 56 terms both hold its fingerprint, from which the new terms are made.
While it runs the index records ``old+new`` (:func:`migrating`): searches ask for a part
either way and writers write the new layout, so nothing is missed; at the end it records
the new one.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Mapping
from typing import Any

from elasticsearch import Elasticsearch

from .. import schema
from ..errors import StoreError
from . import io
from .bodies import target, update_action

log = logging.getLogger(__name__)


def migrating(old: str, new: str) -> str:
    """The part layout an index records while :func:`move_parts` moves its parts from ``old`` to ``new``."""
    return f"{old}+{new}"


def searched(parts: str) -> tuple[str, ...]:
    """The part layouts a search asks in, in an index of part layout ``parts`` (both while it moves)."""
    return tuple(parts.split("+"))


def written(parts: str) -> str:
    """The part layout documents are written in, in an index of part layout ``parts`` (the new one while it moves)."""
    return searched(parts)[-1]


def later(new: str, old: str) -> bool:
    """Whether parts may move from layout ``old`` to ``new`` (nested, then flat, then quads)."""
    order = schema.PART_LAYOUTS[::-1]
    return order.index(new) > order.index(old)


def recorded(mappings: Mapping[str, Any]) -> tuple[str, int | None]:
    """``(parts, blocks)`` a ``GET _mapping`` answer records (blocks ``None`` when not recorded); the
    indices behind an alias must agree."""
    layouts = {_layout(body.get("mappings", {})) for body in mappings.values()}
    if len(layouts) > 1:
        names = ", ".join(sorted(mappings))
        raise StoreError(f"the indices {names} were made with different layouts ({sorted(layouts)}): search them "
                         "one at a time, or upgrade them with 'simdup setup --parts quads' on each")
    return layouts.pop() if layouts else (schema.QUADS, None)


def _layout(mapping: Mapping[str, Any]) -> tuple[str, int | None]:
    """:func:`simdup_es.schema.layout_of` an index's mapping; one that holds no parts yet and records
    nothing is new to simdup, and gets the default part layout (quads)."""
    if schema.ROOT not in (mapping.get("_meta") or {}):
        props = mapping.get("properties", {}).get(schema.ROOT, {}).get("properties", {})
        if schema.PARTS_NAME not in props:
            return schema.QUADS, None
    return schema.layout_of(mapping.get("_meta"))


def read(client: Elasticsearch, index: str) -> tuple[str, int | None, bool]:
    """:func:`recorded` layout of ``index``, and :func:`doc_terms`."""
    with io.translated(client, "reading the mapping", index):
        mappings = dict(client.indices.get_mapping(index=index))
    return (*recorded(mappings), doc_terms(mappings))


def doc_terms(mappings: Mapping[str, Any]) -> bool:
    """Whether the indices of a ``GET _mapping`` answer record the ``terms`` document layout (all of them)."""
    return bool(mappings) and all(schema.doc_terms_of(body.get("mappings", {}).get("_meta")) for body in mappings.values())


def record(client: Elasticsearch, index: str, parts: str, blocks: int, doc_terms: bool = False) -> None:
    """Record the layout in the ``_meta`` of ``index``'s mapping, keeping its other ``_meta`` keys."""
    _record(client, index, "recording the layout in the mapping", schema.index_meta(parts, blocks, doc_terms)[schema.ROOT])


def record_source_fields(client: Elasticsearch, index: str, text_field: str, title_field: str | None) -> None:
    """Record which ``_source`` fields hold the text and title (``simdup backfill --field``), so that every store
    that opens the index reads them, for the comparison matrix and the reports."""
    fields = {schema.TEXT_FIELD_KEY: text_field, **({schema.TITLE_FIELD_KEY: title_field} if title_field else {})}
    _record(client, index, "recording the text field in the mapping", fields)


def _record(client: Elasticsearch, index: str, action: str, values: Mapping[str, Any]) -> None:
    """Merge ``values`` into ``_meta.simdup`` of each index of ``index``, keeping every other ``_meta`` key."""
    with io.translated(client, action, index):
        for name, body in client.indices.get_mapping(index=index).items():
            meta = dict(body.get("mappings", {}).get("_meta") or {})
            meta[schema.ROOT] = {**(meta.get(schema.ROOT) or {}), **values}
            client.indices.put_mapping(index=name, body={"_meta": meta})


def source_fields(mappings: Mapping[str, Any]) -> tuple[str, str]:
    """The ``(text, title)`` fields a ``GET _mapping`` answer records; the indices behind an alias must agree."""
    found = {schema.source_fields_of(body.get("mappings", {}).get("_meta")) for body in mappings.values()}
    if len(found) > 1:
        raise StoreError(f"the indices {', '.join(sorted(mappings))} keep their text in different fields "
                         f"({sorted(found)}): search them one at a time")
    return found.pop() if found else ("text", "title")


def _part_fingerprint(part: Mapping[str, Any]) -> int:
    """The fingerprint of a nested part from its 8 byte block terms (``b0`` the lowest byte)."""
    return int.from_bytes(bytes(int(part[schema.block_name(schema.DEFAULT_LAYOUT, j)], 16) for j in range(8)), "little")


def part_update(source: Mapping[str, Any], old: str, new: str) -> dict[str, Any]:
    """The partial ``doc`` that replaces a ``_source``'s parts of layout ``old`` by parts of layout ``new``."""
    simdup = source.get(schema.ROOT) or {}
    fps = [_part_fingerprint(p) for p in simdup.get(schema.PARTS_NAME) or []] if old == schema.NESTED \
        else schema.flat_part_fingerprints(simdup.get(schema.PART_TERMS_NAME) or [])
    return {schema.ROOT: {**dict.fromkeys(schema.PART_FIELDS[old]), **schema.parts_object(fps, new)}}


def move_parts(client: Elasticsearch, index: str, old: str, new: str, *, retry: io.Retry, batch: int = 1000,
               on_progress: Callable[[int], None] | None = None) -> tuple[int, int]:
    """Move every document's parts of ``index`` from layout ``old`` to ``new``; ``(moved, changed meanwhile)``.

    The index must record :func:`migrating` first (so searches and writers meanwhile
    find parts either way). A document changed during the walk (a 409 on its
    ``if_seq_no``) was rewritten by a writer, which wrote the new layout: it is counted,
    not retried. Refreshes the index when done.
    """
    field = f"{schema.ROOT}.{schema.PART_FIELDS[old][0]}"
    query = ({"nested": {"path": schema.PARTS, "query": {"match_all": {}}}} if old == schema.NESTED
             else {"exists": {"field": field}})
    moved = changed = 0
    hits = io.walk(client, index, query, source=[f"{field}*"], seq_no=True, page_size=batch)
    while page := list(itertools.islice(hits, batch)):
        actions = [update_action({**target(hit), "if_seq_no": hit["_seq_no"], "if_primary_term": hit["_primary_term"]},
                                 part_update(hit.get("_source") or {}, old, new)) for hit in page]
        for item in io.bulk(client, actions, what=f"moving parts to the {new} layout", index=index, chunk_size=batch,
                            retry=retry):
            if item.ok:
                moved += 1
            elif item.status == 409:
                changed += 1
            else:
                raise StoreError(f"moving the parts of {item.id!r} to the {new} layout failed: {item.reason}; run "
                                 f"'simdup setup --parts {new}' again, it goes on where this stopped")
        if on_progress:
            on_progress(moved)
    with io.translated(client, "refreshing", index):
        client.indices.refresh(index=index)
    return moved, changed


__all__ = ["doc_terms", "later", "migrating", "move_parts", "part_update", "read", "record", "recorded", "searched", "written"]
