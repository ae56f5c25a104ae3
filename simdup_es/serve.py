"""``simdup serve``: the search, the comparison and the copy report over HTTP.

:func:`create_app` builds an ASGI application (Starlette) over a
:class:`~simdup_es.service.Service` (a store and the parameters); ``simdup serve`` runs it
with uvicorn::

    store = simdup_es.open_store(path=".simdup", read_only=True)
    app = create_app(Service(store))            # uvicorn.run(app, port=8000)

The routes (``docs/serve.md`` has the request and response fields):

========================  =====================================================
``GET /``                 a page to paste or upload a text and read its report
``GET /docs``             the API as a page, from its OpenAPI description
``GET /health``           the store answers: documents, fingerprint versions
``GET|POST /search``      copies of a stored document (``id``) or of a posted text
``GET|POST /compare``     two texts or stored documents, sentence by sentence
``GET /report/{id}``      the copy report of a stored document, an HTML page
``GET /report/{id}.json`` the same report as JSON (also ``POST /report``, by text)
``POST /documents``       index documents; only with ``allow_index``
``GET /openapi.json``     the OpenAPI description of these routes
========================  =====================================================

Store and search calls block (SQLite, the cluster's HTTP client, the comparison
matrix), so each runs on a worker thread (at most ``threads`` at once), never on
the event loop. A request gets ``timeout`` seconds, waiting for a thread
included; past that the answer is 504 (a call not started never starts; one under
way finishes unseen, holding its thread's slot until it does). Bodies are JSON
declared as such (else 415), which a web page elsewhere cannot send unasked; a
loopback server answers only its own host names, and a write from another origin,
or without the token when there is one, is refused (:func:`check_access`).
Every error is JSON, ``{"error": {"type", "message"}}``, with its status code;
messages never carry a credential (:func:`scrub`).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import hmac
import itertools
import json
import logging
import math
import re
import secrets
import threading
import time
import traceback
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import anyio.from_thread
import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .config import Retry
from .errors import (
    ConfigError,
    FingerprintVersionError,
    InputError,
    NotFound,
    SimdupError,
    StoreError,
    TooLarge,
    TooManyPairs,
)
from .keys import MAX_K
from .matrix import bounded_pairs
from .multilevel import MultiParams
from .openapi import QUERY_FALSE, QUERY_TRUE
from .report import Exclusions, SimilarityReport, matches_json, render_report_html, verdict_json
from .service import Query, Service
from .sources import Fields, Record, Reject, from_mapping
from .store.base import META_FIELDS

log = logging.getLogger(__name__)

SearchLevels = Literal["all", "document"]
IndexLevels = Literal["all", "keys", "document"]


@dataclass(frozen=True)
class ServeSettings:
    """Limits and defaults of the service.

    Attributes
    ----------
    allow_index:
        Accept ``POST /documents``; off, the service only reads.
    max_body_bytes:
        Largest request body; a larger one is refused with 413 before it is read.
    max_compare_bytes:
        Largest body of ``POST /compare`` (at most ``max_body_bytes`` count): the memory a comparison of two texts
        takes grows faster than their length (``docs/serve.md``), a search's about linearly.
    timeout:
        Seconds a request may take (waiting for a worker thread included); then 504.
    threads:
        Store and search calls running at once; further requests wait for a thread.
    k:
        The largest document distance of a near-duplicate; requests may ask for less.
    limit, max_limit:
        Copies returned when the request does not say, and the most it may ask for.
    refresh_every:
        Seconds between looks for other processes' writes (embedded store); 0 never looks.
    secrets:
        Strings no response may contain (a password, an API key): replaced by ``***``.
    allowed_hosts:
        The host names a request's ``Host`` header may give (any port); empty: any. A server on a
        loopback address allows only its own names, so that a web page cannot reach it through a
        DNS name it rebinds to 127.0.0.1.
    token:
        When given, a write (``POST /documents``) must carry ``Authorization: Bearer <token>``.
    """

    allow_index: bool = False
    max_body_bytes: int = 10 * 1024 * 1024
    max_compare_bytes: int = 512 * 1024
    timeout: float = 30.0
    threads: int = 8
    limit: int = 20
    max_limit: int = 1000
    refresh_every: float = 1.0
    secrets: tuple[str, ...] = field(default=(), repr=False)
    allowed_hosts: tuple[str, ...] = ()
    token: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if (min(self.max_body_bytes, self.max_compare_bytes, self.threads) < 1 or self.limit < 0
                or self.max_limit < self.limit):
            raise ConfigError("max_body_bytes, max_compare_bytes and threads must be positive, and 0 <= limit <= max_limit")
        if not self.timeout > 0:
            raise ConfigError(f"the request timeout must be positive, got {self.timeout}")
        if self.token is not None and not self.token.strip():
            raise ConfigError("the token for writes is empty: give a token, or none")


def retry_within(seconds: float) -> Retry:
    """Bulk retries (of ``POST /documents`` to a cluster) that give up within half of ``seconds``.

    The command-line default (10 retries, up to 30 s apart) outlasts any request's time limit.
    """
    n = 0
    while Retry(n + 1, 0.25, 4.0).budget <= seconds / 2:
        n += 1
    return Retry(n, 0.25, 4.0)


class ApiError(SimdupError):
    """An error answered as ``{"error": {"type", "message"}}`` with an HTTP ``status``."""

    def __init__(self, status: int, kind: str, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message
        self.headers = dict(headers or {})


_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]*@")


def scrub(message: str, secrets: tuple[str, ...] = ()) -> str:
    """``message`` without the user and password part of any URL and without any of ``secrets``."""
    message = _URL_USERINFO.sub(r"\1***@", message)
    for secret in secrets:
        if secret:
            message = message.replace(secret, "***")
    return message


def error_of(exc: BaseException) -> ApiError:
    """The HTTP answer to an exception: the status and type a client can act on."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, NotFound):
        return ApiError(404, "not_found", str(exc))
    if isinstance(exc, FingerprintVersionError):
        return ApiError(409, "fingerprint_version", str(exc))
    if isinstance(exc, (InputError, ConfigError)):
        return ApiError(400, "bad_input", str(exc))
    if isinstance(exc, TooManyPairs):
        return ApiError(422, "too_many_pairs", str(exc))
    if isinstance(exc, StoreError):
        return ApiError(503, "store_unavailable", f"the store cannot answer now: {exc}")
    return ApiError(500, "internal", "internal error (the server log has the details): try again, or report it")


# --------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class SearchRequest:
    """A search: the query and the options ``simdup search`` has (``k`` and the partial threshold in ``params``)."""

    query: Query
    params: MultiParams
    limit: int
    levels: SearchLevels
    spans: bool = True
    exclude_texts: tuple[str, ...] = ()


FLAGS = ("spans", "exclude_quotations", "exclude_references")
"""The fields that are true or false: JSON's ``true``/``false``, or in a query string one of :func:`_query_flag`'s."""


def _flag(params: Mapping[str, Any], name: str, default: bool = False) -> bool:
    value = params.get(name, default)
    if isinstance(value, bool):
        return value
    raise ApiError(400, "bad_input", f"{name} must be true or false, got {value!r}")


def _query_flag(name: str, value: str) -> bool:
    """A flag given as a query parameter: one of :data:`QUERY_TRUE` or :data:`QUERY_FALSE`."""
    if value in QUERY_TRUE + QUERY_FALSE:
        return value in QUERY_TRUE
    raise ApiError(400, "bad_input", f"{name} must be true or false, got {value!r}")


def _format(params: Mapping[str, Any], default: str) -> str:
    """A report's ``format``: ``json`` or ``html``."""
    value = params.get("format", default)
    if value not in ("json", "html"):
        raise ApiError(400, "bad_input", f"format must be 'json' or 'html', got {value!r}")
    return str(value)


def _exclusions(params: Mapping[str, Any]) -> Exclusions:
    """What a report leaves out: ``exclude_quotations``, ``exclude_references`` (true/false), ``min_chars``."""
    return Exclusions(quotations=_flag(params, "exclude_quotations"), references=_flag(params, "exclude_references"),
                      min_chars=_int(params, "min_chars", Exclusions.min_chars, 0, 1_000_000))


def _sources(params: Mapping[str, Any]) -> tuple[str, ...]:
    """The ids of ``exclude_source``: one id, or a list of them (a query parameter given more than once)."""
    value = params.get("exclude_source", ())
    ids = [value] if isinstance(value, str) else value
    if not isinstance(ids, (list, tuple)) or not all(isinstance(i, str) and i for i in ids):
        raise ApiError(400, "bad_input", f"exclude_source must be a stored id or a list of them, got {value!r}")
    return tuple(ids)


def _path_id(request: Request) -> str:
    """The id in ``/report/{id}``, all of it: the route's pattern (``.*$``) would drop a last newline (``%0A``)."""
    path, root = request.scope["path"], request.scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root):]
    return str(path).removeprefix("/report/")


def _query_params(request: Request) -> dict[str, Any]:
    """A request's query parameters, ``exclude_source`` and ``exclude_texts`` with every value they are given, the
    :data:`FLAGS` as bools."""
    params: dict[str, Any] = {**request.query_params}
    for name in ("exclude_source", "exclude_texts"):  # a parameter given more than once
        if name in params:
            params[name] = request.query_params.getlist(name)
    for name in FLAGS:
        if name in params:
            params[name] = _query_flag(name, params[name])
    return params


def _int(params: Mapping[str, Any], name: str, default: int, low: int, high: int, hint: str = "") -> int:
    value = params.get(name)
    if value is None:
        return default
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d{1,18}\s*", value):  # int() of 5,000 digits raises
        value = int(value)
    elif isinstance(value, float) and value.is_integer() and abs(value) < 2**63:  # JSON's 22.0 is a whole number
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ApiError(400, "bad_input", f"{name} must be a whole number from {low} to {high}, got {value!r}{hint}")
    return value


def _float(params: Mapping[str, Any], name: str, default: float, low: float, high: float) -> float:
    value = params.get(name)
    if value is None:
        return default
    try:
        number = float(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else math.nan
    except ValueError:
        number = math.nan
    if not low <= number <= high:
        raise ApiError(400, "bad_input", f"{name} must be a number from {low:g} to {high:g}, got {value!r}")
    return number


def _text_query(params: Mapping[str, Any], where: str) -> Query:
    """A :class:`Query` from ``id`` or ``text`` (+ ``title``), exactly one of them."""
    given = [name for name in ("id", "text") if params.get(name) is not None]
    if len(given) != 1:
        raise ApiError(400, "bad_input", f"{where}: give exactly one of 'id' (a stored document) or 'text'")
    for name in ("text", "title"):  # a number is a mistake here, not a text (JSON Lines ids aside)
        if params.get(name) is not None and not isinstance(params[name], str):
            raise ApiError(400, "bad_input", f"{where}: '{name}' must be a string, got {type(params[name]).__name__}")
    if given == ["id"]:
        doc_id = params["id"]
        if not isinstance(doc_id, str) or not doc_id:
            raise ApiError(400, "bad_input", f"{where}: 'id' must be a non-empty string")
        return Query(id=doc_id)
    item = from_mapping(dict(params), Fields(id=None), where)
    if isinstance(item, Reject):
        raise ApiError(400, "bad_input", f"{item.source}: {item.reason}")
    return Query(text=item.text, title=item.title)


SEARCH_FIELDS = frozenset({"id", "text", "title", "k", "limit", "levels", "partial_threshold", "spans", "exclude_texts"})
REPORT_FIELDS = SEARCH_FIELDS | {"format", "exclude_quotations", "exclude_references", "min_chars", "exclude_source"}
COMPARE_FIELDS = frozenset({"a", "b", "k", "partial_threshold", "exclude_texts"})
SIDE_FIELDS = frozenset({"id", "text", "title"})
DOCUMENTS_FIELDS = frozenset({"documents", "levels"})
DOCUMENT_FIELDS = frozenset({"id", "text", "title", *META_FIELDS})


def _exclude_texts(params: Mapping[str, Any]) -> tuple[str, ...]:
    """``exclude_texts``: texts whose text never counts (templates), a list of strings."""
    texts = params.get("exclude_texts")
    texts = [] if texts is None else texts
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise ApiError(400, "bad_input", "exclude_texts must be a list of texts (templates whose text never counts)")
    return tuple(texts)


def known_fields(params: Mapping[str, Any], known: frozenset[str], where: str) -> None:
    """Refuse a field the route does not know (a misspelt ``limt`` would otherwise be ignored silently)."""
    unknown = sorted(set(params) - known)
    if unknown:
        raise ApiError(400, "bad_input", f"{where}: unknown field{'s' * (len(unknown) > 1)} {', '.join(unknown)}; "
                                         f"the fields are {', '.join(sorted(known))}")


def _document(record: Any, where: str) -> Record | Reject:
    """A posted document, or its reject: a field it does not know (a misspelt ``titel``) is not dropped silently."""
    unknown = sorted(set(record) - DOCUMENT_FIELDS) if isinstance(record, dict) else []
    if unknown:
        doc_id = record.get("id")
        return Reject(where, f"unknown field{'s' * (len(unknown) > 1)} {', '.join(map(repr, unknown))}; the fields are "
                             f"{', '.join(sorted(DOCUMENT_FIELDS))}", id=doc_id if isinstance(doc_id, str) else None)
    return from_mapping(record, Fields(), where)


def judged_by(params: Mapping[str, Any], served: MultiParams) -> MultiParams:
    """The thresholds of a request: the server's, with the request's ``k`` (at most the server's) and
    ``partial_threshold``."""
    k = served.k
    hint = f" (this server finds near-duplicates up to k = {k}; start it with a larger -k for more, up to {MAX_K})"
    return dataclasses.replace(served, k=_int(params, "k", k, 0, k, hint), partial_threshold=_float(
        params, "partial_threshold", served.partial_threshold, 0.0, 1.0))


def search_request(params: Mapping[str, Any], settings: ServeSettings, served: MultiParams) -> SearchRequest:
    """Check a search's fields (query string or JSON object) against the service's limits."""
    query = _text_query(params, "search")
    levels = params.get("levels", "all")
    if levels not in ("all", "document"):
        raise ApiError(400, "bad_input", f"levels must be 'all' (near-duplicates and partial copies) or 'document' "
                                         f"(near-duplicates only, no comparison matrix), got {levels!r}")
    return SearchRequest(query, judged_by(params, served), _int(params, "limit", settings.limit, 0, settings.max_limit),
                         levels, _flag(params, "spans", default=True), _exclude_texts(params))


# --------------------------------------------------------------------------- HTTP


_INLINE_JSON = 64 * 1024  # bodies decoded on the event loop; larger ones on a thread (~0.3 ms per 64 kB)
MAX_DEPTH = 32
"""The deepest nesting of arrays and objects a request body may have (the API's own bodies have 3 levels)."""
_JSON_TYPE = re.compile(r"(?i)\s*application/(?:[a-z0-9.+-]+\+)?json\s*(?:;.*)?")
_SURROGATE_ESCAPE = re.compile(r"(?i)\\ud[89a-f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def json_content_type(request: Request) -> None:
    """Refuse a body that is not declared JSON (415): a web page elsewhere can send a form or
    ``text/plain`` to a local server without asking it first, but not ``application/json``."""
    declared = request.headers.get("content-type")
    if declared is None or not _JSON_TYPE.fullmatch(declared):
        got = f"got {declared[:100]!r}" if declared is not None else "none given"
        raise ApiError(415, "unsupported_media_type", f"send the body as JSON with the header 'Content-Type: "
                                                      f"application/json' ({got})")


def _checked(value: Any, escaped: bool) -> Any:
    """``value`` (parsed JSON) if it nests at most :data:`MAX_DEPTH` levels and, when the text had a surrogate
    escape (``escaped``), no string or field name holds a lone surrogate (which no UTF-8 text can carry)."""
    todo: list[tuple[Any, str, int]] = [(value, "the body", 1)]
    while todo:
        item, where, depth = todo.pop()
        if isinstance(item, (dict, list)):
            if depth > MAX_DEPTH:
                raise ApiError(400, "bad_json", f"the body nests arrays and objects deeper than {MAX_DEPTH} levels "
                                                f"(at {where}): send the fields this API takes (docs/serve.md)")
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in pairs:
                if escaped and isinstance(key, str) and _SURROGATE.search(key):
                    raise ApiError(400, "bad_json", f"a field name in {where} has a lone surrogate "
                                                    f"({key.encode('utf-8', 'backslashreplace').decode()[:80]}): "
                                                    "send text in UTF-8")
                todo.append((child, f"{where}[{key!r}]" if isinstance(key, str) else f"{where}[{key}]", depth + 1))
        elif escaped and isinstance(item, str) and _SURROGATE.search(item):
            raise ApiError(400, "bad_json", f"{where} has a lone surrogate (a \\ud800-\\udfff escape without its "
                                            "pair), which is no character: send text in UTF-8")
    return value


def parse_json(body: bytes | bytearray) -> Any:
    """A request body as JSON: UTF-8 (a BOM allowed), at most :data:`MAX_DEPTH` levels deep, no lone surrogate."""
    return _parse_text(_decoded(body))


def _parse_held(held: list[bytearray]) -> Any:
    """:func:`parse_json` of the one body in ``held``, which it takes: the body is freed once decoded, before the
    JSON is parsed (its bytes, its text and the values it holds are never all held at once)."""
    text = _decoded(held.pop())
    return _parse_text(text)


def _decoded(body: bytes | bytearray) -> str:
    try:
        return body.decode("utf-8-sig")  # strict: no encoded surrogates either
    except UnicodeDecodeError:
        raise ApiError(400, "bad_json", "the request body is not UTF-8: send JSON in UTF-8") from None


def _parse_text(text: str) -> Any:
    try:
        value = json.loads(text)
    except RecursionError:
        raise ApiError(400, "bad_json", f"the body nests arrays and objects deeper than {MAX_DEPTH} levels: send the "
                                        "fields this API takes (docs/serve.md)") from None
    except ValueError as exc:
        raise ApiError(400, "bad_json", f"the request body is not valid JSON ({exc}): send a JSON object") from None
    return _checked(value, "\\" in text and _SURROGATE_ESCAPE.search(text) is not None)


async def read_json(request: Request, limit: int, advice: str = "less (fewer documents a request)",
                    option: str = "--max-body") -> Any:
    """The request's JSON body, read up to ``limit`` bytes (415 unless declared JSON, 413 past the limit, its message
    with ``advice`` and the server's ``option`` for a larger limit; 400 if it is not JSON)."""
    json_content_type(request)
    declared = request.headers.get("content-length")
    too_large = ApiError(413, "too_large", f"the request body is larger than the limit of {limit:,} bytes of "
                                          f"{request.method} {request.url.path}: send {advice}, or start the server "
                                          f"with a larger {option}")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large
    body = bytearray()  # one buffer, not its chunks and then their join beside them
    async for chunk in request.stream():
        if len(body) + len(chunk) > limit:
            raise too_large
        body += chunk
    if not body or body.isspace():
        raise ApiError(400, "bad_json", "the request body is empty: send a JSON object")
    if len(body) < _INLINE_JSON:
        return parse_json(body)
    held = [body]
    del body  # the parser takes it (and frees it once decoded)
    return await anyio.to_thread.run_sync(_parse_held, held)  # megabytes of JSON: not on the event loop


async def read_object(request: Request, limit: int, advice: str = "less", option: str = "--max-body"
                      ) -> dict[str, Any]:
    body = await read_json(request, limit, advice, option)
    if not isinstance(body, dict):
        raise ApiError(400, "bad_json", f"the request body must be a JSON object, got a JSON {type(body).__name__}")
    return body


_ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode  # as JSONResponse's
_STREAMED_BATCH = 250  # items of a streamed array encoded at a time (some 40 kB of JSON)


def json_chunks(value: Any) -> Iterator[bytes]:
    """``value`` in JSON (UTF-8, the same bytes as :class:`~starlette.responses.JSONResponse`'s), in pieces: an
    iterator in it (a value of a dict, at any depth of dicts) is written as an array of its items, a batch of them at
    a time, none of them held after it is written."""
    streams: list[Iterator[Any]] = []
    nonce = secrets.token_hex(8)  # a text in the value cannot spell the placeholder it has not seen

    def marked(item: Any) -> Any:
        if isinstance(item, dict):
            return {key: marked(child) for key, child in item.items()}
        if isinstance(item, Iterator):
            streams.append(item)
            return f"\0{nonce}:{len(streams) - 1}"
        return item

    pieces = re.split(rf'"\\u0000{nonce}:(\d+)"', _ENCODE(marked(value)))
    yield pieces[0].encode()
    for number, after in zip(pieces[1::2], pieces[2::2], strict=True):
        stream, opening = streams[int(number)], "["
        while batch := list(itertools.islice(stream, _STREAMED_BATCH)):
            yield (opening + ",".join(map(_ENCODE, batch))).encode()
            opening = ","
        yield (("[" if opening == "[" else "") + "]" + after).encode()


PAGE_HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
                "X-Content-Type-Options": "nosniff"}
"""The report pages run no script and load nothing: a browser is told so (and a stored text cannot change it)."""


_REQUEST: contextvars.ContextVar[Request | None] = contextvars.ContextVar("simdup_serve_request", default=None)
"""The request being answered (set by :func:`create_app`'s routes), whose client :meth:`App.run` watches."""


class Abandoned(SimdupError):
    """The request of a call was answered (504) or gone: the call stops before its next step."""


class _Call:
    """One call on a worker thread, and who frees its slot of the limiter: the request, unless the call is
    running when the request ends (504, a client gone); then the thread does, when the call returns.

    States: ``waiting`` (for a thread), ``running``, ``done``, ``abandoned`` (the request ended first; a call
    not yet started never starts), ``abandoned running`` (the thread frees the slot).
    """

    _current = threading.local()

    def __init__(self, limiter: anyio.CapacityLimiter) -> None:
        self.limiter = limiter
        self.lock = threading.Lock()
        self.state = "waiting"
        self.times = [0.0, 0.0]

    def run(self, func: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        with self.lock:
            if self.state == "abandoned":
                raise Abandoned("the request was answered before its call started")
            self.state = "running"
        self.times[0] = time.perf_counter()
        _Call._current.call = self
        try:
            with bounded_pairs():  # one request's comparisons must not take the machine (too_many_pairs)
                return func(*args)
        finally:
            _Call._current.call = None
            self.times[1] = time.perf_counter()
            with self.lock:
                abandoned, self.state = self.state == "abandoned running", "done"
            if abandoned:  # its request ended while it ran: free the slot now, on the event loop
                with contextlib.suppress(RuntimeError):  # the loop has stopped: nothing waits for the slot
                    anyio.from_thread.run_sync(self.limiter.release_on_behalf_of, self)

    def give_up(self) -> bool:
        """The request ends: whether the caller frees the slot now (the call is not running)."""
        with self.lock:
            if self.state == "running":
                self.state = "abandoned running"
                return False
            self.state = "abandoned" if self.state == "waiting" else self.state
            return True

    @staticmethod
    def go_on() -> None:
        """Raise :class:`Abandoned` if the call on this thread lost its request: no new step starts for it."""
        call = getattr(_Call._current, "call", None)
        if call is not None and call.state == "abandoned running":
            raise Abandoned("the request was answered before this step")


class App:
    """The routes over a :class:`~simdup_es.service.Service`, each call of it on a worker thread under the time limit.

    ``service.store`` is shared by every request: the embedded store serialises its calls
    on one lock (its module docstring), the Elasticsearch client pools connections.
    """

    def __init__(self, service: Service, settings: ServeSettings) -> None:
        self.service = service
        self.settings = settings
        self.limiter = anyio.CapacityLimiter(self.settings.threads)  # slots: held until a call ends (_Call)
        self.thread_tokens = anyio.CapacityLimiter(self.settings.threads)  # anyio's, released when a request ends
        from .store.local import LocalStore

        # Other processes' writes reach the embedded store's memory only on refresh; the
        # cluster makes them searchable by itself (and refreshing it needs write rights).
        self.embedded = isinstance(service.store, LocalStore)
        self._refreshes = self.embedded and settings.refresh_every > 0
        self._refreshed = time.monotonic()

    async def run(self, func: Callable[..., Any], *args: Any) -> tuple[Any, dict[str, str]]:
        """``func(*args)`` on a worker thread: its result and a ``Server-Timing`` header.

        The header has ``queue`` (waiting for a thread) and ``work`` (the call), in ms. The request's
        time limit (:func:`create_app`), or its client closing the connection, cancels the wait; a call
        not started by then never starts, and one under way ends unseen (Python cannot stop a thread) but
        keeps its slot until it does, so no more than ``threads`` calls ever run at once (:class:`_Call`).
        """
        request = _REQUEST.get()
        if request is None:
            return await self._run(func, *args)
        outcome: list[Any] = []
        gone = False

        async def watch() -> None:  # the body is read by now: what comes next is the client leaving
            nonlocal gone
            while (await request.receive())["type"] != "http.disconnect":
                pass
            gone = True
            group.cancel_scope.cancel()

        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            try:
                outcome.append(await self._run(func, *args))
            except Exception as exc:  # raised below, not wrapped in the task group's ExceptionGroup
                outcome.append(exc)
            group.cancel_scope.cancel()
        if gone:
            raise ApiError(499, "client_closed", "the client closed the connection before the answer")
        if isinstance(outcome[0], Exception):
            raise outcome[0]
        return outcome[0]  # type: ignore[no-any-return]

    async def _run(self, func: Callable[..., Any], *args: Any) -> tuple[Any, dict[str, str]]:
        started = time.perf_counter()
        call = _Call(self.limiter)
        await self.limiter.acquire_on_behalf_of(call)  # cancelled while waiting: no slot taken
        try:
            result = await anyio.to_thread.run_sync(call.run, func, args, abandon_on_cancel=True,
                                                    limiter=self.thread_tokens)
        finally:
            if call.give_up():  # answered (or failed) and the call is not running: its slot is free now
                self.limiter.release_on_behalf_of(call)
        queue, work = call.times[0] - started, call.times[1] - call.times[0]
        return result, {"Server-Timing": f"queue;dur={queue * 1000:.2f}, work;dur={work * 1000:.2f}"}

    def json(self, body: Any, headers: dict[str, str], status: int = 200) -> JSONResponse:
        return JSONResponse(body, status, headers=headers)

    def _search_params(self, params: Mapping[str, Any]) -> SearchRequest:
        return search_request(params, self.settings, self.service.params)

    def _fresh(self) -> None:
        """Look for other processes' writes, at most every ``refresh_every`` seconds (embedded store)."""
        now = time.monotonic()
        if self._refreshes and now - self._refreshed >= self.settings.refresh_every:
            self._refreshed = now
            self.service.store.refresh()

    async def health(self, request: Request) -> Response:
        body, timing = await self.run(self._health)
        return self.json(body, timing)

    def _health(self) -> dict[str, Any]:
        versions = self.service.store.versions()
        version = self.service.fingerprinter.version
        return {"status": "ok", "store": "embedded" if self.embedded else "cluster", "documents": sum(versions.values()),
                "fingerprint_version": version, "other_versions": {v: n for v, n in versions.items() if v != version},
                "k": self.service.params.k, "indexing": self.settings.allow_index}

    async def search(self, request: Request) -> Response:
        params = (_query_params(request) if request.method == "GET"
                  else await read_object(request, self.settings.max_body_bytes))
        known_fields(params, SEARCH_FIELDS, "search")
        body, timing = await self.run(self._search, self._search_params(params))
        return self.json(body, timing)

    def _search(self, req: SearchRequest) -> dict[str, Any]:
        """What ``simdup search --json`` prints, in one object: the matches and how many more there are."""
        self._fresh()
        found = self.service.search(req.query, params=req.params, matrix=req.levels == "all", limit=req.limit,
                                    exclude_texts=req.exclude_texts)
        _Call.go_on()  # mapping the spans costs about half the search: not for a request answered already
        matches = matches_json(found, spans=req.spans, mapped=self.service.caches.mapped)
        return {"id": req.query.id, "matches": matches, "more": found.more}

    def _compare_limit(self) -> tuple[int, str]:
        """The most bytes a comparison takes (its body, or its stored texts), and the option that says so."""
        limit = min(self.settings.max_body_bytes, self.settings.max_compare_bytes)
        return limit, "--max-compare" if limit < self.settings.max_body_bytes else "--max-body"

    async def compare(self, request: Request) -> Response:
        if request.method == "GET":
            params: dict[str, Any] = {**_query_params(request),
                                      **{side: {"id": request.query_params.get(side)} for side in ("a", "b")}}
        else:
            limit, option = self._compare_limit()
            params = await read_object(request, limit, "shorter texts", option)
        known_fields(params, COMPARE_FIELDS, "compare")
        sides = []
        for side in ("a", "b"):
            value = params.get(side)
            value = {"text": value} if isinstance(value, str) else value
            if isinstance(value, dict):
                known_fields(value, SIDE_FIELDS, f"compare {side}")
            else:
                raise ApiError(400, "bad_input", f"compare: give '{side}' as a text, or an object with 'id' (a stored "
                                                 "document) or 'text' (and 'title')")
            sides.append(_text_query(value, f"compare {side}"))
        # Judged as this server's searches are: its k and partial threshold unless the request gives others.
        judged, excluded = judged_by(params, self.service.params), _exclude_texts(params)
        body, timing = await self.run(self._compare, sides[0], sides[1], judged, excluded)
        # The sentences and pairs are written as they are made: as lists of dicts they would take tens of times
        # the texts' memory (docs/serve.md).
        return StreamingResponse(json_chunks(body), headers=timing, media_type="application/json")

    def _compare(self, a: Query, b: Query, params: MultiParams, exclude_texts: tuple[str, ...]) -> dict[str, Any]:
        """``simdup compare --json`` of two texts or stored documents, labelled by their ids (or ``a`` and ``b``): the
        comparison's sentences and pairs as iterators (:func:`verdict_json`), made as :func:`json_chunks` writes them."""
        self._fresh()
        limit, option = self._compare_limit()
        try:
            compared = self.service.compare(a, b, params, exclude_texts, max_bytes=limit)
        except TooLarge as exc:
            raise ApiError(413, "too_large", f"{exc}: compare shorter documents, or start the server with a larger "
                                             f"{option}") from None
        return {"a_label": a.id or "a", "b_label": b.id or "b",
                **verdict_json(compared.verdict, compared.a, compared.b, lazy=True), "common": compared.common_text()}

    async def report(self, request: Request) -> Response:
        doc_id = _path_id(request)
        as_json = doc_id.endswith(".json") and request.query_params.get("format") != "html"
        if as_json:
            doc_id = doc_id[: -len(".json")]
        params = {**_query_params(request), "id": doc_id, "text": None}
        return await self._report(params, as_json or _format(params, "html") == "json", request)

    async def report_posted(self, request: Request) -> Response:
        # The search options may come as query parameters too; the body's win.
        params = {**_query_params(request), **await read_object(request, self.settings.max_body_bytes)}
        return await self._report(params, _format(params, "json") == "json", request)

    async def _report(self, params: Mapping[str, Any], as_json: bool, request: Request) -> Response:
        known_fields(params, REPORT_FIELDS, "report")
        req, exclusions = self._search_params(params), _exclusions(params)
        report, timing = await self.run(self._report_of, req, exclusions, _sources(params))
        if as_json:
            return self.json(report.to_dict(), timing)
        # Each source links to its own report on this server (behind a proxy, under its path prefix).
        link = request.scope.get("root_path", "") + "/report/{id}?format=html"  # an id ending in .json too
        return HTMLResponse(render_report_html(report, source_link=link), headers={**timing, **PAGE_HEADERS})

    async def documents(self, request: Request) -> Response:
        if not self.settings.allow_index:
            raise ApiError(403, "read_only", "this server is read-only: start it with --allow-index to index documents")
        body = await read_json(request, self.settings.max_body_bytes)
        if isinstance(body, dict):
            known_fields(body, DOCUMENTS_FIELDS, "documents")
        docs, levels = (body, "all") if isinstance(body, list) else (
            body.get("documents"), body.get("levels", "all")) if isinstance(body, dict) else (None, None)
        if not isinstance(docs, list):
            raise ApiError(400, "bad_input", "send {\"documents\": [{\"id\", \"text\", \"title\"}, ...]} (or the list)")
        if levels not in ("all", "keys", "document"):
            raise ApiError(400, "bad_input", f"levels must be 'all', 'keys' or 'document', got {levels!r}")
        result, timing = await self.run(self._index, docs, levels)
        return self.json(result, timing)

    def _report_of(self, req: SearchRequest, exclusions: Exclusions, sources: tuple[str, ...]) -> SimilarityReport:
        """The similarity report of the query against the store (``simdup report``), its own stored copy and
        ``sources`` left out."""
        self._fresh()
        return self.service.report(dataclasses.replace(req.query, label=req.query.id or "query"), exclusions=exclusions,
                                   limit=req.limit, params=req.params, exclude_texts=req.exclude_texts,
                                   exclude_sources=sources)

    def _index(self, docs: list[Any], levels: IndexLevels) -> dict[str, Any]:
        """Write documents (``POST /documents``, JSON objects); each one is indexed or rejected with its reason."""
        from .indexer import index_items

        store = self.service.store
        items = [_document(d, f"documents[{i}]") for i, d in enumerate(docs)]
        rejected: list[dict[str, Any]] = []
        _Call.go_on()
        # The embedded store writes one batch in one transaction: the request's documents all, or none.
        batch = max(1, len(items)) if self.embedded else 500
        summary = index_items(items, store, self.service.fingerprinter, workers=1, levels=levels, batch_size=batch,
                              on_reject=lambda r: rejected.append({"source": r.source, "id": r.id, "reason": r.reason}))
        store.refresh()
        return {"indexed": summary.indexed, "rejected": rejected, "documents": store.count()}

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(openapi_of(self))


_MAX_MESSAGE = 2000  # characters of an error message: a field's value quoted in it is cut


def _error_response(exc: BaseException, secrets: tuple[str, ...]) -> JSONResponse:
    error = error_of(exc)
    if error.status == 500:  # the traceback, its credentials masked (a cluster may echo them in a message)
        log.error("request failed: %s", scrub("".join(traceback.format_exception(exc)), secrets))
    elif error.status >= 500:
        log.warning("%s", scrub(error.message, secrets))
    message = scrub(error.message, secrets)
    if len(message) > _MAX_MESSAGE:
        message = message[:_MAX_MESSAGE] + "…"
    message = message.encode("utf-8", "backslashreplace").decode("utf-8")  # a lone surrogate quoted: still UTF-8
    return JSONResponse({"error": {"type": error.kind, "message": message}}, error.status, headers=error.headers)


def _timed_out(timeout: float, write: bool, embedded: bool) -> ApiError:
    message = (f"the request took longer than {timeout:g} s: ask for less (a smaller limit, a shorter text), or start "
               "the server with a larger --timeout")
    if write:  # a write under way cannot be stopped: the client must know it may land
        message += ("; the documents may still be written (" + (
            "all of them or none: the embedded store writes a request in one transaction" if embedded else
            "some or all of them: the cluster writes them in batches") + "): send them again with the same ids, "
            "which replaces them, or look for them with GET /search?id=…")
    return ApiError(504, "timeout", message)


def _host(netloc: str) -> str:
    """The host name of a ``Host`` header or an origin's ``host:port`` (brackets off an IPv6 address)."""
    host = netloc.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def check_access(request: Request, settings: ServeSettings, write: bool) -> None:
    """Refuse what a web page elsewhere could make a browser send: a ``Host`` this server does not go by
    (a rebound DNS name), and on a write an ``Origin`` other than the server's own, or no token."""
    if settings.allowed_hosts and _host(request.headers.get("host", "")) not in settings.allowed_hosts:
        raise ApiError(403, "forbidden_host", f"this server answers only requests for {', '.join(settings.allowed_hosts)}"
                                              " (the Host header): start it with --allowed-host NAME to allow another")
    if not write:
        return
    origin = request.headers.get("origin")
    if origin is not None and origin.split("://", 1)[-1].lower() != request.headers.get("host", "").lower():
        raise ApiError(403, "forbidden_origin", f"a write from a web page at {origin[:100]!r} is refused: "
                                                "write from a program, or from this server's own pages")
    if settings.token is not None:
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode("utf-8", "replace"), f"Bearer {settings.token}".encode()):
            raise ApiError(401, "unauthorized", "this server takes writes only with its token: send the header "
                                                "'Authorization: Bearer <token>' (the server's --token)",
                           {"WWW-Authenticate": 'Bearer realm="simdup"'})


def create_app(service: Service, settings: ServeSettings = ServeSettings()) -> Starlette:
    """The HTTP service over ``service`` (an ASGI application; run it with uvicorn).

    The service's fingerprinter must be the one its store's documents were indexed with; its
    parameters are the server's defaults (requests may ask for a smaller ``k``). The store stays
    the caller's to close.
    """
    from .serve_pages import START_HEADERS, api_page, start_page

    app = App(service, settings)
    secrets = (*settings.secrets, *([settings.token] if settings.token else []))

    def guarded(handler: Callable[[Request], Awaitable[Response]],
                write: bool = False) -> Callable[[Request], Awaitable[Response]]:
        async def route(request: Request) -> Response:
            _REQUEST.set(request)  # this request's own context: each request runs in a task of its own
            try:
                check_access(request, settings, write)
                # The whole request, reading its body included, within the time limit.
                with anyio.move_on_after(settings.timeout):
                    return await handler(request)
                raise _timed_out(settings.timeout, write, app.embedded)
            except Exception as exc:  # every error is an answer in JSON, never a traceback page
                return _error_response(exc, secrets)

        return route

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        kinds = {404: ("not_found", f"no route {request.url.path!r}: see GET /docs"),
                 405: ("method_not_allowed", f"{request.method} is not allowed on {request.url.path!r}"
                                             f" (allowed: {(exc.headers or {}).get('Allow', 'none')})")}
        kind, message = kinds.get(exc.status_code, ("http", str(exc.detail)))
        return _error_response(ApiError(exc.status_code, kind, message, exc.headers), secrets)

    async def pages(request: Request) -> Response:
        if request.url.path == "/":
            return HTMLResponse(start_page(), headers=START_HEADERS)
        return HTMLResponse(api_page(openapi_of(app)), headers=PAGE_HEADERS)

    routes = [
        Route("/", guarded(pages), methods=["GET"]),
        Route("/docs", guarded(pages), methods=["GET"]),
        Route("/health", guarded(app.health), methods=["GET"]),
        Route("/search", guarded(app.search), methods=["GET", "POST"]),
        Route("/compare", guarded(app.compare), methods=["GET", "POST"]),
        Route("/report", guarded(app.report_posted), methods=["POST"]),
        Route("/report/{doc_id:path}", guarded(app.report), methods=["GET"]),
        Route("/documents", guarded(app.documents, write=True), methods=["POST"]),
        Route("/openapi.json", guarded(app.openapi), methods=["GET"]),
    ]
    handlers: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {HTTPException: on_http_error}
    return Starlette(routes=routes, exception_handlers=handlers)


def openapi_of(app: App) -> dict[str, Any]:
    """The OpenAPI description of ``app``'s server (its ``k`` and largest ``limit``), for the installed release."""
    from importlib.metadata import version

    from .openapi import openapi

    return openapi(version("simdup-es"), k=app.service.params.k, max_limit=app.settings.max_limit)


__all__ = ["ApiError", "SearchRequest", "ServeSettings", "check_access", "create_app", "error_of", "parse_json",
           "retry_within", "scrub"]
