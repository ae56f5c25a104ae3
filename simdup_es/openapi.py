"""The OpenAPI 3.1 description of ``simdup serve`` (``GET /openapi.json``), for clients in other languages.

Written out rather than generated: Starlette has no schema of its own, and the
routes are few. ``tests/unit/test_serve.py`` checks that it names every route.
"""

from __future__ import annotations

from typing import Any

_ERROR = {"type": "object", "required": ["error"], "properties": {"error": {
    "type": "object", "required": ["type", "message"],
    "properties": {"type": {"type": "string", "examples": ["not_found"]}, "message": {"type": "string"}}}}}
_SEARCH_FIELDS: dict[str, Any] = {
    "id": {"type": "string", "description": "A stored document to search with (left out of its results)."},
    "text": {"type": "string", "description": "A text to search with (give id or text)."},
    "title": {"type": "string"},
    "k": {"type": "integer", "minimum": 0, "description": "Largest Hamming distance of a near-duplicate (up to the server's k)."},
    "limit": {"type": "integer", "minimum": 0},
    "levels": {"type": "string", "enum": ["all", "document"],
               "description": "all: near-duplicates and partial copies; document: near-duplicates only, unscored."},
    "partial_threshold": {"type": "number", "minimum": 0, "maximum": 1},
    "spans": {"type": "boolean", "default": True,
              "description": "false: each match's 'spans' is null (not mapped to original characters; a faster search)."},
}
_MATCH = {"type": "object", "properties": {
    "id": {"type": "string"}, "kind": {"type": "string", "enum": ["near-duplicate", "partial"]},
    "distance": {"type": ["integer", "null"]}, "title": {"type": ["string", "null"]},
    **{name: {"type": ["number", "null"]} for name in (
        "copied_query", "copied_match", "similarity_query", "similarity_match", "containment_query_in_match",
        "containment_match_in_query")},
    "pairs": {"type": ["array", "null"], "items": {"type": "array", "items": {"type": "integer"}}},
    "spans": {"type": ["object", "null"], "description": "The copied passages in the original characters of the query "
              "and the match: {'query': [{start, end}], 'match': [...]}; null without the matrix or with spans=false.",
              "properties": {"query": {"type": "array", "items": {"$ref": "#/components/schemas/Span"}},
                             "match": {"type": "array", "items": {"$ref": "#/components/schemas/Span"}}}}}}
_SEARCH_RESULT = {"type": "object", "properties": {
    "id": {"type": ["string", "null"]}, "matches": {"type": "array", "items": _MATCH},
    "more": {"type": "integer", "description": "Copies or unjudged candidates the limit left out."}}}
_SPAN = {"type": "object", "required": ["start", "end"], "properties": {"start": {"type": "integer"},
                                                                    "end": {"type": "integer"}}}
_SENTENCE = {"type": "object", "properties": {
    "index": {"type": "integer"}, "start": {"type": "integer"}, "end": {"type": "integer"}, "units": {"type": "integer"},
    "text": {"type": "string", "description": "The sentence in the text's own characters (start:end)."}}}
_COMPARE_RESULT = {"type": "object", "description": "simdup compare --json, with the two labels.", "properties": {
    "a_label": {"type": "string"}, "b_label": {"type": "string"},
    "a": {"type": "string", "description": "A's fingerprint (16 hex digits)"}, "b": {"type": "string"},
    "distance": {"type": "integer"}, "similarity": {"type": "number", "description": "Fingerprint bits alike, 0 to 1."},
    "kind": {"type": ["string", "null"], "enum": ["near-duplicate", "partial", None]},
    "near_duplicate": {"type": "boolean"}, "copied_a": {"type": "number"}, "copied_b": {"type": "number"},
    "version": {"type": "string"},
    "comparison": {"type": "object", "properties": {
        "scores": {"type": "object"}, "pairs": {"type": "array", "items": {"type": "object"}},
        "sentences_a": {"type": "array", "items": _SENTENCE}, "sentences_b": {"type": "array", "items": _SENTENCE},
        "core_a": {"type": ["object", "null"]}, "core_b": {"type": ["object", "null"]},
        "params": {"type": "object"}, "stats": {"type": "object"}}},
    "spans": {"type": "object", "properties": {"a": {"type": "array", "items": _SPAN}, "b": {"type": "array", "items": _SPAN}}}}}
_REPORT_RESULT = {"type": "object", "description": "simdup report --json; offsets in the document's own characters.",
                  "properties": {
    "document": {"type": "object", "properties": {"label": {"type": "string"}, "chars": {"type": "integer"}}},
    "share": {"type": "number"}, "headline": {"type": "string"},
    "figures": {"type": "object", "description": "Characters (white space aside) and shares of the document's.",
                "properties": {**{k: {"type": "integer"} for k in ("chars", "copied", "cited", "copied_without_quotations",
                                                                    "largest")},
                               **{k: {"type": "number"} for k in ("share", "share_without_quotations", "largest_share")},
                               "largest_source": {"type": ["string", "null"]}}},
    "sources": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "string"}, "title": {"type": ["string", "null"]}, "name": {"type": "string"},
        "name_from": {"type": "string", "enum": ["title", "file name", "first line"]}, "kind": {"type": "string"},
        "colour": {"type": "string"}, "distance": {"type": ["integer", "null"]}, "share_of_document": {"type": "number"},
        "chars": {"type": "integer"}, "cited_chars": {"type": "integer"}, "share_of_source": {"type": "number"},
        "source_chars": {"type": "integer"}, "source_total": {"type": "integer"},
        "also_in": {"type": "array", "items": {"type": "string"}}, "spans": {"type": "array", "items": _SPAN},
        "cited": {"type": "array", "items": _SPAN}, "source_spans": {"type": "array", "items": _SPAN}}}},
    "passages": {"type": "array", "items": {"type": "object", "properties": {
        "start": {"type": "integer"}, "end": {"type": "integer"}, "source": {"type": "string"}}}},
    "citations": {"type": "array", "description": "Quoted text found in a source.", "items": {"type": "object", "properties": {
        "start": {"type": "integer"}, "end": {"type": "integer"}, "source": {"type": "string"}}}},
    "quotations": {"type": "array", "items": _SPAN},
    "sections": {"type": "array", "items": {"type": "object", "properties": {
        "start": {"type": "integer"}, "end": {"type": "integer"}, "kind": {"type": "string"}, "title": {"type": "string"},
        "chars": {"type": "integer"}, "copied": {"type": "integer"}, "cited": {"type": "integer"},
        "share": {"type": "number"}}}},
    "excluded": {"type": "array", "items": {"type": "object"}}, "exclusions": {"type": "array", "items": {"type": "string"}},
    "settings": {"type": "array", "items": {"type": "string"}},
    "left_out": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "string"}, "reason": {"type": "string"}}}},
    "more": {"type": "integer"}}}
_SIDE = {"oneOf": [{"type": "string"}, {"type": "object", "properties": {
    "id": {"type": "string"}, "text": {"type": "string"}, "title": {"type": "string"}}}]}


def _json(schema: dict[str, Any], description: str = "OK") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*codes: int) -> dict[str, Any]:
    return {str(code): _json(_ERROR, "error") for code in (*codes, 503, 504)}


def _query(names: tuple[str, ...], required: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    return [{"name": n, "in": "query", "required": n in required, "schema": _SEARCH_FIELDS.get(n, {"type": "string"})}
            for n in names]


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def openapi(version: str) -> dict[str, Any]:
    """The description, for the package ``version``."""
    search_params = _query(("id", "text", "title", "k", "limit", "levels", "partial_threshold", "spans"))
    report_params = [{"name": "doc_id", "in": "path", "required": True, "schema": {"type": "string"},
                      "description": "The stored id, percent-encoded; '.json' at the end answers JSON."},
                     *_query(("k", "limit", "levels", "partial_threshold", "exclude_quotations", "exclude_references",
                               "min_chars", "format")),
                     {"name": "exclude_source", "in": "query", "required": False, "description": "A stored id not to "
                      "count as a source (repeatable).", "schema": {"type": "array", "items": {"type": "string"}},
                      "explode": True}]
    search_body = {"type": "object", "properties": _SEARCH_FIELDS}
    page = {"200": {"description": "OK", "content": {"text/html": {"schema": {"type": "string"}}}}, **_errors()}
    paths = {
        "/": {"get": {"summary": "A page to paste or upload a text and read its report, or open a stored document's",
                      "responses": page}},
        "/docs": {"get": {"summary": "This description as a page", "responses": page}},
        "/health": {"get": {"summary": "The store answers: documents, fingerprint versions", "responses": {
            "200": _json({"type": "object"}), **_errors()}}},
        "/search": {
            "get": {"summary": "Copies of a stored document or a text (give id or text)", "parameters": search_params,
                    "responses": {"200": _json(_SEARCH_RESULT), **_errors(400, 404, 409)}},
            "post": {"summary": "Copies of a stored document or a text", "requestBody": _body(search_body),
                     "responses": {"200": _json(_SEARCH_RESULT), **_errors(400, 404, 409, 413)}}},
        "/compare": {
            "get": {"summary": "Two stored documents compared", "parameters": _query(("a", "b", "k", "partial_threshold"),
                                                                                      ("a", "b")),
                    "responses": {"200": _json(_COMPARE_RESULT), **_errors(400, 404)}},
            "post": {"summary": "Two texts or stored documents compared", "requestBody": _body(
                {"type": "object", "required": ["a", "b"], "properties": {"a": _SIDE, "b": _SIDE, "k": {"type": "integer"},
                                                           "partial_threshold": _SEARCH_FIELDS["partial_threshold"]}}),
                "responses": {"200": _json(_COMPARE_RESULT), **_errors(400, 404, 413)}}},
        "/report/{doc_id}": {"get": {
            "summary": "The copy report of a stored document: an HTML page, or JSON", "parameters": report_params,
            "responses": {"200": {"description": "OK", "content": {"text/html": {"schema": {"type": "string"}},
                                                                   "application/json": {"schema": _REPORT_RESULT}}},
                          **_errors(400, 404)}}},
        "/report": {"post": {"summary": "The copy report of a text or stored document", "requestBody": _body(
            {"type": "object", "properties": {**_SEARCH_FIELDS, "exclude_quotations": {"type": "boolean"},
                                              "exclude_references": {"type": "boolean"}, "min_chars": {"type": "integer"},
                                              "exclude_source": {"oneOf": [{"type": "string"}, {
                                                  "type": "array", "items": {"type": "string"}}]},
                                              "format": {"type": "string", "enum": ["json", "html"]}}}),
            "responses": {"200": _json(_REPORT_RESULT), **_errors(400, 404, 413)}}},
        "/documents": {"post": {"summary": "Index documents (only when the server allows it)", "requestBody": _body(
            {"type": "object", "properties": {"documents": {"type": "array", "items": {"type": "object", "properties": {
                "id": {"type": "string"}, "text": {"type": "string"}, "title": {"type": "string"}}}},
                "levels": {"type": "string", "enum": ["all", "keys", "document"]}}}),
            "responses": {"200": _json({"type": "object", "properties": {
                "indexed": {"type": "integer"}, "rejected": {"type": "array"}, "documents": {"type": "integer"}}}),
                **_errors(400, 403, 413)}}},
        "/openapi.json": {"get": {"summary": "This description", "responses": {"200": _json({"type": "object"})}}},
    }
    return {"openapi": "3.1.0", "info": {"title": "simdup serve", "version": version,
                                         "description": "Near-duplicates and partial copies over HTTP (docs/serve.md)."},
            "paths": paths, "components": {"schemas": {"Span": _SPAN}}}
