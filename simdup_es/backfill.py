"""Add fingerprints to an index simdup did not create, in place, resumably.

:func:`backfill` maps the ``simdup`` fields on the index, walks it with a point in time,
fingerprints the text field on every core and writes the ``simdup`` object back with bulk
partial updates (docs/elasticsearch.md, "Existing indices"). The index is the checkpoint:
the walk reads only documents whose ``simdup.version`` is not current, so documents that
cannot be fingerprinted are marked too (``simdup.error``), or a run would never end.
Writes are conditional on the document being unchanged since the walk read it
(``if_seq_no``), so a fingerprint never describes text the document no longer has; one
changed meanwhile is left for the next run. No painless script, ``_update_by_query`` or
``_reindex``: minimal distributions lack them and shared clusters often forbid them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from elasticsearch import Elasticsearch

from . import keys
from .errors import StoreError
from .es import io
from .es.bodies import (
    current_query,
    error_update,
    field_values,
    fingerprint_update,
    target,
    text_of,
    title_of,
    update_action,
    walk_query,
)
from .fingerprint import Doc, Fingerprinter
from .parts import PartPrinter
from .sources import Reject
from .store.base import levels_fields
from .store.elasticsearch import adopt

log = logging.getLogger(__name__)

ERROR = keys.ERROR
"""Why a document has a ``simdup.version`` but no fingerprint (keyword)."""
_EXISTING = " (check --index): this command works on an existing index"


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


def prepare_index(client: Elasticsearch, index: str) -> str:
    """Check that partial updates can work on ``index`` and make it ready for simdup's keys
    (:func:`simdup_es.store.elasticsearch.adopt`); the document layout its documents get."""
    with io.translated(client, "reading the mapping", index, missing=_EXISTING):
        mappings = client.indices.get_mapping(index=index)
    for name, body in mappings.items():
        if body.get("mappings", {}).get("_source", {}).get("enabled") is False:
            raise StoreError(
                f"index {name!r} does not keep _source, so documents cannot be updated in place: reindex into an "
                "index with _source enabled (or with the 'simdup-fingerprint' component template) instead"
            )
    return adopt(client, index, missing=_EXISTING)


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
    max_retries: int = 10,
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
    layout = prepare_index(client, index)
    if (field, title_field) != ("text", "title"):  # where searches, reports and groups read them too
        io.record_meta(client, index, {keys.TEXT_FIELD_KEY: field, **({keys.TITLE_FIELD_KEY: title_field}
                                                                       if title_field else {})}, "the text field")
    summary, query = _count(client, index, version, retry_errors)
    if on_progress:
        on_progress(summary)

    includes = [field, keys.ROOT] + ([title_field] if title_field else []) + ([id_field] if id_field else [])
    hits = io.walk(client, index, query, source=includes, page_size=page_size, keep_alive=keep_alive, seq_no=True)
    run = _Writes(client, index, version, summary, started, on_reject=on_reject, on_progress=on_progress,
                  id_field=id_field, retry=io.Retry(max_retries, initial_backoff))
    # The document fingerprint and its levels (parts, keys) in one worker pass, with the unified text the levels
    # refer to: kept (keys.UNIFIED) when the text is the field a search's judge reads it for, as 'simdup index' does.
    results = PartPrinter(fingerprinter).map_items_unified(run.docs(hits, field, title_field), itemgetter(1),
                                                           workers=workers)
    try:
        for (hit, _), result, levels, unified in results:
            if result.error is not None:
                run.mark(hit, result.reason)
            else:
                fp = result.unwrap()
                levels_doc = None if levels is None else levels_fields(hit["_id"], levels)
                if levels_doc is not None and unified is not None and field == "text":
                    levels_doc[keys.UNIFIED_NAME] = unified
                run.add(hit, fingerprint_update(_simdup(hit), fp.value, fp.version, levels_doc, layout), "fp")
            if len(run.batch) >= batch_size:
                run.send()
        if run.batch:
            run.send()
    finally:
        results.close()  # type: ignore[attr-defined]  # map_items is a generator; this stops the worker processes
        hits.close()  # closes the point in time
    with io.translated(client, "refreshing", index):
        client.indices.refresh(index=index)
    summary.seconds = time.perf_counter() - started
    return summary


def _count(client: Elasticsearch, index: str, version: str, retry_errors: bool) -> tuple[BackfillSummary, dict[str, Any]]:
    """The work counted before a backfill starts, and the query of the documents to walk."""
    summary = BackfillSummary()
    with io.translated(client, "counting documents", index):
        client.indices.refresh(index=index)  # what an interrupted run wrote must be visible to the query
        summary.total = client.count(index=index)["count"]
        summary.current = client.count(index=index, query=current_query(version))["count"]
        summary.marked = client.count(
            index=index, query={"bool": {"filter": [{"term": {keys.VERSION: version}}, {"exists": {"field": ERROR}}]}}
        )["count"]
        query = walk_query(version, retry_errors=retry_errors)
        summary.to_scan = client.count(index=index, query=query)["count"]
    if retry_errors:
        summary.current -= summary.marked
        summary.marked = 0
    return summary, query


class _Writes:
    """A backfill's updates: ``batch`` holds ``(action, kind, hit, reject reason)`` of those not yet sent."""

    def __init__(self, client: Elasticsearch, index: str, version: str, summary: BackfillSummary, started: float, *,
                 on_reject: Callable[[Reject], None], on_progress: Callable[[BackfillSummary], None] | None,
                 id_field: str | None, retry: io.Retry) -> None:
        self.client, self.index, self.version, self.summary, self.started = client, index, version, summary, started
        self.on_reject, self.on_progress, self.id_field, self.retry = on_reject, on_progress, id_field, retry
        self.batch: list[tuple[Any, str, dict[str, Any], str | None]] = []

    def reject(self, hit: Mapping[str, Any], reason: str) -> None:
        self.summary.rejected += 1
        doc_id = hit["_id"]
        if self.id_field:
            values = field_values(hit.get("_source") or {}, self.id_field)
            doc_id = str(values[0]) if values else doc_id
        self.on_reject(Reject(f"{hit['_index']}/{hit['_id']}", reason, doc_id))

    def add(self, hit: dict[str, Any], doc: dict[str, Any], kind: str, reason: str | None = None) -> None:
        meta = {**target(hit), "if_seq_no": hit["_seq_no"], "if_primary_term": hit["_primary_term"]}
        self.batch.append((update_action(meta, doc), kind, hit, reason))

    def mark(self, hit: dict[str, Any], reason: str) -> None:
        kind = "no_text" if reason.startswith("no text") else "bad_text"
        self.add(hit, error_update(_simdup(hit), self.version, reason), kind, reason)

    def docs(self, hits: Iterator[dict[str, Any]], field: str, title_field: str | None
             ) -> Iterator[tuple[dict[str, Any], Doc]]:
        """Each walked hit that has text, with its document; the others are marked."""
        for hit in hits:
            self.summary.scanned += 1
            source = hit.get("_source") or {}
            text, problem = text_of(source, field)
            if problem is not None:
                self.mark(hit, problem)
                continue
            yield hit, Doc(text, title_of(source, title_field), f"{hit['_index']}/{hit['_id']}")  # type: ignore[arg-type]

    def send(self) -> None:
        summary, batch = self.summary, self.batch
        actions = [entry[0] for entry in batch]
        items = io.bulk(self.client, actions, what="writing fingerprints", index=self.index,
                        chunk_size=max(len(actions), 1), retry=self.retry)
        for (_, kind, hit, reason), item in zip(batch, items):
            if not item.ok and item.status == 409:  # changed since the walk read it: next run
                summary.changed += 1
            elif kind == "bad_text":  # rejected whether or not the mark was written (if not, it is read again)
                self.reject(hit, reason or "")
            elif not item.ok:
                self.reject(hit, f"not written: {item.reason}")
            elif kind == "fp":
                summary.fingerprinted += 1
            else:
                summary.without_text += 1
        batch.clear()
        summary.seconds = time.perf_counter() - self.started
        if self.on_progress:
            self.on_progress(summary)


def _simdup(hit: Mapping[str, Any]) -> Mapping[str, Any] | None:
    value = (hit.get("_source") or {}).get(keys.ROOT)
    return value if isinstance(value, Mapping) else None


__all__ = ["ERROR", "BackfillSummary", "backfill", "prepare_index"]
