"""How query cost grows with the index: latency p50/p95 and node CPU per query at N = 100k, 1M, 10M.

Two indices grow through ``--sizes`` on the node at ``--url`` (one shard each):

* ``doc``: the document level only (``simdup.fp`` and the 8 blocks of the ``8x8`` layout; with
  ``--doc-terms`` the ``terms`` layout, whose documents also carry the 56 five-block terms, in
  ``bench-scale-doc-terms``, asked both ways). Queried through
  :meth:`ElasticsearchStore.candidates` (``k = 3``) and the exact re-rank; ``candidates`` is the
  mean number the re-rank gets (first 100 queries).
* ``levels``: the document level plus the levels (winnowed keys ``simdup.sk``, the parts' quads
  and fingerprints), up to ``--level-sizes``. Queried through
  :meth:`ElasticsearchStore.part_candidates`.

At each size it prints, per query kind: wall-clock latency p50/p95 in the client
(request, response, parsing), the node's process CPU per query (``_nodes/stats``
``process.cpu.total_in_millis`` before and after the timed batch, divided by its
queries), and the mean hits; and per index: primary store bytes per stored document
and Lucene documents per stored document (``_stats`` docs.count, which counts nested
documents, over ``_count``). JSON lines of every figure go to ``--out``.

Synthetic data (how it is made)
-------------------------------
* Document fingerprints: :class:`bench_es_query.Generator` (per-bit frequencies spread as
  in the zh corpus, 20% of documents in groups of a centre and 3 neighbours at
  Binomial(64, 3/64) bits).
* Levels, drawn per document from the zh corpus's own distribution
  (``data/zh-docs.jsonl``: 8,019 documents, mean 4.2 parts and 100 distinct keys, 86% of
  key postings on a key no other document has): the (parts, keys) counts of a random
  corpus document; 86% of keys fresh random 64-bit values, 14% drawn from a shared pool
  of 5.4 keys per document weighted by the corpus's document frequencies of repeated
  keys; part fingerprints from the same generator as the document level. 10% of
  documents are partial copies of an earlier one: half its keys and one of its parts
  with 0-3 bits flipped.
* Queries: document level, half stored fingerprints with 0-3 bits flipped, half fresh;
  levels, the parts and keys of a stored document (half the keys replaced by fresh
  ones, one part flipped by 0-3 bits) and a fresh text's parts and keys, alternately.

Loading goes straight to ``_bulk`` with the store's own document JSON
(:func:`simdup_es.es.bodies.document_json`), refresh off, then a refresh and a
force-merge to at most ``--segments`` segments. The machine is shared: compare figures
of one run, not across runs.

    SIMDUP_ES_PORT=9265 SIMDUP_ES_HEAP=4g scripts/es-server start
    python benchmarks/bench_scale.py --url http://127.0.0.1:9265 \\
        [--sizes 100000,1000000,10000000] [--level-sizes 100000,1000000] [--doc-terms]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from elasticsearch import Elasticsearch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_es_query import Generator  # noqa: E402

from simdup_es import keys  # noqa: E402
from simdup_es.es import bodies  # noqa: E402
from simdup_es.search import rerank  # noqa: E402
from simdup_es.store.elasticsearch import ElasticsearchStore  # noqa: E402

VERSION = "bench.1"
ROOT = Path(__file__).resolve().parent.parent
BATCH = 20_000


def corpus_shape() -> tuple[np.ndarray, np.ndarray]:
    """``(parts, keys)`` counts per zh corpus document, and the document frequencies of its repeated keys."""
    from simdup_es import default_fingerprinter
    from simdup_es.levels import PartParams
    from simdup_es.parts import PartPrinter

    cache = ROOT / "data" / ".corpus-shape.npz"
    if cache.exists():
        got = np.load(cache)
        return got["counts"], got["df"]
    texts = [json.loads(line)["text"] for line in open(ROOT / "data" / "zh-docs.jsonl", encoding="utf-8")]
    levels = PartPrinter(default_fingerprinter(), PartParams(with_parts=True)).levels_many(texts)
    counts = np.array([(len(lv.stored()[0]), len(lv.stored()[1])) for lv in levels])
    df: dict[int, int] = {}
    for lv in levels:
        for key in lv.stored()[1]:
            df[key] = df.get(key, 0) + 1
    repeated = np.array([v for v in df.values() if v > 1])
    np.savez(cache, counts=counts, df=repeated)
    return counts, repeated


class LevelGenerator:
    """Synthetic levels shaped like the corpus's (see the module's docstring)."""

    def __init__(self, gen: Generator, counts: np.ndarray, df: np.ndarray) -> None:
        self.gen, self.counts = gen, counts
        self.pool_per_doc = len(df) / len(counts)
        self.shared = float(df.sum()) / float(counts[:, 1].sum())
        self.df = df
        self.pool = np.zeros(0, np.uint64)
        self.weights = np.zeros(0)
        self.cdf = np.zeros(0)
        self.docs: list[tuple[list[int], list[int]]] = []  # a reservoir of earlier documents to copy from

    def _grow_pool(self, n_docs: int) -> None:
        want = int(self.pool_per_doc * n_docs)
        if want > len(self.pool):
            rng = self.gen.rng
            self.pool = np.concatenate([self.pool, rng.integers(0, 2**64 - 1, want - len(self.pool), np.uint64)])
            # each pooled key's weight: a document frequency of the corpus's repeated keys
            self.weights = np.concatenate([self.weights, rng.choice(self.df, want - len(self.weights))])
            self.cdf = np.cumsum(self.weights) / self.weights.sum()

    def _shared(self, n: int) -> list[int]:
        if not len(self.pool) or not n:
            return []
        return self.pool[np.searchsorted(self.cdf, self.gen.rng.random(n))].tolist()

    def one(self, parts_n: int, keys_n: int) -> tuple[list[int], list[int]]:
        rng = self.gen.rng
        keys = self._shared(int(rng.binomial(keys_n, self.shared)))
        keys += rng.integers(0, 2**64 - 1, keys_n - len(keys), np.uint64).tolist()
        return self.gen.fresh(parts_n).tolist(), keys

    def batch(self, n: int, total: int) -> list[tuple[list[int], list[int]]]:
        self._grow_pool(total + n)
        rng = self.gen.rng
        picked = self.counts[rng.integers(0, len(self.counts), n)]
        out = []
        for parts_n, keys_n in picked.tolist():
            parts, keys = self.one(max(parts_n, 1), keys_n)
            if self.docs and rng.random() < 0.1:  # a partial copy of an earlier document
                src_parts, src_keys = self.docs[int(rng.integers(0, len(self.docs)))]
                keys[: len(src_keys) // 2] = src_keys[: len(src_keys) // 2]
                parts[0] = int(self.gen.flip(np.array([src_parts[0]], np.uint64), 1.5)[0])
            out.append((parts, sorted(set(keys))))
        keep = rng.integers(0, n, min(n, 200))
        self.docs += [out[i] for i in keep.tolist()]
        return out

    def query(self, copy: bool) -> tuple[list[int], list[int]]:
        rng = self.gen.rng
        parts_n, keys_n = self.counts[int(rng.integers(0, len(self.counts)))].tolist()
        parts, keys = self.one(max(parts_n, 1), keys_n)
        if copy and self.docs:
            src_parts, src_keys = self.docs[int(rng.integers(0, len(self.docs)))]
            keys = list(src_keys[: len(src_keys) // 2]) + keys[len(src_keys) // 2 :]
            parts = list(src_parts)
            parts[0] = int(self.gen.flip(np.array([parts[0]], np.uint64), 1.5)[0])
        return parts, keys


def bulk(client: Elasticsearch, index: str, lines: list[str]) -> None:
    """Send pre-made NDJSON in two concurrent requests (as the store does); fail loudly on an item error."""
    half = (len(lines) // 4) * 2

    def send(chunk: list[str]) -> None:
        if not chunk:
            return
        got = client.bulk(index=index, body="\n".join(chunk) + "\n", filter_path=["errors", "items.*.error"])
        if got.get("errors"):
            raise SystemExit(f"bulk failed: {got['items'][:2]}")

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(send, [lines[:half], lines[half:]]))


def node_cpu_ms(client: Elasticsearch) -> int:
    # The node caches its process stats for monitor.process.refresh_interval (1 s): wait it out, or a
    # short batch reads the same figure before and after.
    time.sleep(1.2)
    stats = client.nodes.stats(metric="process")["nodes"]
    return sum(int(n["process"]["cpu"]["total_in_millis"]) for n in stats.values())


def timed(client: Elasticsearch, queries: list, run: Callable[[object], int], warmup: int) -> dict[str, float]:
    """p50/p95 latency (ms), node CPU per query (ms) and mean hits of ``run`` over ``queries`` after ``warmup``."""
    for q in queries[:warmup]:
        run(q)
    lat, hits = [], []
    cpu = node_cpu_ms(client)
    for q in queries[warmup:]:
        t = time.perf_counter()
        hits.append(run(q))
        lat.append((time.perf_counter() - t) * 1000)
    cpu = node_cpu_ms(client) - cpu
    return {"p50_ms": float(np.percentile(lat, 50)), "p95_ms": float(np.percentile(lat, 95)),
            "cpu_ms": cpu / len(lat), "hits": float(np.mean(hits))}


def index_figures(client: Elasticsearch, index: str) -> dict[str, float]:
    stats = client.indices.stats(index=index, metric=["store", "docs", "segments"])["indices"][index]["primaries"]
    stored = int(client.count(index=index)["count"])
    return {"docs": stored, "bytes_per_doc": stats["store"]["size_in_bytes"] / stored,
            "lucene_per_doc": stats["docs"]["count"] / stored, "segments": stats["segments"]["count"]}


def settle(client: Elasticsearch, index: str, segments: int) -> float:
    t = time.perf_counter()
    client.indices.put_settings(index=index, settings={"index": {"refresh_interval": None}})
    client.indices.refresh(index=index)
    client.indices.forcemerge(index=index, max_num_segments=segments, wait_for_completion=True)
    client.indices.refresh(index=index)
    return time.perf_counter() - t


def fresh_index(client: Elasticsearch, name: str, store: ElasticsearchStore) -> None:
    client.options(ignore_status=404).indices.delete(index=name)
    store.setup()
    client.indices.put_settings(index=name, settings={"index": {"refresh_interval": "-1", "number_of_replicas": 0}})


def doc_lines(start: int, fps: np.ndarray, layout: str, levels: list[tuple[list[int], list[int]]] | None = None
              ) -> Iterator[str]:
    for i, fp in enumerate(fps.tolist()):
        doc_id = f"d{start + i}"
        lv = None
        if levels is not None:
            part_fps, key_values = levels[i]
            lv = (400, part_fps, key_values, 0)
        yield json.dumps({"index": {"_id": doc_id}})
        yield bodies.document_json(keys.members_json(fp, VERSION, layout, lv), None, None, None if lv is None else doc_id)


def emit(out: object, row: dict) -> None:
    print(json.dumps(row), file=out, flush=True)  # type: ignore[call-overload]
    print("   ", " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)


def run_doc(args: argparse.Namespace, client: Elasticsearch, gen: Generator, out: object) -> None:
    index, layout = ("bench-scale-doc-terms", "terms") if args.doc_terms else ("bench-scale-doc", "8x8")
    stores = {name: ElasticsearchStore(client, index, layout=layout, page_size=1000) for name in ("8x8", layout)}
    fresh_index(client, index, stores[layout])
    for name, store in stores.items():  # the terms index's documents hold the blocks too: asked both ways
        store._layout = name  # noqa: SLF001 - a benchmark may look inside
    fps = np.zeros(0, np.uint64)
    for size in args.sizes:
        t = time.perf_counter()
        client.indices.put_settings(index=index, settings={"index": {"refresh_interval": "-1"}})
        while len(fps) < size:
            batch = gen.batch(min(BATCH, size - len(fps)))
            bulk(client, index, list(doc_lines(len(fps), batch, layout)))
            fps = np.concatenate([fps, batch])
        load = time.perf_counter() - t
        merge = settle(client, index, args.segments)
        figures = index_figures(client, index)
        emit(out, {"index": "doc-terms" if args.doc_terms else "doc", "n": size, "load_s": load, "merge_s": merge,
                   **figures})
        half = (args.queries + args.warmup) // 2
        picked = fps[gen.rng.integers(0, len(fps), half)]
        queries = np.concatenate([gen.flip(picked, 1.5), gen.fresh(args.queries + args.warmup - half)])
        gen.rng.shuffle(queries)
        for name, store in stores.items():
            def run(q: object, store: ElasticsearchStore = store) -> int:
                ids, got = store.candidates(int(q), VERSION, k=3)  # type: ignore[call-overload]
                return len(rerank(int(q), ids, got, 3))  # type: ignore[call-overload]
            row = timed(client, queries.tolist(), run, args.warmup)
            row["candidates"] = float(np.mean([len(store.candidates(int(q), VERSION, k=3)[0]) for q in queries[:100]]))
            emit(out, {"index": "doc", "n": size, "query": name, **row})


def run_levels(args: argparse.Namespace, client: Elasticsearch, gen: Generator, out: object) -> None:
    """The levels index: documents with their keys and parts, grown through ``--level-sizes``."""
    store = ElasticsearchStore(client, "bench-scale-levels")
    n = 0
    if args.resume:  # grow the index an earlier run left (new documents from a new pool of repeated keys)
        n = int(client.count(index=store.index)["count"])
        gen.rng = np.random.default_rng(args.seed + n)
    else:
        fresh_index(client, store.index, store)
    counts, df = corpus_shape()
    lg = LevelGenerator(gen, counts, df)
    for size in [s for s in args.level_sizes if s > n]:
        load = 0.0
        client.indices.put_settings(index=store.index, settings={"index": {"refresh_interval": "-1"}})
        while n < size:
            m = min(BATCH, size - n)
            fps, levels = gen.batch(m), lg.batch(m, n)
            t = time.perf_counter()
            bulk(client, store.index, list(doc_lines(n, fps, "8x8", levels)))
            load += time.perf_counter() - t
            n += m
        queries = [lg.query(copy=i % 2 == 0) for i in range(args.queries + args.warmup)]
        merge = settle(client, store.index, args.segments)
        emit(out, {"index": "levels", "n": size, "load_s": load, "merge_s": merge, **index_figures(client, store.index)})

        def run(q: object) -> int:
            parts_q, keys = q  # type: ignore[misc]
            return len(store.part_candidates(parts_q, keys, VERSION, limit=100))
        emit(out, {"index": "levels", "n": size, "query": "levels", **timed(client, queries, run, args.warmup)})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default=os.environ.get("SIMDUP_TEST_ES_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--sizes", default="100000,1000000,10000000", help="document-level index sizes ('' for none)")
    ap.add_argument("--level-sizes", default="100000,1000000", help="levels index sizes ('' for none)")
    ap.add_argument("--queries", type=int, default=400)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--segments", type=int, default=1, help="force-merge to at most this many segments")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--resume", action="store_true", help="grow the levels index an earlier run left")
    ap.add_argument("--doc-terms", action="store_true",
                    help="the 'terms' document layout, asked for its terms and for its blocks (as 8x8 asks)")
    ap.add_argument("--out", default="bench_scale.jsonl")
    args = ap.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    args.level_sizes = [int(s) for s in args.level_sizes.split(",") if s]
    client = Elasticsearch(args.url, request_timeout=3600)
    print(f"{os.cpu_count()} cores (shared); {args.queries} timed queries per line after {args.warmup} warm-up", flush=True)
    with open(args.out, "a", encoding="utf-8") as out:
        if args.level_sizes:
            run_levels(args, client, Generator(args.seed + 1), out)
        if args.sizes:
            run_doc(args, client, Generator(args.seed), out)


if __name__ == "__main__":
    main()
