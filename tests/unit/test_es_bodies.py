"""The pure Elasticsearch layer (simdup_es.es.bodies): request bodies, updates, reading _source."""

from __future__ import annotations

import json
from collections.abc import Sequence

from elasticsearch.serializer import JsonSerializer
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es import keys, reference
from simdup_es import simhash as sh
from simdup_es.backfill import ERROR
from simdup_es.es import bodies
from simdup_es.es.bodies import (
    NO_TEXT_EMPTY,
    NO_TEXT_MISSING,
    candidate_query,
    candidate_search,
    error_update,
    field_values,
    fingerprint_update,
    text_of,
    walk_query,
)


def document_json_reference(fingerprint: int, version: str, text: str | None, title: str | None, layout: str,
                            levels: tuple[str, int, Sequence[int], Sequence[int], int] | None = None) -> str:
    """:func:`bodies.document_json` by its definition: :func:`bodies.document_source` through ``json.dumps`` as the client does."""
    fields = None if levels is None else keys.levels_object(*levels)
    return json.dumps(bodies.document_source(fingerprint, version, text, title, layout, fields),
                      ensure_ascii=False, separators=(",", ":"))


def test_candidate_query_has_one_term_per_block_and_needs_blocks_minus_k() -> None:
    fp = 0xE28764262E8514DA
    query = candidate_query(fp, "v1", 3)["bool"]
    assert query["minimum_should_match"] == 5
    assert query["filter"] == [{"term": {keys.VERSION: "v1"}}]
    # Block j holds bits 8j..8j+7, lowest first, as two hex digits in simdup.bj.
    assert query["should"] == [{"term": {f"simdup.b{j}": f"{(fp >> (8 * j)) & 0xFF:02x}"}} for j in range(8)]
    assert query["should"][0] == {"term": {"simdup.b0": "da"}} and query["should"][7] == {"term": {"simdup.b7": "e2"}}
    assert [candidate_query(fp, "v1", k)["bool"]["minimum_should_match"] for k in range(8)] == [8, 7, 6, 5, 4, 3, 2, 1]


def test_candidate_search_reads_only_the_fingerprint_and_can_leave_one_out() -> None:
    body = candidate_search(1, "v1", 3, size=50, exclude_id="me")
    assert body["_source"] is False and body["docvalue_fields"] == [keys.FP]
    assert body["size"] == 50 and body["sort"] == ["_doc"] and body["track_total_hits"] is True
    assert body["query"]["bool"]["must_not"] == [{"ids": {"values": ["me"]}}]
    assert "must_not" not in candidate_search(1, "v1", 3)["query"]["bool"]


def test_field_values_follow_objects_arrays_and_dotted_keys() -> None:
    source = {"a": {"b": "x"}, "a.b": "y", "list": [{"t": "1"}, {"t": ["2", None]}, {"u": 3}], "n": None}
    assert field_values(source, "a.b") == ["x", "y"]
    assert field_values(source, "list.t") == ["1", "2"]
    assert field_values(source, "n") == [] and field_values(source, "nope.x") == []


def test_text_of_reasons() -> None:
    assert text_of({"t": ["a", "b"]}, "t") == ("a\n\nb", None)
    assert text_of({}, "t") == (None, NO_TEXT_MISSING)
    assert text_of({"t": " "}, "t") == (None, NO_TEXT_EMPTY)
    assert text_of({"t": {"x": 1}}, "t")[1] == "field 't' holds dict, not text"
    assert "binary" in (text_of({"t": "\x01\x02\x03abc"}, "t")[1] or "")
    assert text_of({"t": "中文\x0b正文\u3000"}, "t")[1] is None


def test_updates_null_what_they_do_not_set() -> None:
    old = {"fp": "00", "version": "v0", "b0": "00", "dk": ["AAAAAAAA"], "error": "x"}
    new = fingerprint_update(old, 1, "v1")[keys.ROOT]
    assert new["dk"] is None and new["error"] is None and new["fp"] == sh.to_hex(1) and new["version"] == "v1"
    assert fingerprint_update(old, 1, "v1", layout="terms")[keys.ROOT]["dk"] == keys.doc_terms(1)
    marked = error_update(old, "v1", "no text")[keys.ROOT]
    assert marked == {"fp": None, "b0": None, "dk": None, "version": "v1", "error": "no text"}
    assert error_update(None, "v1", "r") == {keys.ROOT: {"version": "v1", "error": "r"}}


def test_walk_query_excludes_the_current_version_with_its_levels() -> None:
    current = walk_query("v1")["bool"]["must_not"][0]["bool"]
    assert current["filter"] == [{"term": {keys.VERSION: "v1"}}] and current["minimum_should_match"] == 1
    assert current["should"] == [{"exists": {"field": keys.UNITS}}, {"exists": {"field": ERROR}}]
    retry = walk_query("v1", retry_errors=True)["bool"]["must_not"][0]["bool"]
    assert retry["should"] == [{"exists": {"field": keys.UNITS}}]  # a marked document is read again


def test_part_search_names_every_clause_and_scores_each_one() -> None:
    from simdup_es.es.bodies import matched, part_search

    fp = 0xE28764262E8514DA
    body = part_search([(0, fp), (3, fp ^ 1)], [(1, 5), (2, 2**64 - 1)], "v1", limit=7, exclude_id="me")
    query = body["query"]["bool"]
    assert query["filter"] == [{"term": {keys.VERSION: "v1"}}] and query["must_not"] == [{"ids": {"values": ["me"]}}]
    assert query["minimum_should_match"] == 1
    key_clauses, parts = query["should"][:2], query["should"][2:]
    assert [k["constant_score"]["_name"] for k in key_clauses] == ["k1", "k2"]
    assert key_clauses[1]["constant_score"]["filter"] == {"term": {keys.KEYS: "_______"}}  # a key's first 42 bits
    assert [p["constant_score"]["_name"] for p in parts] == ["p0", "p3"]
    # A part: one terms query on its 6 quads; the hits bring the part fingerprints for the 6-of-8 check.
    assert parts[0]["constant_score"]["filter"] == {"terms": {keys.PART_QUADS: keys.quad_terms(fp)}}
    assert body["docvalue_fields"] == [keys.UNITS, keys.PART_FPS]
    # Ranked by matched clauses (the score), then id; cut by the engine at the limit.
    assert body["sort"] == [{"_score": "desc"}, {keys.ID: "asc"}] and body["size"] == 7
    assert matched({"matched_queries": ["p3", "k2", "p0"]}) == ({0, 3}, {2})
    assert matched({"matched_queries": {"k1": 1.0}}) == (frozenset(), {1})


_U64 = st.integers(min_value=0, max_value=2**64 - 1)
# Any text the client may send: lone surrogates, control characters, quotes and backslashes included.
_TEXT = st.text(st.characters(codec=None, categories=None), max_size=40) | st.sampled_from(['"\\\n\t\x00\ud800', "題\u2028"])
_DOC_LAYOUTS = st.sampled_from(keys.LAYOUTS)


@settings(max_examples=300, deadline=None)
@given(_U64, _TEXT, st.none() | _TEXT, st.none() | _TEXT, _DOC_LAYOUTS,
       st.none() | st.tuples(_TEXT, st.integers(0, 10**6), st.lists(_U64, max_size=8), st.lists(_U64, max_size=8),
                             st.integers(0, 100)))
def test_document_json_is_the_serialised_source(fingerprint: int, version: str, text: str | None, title: str | None,
                                                layout: str, levels: tuple | None) -> None:
    """The JSON text written directly (the members by keys.members_json) is, byte for byte, what the client makes
    of the ``_source`` dict."""
    members = keys.members_json(fingerprint, version, layout, None if levels is None else levels[1:])
    fast = bodies.document_json(members, text, title, None if levels is None else levels[0])
    assert fast == document_json_reference(fingerprint, version, text, title, layout, levels)
    assert JsonSerializer().dumps(fast) == JsonSerializer().dumps(
        bodies.document_source(fingerprint, version, text, title, layout,
                               None if levels is None else keys.levels_object(*levels)))


_HEADER = st.one_of(
    st.builds(lambda i: {"index": {"_id": i}}, _TEXT),
    st.dictionaries(st.sampled_from(["index", "update", "delete"]),
                    st.dictionaries(st.sampled_from(["_id", "_index", "routing", "if_seq_no"]), _TEXT | st.integers()),
                    min_size=1, max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(_HEADER)
def test_header_json_is_what_the_client_sends(header: dict) -> None:
    assert JsonSerializer().dumps(bodies.header_json(header)) == JsonSerializer().dumps(header)


@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=40), st.lists(st.integers(0, 2**64 - 1), max_size=40),
       st.integers(0, 7), st.sampled_from(keys.LAYOUTS))
def test_a_union_search_finds_every_candidate_of_each_query(queries: list[int], others: list[int], k: int,
                                                           layout: str) -> None:
    # Stored: the queries' near copies (2 bits apart) and random others. The body is read as the engine would.
    body = bodies.candidates_union_search(queries, "v1", k, layout)
    version, union = body["query"]["bool"]["filter"]
    assert version == {"term": {keys.VERSION: "v1"}} and body["docvalue_fields"] == [keys.FP, keys.VERSION]
    terms = {field: set(values) for clause in union["bool"]["should"] for field, values in clause["terms"].items()}

    def passes(fp: int) -> bool:
        held = keys.doc_fields(fp, layout)
        matched = sum(bool(set(value if isinstance(value, list) else [value]) & terms.get(f"{keys.ROOT}.{name}", set()))
                      for name, value in held.items())
        return matched >= union["bool"]["minimum_should_match"]

    stored = [q ^ 0b101 for q in queries] + others
    for fp in stored:
        if any(reference.shared_blocks_reference(q, fp) >= 8 - k for q in queries):
            assert passes(fp)


def test_merge_free_bytes_follows_the_merge_watermark() -> None:
    gib = 1 << 30
    rule = {"indices.merge.disk.check_interval": "5s"}
    total = 1000 * gib
    # Not set: the flood stage's 95%, at most 100 GB free asked for.
    assert bodies.merge_free_bytes({"defaults": rule}, total) == 50 * gib
    assert bodies.merge_free_bytes({"defaults": rule}, 4000 * gib) == 100 * gib
    # Set: a share used (percent or ratio, no headroom unless given) or a size left free; later scopes win.
    assert bodies.merge_free_bytes({"defaults": rule, "persistent": {bodies._MERGE_WATERMARK: "90%"}}, total) == 100 * gib
    assert bodies.merge_free_bytes({"defaults": rule, "persistent": {bodies._MERGE_WATERMARK: "0.5"}}, total) == 500 * gib
    assert bodies.merge_free_bytes({"defaults": {**rule, bodies._MERGE_WATERMARK: "50%"},
                                    "transient": {bodies._MERGE_WATERMARK: "100%"}}, total) == 0
    assert bodies.merge_free_bytes({"defaults": rule, "persistent": {bodies._MERGE_WATERMARK: "20gb"}}, total) == 20 * gib
    assert bodies.merge_free_bytes({"defaults": {**rule, f"{bodies._MERGE_WATERMARK}.max_headroom": "30gb"},
                                    "persistent": {bodies._MERGE_WATERMARK: "50%"}}, total) == 30 * gib
    # No such rule (OpenSearch, Elasticsearch before 8.19).
    assert bodies.merge_free_bytes({"defaults": {"cluster.routing.allocation.disk.watermark.flood_stage": "95%"}},
                                   total) is None


def test_a_reason_quoting_the_document_is_cut() -> None:
    """A text too long for a keyword field comes back with a 'preview' of the value: the document itself."""
    from simdup_es.es.io import REASON_CHARS, item_reason

    preview = "长" * 20_000
    error = {"type": "document_parsing_exception", "reason": "[1:9] failed to parse",
             "caused_by": {"type": "illegal_argument_exception",
                           "reason": f"Document contains at least one immense term in field=\"text\": '{preview}'"}}
    reason = item_reason(error)
    assert reason.startswith("document_parsing_exception: [1:9] failed to parse (caused by illegal_argument_exception: ")
    assert len(reason) < 2 * REASON_CHARS + 200 and "20,0" in reason and preview not in reason
    assert item_reason({"type": "x", "reason": "short"}) == "x: short"
