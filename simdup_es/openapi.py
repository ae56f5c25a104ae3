"""The OpenAPI 3.1 description of ``simdup serve`` (``GET /openapi.json``), for clients in other languages.

Written out rather than generated: Starlette has no schema of its own, and the
routes are few. It says what the server takes, bounds and enums included (a server's
``k`` and largest ``limit``), so that a client generated from it, or a schema fuzzer,
sends requests the server answers: ``tests/unit/test_serve.py`` checks that it names
every route, ``tests/fuzz`` runs schemathesis against it.
"""

from __future__ import annotations

from typing import Any

_ERROR = {"type": "object", "required": ["error"], "properties": {"error": {
    "type": "object", "required": ["type", "message"],
    "properties": {"type": {"type": "string", "examples": ["not_found"]}, "message": {"type": "string"}}}}}
QUERY_TRUE, QUERY_FALSE = ("true", "1", "yes"), ("false", "0", "no")
"""A flag's words in a query string (in JSON it is ``true`` or ``false``)."""
_ID = {"type": "string", "minLength": 1}
_TEXT = {"type": "string", "pattern": "\\S", "description": "A text (it must hold words to fingerprint)."}


def _or_null(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or ``null``: the server takes a ``null`` field as one not given."""
    return {**schema, "type": [schema["type"], "null"]}


def _search_fields(k: int, max_limit: int) -> dict[str, Any]:
    """The fields of a search: a stored ``id`` or a ``text``, and the options, bounded as this server bounds them."""
    return {
        "id": _or_null({**_ID, "description": "A stored document to search with (left out of its results)."}),
        "text": _or_null({**_TEXT, "description": "A text to search with (give id or text)."}),
        "title": _or_null({"type": "string"}),
        "k": _or_null({"type": "integer", "minimum": 0, "maximum": k,
                       "description": "Largest Hamming distance of a near-duplicate (up to the server's k)."}),
        "limit": _or_null({"type": "integer", "minimum": 0, "maximum": max_limit}),
        "levels": {"type": "string", "enum": ["all", "document"],
                   "description": "all: near-duplicates and partial copies; document: near-duplicates only, unscored."},
        "partial_threshold": _or_null({"type": "number", "minimum": 0, "maximum": 1}),
        "spans": {"type": "boolean", "default": True, "description": "false: each match's 'spans' is null (not mapped "
                  "to original characters; a faster search)."},
        "exclude_texts": _or_null({"type": "array", "items": {"type": "string"}, "description": "Texts whose text never "
                                   "counts as copied (templates; beside the server's --exclude-file); in a query "
                                   "string, the parameter once per text."}),
    }


_EXCLUSIONS: dict[str, Any] = {
    "exclude_quotations": {"type": "boolean", "description": "Quotations do not count."},
    "exclude_references": {"type": "boolean", "description": "The list of references does not count."},
    "min_chars": _or_null({"type": "integer", "minimum": 0, "maximum": 1_000_000,
                           "description": "Copied passages shorter than this do not count."}),
    "format": {"type": "string", "enum": ["json", "html"]},
}
_ONE_OF_ID_TEXT = [{"required": ["id"], "properties": {"id": _ID}}, {"required": ["text"], "properties": {"text": _TEXT}}]
_SIDE = {"oneOf": [_TEXT, {"type": "object", "properties": {"id": _or_null(_ID), "text": _or_null(_TEXT),
                                                             "title": _or_null({"type": "string"})},
                           "additionalProperties": False, "oneOf": _ONE_OF_ID_TEXT}],
         "description": "A text, or {id} (a stored document), or {text, title}."}
_MATCH = {"type": "object", "properties": {
    "id": {"type": "string"}, "kind": {"type": "string", "enum": ["near-duplicate", "partial"]},
    "distance": {"type": ["integer", "null"]}, "title": {"type": ["string", "null"]},
    **{name: {"type": ["number", "null"]} for name in (
        "copied_query", "copied_match", "common_query", "common_match", "similarity_query", "similarity_match",
        "containment_query_in_match", "containment_match_in_query")},
    "common_documents": {"type": ["integer", "null"], "description": "The most stored documents holding a stretch of "
                         "the common text the two share (counted in neither copied share)."},
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
    "common_a": {"type": "number"}, "common_b": {"type": "number"}, "version": {"type": "string"},
    "common": {"type": "object", "description": "The common text A and B share (held by many stored documents, or "
               "an excluded text's), in each text's own characters: {'a': [{start, end, documents, text}], 'b': [...]}; "
               "documents null for an excluded text's."},
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
    "common": {"type": "array", "description": "Common text the document shares with its sources (many stored documents "
               "hold it: at most `documents`; null: an excluded text's), never counted.", "items": {
                   "type": "object", "properties": {"start": {"type": "integer"}, "end": {"type": "integer"},
                                                    "documents": {"type": ["integer", "null"]}}}},
    "settings": {"type": "array", "items": {"type": "string"}},
    "left_out": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "string"}, "reason": {"type": "string"}}}},
    "more": {"type": "integer"}}}
_DOCUMENT = {"anyOf": [{"type": "object", "required": ["text"], "additionalProperties": False, "properties": {
    "id": _ID, "text": _TEXT, "title": {"type": "string"}, **{name: {"type": "string"} for name in ("url", "author", "date")}}},
    {}], "description": "A document {id, text, title, url, author, date}; anything else is rejected with its reason."}


def _page_or_json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": "OK", "content": {"text/html": {"schema": {"type": "string"}},
                                             "application/json": {"schema": schema}}}


def _json(schema: dict[str, Any], description: str = "OK") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*codes: int) -> dict[str, Any]:
    """The errors of a route: ``codes`` and those of every route (a foreign Host, the store down, the time limit)."""
    return {str(code): _json(_ERROR, "error") for code in sorted({*codes, 403, 503, 504})}


def _query(fields: dict[str, Any], names: tuple[str, ...], required: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Query parameters: in a URL a value is a string, so ``null`` is no value of theirs, and a flag is one of
    six words."""
    def plain(schema: dict[str, Any]) -> dict[str, Any]:
        kind = schema.get("type")
        if kind == "boolean":  # as the server reads a flag in a query string
            return {"type": "string", "enum": [*QUERY_TRUE, *QUERY_FALSE], **{
                key: value for key, value in schema.items() if key == "description"}}
        return {**schema, "type": kind[0]} if isinstance(kind, list) else schema

    return [{"name": n, "in": "query", "required": n in required, "schema": plain(fields[n])} for n in names]


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _object(properties: dict[str, Any], **more: Any) -> dict[str, Any]:
    """A request body: these fields and no others (the server refuses a field it does not know)."""
    return {"type": "object", "properties": properties, "additionalProperties": False, **more}


def openapi(version: str, k: int = 3, max_limit: int = 1000) -> dict[str, Any]:
    """The description, for the package ``version`` and a server's largest ``k`` and ``limit``."""
    search_fields = _search_fields(k, max_limit)
    fields = {**search_fields, **_EXCLUSIONS, "a": _ID, "b": _ID,
              "exclude_source": {"type": "array", "items": _ID}}
    search_params = _query(fields, ("id", "k", "limit", "levels", "partial_threshold", "spans", "exclude_texts"),
                           ("id",))
    report_params = [{"name": "doc_id", "in": "path", "required": True, "schema": _ID,
                      "description": "The stored id, percent-encoded; '.json' at the end answers JSON (unless "
                                     "format=html: an id that itself ends in '.json')."},
                     *_query(fields, ("k", "limit", "levels", "partial_threshold", "exclude_quotations",
                                      "exclude_references", "min_chars", "format", "exclude_texts")),
                     {"name": "exclude_source", "in": "query", "required": False, "description": "A stored id not to "
                      "count as a source (repeatable).", "schema": fields["exclude_source"], "explode": True}]
    search_body = _object(search_fields, oneOf=_ONE_OF_ID_TEXT)
    report_body = _object({**search_fields, **_EXCLUSIONS, "exclude_source": {
        "oneOf": [_ID, {"type": "array", "items": _ID}]}}, oneOf=_ONE_OF_ID_TEXT)
    compare_body = _object({"a": _SIDE, "b": _SIDE, **{name: fields[name] for name in (
        "k", "partial_threshold", "exclude_texts")}}, required=["a", "b"])
    documents_body = {"oneOf": [{"type": "array", "items": _DOCUMENT}, _object(
        {"documents": {"type": "array", "items": _DOCUMENT}, "levels": {"type": "string", "enum": [
            "all", "keys", "document"]}}, required=["documents"])]}
    page = {"200": {"description": "OK", "content": {"text/html": {"schema": {"type": "string"}}}}, **_errors()}
    paths = {
        "/": {"get": {"summary": "A page to paste or upload a text and read its report, or open a stored document's",
                      "responses": page}},
        "/docs": {"get": {"summary": "This description as a page", "responses": page}},
        "/health": {"get": {"summary": "The store answers: documents, fingerprint versions", "responses": {
            "200": _json({"type": "object"}), **_errors()}}},
        "/search": {
            "get": {"summary": "Copies of a stored document (a text: POST)", "parameters": search_params,
                    "responses": {"200": _json(_SEARCH_RESULT), **_errors(400, 404, 409, 422)}},
            "post": {"summary": "Copies of a stored document or a text", "requestBody": _body(search_body),
                     "responses": {"200": _json(_SEARCH_RESULT), **_errors(400, 404, 409, 413, 415, 422)}}},
        "/compare": {
            "get": {"summary": "Two stored documents compared",
                    "parameters": _query(fields, ("a", "b", "k", "partial_threshold", "exclude_texts"), ("a", "b")),
                    "responses": {"200": _json(_COMPARE_RESULT), **_errors(400, 404, 409, 413, 422)}},
            "post": {"summary": "Two texts or stored documents compared", "requestBody": _body(compare_body),
                     "responses": {"200": _json(_COMPARE_RESULT), **_errors(400, 404, 409, 413, 415, 422)}}},
        "/report/{doc_id}": {"get": {
            "summary": "The copy report of a stored document: an HTML page, or JSON", "parameters": report_params,
            "responses": {"200": _page_or_json(_REPORT_RESULT), **_errors(400, 404, 409, 422)}}},
        "/report": {"post": {"summary": "The copy report of a text or stored document (JSON, or with format html "
                                        "the page)", "requestBody": _body(report_body),
                             "responses": {"200": _page_or_json(_REPORT_RESULT), **_errors(400, 404, 409, 413, 415, 422)}}},
        "/documents": {"post": {
            "summary": "Index documents (only when the server allows it): each one is indexed, or rejected with its "
                       "reason (a document that is not an object with a text among them)", "requestBody": _body(documents_body),
            "responses": {"200": _json({"type": "object", "required": ["indexed", "rejected", "documents"], "properties": {
                "indexed": {"type": "integer"}, "rejected": {"type": "array", "items": {"type": "object", "properties": {
                    "source": {"type": "string"}, "id": {"type": ["string", "null"]}, "reason": {"type": "string"}}}},
                "documents": {"type": "integer"}}}), **_errors(400, 401, 413, 415)}}},
        "/openapi.json": {"get": {"summary": "This description", "responses": {"200": _json({"type": "object"})}}},
    }
    return {"openapi": "3.1.0", "info": {"title": "simdup serve", "version": version,
                                         "description": "Near-duplicates and partial copies over HTTP (docs/serve.md)."},
            "paths": paths, "components": {"schemas": {"Span": _SPAN}}}
