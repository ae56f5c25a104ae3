"""Candidate lookups of many documents on Elasticsearch: three ways of asking, in one run.

The incremental groups (docs/groups.md) look up the stored near-duplicates of every
new document. On a node of 100,000 synthetic fingerprints (10% in planted clusters;
loaded outside the clock, index ``simdup-bench-lookups``), the candidates of ``--queries``
stored fingerprints are asked:

* ``single``: one ``candidate_search`` per document, 100 to an ``_msearch`` (the way before);
* ``bool``: one search of 100 documents, a ``bool`` of their candidate queries
  (:func:`simdup_es.es.bodies.candidate_query` each);
* ``union``: :meth:`ElasticsearchStore.candidates_many <simdup_es.store.elasticsearch.ElasticsearchStore.candidates_many>`,
  one ``terms`` query per block field for as many documents as
  :func:`~simdup_es.keys.union_size` says, 50 searches to an ``_msearch``.

The ways alternate, ``--rounds`` times; each prints its median and its ratio to ``single``.
The union's answers are checked against the single searches' (same ids for every document).

    .venv/bin/python benchmarks/bench_lookups.py --es-url http://127.0.0.1:9200 [--queries 500] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence

import numpy as np
from elasticsearch import Elasticsearch

from simdup_es import keys
from simdup_es.es import bodies
from simdup_es.store.base import StoredDoc
from simdup_es.store.elasticsearch import ElasticsearchStore

INDEX = "simdup-bench-lookups"
VERSION = "bench-v1"
K = 3

Lookup = Callable[[ElasticsearchStore, Sequence[tuple[int, str]]], object]


def single(store: ElasticsearchStore, queries: Sequence[tuple[int, str]]) -> list[set[str]]:
    out = []
    for start in range(0, len(queries), 100):
        searches = []
        for fp, version in queries[start:start + 100]:
            searches += [{}, bodies.candidate_search(fp, version, K, size=store.page_size)]
        for got in store.client.msearch(index=store.index, searches=searches)["responses"]:
            out.append({hit["_id"] for hit in got["hits"]["hits"]})
    return out


def boolean(store: ElasticsearchStore, queries: Sequence[tuple[int, str]]) -> int:
    """Timed only (the hits are not told apart per document): returns how many came back."""
    hits = 0
    for start in range(0, len(queries), 100):
        clauses = [bodies.candidate_query(fp, version, K) for fp, version in queries[start:start + 100]]
        body = {"query": {"bool": {"filter": [{"bool": {"should": clauses, "minimum_should_match": 1}}]}},
                "_source": False, "docvalue_fields": [keys.FP, keys.VERSION], "size": 10_000, "sort": ["_doc"]}
        hits += len(store.client.search(index=store.index, body=body)["hits"]["hits"])
    return hits


def union(store: ElasticsearchStore, queries: Sequence[tuple[int, str]]) -> list[set[str]]:
    return [set(ids) for ids, _ in store.candidates_many(queries, k=K)]


def load(store: ElasticsearchStore, n: int, rng: np.random.Generator) -> np.ndarray:
    fps = rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64, endpoint=True)
    for c in range(0, n // 10, 5):  # clusters of 5, 1 bit apart from their first
        for m in range(1, 5):
            fps[c + m] = fps[c] ^ np.uint64(1 << int(rng.integers(0, 64)))
    for start in range(0, n, 20_000):
        store.put([StoredDoc(f"d{i:07d}", int(fps[i]), VERSION) for i in range(start, min(n, start + 20_000))])
    store.refresh()
    return fps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--es-url", required=True)
    parser.add_argument("--store-size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    client = Elasticsearch(args.es_url, request_timeout=120)
    client.options(ignore_status=404).indices.delete(index=INDEX)
    store = ElasticsearchStore(client, INDEX, chunk_size=5000)
    store.setup()
    fps = load(store, args.store_size, rng)
    picks = rng.choice(args.store_size, size=args.queries, replace=False)
    queries = [(int(fps[i]), VERSION) for i in picks]
    print(f"{store.count():,} documents, {args.queries} lookups; union searches hold "
          f"{keys.union_size(store.count(), K)} documents")
    assert union(store, queries) == single(store, queries), "the union search answers differently"
    ways: dict[str, Lookup] = {"single": single, "bool": boolean, "union": union}
    times: dict[str, list[float]] = {name: [] for name in ways}
    for round_ in range(args.rounds):
        for name in (list(ways) if round_ % 2 == 0 else list(ways)[::-1]):
            started = time.perf_counter()
            ways[name](store, queries)
            times[name].append(time.perf_counter() - started)
    base = statistics.median(times["single"])
    for name, got in times.items():
        print(f"{name:6} median {statistics.median(got):.2f} s {[round(t, 2) for t in got]}  "
              f"ratio to single {statistics.median(got) / base:.2f}x")
    client.indices.delete(index=INDEX)
    store.close()


if __name__ == "__main__":
    main()
