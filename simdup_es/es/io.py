"""Talking to the cluster (Elasticsearch or OpenSearch): the one place that sends requests and reads answers.

Three things every job needs, each written once:

* :func:`translated`: client and network exceptions become
  :class:`~simdup_es.errors.StoreError` (or :class:`ConnectionFailed`,
  :class:`NotFound`) with a message that says what to do.
* :func:`walk`: every hit of a query from one point in time (a consistent
  snapshot), page by page with ``search_after``; partial results raise.
* :func:`bulk`: bulk actions in chunks, ``concurrency`` requests in flight, with
  backoff on 429 and connection errors, a request split until a document that
  fails it stands alone, and one :class:`BulkItem` per action, in order.

Request bodies come from :mod:`simdup_es.es.bodies` (pure); this module adds no
logic of its own about what to ask.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import elasticsearch as es
from elastic_transport import ObjectApiResponse
from elasticsearch import Elasticsearch

from ..common import BulkReport, Closing
from ..config import Retry
from ..errors import ConfigError, ConnectionFailed, NotFound, SimdupError, StoreError
from .bodies import Action, header_json, merge_free_bytes, page_search
from .engine import (OpenSearchClient, client_mismatch, not_elasticsearch, product_of, redact_url, streaming_bulk,
                     uses_point_in_time)

log = logging.getLogger(__name__)

# What a bulk answer is read for: each item's id, status and error. The rest of it (index,
# version, result, shards, sequence numbers) is most of the answer: the node writes, and
# this process parses, a fraction of it (1-2 us less CPU here per document indexed).
_BULK_PATH = ["items.*._id", "items.*.status", "items.*.error"]
_HIT_PATH = [
    "hits.total", "hits.hits._id", "hits.hits._index", "hits.hits._routing", "hits.hits._seq_no",
    "hits.hits._primary_term", "hits.hits._source", "hits.hits.fields", "hits.hits.sort", "pit_id", "timed_out",
    "_shards.failed",
]
# Request-level errors one document can cause: the request is split to find it.
_DOCUMENT_ERRORS = {"action_request_validation_exception", "x_content_parse_exception", "illegal_argument_exception"}


# --- errors ---------------------------------------------------------------------------------


def client_url(client: Elasticsearch) -> str:
    """The nodes a client talks to, without credentials (for messages)."""
    if isinstance(client, OpenSearchClient):
        return client.url
    try:
        return ", ".join(redact_url(node.base_url) for node in client.transport.node_pool.all())
    except Exception:  # noqa: BLE001 - only for messages
        return "the cluster"


def _sends_credentials(client: Any) -> bool | None:
    """Whether ``client`` sends an ``Authorization`` header; ``None`` when that cannot be told."""
    if isinstance(client, OpenSearchClient):
        kwargs = getattr(getattr(client.opensearch, "transport", None), "kwargs", None)
        if not isinstance(kwargs, dict):
            return None
        return bool(kwargs.get("http_auth")) or "authorization" in {k.lower() for k in kwargs.get("headers") or {}}
    headers = getattr(client, "_headers", None)  # elasticsearch-py 8 and 9 keep the auth header there
    return None if headers is None else "authorization" in headers


def error_reason(exc: es.ApiError) -> str:
    """``type: reason`` of an API error, with the first ``caused_by``."""
    error = exc.body.get("error") if isinstance(exc.body, dict) else None
    if isinstance(error, dict):
        return item_reason(error)
    return str(exc.message)


def item_reason(error: Any) -> str:
    """``type: reason (caused by ...)`` of the ``error`` object of a bulk item or ``mget`` doc, each reason cut to
    :data:`REASON_CHARS` (a field too long for a keyword comes back with the start of its value: the document)."""
    if not isinstance(error, dict):
        return _cut(str(error))
    text = f"{error.get('type', 'error')}: {_cut(str(error.get('reason', '')))}".rstrip(": ")
    cause = error.get("caused_by")
    if isinstance(cause, dict) and cause.get("reason"):
        text += f" (caused by {cause.get('type', 'error')}: {_cut(str(cause['reason']))})"
    return text


REASON_CHARS = 300


def _cut(reason: str) -> str:
    return reason if len(reason) <= REASON_CHARS else f"{reason[:REASON_CHARS]}... ({len(reason):,} characters)"


RUN_SETUP = ": run 'simdup setup' (or 'simdup index', which creates it) first"


@contextmanager
def translated(client: Elasticsearch, action: str, index: str | None = None, *, missing: str = RUN_SETUP,
               cluster: str | None = None) -> Iterator[None]:
    """Turn client exceptions into :class:`StoreError` subclasses that say what to do.

    ``missing`` ends the message when the index does not exist. Messages name the
    engine the client talks to (``Elasticsearch``, ``OpenSearch``: :func:`product_of`),
    or ``cluster`` when given (``the cluster``, while the engine is still being asked).
    """
    where = f"index {index!r}" if index else "the cluster"
    name = cluster or product_of(client)
    try:
        yield
    except SimdupError:
        raise
    except es.AuthenticationException as exc:
        if _sends_credentials(client) is False:
            raise ConnectionFailed(
                f"{name} at {client_url(client)} asks for credentials while {action} (401: {error_reason(exc)}), and "
                "none were given: set an API key (SIMDUP_ES_API_KEY / --api-key) or a user and password "
                "(SIMDUP_ES_USER, SIMDUP_ES_PASSWORD / --user, --password)"
            ) from exc
        raise ConnectionFailed(
            f"{name} at {client_url(client)} refused the credentials while {action} (401): check the API key "
            "(SIMDUP_ES_API_KEY / --api-key) or user and password (SIMDUP_ES_USER, SIMDUP_ES_PASSWORD)"
        ) from exc
    except es.AuthorizationException as exc:
        raise StoreError(
            f"refused while {action} on {where} (403: {error_reason(exc)}): the user or API key lacks the privileges "
            "for it"
        ) from exc
    except es.NotFoundError as exc:
        if exc.error == "index_not_found_exception":
            raise NotFound(f"{where} does not exist{missing}") from exc
        raise NotFound(f"not found while {action} on {where}: {error_reason(exc)}") from exc
    except es.UnsupportedProductError as exc:
        raise ConnectionFailed(f"{client_url(client)} does not answer like Elasticsearch ({exc.message}): "
                               f"{not_elasticsearch()}") from exc
    except es.ApiError as exc:
        mismatch = client_mismatch(exc)
        if mismatch:
            raise ConfigError(mismatch) from exc
        raise StoreError(f"{name} refused {action} on {where} ({exc.meta.status} {error_reason(exc)})") from exc
    except es.SSLError as exc:
        raise ConnectionFailed(
            f"TLS with {client_url(client)} failed while {action} ({exc.message}): give the cluster's CA certificate "
            "(SIMDUP_ES_CA_CERT / --ca-cert), or check the URL's scheme"
        ) from exc
    except es.ConnectionTimeout as exc:
        raise ConnectionFailed(
            f"{name} at {client_url(client)} did not answer in time while {action} ({exc.message}): the "
            "cluster may be overloaded or unreachable; retry, or raise the request timeout"
        ) from exc
    except es.ConnectionError as exc:
        raise ConnectionFailed(
            f"cannot reach {name} at {client_url(client)} while {action} ({exc.message}): check the URL "
            "(SIMDUP_ES_URL / --es-url) and that the cluster is running"
        ) from exc
    except es.TransportError as exc:
        raise StoreError(f"request to {client_url(client)} failed while {action}: {exc.message}") from exc


def missing_item_index(error: Any, index: str) -> None:
    """Raise :class:`NotFound` when an ``mget`` doc's error says the index is missing."""
    if isinstance(error, dict) and error.get("type") == "index_not_found_exception":
        raise NotFound(f"index {index!r} does not exist{RUN_SETUP}")


def partial(response: Mapping[str, Any] | ObjectApiResponse[Any]) -> bool:
    """Whether a search (or one answer of an ``_msearch``) failed or has partial results (a shard failed or
    timed out)."""
    return bool("error" in response or response.get("timed_out") or response.get("_shards", {}).get("failed"))


def check_complete(response: Mapping[str, Any] | ObjectApiResponse[Any], what: str) -> None:
    """Raise when a search answered with partial results (a shard failed or timed out)."""
    if partial(response):
        raise StoreError(
            f"{what} returned partial results (a shard failed or timed out): the answer would be incomplete, so "
            "nothing was done with it; check the cluster's health and retry"
        )


def put_mapping(client: Elasticsearch, index: str, properties: dict[str, Any], what: str, fix: str,
                missing: str = RUN_SETUP) -> None:
    """Add ``properties`` to the mapping of ``index``; a conflict is a :class:`StoreError` ending in ``fix``."""
    with translated(client, f"adding the {what} to the mapping", index, missing=missing):
        try:
            client.indices.put_mapping(index=index, properties=properties)
        except es.BadRequestError as exc:
            raise StoreError(f"index {index!r} maps the {what} differently ({error_reason(exc)}): {fix}") from exc


def record_meta(client: Elasticsearch, index: str, values: Mapping[str, Any], what: str) -> None:
    """Merge ``values`` into ``_meta.simdup`` of each index of ``index``, keeping every other ``_meta`` key."""
    with translated(client, f"recording {what} in the mapping", index):
        for name, body in client.indices.get_mapping(index=index).items():
            meta = dict(body.get("mappings", {}).get("_meta") or {})
            meta["simdup"] = {**(meta.get("simdup") or {}), **values}
            client.indices.put_mapping(index=name, body={"_meta": meta})


def merges_held_back(client: Elasticsearch) -> list[str]:
    """The nodes whose disk is too full for the cluster to start a merge, each as ``"name (3.1% of
    252 GiB free)"``; empty when none is, or the cluster has no such rule (:func:`bodies.merge_free_bytes`)."""
    try:
        with translated(client, "reading the cluster's disk settings"):
            settings = dict(client.cluster.get_settings(include_defaults=True, flat_settings=True))
            stats = client.nodes.stats(metric="fs", filter_path=["nodes.*.name", "nodes.*.fs.total"])
    except StoreError as exc:
        if isinstance(exc.__cause__, es.AuthorizationException):  # a user without cluster:monitor: cannot tell
            log.debug("cannot read the nodes' disk space: %s", exc)
            return []
        raise
    held = []
    for node in (stats.get("nodes") or {}).values():
        fs = node.get("fs", {}).get("total", {})
        total, free = int(fs.get("total_in_bytes") or 0), int(fs.get("available_in_bytes") or 0)
        needed = merge_free_bytes(settings, total) if total else None
        if needed is not None and free < needed:
            held.append(f"{node.get('name')} ({free / total:.1%} of {total / (1 << 30):.0f} GiB free)")
    return held


# --- reading --------------------------------------------------------------------------------


def search(client: Elasticsearch, index: str | None, body: Mapping[str, Any], what: str,
           filter_path: list[str] | None = None) -> dict[str, Any]:
    """One ``_search`` that must be complete (no partial results)."""
    with translated(client, what, index):
        response = client.search(index=index, body=dict(body), filter_path=filter_path or _HIT_PATH,
                                 allow_partial_search_results=False)
    check_complete(response, what)
    return dict(response)


class PointInTime(Closing):
    """A point in time on ``index`` (a consistent snapshot for several walks), closed on exit.

    ``id`` follows the id each search answers with. On an engine whose point in
    time cannot be paged safely (OpenSearch: see :func:`~simdup_es.es.engine.uses_point_in_time`)
    ``id`` is ``None`` and each walk scrolls instead: every walk is then a consistent
    snapshot of its own.
    """

    def __init__(self, client: Elasticsearch, index: str, keep_alive: str = "5m") -> None:
        self.client, self.index, self.keep_alive = client, index, keep_alive
        self.id: str | None = None
        if uses_point_in_time(client):
            with translated(client, "opening a point in time", index):
                self.id = client.open_point_in_time(index=index, keep_alive=keep_alive)["id"]

    def close(self) -> None:
        if self.id is None:
            return
        try:
            self.client.close_point_in_time(id=self.id)
        except (es.ApiError, es.TransportError) as exc:  # it expires by itself
            log.debug("closing a point in time failed: %s", exc)


def walk(
    client: Elasticsearch,
    index: str,
    query: Mapping[str, Any],
    *,
    pit: PointInTime | None = None,
    source: bool | list[str] = False,
    docvalue_fields: list[str] | None = None,
    ids: bool = True,
    page_size: int = 1000,
    keep_alive: str = "5m",
    seq_no: bool = False,
    pages: bool = False,
    prefetch: bool = False,
) -> Generator[Any, None, None]:
    """Every hit of ``query`` in ``index``, from one point in time, ``page_size`` at a time.

    A point in time is a consistent snapshot: documents updated during the walk
    are neither missed nor returned twice. Give ``pit`` to share one between
    walks; otherwise the walk opens its own and closes it when done (or closed).
    Hits carry ``_index``, ``_id``, ``_routing`` (when set), and
    ``_seq_no``/``_primary_term`` with ``seq_no``. ``ids=False`` leaves out ``_id``
    (and ``_source``). With ``pages`` the pages (lists of hits) are yielded
    instead of single hits. ``prefetch`` asks for the next page from a thread
    while the caller works on this one (not before forking worker processes).
    Partial results (a failed shard) raise :class:`StoreError`. Where the engine
    cannot page a point in time (see :class:`PointInTime`) the walk scrolls.
    """
    if pit is None:
        with PointInTime(client, index, keep_alive) as own:
            yield from walk(client, index, query, pit=own, source=source, docvalue_fields=docvalue_fields, ids=ids,
                            page_size=page_size, seq_no=seq_no, pages=pages, prefetch=prefetch)
        return
    body = page_search(query, page_size, source=source, docvalue_fields=docvalue_fields, ids=ids, seq_no=seq_no)
    what = f"reading {index!r}"
    if pit.id is None:
        scroll = {**body, "sort": ["_doc"]}
        del scroll["track_total_hits"]  # a scroll refuses false
        yield from _scroll(client, index, scroll, pit.keep_alive, what, pages)
        return
    # With prefetch, the next page is asked for before this one is handed out, so
    # the cluster works on it while the caller works on this one.
    with ThreadPoolExecutor(1, thread_name_prefix="simdup-walk") if prefetch else nullcontext() as pool:
        fetch = pool.submit if pool is not None else _done
        body["pit"] = {"id": pit.id, "keep_alive": pit.keep_alive}
        pending = fetch(search, client, None, dict(body), what)
        while True:
            response = pending.result()
            pit.id = response.get("pit_id", pit.id)
            page = response.get("hits", {}).get("hits", [])
            last = len(page) < page_size
            if not last:
                body["search_after"] = page[-1]["sort"]
                body["pit"] = {"id": pit.id, "keep_alive": pit.keep_alive}
                pending = fetch(search, client, None, dict(body), what)
            if page:
                if pages:
                    yield page
                else:
                    yield from page
            if last:
                return


def _scroll(client: Elasticsearch, index: str, body: dict[str, Any], keep_alive: str, what: str,
            pages: bool) -> Iterator[Any]:
    """:func:`walk` by scroll: a consistent snapshot too, of this walk alone."""
    with translated(client, what, index):
        response = client.search(index=index, body=body, scroll=keep_alive, filter_path=[*_HIT_PATH, "_scroll_id"],
                                  allow_partial_search_results=False)
    scroll_id = response.get("_scroll_id")
    try:
        while True:
            check_complete(response, what)
            page = response.get("hits", {}).get("hits", [])
            if not page:
                return
            if pages:
                yield page
            else:
                yield from page
            with translated(client, what, index):
                response = client.scroll(scroll_id=scroll_id, scroll=keep_alive,
                                         filter_path=[*_HIT_PATH, "_scroll_id"])
            scroll_id = response.get("_scroll_id", scroll_id)
    finally:
        if scroll_id:
            try:
                client.clear_scroll(scroll_id=[scroll_id])
            except (es.ApiError, es.TransportError) as exc:  # it expires by itself
                log.debug("clearing a scroll failed: %s", exc)


def _done(func: Callable[..., Any], *args: Any) -> Future[Any]:
    """``func(*args)`` run now, as a finished future (walk without prefetch)."""
    future: Future[Any] = Future()
    try:
        future.set_result(func(*args))
    except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
        future.set_exception(exc)
    return future


# --- writing --------------------------------------------------------------------------------


@dataclass(frozen=True)
class BulkItem:
    """What happened to one bulk action: ``ok``, the HTTP ``status``, and why it failed."""

    ok: bool
    status: int
    id: str | None
    reason: str | None = None
    """``status type: reason`` of a failure."""


def bulk(
    client: Elasticsearch,
    actions: Sequence[Action],
    *,
    what: str = "bulk indexing",
    index: str | None = None,
    chunk_size: int = 500,
    concurrency: int = 1,
    max_chunk_bytes: int = 20 * 1024 * 1024,
    retry: Retry = Retry(),
) -> list[BulkItem]:
    """Send ``actions``; one :class:`BulkItem` per action, in the order given.

    Chunks of ``chunk_size`` go ``concurrency`` at a time (in order when 1). A
    request answered 429, 502, 503 or 504, failing to connect or timing out is
    retried with backoff; so are the items rejected with 429, within the same
    ``retry`` budget. This is the only retry layer of a bulk request: the client's
    own retries are off for it (:func:`~simdup_es.es.engine.streaming_bulk`), so a
    request is sent at most ``retry.max_retries + 1`` times. A request
    that one document fails as a whole (it cannot be parsed, or is too large) is
    split until that document stands alone and fails by itself. What still fails
    (items still rejected with 429 included: that is no fault of theirs) leaves as
    :class:`StoreError` whose ``report`` counts the actions done until then.
    """
    results: list[BulkItem | None] = [None] * len(actions)
    chunks = [range(i, min(i + chunk_size, len(actions))) for i in range(0, len(actions), chunk_size)]

    def send(positions: Sequence[int]) -> None:
        _send(client, actions, list(positions), results, what, index, max_chunk_bytes, retry)

    error: StoreError | None = None
    if concurrency == 1 or len(chunks) == 1:
        for chunk in chunks:
            try:
                send(chunk)
            except StoreError as exc:
                error = exc
                break
    else:
        error = _concurrently(send, chunks, concurrency)
    if error is not None:
        done = [item for item in results if item is not None]
        error.report = BulkReport(sum(item.ok for item in done),
                                  [(str(item.id), item.reason or "") for item in done if not item.ok])
        raise error
    return results  # type: ignore[return-value]  # every position is set


def _concurrently(send: Callable[[Sequence[int]], None], chunks: list[range], concurrency: int) -> StoreError | None:
    """Run ``send`` on the chunks, ``concurrency`` at a time; the first error stops new sends and is returned."""
    error: StoreError | None = None
    pending: list[Future[None]] = []
    with ThreadPoolExecutor(concurrency, thread_name_prefix="simdup-bulk") as pool:
        for n, chunk in enumerate(chunks):
            if error is None:
                pending.append(pool.submit(send, chunk))
            # Bounded: at most two requests per thread queued, so memory stays flat.
            while pending and (len(pending) >= 2 * concurrency or error is not None or n == len(chunks) - 1):
                try:
                    pending.pop(0).result()
                except StoreError as exc:
                    error = error or exc
    return error


# Answers to a whole bulk request that mean "later" (busy, or a proxy without a node behind
# it): retried with backoff here, as the client would without backoff.
_BUSY_STATUS = frozenset({429, 502, 503, 504})


def _send(client: Elasticsearch, actions: Sequence[Action], positions: list[int], results: list[BulkItem | None],
          what: str, index: str | None, max_chunk_bytes: int, retry: Retry) -> None:
    for attempt in range(retry.max_retries + 1):
        try:
            answers = list(streaming_bulk(
                client, ((header_json(actions[p][0]), actions[p][1]) for p in positions), index=index,
                chunk_size=len(positions),
                max_chunk_bytes=max_chunk_bytes, expand_action_callback=_as_is, raise_on_error=False,
                raise_on_exception=True, max_retries=0,  # 429 items are retried here, so results keep their order
                filter_path=_BULK_PATH,
            ))
        except (es.ConnectionError, es.ConnectionTimeout) as exc:
            if isinstance(exc, es.SSLError) or attempt == retry.max_retries:
                with translated(client, what, index):
                    raise
            log.warning("bulk request to %s failed (%s); retry %d of %d in %.1f s", client_url(client),
                        type(exc).__name__, attempt + 1, retry.max_retries, retry.wait(attempt))
            time.sleep(retry.wait(attempt))
            continue
        except (es.BadRequestError, es.SerializationError) as exc:
            if isinstance(exc, es.ApiError) and exc.error not in _DOCUMENT_ERRORS:
                with translated(client, what, index):
                    raise
            reason = error_reason(exc) if isinstance(exc, es.ApiError) else f"cannot serialise: {exc}"
            _split(client, actions, positions, results, what, index, max_chunk_bytes, retry, 400, reason)
            return
        except es.ApiError as exc:
            if exc.meta.status == 413:  # request too large
                _split(client, actions, positions, results, what, index, max_chunk_bytes, retry, 413,
                       error_reason(exc))
                return
            if exc.meta.status in _BUSY_STATUS and attempt < retry.max_retries:
                log.warning("bulk request answered %d (too busy or unavailable); retry %d of %d in %.1f s",
                            exc.meta.status, attempt + 1, retry.max_retries, retry.wait(attempt))
                time.sleep(retry.wait(attempt))
                continue
            with translated(client, what, index):
                raise
        busy, blocked = [], []
        for p, (ok, answer) in zip(positions, answers):
            info = next(iter(answer.values()))
            status = int(info.get("status", 0))
            error = info.get("error")
            if not ok and isinstance(error, dict) and error.get("type") == "cluster_block_exception":
                blocked.append(item_reason(error))  # the index's fault, not the document's (a 429 on a full disk too)
            elif status == 429:
                busy.append(p)
            else:
                failure = None if ok else f"{status} {item_reason(error)}"
                results[p] = BulkItem(bool(ok), status, info.get("_id"), failure)
        if blocked:
            where = f"index {index!r}" if index else "the index"
            raise StoreError(
                f"{product_of(client)} refuses writes to {where} ({blocked[0]}): lift the block (PUT "
                f"{index or 'INDEX'}/_settings with {{\"index.blocks.write\": null}} or \"index.blocks.read_only\"; "
                "read_only_allow_delete goes once the disk has room), then go on"
            )
        if not busy:
            return
        if attempt == retry.max_retries:
            # Not the documents' fault: the run stops (and can resume) instead of rejecting them.
            where = f"index {index!r}" if index else "the cluster"
            raise StoreError(
                f"{product_of(client)} stayed too busy (429) for {len(busy)} documents while {what} on {where}, after "
                f"{retry.max_retries} retries ({retry.budget:.0f} s of waiting): let the cluster catch up, or "
                "allow more time (--max-retries, --initial-backoff)"
            )
        log.warning("%d bulk items rejected as too busy (429); retry %d of %d in %.1f s", len(busy), attempt + 1,
                    retry.max_retries, retry.wait(attempt))
        time.sleep(retry.wait(attempt))
        positions = busy


def _split(client: Elasticsearch, actions: Sequence[Action], positions: list[int], results: list[BulkItem | None],
           what: str, index: str | None, max_chunk_bytes: int, retry: Retry, status: int, reason: str) -> None:
    """One bad document can fail the whole request: halve until it stands alone."""
    if len(positions) == 1:
        p = positions[0]
        header = next(iter(actions[p][0].values()))
        results[p] = BulkItem(False, status, header.get("_id"), reason)
        return
    half = len(positions) // 2
    for part in (positions[:half], positions[half:]):
        _send(client, actions, part, results, what, index, max_chunk_bytes, retry)


def _as_is(action: Any) -> Any:
    """Bulk actions are already ``(header, body)`` pairs: nothing to expand."""
    return action


__all__ = [
    "BulkItem",
    "PointInTime",
    "Retry",
    "bulk",
    "check_complete",
    "client_url",
    "error_reason",
    "item_reason",
    "missing_item_index",
    "partial",
    "put_mapping",
    "search",
    "translated",
    "walk",
]
