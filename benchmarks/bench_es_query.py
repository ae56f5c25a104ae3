"""Query latency on Elasticsearch: candidate query + exact re-rank at 10k, 100k and 1M fingerprints.

One index grows through the sizes (``--sizes``). At each size it prints p50/p95
wall-clock latency (client included) of
  * the candidate query, 5 of 8 blocks equal (``k = 3``), and the re-rank,
  * a plain ``match`` query (top 10) on the documents' short text,
the mean number of candidates the query hands to the re-rank, and how the p50
grows with N, and the server's own ``took`` for the same requests (whole
milliseconds, without client and network). Then what ``simdup search`` does
(:func:`simdup_es.find_copies` without the comparison matrix: candidates,
re-rank, the matched documents) beside the bare 5-of-8 ``bool`` sent alone, in
the same loop, with the requests each search makes: on one long-lived store, and
on a new store (new client) per search, as a fresh ``simdup search`` process has. A sample of the queries is checked against brute force (numpy) at
every size.

Synthetic data, shaped like real fingerprints: bit frequencies spread like those of
the zh corpus (sd 0.084 around 0.5, so block values are skewed as in real data),
and 20% of documents in near-duplicate groups (a centre and 3 neighbours at
Binomial(64, 3/64) bits). Texts are 40 characters drawn Zipf-wise from 3,000 CJK
characters. Queries: half are indexed fingerprints with 0-3 bits flipped (they
have near-duplicates), half fresh fingerprints (they mostly have none).

Loading: bulk through ``ElasticsearchStore.put`` in 5,000-document requests with
``refresh_interval: -1``, then a refresh and a force-merge to one segment.

    scripts/es-server start
    SIMDUP_TEST_ES_URL=http://127.0.0.1:9200 .venv/bin/python benchmarks/bench_es_query.py \\
        [--sizes 10000,100000,1000000] [--queries 500]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from elasticsearch import Elasticsearch

from simdup_es import keys
from simdup_es import simhash as sh
from simdup_es.es.connection import ConnectionSettings
from simdup_es.fingerprint import Fingerprint
from simdup_es.es.bodies import candidate_search
from simdup_es.search import find_copies, rerank
from simdup_es.store.base import StoredDoc
from simdup_es.store.elasticsearch import ElasticsearchStore

VERSION = "bench.1"
LAYOUTS = ("8x8, 5 of 8",)
K = 3


class Generator:
    """Real-like synthetic fingerprints and short texts, batch by batch."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.p = np.clip(self.rng.normal(0.5, 0.084, 64), 0.2, 0.8)  # per-bit frequency, as in the zh corpus
        self.chars = np.array([chr(c) for c in self.rng.choice(np.arange(0x4E00, 0x9FA6), 3000, replace=False)])
        weights = 1.0 / np.arange(1, 3001) ** 1.1
        self.char_p = weights / weights.sum()

    def fresh(self, n: int) -> np.ndarray:
        bits = self.rng.random((n, 64)) < self.p
        return np.packbits(bits, axis=1, bitorder="little").view("<u8").ravel().astype(np.uint64)

    def flip(self, fps: np.ndarray, mean_bits: float) -> np.ndarray:
        mask = np.packbits(self.rng.random((len(fps), 64)) < mean_bits / 64, axis=1, bitorder="little").view("<u8").ravel()
        return fps ^ mask.astype(np.uint64)

    def batch(self, n: int) -> np.ndarray:
        """``n`` fingerprints: 80% independent, 20% in groups of a centre and 3 neighbours."""
        groups = n // 20
        centres = self.fresh(groups)
        neighbours = self.flip(np.repeat(centres, 3), 3.0)
        out = np.concatenate([self.fresh(n - 4 * groups), centres, neighbours])
        self.rng.shuffle(out)
        return out

    def texts(self, n: int, length: int = 40) -> list[str]:
        idx = self.rng.choice(len(self.chars), size=(n, length), p=self.char_p)
        return ["".join(row) for row in self.chars[idx]]


def percentiles(ms: list[float]) -> tuple[float, float]:
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default=os.environ.get("SIMDUP_TEST_ES_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--check", type=int, default=100, help="queries checked against brute force at each size")
    ap.add_argument("--index", default="simdup-bench-query")
    ap.add_argument("--keep", action="store_true", help="leave the index behind")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    client = Elasticsearch(args.url, request_timeout=600)
    client.options(ignore_status=404).indices.delete(index=args.index)
    stores = {name: ElasticsearchStore(client, args.index, chunk_size=5000) for name in LAYOUTS}
    writer = next(iter(stores.values()))
    writer.setup()
    gen = Generator(args.seed)
    all_fps = np.zeros(0, dtype=np.uint64)
    sample_texts: list[str] = []
    rows = []
    print(f"{os.cpu_count()} cores; {args.queries} timed queries per line after {args.warmup} warm-up; "
          f"latency is wall-clock in the client (request + response parsing + re-rank)\n")

    for size in sizes:
        # -- load up to `size` ------------------------------------------------------------------
        client.indices.put_settings(index=args.index, settings={"index": {"refresh_interval": "-1"}})
        t = time.perf_counter()
        while len(all_fps) < size:
            n = min(50_000, size - len(all_fps))
            fps = gen.batch(n)
            texts = gen.texts(n)
            start = len(all_fps)
            docs = [StoredDoc(f"d{start + i}", int(fp), VERSION, text) for i, (fp, text) in enumerate(zip(fps.tolist(), texts))]
            report = writer.put(docs)
            assert not report.failed, report.failed[:3]
            all_fps = np.concatenate([all_fps, fps])
            sample_texts += texts[:200]
        load = time.perf_counter() - t
        loaded = size - (rows[-1]["n"] if rows else 0)
        t = time.perf_counter()
        client.indices.put_settings(index=args.index, settings={"index": {"refresh_interval": None}})
        client.indices.refresh(index=args.index)
        client.indices.forcemerge(index=args.index, max_num_segments=1)
        merge = time.perf_counter() - t
        assert writer.count() == size
        stats = client.indices.stats(index=args.index, metric="store")["indices"][args.index]["primaries"]["store"]
        print(f"N={size:>9,}: loaded {loaded:,} in {load:.1f} s ({loaded / load:,.0f} docs/s); refresh + force-merge "
              f"{merge:.1f} s; index {stats['size_in_bytes'] / 2**20:.0f} MiB", flush=True)

        # -- queries -----------------------------------------------------------------------------
        half = (args.queries + args.warmup) // 2
        picked = all_fps[gen.rng.integers(0, len(all_fps), half)]
        flips = gen.rng.integers(0, K + 1, half)
        near = np.array([_flip_exact(int(fp), int(d), gen.rng) for fp, d in zip(picked, flips)], dtype=np.uint64)
        queries = np.concatenate([near, gen.fresh(args.queries + args.warmup - half)])
        gen.rng.shuffle(queries)
        which, starts = gen.rng.integers(0, len(sample_texts), len(queries)), gen.rng.integers(0, 34, len(queries))
        match_texts = [sample_texts[i][j : j + 6] for i, j in zip(which, starts)]

        row: dict = {"n": size, "load_s": load, "merge_s": merge}
        for name, store in stores.items():
            lat, cands, found = [], [], []
            for i, q in enumerate(queries.tolist()):
                t = time.perf_counter()
                ids, fps = store.candidates(q, VERSION, k=K)
                matches = rerank(q, ids, fps, K)
                elapsed = (time.perf_counter() - t) * 1000
                if i >= args.warmup:
                    lat.append(elapsed)
                    cands.append(len(ids))
                    found.append(len(matches))
                if i < args.check:  # exact: the same set as brute force over everything indexed
                    d = sh.hamming_many(q, all_fps)
                    expected = {f"d{j}" for j in np.flatnonzero(d <= K)}
                    assert {m.id for m in matches} == expected, (name, sh.to_hex(q))
            row[name] = (*percentiles(lat), float(np.mean(cands)), float(np.mean(found)))
            # The same request bodies again, for the server's own "took" (no client, no network).
            took = []
            for i, q in enumerate(queries.tolist()):
                body = candidate_search(q, VERSION, K, size=store.page_size)
                body.update(_source=False, docvalue_fields=[keys.FP])
                response = client.search(index=args.index, body=body, filter_path=["took"])
                if i >= args.warmup:
                    took.append(response["took"])
            row[name + " took"] = percentiles(took)
        lat, took = [], []
        for i, text in enumerate(match_texts):
            t = time.perf_counter()
            response = client.search(index=args.index, query={"match": {"text": text}}, size=10, source=False)
            if i >= args.warmup:
                lat.append((time.perf_counter() - t) * 1000)
                took.append(response["took"])
        row["match"] = (*percentiles(lat), 0.0, 0.0)
        row["match took"] = percentiles(took)
        rows.append(row)
        for name in [*LAYOUTS, "match"]:
            p50, p95, cand, found = row[name]
            t50, t95 = row[name + " took"]
            extra = f"{cand:7.1f} candidates, {found:4.2f} matches/query" if name != "match" else "top 10 of a 6-character query"
            print(f"    {name:14s} p50 {p50:6.2f} ms  p95 {p95:6.2f} ms | server took p50 {t50:4.0f} ms  p95 {t95:4.0f} ms | "
                  f"{extra}", flush=True)
        print(f"    exact: {min(args.check, len(queries))} queries equal brute force over all {size:,}", flush=True)
        search_paths(args, client, stores[LAYOUTS[0]], queries)

    print("\nsummary (ms; growth = p50 / p50 at the smallest N)")
    head = f"{'N':>10} " + " ".join(f"| {name:>14} p50   p95  growth" for name in [*LAYOUTS, "match"])
    print(head)
    for row in rows:
        cells = []
        for name in [*LAYOUTS, "match"]:
            p50, p95 = row[name][:2]
            cells.append(f"| {'':>14}{p50:5.2f} {p95:5.2f} {p50 / rows[0][name][0]:6.2f}x")
        print(f"{row['n']:>10,} " + " ".join(cells))
    if not args.keep:
        client.indices.delete(index=args.index)
    client.close()


def search_paths(args: argparse.Namespace, client: Elasticsearch, store: ElasticsearchStore,
                 queries: np.ndarray) -> None:
    """p50 of ``find_copies`` (no matrix) beside the bare 5-of-8 ``bool``, interleaved, and requests per search."""
    settings = ConnectionSettings(url=args.url)
    bare, kept, fresh = [], [], []
    requests = {"long-lived store": 0, "new store per search": 0}

    def counted(target: ElasticsearchStore, name: str) -> None:
        transport = target.client.transport
        send = transport.perform_request

        def perform(*a, **kw):  # type: ignore[no-untyped-def]
            requests[name] += 1
            return send(*a, **kw)

        transport.perform_request = perform  # type: ignore[method-assign]

    own = ElasticsearchStore(settings, args.index, chunk_size=5000)
    counted(own, "long-lived store")
    for i, q in enumerate(queries.tolist()):
        fp = Fingerprint(q, VERSION)
        body = candidate_search(q, VERSION, K, size=store.page_size)
        t = time.perf_counter()
        client.search(index=args.index, body=body)
        t1 = time.perf_counter()
        find_copies(own, None, fingerprint=fp, matrix=False)
        t2 = time.perf_counter()
        with ElasticsearchStore(settings, args.index) as new:
            counted(new, "new store per search")
            find_copies(new, None, fingerprint=fp, matrix=False)
        t3 = time.perf_counter()
        if i == args.warmup - 1:
            requests = dict.fromkeys(requests, 0)
        if i >= args.warmup:
            bare.append((t1 - t) * 1000)
            kept.append((t2 - t1) * 1000)
            fresh.append((t3 - t2) * 1000)
    own.close()
    n = len(bare)
    p50 = percentiles(bare)[0]
    print(f"    bare 5-of-8 bool     p50 {p50:6.2f} ms  (1 request)")
    for name, lat in (("long-lived store", kept), ("new store per search", fresh)):
        print(f"    search, {name:20s} p50 {percentiles(lat)[0]:6.2f} ms  {percentiles(lat)[0] / p50:4.1f}x the bare "
              f"bool; {requests[name] / n:.2f} requests per search", flush=True)


def _flip_exact(fp: int, d: int, rng: np.random.Generator) -> int:
    for bit in rng.choice(64, size=d, replace=False):
        fp ^= 1 << int(bit)
    return fp


if __name__ == "__main__":
    main()
