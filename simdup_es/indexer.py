"""Bulk indexing: records -> fingerprints and levels (all cores) -> a store, accounting for every record.

Works the same for the Elasticsearch store and the embedded one. Each input item
ends up either written or rejected with a reason: ``read == indexed + rejected``.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from .errors import ConfigError, InputError
from .fingerprint import Fingerprinter
from .parts import PartPrinter
from .sources import Item, Record, Reject, record_doc
from .store.base import Store, StoredDoc


@dataclass
class IndexSummary:
    """Counts of one indexing run."""

    read: int = 0
    indexed: int = 0
    rejected: int = 0
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.indexed / self.seconds if self.seconds else 0.0


RejectSink = Callable[[Reject], None]


def index_items(
    items: Iterable[Item],
    store: Store,
    fingerprinter: Fingerprinter,
    *,
    on_reject: RejectSink,
    workers: int | None = None,
    batch_size: int = 500,
    on_progress: Callable[[int], None] | None = None,
) -> IndexSummary:
    """Fingerprint ``items`` and write them to ``store`` in batches.

    Rejected items (unreadable input, empty documents, documents the store
    refused) go to ``on_reject`` with their reason; nothing is dropped silently.
    ``on_progress`` is called with the number of items finished after each batch.
    """
    if batch_size < 1:
        raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
    summary = IndexSummary()
    started = time.perf_counter()

    def reject(item: Reject) -> None:
        summary.rejected += 1
        on_reject(item)

    def records() -> Iterator[Record]:
        for item in items:
            summary.read += 1
            if isinstance(item, Reject):
                reject(item)
            else:
                yield item

    def fingerprinted() -> Iterator[StoredDoc]:
        # The document fingerprint and the levels (parts, sentence keys) in one worker pass.
        for record, result, levels in PartPrinter(fingerprinter).map_items(records(), record_doc, workers=workers):
            if result.error is not None:
                reason = result.error.reason if isinstance(result.error, InputError) else str(result.error)
                reject(Reject(record.source, reason, record.id))
                continue
            fp = result.unwrap()
            yield StoredDoc(record.key, fp.value, fp.version, record.text, record.title, levels=levels)

    stream = fingerprinted()
    while batch := list(itertools.islice(stream, batch_size)):
        report = store.put(batch)
        summary.indexed += report.written
        for doc_id, reason in report.failed:
            reject(Reject(f"store:{doc_id}", reason, doc_id))
        if on_progress:
            on_progress(summary.indexed + summary.rejected)
    summary.seconds = time.perf_counter() - started
    return summary
