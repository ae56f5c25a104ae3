"""Duplicate groups on the local node: ``update_groups`` for 100k and 1M documents.

For each size it loads synthetic fingerprints with planted clusters into a
``simdup-bench-groups-<n>`` index (``ElasticsearchStore.put``, 5,000 documents a
request, two in flight, ``refresh_interval: -1`` while loading; outside the clock),
then times three runs of :func:`simdup_es.groups.update_groups` (wall clock of the
whole call):

1. first run: every grouped document gets ``dup_group``/``dup_group_size``/``dup_kind``;
2. re-run, nothing changed: read + join, no write;
3. after new documents arrive (1% more: a third random, a third joining planted
   clusters, a third making new pairs): only the changed documents are written.

and prints, per run, the phases (read = point-in-time walk of the fingerprints'
doc values, then the ids of the documents in groups; join = all pairs within k;
components = groups and the plan of writes; write = bulk partial updates +
refresh; other = mapping, refresh and point in time), pairs found, groups,
documents written, and the time per 1,000 documents. It checks the groups found against the planted
ones (random 64-bit fingerprints are ~32 bits apart, so no other pairs are
expected).

Planted clusters: ``--share`` of the documents (default 10%) sit in clusters of
2-8, each member within distance 1-3 of its cluster's first document.

    scripts/es-server start
    SIMDUP_TEST_ES_URL=http://127.0.0.1:9200 .venv/bin/python benchmarks/bench_groups.py [--sizes 100000 1000000] [--reuse] [--keep]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from elasticsearch import Elasticsearch

from simdup_es.groups import GroupsSummary, update_groups
from simdup_es.store.base import StoredDoc
from simdup_es.store.elasticsearch import ElasticsearchStore

PREFIX = "simdup-bench-groups"
VERSION = "bench.v1"
K = 3


def plant(n: int, share: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` fingerprints, and each one's planted cluster (-1 for none)."""
    fps = rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64, endpoint=True)
    cluster = np.full(n, -1, np.int64)
    pos, c = 0, 0
    while pos < int(n * share):
        size = int(rng.integers(2, 9))
        base = fps[pos]
        for m in range(1, size):
            if pos + m >= n:
                break
            bits = rng.choice(64, size=int(rng.integers(1, K + 1)), replace=False)
            fps[pos + m] = base ^ np.uint64(int(sum(1 << int(b) for b in bits)))
        cluster[pos : pos + size] = c
        pos, c = pos + size, c + 1
    order = rng.permutation(n)  # clusters spread over the index, not in one run of ids
    return fps[order], cluster[order]


def load(client: Elasticsearch, index: str, fps: np.ndarray, first_id: int = 0, *, fresh: bool = True) -> float:
    store = ElasticsearchStore(client, index, chunk_size=5000)
    if fresh:
        client.options(ignore_status=404).indices.delete(index=index)
        store.setup()
    client.indices.put_settings(index=index, settings={"index": {"refresh_interval": "-1"}})
    started = time.perf_counter()
    values = fps.tolist()
    for start in range(0, len(values), 50_000):
        batch = [StoredDoc(f"d{first_id + start + i:08d}", fp, VERSION) for i, fp in enumerate(values[start : start + 50_000])]
        report = store.put(batch)
        assert not report.failed, report.failed[:3]
    client.indices.put_settings(index=index, settings={"index": {"refresh_interval": None}})
    client.indices.refresh(index=index)
    return time.perf_counter() - started


def show(label: str, n: int, s: GroupsSummary, total: float) -> None:
    read = s.seconds["read"] + s.seconds["members"]
    other = total - sum(s.seconds.values())  # mapping, refresh, point in time
    phases = (f"read {read:6.2f} s (fingerprints {s.seconds['read']:.2f} + ids of {s.members:,} members "
              f"{s.seconds['members']:.2f})  join {s.seconds['join']:5.2f} s  components {s.seconds['components']:5.2f} s  "
              f"write {s.seconds['write']:6.2f} s  other {other:4.2f} s")
    print(f"  {label:<26} {total:7.2f} s  {total / n * 1000 * 1000:5.1f} ms/1k docs  {phases}")
    print(f"  {'':<26} {s.fingerprinted:,} docs, {s.pairs:,} pairs, {s.groups:,} groups of {s.grouped:,} docs "
          f"(largest {s.largest}); wrote {s.set:,}, cleared {s.cleared:,}, unchanged {s.unchanged:,}")


def timed(client: Elasticsearch, index: str) -> tuple[GroupsSummary, float]:
    started = time.perf_counter()
    summary = update_groups(ElasticsearchStore(client, index), k=K)
    return summary, time.perf_counter() - started


def bench(client: Elasticsearch, n: int, share: float, reuse: bool, keep: bool) -> None:
    rng = np.random.default_rng(n)
    fps, cluster = plant(n, share, rng)
    index = f"{PREFIX}-{n}"
    exists = client.indices.exists(index=index) and client.count(index=index)["count"] == n
    print(f"\n{n:,} documents, {int((cluster >= 0).sum()):,} in {len(np.unique(cluster[cluster >= 0])):,} planted clusters")
    if reuse and exists:
        print(f"  reusing {index} (run 1 writes only what is not there yet)")
    else:
        seconds = load(client, index, fps)
        print(f"  loaded in {seconds:.1f} s ({n / seconds:,.0f} docs/s)")
    try:
        first, seconds = timed(client, index)
        show("1. first run", n, first, seconds)
        planted = len(np.unique(cluster[cluster >= 0]))
        assert (first.groups, first.grouped) == (planted, int((cluster >= 0).sum())), "planted clusters not recovered"
        again, seconds = timed(client, index)
        show("2. re-run, nothing new", n, again, seconds)
        assert again.set == again.cleared == 0

        # 1% new documents: a third random, a third near copies of a planted cluster's first document
        # (the cluster grows: all its members get the new size), a third near copies of unclustered
        # documents (new groups of two).
        third_n = n // 300
        clustered = np.flatnonzero(cluster >= 0)
        heads = clustered[np.unique(cluster[clustered], return_index=True)[1]]
        loners = np.flatnonzero(cluster < 0)
        near = lambda fp: fp ^ np.uint64(1 << int(rng.integers(64)))  # noqa: E731
        new = rng.integers(0, np.iinfo(np.uint64).max, size=3 * third_n, dtype=np.uint64, endpoint=True)
        new[third_n : 2 * third_n] = [near(fps[h]) for h in rng.choice(heads, third_n, replace=False)]
        new[2 * third_n :] = [near(fps[x]) for x in rng.choice(loners, third_n, replace=False)]
        load(client, index, new, first_id=n, fresh=False)
        third, seconds = timed(client, index)
        show("3. after 1% new documents", n + len(new), third, seconds)
        assert (third.groups, third.grouped) == (planted + third_n, first.grouped + 3 * third_n)
    finally:
        if not keep:
            client.options(ignore_status=404).indices.delete(index=index)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--share", type=float, default=0.1, help="Share of documents in planted clusters.")
    parser.add_argument("--reuse", action="store_true", help="Reuse an index of the right size from an earlier run.")
    parser.add_argument("--keep", action="store_true", help="Keep the indices afterwards.")
    args = parser.parse_args()
    url = os.environ.get("SIMDUP_TEST_ES_URL", "http://127.0.0.1:9200")
    client = Elasticsearch(url, request_timeout=300)
    health = client.cluster.health()
    print(f"node {url}: {health['status']}, {os.cpu_count()} cores here; k = {K}")
    for n in args.sizes:
        bench(client, n, args.share, args.reuse, args.keep)


if __name__ == "__main__":
    main()
