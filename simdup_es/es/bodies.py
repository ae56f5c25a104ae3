"""Request bodies and documents for Elasticsearch: pure functions, no client, no I/O.

Everything simdup sends to a cluster or reads out of its answers is built or
parsed here: the candidate query, the body of one page of a walk,
bulk actions, the partial updates of ``backfill`` and ``groups``, and the text
of a ``_source``. :mod:`simdup_es.es.io` sends them.

The candidate query
-------------------
By the pigeonhole principle, two fingerprints within Hamming distance ``k`` agree
on at least ``blocks - k`` of ``blocks`` blocks, so a ``bool`` query with one
``term`` clause per block and ``minimum_should_match: blocks - k`` misses none of
them. It also returns some documents further away: candidates must be re-ranked
by exact distance.
"""

from __future__ import annotations

import json
import math
import re
import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import schema
from .. import simhash as sh
from ..common import byte_size
from ..config import BlockLayout
from ..errors import ConfigError

Action = tuple[dict[str, Any], "dict[str, Any] | str | None"]
"""One bulk action: the header line (``{"index": {...}}``, ``{"update": {...}}``) and the body line
(a ``dict``, or its JSON text: :func:`document_json`)."""

NO_TEXT_MISSING = "no text: field missing"
NO_TEXT_EMPTY = "no text: field empty"


# --- searches -------------------------------------------------------------------------------


def candidate_query(fingerprint: int, version: str, layout: BlockLayout = BlockLayout()) -> dict[str, Any]:
    """The ``bool`` query for documents sharing at least ``layout.min_match`` blocks.

    The fingerprint version is a filter: fingerprints made by another recipe are
    not comparable.
    """
    should = [
        {"term": {schema.block_field(layout, j): schema.block_term(layout, value)}}
        for j, value in enumerate(sh.blocks(fingerprint, layout))
    ]
    return {
        "bool": {
            "should": should,
            "minimum_should_match": layout.min_match,
            "filter": [{"term": {schema.VERSION: version}}],
        }
    }


def candidate_terms_query(fingerprint: int, version: str, layout: BlockLayout = BlockLayout()) -> dict[str, Any]:
    """The candidate query of the ``terms`` document layout: documents whose fingerprint shares
    ``layout.min_match`` (at least 5) of 8 byte blocks, by its 56 flat terms (``simdup.dk``, as
    :func:`flat_part_clause` finds parts): each term holds only the fingerprints that agree with
    it on 5 blocks, so the postings walked do not grow with the index."""
    clause = flat_part_clause(fingerprint, layout)
    field = next(iter(clause))
    if field == "terms":
        clause = {"terms": {schema.DOC_TERMS: clause["terms"][schema.PART_TERMS]}}
    else:
        for term in clause["bool"]["should"]:
            term["term"] = {schema.DOC_TERMS: term["term"][schema.PART_TERMS]}
    return {"bool": {"filter": [clause, {"term": {schema.VERSION: version}}]}}


def candidate_search(
    fingerprint: int, version: str, layout: BlockLayout = BlockLayout(), *, size: int = 1000, exclude_id: str | None = None,
    doc_terms: bool = False,
) -> dict[str, Any]:
    """A complete ``_search`` body: the candidate query (of the ``terms`` layout with ``doc_terms``),
    only the field the re-rank needs.

    Sorted by ``_doc`` (no scoring): candidates are ranked by exact Hamming
    distance afterwards, not by relevance.
    """
    query = (candidate_terms_query if doc_terms else candidate_query)(fingerprint, version, layout)
    return _search_body(query, [schema.FP], size, ["_doc"], exclude_id=exclude_id)  # the re-rank needs only fp


def _search_body(query: dict[str, Any], fields: list[str], size: int, sort: list[Any], *, exclude_id: str | None = None,
                 total: bool = True) -> dict[str, Any]:
    """A ``_search`` body that reads the doc values ``fields`` and no ``_source``, ``exclude_id`` left out."""
    if exclude_id is not None:
        query["bool"]["must_not"] = [{"ids": {"values": [exclude_id]}}]
    return {"query": query, "_source": False, "docvalue_fields": fields, "size": size, "sort": sort,
            "track_total_hits": total}


def candidates_search_many(queries: Sequence[tuple[int, str]], layout: BlockLayout = BlockLayout(), *,
                           size: int = 10_000, doc_terms: bool = False) -> dict[str, Any]:
    """ONE ``_search`` body for the candidates of every ``(fingerprint, version)`` of ``queries``.

    A hit is a candidate of at least one query; which ones, the client tells by
    counting shared blocks (:func:`simdup_es.simhash.shared_blocks`), so the hits carry
    the fingerprint and its version. All in filter context: nothing is scored. For the
    ``terms`` document layout (whose terms are selective); in block layouts one search of
    100 queries took from half the time of an ``_msearch`` of the 100 single searches to
    the same (``benchmarks/bench_lookups.py``), and they ask :func:`candidates_union_search`.
    """
    clauses = [(candidate_terms_query if doc_terms else candidate_query)(fp, version, layout) for fp, version in queries]
    query = {"bool": {"filter": [{"bool": {"should": clauses, "minimum_should_match": 1}}]}}
    return _search_body(query, [schema.FP, schema.VERSION], size, ["_doc"])


def union_size(documents: int, layout: BlockLayout = BlockLayout(), *, most: int = 100) -> int:
    """How many fingerprints one :func:`candidates_union_search` should hold in an index of ``documents``.

    The largest number (at most ``most``, at least 1) whose search lets in no more random
    documents than it holds queries, on average: with ``c`` fingerprints a block field
    matches a random document with probability ``p = c / 2**bits``, and it passes when
    ``min_match`` of the ``blocks`` fields do. 100,000 documents in 8-bit blocks: 22 (about 20
    random hits); 10 million: 6. Measured at 100,000: 20 to 40 a search were fastest.
    """
    def random_hits(c: int) -> float:
        p = min(1.0, c / 2**layout.bits_per_block)
        tail = sum(math.comb(layout.blocks, i) * p**i * (1 - p) ** (layout.blocks - i)
                   for i in range(layout.min_match, layout.blocks + 1))
        return documents * tail

    size = 1
    while size < most and random_hits(size + 1) <= size + 1:
        size += 1
    return size


def candidates_union_search(fingerprints: Sequence[int], version: str, layout: BlockLayout = BlockLayout(), *,
                            size: int = 10_000) -> dict[str, Any]:
    """ONE ``_search`` body for a superset of the candidates of every one of ``fingerprints`` (of ``version``).

    One ``terms`` query per block field holds the values the fingerprints have there,
    and a hit must match ``layout.min_match`` of them: a document sharing that many
    blocks with one fingerprint does. So does a document whose blocks each match some
    other fingerprint of the batch; the client keeps each query's own candidates
    (:func:`simdup_es.simhash.shared_blocks`). :func:`union_size` says how many
    fingerprints keep those few. The engine builds 8 scorers where a ``bool`` of
    per-query clauses (:func:`candidates_search_many`) builds 8 a query.
    """
    values: list[set[str]] = [set() for _ in range(layout.blocks)]
    for fp in fingerprints:
        for j, block in enumerate(sh.blocks(fp, layout)):
            values[j].add(schema.block_term(layout, block))
    should = [{"terms": {schema.block_field(layout, j): sorted(terms)}} for j, terms in enumerate(values)]
    query = {"bool": {"filter": [{"term": {schema.VERSION: version}},
                                 {"bool": {"should": should, "minimum_should_match": layout.min_match}}]}}
    return _search_body(query, [schema.FP, schema.VERSION], size, ["_doc"])


def part_search(
    part_terms: Sequence[tuple[int, int]],
    key_terms: Sequence[tuple[int, int]],
    version: str,
    layout: BlockLayout = BlockLayout(),
    *,
    limit: int = 100,
    exclude_id: str | None = None,
    part_layout: str = schema.NESTED,
) -> dict[str, Any]:
    """One ``_search`` body for the documents sharing a part or a key with a query.

    ``part_terms`` and ``key_terms`` are ``(index, value)`` pairs
    (:func:`simdup_es.store.base.query_terms`). Each is a named clause (``p<index>``,
    ``k<index>``), so a hit's ``matched_queries`` says which of the query's parts and
    keys it shares. A part clause is ``nested``: at least ``layout.min_match`` of the
    8 blocks of ONE stored part. Every clause scores exactly 1 (``constant_score``;
    the nested one takes the max over the parts, 1), so a hit's score is its number
    of matched parts plus keys, and the sort (score, then ``simdup.id``) is the
    protocol's ranking, cut at ``limit`` by the engine.

    With ``part_layout="flat"`` a part clause is a ``terms`` query on the part's 56 flat
    terms (:func:`flat_part_clause`): one clause, exact, no nested document. With
    ``"quads"`` it is a ``terms`` query on its 14 quad terms (:func:`quad_part_clause`),
    which every part sharing 5 blocks matches, and a few others: the body asks for the
    hits' part fingerprints (``simdup.pf``), and :func:`checked` keeps the exact matches.
    With two layouts joined by ``+`` (an index being upgraded, :mod:`simdup_es.es.layout`)
    a part clause is either.
    """
    should: list[dict[str, Any]] = [
        {"constant_score": {"filter": {"term": {schema.KEYS: schema.key_term(key)}}, "_name": f"k{i}"}}
        for i, key in key_terms
    ]
    layouts = part_layout.split("+")
    for i, fingerprint in part_terms:
        if layouts == [schema.NESTED]:
            should.append({"nested": {**_nested_part(fingerprint, layout), "_name": f"p{i}"}})
            continue
        clauses = [_part_clause(name, fingerprint, layout) for name in layouts]
        either = clauses[0] if len(clauses) == 1 else {"bool": {"should": clauses}}
        should.append({"constant_score": {"filter": either, "_name": f"p{i}"}})
    query: dict[str, Any] = {"bool": {"should": should, "minimum_should_match": 1,
                                      "filter": [{"term": {schema.VERSION: version}}]}}
    fields = [schema.UNITS, schema.PART_FPS] if schema.QUADS in layouts else [schema.UNITS]
    return _search_body(query, fields, limit, [{"_score": "desc"}, {schema.ID: "asc"}], exclude_id=exclude_id,
                        total=False)


def _part_clause(part_layout: str, fingerprint: int, layout: BlockLayout) -> dict[str, Any]:
    if part_layout == schema.QUADS:
        return quad_part_clause(fingerprint, layout)
    if part_layout == schema.FLAT:
        return flat_part_clause(fingerprint, layout)
    return {"nested": _nested_part(fingerprint, layout)}


def ids_from_doc_values(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` reading each hit's id from the doc values of ``simdup.id`` (:func:`hit_id`) rather than its
    ``_id``, for a search whose hits all have level fields (written with ``simdup.id``): reading ``_id``
    decompresses each hit's stored fields, ``_source`` and all (4 of 7 ms of a 2 kB query's
    :func:`part_search` in one segment)."""
    return {**body, "docvalue_fields": [*body["docvalue_fields"], schema.ID], "stored_fields": "_none_"}


def hit_id(hit: Mapping[str, Any]) -> str | None:
    """The id of a hit, from ``_id`` or :func:`ids_from_doc_values` (``None``: level fields without ``simdup.id``)."""
    return hit.get("_id") or hit.get("fields", {}).get(schema.ID, [None])[0]


def _nested_part(fingerprint: int, layout: BlockLayout) -> dict[str, Any]:
    """The body of the ``nested`` clause for a part sharing ``layout.min_match`` blocks with ``fingerprint``."""
    blocks = [{"term": {schema.part_block_field(layout, j): schema.block_term(layout, value)}}
              for j, value in enumerate(sh.blocks(fingerprint, layout))]
    return {
        "path": schema.PARTS,
        "score_mode": "max",
        "query": {"constant_score": {"filter": {"bool": {"should": blocks, "minimum_should_match": layout.min_match}}}},
    }


def flat_part_clause(fingerprint: int, layout: BlockLayout = BlockLayout()) -> dict[str, Any]:
    """The filter for documents with a part sharing at least ``layout.min_match`` of 8 blocks with ``fingerprint``.

    A part shares a flat term with it exactly when they agree on at least 5 blocks
    (:func:`simdup_es.schema.flat_part_terms`), so for the default ``k = 3`` one ``terms``
    query is exact. With a smaller ``k`` (``m = 8 - k`` blocks, 6 to 8) it asks for
    ``C(m, 5)`` of the 56 terms, as a part sharing ``m`` blocks has; those may then come
    from two stored parts that each share 5 blocks (near-copies of the query part
    both). More than 3 blocks may not differ: 5 of 8 is what the terms hold.
    """
    if layout.blocks != schema.FLAT_BLOCKS or layout.min_match < schema.FLAT_MATCH:
        raise ConfigError(f"flat parts are keyed for 8 blocks with at least 5 equal; the layout {layout} asks for "
                          f"{layout.min_match} of {layout.blocks}: use k <= 3, or an index with nested parts")
    terms = schema.flat_part_terms(fingerprint)
    if layout.min_match == schema.FLAT_MATCH:
        return {"terms": {schema.PART_TERMS: terms}}
    return {"bool": {"should": [{"term": {schema.PART_TERMS: t}} for t in terms],
                     "minimum_should_match": math.comb(layout.min_match, schema.FLAT_MATCH)}}


def quad_part_clause(fingerprint: int, layout: BlockLayout = BlockLayout()) -> dict[str, Any]:
    """The filter for documents with a part sharing a quad of blocks with ``fingerprint``
    (:func:`simdup_es.schema.quad_part_terms`): every part sharing at least 5 of 8 blocks
    does, and a part sharing only a quad too (one pair of parts in 300 million, for
    fingerprints as random as a hash's); :func:`checked` drops those."""
    if layout.blocks != schema.FLAT_BLOCKS or layout.min_match < schema.FLAT_MATCH:
        raise ConfigError(f"quad parts are keyed for 8 blocks with at least 5 equal; the layout {layout} asks for "
                          f"{layout.min_match} of {layout.blocks}: use k <= 3, or an index with nested parts")
    return {"terms": {schema.PART_QUADS: schema.quad_part_terms(fingerprint)}}


def checked(hit: Mapping[str, Any], parts: frozenset[int], query: Mapping[int, int], min_match: int) -> frozenset[int]:
    """Of the query parts a hit ``matched``, those it has a part sharing ``min_match`` of 8 blocks with.

    ``query`` maps a query part's index to its fingerprint. A hit with no part fingerprints
    (``simdup.pf``) matched through exact terms (nested or flat parts, while an index is
    upgraded): its parts are kept as they are.
    """
    stored = hit.get("fields", {}).get(schema.PART_FPS)
    if not stored:
        return parts
    asked = sorted(parts)
    shared = sh.shared_blocks(np.array([query[i] for i in asked], np.uint64), np.array([int(f, 16) for f in stored], np.uint64))
    return frozenset(i for i, most in zip(asked, shared.max(axis=1).tolist(), strict=True) if most >= min_match)


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
    done: list[dict[str, Any]] = [{"exists": {"field": schema.UNITS}}]
    if not retry_errors:
        done.append({"exists": {"field": schema.ERROR}})
    return {"bool": {"filter": [{"term": {schema.VERSION: version}}], "should": done, "minimum_should_match": 1}}


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
        return f'{{"index":{{"_id":{_string(doc_id)}}}}}'
    return header


def target(hit: Mapping[str, Any]) -> dict[str, Any]:
    """Bulk metadata that addresses the document of a search hit (index, id, routing)."""
    meta = {"_index": hit["_index"], "_id": hit["_id"]}
    if hit.get("_routing") is not None:
        meta["routing"] = hit["_routing"]
    return meta


def document_source(fingerprint: int, version: str, text: str | None, title: str | None,
                    layouts: tuple[BlockLayout, ...], levels: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``_source`` of a document simdup indexes; ``levels`` (:func:`simdup_es.schema.levels_object`) join ``simdup``."""
    body: dict[str, Any] = {}
    if title is not None:
        body["title"] = title
    if text is not None:
        body["text"] = text
    body[schema.ROOT] = {**schema.fingerprint_object(fingerprint, version, layouts), **(levels or {})}
    return body


def document_json(fingerprint: int, version: str, text: str | None, title: str | None,
                  layouts: tuple[BlockLayout, ...],
                  levels: tuple[str, int, Sequence[int], Sequence[int], int] | None = None,
                  part_layout: str = schema.NESTED, doc_terms: bool = False,
                  group: tuple[str, int | None, str | None] | None = None,
                  meta: tuple[tuple[str, str], ...] = ()) -> str:
    """:func:`document_source` as the JSON text the client sends (``json.dumps``, ``ensure_ascii=False``,
    no spaces), written directly.

    ``levels`` are :func:`simdup_es.schema.levels_object`'s ``(doc_id, units, parts, keys, cut)``, the
    parts written as ``part_layout`` says (nested objects, or flat terms); ``doc_terms`` adds the
    fingerprint's flat terms (the ``terms`` document layout, :func:`candidate_terms_query`);
    ``group`` the duplicate group fields (:func:`group_update`'s, written with the document); ``meta`` the
    document's other fields (:attr:`simdup_es.store.base.StoredDoc.meta`: ``url``, ``author``, ``date``).
    Every indexed document goes through it: building the nested dicts and serialising
    them took 38 us of the feeding process's ~100 us of CPU per document, this 10 us.
    The strings go through ``json``'s own string encoder; block terms and keys are hex,
    which need none.
    """
    out = []
    if title is not None:
        out.append(f'"title":{_string(title)}')
    if text is not None:
        out.append(f'"text":{_string(text)}')
    out.extend(f'{_string(name)}:{_string(value)}' for name, value in meta)
    blocks = _blocks(fingerprint, layouts) if layouts else ""
    simdup = f'"fp":"{sh.to_hex(fingerprint)}","version":{_string(version)}' + (f",{blocks}" if blocks else "")
    if doc_terms:
        simdup += f',"{schema.DOC_TERMS_NAME}":[{schema.flat_terms_json([fingerprint])}]'
    if levels is not None:
        doc_id, units, parts, keys, cut = levels
        simdup += (f',"{schema.ID_NAME}":{_string(doc_id)},"{schema.UNITS_NAME}":{int(units)},'
                   f'"{schema.CUT_NAME}":{int(cut)},"{schema.KEYS_NAME}":[{schema.key_terms_json(keys)}],')
        if part_layout == schema.QUADS:
            simdup += (f'"{schema.PART_QUADS_NAME}":[{schema.quad_terms_json(parts)}],'
                       f'"{schema.PART_FPS_NAME}":[{schema.part_fps_json(parts)}]')
        elif part_layout == schema.FLAT:
            simdup += f'"{schema.PART_TERMS_NAME}":[{schema.flat_terms_json(parts)}]'
        else:
            simdup += f'"{schema.PARTS_NAME}":[{_parts(parts, layouts)}]'
    out.append(f'"{schema.ROOT}":{{{simdup}}}')
    if group is not None:
        out.append(json.dumps(group_update(*group), ensure_ascii=False, separators=(",", ":"))[1:-1])
    return "{" + ",".join(out) + "}"


_string = json.encoder.encode_basestring  # type: ignore[attr-defined]  # what json.dumps uses with ensure_ascii=False
# 8 blocks of 8 bits (the default layout, whatever its k) are the bytes of the fingerprint, lowest first.
_BYTE_BLOCKS = ",".join(f'"{schema.block_name(BlockLayout(8), j)}":"%s"' for j in range(8))


def _bytewise(layouts: tuple[BlockLayout, ...]) -> bool:
    return len(layouts) == 1 and layouts[0].blocks == 8


def _blocks(fingerprint: int, layouts: tuple[BlockLayout, ...]) -> str:
    """The members ``"b0":"da",...`` of :func:`simdup_es.schema.block_terms` as JSON text."""
    if _bytewise(layouts):
        return _BYTE_BLOCKS % tuple(int(fingerprint).to_bytes(8, "little").hex(" ").split())
    return ",".join(f'"{name}":"{term}"' for name, term in schema.block_terms(fingerprint, layouts).items())


def _parts(parts: Sequence[int], layouts: tuple[BlockLayout, ...]) -> str:
    """The objects of :func:`simdup_es.schema.block_terms` of each part (a nested part) as JSON text, comma-separated."""
    if _bytewise(layouts):  # every part's bytes in one pack, formatted in one go
        return ",".join(["{" + _BYTE_BLOCKS + "}"] * len(parts)) % tuple(
            struct.pack(f"<{len(parts)}Q", *parts).hex(" ").split())
    return ",".join("{" + _blocks(f, layouts) + "}" for f in parts)


def group_update(group: str | None, size: int | None, kind: str | None = None) -> dict[str, Any]:
    """The partial ``doc`` that sets (or, with ``None``, clears) a document's duplicate group and its kind."""
    return {schema.GROUP: group, schema.GROUP_SIZE: size, schema.GROUP_KIND: kind}


def fingerprint_update(old: Mapping[str, Any] | None, fingerprint: int, version: str,
                       levels: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The partial ``doc`` that sets a fingerprint (and ``levels``, :func:`simdup_es.schema.levels_object`);
    keys of ``old`` it does not set become null.

    Nulling matters: a partial update merges objects, so without it an old
    ``simdup.error``, the blocks of another layout or the levels of an older text
    would outlive the fingerprint they belonged to.
    """
    new = {**schema.fingerprint_object(fingerprint, version), **(levels or {})}
    stale = {key: None for key in (old or {}) if key not in new}
    return {schema.ROOT: {**stale, **new}}


def error_update(old: Mapping[str, Any] | None, version: str, reason: str) -> dict[str, Any]:
    """The partial ``doc`` that marks a document as unusable for ``version`` (and drops any old fingerprint)."""
    stale = {key: None for key in (old or {}) if key not in ("version", "error")}
    return {schema.ROOT: {**stale, "version": version, "error": reason}}


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
    fp = source.get(schema.ROOT)
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
    "candidate_terms_query",
    "checked",
    "current_query",
    "document_json",
    "document_source",
    "error_update",
    "field_values",
    "flat_part_clause",
    "fingerprint_update",
    "group_update",
    "header_json",
    "hit_id",
    "ids_from_doc_values",
    "index_action",
    "matched",
    "merge_free_bytes",
    "page_search",
    "part_search",
    "quad_part_clause",
    "stored_fingerprint",
    "target",
    "text_of",
    "title_of",
    "update_action",
    "walk_query",
]
