"""The Elasticsearch store: templates, bulk writes, exact candidate retrieval.

The request bodies come from :mod:`simdup_es.query` (pure); this module is the part
that talks to the cluster. Field names come from :mod:`simdup_es.schema`, and the
mappings from the JSON in ``mappings/`` (shipped as ``simdup_es.mappings``).

Every error the cluster or the network raises leaves this module as a
:class:`~simdup_es.errors.StoreError` (or its subclasses :class:`ConnectionFailed`
and :class:`NotFound`) whose message says what to do. Per-document failures of a
bulk write never raise: they come back in :attr:`BulkReport.failed`.

Secrets (API key, password) are never part of a ``repr``, a log line or an error
message; URLs are shown without any ``user:password@`` part.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, fields
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import elasticsearch as es
import numpy as np
from elasticsearch import Elasticsearch, helpers

from .. import query, schema
from .. import simhash as sh
from ..config import BlockLayout
from ..errors import ConfigError, ConnectionFailed, NotFound, SimdupError, StoreError
from .base import BulkReport, StoredDoc

log = logging.getLogger(__name__)

COMPONENT_TEMPLATE = "simdup-fingerprint"
"""Name of the component template with the fingerprint fields (``mappings/component-template.json``)."""
INDEX_TEMPLATE = "simdup"
"""Name of the index template for ``simdup-*`` indices (``mappings/index-template.json``)."""
DEFAULT_URL = "http://localhost:9200"

_Action = tuple[dict[str, Any], dict[str, Any]]  # (bulk header, document source)
_MAX_ID_BYTES = 512  # Elasticsearch refuses the whole bulk request for a longer _id
# Request-level errors one document can cause: the request is split to find it.
_DOCUMENT_ERRORS = {"action_request_validation_exception", "x_content_parse_exception", "illegal_argument_exception"}
_FILTER_PATH = ["hits.total", "hits.hits._id", "hits.hits.fields", "hits.hits.sort", "pit_id", "timed_out", "_shards.failed"]


# --- mappings --------------------------------------------------------------------------------


@lru_cache(maxsize=None)
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
    """The ``simdup`` object's mapping, with explicit block fields for every layout in ``layouts``."""
    simdup = copy.deepcopy(component_template()["template"]["mappings"]["properties"][schema.ROOT])
    for layout in layouts:
        for j in range(layout.blocks):
            simdup["properties"].setdefault(schema.block_name(layout, j), _block_mapping())
    return simdup


def index_mappings(layouts: Iterable[BlockLayout] = (schema.DEFAULT_LAYOUT,)) -> dict[str, Any]:
    """Full mappings of an index simdup creates: component template + index template fields."""
    component = component_template()["template"]["mappings"]
    owned = index_template()["template"]["mappings"]
    return {
        **{k: v for k, v in owned.items() if k != "properties"},
        "dynamic_templates": component["dynamic_templates"],
        "properties": {**owned["properties"], schema.ROOT: fingerprint_mapping(layouts)},
    }


# --- connection ------------------------------------------------------------------------------


def redact_url(url: str) -> str:
    """``url`` without credentials: ``https://user:pw@host`` becomes ``https://***@host``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _env_bool(name: str, value: str) -> bool:
    low = value.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ConfigError(f"{name} must be one of true/false, yes/no, 1/0, on/off; got {value!r}")


@dataclass(frozen=True, repr=False)
class ConnectionSettings:
    """How to reach a cluster: URL, credentials, TLS.

    Give either ``api_key`` or ``username`` + ``password`` (or neither, for a cluster
    without security). TLS certificates are verified unless ``verify_certs`` is
    false; ``ca_certs`` names the CA bundle for a self-signed cluster.

    ``request_timeout`` is in seconds; ``max_retries`` is how often the client
    retries a request that timed out, could not connect, or got 429/502/503/504.
    """

    url: str = DEFAULT_URL
    api_key: str | None = None
    username: str | None = None
    password: str | None = None
    ca_certs: Path | None = None
    verify_certs: bool = True
    request_timeout: float = 30.0
    max_retries: int = 3

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"Elasticsearch URL must look like https://host:9200, got {redact_url(self.url)!r}")
        if self.api_key is not None and (self.username is not None or self.password is not None):
            raise ConfigError("give either an API key or a user and password, not both")
        if (self.username is None) != (self.password is None):
            raise ConfigError("basic auth needs both a user and a password (SIMDUP_ES_USER, SIMDUP_ES_PASSWORD)")
        if self.ca_certs is not None:
            object.__setattr__(self, "ca_certs", Path(self.ca_certs))
            if not self.ca_certs.is_file():
                raise ConfigError(f"CA certificate {self.ca_certs} does not exist or is not a file")
        if not self.request_timeout > 0:
            raise ConfigError(f"request_timeout must be positive, got {self.request_timeout}")
        if self.max_retries < 0:
            raise ConfigError(f"max_retries must not be negative, got {self.max_retries}")

    @classmethod
    def from_env(cls, **overrides: Any) -> ConnectionSettings:
        """Settings from ``SIMDUP_ES_*`` variables; ``overrides`` that are not ``None`` win.

        Reads ``SIMDUP_ES_URL``, ``SIMDUP_ES_API_KEY``, ``SIMDUP_ES_USER``,
        ``SIMDUP_ES_PASSWORD``, ``SIMDUP_ES_CA_CERT`` and ``SIMDUP_ES_VERIFY_CERTS``.
        Empty variables count as unset.
        """
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - names)
        if unknown:
            raise TypeError(f"unknown connection settings: {', '.join(unknown)}")
        env = {k: v for k, v in os.environ.items() if k.startswith("SIMDUP_ES_") and v.strip()}
        values: dict[str, Any] = {
            "url": env.get("SIMDUP_ES_URL"),
            "api_key": env.get("SIMDUP_ES_API_KEY"),
            "username": env.get("SIMDUP_ES_USER"),
            "password": env.get("SIMDUP_ES_PASSWORD"),
            "ca_certs": env.get("SIMDUP_ES_CA_CERT"),
        }
        if "SIMDUP_ES_VERIFY_CERTS" in env:
            values["verify_certs"] = _env_bool("SIMDUP_ES_VERIFY_CERTS", env["SIMDUP_ES_VERIFY_CERTS"])
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**{k: v for k, v in values.items() if v is not None})

    def __repr__(self) -> str:
        auth = "api_key=***" if self.api_key else (f"username={self.username!r}, password=***" if self.username else "no auth")
        tls = f", ca_certs={str(self.ca_certs)!r}" if self.ca_certs else ""
        return (
            f"ConnectionSettings(url={redact_url(self.url)!r}, {auth}{tls}, verify_certs={self.verify_certs}, "
            f"request_timeout={self.request_timeout}, max_retries={self.max_retries})"
        )

    def client(self) -> Elasticsearch:
        """A new client for these settings (no request is made until it is used)."""
        kwargs: dict[str, Any] = {
            "request_timeout": self.request_timeout,
            "max_retries": self.max_retries,
            "retry_on_timeout": True,
        }
        if self.api_key:
            # Either the encoded key, or "id:api_key" as Kibana shows the two parts.
            kwargs["api_key"] = tuple(self.api_key.split(":", 1)) if ":" in self.api_key else self.api_key
        elif self.username is not None and self.password is not None:
            kwargs["basic_auth"] = (self.username, self.password)
        if urlsplit(self.url).scheme == "https":
            kwargs["verify_certs"] = self.verify_certs
            if not self.verify_certs:
                kwargs["ssl_show_warn"] = False
                log.warning("TLS certificate verification is off for %s", redact_url(self.url))
            if self.ca_certs is not None:
                kwargs["ca_certs"] = str(self.ca_certs)
        return Elasticsearch(self.url, **kwargs)


def _client_url(client: Elasticsearch) -> str:
    try:
        return ", ".join(redact_url(node.base_url) for node in client.transport.node_pool.all())
    except Exception:  # noqa: BLE001 - only for messages
        return "the cluster"


def _reason(exc: es.ApiError) -> str:
    """``type: reason`` of an API error, with the first ``caused_by``."""
    error = exc.body.get("error") if isinstance(exc.body, dict) else None
    if isinstance(error, dict):
        return _item_reason(error)
    return str(exc.message)


def _item_reason(error: Any) -> str:
    if not isinstance(error, dict):
        return str(error)
    text = f"{error.get('type', 'error')}: {error.get('reason', '')}".rstrip(": ")
    cause = error.get("caused_by")
    if isinstance(cause, dict) and cause.get("reason"):
        text += f" (caused by {cause.get('type', 'error')}: {cause['reason']})"
    return text


@contextmanager
def _translated(client: Elasticsearch, action: str, index: str | None = None) -> Iterator[None]:
    """Turn client exceptions into :class:`StoreError` subclasses that say what to do."""
    where = f"index {index!r}" if index else "the cluster"
    try:
        yield
    except SimdupError:
        raise
    except es.AuthenticationException as exc:
        raise ConnectionFailed(
            f"Elasticsearch at {_client_url(client)} refused the credentials while {action} (401): check the API key "
            "(SIMDUP_ES_API_KEY / --api-key) or user and password (SIMDUP_ES_USER, SIMDUP_ES_PASSWORD)"
        ) from exc
    except es.AuthorizationException as exc:
        raise StoreError(
            f"refused while {action} on {where} (403: {_reason(exc)}): the user or API key lacks the privileges for it"
        ) from exc
    except es.NotFoundError as exc:
        if exc.error == "index_not_found_exception":
            raise NotFound(
                f"{where} does not exist: run 'simdup setup' (or 'simdup index', which creates it) first"
            ) from exc
        raise NotFound(f"not found while {action} on {where}: {_reason(exc)}") from exc
    except es.UnsupportedProductError as exc:
        raise ConnectionFailed(f"{_client_url(client)} does not answer like Elasticsearch: {exc.message}") from exc
    except es.ApiError as exc:
        raise StoreError(f"Elasticsearch refused {action} on {where} ({exc.meta.status} {_reason(exc)})") from exc
    except es.SSLError as exc:
        raise ConnectionFailed(
            f"TLS with {_client_url(client)} failed while {action} ({exc.message}): give the cluster's CA certificate "
            "(SIMDUP_ES_CA_CERT / --ca-cert), or check the URL's scheme"
        ) from exc
    except es.ConnectionTimeout as exc:
        raise ConnectionFailed(
            f"Elasticsearch at {_client_url(client)} did not answer in time while {action} ({exc.message}): the cluster "
            "may be overloaded or unreachable; retry, or raise the request timeout"
        ) from exc
    except es.ConnectionError as exc:
        raise ConnectionFailed(
            f"cannot reach Elasticsearch at {_client_url(client)} while {action} ({exc.message}): check the URL "
            "(SIMDUP_ES_URL / --es-url) and that the cluster is running"
        ) from exc
    except es.TransportError as exc:
        raise StoreError(f"request to {_client_url(client)} failed while {action}: {exc.message}") from exc


def install_templates(client: Elasticsearch) -> None:
    """Put the component template and the ``simdup-*`` index template (idempotent).

    Existing templates of the same names are replaced by the shipped ones; indices
    that already exist keep their mappings.
    """
    with _translated(client, "installing the index templates"):
        client.cluster.put_component_template(name=COMPONENT_TEMPLATE, body=component_template())
        client.indices.put_index_template(name=INDEX_TEMPLATE, body=index_template())


# --- the store -------------------------------------------------------------------------------


class ElasticsearchStore:
    """Fingerprinted documents in one Elasticsearch index (or alias).

    Parameters
    ----------
    client:
        An :class:`elasticsearch.Elasticsearch` client, or :class:`ConnectionSettings`
        to build one from on first use. The store closes a client it built itself
        and leaves a client it was given to its owner.
    index:
        Index name. Names matching ``simdup-*`` get the index template; other names
        get the same mappings explicitly (see :meth:`setup`).
    layout:
        Block layout of the candidate query. The default is 8 blocks of 8 bits,
        5 of 8 equal (SPEC §5).
    layouts:
        Block layouts written with each document (default: ``layout`` only). Must
        include ``layout``. Writing several lets one index serve several layouts.
    chunk_size:
        Most documents per bulk request.
    concurrency:
        Bulk requests in flight at once. Two keep a small cluster busy while this
        process serialises the next request (1.4x plain ``streaming_bulk`` on one
        local node, see ``benchmarks/bench_es_index.py``); a batch is split so
        each request gets its share, down to ``min_chunk`` documents.
    max_retries, initial_backoff, max_backoff:
        Retries of a bulk request rejected with 429 (too busy) or failing to
        connect, waiting ``initial_backoff * 2**n`` seconds (at most
        ``max_backoff``) before retry ``n + 1``.
    page_size:
        Candidates fetched by the first request; when there are more, all of them
        are paged through a point in time, so none is missed.
    """

    def __init__(
        self,
        client: Elasticsearch | ConnectionSettings,
        index: str,
        layout: BlockLayout = BlockLayout(),
        *,
        layouts: Sequence[BlockLayout] | None = None,
        chunk_size: int = 1000,
        concurrency: int = 2,
        min_chunk: int = 100,
        max_chunk_bytes: int = 20 * 1024 * 1024,
        max_retries: int = 5,
        initial_backoff: float = 1.0,
        max_backoff: float = 30.0,
        page_size: int = 1000,
        pit_page_size: int = 10_000,
        pit_keep_alive: str = "1m",
    ) -> None:
        if not index or index != index.lower() or index.startswith(("-", "_", "+")):
            raise ConfigError(f"{index!r} is not a valid index name (lower case, not starting with -, _ or +)")
        self.layout = layout
        self.layouts = tuple(layouts) if layouts is not None else (layout,)
        if layout not in self.layouts:
            raise ConfigError(f"layouts must include the query layout {layout}")
        if min(chunk_size, concurrency, min_chunk, page_size, pit_page_size) < 1:
            raise ConfigError("chunk_size, concurrency, min_chunk, page_size and pit_page_size must be positive")
        self.index = index
        self.chunk_size = chunk_size
        self.concurrency = concurrency
        self.min_chunk = min_chunk
        self.max_chunk_bytes = max_chunk_bytes
        self.max_retries = max_retries
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.page_size = page_size
        self.pit_page_size = pit_page_size
        self.pit_keep_alive = pit_keep_alive
        if isinstance(client, ConnectionSettings):
            self._settings: ConnectionSettings | None = client
            self._client: Elasticsearch | None = None
        else:
            self._settings = None
            self._client = client
        self._checked = False

    def __repr__(self) -> str:
        return f"ElasticsearchStore(index={self.index!r}, layout={self.layout})"

    @property
    def client(self) -> Elasticsearch:
        """The client, built from the settings on first use."""
        if self._client is None:
            assert self._settings is not None
            self._client = self._settings.client()
        return self._client

    def _translated(self, action: str) -> Any:
        return _translated(self.client, action, self.index)

    # -- setup ---------------------------------------------------------------------------------

    def setup(self) -> None:
        """Install the templates and create the index, or add the fingerprint fields to it.

        Idempotent. A new index gets the full mappings (fingerprint fields,
        ``title``, ``text``) in the create request, whether or not its name
        matches the template's ``simdup-*`` pattern. An existing index gets the
        fingerprint fields added; its other fields are left alone. A user allowed
        to manage the index but not templates gets a warning, not an error.
        """
        try:
            install_templates(self.client)
        except StoreError as exc:
            if not isinstance(exc.__cause__, es.AuthorizationException):
                raise
            # Templates only shape indices created later; this index gets its mappings explicitly.
            log.warning("could not install the index templates (%s); going on with index %s", exc, self.index)
        with self._translated("creating the index"):
            if not self.client.indices.exists(index=self.index):
                try:
                    self.client.indices.create(index=self.index, mappings=index_mappings(self.layouts))
                    log.info("created index %s", self.index)
                    self._checked = True
                    return
                except es.BadRequestError as exc:
                    if exc.error != "resource_already_exists_exception":
                        raise
        with self._translated("adding the fingerprint fields to the mapping"):
            try:
                self.client.indices.put_mapping(index=self.index, properties={schema.ROOT: fingerprint_mapping(self.layouts)})
            except es.BadRequestError as exc:
                raise StoreError(
                    f"index {self.index!r} maps the fingerprint fields differently ({_reason(exc)}): use a new index, "
                    "which 'simdup setup' creates with the right mappings, and re-index into it"
                ) from exc
        self._checked = True

    def _check_mapping(self) -> None:
        """Refuse an index whose fingerprint fields are not keyword (checked once per store).

        A term query on an unmapped block field matches nothing, so without this
        check a wrongly mapped index would silently return no candidates.
        """
        if self._checked:
            return
        with self._translated("reading the mapping"):
            response = self.client.indices.get_mapping(index=self.index)
        needed = ["fp", "version"] + [schema.block_name(lay, j) for lay in self.layouts for j in range(lay.blocks)]
        for name, body in response.items():
            props = body.get("mappings", {}).get("properties", {}).get(schema.ROOT, {}).get("properties", {})
            missing = [f"{schema.ROOT}.{f}" for f in needed if props.get(f, {}).get("type") != "keyword"]
            if missing:
                raise StoreError(
                    f"index {name!r} has no keyword mapping for {', '.join(missing)}: run 'simdup setup' to add "
                    "the fingerprint fields, and (re-)index the documents with this block layout"
                )
        self._checked = True

    # -- writes --------------------------------------------------------------------------------

    def _source(self, doc: StoredDoc) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if doc.title is not None:
            body["title"] = doc.title
        if doc.text is not None:
            body["text"] = doc.text
        body[schema.ROOT] = schema.fingerprint_object(doc.fingerprint, doc.version, self.layouts)
        return body

    @staticmethod
    def _invalid(doc: StoredDoc) -> str | None:
        """Why a document cannot be sent at all (Elasticsearch would fail the whole request)."""
        if not isinstance(doc.id, str) or not doc.id:
            return "invalid id: must be a non-empty string"
        if len(doc.id.encode("utf-8", "surrogatepass")) > _MAX_ID_BYTES:
            return f"id is longer than {_MAX_ID_BYTES} bytes"
        if not isinstance(doc.fingerprint, int) or not 0 <= doc.fingerprint <= sh.MASK64:
            return "fingerprint is not a 64-bit unsigned integer"
        if not isinstance(doc.version, str) or not doc.version:
            return "fingerprint version is missing"
        return None

    def put(self, docs: Sequence[StoredDoc]) -> BulkReport:
        """Index ``docs`` (replacing documents with the same ids) with the bulk API.

        Documents Elasticsearch refuses are reported in ``failed`` with the reason;
        requests rejected as too busy (429) or failing to connect are retried with
        backoff. Raises :class:`ConnectionFailed` when the cluster stays
        unreachable; the exception's ``report`` holds what was written until then.
        """
        report = BulkReport()
        if not docs:
            return report
        self._check_mapping()
        actions: list[_Action] = []
        for doc in docs:
            problem = self._invalid(doc)
            if problem:
                report.failed.append((str(doc.id), problem))
            else:
                actions.append(({"index": {"_id": doc.id}}, self._source(doc)))
        size = max(self.min_chunk, min(self.chunk_size, -(-len(actions) // self.concurrency)))
        chunks = [actions[i : i + size] for i in range(0, len(actions), size)]
        error: StoreError | None = None
        # The same id twice in one call: send in order, so the last one wins as documented.
        in_order = len({header['index']['_id'] for header, _ in actions}) < len(actions)
        if self.concurrency == 1 or len(chunks) == 1 or in_order:
            for chunk in chunks:
                try:
                    self._put_chunk(chunk, report)
                except StoreError as exc:
                    error = exc
                    break
        else:
            error = self._put_concurrently(chunks, report)
        if error is not None:
            error.report = report  # type: ignore[attr-defined]
            raise error
        return report

    def _put_concurrently(self, chunks: list[list[_Action]], report: BulkReport) -> StoreError | None:
        """Send chunks ``concurrency`` at a time; the first error stops new sends and is returned."""

        def send(chunk: list[_Action]) -> BulkReport:
            part = BulkReport()
            try:
                self._put_chunk(chunk, part)
            except StoreError as exc:
                exc.report = part  # type: ignore[attr-defined]
                raise
            return part

        def merge(part: BulkReport) -> None:
            report.written += part.written
            report.failed += part.failed

        error: StoreError | None = None
        pending: deque[Future[BulkReport]] = deque()
        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="simdup-bulk") as pool:
            for chunk in chunks:
                if error is None:
                    pending.append(pool.submit(send, chunk))
                # Bounded: at most two requests per thread queued, so memory stays flat.
                while pending and (len(pending) >= 2 * self.concurrency or error is not None or chunk is chunks[-1]):
                    future = pending.popleft()
                    try:
                        merge(future.result())
                    except StoreError as exc:
                        merge(exc.report)  # type: ignore[attr-defined]
                        error = error or exc
        return error

    def _put_chunk(self, actions: list[_Action], report: BulkReport) -> None:
        for attempt in range(self.max_retries + 1):
            try:
                results = list(
                    helpers.streaming_bulk(
                        self.client,
                        actions,
                        index=self.index,
                        chunk_size=len(actions),
                        max_chunk_bytes=self.max_chunk_bytes,
                        expand_action_callback=_as_is,
                        raise_on_error=False,
                        raise_on_exception=True,
                        max_retries=self.max_retries,
                        initial_backoff=self.initial_backoff,
                        max_backoff=self.max_backoff,
                        retry_on_status=(429,),
                    )
                )
            except (es.ConnectionError, es.ConnectionTimeout) as exc:
                if isinstance(exc, es.SSLError) or attempt == self.max_retries:
                    with self._translated("bulk indexing"):
                        raise
                wait = min(self.max_backoff, self.initial_backoff * 2**attempt)
                log.warning(
                    "bulk request to %s failed (%s); retry %d of %d in %.1f s",
                    _client_url(self.client), type(exc).__name__, attempt + 1, self.max_retries, wait,
                )
                time.sleep(wait)
                continue
            except (es.BadRequestError, es.SerializationError) as exc:
                if isinstance(exc, es.ApiError) and exc.error not in _DOCUMENT_ERRORS:
                    with self._translated("bulk indexing"):
                        raise
                # One bad document can fail the whole request: split until it stands alone.
                if len(actions) > 1:
                    half = len(actions) // 2
                    self._put_chunk(actions[:half], report)
                    self._put_chunk(actions[half:], report)
                else:
                    reason = _reason(exc) if isinstance(exc, es.ApiError) else f"cannot serialise: {exc}"
                    report.failed.append((actions[0][0]["index"]["_id"], reason))
                return
            except es.ApiError as exc:
                if exc.meta.status == 413 and len(actions) > 1:  # request too large
                    half = len(actions) // 2
                    self._put_chunk(actions[:half], report)
                    self._put_chunk(actions[half:], report)
                    return
                with self._translated("bulk indexing"):
                    raise
            else:
                for ok, item in results:
                    if ok:
                        report.written += 1
                    else:
                        info = next(iter(item.values()))
                        report.failed.append((str(info.get("_id")), f"{info.get('status')} {_item_reason(info.get('error'))}"))
                return

    # -- reads ---------------------------------------------------------------------------------

    def candidates(self, fingerprint: int, version: str, *, exclude_id: str | None = None) -> tuple[list[str], np.ndarray]:
        """Ids and fingerprints of every document sharing at least ``layout.min_match`` blocks.

        One request when the candidates fit in ``page_size``; otherwise all of
        them are read from a point in time (a consistent snapshot) with
        ``search_after``, so none is missed or counted twice. Partial results
        (a failed shard) raise instead of returning fewer candidates.
        """
        self._check_mapping()
        body = query.candidate_search(fingerprint, version, self.layout, size=self.page_size, exclude_id=exclude_id)
        with self._translated("searching candidates"):
            response = self.client.search(
                index=self.index, body=body, filter_path=_FILTER_PATH, allow_partial_search_results=False
            )
            _check_complete(response)
            hits = response.get("hits", {}).get("hits", [])
            total = response["hits"]["total"]
            if total["relation"] != "eq" or total["value"] > len(hits):
                hits = self._all_pages(body)
        hits = [hit for hit in hits if schema.FP in hit.get("fields", {})]  # a block-only document cannot be re-ranked
        ids = [hit["_id"] for hit in hits]
        fps = np.fromiter((int(hit["fields"][schema.FP][0], 16) for hit in hits), dtype=np.uint64, count=len(hits))
        return ids, fps

    def _all_pages(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        pit = self.client.open_point_in_time(index=self.index, keep_alive=self.pit_keep_alive)["id"]
        try:
            body = {**body, "size": self.pit_page_size, "sort": ["_shard_doc"], "track_total_hits": False}
            hits: list[dict[str, Any]] = []
            while True:
                body["pit"] = {"id": pit, "keep_alive": self.pit_keep_alive}
                response = self.client.search(body=body, filter_path=_FILTER_PATH, allow_partial_search_results=False)
                _check_complete(response)
                pit = response.get("pit_id", pit)
                page = response.get("hits", {}).get("hits", [])
                hits += page
                if len(page) < self.pit_page_size:
                    return hits
                body["search_after"] = page[-1]["sort"]
        finally:
            try:
                self.client.close_point_in_time(id=pit)
            except (es.ApiError, es.TransportError) as exc:  # it expires by itself
                log.debug("closing a point in time failed: %s", exc)

    def get(self, ids: Iterable[str]) -> list[StoredDoc]:
        """Documents by id, in the order asked; unknown ids (and documents without a fingerprint) are left out."""
        wanted = list(dict.fromkeys(ids))
        out: list[StoredDoc] = []
        includes = ["title", "text", schema.FP, schema.VERSION]
        for start in range(0, len(wanted), 1000):
            with self._translated("reading documents"):
                response = self.client.mget(index=self.index, ids=wanted[start : start + 1000], source_includes=includes)
            for doc in response["docs"]:
                error = doc.get("error")
                if error:
                    if isinstance(error, dict) and error.get("type") == "index_not_found_exception":
                        raise NotFound(f"index {self.index!r} does not exist: run 'simdup setup' (or 'simdup index') first")
                    raise StoreError(f"reading document {doc.get('_id')!r} from {self.index!r} failed: {_item_reason(error)}")
                if not doc.get("found"):
                    continue
                source = doc.get("_source", {})
                fp = source.get(schema.ROOT, {})
                if "fp" not in fp or "version" not in fp:
                    log.debug("document %r in %s has no fingerprint; left out", doc["_id"], self.index)
                    continue
                out.append(StoredDoc(doc["_id"], sh.from_hex(fp["fp"]), fp["version"], source.get("text"), source.get("title")))
        return out

    def count(self) -> int:
        """Number of documents in the index (after the last refresh)."""
        with self._translated("counting documents"):
            return int(self.client.count(index=self.index)["count"])

    def refresh(self) -> None:
        """Make everything written so far searchable."""
        with self._translated("refreshing"):
            self.client.indices.refresh(index=self.index)

    def close(self) -> None:
        """Close the client if this store built it; a client passed in stays open."""
        if self._settings is not None and self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> ElasticsearchStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _as_is(action: Any) -> Any:
    """Bulk actions are already ``(header, source)`` pairs: nothing to expand."""
    return action


def _check_complete(response: dict[str, Any]) -> None:
    if response.get("timed_out") or response.get("_shards", {}).get("failed"):
        raise StoreError(
            "the candidate search returned partial results (a shard failed or timed out); nothing was missed on "
            "purpose, but the answer would be incomplete: check the cluster's health and retry"
        )


__all__ = [
    "COMPONENT_TEMPLATE",
    "INDEX_TEMPLATE",
    "ConnectionSettings",
    "ElasticsearchStore",
    "component_template",
    "fingerprint_mapping",
    "index_mappings",
    "index_template",
    "install_templates",
    "redact_url",
]
