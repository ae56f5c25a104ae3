"""Where a search's time goes, step by step, on the store and queries of ``bench_search_latency.py``.

Each step of :func:`simdup_es.find_copies` is timed by wrapping the function that does it
(the query's unification and fingerprint, its levels, the store's candidates and texts, the
stored texts' unification, their sentence scans, the jieba words the word-level check
segments, the comparison, the rank and the judgement), over the 2 kB and short queries of that
benchmark: once cold (the caches of stored texts emptied first) and once warm (the same
queries again). Steps nest: the comparison's time includes the scans and the words, and the steps
of each candidate's comparison and judgement marked ``candidate:`` (the candidate split and coded,
the matrix's candidate pairs, the shared runs, the screen, the word-level check, the whole-text LCS,
the candidate's common text, the shares judged), given per candidate too.
Run it with ``SIMDUP_IMPLEMENTATION=python`` and ``=native`` one after the other to see what the
compiled core takes over (:mod:`simdup_es.native`).

``--unify-ahead 1,5`` also times the whole queries with each value of
:data:`simdup_es.search.UNIFY_AHEAD` (how many stored texts are unified in one call; 1 is
one at a time), cold, the values interleaved over ``--rounds`` in one process: the ratio
within a round is what to read on a shared machine.

    SIMDUP_DATA=data python benchmarks/bench_search_breakdown.py --store DIR [--queries 100] [--unify-ahead 1,5]

``--store DIR``: the embedded store ``bench_search_latency.py --store DIR`` built (made here
when missing, which takes several minutes at 100,000 documents).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_search_latency as latency  # noqa: E402  (its store, queries and indexing)

KINDS = ("2 kB", "short")
STEPS = (("compare", "_pair_up", "split and code the candidate"), ("compare", "candidate_pairs", "candidate pairs"),
         ("PreparedText", "shared_runs", "shared runs"), ("multilevel", "could_be_copy", "screen"),
         ("compare", "_similar_pairs", "word-level check"), ("compare", "_whole_lcs", "whole-text LCS"),
         ("multilevel", "rarity", "its common text"), ("multilevel", "copied_shares", "shares judged"))


calls: Counter[str] = Counter()


def timed(owner: Any, name: str, label: str, spent: Counter[str]) -> None:
    """Replace ``owner.name`` by a wrapper that adds its wall time to ``spent[label]`` (and a call to ``calls``)."""
    f = getattr(owner, name)

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return f(*args, **kwargs)
        finally:
            spent[label] += time.perf_counter() - t
            calls[label] += 1

    setattr(owner, name, wrapper)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--unify-ahead", default="", help="comma-separated values of UNIFY_AHEAD to time against each other")
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()

    from simdup_es import compare as compare_module
    from simdup_es import default_fingerprinter, multilevel, native, search
    from simdup_es.multilevel import MultiParams
    from simdup_es.parts import PartPrinter
    from simdup_es.store import open_store

    stored, queries = latency.build(latency.corpus(), args.docs, args.queries, args.seed)
    reuse = (args.store / "simdup.sqlite3").exists()
    spent: Counter[str] = Counter()
    with open_store(path=args.store, create=not reuse) as store:
        if not reuse:
            latency.index(store, stored)
        timed(search, "dictionary_words", "jieba words of the word-level check (not cached)", spent)
        printer, compare, params = PartPrinter(default_fingerprinter()), search.comparer(), MultiParams()
        timed(search, "_query", "query: unify, fingerprint", spent)
        timed(printer, "levels", "query: levels", spent)
        timed(type(store), "copy_candidates", "store: candidates", spent)
        timed(type(store), "get", "store: texts", spent)
        timed(compare.caches, "unify_many", "stored texts: unify (not cached)", spent)
        timed(compare.caches.scans, "_make", "stored texts: sentence scan (not cached)", spent)
        timed(compare.caches.codes, "_make", "stored texts: unit codes, with the scan when not kept (not cached)", spent)
        timed(compare, "screened", "comparison (with scans and words)", spent)
        timed(multilevel, "rank_candidates", "rank", spent)
        timed(multilevel, "judge", "judge", spent)
        for owner, name, label in STEPS:
            where = {"compare": compare_module, "PreparedText": compare_module.PreparedText}.get(owner, multilevel)
            timed(where, name, f"candidate: {label}", spent)
        print(f"implementation: {native.implementation()}")

        def run(kind: str) -> list[float]:
            ms = []
            for _, text in queries[kind]:
                t = time.perf_counter()
                search.find_copies(store, text, printer=printer, compare=compare, params=params)
                ms.append(1000 * (time.perf_counter() - t))
            return ms

        def cold() -> None:
            compare.caches.clear()

        run("short")  # load the tables
        for kind in KINDS:
            for label in ("cold", "warm"):
                if label == "cold":
                    cold()
                spent.clear()
                calls.clear()
                ms = run(kind)
                n = len(ms)
                print(f"\n{kind}, {label}: {statistics.mean(ms):.2f} ms per query (mean), p50 {statistics.median(ms):.2f}")
                candidates = calls["comparison (with scans and words)"]
                print(f"  {candidates / n:.1f} candidates compared per query")
                for step, s in spent.most_common():
                    each = f"  {1000_000 * s / candidates:7.1f} µs per candidate" if step.startswith("candidate") else ""
                    print(f"  {step:52s} {1000 * s / n:6.2f} ms  ({s / (sum(ms) / 1000):.0%}){each}")

        values = [int(v) for v in args.unify_ahead.split(",") if v]
        if values:
            got: dict[tuple[str, int], list[tuple[float, float]]] = {}
            for r in range(args.rounds):
                for ahead in values if r % 2 == 0 else values[::-1]:
                    search.UNIFY_AHEAD = ahead
                    for kind in KINDS:
                        cold()
                        ms = run(kind)
                        got.setdefault((kind, ahead), []).append((statistics.median(ms), statistics.mean(ms)))
            print("\nUNIFY_AHEAD, cold, ms per query p50 / mean in each round:")
            for (kind, ahead), rows in got.items():
                base = got[(kind, values[0])]
                print(f"  {kind:6s} {ahead:3d}: " + ", ".join(f"{p:.2f} / {m:.2f}" for p, m in rows)
                      + f"   mean over {values[0]}: " + ", ".join(f"{m / b[1]:.2f}" for (_, m), b in zip(rows, base)))


if __name__ == "__main__":
    main()
