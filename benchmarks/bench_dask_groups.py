"""Duplicate groups at 1 million fingerprints on the local node: the single-process job vs the Dask job.

Loads ``--size`` synthetic fingerprints with planted clusters (10% of the documents
in clusters of 2-8 within distance 1-3; :func:`bench_groups.plant`) into
``simdup-bench-dask-<n>`` (outside the clock), then, alternating, in one process:

* ``single``: :func:`simdup_es.groups.update_groups` (dry run: read, join, components, plan);
* ``dask``: :func:`simdup_es.dask_groups.dask_update_groups` (dry run) on a
  ``LocalCluster`` of ``--workers`` worker processes of one thread each, started once
  outside the clock.

Both are dry runs, so every round does the same work (the writes are the same bulk
partial updates in both). Each is checked against the planted clusters. Prints each
run's wall time, its phases and fingerprints per second. The machine has 2 cores
shared with other jobs and the node runs on it too: the Dask figures show the
overhead of the distributed plan on one machine, not a cluster's speed.

    SIMDUP_TEST_ES_URL=http://127.0.0.1:9200 .venv/bin/python benchmarks/bench_dask_groups.py [--size 1000000]
        [--workers 2] [--rounds 2] [--keep]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from distributed import Client, LocalCluster
from elasticsearch import Elasticsearch

from simdup_es.dask_groups import dask_update_groups
from simdup_es.es.connection import ConnectionSettings
from simdup_es.groups import GroupsSummary, update_groups
from simdup_es.store.elasticsearch import ElasticsearchStore

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_groups import load, plant  # noqa: E402


def show(label: str, n: int, s: GroupsSummary, total: float) -> None:
    phases = "  ".join(f"{name} {sec:.1f} s" for name, sec in s.seconds.items())
    print(f"  {label:<7} {total:7.2f} s  {n / total:9,.0f} fingerprints/s   {phases}   "
          f"({s.pairs:,} pairs, {s.groups:,} groups of {s.grouped:,})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="Keep the index (and reuse one of the right size).")
    args = parser.parse_args()
    url = os.environ.get("SIMDUP_TEST_ES_URL", "http://127.0.0.1:9200")
    client = Elasticsearch(url, request_timeout=300)
    n = args.size
    rng = np.random.default_rng(n)
    fps, cluster = plant(n, 0.1, rng)
    planted = len(np.unique(cluster[cluster >= 0]))
    index = f"simdup-bench-dask-{n}"
    if not (client.indices.exists(index=index) and client.count(index=index)["count"] == n):
        seconds = load(client, index, fps)
        print(f"loaded {n:,} documents in {seconds:.1f} s; {int((cluster >= 0).sum()):,} in {planted:,} planted clusters")
    settings = ConnectionSettings(url=url)
    try:
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster_, Client(cluster_) as dask:
            print(f"{os.cpu_count()} cores; Dask LocalCluster of {args.workers} worker processes")
            for round_ in range(args.rounds):
                for way in (("single", "dask") if round_ % 2 == 0 else ("dask", "single")):
                    started = time.perf_counter()
                    if way == "single":
                        summary = update_groups(ElasticsearchStore(client, index), dry_run=True)
                    else:
                        summary = dask_update_groups(dask, settings, index, dry_run=True)
                    total = time.perf_counter() - started
                    assert (summary.groups, summary.grouped) == (planted, int((cluster >= 0).sum())), way
                    show(way, n, summary, total)
    finally:
        if not args.keep:
            client.options(ignore_status=404).indices.delete(index=index)


if __name__ == "__main__":
    main()
