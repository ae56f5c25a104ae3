"""Indexing throughput: document fingerprint and levels (parts, sentence keys) per document.

Prints docs/s of ``PartPrinter.map_items`` (what ``index``, ``backfill``,
``search --queries`` and ``groups --partial`` run) with ``--workers`` 1 and 2, on
the first --docs documents of the zh corpus ($SIMDUP_DATA/zh-docs.jsonl, text and
title), best of --rounds. Each configuration runs in a fresh subprocess (fresh
pool included), rounds interleave the configurations so load from other processes
hits them alike. ``--ref DIR`` measures the package in DIR (e.g. another worktree)
beside this one, in the same run.

    python benchmarks/bench_index_levels.py [--docs 4000] [--rounds 3] [--ref /work/main]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one(docs: int, workers: int) -> float:
    """docs/s of one ``map_items`` pass in this process (the package on ``sys.path``)."""
    from simdup_es.fingerprint import Doc, Fingerprinter
    from simdup_es.parts import PartPrinter

    corpus = Path(os.environ.get("SIMDUP_DATA", ROOT / "data")) / "zh-docs.jsonl"
    with open(corpus, encoding="utf-8") as f:
        records = [json.loads(line) for _, line in zip(range(docs), f)]
    printer = PartPrinter(Fingerprinter())
    printer.fingerprinter.fingerprint("預熱")  # dictionaries loaded before the clock starts
    start = time.perf_counter()
    n = sum(1 for _ in printer.map_items(records, lambda r: Doc(r["text"], r.get("title")), workers=workers))
    elapsed = time.perf_counter() - start
    assert n == len(records)
    return n / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ref", help="source folder of a reference simdup_es, measured beside this one")
    ap.add_argument("--one", type=int, metavar="WORKERS", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(one(args.docs, args.one))
        return
    trees = {"this": str(ROOT)} | ({"ref": str(Path(args.ref).resolve())} if args.ref else {})
    best: dict[tuple[str, int], float] = {}
    for _ in range(args.rounds):
        for label, tree in trees.items():
            for workers in (1, 2):
                env = os.environ | {"PYTHONPATH": tree}
                out = subprocess.run(
                    [sys.executable, __file__, "--one", str(workers), "--docs", str(args.docs)],
                    env=env, check=True, capture_output=True, text=True, cwd=tree,
                ).stdout
                key = (label, workers)
                best[key] = max(best.get(key, 0.0), float(out))
    print(f"PartPrinter.map_items, {args.docs} zh docs, best of {args.rounds}; load average {os.getloadavg()}")
    for (label, workers), rate in best.items():
        print(f"  {label:5} workers={workers}: {rate:8.0f} docs/s  ({rate / best[(label, 1)]:.2f}x workers=1)")
    if args.ref:
        for workers in (1, 2):
            print(f"  this/ref workers={workers}: {best[('this', workers)] / best[('ref', workers)]:.2f}x")


if __name__ == "__main__":
    main()
