"""Request bodies and documents for Elasticsearch: pure functions, no client, no I/O.

Everything simdup sends to a cluster or reads out of its answers is built or
parsed here: the candidate query, the body of one page of a walk,
bulk actions, the partial updates of ``backfill`` and ``groups``, and the text
of a ``_source``. :mod:`simdup_es.es.io` sends them.

The candidate query
-------------------
By the pigeonhole principle, two fingerprints within Hamming distance ``k`` agree
on at least ``8 - k`` of their 8 blocks, so a ``bool`` query with one ``term``
clause per block and ``minimum_should_match: 8 - k`` misses none of them (the
terms each layout asks for: :func:`simdup_es.keys.doc_query`). It also returns
some documents further away: candidates must be re-ranked by exact distance.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import keys
from .. import simhash as sh
from ..common import byte_size

Action = tuple[dict[str, Any], "dict[str, Any] | str | None"]
"""One bulk action: the header line (``{"index": {...}}``, ``{"update": {...}}``) and the body line
(a ``dict``, or its JSON text: :func:`document_json`)."""

NO_TEXT_MISSING = "no text: field missing"
NO_TEXT_EMPTY = "no text: field empty"


# --- searches -------------------------------------------------------------------------------


def _matching(pairs: Sequence[tuple[str, str]], least: int) -> dict[str, Any]:
    """The ``bool`` members asking for ``least`` of the ``(field, term)`` pairs (a ``terms`` filter for one of a field's)."""
    fields = {field for field, _ in pairs}
    if least == 1 and len(fields) == 1:
        return {"filter": [{"terms": {fields.pop(): [term for _, term in pairs]}}]}
    return {"should": [{"term": {field: term}} for field, term in pairs], "minimum_should_match": least}


def candidate_query(fingerprint: int, version: str, k: int, layout: str = keys.EIGHT_BY_EIGHT) -> dict[str, Any]:
    """The ``bool`` query for documents sharing what every document within ``k`` shares (:func:`simdup_es.keys.doc_query`).

    The fingerprint version is a filter: fingerprints made by another recipe are
    not comparable.
    """
    query = _matching(*keys.doc_query(fingerprint, k, layout))
    query["filter"] = [*query.get("filter", []), {"term": {keys.VERSION: version}}]
    return {"bool": query}


def candidate_search(fingerprint: int, version: str, k: int, layout: str = keys.EIGHT_BY_EIGHT, *, size: int = 1000,
                     exclude_id: str | None = None) -> dict[str, Any]:
    """A complete ``_search`` body: the candidate query, only the field the re-rank needs.

    Sorted by ``_doc`` (no scoring): candidates are ranked by exact Hamming
    distance afterwards, not by relevance.
    """
    query = candidate_query(fingerprint, version, k, layout)
    return _search_body(query, [keys.FP], size, ["_doc"], exclude_id=exclude_id)  # the re-rank needs only fp


def _search_body(query: dict[str, Any], fields: list[str], size: int, sort: list[Any], *, exclude_id: str | None = None,
                 total: bool = True) -> dict[str, Any]:
    """A ``_search`` body that reads the doc values ``fields`` and no ``_source``, ``exclude_id`` left out."""
    if exclude_id is not None:
        query["bool"]["must_not"] = [{"ids": {"values": [exclude_id]}}]
    return {"query": query, "_source": False, "docvalue_fields": fields, "size": size, "sort": sort,
            "track_total_hits": total}


def candidates_union_search(fingerprints: Sequence[int], version: str, k: int, layout: str = keys.EIGHT_BY_EIGHT, *,
                            size: int = 10_000) -> dict[str, Any]:
    """ONE ``_search`` body for a superset of the candidates of every one of ``fingerprints`` (of ``version``).

    One ``terms`` query per field holds the terms the fingerprints have there, and a hit
    must match as many of them as :func:`simdup_es.keys.doc_union` says: a document within
    ``k`` of one fingerprint does. So does a document whose blocks each match some other
    fingerprint of the batch; the client keeps each query's own candidates
    (:func:`simdup_es.simhash.shared_blocks`), so the hits carry the fingerprint and its
    version. :func:`simdup_es.keys.union_size` says how many fingerprints keep those few.
    The engine builds 8 scorers where a ``bool`` of per-query clauses builds 8 a query.
    """
    union, least = keys.doc_union(fingerprints, k, layout)
    should = [{"terms": {field: terms}} for field, terms in union.items()]
    query = {"bool": {"filter": [{"term": {keys.VERSION: version}},
                                 {"bool": {"should": should, "minimum_should_match": least}}]}}
    return _search_body(query, [keys.FP, keys.VERSION], size, ["_doc"])


def part_search(part_terms: Sequence[tuple[int, int]], key_terms: Sequence[tuple[int, int]], version: str, *,
                limit: int = 100, exclude_id: str | None = None) -> dict[str, Any]:
    """One ``_search`` body for the documents sharing a part or a key with a query.

    ``part_terms`` and ``key_terms`` are ``(index, value)`` pairs
    (:func:`simdup_es.store.base.query_terms`). Each is a named clause (``p<index>``,
    ``k<index>``), so a hit's ``matched_queries`` says which of the query's parts and
    keys it shares. A part clause is a ``terms`` query on the part's 6 quads
    (:func:`simdup_es.keys.quad_terms`), which every part sharing 6 of 8 blocks matches,
    and a few others: the body asks for the hits' part fingerprints (``simdup.pf``), and
    :func:`checked` keeps the exact matches. Every clause scores exactly 1
    (``constant_score``), so a hit's score is its number of matched parts plus keys, and
    the sort (score, then ``simdup.id``) is the protocol's ranking, cut at ``limit`` by the engine.
    """
    should: list[dict[str, Any]] = [
        {"constant_score": {"filter": {"term": {keys.KEYS: term}}, "_name": f"k{i}"}}
        for (i, _), term in zip(key_terms, keys.key_terms([key for _, key in key_terms]))
    ]
    should += [{"constant_score": {"filter": {"terms": {keys.PART_QUADS: keys.quad_terms(fingerprint)}}, "_name": f"p{i}"}}
               for i, fingerprint in part_terms]
    query: dict[str, Any] = {"bool": {"should": should, "minimum_should_match": 1,
                                      "filter": [{"term": {keys.VERSION: version}}]}}
    return _search_body(query, [keys.UNITS, keys.PART_FPS], limit, [{"_score": "desc"}, {keys.ID: "asc"}],
                        exclude_id=exclude_id, total=False)


def key_frequency_search(key_values: Sequence[int], *, narrowed: bool = True) -> dict[str, Any]:
    """One ``_search`` body that counts the documents holding each winnowed key: a ``filters`` aggregation of one
    ``term`` filter per key (bucket ``i`` for ``key_values[i]``).

    The keys are not kept as doc values (a terms aggregation would need them): each filter is answered
    from the inverted index, which counts live documents only. ``narrowed``: over the documents holding any
    of the keys (a top ``terms`` query), for OpenSearch, which without it tests every filter on every
    document. Elasticsearch, over every document, counts each filter segment by segment instead (its
    ``filter by filter`` mode: in constant time in a segment without deletions): at 100,000 documents (16
    segments, 225 keys) a quarter to a third less time than narrowed (``benchmarks/bench_key_counts.py``).
    """
    terms = keys.key_terms(key_values)
    body: dict[str, Any] = {"size": 0, "track_total_hits": False,
                            "aggs": {"keys": {"filters": {"filters": [{"term": {keys.KEYS: term}} for term in terms]}}}}
    if narrowed:
        body["query"] = {"bool": {"filter": [{"terms": {keys.KEYS: terms}}]}}
    return body


KEY_HOLDERS = {"size": 0, "track_total_hits": True, "query": {"exists": {"field": keys.KEYS}}}
"""A ``_search`` body whose total is the number of documents holding any winnowed key."""


def key_counts(buckets: Sequence[Mapping[str, Any]]) -> list[int]:
    """The document count of each bucket of a :func:`key_frequency_search` answer, in the keys' order."""
    return [int(b["doc_count"]) for b in buckets]


def ids_from_doc_values(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` reading each hit's id from the doc values of ``simdup.id`` (:func:`hit_id`) rather than its
    ``_id``, for a search whose hits all have level fields (written with ``simdup.id``): reading ``_id``
    decompresses each hit's stored fields, ``_source`` and all (4 of 7 ms of a 2 kB query's
    :func:`part_search` in one segment)."""
    return {**body, "docvalue_fields": [*body["docvalue_fields"], keys.ID], "stored_fields": "_none_"}


def hit_id(hit: Mapping[str, Any]) -> str | None:
    """The id of a hit, from ``_id`` or :func:`ids_from_doc_values` (``None``: level fields without ``simdup.id``)."""
    return hit.get("_id") or hit.get("fields", {}).get(keys.ID, [None])[0]


def checked(hit: Mapping[str, Any], parts: frozenset[int], query: Mapping[int, int]) -> frozenset[int]:
    """Of the query parts a hit ``matched`` (by a quad), those it has a part sharing 6 of 8 blocks with
    (:func:`simdup_es.keys.part_match`). ``query`` maps a query part's index to its fingerprint."""
    asked = sorted(parts)
    stored = [int(f, 16) for f in hit.get("fields", {}).get(keys.PART_FPS, [])]
    found = keys.part_match(np.array([query[i] for i in asked], np.uint64)[:, None], np.array(stored, np.uint64))
    return frozenset(i for n, i in enumerate(asked) if found[n].any())


def matched(hit: Mapping[str, Any]) -> tuple[frozenset[int], frozenset[int]]:
    """Indices of the query parts and keys a :func:`part_search` hit matched (its ``matched_queries``)."""
    names = hit.get("matched_queries", [])
    if isinstance(names, Mapping):  # include_named_queries_score returns {name: score}
        names = list(names)
    return (frozenset(int(n[1:]) for n in names if n[:1] == "p"), frozenset(int(n[1:]) for n in names if n[:1] == "k"))


def current_query(version: str, *, retry_errors: bool = False) -> dict[str, Any]:
    """Documents a backfill leaves alone: at ``version`` with their levels, or marked unusable (unless ``retry_errors``).

    A document at ``version`` without levels (its fingerprint written at ingest without them) is
    not current: a search would find no partial copy of it.
    """
    done: list[dict[str, Any]] = [{"exists": {"field": keys.UNITS}}]
    if not retry_errors:
        done.append({"exists": {"field": keys.ERROR}})
    return {"bool": {"filter": [{"term": {keys.VERSION: version}}], "should": done, "minimum_should_match": 1}}


def walk_query(version: str, *, retry_errors: bool = False) -> dict[str, Any]:
    """Documents that still need a backfill: not :func:`current_query`."""
    return {"bool": {"must_not": [current_query(version, retry_errors=retry_errors)]}}


def page_search(
    query: Mapping[str, Any],
    page_size: int,
    *,
    source: bool | list[str] = False,
    docvalue_fields: list[str] | None = None,
    ids: bool = True,
    seq_no: bool = False,
) -> dict[str, Any]:
    """The body of one page of a point-in-time walk (the caller adds ``pit`` and ``search_after``).

    ``ids=False`` leaves out ``_id`` and ``_source``: on segments with deleted
    documents, loading ``_id`` is most of the cost of a walk.
    """
    body: dict[str, Any] = {"query": query, "size": page_size, "sort": ["_shard_doc"], "track_total_hits": False}
    if ids:
        body["_source"] = source
    else:
        body["stored_fields"] = "_none_"
    if docvalue_fields:
        body["docvalue_fields"] = docvalue_fields
    if seq_no:
        body["seq_no_primary_term"] = True
    return body


# --- writes ---------------------------------------------------------------------------------


def index_action(doc_id: str, source: dict[str, Any] | str) -> Action:
    """Insert or replace a whole document (``source`` as a dict or as its JSON text)."""
    return {"index": {"_id": doc_id}}, source


def update_action(meta: Mapping[str, Any], doc: dict[str, Any]) -> Action:
    """A partial update of the document ``meta`` addresses (:func:`target` plus ``if_seq_no`` ...)."""
    return {"update": dict(meta)}, {"doc": doc}


def header_json(header: Mapping[str, Any]) -> str | Mapping[str, Any]:
    """A bulk header line as JSON text when it is ``{"index": {"_id": <str>}}`` (every document
    indexed has one; ``json.dumps`` took 2 us of it), any other header as it is."""
    inner = header.get("index") if len(header) == 1 else None
    if isinstance(inner, dict) and len(inner) == 1 and type(doc_id := inner.get("_id")) is str:
        return f'{{"index":{{"_id":{keys.json_string(doc_id)}}}}}'
    return header


def target(hit: Mapping[str, Any]) -> dict[str, Any]:
    """Bulk metadata that addresses the document of a search hit (index, id, routing)."""
    meta = {"_index": hit["_index"], "_id": hit["_id"]}
    if hit.get("_routing") is not None:
        meta["routing"] = hit["_routing"]
    return meta


def document_source(fingerprint: int, version: str, text: str | None, title: str | None,
                    layout: str = keys.EIGHT_BY_EIGHT, levels: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``_source`` of a document simdup indexes; ``levels`` (:func:`simdup_es.keys.levels_object`) join ``simdup``."""
    body: dict[str, Any] = {}
    if title is not None:
        body["title"] = title
    if text is not None:
        body["text"] = text
    body[keys.ROOT] = {**keys.fingerprint_object(fingerprint, version, layout), **(levels or {})}
    return body


def document_json(members: str, text: str | None, title: str | None, doc_id: str | None = None,
                  group: tuple[str, int | None, str | None] | None = None,
                  meta: tuple[tuple[str, str], ...] = (), unified: str | None = None) -> str:
    """:func:`document_source` as the JSON text the client sends (``json.dumps``, ``ensure_ascii=False``,
    no spaces), written directly.

    ``members`` are :func:`simdup_es.keys.members_json` of the document's fingerprint and levels (made
    where the levels are computed: :class:`simdup_es.keys.StoredKeys`); ``doc_id`` is written after them
    as ``simdup.id``, with levels; ``group`` the duplicate group fields (:func:`group_update`'s, written
    with the document); ``meta`` the document's other fields (:attr:`simdup_es.store.base.StoredDoc.meta`:
    ``url``, ``author``, ``date``); ``unified`` the text unified (:data:`simdup_es.keys.UNIFIED`, for an index that
    maps it). Every indexed document goes through it: the strings go through
    ``json``'s own string encoder, the rest is joined.
    """
    out = []
    if title is not None:
        out.append(f'"title":{keys.json_string(title)}')
    if text is not None:
        out.append(f'"text":{keys.json_string(text)}')
    out.extend(f'{keys.json_string(name)}:{keys.json_string(value)}' for name, value in meta)
    simdup = members if doc_id is None else f'{members},"{keys.ID_NAME}":{keys.json_string(doc_id)}'
    if unified is not None:
        simdup += f',"{keys.UNIFIED_NAME}":{keys.json_string(unified)}'
    out.append(f'"{keys.ROOT}":{{{simdup}}}')
    if group is not None:
        out.append(json.dumps(group_update(*group), ensure_ascii=False, separators=(",", ":"))[1:-1])
    return "{" + ",".join(out) + "}"


def group_update(group: str | None, size: int | None, kind: str | None = None) -> dict[str, Any]:
    """The partial ``doc`` that sets (or, with ``None``, clears) a document's duplicate group and its kind."""
    return {keys.GROUP: group, keys.GROUP_SIZE: size, keys.GROUP_KIND: kind}


def fingerprint_update(old: Mapping[str, Any] | None, fingerprint: int, version: str,
                       levels: Mapping[str, Any] | None = None, layout: str = keys.EIGHT_BY_EIGHT) -> dict[str, Any]:
    """The partial ``doc`` that sets a fingerprint (and ``levels``, :func:`simdup_es.keys.levels_object`);
    keys of ``old`` it does not set become null.

    Nulling matters: a partial update merges objects, so without it an old
    ``simdup.error`` or the levels of an older text would outlive the fingerprint
    they belonged to.
    """
    new = {**keys.fingerprint_object(fingerprint, version, layout), **(levels or {})}
    stale = {key: None for key in (old or {}) if key not in new}
    return {keys.ROOT: {**stale, **new}}


def error_update(old: Mapping[str, Any] | None, version: str, reason: str) -> dict[str, Any]:
    """The partial ``doc`` that marks a document as unusable for ``version`` (and drops any old fingerprint)."""
    stale = {key: None for key in (old or {}) if key not in ("version", "error")}
    return {keys.ROOT: {**stale, "version": version, "error": reason}}


# --- reading _source -----------------------------------------------------------------------


def field_values(source: Any, path: str) -> list[Any]:
    """Every non-null value at the dotted ``path`` of a ``_source``.

    Follows objects, arrays of objects, and keys that themselves contain dots
    (``{"a.b": 1}`` as well as ``{"a": {"b": 1}}``), as Elasticsearch does.
    """
    if isinstance(source, list):
        return [v for item in source for v in field_values(item, path)]
    if not path:
        return [] if source is None else [source]
    if not isinstance(source, Mapping):
        return []
    parts = path.split(".")
    out: list[Any] = []
    for cut in range(1, len(parts) + 1):
        key = ".".join(parts[:cut])
        if key in source:
            out += field_values(source[key], ".".join(parts[cut:]))
    return out


_ODD = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\ufffd]")  # control characters but whitespace; U+FFFD


def _looks_binary(text: str) -> bool:
    """NUL bytes, or more than 10% control or replacement characters in the first 4,096."""
    sample = text[:4096]
    return "\x00" in sample or len(_ODD.findall(sample)) * 10 > len(sample)


def text_of(source: Mapping[str, Any], field: str) -> tuple[str | None, str | None]:
    """``(text, None)``, or ``(None, reason)`` when the field holds nothing to fingerprint.

    An array of strings is joined with blank lines. Reasons starting with
    ``"no text"`` mean the field is missing, null or blank; others that it holds
    something that is not text.
    """
    values = field_values(source, field)
    if not values:
        return None, NO_TEXT_MISSING
    odd = sorted({type(v).__name__ for v in values if not isinstance(v, str)})
    if odd:
        return None, f"field {field!r} holds {', '.join(odd)}, not text"
    text = "\n\n".join(values)
    if not text.strip():
        return None, NO_TEXT_EMPTY
    if _looks_binary(text):
        return None, "looks binary (NUL or control characters), not text"
    return text, None


def title_of(source: Mapping[str, Any], field: str | None) -> str | None:
    """The title at ``field`` (strings joined by spaces), or ``None``."""
    if not field:
        return None
    values = [v for v in field_values(source, field) if isinstance(v, str)]
    return " ".join(values) or None


def stored_fingerprint(source: Mapping[str, Any]) -> tuple[int, str] | None:
    """``(fingerprint, version)`` of a ``_source``, or ``None`` when it has no fingerprint."""
    fp = source.get(keys.ROOT)
    if not isinstance(fp, Mapping) or "fp" not in fp or "version" not in fp:
        return None
    return sh.from_hex(fp["fp"]), fp["version"]


# --- merges and disk space -------------------------------------------------------------------

_MERGE_WATERMARK = "indices.merge.disk.watermark.high"
_FLOOD_STAGE = "cluster.routing.allocation.disk.watermark.flood_stage"

def merge_free_bytes(settings: Mapping[str, Any], total: int) -> int | None:
    """Free bytes below which a node starts no merge, from ``GET _cluster/settings?include_defaults&flat_settings``;
    ``None`` when the cluster has no such rule.

    Elasticsearch 8.19 and 9.1 hold merges (``_forcemerge`` too) back while the disk is fuller than
    ``indices.merge.disk.watermark.high``: a share of the disk used (``95%`` or ``0.95``; by default the
    allocation flood stage, and then at most 100 GB free is asked for) or a size left free (``50gb``).
    Clusters without the rule (OpenSearch, older Elasticsearch) have no
    ``indices.merge.disk.check_interval`` setting.
    """
    flat: dict[str, Any] = {}
    for scope in ("defaults", "persistent", "transient"):  # later scopes win
        flat.update(settings.get(scope) or {})
    if "indices.merge.disk.check_interval" not in flat:
        return None
    explicit = _MERGE_WATERMARK in flat
    value = str(flat.get(_MERGE_WATERMARK) or flat.get(_FLOOD_STAGE) or "95%").strip()
    try:
        used = float(value[:-1]) / 100 if value.endswith("%") else float(value)  # a bare number is a ratio
    except ValueError:
        return byte_size(value)  # a size left free
    needed = round(total * (1 - used))
    headroom = byte_size(str(flat.get(f"{_MERGE_WATERMARK}.max_headroom", "")))
    if headroom is None and not explicit:
        headroom = 100 << 30
    return min(needed, headroom) if headroom is not None else needed


__all__ = [
    "NO_TEXT_EMPTY",
    "NO_TEXT_MISSING",
    "Action",
    "candidate_query",
    "candidate_search",
    "candidates_union_search",
    "checked",
    "current_query",
    "document_json",
    "document_source",
    "error_update",
    "field_values",
    "fingerprint_update",
    "group_update",
    "header_json",
    "hit_id",
    "ids_from_doc_values",
    "index_action",
    "KEY_HOLDERS",
    "key_counts",
    "key_frequency_search",
    "matched",
    "merge_free_bytes",
    "page_search",
    "part_search",
    "stored_fingerprint",
    "target",
    "text_of",
    "title_of",
    "update_action",
    "walk_query",
]
