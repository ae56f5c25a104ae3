"""Bulk indexing: records -> fingerprints and levels (all cores) -> a store, accounting for every record.

Works the same for the Elasticsearch store and the embedded one. Each input item
ends up either written or rejected with a reason: ``read == indexed + rejected``.
When the store stops the run part way (the cluster stays unreachable or too
busy), :class:`IndexStopped` says from which input position nothing is settled:
a run that skips that many items (``skip``) goes on exactly there.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from .errors import ConfigError, StoreError
from .fingerprint import Doc, Fingerprinter
from .levels import PartParams
from .parts import PartPrinter
from .sources import Item, Record, Reject, record_doc
from .common import BulkReport
from .store.base import Store, StoredDoc


@dataclass
class IndexSummary:
    """Counts of one indexing run.

    ``settled`` is the resume point: input items ``0 .. settled - 1`` (after the
    ``skipped`` ones) are each written or rejected. Once the run finished it
    equals ``skipped + read``.
    """

    read: int = 0
    indexed: int = 0
    rejected: int = 0
    seconds: float = 0.0
    skipped: int = 0
    settled: int = 0

    @property
    def rate(self) -> float:
        return self.indexed / self.seconds if self.seconds else 0.0


class IndexStopped(StoreError):
    """The store failed for good part way through: items from ``summary.settled`` on are not settled.

    ``next_source`` names the first of them (``None`` when it was not read yet).
    Rejects of unsettled items were held back, so a run resumed at
    ``summary.settled`` reports each item once.
    """

    def __init__(self, cause: StoreError, summary: IndexSummary, next_source: str | None) -> None:
        super().__init__(str(cause), report=cause.report)
        self.summary, self.next_source = summary, next_source


RejectSink = Callable[[Reject], None]
LevelChoice = Literal["all", "keys", "document"]
LEVELS: tuple[LevelChoice, ...] = ("all", "keys", "document")


def index_items(
    items: Iterable[Item],
    store: Store,
    fingerprinter: Fingerprinter,
    *,
    on_reject: RejectSink,
    workers: int | None = None,
    batch_size: int = 500,
    on_progress: Callable[[int], None] | None = None,
    skip: int = 0,
    on_settled: Callable[[int], None] | None = None,
    levels: LevelChoice = "all",
    write: Callable[[list[StoredDoc]], BulkReport] | None = None,
) -> IndexSummary:
    """Fingerprint ``items`` and write them to ``store`` in batches.

    Rejected items (unreadable input, empty documents, documents the store
    refused) go to ``on_reject`` with their reason; nothing is dropped silently.
    ``on_progress`` is called with the number of items finished after each batch.

    ``skip`` passes over the first items (settled by an earlier run).
    ``on_settled(n)`` is called after each batch (and every ``batch_size`` bad
    items in a row) once items ``0 .. n - 1`` are each written or given to
    ``on_reject``, so ``n`` is a resume point to save. Rejects of later items are
    held back until then, except those with nothing open before them: a run
    resumed at a saved point may hand those out again (the CLI cuts its rejects
    file back to the saved point). A :class:`StoreError` of the store stops the
    run as :class:`IndexStopped`. One batch is written in a thread while the
    next is fingerprinted; any other exception (or an interrupt) waits for the
    batch under way to finish and is raised as it is, that batch not settled.

    ``levels`` is what is written besides the document fingerprint: ``"all"``
    (part fingerprints and winnowed keys), ``"keys"`` (the keys alone) or
    ``"document"`` (nothing: whole-document near-duplicates only). See the
    README's "Edited and partial copies" for what each finds and costs.

    ``write`` writes a batch instead of ``store.put`` (for instance
    :meth:`GroupKeeper.put <simdup_es.live_groups.GroupKeeper.put>`, which also
    updates the duplicate groups the batch touches); a batch is settled once it returns.
    """
    if batch_size < 1:
        raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
    if levels not in LEVELS:
        raise ConfigError(f"levels must be one of {', '.join(LEVELS)}, got {levels!r}")
    run = _Run(store, fingerprinter, on_reject=on_reject, workers=workers, batch_size=batch_size,
               on_progress=on_progress, skip=skip, on_settled=on_settled, levels=levels, write=write)
    return run.index(items)


class _Run:
    """One :func:`index_items` run: its settings, its summary and what is still open.

    ``held`` are rejects past the last settled position, ``flight`` the positions of
    records in the fingerprinter or a batch, ``sources`` where each unsettled item came
    from (for the stop message), ``saved`` the last position given to ``on_settled``.
    """

    def __init__(self, store: Store, fingerprinter: Fingerprinter, *, on_reject: RejectSink, workers: int | None,
                 batch_size: int, on_progress: Callable[[int], None] | None, skip: int,
                 on_settled: Callable[[int], None] | None, levels: LevelChoice,
                 write: Callable[[list[StoredDoc]], BulkReport] | None = None) -> None:
        self.store, self.fingerprinter, self.on_reject, self.workers = store, fingerprinter, on_reject, workers
        self.batch_size, self.on_progress, self.skip, self.on_settled = batch_size, on_progress, skip, on_settled
        self.levels = levels
        self.write = write or store.put
        self.summary = IndexSummary(skipped=skip, settled=skip)
        self.started = time.perf_counter()
        self.held: list[tuple[int, Reject]] = []
        self.flight: deque[int] = deque()
        self.sources: dict[int, str] = {}
        self.saved = skip

    def reject(self, item: Reject) -> None:
        self.summary.rejected += 1
        self.on_reject(item)

    def settle(self, upto: int) -> None:
        """Items before ``upto`` are done: hand out their rejects, in input order."""
        held, flight, sources = self.held, self.flight, self.sources
        held.sort(key=lambda pair: pair[0])
        n = 0
        while n < len(held) and held[n][0] < upto:
            self.reject(held[n][1])
            n += 1
        del held[:n]
        while flight and flight[0] < upto:
            flight.popleft()
        for position in [p for p in sources if p < upto]:
            del sources[position]
        self.summary.settled = upto
        if self.on_settled:
            self.on_settled(upto)
            self.saved = upto

    def records(self, items: Iterable[Item]) -> Iterator[tuple[int, Record]]:
        summary = self.summary
        for position, item in enumerate(itertools.islice(items, self.skip, None), self.skip):
            summary.read += 1
            if isinstance(item, Reject):
                if self.flight:
                    self.sources[position] = item.source
                    self.held.append((position, item))
                else:  # nothing open before it: settled now (a long run of bad lines is not held in memory)
                    self.reject(item)
                    summary.settled = position + 1
                    if self.on_settled and summary.settled - self.saved >= self.batch_size:
                        self.on_settled(summary.settled)
                        self.saved = summary.settled
            else:
                self.sources[position] = item.source
                self.flight.append(position)
                yield position, item

    def fingerprinted(self, items: Iterable[Item]) -> Generator[tuple[int, StoredDoc], None, None]:
        def to_doc(pair: tuple[int, Record]) -> Doc:
            return record_doc(pair[1])

        fingerprinter, workers, levels = self.fingerprinter, self.workers, self.levels
        # The document fingerprint and the levels (parts, keys) in one worker pass, with what the store writes of
        # them: an Elasticsearch index's JSON members in its layout (layout()), the embedded store's numbers.
        layout = self.store.layout() if callable(getattr(self.store, "layout", None)) else None  # type: ignore[attr-defined]
        found = (
            ((item, result, None, None, None) for item, result in fingerprinter.map_items(self.records(items), to_doc,
                                                                                         workers=workers))
            if levels == "document" else
            PartPrinter(fingerprinter, PartParams(with_parts=levels == "all")).map_stored(
                self.records(items), to_doc, layout=layout, workers=workers)
        )
        for (position, record), result, doc_levels, stored, unified in found:
            if result.error is not None:
                self.held.append((position, Reject(record.source, result.reason, record.id)))
                continue
            fp = result.unwrap()
            yield position, StoredDoc(record.key, fp.value, fp.version, record.text, record.title, levels=doc_levels,
                                      stored=stored, meta=record.meta, unified=unified)

    def written(self, batch: list[tuple[int, StoredDoc]], report: BulkReport) -> None:
        summary = self.summary
        summary.indexed += report.written
        if report.failed:
            # Named by where the record was read (file:line), as every other reject is.
            where: dict[str, str] = {}
            for position, doc in batch:
                where.setdefault(doc.id, self.sources.get(position, f"store:{doc.id}"))
            for doc_id, reason in report.failed:
                self.reject(Reject(where.get(doc_id, f"store:{doc_id}"), f"the store refused it: {reason}", doc_id))
        # Every item up to the batch's last document has come out of the
        # fingerprinter (it keeps input order), so all of them are settled now.
        self.settle(batch[-1][0] + 1)
        if self.on_progress:
            self.on_progress(summary.indexed + summary.rejected)

    def index(self, items: Iterable[Item]) -> IndexSummary:
        summary = self.summary
        stream = self.fingerprinted(items)
        # One batch is written (in a thread: the store mostly waits for its I/O) while
        # the workers fingerprint the next, so neither waits for the other.
        writer = ThreadPoolExecutor(1, thread_name_prefix="simdup-index")
        pending: tuple[list[tuple[int, StoredDoc]], Future[BulkReport]] | None = None
        try:
            while True:
                batch = list(itertools.islice(stream, self.batch_size))
                if pending is not None:
                    done, future = pending
                    pending = None
                    try:
                        report = future.result()
                    except StoreError as exc:
                        summary.seconds = time.perf_counter() - self.started
                        raise IndexStopped(exc, summary, self.sources.get(summary.settled)) from exc
                    self.written(done, report)
                if not batch:
                    break
                pending = batch, writer.submit(self.write, [doc for _, doc in batch])
        finally:
            if pending is not None:  # stopped early: the batch being written is not counted as settled
                pending[1].cancel()
            writer.shutdown(wait=True)
            stream.close()  # stops the fingerprinting processes when the run stops early
        self.settle(self.skip + summary.read)
        summary.seconds = time.perf_counter() - self.started
        return summary
