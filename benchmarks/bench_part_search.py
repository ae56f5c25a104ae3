"""Latency and node CPU of the level-key search (``ElasticsearchStore.part_candidates``) on a loaded index.

Queries are the keys of stored documents, read from ``_source`` (300 documents at random, seeded):
half of each document's keys, the rest fresh random keys, no parts. The first 50 warm up; the other
250 are timed in the client (p50/p95) and on the node (process CPU before and after, divided by the
queries, as ``bench_scale.py`` measures it). Nothing is written.

To compare two versions of the library on the same index, run it once with each, alternately, the
other one first on the path (``PYTHONPATH`` goes before the installed package)::

    python benchmarks/bench_part_search.py --url http://127.0.0.1:9266 --index bench-scale-levels
    PYTHONPATH=/path/to/other/checkout python benchmarks/bench_part_search.py --url ... --index ...

The index is one ``bench_scale.py --level-sizes N`` left (its documents' version is
``bench_scale.VERSION``). The first line on stderr says which library ran.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from elasticsearch import Elasticsearch

sys.path.insert(1, str(Path(__file__).resolve().parent))  # after PYTHONPATH: the library stays the one asked for
import simdup_es  # noqa: E402
from bench_scale import VERSION, timed  # noqa: E402
from simdup_es import keys  # noqa: E402
from simdup_es.store.elasticsearch import ElasticsearchStore  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--index", default="bench-scale-levels")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    print(f"simdup_es from {Path(simdup_es.__file__).parent}", file=sys.stderr)
    client = Elasticsearch(args.url, request_timeout=120)
    store = ElasticsearchStore(client, args.index)
    rng = np.random.default_rng(args.seed)
    sample = client.search(index=args.index, size=300, source=[keys.KEYS], query={
        "function_score": {"random_score": {"seed": args.seed, "field": "_seq_no"}}})["hits"]["hits"]
    queries = []
    for hit in sample:
        held = [int(k, 16) for k in hit["_source"][keys.ROOT][keys.KEYS_NAME]]
        queries.append(held[: len(held) // 2] + rng.integers(0, 2**63, len(held) - len(held) // 2).tolist())
    row = timed(client, queries, lambda asked: len(store.part_candidates([], asked, VERSION, limit=100)), 50)
    print(json.dumps({"queries": len(queries) - 50, **{name: round(value, 2) for name, value in row.items()}}))


if __name__ == "__main__":
    main()
