"""Add fingerprints to an index simdup did not create, in place, resumably.

:func:`backfill` puts the mapping of the ``simdup`` fields on the index, walks it
with a point in time and ``search_after``, fingerprints the text field on every
core (:meth:`Fingerprinter.map <simdup_es.fingerprint.Fingerprinter.map>`) and
writes the ``simdup`` object back with bulk partial updates. Every other field is
left as it was.

The index is the checkpoint
---------------------------
The walk asks only for documents whose ``simdup.version`` is not the current
fingerprint version, so what an earlier (interrupted) run wrote is skipped by the
query itself, and a run after a finished one reads nothing. There is no
checkpoint file to lose, copy or get out of step with the index, and documents
added while nobody was looking are picked up too. For that to terminate,
documents that cannot be fingerprinted are written as well: they get
``simdup.version`` and a short ``simdup.error`` (``"no text: field missing"``, ...)
and no ``simdup.fp``, so they are not read again until the version changes (or a
run with ``retry_errors``). A new fingerprint version (other parameters or IDF
table) therefore re-fingerprints everything.

Writes are conditional on the document being unchanged since the walk read it
(``if_seq_no`` / ``if_primary_term``): a document someone else updated meanwhile is
counted as ``changed`` and left for the next run, so a fingerprint never
describes text the document no longer has. Documents updated *after* a run keep
their fingerprint: applications that change text should fingerprint at ingest
(compose the ``simdup-fingerprint`` component template and write ``simdup``) or
clear ``simdup.version`` on the documents they change.

New documents
-------------
Running backfill again fingerprints what arrived since (it reads only documents
that are not current), so a scheduled run keeps an index up to date. To have
the fields mapped before the first document arrives, compose the component
template into the index template that creates the indices::

    PUT _component_template/simdup-fingerprint      (mappings/component-template.json;
                                                     'simdup setup' installs it)
    PUT _index_template/logs
    {"index_patterns": ["logs-*"], "composed_of": ["simdup-fingerprint", ...], ...}

Elasticsearch cannot compute the fingerprint itself: a writer that wants it at
ingest puts the ``simdup`` object of ``simdup fingerprint`` into the document.

What cannot run here
--------------------
No painless script, ``_update_by_query`` or ``_reindex`` is used: they are missing
on minimal distributions and often forbidden on shared clusters. The cost is one
read and one partial update per document, both in bulk.
"""

from __future__ import annotations

import logging
import re
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import elasticsearch as es
from elasticsearch import Elasticsearch, helpers

from . import schema
from .errors import InputError, NotFound, StoreError
from .fingerprint import Doc, Fingerprinter
from .sources import Reject
from .store.elasticsearch import _item_reason, _reason, _translated, fingerprint_mapping

log = logging.getLogger(__name__)

ERROR = schema.ERROR
"""Why a document has a ``simdup.version`` but no fingerprint (keyword)."""
NO_TEXT_MISSING = "no text: field missing"
NO_TEXT_EMPTY = "no text: field empty"
_HIT_PATH = [
    "hits.hits._id", "hits.hits._index", "hits.hits._routing", "hits.hits._seq_no", "hits.hits._primary_term",
    "hits.hits._source", "hits.hits.fields", "hits.hits.sort", "pit_id", "timed_out", "_shards.failed",
]


# --- reading fields out of _source (pure) ---------------------------------------------------


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
    if not field:
        return None
    values = [v for v in field_values(source, field) if isinstance(v, str)]
    return " ".join(values) or None


def fingerprint_update(old: Mapping[str, Any] | None, fingerprint: int, version: str) -> dict[str, Any]:
    """The partial ``doc`` that sets a fingerprint; keys of ``old`` it does not set become null.

    Nulling matters: a partial update merges objects, so without it an old
    ``simdup.error`` or the blocks of another layout would outlive the fingerprint
    they belonged to.
    """
    new = schema.fingerprint_object(fingerprint, version)
    stale = {key: None for key in (old or {}) if key not in new}
    return {schema.ROOT: {**stale, **new}}


def error_update(old: Mapping[str, Any] | None, version: str, reason: str) -> dict[str, Any]:
    """The partial ``doc`` that marks a document as unusable for ``version`` (and drops any old fingerprint)."""
    stale = {key: None for key in (old or {}) if key not in ("version", "error")}
    return {schema.ROOT: {**stale, "version": version, "error": reason}}


def walk_query(version: str, *, retry_errors: bool = False) -> dict[str, Any]:
    """Documents that still need this run: not yet at ``version`` (or marked unusable, with ``retry_errors``)."""
    current: dict[str, Any] = {"term": {schema.VERSION: version}}
    if retry_errors:
        current = {"bool": {"filter": [current], "must_not": [{"exists": {"field": ERROR}}]}}
    return {"bool": {"must_not": [current]}}


# --- cluster helpers (also used by simdup_es.groups) ----------------------------------------


class PointInTime:
    """A point in time on ``index`` (a consistent snapshot for several walks), closed on exit.

    ``id`` follows the id each search answers with.
    """

    def __init__(self, client: Elasticsearch, index: str, keep_alive: str = "5m") -> None:
        self.client, self.index, self.keep_alive = client, index, keep_alive
        with _translated(client, "opening a point in time", index):
            self.id: str = client.open_point_in_time(index=index, keep_alive=keep_alive)["id"]

    def close(self) -> None:
        try:
            self.client.close_point_in_time(id=self.id)
        except (es.ApiError, es.TransportError) as exc:  # it expires by itself
            log.debug("closing a point in time failed: %s", exc)

    def __enter__(self) -> PointInTime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
) -> Iterator[Any]:
    """Every hit of ``query`` in ``index``, from one point in time, ``page_size`` at a time.

    A point in time is a consistent snapshot: documents updated during the walk
    are neither missed nor returned twice. Give ``pit`` to share one between
    walks; otherwise the walk opens its own and closes it when done (or closed).
    Hits carry ``_index``, ``_id``, ``_routing`` (when set), and
    ``_seq_no``/``_primary_term`` with ``seq_no``. ``ids=False`` leaves out ``_id``
    (and ``_source``): on segments with deleted documents, loading ``_id`` is most
    of the cost of a walk. With ``pages`` the pages (lists of hits) are yielded
    instead of single hits. ``prefetch`` asks for the next page from a thread
    while the caller works on this one (not before forking worker processes).
    Partial results (a failed shard) raise :class:`StoreError`.
    """
    if pit is None:
        with PointInTime(client, index, keep_alive) as own:
            yield from walk(client, index, query, pit=own, source=source, docvalue_fields=docvalue_fields, ids=ids,
                            page_size=page_size, seq_no=seq_no, pages=pages, prefetch=prefetch)
        return
    body: dict[str, Any] = {"query": query, "size": page_size, "sort": ["_shard_doc"], "track_total_hits": False}
    if ids:
        body["_source"] = source
    else:
        body["stored_fields"] = "_none_"
    if docvalue_fields:
        body["docvalue_fields"] = docvalue_fields
    if seq_no:
        body["seq_no_primary_term"] = True
    def search(request: dict[str, Any]) -> Any:
        with _translated(client, "reading documents", index):
            return client.search(body=request, filter_path=_HIT_PATH, allow_partial_search_results=False)

    # With prefetch, the next page is asked for before this one is handed out, so
    # the cluster works on it while the caller works on this one.
    with ThreadPoolExecutor(1, thread_name_prefix="simdup-walk") if prefetch else nullcontext() as pool:
        fetch = pool.submit if pool is not None else _done
        body["pit"] = {"id": pit.id, "keep_alive": pit.keep_alive}
        pending = fetch(search, dict(body))
        while True:
            response = pending.result()
            if response.get("timed_out") or response.get("_shards", {}).get("failed"):
                raise StoreError(
                    f"reading {index!r} returned partial results (a shard failed or timed out): nothing was "
                    "written for the missing part; check the cluster's health and run again"
                )
            pit.id = response.get("pit_id", pit.id)
            page = response.get("hits", {}).get("hits", [])
            last = len(page) < page_size
            if not last:
                body["search_after"] = page[-1]["sort"]
                body["pit"] = {"id": pit.id, "keep_alive": pit.keep_alive}
                pending = fetch(search, dict(body))
            if page:
                if pages:
                    yield page
                else:
                    yield from page
            if last:
                return


def _done(func: Callable[..., Any], *args: Any) -> Future[Any]:
    """``func(*args)`` run now, as a finished future (walk without prefetch)."""
    future: Future[Any] = Future()
    try:
        future.set_result(func(*args))
    except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
        future.set_exception(exc)
    return future


def bulk_update(
    client: Elasticsearch,
    actions: Iterable[dict[str, Any]],
    *,
    action: str = "writing",
    index: str | None = None,
    chunk_size: int = 500,
    max_chunk_bytes: int = 20 * 1024 * 1024,
    max_retries: int = 5,
    initial_backoff: float = 1.0,
    max_backoff: float = 30.0,
) -> Iterator[tuple[bool, dict[str, Any]]]:
    """``(ok, item)`` for each bulk action, in order; requests rejected with 429 are retried with backoff.

    Connection failures and timeouts are retried by the client (its
    ``max_retries``); what still fails leaves as :class:`StoreError`.
    """
    with _translated(client, action, index):
        for ok, item in helpers.streaming_bulk(
            client, actions, chunk_size=chunk_size, max_chunk_bytes=max_chunk_bytes, raise_on_error=False,
            raise_on_exception=True, max_retries=max_retries, initial_backoff=initial_backoff,
            max_backoff=max_backoff, retry_on_status=(429,),
        ):
            yield ok, next(iter(item.values()))


def item_failure(info: Mapping[str, Any]) -> str:
    """``status type: reason`` of a failed bulk item."""
    return f"{info.get('status')} {_item_reason(info.get('error'))}"


def target(hit: Mapping[str, Any]) -> dict[str, Any]:
    """Bulk metadata that addresses the document of a search hit (index, id, routing)."""
    meta = {"_index": hit["_index"], "_id": hit["_id"]}
    if hit.get("_routing") is not None:
        meta["routing"] = hit["_routing"]
    return meta


@contextmanager
def _existing(index: str) -> Iterator[None]:
    """Say plainly that the index is missing (the store's message suggests creating it)."""
    try:
        yield
    except NotFound as exc:
        if "does not exist" not in str(exc):
            raise
        raise NotFound(f"index {index!r} does not exist (check --index): this command works on an existing "
                       "index") from exc


def put_mapping(client: Elasticsearch, index: str, properties: dict[str, Any], what: str) -> None:
    """Add ``properties`` to the mapping of ``index``; a conflict is a :class:`StoreError` that says so."""
    with _existing(index), _translated(client, f"adding the {what} to the mapping", index):
        try:
            client.indices.put_mapping(index=index, properties=properties)
        except es.BadRequestError as exc:
            raise StoreError(
                f"index {index!r} already maps the {what} differently ({_reason(exc)}): the fields simdup writes "
                f"({', '.join(sorted(properties))}) must be free or mapped as simdup maps them"
            ) from exc


# --- backfill -------------------------------------------------------------------------------


@dataclass
class BackfillSummary:
    """Counts of one backfill run.

    ``total`` documents were in the index at the start; ``current`` of them were
    skipped unread because they already had the current fingerprint version
    (``marked`` of those marked unusable by an earlier run). Of the ``scanned``
    rest, each ends up ``fingerprinted``, ``without_text`` (field missing, null or
    blank; marked), ``rejected`` (text unusable, marked; or the write failed, not
    marked, so the next run retries it) or ``changed`` (updated by someone else
    during the run; the next run does it).
    """

    total: int = 0
    current: int = 0
    marked: int = 0
    to_scan: int = 0
    scanned: int = 0
    fingerprinted: int = 0
    without_text: int = 0
    rejected: int = 0
    changed: int = 0
    seconds: float = 0.0

    @property
    def done(self) -> int:
        """Documents scanned and settled (written, marked, rejected or left for later)."""
        return self.fingerprinted + self.without_text + self.rejected + self.changed

    @property
    def rate(self) -> float:
        return self.done / self.seconds if self.seconds else 0.0


def prepare_index(client: Elasticsearch, index: str) -> None:
    """Check that partial updates can work on ``index`` and add the ``simdup`` fields to its mapping."""
    with _existing(index), _translated(client, "reading the mapping", index):
        mappings = client.indices.get_mapping(index=index)
    for name, body in mappings.items():
        if body.get("mappings", {}).get("_source", {}).get("enabled") is False:
            raise StoreError(
                f"index {name!r} does not keep _source, so documents cannot be updated in place: reindex into an "
                "index with _source enabled (or with the 'simdup-fingerprint' component template) instead"
            )
    mapping = fingerprint_mapping()
    mapping["properties"].setdefault("error", {"type": "keyword", "index_options": "docs", "norms": False})
    put_mapping(client, index, {schema.ROOT: mapping}, "fingerprint fields")


def backfill(
    client: Elasticsearch,
    index: str,
    field: str,
    fingerprinter: Fingerprinter,
    *,
    title_field: str | None = None,
    id_field: str | None = None,
    on_reject: Callable[[Reject], None],
    on_progress: Callable[[BackfillSummary], None] | None = None,
    retry_errors: bool = False,
    workers: int | None = None,
    batch_size: int = 500,
    page_size: int = 1000,
    keep_alive: str = "5m",
    max_retries: int = 5,
    initial_backoff: float = 1.0,
) -> BackfillSummary:
    """Fingerprint every document of ``index`` whose fingerprint is not current.

    ``field`` (and ``title_field``) are dotted paths into ``_source``. Rejected
    documents go to ``on_reject`` with their reason, named ``index/_id`` (and by
    their ``id_field`` value when given). ``on_progress`` is called once the work is
    counted and after each bulk request; an exception it raises stops the run,
    and the next run goes on from there (see the module docstring). ``index`` may
    be an alias or a pattern.
    """
    started = time.perf_counter()
    version = fingerprinter.version
    prepare_index(client, index)
    summary = BackfillSummary()
    with _translated(client, "counting documents", index):
        client.indices.refresh(index=index)  # what an interrupted run wrote must be visible to the query
        summary.total = client.count(index=index)["count"]
        summary.current = client.count(index=index, query={"term": {schema.VERSION: version}})["count"]
        summary.marked = client.count(
            index=index, query={"bool": {"filter": [{"term": {schema.VERSION: version}}, {"exists": {"field": ERROR}}]}}
        )["count"]
        query = walk_query(version, retry_errors=retry_errors)
        summary.to_scan = client.count(index=index, query=query)["count"]
    if retry_errors:
        summary.current -= summary.marked
        summary.marked = 0
    if on_progress:
        on_progress(summary)

    includes = [field, schema.ROOT] + ([title_field] if title_field else []) + ([id_field] if id_field else [])
    hits = walk(client, index, query, source=includes, page_size=page_size, keep_alive=keep_alive, seq_no=True)
    pending: deque[dict[str, Any]] = deque()
    batch: list[tuple[dict[str, Any], str, dict[str, Any], str | None]] = []  # (action, kind, hit, reject reason)

    def reject(hit: Mapping[str, Any], reason: str) -> None:
        summary.rejected += 1
        doc_id = hit["_id"]
        if id_field:
            values = field_values(hit.get("_source") or {}, id_field)
            doc_id = str(values[0]) if values else doc_id
        on_reject(Reject(f"{hit['_index']}/{hit['_id']}", reason, doc_id))

    def add(hit: dict[str, Any], doc: dict[str, Any], kind: str, reason: str | None = None) -> None:
        meta = {**target(hit), "if_seq_no": hit["_seq_no"], "if_primary_term": hit["_primary_term"]}
        batch.append(({"_op_type": "update", **meta, "doc": doc}, kind, hit, reason))

    def mark(hit: dict[str, Any], reason: str) -> None:
        kind = "no_text" if reason.startswith("no text") else "bad_text"
        add(hit, error_update(_simdup(hit), version, reason), kind, reason)

    def docs() -> Iterator[Doc]:
        for hit in hits:
            summary.scanned += 1
            source = hit.get("_source") or {}
            text, problem = text_of(source, field)
            if problem is not None:
                mark(hit, problem)
                continue
            pending.append(hit)
            yield Doc(text, title_of(source, title_field), f"{hit['_index']}/{hit['_id']}")  # type: ignore[arg-type]

    def send() -> None:
        actions = [entry[0] for entry in batch]
        written = list(bulk_update(client, actions, action="writing fingerprints", index=index,
                                   chunk_size=max(len(actions), 1), max_retries=max_retries,
                                   initial_backoff=initial_backoff))
        for (_, kind, hit, reason), (ok, info) in zip(batch, written):
            if not ok and info.get("status") == 409:  # changed since the walk read it: next run
                summary.changed += 1
            elif kind == "bad_text":  # rejected whether or not the mark was written (if not, it is read again)
                reject(hit, reason or "")
            elif not ok:
                reject(hit, f"not written: {item_failure(info)}")
            elif kind == "fp":
                summary.fingerprinted += 1
            else:
                summary.without_text += 1
        batch.clear()
        summary.seconds = time.perf_counter() - started
        if on_progress:
            on_progress(summary)

    results = fingerprinter.map(docs(), workers=workers)
    try:
        for result in results:
            hit = pending.popleft()
            if result.error is not None:
                reason = result.error.reason if isinstance(result.error, InputError) else str(result.error)
                mark(hit, reason)
            else:
                fp = result.unwrap()
                add(hit, fingerprint_update(_simdup(hit), fp.value, fp.version), "fp")
            if len(batch) >= batch_size:
                send()
        if batch:
            send()
    finally:
        results.close()  # stops the worker processes
        hits.close()  # closes the point in time
    with _translated(client, "refreshing", index):
        client.indices.refresh(index=index)
    summary.seconds = time.perf_counter() - started
    return summary


def _simdup(hit: Mapping[str, Any]) -> Mapping[str, Any] | None:
    value = (hit.get("_source") or {}).get(schema.ROOT)
    return value if isinstance(value, Mapping) else None


__all__ = [
    "ERROR",
    "BackfillSummary",
    "PointInTime",
    "backfill",
    "bulk_update",
    "error_update",
    "field_values",
    "fingerprint_update",
    "prepare_index",
    "text_of",
    "walk",
    "walk_query",
]
