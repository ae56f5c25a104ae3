"""How ``groups --partial`` lists the ids of every document on Elasticsearch: one walk vs ``terms`` chunks.

``groups --partial`` looks up every document, so it reads every id. It reads them in one
walk over the documents that have a fingerprint or a group (``every=True`` of
:meth:`FingerprintScan.members <simdup_es.store.base.FingerprintScan.members>`); before,
it listed every distinct fingerprint in ``terms`` queries of 10,000 and walked each.
This indexes ``--docs`` random fingerprints and times both ways, alternating, from the
same point in time, and checks they return the same documents.

    SIMDUP_TEST_ES_URL=http://127.0.0.1:9299 .venv/bin/python benchmarks/bench_groups_members.py --docs 100000
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from simdup_es.es.connection import ConnectionSettings
from simdup_es.groups import distinct
from simdup_es.store.base import StoredDoc
from simdup_es.store.elasticsearch import ElasticsearchStore


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--index", default="simdup-bench-groups-members")
    args = parser.parse_args()
    store = ElasticsearchStore(ConnectionSettings(os.environ.get("SIMDUP_TEST_ES_URL", "http://127.0.0.1:9200")),
                               args.index)
    try:
        store.setup()
        fps = np.random.default_rng(1).integers(0, 2**63, args.docs, dtype=np.uint64).tolist()
        for start in range(0, args.docs, 5000):
            store.put([StoredDoc(f"d{i}", fps[i], "v1") for i in range(start, min(args.docs, start + 5000))])
        store.refresh()
        times: dict[bool, list[float]] = {False: [], True: []}
        with store.scan() as scan:
            found, codes, names = scan.fingerprints()
            node_fps, node_codes, _ = distinct(found, codes)
            wanted = {(fp, names[c]): n for n, (fp, c) in enumerate(zip(node_fps.tolist(), node_codes.tolist()))}
            keys = {}
            for _ in range(args.rounds):
                for every in (False, True):
                    started = time.perf_counter()
                    members = scan.members(wanted, every=every)
                    times[every].append(time.perf_counter() - started)
                    keys[every] = sorted(members.keys)
        assert keys[False] == keys[True] and len(keys[True]) == args.docs
        for every, label in ((False, "terms chunks of 10,000"), (True, "one walk (exists)")):
            print(f"{label:24s} median {np.median(times[every]):.2f} s over {args.rounds} rounds "
                  f"({', '.join(f'{t:.2f}' for t in times[every])}) for {args.docs:,} documents")
    finally:
        store.client.options(ignore_status=404).indices.delete(index=args.index)
        store.close()


if __name__ == "__main__":
    main()
