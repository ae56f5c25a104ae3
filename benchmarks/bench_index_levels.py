"""Indexing throughput: document fingerprint and levels (parts, sentence keys) per document.

Prints docs/s of ``PartPrinter.map_items`` (what ``index``, ``backfill``,
``search --queries`` and ``groups --partial`` run) with ``--workers`` 1 and 2, on
the first --docs documents of the zh corpus ($SIMDUP_DATA/zh-docs.jsonl, text and
title), best of --rounds. Then, in one process (no pool), microseconds per document
of the document fingerprint alone (``Fingerprinter.fingerprint_many``) and of the
fingerprint with every level (``PartPrinter``'s batch work, what each worker runs),
both in batches of 64, each on a fresh fingerprinter whose token cache fills as it goes (as in one
index pass): their difference is the cost of the levels; and of
``split_sentences_coded`` alone on the unified texts (compare's split). Each
configuration runs in a fresh subprocess, rounds interleave the configurations so
load from other processes hits them alike. ``--ref DIR`` measures the package in
DIR (e.g. another worktree) beside this one, in the same run.

    python benchmarks/bench_index_levels.py [--docs 4000] [--rounds 3] [--ref /work/main] [--no-map]
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
BATCH = 64  # documents per batch in the single-process figures


def _records(docs: int) -> list[dict]:
    corpus = Path(os.environ.get("SIMDUP_DATA", ROOT / "data")) / "zh-docs.jsonl"
    with open(corpus, encoding="utf-8") as f:
        return [json.loads(line) for _, line in zip(range(docs), f)]


def one(docs: int, workers: int) -> float:
    """docs/s of one ``map_items`` pass in this process (the package on ``sys.path``)."""
    from simdup_es.fingerprint import Doc, Fingerprinter
    from simdup_es.parts import PartPrinter

    records = _records(docs)
    printer = PartPrinter(Fingerprinter())
    printer.fingerprinter.fingerprint("預熱")  # dictionaries loaded before the clock starts
    start = time.perf_counter()
    n = sum(1 for _ in printer.map_items(records, lambda r: Doc(r["text"], r.get("title")), workers=workers))
    elapsed = time.perf_counter() - start
    assert n == len(records)
    return n / elapsed


def single(docs: int) -> dict[str, float]:
    """Microseconds per document, in this process: document fingerprint alone, and with every level."""
    from simdup_es.fingerprint import Doc, Fingerprinter
    from simdup_es.parts import PartPrinter

    batch = [Doc(r["text"], r.get("title")) for r in _records(docs)]
    chunks = [batch[i : i + BATCH] for i in range(0, len(batch), BATCH)]
    out = {}
    for label in ("doc", "levels"):
        # Each on a fresh fingerprinter, its token cache filled as it goes, as in one index pass.
        printer = PartPrinter(Fingerprinter())
        printer.fingerprinter.fingerprint("預熱")  # dictionaries and tables loaded before the clock starts
        work = printer.fingerprinter.fingerprint_many if label == "doc" else printer._items_many
        start = time.perf_counter()
        for chunk in chunks:
            work(chunk)
        out[label] = (time.perf_counter() - start) / len(batch) * 1e6
    # What compare() splits each text of a pair with, on the unified texts.
    from simdup_es.sentences import WordCodes, split_sentences_coded
    from simdup_es.text import unify

    unified = [unify(doc.text) for doc in batch]
    start = time.perf_counter()
    for text in unified:
        split_sentences_coded(text, WordCodes())
    out["coded"] = (time.perf_counter() - start) / len(batch) * 1e6
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ref", help="source folder of a reference simdup_es, measured beside this one")
    ap.add_argument("--no-map", action="store_true", help="only the single-process figures")
    ap.add_argument("--one", type=int, metavar="WORKERS", help=argparse.SUPPRESS)
    ap.add_argument("--single", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(one(args.docs, args.one))
        return
    if args.single:
        print(json.dumps(single(args.docs)))
        return
    trees = {"this": str(ROOT)} | ({"ref": str(Path(args.ref).resolve())} if args.ref else {})
    best: dict[tuple[str, int], float] = {}
    us: dict[tuple[str, str], float] = {}
    for _ in range(args.rounds):
        for label, tree in trees.items():
            env = os.environ | {"PYTHONPATH": tree}
            run = [sys.executable, __file__, "--docs", str(args.docs)]
            for workers in () if args.no_map else (1, 2):
                out = subprocess.run(run + ["--one", str(workers)], env=env, check=True, capture_output=True, text=True,
                                     cwd=tree).stdout
                best[label, workers] = max(best.get((label, workers), 0.0), float(out))
            out = subprocess.run(run + ["--single"], env=env, check=True, capture_output=True, text=True, cwd=tree).stdout
            for what, value in json.loads(out).items():
                us[label, what] = min(us.get((label, what), float("inf")), value)
    print(f"{args.docs} zh docs, best of {args.rounds}; load average {os.getloadavg()}")
    if best:
        print("PartPrinter.map_items:")
        for (label, workers), rate in best.items():
            print(f"  {label:5} workers={workers}: {rate:8.0f} docs/s  ({rate / best[(label, 1)]:.2f}x workers=1)")
        if args.ref:
            for workers in (1, 2):
                print(f"  this/ref workers={workers}: {best[('this', workers)] / best[('ref', workers)]:.2f}x")
    print(f"one process, batches of {BATCH}, us/doc:")
    print(f"  {'':5} {'doc fingerprint':>16} {'with levels':>12} {'levels beyond':>14}")
    for label in trees:
        doc, levels = us[label, "doc"], us[label, "levels"]
        print(f"  {label:5} {doc:16.0f} {levels:12.0f} {levels - doc:14.0f}  ({levels / doc:.2f}x the fingerprint alone)")
    for label in trees:
        print(f"  {label:5} split_sentences_coded (compare's split of a unified text): {us[label, 'coded']:.0f}")
    if args.ref:
        beyond = {label: us[label, "levels"] - us[label, "doc"] for label in trees}
        print(f"  this/ref: with levels {us['this', 'levels'] / us['ref', 'levels']:.2f}x, "
              f"levels beyond {beyond['this'] / beyond['ref']:.2f}x, "
              f"split_sentences_coded {us['this', 'coded'] / us['ref', 'coded']:.2f}x")


if __name__ == "__main__":
    main()
