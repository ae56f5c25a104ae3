"""Ways of counting a query's key holders on Elasticsearch, timed on ``bench_search_latency.py``'s index.

What :meth:`simdup_es.store.elasticsearch.ElasticsearchStore.key_frequencies` asks of a node, for the
keys each query of that benchmark counts (:func:`simdup_es.search.counted_keys`), in four forms that
give the same counts (checked first):

* ``msearch, narrowed``: a count of the key holders and a ``filters`` aggregation (a ``term`` filter
  per key) under a ``terms`` query of all the keys, in one ``_msearch`` (what OpenSearch is asked);
* ``msearch, every document``: the count, and the aggregation with no query (Elasticsearch counts each
  filter segment by segment from the inverted index), in one ``_msearch`` (what Elasticsearch is asked:
  :func:`simdup_es.es.bodies.key_frequency_search` with ``narrowed=False``);
* ``search, every document``: the aggregation with no query, the holders as a ``filter`` aggregation of
  the same search;
* ``search, narrowed + global``: the narrowed aggregation, the holders under a ``global`` one.

The node's request cache is off for the aggregations (each query's keys are new to the node in a search),
unless ``--cache``; the count of the key holders, the same body for every query, is cached as the store
leaves it (until a refresh changes the index).

    SIMDUP_TEST_ES_URL=http://127.0.0.1:9200 python benchmarks/bench_key_counts.py --index NAME [--queries 40] [--rounds 3]

``--index``: an index ``bench_search_latency.py --index NAME --docs D --queries Q`` filled (the same ``--docs``
and ``--queries`` here). Each round runs the forms in another order (rotated), so none always follows the same one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_search_latency as latency  # noqa: E402  (its queries)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--kind", default="2 kB", choices=latency.KINDS)
    ap.add_argument("--cache", action="store_true", help="leave the node's request cache on")
    args = ap.parse_args()

    from elasticsearch import Elasticsearch

    from simdup_es import default_fingerprinter, keys
    from simdup_es.es import bodies
    from simdup_es.parts import PartPrinter
    from simdup_es.search import counted_keys
    from simdup_es.text import unify

    es = Elasticsearch(os.environ.get("SIMDUP_TEST_ES_URL", "http://127.0.0.1:9200"), request_timeout=60)
    _, queries = latency.build(latency.corpus(), args.docs, args.queries, 1)
    printer = PartPrinter(default_fingerprinter())
    wanted = [counted_keys(printer.levels(unify(text)).key_values()) for _, text in queries[args.kind]]
    print(f"{len(wanted)} {args.kind} queries, keys counted per query: median {statistics.median(map(len, wanted))}")
    header: dict[str, Any] = {} if args.cache else {"request_cache": False}
    paths = ["responses.hits.total", "responses.aggregations", "responses.error"]

    def msearch(values: list[int], narrowed: bool) -> tuple[int, list[int]]:
        body = bodies.key_frequency_search(values, narrowed=narrowed)
        got = es.msearch(index=args.index, searches=[{}, bodies.KEY_HOLDERS, header, body], filter_path=paths)
        holders, counts = got["responses"]
        return holders["hits"]["total"]["value"], bodies.key_counts(counts["aggregations"]["keys"]["buckets"])

    def search(body: dict[str, Any], holders: Callable[[Any], int]) -> tuple[int, list[int]]:
        got = es.search(index=args.index, body=body, request_cache=args.cache, filter_path=["aggregations"])
        return holders(got["aggregations"]), bodies.key_counts(got["aggregations"]["keys"]["buckets"])

    holders = {"filter": {"exists": {"field": keys.KEYS}}}

    def every_document(values: list[int]) -> tuple[int, list[int]]:
        body = bodies.key_frequency_search(values, narrowed=False)
        body["aggs"]["holders"] = holders
        return search(body, lambda aggs: aggs["holders"]["doc_count"])

    def narrowed_global(values: list[int]) -> tuple[int, list[int]]:
        body = bodies.key_frequency_search(values)
        body["aggs"]["all"] = {"global": {}, "aggs": {"holders": holders}}
        return search(body, lambda aggs: aggs["all"]["holders"]["doc_count"])

    forms: dict[str, Callable[[list[int]], tuple[int, list[int]]]] = {
        "msearch, narrowed": lambda values: msearch(values, True),
        "msearch, every document": lambda values: msearch(values, False),
        "search, every document": every_document,
        "search, narrowed + global": narrowed_global,
    }
    first = [forms["msearch, narrowed"](values) for values in wanted]
    for name, form in forms.items():
        if [form(values) for values in wanted] != first:
            sys.exit(f"{name} counts otherwise")
    ms: dict[str, list[float]] = {name: [] for name in forms}
    names = list(forms)
    for rnd in range(args.rounds):  # the forms interleaved, each round in another order: the load and caches drift
        for name in names[rnd % len(names):] + names[:rnd % len(names)]:
            form = forms[name]
            for values in wanted:
                t = time.perf_counter()
                form(values)
                ms[name].append(1000 * (time.perf_counter() - t))
    segments = es.indices.segments(index=args.index)["indices"][args.index]["shards"]
    print(f"segments per shard: {[sum(len(c['segments']) for c in copies if c['routing']['primary']) for copies in segments.values()]}")
    print("| form | p50 ms | mean ms |\n|---|---:|---:|")
    for name, times in ms.items():
        print(f"| {name} | {statistics.median(times):.2f} | {statistics.mean(times):.2f} |")


if __name__ == "__main__":
    main()
