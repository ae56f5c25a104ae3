"""The Elasticsearch store: one index (or alias) behind the :class:`~simdup_es.store.base.Store` seam.

Request bodies come from :mod:`simdup_es.es.bodies` (pure) and mappings from
:mod:`simdup_es.es.mappings`; every request goes through :mod:`simdup_es.es.io`,
so every error the cluster or the network raises leaves this module as a
:class:`~simdup_es.errors.StoreError` (or its subclasses :class:`ConnectionFailed`
and :class:`NotFound`) whose message says what to do. Per-document failures of a
bulk write never raise: they come back in :attr:`BulkReport.failed`.

The keys written and asked for are :mod:`simdup_es.keys`'s, in the document layout the
index records with its schema number (read once per store; an index of another schema
is refused, :func:`simdup_es.es.mappings.layout_of`).

Secrets (API key, password) are never part of a ``repr``, a log line or an error
message; URLs are shown without any ``user:password@`` part.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import elasticsearch as es
import numpy as np
from elasticsearch import Elasticsearch

from .. import keys
from .. import simhash as sh
from ..common import BulkReport, Closing
from ..commontext import KeyCounts
from ..errors import ConfigError, NotFound, StoreError
from ..es import bodies, io
from ..es.connection import ConnectionSettings
from ..es.engine import OPENSEARCH, as_client, engine_of
from ..es.mappings import (
    COMPONENT_TEMPLATE,
    GROUP_FIELDS,
    INDEX_TEMPLATE,
    NEW_INDEX,
    component_template,
    fingerprint_mapping,
    group_mapping,
    index_mappings,
    index_template,
    keeps_unified,
    layout_of,
    new_to_simdup,
    source_fields,
)
from ..multilevel import PartCandidate
from .base import (META_FIELDS, NOT_FOUND, GroupRow, Key, Members, StoredDoc, capped_note, id_problem, listed,
                   query_terms)

log = logging.getLogger(__name__)

_CANDIDATE_PATH = ["hits.total", "hits.hits._id", "hits.hits.fields", "timed_out", "_shards.failed"]
_ROW_PATH = ["hits.total", "hits.hits._index", "hits.hits._id", "hits.hits._routing", "hits.hits.fields", "timed_out",
             "_shards.failed"]
_PART_PATH = ["hits.hits._id", "hits.hits.fields", "hits.hits.matched_queries", "timed_out", "_shards.failed"]
_COUNT_PATH = ["hits.total", "aggregations.keys.buckets.doc_count", "timed_out", "_shards.failed"]
_BOTH_PATH = [f"responses.{path}" for path in dict.fromkeys(_CANDIDATE_PATH + _PART_PATH)] + ["responses.error"]
MAX_PART_LIMIT = 10_000
"""Largest ``limit`` of :meth:`ElasticsearchStore.part_candidates`: one page (``index.max_result_window``)."""
FORCE_MERGE_TIMEOUT = 6 * 3600.0
"""Seconds :meth:`ElasticsearchStore.force_merge` waits for the cluster (a merge that outlasts it goes on there)."""
FORCE_MERGE_WAIT = 60.0
"""Seconds one ``_forcemerge`` request is given: a merge still running then is asked after again, once the
nodes' disks are checked (Elasticsearch starts no merge on a nearly full disk, and the request would wait for good)."""


def install_templates(client: Elasticsearch) -> None:
    """Put the component template and the ``simdup-*`` index template (idempotent).

    Existing templates of the same names are replaced by the shipped ones; indices
    that already exist keep their mappings.
    """
    with io.translated(client, "installing the index templates"):
        client.cluster.put_component_template(name=COMPONENT_TEMPLATE, body=component_template())
        client.indices.put_index_template(name=INDEX_TEMPLATE, body=index_template())


def adopt(client: Elasticsearch, index: str, layout: str | None = None, *, missing: str = io.RUN_SETUP) -> str:
    """The document layout of the existing ``index`` (every index it names), made ready for simdup's keys.

    An index new to simdup (no ``simdup`` fields, none recorded) gets them, and records this
    schema and ``layout`` (the default when ``None``); an index of this schema keeps its own
    layout, which ``layout``, if given, must be, and is refused if a field maps otherwise than
    the schema (a template of the user's); one of another schema is refused
    (:func:`simdup_es.es.mappings.layout_of`): its keys are never changed in place.
    """
    with io.translated(client, "reading the mapping", index, missing=missing):
        answer = dict(client.indices.get_mapping(index=index))
    new = [name for name, body in answer.items() if new_to_simdup(body.get("mappings", {}))]
    known = {name: body for name, body in answer.items() if name not in new}
    found = layout_of(known) if known else layout or keys.EIGHT_BY_EIGHT
    if layout is not None and layout != found:
        raise ConfigError(f"index {index!r} has the {found} document layout, not {layout}: the layout is chosen when "
                          f"an index is made; to change it, {NEW_INDEX}")
    # The fields for an index new to simdup; for the others a check that nothing maps them otherwise.
    io.put_mapping(client, index, {keys.ROOT: fingerprint_mapping(), **group_mapping()}, "simdup fields",
                   f"the fields simdup writes ({keys.ROOT}, {', '.join(GROUP_FIELDS)}) must be free or mapped as "
                   "simdup maps them", missing)
    for name in new:
        io.record_meta(client, name, keys.index_meta(found)[keys.ROOT], "the index schema")
    return found


class ElasticsearchStore(Closing):
    """Fingerprinted documents in one Elasticsearch index (or alias).

    Parameters
    ----------
    client:
        An :class:`elasticsearch.Elasticsearch` client (Elasticsearch 8 or 9), an
        ``opensearchpy.OpenSearch`` client or :class:`~simdup_es.es.engine.OpenSearchClient`
        (OpenSearch), or :class:`ConnectionSettings` to build the right one from on
        first use (see :mod:`simdup_es.es.engine`). The store closes a client it built
        itself and leaves a client it was given to its owner.
    index:
        Index name. Names matching ``simdup-*`` get the index template; other names
        get the same mappings explicitly (see :meth:`setup`).
    layout:
        The document layout :meth:`setup` gives a new index (:data:`simdup_es.keys.LAYOUTS`:
        ``"8x8"``, the default when ``None``, or ``"terms"``). Reads and writes follow the
        layout the index records; an index of another layout than one given here is refused
        at setup.
    chunk_size:
        Most documents per bulk request.
    concurrency:
        Bulk requests in flight at once. Two keep a small cluster busy while this
        process serialises the next request (1.4x plain ``streaming_bulk`` on one
        local node, measured against one request at a time); a batch is split so
        each request gets its share, down to ``min_chunk`` documents.
    max_retries, initial_backoff, max_backoff:
        Retries of a bulk request rejected with 429 (too busy) or failing to
        connect, waiting ``initial_backoff * 2**n`` seconds (at most
        ``max_backoff``) before retry ``n + 1``.
    page_size:
        Candidates fetched by the first request; when there are more, all of them
        are paged through a point in time, so none is missed.
    pit_page_size, pit_keep_alive:
        Page size and keep-alive of point-in-time walks (candidate pages, :meth:`scan`).
    """

    def __init__(
        self,
        client: Elasticsearch | ConnectionSettings,
        index: str,
        *,
        layout: str | None = None,
        chunk_size: int = 1000,
        concurrency: int = 2,
        min_chunk: int = 100,
        max_chunk_bytes: int = 20 * 1024 * 1024,
        max_retries: int = 10,
        initial_backoff: float = 1.0,
        max_backoff: float = 30.0,
        page_size: int = 1000,
        pit_page_size: int = 10_000,
        pit_keep_alive: str = "1m",
    ) -> None:
        if not index or index != index.lower() or index.startswith(("-", "_", "+")):
            raise ConfigError(f"{index!r} is not a valid index name (lower case, not starting with -, _ or +)")
        if layout is not None:
            keys.index_meta(layout)  # a known layout
        if min(chunk_size, concurrency, min_chunk, page_size, pit_page_size) < 1:
            raise ConfigError("chunk_size, concurrency, min_chunk, page_size and pit_page_size must be positive")
        self.index = index
        self.chunk_size = chunk_size
        self.concurrency = concurrency
        self.min_chunk = min_chunk
        self.max_chunk_bytes = max_chunk_bytes
        self.page_size = page_size
        self.pit_page_size = pit_page_size
        self.pit_keep_alive = pit_keep_alive
        self.retry = io.Retry(max_retries, initial_backoff, max_backoff)
        self._asked_layout = layout
        self._layout: str | None = None
        """The document layout the index records (:data:`simdup_es.keys.LAYOUTS`), once read (:meth:`layout`)."""
        if isinstance(client, ConnectionSettings):
            self._settings: ConnectionSettings | None = client
            self._client: Elasticsearch | None = None
        else:
            self._settings = None
            self._client = as_client(client)
        self._source_fields: tuple[str, str] | None = None
        """Where the documents keep their text and title: ``text`` and ``title``, or what the index records
        (``simdup backfill --field body``); read with the mapping, once."""
        self._several = False  # the name (an alias, a pattern) stands for several indices: mget cannot read by id
        self._keeps_unified: bool | None = None  # whether the index maps keys.UNIFIED (read with the mapping)
        self._write_checked = False  # a name for several indices has a write index (checked before the first write)
        self._concrete: bool | None = None
        """Whether :attr:`index` names one index (not an alias or pattern): asked once, by :meth:`put_keys`."""

    @property
    def settings(self) -> ConnectionSettings | None:
        """The connection settings the store was built from (``None`` when it was given a client)."""
        return self._settings

    def __repr__(self) -> str:
        return f"ElasticsearchStore(index={self.index!r})"

    @property
    def client(self) -> Elasticsearch:
        """The client, built from the settings on first use."""
        if self._client is None:
            assert self._settings is not None
            self._client = self._settings.client()
        return self._client

    def _translated(self, action: str) -> Any:
        return io.translated(self.client, action, self.index)

    # -- setup ---------------------------------------------------------------------------------

    def setup(self) -> None:
        """Install the templates and create the index, or make an existing one ready (:func:`adopt`).

        Idempotent. A new index gets the full mappings (fingerprint fields,
        ``title``, ``text``) in the create request, whether or not its name
        matches the template's ``simdup-*`` pattern, and records its schema and
        document layout in the mapping's ``_meta``. A user allowed to manage the
        index but not templates gets a warning, not an error.
        """
        try:
            install_templates(self.client)
        except StoreError as exc:
            if not isinstance(exc.__cause__, es.AuthorizationException):
                raise
            # Templates only shape indices created later; this index gets its mappings explicitly.
            log.warning("could not install the index templates (%s); going on with index %s", exc, self.index)
        layout = self._asked_layout or keys.EIGHT_BY_EIGHT
        with self._translated("creating the index"):
            if not self.client.indices.exists(index=self.index):
                try:
                    self.client.indices.create(index=self.index, mappings=index_mappings(layout))
                    log.info("created index %s (%s document layout)", self.index, layout)
                    self._layout, self._keeps_unified = layout, True
                    return
                except es.BadRequestError as exc:
                    if exc.error != "resource_already_exists_exception":
                        raise
        self._layout, self._keeps_unified = adopt(self.client, self.index, self._asked_layout), None

    def layout(self) -> str:
        """The document layout the index records, read once per store (with where its texts are); an index of another
        schema is refused (:func:`simdup_es.es.mappings.layout_of`)."""
        if self._layout is None:
            answer = self._note_mapping()
            self._layout = layout_of(answer)
        return self._layout

    def _check_write_index(self) -> None:
        """Refuse to write through a name that stands for several indices unless it is an alias with a write index
        (otherwise every document would be refused, one by one)."""
        self.source_fields()  # reads the mapping, once: how many indices the name stands for
        if self._several:
            with self._translated("reading the aliases"):
                indices = dict(self.client.indices.get_alias(index=self.index))
            if not any((body.get("aliases") or {}).get(self.index, {}).get("is_write_index") for body in indices.values()):
                raise StoreError(f"{self.index!r} stands for several indices and names none to write to: give --index "
                                 f"one index, or make one of them the alias's write index (POST _aliases with "
                                 f"{{\"add\": {{\"index\": \"...\", \"alias\": \"{self.index}\", \"is_write_index\": true}}}})")
        self._write_checked = True

    # -- writes --------------------------------------------------------------------------------

    def put(self, docs: Sequence[StoredDoc], *, with_groups: bool = False) -> BulkReport:
        """Index ``docs`` (replacing documents with the same ids) with the bulk API.

        With ``with_groups`` the documents' group fields are part of what is indexed
        (a partial update afterwards would index each document a second time).

        Documents that cannot be stored (:meth:`StoredDoc.problem`) or that
        Elasticsearch refuses are reported in ``failed`` with the reason; requests
        rejected as too busy (429) or failing to connect are retried with
        backoff. Raises :class:`ConnectionFailed` when the cluster stays
        unreachable; the exception's ``report`` holds what was written until then.
        """
        report = BulkReport()
        docs = listed(docs, "documents")
        if not docs:
            return report
        layout = self.layout()
        if not self._write_checked:
            self._check_write_index()
        if self._keeps_unified is None and any(doc.unified is not None for doc in docs):
            self._note_mapping()
        unified = self._keeps_unified
        actions: list[bodies.Action] = []
        capped: dict[str, str] = {}
        for doc in docs:
            problem = doc.problem()
            if problem:
                report.failed.append((str(doc.id), problem))
                continue
            stored = doc.stored_keys(layout)
            if stored is None:
                members, doc_id = keys.members_json(int(doc.fingerprint), doc.version, layout), None
            else:
                assert stored.members is not None  # made for this layout
                members, doc_id = stored.members, doc.id
                if stored.cut:
                    capped[doc.id] = capped_note(len(stored.parts) // 8, stored.cut)
            source = bodies.document_json(members, doc.text, doc.title, doc_id, doc.group_fields if with_groups else None,
                                          doc.meta, doc.unified if unified else None)
            actions.append(bodies.index_action(doc.id, source))
        for item in self._bulk(actions, report, "index"):
            if item.ok:
                report.written += 1
                if str(item.id) in capped:
                    report.capped.append((str(item.id), capped[str(item.id)]))
            else:
                report.failed.append((str(item.id), item.reason or ""))
        for doc_id, what in report.capped:
            log.info("document %r: %s", doc_id, what)
        return report

    def _bulk(self, actions: list[bodies.Action], report: BulkReport, op: str, **kwargs: Any) -> list[io.BulkItem]:
        """Send ``actions`` (``op``: their kind) with :func:`io.bulk`; a failure's report starts with ``report.failed``.

        The same id twice in one call is sent in order, so the last action wins (a
        second delete finds nothing), as documented.
        """
        size = max(self.min_chunk, min(self.chunk_size, -(-len(actions) // self.concurrency)))
        in_order = len({header[op]["_id"] for header, _ in actions}) < len(actions)
        try:
            return io.bulk(self.client, actions, index=self.index, chunk_size=size,
                           concurrency=1 if in_order else self.concurrency, max_chunk_bytes=self.max_chunk_bytes,
                           retry=self.retry, **kwargs)
        except StoreError as exc:
            assert exc.report is not None
            exc.report.failed[:0] = report.failed
            raise

    def delete(self, ids: Sequence[str]) -> BulkReport:
        """Delete documents by id with the bulk API (retried as :meth:`put` is).

        An id the index does not have comes back in ``failed`` as ``"not found"``; other
        refusals with Elasticsearch's reason. Raises :class:`NotFound` when the index does
        not exist, and :class:`ConnectionFailed` when the cluster stays unreachable (the
        exception's ``report`` holds what was deleted until then). Searchable after :meth:`refresh`.
        """
        report = BulkReport()
        actions: list[bodies.Action] = []
        for doc_id in listed(ids, "ids"):
            problem = id_problem(doc_id)
            if problem:
                report.failed.append((str(doc_id), problem))
            else:
                actions.append(({"delete": {"_id": doc_id}}, None))
        if not actions:
            return report
        for item in self._bulk(actions, report, "delete", what="deleting documents"):
            if item.ok:
                report.written += 1
            elif item.status == 404 and "index_not_found" in (item.reason or ""):
                raise NotFound(f"index {self.index!r} does not exist: nothing to delete; check --index "
                               "(SIMDUP_INDEX)")
            elif item.status == 404:
                report.failed.append((str(item.id), NOT_FOUND))
            else:
                report.failed.append((str(item.id), item.reason or ""))
        return report

    # -- reads ---------------------------------------------------------------------------------

    def candidates(self, fingerprint: int, version: str, *, k: int,
                   exclude_id: str | None = None) -> tuple[list[str], np.ndarray]:
        """Ids and fingerprints of every document the candidate query within ``k`` finds
        (:func:`simdup_es.keys.doc_query`: a superset of those within ``k``).

        One request when the candidates fit in ``page_size`` (after, once per store,
        a read of the mapping: the index's schema and layout); otherwise all of them
        are read from a point in time (a consistent snapshot) with ``search_after``,
        so none is missed or counted twice. Partial results (a failed shard) raise
        instead of returning fewer candidates.
        """
        body = self._candidate_body(fingerprint, version, k, exclude_id)
        response = io.search(self.client, self.index, body, "searching candidates", _CANDIDATE_PATH)
        return self._candidate_hits(response, body)

    def _candidate_body(self, fingerprint: int, version: str, k: int, exclude_id: str | None) -> dict[str, Any]:
        return bodies.candidate_search(fingerprint, version, k, self.layout(), size=self.page_size, exclude_id=exclude_id)

    def _candidate_hits(self, response: Mapping[str, Any], body: Mapping[str, Any]) -> tuple[list[str], np.ndarray]:
        """The ids and fingerprints a candidate search found: all of them, read again from a point in time
        when they did not fit its page."""
        hits = response.get("hits", {}).get("hits", [])
        total = response["hits"]["total"]
        if total["relation"] != "eq" or total["value"] > len(hits):
            hits = list(io.walk(self.client, self.index, body["query"], docvalue_fields=[keys.FP],
                                page_size=self.pit_page_size, keep_alive=self.pit_keep_alive))
        hits = [hit for hit in hits if keys.FP in hit.get("fields", {})]  # a block-only document cannot be re-ranked
        ids = [hit["_id"] for hit in hits]
        fps = np.fromiter((int(hit["fields"][keys.FP][0], 16) for hit in hits), dtype=np.uint64, count=len(hits))
        return ids, fps

    def candidates_many(self, queries: Sequence[tuple[int, str]], *, k: int) -> list[tuple[list[str], np.ndarray]]:
        """:meth:`candidates` of each ``(fingerprint, version)``: one search for many queries, 50 a ``_msearch``.

        A search asks for a superset of the union of its queries' candidates
        (:func:`~simdup_es.es.bodies.candidates_union_search`, as many queries as
        :func:`~simdup_es.keys.union_size` says for the index's size); each hit goes to
        the queries of its version it shares ``8 - k`` blocks with, which every document
        within ``k`` does. A search whose hits do not fit one page (or that failed) is
        read again from a point in time, which raises on partial results.
        """
        keys.check_k(k)
        if not queries:
            return []
        chunks = self._candidate_chunks(queries, k)
        out: list[tuple[list[str], np.ndarray]] = [([], np.zeros(0, np.uint64))] * len(queries)
        path = ["responses.hits.total", "responses.hits.hits._id", "responses.hits.hits.fields", "responses.error",
                "responses.timed_out", "responses._shards.failed"]
        for start in range(0, len(chunks), 50):
            batch = chunks[start : start + 50]
            with self._translated("searching candidates"):
                response = self.client.msearch(index=self.index, searches=[line for _, body in batch for line in ({}, body)],
                                               filter_path=path)
            for (positions, body), got in zip(batch, response["responses"]):
                hits = got.get("hits", {}).get("hits", [])
                total = got.get("hits", {}).get("total", {"relation": "gte", "value": 1})
                if io.partial(got) or total["relation"] != "eq" or total["value"] > len(hits):
                    hits = list(io.walk(self.client, self.index, body["query"], docvalue_fields=[keys.FP, keys.VERSION],
                                        page_size=self.pit_page_size, keep_alive=self.pit_keep_alive))
                _assign(hits, [queries[p] for p in positions], positions, out, k)
        return out

    def _candidate_chunks(self, queries: Sequence[tuple[int, str]], k: int) -> list[tuple[list[int], dict[str, Any]]]:
        """The searches of :meth:`candidates_many`: positions of the queries each serves, and its body."""
        by_version: dict[str, list[int]] = {}
        for n, (_, version) in enumerate(queries):
            by_version.setdefault(version, []).append(n)
        layout = self.layout()
        per = keys.union_size(self.count(), k, layout)
        chunks = []
        for version, positions in by_version.items():
            for start in range(0, len(positions), per):
                part = positions[start : start + per]
                fps = [int(queries[p][0]) for p in part]
                chunks.append((part, bodies.candidates_union_search(fps, version, k, layout, size=self.pit_page_size)))
        return chunks

    def part_candidates(
        self, parts: Sequence[int | None], keys: Sequence[int], version: str, *, exclude_id: str | None = None, limit: int = 100
    ) -> list[PartCandidate]:
        """Documents sharing a part or a key with a query, in ONE ``bool`` search.

        See :meth:`simdup_es.store.base.Store.part_candidates` and
        :func:`simdup_es.es.bodies.part_search`; ``limit`` is at most
        :data:`MAX_PART_LIMIT`. Partial results (a failed shard) raise.
        """
        body = self._part_body(parts, keys, version, exclude_id, limit)
        return [] if body is None else self._searched_parts(body, parts)

    def copy_candidates(
        self, fingerprint: int, parts: Sequence[int | None], keys: Sequence[int], version: str, *, k: int,
        exclude_id: str | None = None, limit: int = 100,
    ) -> tuple[tuple[list[str], np.ndarray], list[PartCandidate]]:
        """:meth:`candidates` and :meth:`part_candidates` of one query, in one ``_msearch`` (the node runs both at
        once). A partial answer is asked again alone (which raises if it is partial again)."""
        body = self._part_body(parts, keys, version, exclude_id, limit)
        if body is None:  # no part or key to look up
            return self.candidates(fingerprint, version, k=k, exclude_id=exclude_id), []
        doc_body = self._candidate_body(fingerprint, version, k, exclude_id)
        with self._translated("searching candidates"):
            response = self.client.msearch(index=self.index, searches=[{}, doc_body, {}, bodies.ids_from_doc_values(body)],
                                           filter_path=_BOTH_PATH)
        doc_got, part_got = (dict(got) for got in response["responses"])
        return (self.candidates(fingerprint, version, k=k, exclude_id=exclude_id) if io.partial(doc_got) else
                self._candidate_hits(doc_got, doc_body),
                self._searched_parts(body, parts, None if io.partial(part_got) else part_got))

    def key_frequencies(self, keys: Sequence[int]) -> KeyCounts:
        """How many documents hold each key, and how many hold any (:meth:`Store.key_frequencies`), in one
        ``_msearch``: a count (the same for every query: the node's request cache keeps it until a refresh
        changes the index), and a ``filters`` aggregation over the keys
        (:func:`simdup_es.es.bodies.key_frequency_search`, narrowed to the documents holding a key on OpenSearch
        only). After the last refresh. A partial answer is asked again alone (which raises if it is partial
        again): a count must not miss a shard."""
        wanted = list(dict.fromkeys(int(k) for k in keys))
        narrowed = engine_of(self.client).name == OPENSEARCH
        searches = [bodies.KEY_HOLDERS, *([bodies.key_frequency_search(wanted, narrowed=narrowed)] if wanted else [])]
        what = "counting the documents that hold the query's keys"
        with self._translated(what):
            answers = [dict(got) for got in self.client.msearch(
                index=self.index, searches=[line for body in searches for line in ({}, body)],
                filter_path=[f"responses.{path}" for path in _COUNT_PATH] + ["responses.error"])["responses"]]
        answers = [io.search(self.client, self.index, body, what, _COUNT_PATH) if io.partial(got) else got
                   for body, got in zip(searches, answers, strict=True)]
        counts = bodies.key_counts(answers[1]["aggregations"]["keys"]["buckets"]) if wanted else []
        return KeyCounts.of_pairs(wanted, counts, int(answers[0]["hits"]["total"]["value"]))

    def _part_body(self, parts: Sequence[int | None], key_values: Sequence[int], version: str, exclude_id: str | None,
                   limit: int) -> dict[str, Any] | None:
        """The part candidates' search (``None``: the query has no part or key to look up)."""
        if not 1 <= limit <= MAX_PART_LIMIT:
            raise ConfigError(f"limit must be between 1 and {MAX_PART_LIMIT}, got {limit}")
        self.layout()  # an index of this schema
        part_terms, key_terms = query_terms(parts, key_values)
        if not part_terms and not key_terms:
            return None
        return bodies.part_search(part_terms, key_terms, version, limit=limit, exclude_id=exclude_id)

    def _searched_parts(self, body: dict[str, Any], parts: Sequence[int | None],
                        answer: Mapping[str, Any] | None = None) -> list[PartCandidate]:
        """The candidates of a part search for the query ``parts``: its ``answer`` with ids from doc values, or
        asked for here. A hit without ``simdup.id`` (level fields written by other means) makes it ask again
        for the ``_id``s.

        A hit that matched a query part by a quad only (:func:`simdup_es.es.bodies.checked`) loses that part,
        and the hit if it keeps nothing; the rest are ranked again as the search ranks them (matched parts and
        keys, then id). The engine cut its ranking at ``size`` before that, so when a hit lost a part and one
        that was cut could now rank among the first ``size``, the search is asked again for twice as many.
        """
        limit = body["size"]
        while True:
            if answer is None:
                answer = io.search(self.client, self.index, bodies.ids_from_doc_values(body),
                                   "searching part candidates", _PART_PATH)
            hits = answer.get("hits", {}).get("hits", [])
            if any(bodies.hit_id(hit) is None for hit in hits):
                answer = io.search(self.client, self.index, body, "searching part candidates", _PART_PATH)
                hits = answer.get("hits", {}).get("hits", [])
            found, dropped = _part_hits(hits, parts)
            if not dropped:
                return found
            found.sort(key=_rank)
            if len(hits) < body["size"] or body["size"] >= MAX_PART_LIMIT or _cut_after(found, limit, hits[-1]):
                return found[:limit]
            body, answer = {**body, "size": min(2 * body["size"], MAX_PART_LIMIT)}, None

    def source_fields(self) -> tuple[str, str]:
        """The ``_source`` fields of the documents' text and title (``text`` and ``title`` unless the index
        records others, as ``simdup backfill --field`` does)."""
        if self._source_fields is None:
            try:
                self._note_mapping()
            except NotFound:  # no index yet: nothing to read either way
                return ("text", "title")
        assert self._source_fields is not None
        return self._source_fields

    def _note_mapping(self) -> dict[str, Any]:
        """The index's ``GET _mapping`` answer, noting what it tells the reads: the text and title fields, and whether
        the name stands for several indices."""
        with self._translated("reading the mapping"):
            answer = dict(self.client.indices.get_mapping(index=self.index))
        self._source_fields, self._several = source_fields(answer), len(answer) > 1
        self._keeps_unified = keeps_unified(answer)
        return answer

    def get(self, ids: Iterable[str]) -> list[StoredDoc]:
        """Documents by id, in the order asked; unknown ids (and documents without a fingerprint) are left out."""
        wanted = list(dict.fromkeys(listed(ids, "ids")))
        out: list[StoredDoc] = []
        if not wanted:
            return out
        text_field, title_field = self.source_fields()
        includes = [title_field, text_field, keys.FP, keys.VERSION, keys.UNIFIED, *GROUP_FIELDS, *META_FIELDS]
        for start in range(0, len(wanted), 1000):
            for doc in self._read(wanted[start : start + 1000], includes):
                error = doc.get("error")
                if error:
                    io.missing_item_index(error, self.index)
                    raise StoreError(f"reading document {doc.get('_id')!r} from {self.index!r} failed: "
                                     f"{io.item_reason(error)}")
                if not doc.get("found"):
                    continue
                source = doc.get("_source", {})
                stored = bodies.stored_fingerprint(source)
                if stored is None:
                    log.debug("document %r in %s has no fingerprint; left out", doc["_id"], self.index)
                    continue
                out.append(StoredDoc(doc["_id"], *stored, _source_value(source, text_field, _text_of),
                                     _source_value(source, title_field, bodies.title_of),
                                     source.get(keys.GROUP), source.get(keys.GROUP_SIZE),
                                     group_kind=source.get(keys.GROUP_KIND),
                                     meta=tuple((f, v) for f in META_FIELDS if isinstance(v := source.get(f), str)),
                                     unified=_unified_of(source, text_field)))
        return out

    def _read(self, ids: list[str], includes: list[str]) -> list[dict[str, Any]]:
        """``mget``'s ``docs`` for ``ids``; for a name that stands for several indices (which ``mget`` refuses), a search
        by id, each id's first hit as a found doc (seen after a refresh, where ``mget`` reads the latest write)."""
        if not self._several:
            with self._translated("reading documents"):
                return list(self.client.mget(index=self.index, ids=ids, source_includes=includes)["docs"])
        body = {"query": {"ids": {"values": ids}}, "size": 10_000, "_source": {"includes": includes},
                "sort": [{"_index": "asc"}]}
        hits = io.search(self.client, self.index, body, "reading documents")["hits"]["hits"]
        first: dict[str, dict[str, Any]] = {}
        for hit in hits:
            first.setdefault(hit["_id"], {**hit, "found": True})
        return [first[doc_id] for doc_id in ids if doc_id in first]

    def count(self) -> int:
        """Number of documents in the index (after the last refresh)."""
        with self._translated("counting documents"):
            return int(self.client.count(index=self.index)["count"])

    def count_with_levels(self) -> int:
        """Number of documents stored with their levels (after the last refresh)."""
        with self._translated("counting documents with levels"):
            return int(self.client.count(index=self.index, query={"exists": {"field": keys.UNITS}})["count"])

    def versions(self) -> dict[str, int]:
        """Number of documents by fingerprint version (after the last refresh)."""
        body = {"size": 0, "aggs": {"v": {"terms": {"field": keys.VERSION, "size": 1000}}}}
        got = io.search(self.client, self.index, body, "counting fingerprint versions", ["aggregations", "_shards"])
        return {b["key"]: int(b["doc_count"]) for b in got["aggregations"]["v"]["buckets"]}

    def refresh(self) -> None:
        """Make everything written so far searchable."""
        with self._translated("refreshing"):
            self.client.indices.refresh(index=self.index)

    def force_merge(self) -> None:
        """Merge the index's segments into one per shard (``_forcemerge``), waiting up to
        :data:`FORCE_MERGE_TIMEOUT` for the cluster to finish; raises :class:`StoreError` when a node's disk
        is too full for Elasticsearch to start the merge.

        A search sends a few hundred level keys, each looked up in every segment: at
        100,000 documents in 16 segments the key query took about three times as long
        as in one (docs/elasticsearch.md). Segments this large are not merged again by
        the cluster's own policy, so merge an index once it is loaded, not one taking
        writes all the time.
        """
        started = time.monotonic()
        with self._translated("force-merging"):
            while True:
                held = io.merges_held_back(self.client)
                if held:
                    raise StoreError(
                        f"cannot force-merge {self.index!r}: Elasticsearch starts no merge while a node's disk is "
                        f"fuller than indices.merge.disk.watermark.high (95% by default), and that is so on "
                        f"{', '.join(held)}; what was written is kept and searchable, only the merge is left: free "
                        f"disk space, then merge with POST /{self.index}/_forcemerge?max_num_segments=1 (a merge "
                        "already asked for stays queued on the cluster and runs once there is space)")
                try:
                    # A request sent while the merge runs waits for it, then finds nothing left to merge.
                    self.client.options(request_timeout=FORCE_MERGE_WAIT).indices.forcemerge(
                        index=self.index, max_num_segments=1)
                    break
                except es.ConnectionTimeout:
                    waited = time.monotonic() - started
                    if waited >= FORCE_MERGE_TIMEOUT:
                        raise
                    log.info("the force merge of %s is still running after %.0f s", self.index, waited)
        self.refresh()  # OpenSearch searches the merged segment only from the next refresh

    # -- whole-index jobs ----------------------------------------------------------------------

    def scan(self) -> _Scan:
        """Every fingerprint of the index (or of each index of a pattern): one point in time on
        Elasticsearch; on OpenSearch each walk is its own scroll snapshot (docs/engines.md)."""
        return _Scan(self)

    def texts(self, refs: Sequence[Any], field: str | None = None) -> list[str | None]:
        """``field`` (by default the index's text field, :meth:`source_fields`) of the documents ``refs``
        (hits of a :meth:`scan`) address, by ``mget``."""
        field = field or self.source_fields()[0]
        out: list[str | None] = []
        for start in range(0, len(refs), 500):
            part = refs[start : start + 500]
            with self._translated("reading texts"):
                response = self.client.mget(docs=[bodies.target(ref) for ref in part], source_includes=[field])
            for doc in response["docs"]:
                if doc.get("error"):
                    log.warning("cannot read %s/%s: %s", doc.get("_index"), doc.get("_id"), io.item_reason(doc["error"]))
                out.append(bodies.text_of(doc.get("_source") or {}, field)[0] if doc.get("found") else None)
        return out

    def write_groups(self, writes: Sequence[tuple[Any, str | None, int | None, str | None]]) -> BulkReport:
        """Partial updates of ``dup_group`` / ``dup_group_size`` / ``dup_kind``; the fields are mapped first."""
        self.layout()  # an index of this schema
        actions = [bodies.update_action({**bodies.target(ref), "retry_on_conflict": 3}, bodies.group_update(g, s, kind))
                   for ref, g, s, kind in writes]
        items = io.bulk(self.client, actions, what="writing duplicate groups", index=self.index, chunk_size=2000,
                        retry=self.retry)
        report = BulkReport()
        for (ref, *_), item in zip(writes, items):
            if item.ok:
                report.written += 1
            elif item.status == 404:  # deleted since it was read
                report.missing += 1
            else:
                report.failed.append((f"{ref['_index']}/{ref['_id']}", item.reason or ""))
        return report

    def put_keys(self, ids: Sequence[str]) -> list[Key] | None:
        """``(index, id)`` of each id when the store's index is one index; ``None`` for an alias, a
        pattern or an index not created yet (a document's index is known only once it is written)."""
        if self._concrete is None:
            if any(c in self.index for c in "*,"):
                self._concrete = False
            else:
                with self._translated("reading the index"):
                    if not self.client.indices.exists(index=self.index):
                        return None  # not created yet: ask again next time
                    self._concrete = not self.client.indices.exists_alias(name=self.index)
        return [(self.index, doc_id) for doc_id in ids] if self._concrete else None

    def group_rows(self, ids: Sequence[str] = (), groups: Sequence[str] = ()) -> list[GroupRow]:
        """The documents with these ``_id`` (in every index of a pattern) and the members of these groups.

        A search per 10,000 ids or groups (a point-in-time walk when more match than a page holds).
        """
        queries = [{"ids": {"values": chunk}} for chunk in _chunked(list(dict.fromkeys(ids)), 10_000)]
        queries += [{"terms": {keys.GROUP: chunk}} for chunk in _chunked(list(dict.fromkeys(groups)), 10_000)]
        fields = [keys.FP, keys.VERSION, *GROUP_FIELDS]
        found: dict[tuple[str, str], GroupRow] = {}
        for query in queries:
            where: dict[str, Any] = {"bool": {"filter": [query, {"exists": {"field": keys.FP}}]}}
            body = {"query": where, "size": 10_000, "_source": False, "docvalue_fields": fields,
                    "track_total_hits": True}
            response = io.search(self.client, self.index, body, "reading duplicate groups", _ROW_PATH)
            hits = response.get("hits", {}).get("hits", [])
            if response["hits"]["total"]["value"] > len(hits):
                hits = list(io.walk(self.client, self.index, where, docvalue_fields=fields,
                                    page_size=self.pit_page_size, keep_alive=self.pit_keep_alive))
            for hit in hits:
                values = hit.get("fields", {})
                if keys.VERSION not in values:
                    continue
                group, size, kind = (values.get(name, [None])[0] for name in GROUP_FIELDS)
                found[(hit["_index"], hit["_id"])] = GroupRow(
                    (hit["_index"], hit["_id"]), bodies.target(hit), int(values[keys.FP][0], 16),
                    values[keys.VERSION][0], group, int(size) if size is not None else None, kind)
        return [found[key] for key in sorted(found)]

    def group_kinds(self) -> dict[str, int]:
        """Documents in groups by ``dup_kind`` (after the last refresh)."""
        body = {"size": 0, "query": {"exists": {"field": keys.GROUP}},
                "aggs": {"k": {"terms": {"field": keys.GROUP_KIND, "size": 10, "missing": "None"}}}}
        got = io.search(self.client, self.index, body, "counting duplicate groups", ["aggregations", "_shards"])
        return {b["key"]: int(b["doc_count"]) for b in got.get("aggregations", {}).get("k", {}).get("buckets", [])}

    def close(self) -> None:
        """Close the client if this store built it; a client passed in stays open."""
        if self._settings is not None and self._client is not None:
            self._client.close()
            self._client = None


def _rank(found: PartCandidate) -> tuple[int, str]:
    """A part search's order: most matched parts and keys first, then by id."""
    return -len(found.parts) - len(found.keys), found.id


def _cut_after(found: list[PartCandidate], limit: int, last: Mapping[str, Any]) -> bool:
    """Whether the first ``limit`` of ``found`` (ranked, checked) are the first of the whole ranking, though the
    engine cut its own ranking (unchecked: a hit's score only falls in the check) after the hit ``last``: every
    hit cut ranked after ``last``, so it cannot pass a candidate ranked before ``last`` was."""
    if len(found) < limit:
        return False
    parts, keys = bodies.matched(last)
    return _rank(found[limit - 1]) <= (-len(parts) - len(keys), str(bodies.hit_id(last)))


def _part_hits(hits: Sequence[Mapping[str, Any]], parts: Sequence[int | None]) -> tuple[list[PartCandidate], bool]:
    """The candidates of a part search's hits, each with the query parts it shares 5 blocks with, and whether a hit
    lost a part to that check."""
    query = {i: f for i, f in enumerate(parts) if f is not None}
    out, dropped = [], False
    for hit in hits:
        hit_parts, hit_keys = bodies.matched(hit)
        kept = bodies.checked(hit, hit_parts, query) if hit_parts else hit_parts
        dropped |= kept != hit_parts
        if kept or hit_keys:
            units = hit.get("fields", {}).get(keys.UNITS, [0])[0]
            out.append(PartCandidate(str(bodies.hit_id(hit)), kept, hit_keys, int(units)))
    return out, dropped


def _assign(hits: list[dict[str, Any]], queries: Sequence[tuple[int, str]], positions: Sequence[int],
            out: list[tuple[list[str], np.ndarray]], k: int) -> None:
    """Each of ``queries`` (at ``positions`` of ``out``) gets the hits of its version it shares ``8 - k`` blocks with."""
    hits = [hit for hit in hits if keys.FP in hit.get("fields", {}) and keys.VERSION in hit["fields"]]
    ids = [hit["_id"] for hit in hits]
    fps = np.fromiter((int(hit["fields"][keys.FP][0], 16) for hit in hits), np.uint64, len(hits))
    versions = np.array([hit["fields"][keys.VERSION][0] for hit in hits], dtype=object)
    shared = sh.shared_blocks(np.fromiter((fp for fp, _ in queries), np.uint64, len(queries)), fps) >= keys.BLOCKS - k
    for n, (position, (_, version)) in enumerate(zip(positions, queries)):
        mine = np.flatnonzero(shared[n] & (versions == version))
        out[position] = ([ids[i] for i in mine.tolist()], fps[mine])


def _chunked(values: list[str], size: int) -> list[list[str]]:
    return [values[n : n + size] for n in range(0, len(values), size)]


class _Scan(Closing):
    """:meth:`ElasticsearchStore.scan`: two walks from one point in time (two scrolls on OpenSearch).

    First every fingerprint and version from doc values, without ``_id`` (on
    segments with deleted or updated documents, which any index that gets
    updates has, fetching ``_id`` costs several times more than the fingerprint);
    then, by ``terms`` queries on their fingerprints, the ids of only the
    documents asked for, plus those that have a group now; or, when every
    document is wanted, one walk over all documents with a fingerprint or a group.
    """

    def __init__(self, store: ElasticsearchStore, terms: int = 10_000) -> None:
        self.store, self.terms = store, terms
        self.pit = io.PointInTime(store.client, store.index, store.pit_keep_alive)

    def _walk(self, query: dict[str, Any], **kwargs: Any) -> Any:
        store = self.store
        return io.walk(store.client, store.index, query, pit=self.pit, page_size=store.pit_page_size, pages=True,
                       prefetch=True, **kwargs)

    def fingerprints(self) -> tuple[np.ndarray, np.ndarray, list[str]]:
        codes: dict[str, int] = {}
        fps: list[np.ndarray] = []
        versions: list[np.ndarray] = []
        for page in self._walk({"exists": {"field": keys.FP}}, docvalue_fields=[keys.FP, keys.VERSION],
                               ids=False):
            values = [hit.get("fields", {}) for hit in page]
            fps.append(np.fromiter((int(v[keys.FP][0], 16) for v in values), np.uint64, len(values)))
            versions.append(np.fromiter(
                (codes.setdefault(v[keys.VERSION][0], len(codes)) if keys.VERSION in v else -1 for v in values),
                np.int64, len(values)))
        if not fps:
            return np.empty(0, np.uint64), np.empty(0, np.int64), []
        return np.concatenate(fps), np.concatenate(versions), list(codes)

    def members(self, wanted: Mapping[tuple[int, str], int], *, every: bool = False) -> Members:
        out = Members()
        seen: set[tuple[str, str]] = set()
        fields = [keys.FP, keys.VERSION, *GROUP_FIELDS]
        has_group = {"exists": {"field": keys.GROUP}}
        queries: list[dict[str, Any]]
        if every:  # one walk: listing every fingerprint in terms queries would cost more
            queries = [{"bool": {"should": [{"exists": {"field": keys.FP}}, has_group], "minimum_should_match": 1}}]
        else:
            hexes = sorted({sh.to_hex(fp) for fp, _ in wanted})
            queries = [{"terms": {keys.FP: hexes[n : n + self.terms]}} for n in range(0, len(hexes), self.terms)]
            queries.append(has_group)
        for query in queries:
            for page in self._walk(query, docvalue_fields=fields):
                for hit in page:
                    key = (hit["_index"], hit["_id"])
                    if key in seen:
                        continue
                    seen.add(key)
                    values = hit.get("fields", {})
                    fp, version = values.get(keys.FP), values.get(keys.VERSION)
                    pos = len(out.keys)
                    out.keys.append(key)
                    out.refs.append({"_index": hit["_index"], "_id": hit["_id"], "_routing": hit.get("_routing")})
                    out.nodes.append(wanted.get((int(fp[0], 16), version[0]), -1) if fp and version else -1)
                    group, size, kind = (values.get(name) for name in GROUP_FIELDS)
                    if group or size or kind:
                        out.current[pos] = (group[0] if group else None, int(size[0]) if size else None,
                                            kind[0] if kind else None)
        return out

    def close(self) -> None:
        self.pit.close()


__all__ = ["MAX_PART_LIMIT", "ElasticsearchStore", "adopt", "install_templates"]


def _source_value(source: Mapping[str, Any], field: str, read: Callable[[Mapping[str, Any], str], str | None]
                  ) -> str | None:
    """The string a ``_source`` field holds, as it is; else (a dotted path such as ``body.zh``, an array) what
    ``read`` makes of it, as ``simdup backfill`` read it to fingerprint (:func:`simdup_es.es.bodies.text_of`,
    :func:`~simdup_es.es.bodies.title_of`)."""
    if field in source and (isinstance(source[field], str) or source[field] is None):
        return source[field]
    return read(source, field)


def _unified_of(source: Mapping[str, Any], text_field: str) -> str | None:
    """The unified text a ``_source`` keeps (:data:`simdup_es.keys.UNIFIED`), if it is of the ``text`` field it reads:
    ``simdup index`` writes it with that field only."""
    value = source[keys.ROOT].get(keys.UNIFIED_NAME)
    return value if isinstance(value, str) and text_field == "text" and isinstance(source.get("text"), str) else None


def _text_of(source: Mapping[str, Any], field: str) -> str | None:
    return bodies.text_of(source, field)[0]
