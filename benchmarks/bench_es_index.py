"""Indexing throughput into Elasticsearch: simdup's index path against plain bulk indexing.

Prints docs/s for
  1. plain bulk: the same documents (id, title, text) with ``helpers.streaming_bulk``
     into an index with the same ``title``/``text`` mappings, no fingerprints;
  2. ``ElasticsearchStore.put`` with fingerprints precomputed (the Elasticsearch side
     alone: fingerprint fields, bulk, retries, failure accounting; two requests in
     flight, its default);
  3. the whole path: ``Fingerprinter.map`` on both cores feeding ``put`` in batches;
and, for context, plain ``helpers.parallel_bulk`` (2 threads), ``put`` with one
request at a time (``concurrency=1``, like plain ``streaming_bulk``) and
fingerprinting alone. Variants run interleaved, ``--rounds`` times, the first
pairs swapping places every other round; each figure is the median (and best)
over rounds, and each ratio is paired with the plain run of the same round, since
the machine is shared and its load drifts. Index creation is outside the clock;
every timing ends with a refresh, so the documents are searchable when it stops.
Beside wall-clock docs/s it prints the CPU each variant costs per 1,000 documents,
in the node (/proc, or ``_nodes/stats``) and in this process and its workers (``getrusage``):
that figure does not depend on what else runs on the machine.
Goal (issue 3): put with precomputed fingerprints >= 0.8x plain bulk.

Documents: data/zh-docs.jsonl (scripts/fetch-corpus), repeated ``--copies`` times
with distinct ids.

    scripts/es-server start
    SIMDUP_TEST_ES_URL=http://127.0.0.1:9200 .venv/bin/python benchmarks/bench_es_index.py [--copies 3] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from statistics import median

from elasticsearch import Elasticsearch, helpers

from simdup_es import default_fingerprinter
from simdup_es.fingerprint import Doc
from simdup_es.store.base import StoredDoc
from simdup_es.store.elasticsearch import ElasticsearchStore, index_template

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "simdup-bench-index"
PLAIN = "plain bulk (streaming_bulk)"
PRECOMPUTED = "simdup put, fingerprints precomputed"
WHOLE = "simdup whole path (fingerprint + put)"
PARALLEL = "plain parallel_bulk, 2 threads"
SERIAL = "simdup put, precomputed, concurrency=1"
FP_ONLY = "fingerprinting alone (map, no node)"


def load_records() -> list[dict]:
    path = Path(os.environ.get("SIMDUP_DATA", ROOT / "data")) / "zh-docs.jsonl"
    if not path.exists():
        raise SystemExit(f"{path} is missing: run scripts/fetch-corpus first")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def es_cpu_ms(client: Elasticsearch) -> float:
    """CPU milliseconds the Elasticsearch node(s) have used so far.

    From /proc when the node runs on this machine (exact); else from the nodes
    stats API, which refreshes its figure only once a second.
    """
    info = client.nodes.info(metric="process", filter_path="nodes.*.process.id")
    pids = [node["process"]["id"] for node in info["nodes"].values()]
    try:
        total = 0.0
        for pid in pids:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") * 1000  # utime + stime
        return total
    except OSError:
        stats = client.nodes.stats(metric="process", filter_path="nodes.*.process.cpu.total_in_millis")
        return float(sum(node["process"]["cpu"]["total_in_millis"] for node in stats["nodes"].values()))


def own_cpu_ms() -> float:
    """CPU milliseconds of this process, its threads and its finished children (fingerprint workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime) * 1000


@dataclass
class Run:
    seconds: float
    written: int
    es_cpu_ms: float
    client_cpu_ms: float

    @property
    def rate(self) -> float:
        return self.written / self.seconds

    @property
    def cpu_per_1k(self) -> tuple[float, float]:
        return self.es_cpu_ms / self.written * 1000, self.client_cpu_ms / self.written * 1000


def measure(client: Elasticsearch, index: str | None, fn: Callable[[], int]) -> Run:
    """Wall time and CPU (node and client) of ``fn`` plus a refresh; the index exists already."""
    es0, me0, t = es_cpu_ms(client), own_cpu_ms(), time.perf_counter()
    written = fn()
    if index is not None:
        client.indices.refresh(index=index)
    seconds = time.perf_counter() - t
    return Run(seconds, written, es_cpu_ms(client) - es0, own_cpu_ms() - me0)


def fresh_plain_index(client: Elasticsearch, index: str) -> None:
    client.options(ignore_status=404).indices.delete(index=index)
    props = index_template()["template"]["mappings"]["properties"]
    client.indices.create(index=index, mappings={"properties": props}, settings={"number_of_replicas": 0})


def fresh_store(client: Elasticsearch, index: str, chunk: int, concurrency: int = 2) -> ElasticsearchStore:
    client.options(ignore_status=404).indices.delete(index=index)
    store = ElasticsearchStore(client, index, chunk_size=chunk, concurrency=concurrency)
    store.setup()  # simdup-* gets the index template: 0 replicas on one node, like the plain index
    return store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default=os.environ.get("SIMDUP_TEST_ES_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--copies", type=int, default=3, help="repeat the corpus this often (distinct ids)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--chunk", type=int, default=1000, help="documents per bulk request (all variants)")
    ap.add_argument("--path-copies", type=int, default=1, help="copies for the whole path (it is CPU-bound, and slow)")
    ap.add_argument("--workers", type=int, default=None, help="fingerprinting processes (default: all cores)")
    args = ap.parse_args()

    client = Elasticsearch(args.url, request_timeout=120)
    records = load_records()
    fingerprinter = default_fingerprinter()
    print(f"corpus: {len(records)} documents, mean {sum(len(r['text']) for r in records) / len(records):.0f} chars; "
          f"x{args.copies} = {len(records) * args.copies} documents per run; bulk chunks of {args.chunk}; "
          f"{os.cpu_count()} cores")

    fps = [r.fingerprint for r in fingerprinter.map((Doc(r["text"], r.get("title")) for r in records), workers=args.workers)]
    ok = [(r, fp) for r, fp in zip(records, fps) if fp is not None]
    n = len(ok) * args.copies

    def plain_actions() -> Iterator[dict]:
        for c in range(args.copies):
            for r, _ in ok:
                yield {"_id": f"{r['id']}~{c}", "_source": {"title": r.get("title"), "text": r["text"]}}

    stored = [
        StoredDoc(f"{r['id']}~{c}", fp.value, fp.version, r["text"], r.get("title")) for c in range(args.copies) for r, fp in ok
    ]

    # Each variant: (documents it writes, set-up outside the clock -> the timed work).
    def plain(index: str, parallel: bool = False) -> Callable[[], int]:
        fresh_plain_index(client, index)
        if parallel:
            return lambda: sum(ok for ok, _ in helpers.parallel_bulk(
                client, plain_actions(), index=index, chunk_size=args.chunk, thread_count=2))
        return lambda: sum(ok for ok, _ in helpers.streaming_bulk(client, plain_actions(), index=index, chunk_size=args.chunk))

    def precomputed(index: str, concurrency: int = 2) -> Callable[[], int]:
        store = fresh_store(client, index, args.chunk, concurrency)

        def run() -> int:
            report = store.put(stored)
            assert not report.failed, report.failed[:3]
            return report.written

        return run

    def whole_path(index: str) -> Callable[[], int]:
        store = fresh_store(client, index, args.chunk)

        def docs() -> Iterator[Doc]:
            for _ in range(args.path_copies):
                for r, _ in ok:
                    yield Doc(r["text"], r.get("title"))

        def run() -> int:
            written, batch = 0, []
            ids = (f"{r['id']}~{c}" for c in range(args.path_copies) for r, _ in ok)
            for doc_id, doc, res in zip(ids, docs(), fingerprinter.map(docs(), workers=args.workers)):
                fp = res.unwrap()
                batch.append(StoredDoc(doc_id, fp.value, fp.version, doc.text, doc.title))
                if len(batch) == args.chunk:
                    written += store.put(batch).written
                    batch = []
            return written + (store.put(batch).written if batch else 0)

        return run

    def fingerprint_only(index: str) -> Callable[[], int]:
        texts = [Doc(r["text"], r.get("title")) for _ in range(args.path_copies) for r, _ in ok]
        return lambda: sum(res.error is None for res in fingerprinter.map(texts, workers=args.workers))

    variants: dict[str, tuple[int, Callable[[str], Callable[[], int]]]] = {
        PLAIN: (n, plain),
        PRECOMPUTED: (n, precomputed),
        PARALLEL: (n, lambda ix: plain(ix, parallel=True)),
        SERIAL: (n, lambda ix: precomputed(ix, 1)),
        WHOLE: (len(ok) * args.path_copies, whole_path),
        FP_ONLY: (len(ok) * args.path_copies, fingerprint_only),
    }
    runs: dict[str, list[Run]] = {name: [] for name in variants}
    for rnd in range(args.rounds):
        order = list(variants)
        if rnd % 2:  # ABBA: the pairs swap places every other round, so drift cancels out
            order[0:2], order[2:4] = order[1::-1], order[3:1:-1]
        for i, name in enumerate(order):
            expected, prepare = variants[name]
            index = f"{PREFIX}-{i}"
            work = prepare(index)
            time.sleep(1)  # let the set-up settle
            run = measure(client, None if name == FP_ONLY else index, work)
            client.options(ignore_status=404).indices.delete(index=index)
            assert run.written == expected, (name, run.written, expected)
            runs[name].append(run)
            es_ms, me_ms = run.cpu_per_1k
            print(f"  round {rnd + 1}: {name:40s} {run.rate:7,.0f} docs/s ({run.written} in {run.seconds:5.2f} s); "
                  f"CPU per 1k docs: node {es_ms:6.0f} ms, client {me_ms:6.0f} ms", flush=True)

    def paired(name: str) -> list[float]:  # the machine is shared: compare within a round
        return [a.rate / b.rate for a, b in zip(runs[name], runs[PLAIN])]

    def cpu_total(run: Run) -> float:
        return sum(run.cpu_per_1k)

    print(f"\n{args.rounds} rounds. docs/s: median and best; ratio: median over rounds of variant/plain in the same round;"
          "\nCPU: median ms per 1,000 documents, node + client (ratio: plain/variant, >1 = cheaper than plain)")
    print(f"  {'':40s} {'median':>7s} {'best':>7s} {'ratio':>6s} | {'node':>6s} {'client':>6s} {'ratio':>6s}")
    for name in variants:
        rates = [r.rate for r in runs[name]]
        node = median(r.cpu_per_1k[0] for r in runs[name])
        me = median(r.cpu_per_1k[1] for r in runs[name])
        cpu_ratio = median(cpu_total(p) / cpu_total(r) for p, r in zip(runs[PLAIN], runs[name]))
        print(f"  {name:40s} {median(rates):7,.0f} {max(rates):7,.0f} {median(paired(name)):5.2f}x | "
              f"{node:6.0f} {me:6.0f} {cpu_ratio:5.2f}x")
    ratio = median(paired(PRECOMPUTED))
    print(f"\ngoal: precomputed put >= 0.8x plain bulk: {ratio:.2f}x (rounds: "
          f"{', '.join(f'{r:.2f}' for r in paired(PRECOMPUTED))}) -> {'met' if ratio >= 0.8 else 'NOT met'}")
    client.close()


if __name__ == "__main__":
    main()
