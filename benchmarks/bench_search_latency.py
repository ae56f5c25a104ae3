"""Search latency with the comparison matrix at 100,000 stored documents, beside MinHash LSH.

What a user's search costs end to end (:func:`simdup_es.find_copies`: unify, fingerprint
and levels of the query, candidates, the matrix on each, the judgement), p50 and p95 per
query, on the embedded store and (with ``SIMDUP_TEST_ES_URL`` set) on Elasticsearch,
for three kinds of query:

* ``2 kB``: an edited copy (a few characters replaced) of a 1.5 to 2.5 kB corpus
  document whose 3 edited copies are stored;
* ``short``: a 40 to 160 character cut of a corpus document, with one character
  replaced, whose 2 other edited copies are stored (among the short texts of the store);
* ``30k``: 30,000 characters of consecutive corpus documents, all of them stored.

The reference, in the same run on the same stored texts and queries: MinHash LSH
(datasketch, 128 permutations, threshold 0.5, jieba words), the query's MinHash plus
the lookup.

The store: the zh corpus (data/zh-docs.jsonl from scripts/fetch-corpus) and the planted
copies, filled up to ``--docs`` with synthetic documents: a corpus document whose CJK
characters are each replaced by one drawn (seeded, per document) from the corpus's
3,000 most frequent, so that each is distinct (its keys and fingerprint match nothing)
but reads to the pipeline like Chinese of the same length and layout. Those stand for
the bulk of a large store that a query does not copy.

    python benchmarks/bench_search_latency.py [--docs 100000] [--queries 100] [--store DIR] [--index NAME]
        [--force-merge] [--again] [--cold] [--no-minhash]

``--store DIR`` keeps (and on a later run reuses) the embedded store; ``--index`` the
Elasticsearch index (deleted at the end unless given); ``--force-merge`` merges that index
into one segment per shard before its queries (:meth:`ElasticsearchStore.force_merge`; the
number of segments is printed either way). The machine is shared and noisy:
read the figures as ratios to MinHash's in the same run; this process's CPU per query (mean) and the
time each kind's queries spent in each store call (``key_frequencies``, ``copy_candidates``, ``get``...) is logged beside them, and
the node's request cache is cleared before a store's queries (a kept ``--index`` answers no count
from an earlier run's). ``--cold`` empties the comparer's caches before each query. ``--again`` adds a column:
the same queries run a second time, when the candidates' unified texts and sentences
are kept from the first (the comparer's caches, simdup_es.caches.TextCaches).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_copies  # noqa: E402  (the evaluation's edits and MinHash tokens)

DATA = Path(os.environ.get("SIMDUP_DATA") or ROOT / "data")
KINDS = ("2 kB", "short", "30k")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def corpus() -> list[dict]:
    path = DATA / "zh-docs.jsonl"
    if not path.exists():
        sys.exit(f"{path} is missing: run scripts/fetch-corpus first")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def build(docs: list[dict], n_docs: int, n_queries: int, seed: int) -> tuple[dict[str, str], dict[str, list[tuple[str, str]]]]:
    """The stored texts by id, and the queries of each kind as ``(id, text)``."""
    rng = random.Random(seed)
    stored = {d["id"]: d["text"] for d in docs}
    cjk = "".join(ch for ch, _ in Counter(ch for d in docs for ch in d["text"] if eval_copies._CJK.match(ch))
                  .most_common(3000))
    queries: dict[str, list[tuple[str, str]]] = {k: [] for k in KINDS}

    mid = [d for d in docs if 1500 <= len(d["text"]) <= 2500]
    for n, d in enumerate(rng.sample(mid, n_queries)):
        for c in range(3):
            stored[f"{d['id']}~copy{c}"] = eval_copies.replace_chars(d["text"], 5, rng, cjk)
        queries["2 kB"].append((f"q2k{n}", eval_copies.replace_chars(d["text"], 5, rng, cjk)))

    cuts = [c for d in rng.sample(docs, min(len(docs), 4 * n_queries)) for c in eval_copies.short_cuts(d["text"])[:1]]
    for n, cut in enumerate(cuts[:n_queries]):
        for c in range(2):
            stored[f"short{n}~copy{c}"] = eval_copies.replace_chars(cut, 1, rng, cjk)
        queries["short"].append((f"qshort{n}", eval_copies.replace_chars(cut, 1, rng, cjk)))

    for n in range(max(1, n_queries // 10)):
        start, text = rng.randrange(len(docs)), ""
        while len(text) < 30_000:
            text += docs[start % len(docs)]["text"] + "\n"
            start += 1
        queries["30k"].append((f"q30k{n}", text[:30_000]))

    n = 0
    while len(stored) < n_docs:
        d = docs[rng.randrange(len(docs))]
        table: dict[str, str] = {}
        text = "".join(table.setdefault(ch, rng.choice(cjk)) if eval_copies._CJK.match(ch) else ch for ch in d["text"])
        stored[f"synthetic{n}"] = text
        n += 1
    return stored, queries


def percentiles(ms: list[float]) -> tuple[float, float]:
    ms = sorted(ms)
    return statistics.median(ms), ms[min(len(ms) - 1, int(0.95 * len(ms)))]


def time_queries(queries: dict[str, list[tuple[str, str]]], run: Callable[[str], int]) -> dict[str, tuple[list[float], int]]:
    out = {}
    for kind, qs in queries.items():
        ms, found = [], 0
        for _, text in qs:
            t = time.perf_counter()
            found += run(text) > 0
            ms.append(1000 * (time.perf_counter() - t))
        out[kind] = (ms, found)
    return out


def index(store, stored: dict[str, str]) -> float:  # type: ignore[no-untyped-def]
    from simdup_es import default_fingerprinter
    from simdup_es.indexer import index_items
    from simdup_es.sources import Record

    rejects: list = []
    t0, last = time.perf_counter(), [0.0]

    def progress(n: int) -> None:
        if time.perf_counter() - last[0] > 30:
            last[0] = time.perf_counter()
            log(f"  indexed {n:,} of {len(stored):,}")

    items: Iterator[Record] = (Record(text, "bench", doc_id) for doc_id, text in stored.items())
    summary = index_items(items, store, default_fingerprinter(), on_reject=rejects.append, on_progress=progress)
    store.refresh()
    if rejects:
        log(f"  {len(rejects)} rejected, e.g. {rejects[0]}")
    log(f"  {summary.indexed:,} indexed in {time.perf_counter() - t0:.0f} s")
    return time.perf_counter() - t0


STORE_CALLS = ("key_frequencies", "copy_candidates", "part_candidates", "candidates", "get")


def timed_calls(store) -> dict[str, list[float]]:  # type: ignore[no-untyped-def]
    """Time each of the store's :data:`STORE_CALLS` (seconds, by name) from now on, wrapping them on this object."""
    spent: dict[str, list[float]] = {name: [] for name in STORE_CALLS}
    for name in STORE_CALLS:
        def timed(*args, _call=getattr(store, name), _spent=spent[name], **kwargs):  # type: ignore[no-untyped-def]
            t = time.perf_counter()
            try:
                return _call(*args, **kwargs)
            finally:
                _spent.append(time.perf_counter() - t)
        setattr(store, name, timed)
    return spent


def simdup_runs(store, queries, again: bool = False, cold: bool = False):  # type: ignore[no-untyped-def]
    from simdup_es import default_fingerprinter
    from simdup_es.multilevel import MultiParams
    from simdup_es.parts import PartPrinter
    from simdup_es.search import comparer, find_copies

    # Each store's first pass starts cold (a comparer of its own, and its caches): the stores hold the
    # same texts, and what an earlier store's queries left in the caches would spare this one the work.
    printer, compare, params = PartPrinter(default_fingerprinter()), comparer(), MultiParams()
    find_copies(store, queries["2 kB"][0][1], printer=printer, compare=compare, params=params)  # load the tables
    compare.caches.clear()
    if hasattr(store, "client"):  # no counts from the node's request cache of an earlier run on a kept --index
        store.client.indices.clear_cache(index=store.index, request=True)

    def run(text: str) -> int:
        if cold:  # every query's candidates read, unified where not stored so, and scanned anew
            compare.caches.clear()
        return len(find_copies(store, text, printer=printer, compare=compare, params=params))

    spent, first = timed_calls(store), {}
    for kind, some in queries.items():  # each kind's store calls, beside its time per query
        done, cpu = {name: len(times) for name, times in spent.items()}, time.process_time()
        first.update(time_queries({kind: some}, run))
        log(f"  {kind}: this process's CPU {1000 * (time.process_time() - cpu) / len(some):.1f} ms per query; "
            "store calls, ms per query: " + ", ".join(
                f"{name} {1000 * sum(times[done[name]:]) / len(some):.1f}" for name, times in spent.items()
                if len(times) > done[name]))
    if not again:
        return first, None
    # The same queries once more: their candidates' unified texts and sentences are now kept.
    return first, time_queries(queries, run)


def minhash_runs(stored: dict[str, str], queries):  # type: ignore[no-untyped-def]
    from datasketch import MinHashLSH

    t0 = time.perf_counter()
    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    with lsh.insertion_session() as session:
        for doc_id, text in stored.items():
            session.insert(doc_id, eval_copies.minhash(text))
    log(f"  MinHash LSH of {len(stored):,} documents in {time.perf_counter() - t0:.0f} s")
    return time_queries(queries, lambda text: len(lsh.query(eval_copies.minhash(text))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=100, help="queries of the 2 kB and short kinds (30k: a tenth)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--store", type=Path, help="embedded store folder, kept and reused")
    ap.add_argument("--index", help="Elasticsearch index name, kept and reused (SIMDUP_TEST_ES_URL)")
    ap.add_argument("--force-merge", action="store_true",
                    help="merge the Elasticsearch index into one segment per shard before its queries")
    ap.add_argument("--no-minhash", action="store_true",
                    help="leave MinHash LSH out (minutes at 100,000 documents): to time two versions of simdup-es "
                         "one after the other on one kept --store")
    ap.add_argument("--cold", action="store_true",
                    help="empty the comparer's caches before each query (no candidate's text kept from an earlier one)")
    ap.add_argument("--again", action="store_true",
                    help="time the embedded store's queries a second time, with their candidates' texts cached")
    args = ap.parse_args()

    from simdup_es.store import open_store

    stored, queries = build(corpus(), args.docs, args.queries, args.seed)
    log(f"{len(stored):,} stored texts; queries: " + ", ".join(f"{k} {len(v)}" for k, v in queries.items()))
    results: dict[str, dict[str, tuple[list[float], int]]] = {}

    with tempfile.TemporaryDirectory() as tmp:
        path = args.store or Path(tmp) / "store"
        reuse = (path / "simdup.sqlite3").exists()
        with open_store(path=path, create=not reuse) as store:
            if not reuse:
                log("embedded store: indexing")
                index(store, stored)
            log("embedded store: queries")
            results["simdup, embedded"], second = simdup_runs(store, queries, args.again, args.cold)
            if second is not None:
                results["simdup, embedded, again"] = second

    url = os.environ.get("SIMDUP_TEST_ES_URL")
    if url:
        name = args.index or f"bench-latency-{os.getpid()}"
        try:
            with open_store(url, index=name, create=True) as store:
                if store.count() < len(stored):
                    log(f"Elasticsearch {url} index {name}: indexing")
                    index(store, stored)
                if args.force_merge:
                    log("Elasticsearch: force merge")
                    store.force_merge()
                segments = store.client.indices.segments(index=name)["indices"][name]["shards"]
                log("Elasticsearch: segments per shard: " + ", ".join(
                    str(sum(len(c["segments"]) for c in copies if c["routing"]["primary"])) for copies in segments.values()))
                log("Elasticsearch: queries")
                results["simdup, Elasticsearch"] = simdup_runs(store, queries, cold=args.cold)[0]
        finally:
            if not args.index:
                from elasticsearch import Elasticsearch

                Elasticsearch(url).indices.delete(index=name, ignore_unavailable=True)
    if not args.no_minhash:
        log("MinHash LSH: index and queries")
        results["MinHash LSH"] = minhash_runs(stored, queries)

    print(f"\n{len(stored):,} stored documents; ms per query, p50 / p95 (found: queries with any hit)\n")
    print("| query | " + " | ".join(results) + " |")
    print("|---|" + "---:|" * len(results))
    for kind in KINDS:
        cells = []
        for res in results.values():
            ms, found = res[kind]
            p50, p95 = percentiles(ms)
            cells.append(f"{p50:.1f} / {p95:.1f} (found {found}/{len(ms)})")
        print(f"| {kind} ({len(queries[kind])}) | " + " | ".join(cells) + " |")
    if args.no_minhash:
        return
    ref = {kind: percentiles(results["MinHash LSH"][kind][0])[0] for kind in KINDS}
    for name, res in results.items():
        if name != "MinHash LSH":
            print(f"{name}: p50 / MinHash p50 = " + ", ".join(
                f"{kind} {percentiles(res[kind][0])[0] / ref[kind]:.1f}x" for kind in KINDS))


if __name__ == "__main__":
    main()
