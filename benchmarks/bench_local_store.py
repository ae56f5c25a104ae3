"""The embedded store: query, build, insert, groups.

For each size N (default 1M and 10M synthetic fingerprints) it prints

  * insert rate: 1M documents through ``LocalStore.put`` (StoredDoc with title and
    ~300 B of text, batches of ``--batch``) at the first size; at larger sizes the
    documented bulk path ``LocalStore.put_fingerprints`` (ids and fingerprints only);
  * index build: from SQLite (first open, no cache), from the index cache
    (``index-cache.npz``, a later open) and the numpy tables alone; index bytes and
    the process's resident-memory growth;
  * query: candidate lookup + exact re-rank (``rerank``) per query, µs p50/p95/mean,
    the table lookup alone, and numpy brute force (``bitwise_count`` over all N) in
    the same run, with the ratio;
  * groups of the first size (scan + all pairs within k = 3, dry run), time and pairs found,
    with the join's own layout (Manku's 10 tables of ~26 bits) and with 4 x 16 bits.

Data: random 64-bit fingerprints, 2% of them replaced by neighbours at distances
0..6 of other documents (so queries and the join find real pairs). Queries: half are
stored fingerprints with 0..4 bits flipped, half random.

    python benchmarks/bench_local_store.py [--sizes 1000000,10000000] [--queries 2000]
        [--rounds 3] [--dir DIR] [--keep]

The machine is shared and noisy: latencies are over all rounds (p95 shows the noise).
"""

from __future__ import annotations

import argparse
import gc
import math
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from simdup_es.groups import update_groups
from simdup_es.search import rerank
from simdup_es.store.base import StoredDoc
from simdup_es.join import join_blocks, join_pairs
from simdup_es.store.local import SNAPSHOT_NAME, LocalStore
from simdup_es.store.tables import TableIndex, TableLayout

VERSION = "bench-v1"
K = 3
TEXT = "近重复文档检测基准测试文本。" * 7  # ~300 bytes of UTF-8


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def synthetic(n: int, seed: int = 42) -> np.ndarray:
    rng = np.random.default_rng(seed)
    fps = rng.integers(0, 2**64, n, dtype=np.uint64, endpoint=False)
    planted = rng.choice(n, size=n // 50, replace=False)
    sources = rng.integers(0, n, size=len(planted))
    distance = rng.integers(0, 7, size=len(planted))
    out = fps.copy()
    for d in range(1, 7):
        sel = distance == d
        flips = np.zeros(sel.sum(), np.uint64)
        for _ in range(d):  # may hit a bit twice: distance <= d
            flips ^= np.uint64(1) << rng.integers(0, 64, sel.sum()).astype(np.uint64)
        out[planted[sel]] = fps[sources[sel]] ^ flips
    out[planted[distance == 0]] = fps[sources[distance == 0]]
    return out


def queries_for(fps: np.ndarray, count: int, seed: int = 7) -> list[int]:
    rng = np.random.default_rng(seed)
    near = fps[rng.integers(0, len(fps), count // 2)].copy()
    for i in range(len(near)):
        for b in rng.choice(64, size=int(rng.integers(0, 5)), replace=False):
            near[i] ^= np.uint64(1) << np.uint64(b)
    far = rng.integers(0, 2**64, count - count // 2, dtype=np.uint64, endpoint=False)
    out = np.concatenate([near, far])
    rng.shuffle(out)
    return [int(q) for q in out]


def ids_for(start: int, stop: int) -> list[str]:
    return [f"doc-{i:08d}" for i in range(start, stop)]


def percentiles(samples_ns: list[int]) -> tuple[float, float, float]:
    a = np.array(samples_ns) / 1000
    return float(np.percentile(a, 50)), float(np.percentile(a, 95)), float(a.mean())


def bench_queries(store: LocalStore, queries: list[int], rounds: int) -> tuple[list[int], int]:
    samples: list[int] = []
    found = 0
    for q in queries[:200]:  # warm-up
        store.candidates(q, VERSION, k=K)
    for r in range(rounds):
        for q in queries:
            t = time.perf_counter_ns()
            ids, fps = store.candidates(q, VERSION, k=K)
            matches = rerank(q, ids, fps, K)
            samples.append(time.perf_counter_ns() - t)
            if r == 0:
                found += len(matches)
    return samples, found


def bench_lookup(table: TableIndex, queries: list[int], rounds: int) -> list[int]:
    samples = []
    for _ in range(rounds):
        for q in queries:
            t = time.perf_counter_ns()
            table.lookup(q, K)
            samples.append(time.perf_counter_ns() - t)
    return samples


def bench_brute(fps: np.ndarray, queries: list[int]) -> tuple[list[int], list[set[str]]]:
    samples, found = [], []
    for q in queries:
        t = time.perf_counter_ns()
        hits = np.flatnonzero(np.bitwise_count(fps ^ np.uint64(q)) <= K)
        samples.append(time.perf_counter_ns() - t)
        found.append({f"doc-{i:08d}" for i in hits.tolist()})
    return samples, found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000000,10000000")
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--brute-queries", type=int, default=100, help="queries for numpy brute force (slow at 10M)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=1000, help="documents per put() call")
    ap.add_argument("--dir", type=Path, help="where stores go (default: a temp dir, removed afterwards)")
    ap.add_argument("--keep", action="store_true", help="keep the stores")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    root = args.dir or Path(tempfile.mkdtemp(prefix="simdup-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, str]] = []

    def report(name: str, value: str) -> None:
        rows.append((name, value))
        print(f"  {name:<52} {value}", flush=True)

    print(f"stores in {root}; k = {K}, tables: {TableLayout.for_k(K).widths}")
    try:
        for size_no, n in enumerate(sizes):
            label = f"{n / 1e6:g}M"
            print(f"\n== {label} fingerprints", flush=True)
            fps = synthetic(n)
            path = root / f"store-{label}"
            shutil.rmtree(path, ignore_errors=True)
            store = LocalStore(path)
            store.setup()
            step = 1_000_000
            t0 = time.perf_counter()
            if size_no == 0:
                for start in range(0, n, args.batch):
                    stop = min(n, start + args.batch)
                    docs = [StoredDoc(i, int(f), VERSION, TEXT, "标题") for i, f in zip(ids_for(start, stop), fps[start:stop].tolist())]
                    store.put(docs)
                how = f"put(), batches of {args.batch}, with title+text"
            else:
                for start in range(0, n, step):
                    stop = min(n, start + step)
                    store.put_fingerprints(ids_for(start, stop), fps[start:stop], VERSION)
                how = "put_fingerprints(), 1M per call"
            seconds = time.perf_counter() - t0
            report(f"insert {label} ({how})", f"{seconds:7.1f} s  {n / seconds:10,.0f} docs/s")
            report("  store on disk", f"{sum(p.stat().st_size for p in path.iterdir()) / 2**20:7.0f} MiB")
            store.close()
            gc.collect()

            # Build 1: first open, everything read from SQLite (writes the cache).
            (path / SNAPSHOT_NAME).unlink(missing_ok=True)
            before = rss_mib()
            store = LocalStore(path)
            t0 = time.perf_counter()
            stats = store.index_stats()
            report("index build from SQLite (+ write cache)", f"{time.perf_counter() - t0:7.2f} s")
            report("  index size (tables + offsets)", f"{stats['bytes'] / 2**20:7.0f} MiB ({stats['tables']} tables)")
            report("  process RSS growth", f"{rss_mib() - before:7.0f} MiB")
            store.close()
            del store
            gc.collect()
            # Build 2: a later open, from the cache.
            store = LocalStore(path)
            t0 = time.perf_counter()
            store.index_stats()
            cache = path / SNAPSHOT_NAME
            report("index build from index-cache.npz" if cache.exists() else "index build again (no cache: small store)",
                   f"{time.perf_counter() - t0:7.2f} s" + (f"  (cache {cache.stat().st_size / 2**20:.0f} MiB)" if cache.exists() else ""))
            # Build 3: numpy tables alone.
            t0 = time.perf_counter()
            table = TableIndex(np.arange(n, dtype=np.int64), fps, TableLayout.for_k(K))
            report("numpy tables alone (4 x sort + offsets)", f"{time.perf_counter() - t0:7.2f} s")

            queries = queries_for(fps, args.queries)
            samples, found = bench_queries(store, queries, args.rounds)
            p50, p95, mean = percentiles(samples)
            report(f"query: candidates + rerank ({len(queries)} q x {args.rounds})",
                   f"p50 {p50:6.1f} µs  p95 {p95:6.1f} µs  mean {mean:6.1f} µs  ({found} matches)")
            lp50, lp95, lmean = percentiles(bench_lookup(table, queries, args.rounds))
            report("  table lookup alone", f"p50 {lp50:6.1f} µs  p95 {lp95:6.1f} µs  mean {lmean:6.1f} µs")
            bq = queries[: args.brute_queries]
            bsamples, bfound = bench_brute(fps, bq)
            bp50, bp95, bmean = percentiles(bsamples)
            own = [{m.id for m in rerank(q, *store.candidates(q, VERSION, k=K), K)} for q in bq]
            differ = sum(a != b for a, b in zip(own, bfound))
            report(f"numpy brute force ({len(bq)} q)", f"p50 {bp50:6.0f} µs  p95 {bp95:6.0f} µs  mean {bmean:6.0f} µs")
            report("  same match sets as brute force", "yes, every query" if not differ else f"NO: {differ} queries differ")
            report("  speed-up over brute force (p50)", f"{bp50 / p50:7.0f} x")

            if size_no == 0:
                t0 = time.perf_counter()
                summary = update_groups(store, k=K, dry_run=True)
                seconds = time.perf_counter() - t0
                report(f"groups (scan + self-join) {label}, k = {K}", f"{seconds:7.2f} s  {summary.pairs:,} pairs of distinct fingerprints")
                for blocks in (join_blocks(n, K), K + 1):
                    t0 = time.perf_counter()
                    a, _, _ = join_pairs(fps, K, blocks=blocks)
                    report(f"  join_pairs alone, {blocks} blocks ({math.comb(blocks, blocks - K)} tables)",
                           f"{time.perf_counter() - t0:7.2f} s  {len(a):,} pairs")
            store.close()
            del table, store
            gc.collect()
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(root, ignore_errors=True)

    print("\n| measurement | result |\n|---|---|")
    for name, value in rows:
        print(f"| {name.strip()} | {value.strip()} |")


if __name__ == "__main__":
    main()
