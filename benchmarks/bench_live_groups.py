"""Incremental groups: indexing 1,000 documents into a 100,000-document store, with and without group updates.

The goal: keeping the groups current costs at most 2x indexing without
them. The store holds 100,000 documents (synthetic fingerprints of the indexing
fingerprinter's version, loaded outside the clock): 10% in planted clusters of 2-8
within distance 1-3, plus one or two near copies (distance 0-3) of 30% of the new
documents, so the new documents join, merge and start groups. ``simdup groups`` is
run once before the trials.

The 1,000 new documents are the first records of ``data/zh-docs.jsonl`` (real
Chinese text). Each trial, in the same process and alternating the two ways:

* ``index``: :func:`simdup_es.indexer.index_items` (fingerprints and levels on all
  cores, batches of 500), written with ``store.put`` (no groups) or
  :meth:`GroupKeeper.put <simdup_es.live_groups.GroupKeeper.put>` (groups kept);
* ``put``: the same documents already fingerprinted, written in batches of 500 by
  ``store.put`` or ``GroupKeeper.put``: the write alone, the strictest ratio.

A trial's documents get fresh ids and are deleted again after it (outside the
clock; through the keeper when it kept groups). After each trial with groups a full
dry ``update_groups`` must find nothing to change (checked, outside the clock).

    .venv/bin/python benchmarks/bench_live_groups.py [--docs 1000] [--store-size 100000] [--rounds 3]
        [--es-url http://127.0.0.1:9264] [--write-first]

``--write-first`` also measures the keeper's older way (``plan_first=False``: put the
documents, then regroup from the store and write every changed document's fields by
partial updates), in the same run, for a ratio beside the default way's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from simdup_es import default_fingerprinter
from simdup_es.groups import update_groups
from simdup_es.indexer import index_items
from simdup_es.live_groups import GroupKeeper
from simdup_es.parts import PartPrinter
from simdup_es.sources import Fields, Record, from_mapping
from simdup_es.store.base import Store, StoredDoc

DATA = Path(__file__).resolve().parents[1] / "data" / "zh-docs.jsonl"
BATCH = 500
PLAIN, PLANNED, WRITE_FIRST = "without groups", "with groups", "with groups, write first"


def records(n: int) -> list[dict[str, Any]]:
    out = []
    with DATA.open(encoding="utf-8") as f:
        for line in f:
            out.append(json.loads(line))
            if len(out) == n:
                return out
    raise SystemExit(f"{DATA} has only {len(out)} records; fewer than --docs {n}")


def base_fingerprints(n: int, near_of: list[int], rng: np.random.Generator) -> np.ndarray:
    """``n`` random fingerprints, 10% in clusters, then near copies of ``near_of``."""
    fps = rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64, endpoint=True)
    pos = 0
    while pos < n // 10:
        size = int(rng.integers(2, 9))
        for m in range(1, size):
            if pos + m < n:
                fps[pos + m] = flip(int(fps[pos]), int(rng.integers(1, 4)), rng)
        pos += size
    copies = [flip(fp, int(rng.integers(0, 4)), rng) for fp in near_of for _ in range(int(rng.integers(1, 3)))]
    fps[-len(copies):] = np.array(copies, dtype=np.uint64)
    return fps


def flip(fp: int, bits: int, rng: np.random.Generator) -> int:
    for b in rng.choice(64, size=bits, replace=False).tolist():
        fp ^= 1 << b
    return fp


def load(store: Store, fps: np.ndarray, version: str) -> None:
    ids = [f"base{i:07d}" for i in range(len(fps))]
    if hasattr(store, "put_fingerprints"):
        store.put_fingerprints(ids, fps, version)
    else:
        for start in range(0, len(ids), 20_000):
            store.put([StoredDoc(i, fp, version) for i, fp in zip(ids[start:start + 20_000],
                                                                    fps[start:start + 20_000].tolist())])
    store.refresh()
    summary = update_groups(store)
    print(f"store: {len(fps):,} documents, {summary.groups:,} groups with {summary.grouped:,} documents "
          f"(groups run {sum(summary.seconds.values()):.1f} s)")


def trial(store: Store, recs: list[dict[str, Any]], docs: list[StoredDoc], way: str, mode: str, tag: str) -> float:
    keeper = GroupKeeper(store, plan_first=mode == PLANNED) if mode != PLAIN else None
    started = time.perf_counter()
    if way == "index":
        items = [from_mapping({**r, "id": f"{tag}:{r['id']}"}, Fields("text", "title", "id"), "bench") for r in recs]
        assert all(isinstance(i, Record) for i in items)
        summary = index_items(items, store, default_fingerprinter(), on_reject=lambda r: None, batch_size=BATCH,
                              write=keeper.put if keeper else None)
        assert summary.indexed == len(recs), summary
    else:
        renamed = [StoredDoc(f"{tag}:{d.id}", d.fingerprint, d.version, d.text, d.title, levels=d.levels) for d in docs]
        for start in range(0, len(renamed), BATCH):
            (keeper.put if keeper else store.put)(renamed[start:start + BATCH])
    seconds = time.perf_counter() - started
    if keeper:
        full = update_groups(store, dry_run=True)
        assert (full.set, full.cleared) == (0, 0), ("incremental groups differ from a full run", full.to_dict())
    if keeper:
        s = keeper.summary
        print(f"    {way} with groups ({mode}): {s.updates} updates, {s.looked_at} documents looked at, {s.lookups} lookups, "
              f"{s.set} set, {s.cleared} cleared, {s.seconds:.2f} s in the keeper (put and groups)")
    ids = [f"{tag}:{r['id']}" for r in recs]
    (keeper.delete if keeper else store.delete)(ids)
    store.refresh()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--store-size", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--es-url", help="Also (instead) on this node (index simdup-bench-live).")
    parser.add_argument("--write-first", action="store_true",
                        help="Also measure GroupKeeper(plan_first=False): put, then regroup from the store.")
    args = parser.parse_args()
    rng = np.random.default_rng(29)
    recs = records(args.docs)
    printer = PartPrinter(default_fingerprinter())
    docs = []
    for r in recs:
        fp = printer.fingerprinter.fingerprint(r["text"], title=r.get("title"))
        docs.append(StoredDoc(r["id"], fp.value, fp.version, r["text"], r.get("title"), levels=printer.levels(r["text"])))
    near_of = [d.fingerprint for d in docs if rng.random() < 0.3]
    fps = base_fingerprints(args.store_size, near_of, rng)
    with tempfile.TemporaryDirectory() as tmp:
        store: Store
        if args.es_url:
            from elasticsearch import Elasticsearch

            from simdup_es.store.elasticsearch import ElasticsearchStore

            client = Elasticsearch(args.es_url, request_timeout=120)
            client.options(ignore_status=404).indices.delete(index="simdup-bench-live")
            store = ElasticsearchStore(client, "simdup-bench-live", chunk_size=5000)
            where = f"Elasticsearch {args.es_url}"
        else:
            from simdup_es.store.local import LocalStore

            store = LocalStore(Path(tmp) / "store")
            where = "embedded store"
        store.setup()
        print(f"{where}: {args.docs} new documents ({sum(1 for _ in near_of)} with planted near copies)")
        load(store, fps, docs[0].version)
        times: dict[tuple[str, str], list[float]] = {}
        modes = [PLAIN, PLANNED] + ([WRITE_FIRST] if args.write_first else [])
        n = 0
        for round_ in range(args.rounds):
            for way in ("index", "put"):
                for mode in (modes if round_ % 2 == 0 else modes[::-1]):
                    n += 1
                    times.setdefault((way, mode), []).append(trial(store, recs, docs, way, mode, f"t{n}"))
        for way in ("index", "put"):
            plain = statistics.median(times[(way, PLAIN)])
            print(f"{way:5}  " + "; ".join(
                f"{mode}: median {statistics.median(times[(way, mode)]):.2f} s "
                f"{[round(t, 2) for t in times[(way, mode)]]}"
                + (f", ratio {statistics.median(times[(way, mode)]) / plain:.2f}x" if mode != PLAIN else "")
                for mode in modes))
        store.close()


if __name__ == "__main__":
    main()
