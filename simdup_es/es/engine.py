"""Which search engine a cluster runs, and the few things that differ between them.

Elasticsearch 8 and 9 are reached with elasticsearch-py 8 (9 answers it through its
REST compatibility with 8). OpenSearch needs opensearch-py (the optional extra
``simdup-es[opensearch]``): Elasticsearch's clients send a compatibility media type
OpenSearch refuses and check a product header OpenSearch does not send.

Everything above this module speaks elasticsearch-py 8: :class:`OpenSearchClient`
takes the same keyword arguments for the calls simdup makes (body fields as keywords,
``options(ignore_status=...)``, point in time) and raises elasticsearch-py's
exceptions, so :mod:`simdup_es.es.io` and the store have one code path. What truly
differs is here:

* how the engine is told (:func:`detect`, docs/engines.md "Telling the engines apart");
* the point-in-time calls (``create_pit``/``delete_pit``, key ``pit_id``);
* how a whole index is walked: a point in time paged on ``_shard_doc`` on
  Elasticsearch, a scroll on OpenSearch (:func:`uses_point_in_time`: ``_shard_doc``
  is missing before 3.3 and lost hits on 3.8; ``_doc`` on a multi-shard point in time
  loses documents);
* bulk goes through the engine's own ``helpers.streaming_bulk`` (:func:`streaming_bulk`);
* an elasticsearch-py that does not fit the cluster (client 9 against server 8) is
  named with the ``pip install`` that fixes it (:func:`client_mismatch`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import elasticsearch as es
from elasticsearch import helpers as es_helpers
from elastic_transport import ApiResponseMeta, HttpHeaders, NodeConfig

from ..errors import ConfigError

log = logging.getLogger(__name__)

ELASTICSEARCH = "elasticsearch"
OPENSEARCH = "opensearch"
ENGINES = ("auto", ELASTICSEARCH, OPENSEARCH)
"""Values of ``SIMDUP_ES_ENGINE`` / ``--engine``; ``auto`` asks the cluster."""

CLIENT_PIN = "pip install 'elasticsearch>=8.13,<9'"
OPENSEARCH_EXTRA = "pip install 'simdup-es[opensearch]' (in a checkout of simdup-es: pip install '.[opensearch]')"


def redact_url(url: str) -> str:
    """``url`` without credentials: ``https://user:pw@host`` becomes ``https://***@host``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


@dataclass(frozen=True)
class Engine:
    """An engine and its version (the lowest of the cluster's nodes), e.g. ``opensearch 3.8.0``."""

    name: str
    version: tuple[int, ...] = ()

    @property
    def product(self) -> str:
        """The engine's name as users know it: ``Elasticsearch`` or ``OpenSearch``."""
        return PRODUCTS[self.name]

    def __str__(self) -> str:
        return f"{self.product} {'.'.join(map(str, self.version))}".rstrip()


PRODUCTS = {ELASTICSEARCH: "Elasticsearch", OPENSEARCH: "OpenSearch"}
UNKNOWN_PRODUCT = "the cluster"
"""What messages call a cluster whose engine is not known yet (``auto``, before it answered)."""


def parse_version(text: str) -> tuple[int, ...]:
    """``(3, 8, 0)`` from ``"3.8.0"`` (a suffix such as ``-SNAPSHOT`` dropped)."""
    out: list[int] = []
    for part in text.split("-", 1)[0].split("."):
        if not part.isdigit():
            break
        out.append(int(part))
    return tuple(out)


def nodes_version(body: Any) -> tuple[int, ...]:
    """The lowest node version in a ``GET /_nodes/_local?filter_path=nodes.*.version`` answer."""
    nodes = body.get("nodes", {}) if isinstance(body, Mapping) else {}
    versions = [parse_version(str(node.get("version", ""))) for node in nodes.values() if isinstance(node, Mapping)]
    return min(versions, default=())


# --- telling the engines apart ----------------------------------------------------------------


def detect(client: es.Elasticsearch, url: str = "the cluster") -> Engine:
    """The engine behind ``client``'s URL, asked with elasticsearch-py (credentials and TLS as configured).

    ``GET /_nodes/_local`` answers on every engine (Elasticsearch's integ-test build
    has no ``GET /``). Elasticsearch marks it with ``X-elastic-product``; on anything
    else elasticsearch-py raises :class:`~elasticsearch.UnsupportedProductError`, whose
    answer is then read: OpenSearch 3 sends ``X-OpenSearch-Version``, OpenSearch 2 says
    ``distribution: opensearch`` on ``GET /``. Errors other than these are the
    client's (translate them with :func:`simdup_es.es.io.translated`). ``url`` names
    the cluster in the message when it is neither (credentials removed).
    """
    path, params = "/_nodes/_local", {"filter_path": "nodes.*.version"}
    try:
        response = client.perform_request("GET", path, params=params, headers={"accept": "application/json"})
        return Engine(ELASTICSEARCH, nodes_version(response.body))
    except es.UnsupportedProductError as exc:
        headers, body = exc.meta.headers, exc.body
    if headers.get("x-opensearch-version"):
        return Engine(OPENSEARCH, nodes_version(body))
    try:
        client.perform_request("GET", "/", headers={"accept": "application/json"})
        root: Any = {}
    except es.UnsupportedProductError as exc:
        root = exc.body
    except es.ApiError:
        root = {}
    found = root.get("version") if isinstance(root, Mapping) else None
    version: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    if version.get("distribution") == OPENSEARCH:
        return Engine(OPENSEARCH, nodes_version(body))
    raise ConfigError(
        f"{url} answers neither as Elasticsearch nor as OpenSearch ({_what_answered(body, version)}): check the "
        "URL (SIMDUP_ES_URL / --es-url); simdup supports Elasticsearch 8 and 9 and OpenSearch 2.4+, and behind a "
        "proxy that hides the engine, name it with --engine elasticsearch|opensearch (SIMDUP_ES_ENGINE)"
    )


_TITLE = re.compile(r"<title[^>]*>\s*([^<]{0,80})", re.IGNORECASE)


def _what_answered(body: Any, version: Mapping[str, Any]) -> str:
    """What a server that is no search engine sent back, in a few words: never the whole answer."""
    if isinstance(body, (bytes, str)):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        if "<html" in text[:2000].lower() or "<!doctype" in text[:2000].lower():
            title = _TITLE.search(text)
            return "it sent an HTML page" + (f" titled {title.group(1).strip()!r}" if title else "")
        return f"it sent {len(text)} characters that are not JSON"
    return f"version {version.get('number', '?')}, no product header"


def client_mismatch(exc: es.ApiError) -> str | None:
    """What to do when ``exc`` says this client does not fit the cluster, else ``None``.

    An elasticsearch-py 9 asks for API version 9, which an Elasticsearch 8 refuses on
    every call (``400 media_type_header_exception``); OpenSearch refuses the media
    type of every elasticsearch-py (406) when told it is Elasticsearch.
    """
    if exc.meta.status == 406 and "vnd.elasticsearch" in str(exc.message):
        return f"the cluster refuses Elasticsearch's media type ({exc.message}): {not_elasticsearch()}"
    if exc.meta.status != 400 or exc.error != "media_type_header_exception":
        return None
    return (f"the installed elasticsearch client is {es.__versionstr__}, which the cluster does not accept "
            f"({_reason(exc.body)}): elasticsearch-py 9 talks to Elasticsearch 9 only, elasticsearch-py 8 to "
            f"Elasticsearch 8 and 9; for this cluster: {CLIENT_PIN}")


def not_elasticsearch() -> str:
    """The advice when elasticsearch-py finds the cluster is not Elasticsearch."""
    return ("if it is OpenSearch, leave SIMDUP_ES_ENGINE (--engine) unset or set it to opensearch, with "
            f"opensearch-py installed ({OPENSEARCH_EXTRA})")


def _reason(body: Any) -> str:
    """The deepest ``reason`` of an error answer (the one that says which versions the cluster takes)."""
    error = body.get("error") if isinstance(body, Mapping) else None
    reason = str(body)
    while isinstance(error, Mapping):
        reason = str(error.get("reason", reason))
        error = error.get("caused_by")
    return reason


# --- what differs at run time --------------------------------------------------------------------


def engine_of(client: Any) -> Engine:
    """The engine a client talks to: an :class:`OpenSearchClient` knows; anything else is Elasticsearch."""
    if isinstance(client, OpenSearchClient):
        return client.engine
    return Engine(ELASTICSEARCH)


def product_of(client: Any) -> str:
    """What messages call the cluster behind ``client``, without asking it (:attr:`Engine.product`)."""
    return PRODUCTS[OPENSEARCH if isinstance(client, OpenSearchClient) else ELASTICSEARCH]


def uses_point_in_time(client: Any) -> bool:
    """Whether walks page a point in time on ``_shard_doc`` (else they scroll): on Elasticsearch only.

    OpenSearch has no ``_shard_doc`` before 3.3, and on 3.8 a point-in-time page on it
    came back short in the middle of a walk (1998 of 2245 hits on a fresh node,
    ``tests/integration/test_engines.py``), so walks on OpenSearch scroll, which
    returned every hit on 2.19 and 3.8.
    """
    return engine_of(client).name != OPENSEARCH


def streaming_bulk(client: Any, actions: Any, **kwargs: Any) -> Iterable[tuple[bool, dict[str, Any]]]:
    """The engine's ``helpers.streaming_bulk`` (same arguments and answers; errors as elasticsearch-py's).

    The client's own retries are off for these requests (the caller retries with
    backoff): on Elasticsearch by ``options(max_retries=0)``, on OpenSearch by the
    :class:`OpenSearchClient`'s client for bulk writes.
    """
    if isinstance(client, OpenSearchClient):
        return client.streaming_bulk(actions, **kwargs)
    return es_helpers.streaming_bulk(client.options(max_retries=0), actions, **kwargs)


def as_client(client: Any) -> Any:
    """``client``, or an :class:`OpenSearchClient` around it if it is an ``opensearchpy.OpenSearch``."""
    if type(client).__module__.startswith("opensearchpy"):
        return OpenSearchClient(client)
    return client


# --- OpenSearch through the elasticsearch-py 8 calling convention --------------------------------


def _import_opensearch() -> Any:
    try:
        import opensearchpy
    except ImportError as exc:
        raise ConfigError(f"the cluster is OpenSearch, which simdup reaches with opensearch-py, and that is not "
                          f"installed: {OPENSEARCH_EXTRA}") from exc
    return opensearchpy


# Keyword arguments elasticsearch-py 8 sends in the request body; the rest are URL parameters
# (which opensearch-py takes as keywords too).
_BODY_FIELDS = frozenset({
    "query", "size", "sort", "aggs", "search_after", "pit", "track_total_hits", "docvalue_fields", "fields",
    "mappings", "settings", "aliases", "properties", "dynamic", "dynamic_templates", "ids", "docs", "doc",
    "doc_as_upsert", "upsert", "scroll_id", "index_patterns", "template", "composed_of", "priority", "_source", "from",
})
_WHOLE_BODY = ("body", "document", "operations", "searches")
_RENAMED = {"source_includes": "_source_includes", "source_excludes": "_source_excludes", "from_": "from",
            "source": "_source", "ignore_status": "ignore"}


def _arguments(kwargs: dict[str, Any]) -> dict[str, Any]:
    """elasticsearch-py 8 keywords as opensearch-py wants them: body fields in ``body``."""
    out: dict[str, Any] = {}
    body: Any = None
    fields: dict[str, Any] = {}
    for key, value in kwargs.items():
        key = _RENAMED.get(key, key)
        if key in _WHOLE_BODY:
            body = value
        elif key in _BODY_FIELDS:
            fields[key] = value
        else:
            out[key] = value
    if fields:
        body = {**(body or {}), **fields}
    if body is not None:
        out["body"] = body
    return out


@contextmanager
def _translating(url: str) -> Iterator[None]:
    """opensearch-py's exceptions raised as elasticsearch-py's, so one translation serves both engines."""
    import opensearchpy.exceptions as ose

    try:
        yield
    except ose.ConnectionTimeout as exc:
        raise es.ConnectionTimeout(str(exc.error or exc)) from exc
    except ose.SSLError as exc:
        raise es.SSLError(str(exc.error or exc)) from exc
    except ose.ConnectionError as exc:
        raise es.ConnectionError(str(exc.error or exc)) from exc
    except ose.TransportError as exc:
        status = exc.status_code if isinstance(exc.status_code, int) else 500
        meta = ApiResponseMeta(status, "1.1", HttpHeaders(), 0.0, _node(url))
        error_class = es.exceptions.HTTP_EXCEPTIONS.get(status, es.ApiError)
        raise error_class(message=str(exc.error), meta=meta, body=exc.info) from exc
    except ose.SerializationError as exc:
        raise es.SerializationError(str(exc)) from exc


def _node(url: str) -> NodeConfig:
    parts = urlsplit(url)
    return NodeConfig(parts.scheme or "http", parts.hostname or "localhost", parts.port or 9200)


class _Namespace:
    """``client.indices`` / ``client.cluster`` / ``client.nodes`` of an :class:`OpenSearchClient`."""

    def __init__(self, owner: OpenSearchClient, target: Any) -> None:
        self._owner, self._target = owner, target

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        method = getattr(self._target, name)
        owner = self._owner

        def call(**kwargs: Any) -> Any:
            with _translating(owner.url):
                return method(**_arguments({**owner.defaults, **kwargs}))

        call.__name__ = name
        return call


class OpenSearchClient(_Namespace):
    """An ``opensearchpy.OpenSearch`` that takes elasticsearch-py 8's keywords and raises its exceptions.

    Only the calling convention is translated (body fields as keywords become
    ``body``, ``source_includes`` becomes ``_source_includes``, ...); requests and
    answers are what opensearch-py sends and returns. ``engine`` is the version told
    at creation, else asked on first use.
    """

    def __init__(self, client: Any, engine: Engine | None = None, url: str = "the cluster",
                 defaults: Mapping[str, Any] | None = None, bulk_client: Any = None) -> None:
        super().__init__(self, client)
        self.opensearch, self.url, self.defaults = client, url, dict(defaults or {})
        # Bulk writes go through a client that does not retry: simdup_es.es.io.bulk retries
        # them with backoff, so the two layers do not multiply. None: the given client's own.
        self.bulk_opensearch = bulk_client
        self._engine = engine
        self.indices = _Namespace(self, client.indices)
        self.cluster = _Namespace(self, client.cluster)
        self.nodes = _Namespace(self, client.nodes)

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            with _translating(self.url):
                body = self.opensearch.nodes.info(node_id="_local", filter_path="nodes.*.version")
            self._engine = Engine(OPENSEARCH, nodes_version(body))
        return self._engine

    def options(self, **options: Any) -> OpenSearchClient:
        """A view with per-request options (``ignore_status``, ``request_timeout``)."""
        unknown = set(options) - {"ignore_status", "request_timeout"}
        if unknown:
            raise TypeError(f"options not supported with OpenSearch: {', '.join(sorted(unknown))}")
        return OpenSearchClient(self.opensearch, self._engine, self.url, {**self.defaults, **options},
                                self.bulk_opensearch)

    def open_point_in_time(self, *, index: str, keep_alive: str) -> dict[str, Any]:
        """``POST /<index>/_search/point_in_time``; answers ``{"id": ...}`` as Elasticsearch does."""
        with _translating(self.url):
            return {"id": self.opensearch.create_pit(index=index, params={"keep_alive": keep_alive})["pit_id"]}

    def close_point_in_time(self, *, id: str) -> Any:  # noqa: A002 - elasticsearch-py's name
        with _translating(self.url):
            return self.opensearch.delete_pit(body={"pit_id": [id]})

    def streaming_bulk(self, actions: Any, **kwargs: Any) -> Iterator[tuple[bool, dict[str, Any]]]:
        from opensearchpy import helpers

        with _translating(self.url):
            yield from helpers.streaming_bulk(self.bulk_opensearch or self.opensearch, actions, **kwargs)

    def close(self) -> None:
        self.opensearch.close()
        if self.bulk_opensearch is not None:
            self.bulk_opensearch.close()

    def __repr__(self) -> str:
        return f"OpenSearchClient({self.url!r}, {self._engine or 'version not asked yet'})"


def opensearch_client(url: str, engine: Engine | None, *, label: str, **kwargs: Any) -> OpenSearchClient:
    """An :class:`OpenSearchClient` for ``url`` (``kwargs`` go to ``opensearchpy.OpenSearch``)."""
    opensearchpy = _import_opensearch()
    # opensearch-py logs every answer >= 400 at WARNING (elasticsearch-py at INFO): the
    # same quiet for both unless the application chose a level.
    quiet = logging.getLogger("opensearch")
    if quiet.level == logging.NOTSET:
        quiet.setLevel(logging.ERROR)
    return OpenSearchClient(opensearchpy.OpenSearch(url, **kwargs), engine, label,
                            bulk_client=opensearchpy.OpenSearch(url, **{**kwargs, "max_retries": 0}))


__all__ = [
    "CLIENT_PIN",
    "ELASTICSEARCH",
    "ENGINES",
    "OPENSEARCH",
    "Engine",
    "OpenSearchClient",
    "PRODUCTS",
    "UNKNOWN_PRODUCT",
    "as_client",
    "client_mismatch",
    "detect",
    "engine_of",
    "opensearch_client",
    "product_of",
    "streaming_bulk",
    "uses_point_in_time",
]
