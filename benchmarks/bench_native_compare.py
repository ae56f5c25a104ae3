"""Each candidate's comparison and judgement with the compiled core's part of it and without, in one process.

The store and queries of ``bench_search_latency.py`` (``--store DIR``, made there) go through
:func:`simdup_es.find_copies`, the query's fingerprint and levels by the compiled core either way; what
switches is the comparison's part (:mod:`simdup_es.native`: the candidate's units coded, the shared runs,
the common text, the screen's and the judgement's counted units), by giving the modules that call it a
switch that says "python". The two alternate over ``--rounds`` (the order flipped each round), on warm
caches (one pass first fills them), so the ratio within a round is what to read on a shared machine.
Per kind of query: p50 per query, and the comparison's and judgement's time per candidate
(``MatrixComparer.screened`` and ``multilevel.judge``); the copies found must be the same.

    SIMDUP_DATA=data python benchmarks/bench_native_compare.py --store DIR [--docs 100000] [--queries 100] [--rounds 4]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
import types
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_search_breakdown as breakdown  # noqa: E402  (its wrapper that times a function)
import bench_search_latency as latency  # noqa: E402  (its store and queries)

KINDS = ("2 kB", "short")


@contextlib.contextmanager
def comparison_in_python() -> Iterator[None]:
    """The comparison's kernels (and the sentence scan) by their Python references; fingerprints and levels stay
    compiled."""
    from simdup_es import commontext, compare, matrix, multilevel, sentences

    python = types.SimpleNamespace(module=lambda: None, scan=sentences.scan)
    with contextlib.ExitStack() as stack:
        for owner in (commontext, compare, matrix, multilevel):
            stack.enter_context(mock.patch.object(owner, "native", python))
        yield


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()

    from simdup_es import default_fingerprinter, multilevel, native, search
    from simdup_es.multilevel import MultiParams
    from simdup_es.parts import PartPrinter
    from simdup_es.store import open_store

    if native.implementation() != "native":
        sys.exit("the compiled core is not in use here: nothing to compare (SIMDUP_IMPLEMENTATION, pip install -e .)")
    stored, queries = latency.build(latency.corpus(), args.docs, args.queries, args.seed)
    spent: Counter[str] = Counter()
    with open_store(path=args.store, create=not (args.store / "simdup.sqlite3").exists()) as store:
        if store.count() < len(stored):
            latency.index(store, stored)
        printer, compare, params = PartPrinter(default_fingerprinter()), search.comparer(), MultiParams()
        breakdown.timed(compare, "screened", "compare", spent)
        breakdown.timed(multilevel, "judge", "judge", spent)

        def run(kind: str) -> tuple[list[float], list[list[dict]]]:
            ms, found = [], []
            for _, text in queries[kind]:
                t = time.perf_counter()
                copies = search.find_copies(store, text, printer=printer, compare=compare, params=params)
                ms.append(1000 * (time.perf_counter() - t))
                found.append([m.to_dict() for m in copies])
            return ms, found

        for kind in KINDS:
            run(kind)  # the caches filled, the tables loaded
        rows: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for r in range(args.rounds):
            results = {}
            for name in ("python", "native") if r % 2 == 0 else ("native", "python"):
                with comparison_in_python() if name == "python" else contextlib.nullcontext():
                    for kind in KINDS:
                        spent.clear()
                        breakdown.calls.clear()
                        ms, results[name, kind] = run(kind)
                        per = 1e6 * (spent["compare"] + spent["judge"]) / max(breakdown.calls["compare"], 1)
                        rows.setdefault((kind, name), []).append((statistics.median(ms), per))
            assert all(results["python", k] == results["native", k] for k in KINDS), "the implementations differ"
        print(f"\n{len(stored):,} stored documents, warm caches, {args.rounds} rounds; per round: p50 ms per query, "
              "µs per candidate compared and judged\n")
        for kind in KINDS:
            for name in ("python", "native"):
                cells = ", ".join(f"{p:.2f} / {c:.0f}" for p, c in rows[kind, name])
                print(f"  {kind:6s} {name:7s} {cells}")
            ratios = [(n[0] / p[0], n[1] / p[1]) for n, p in zip(rows[kind, "native"], rows[kind, "python"], strict=True)]
            print(f"  {kind:6s} native / python: " + ", ".join(f"{a:.2f} / {b:.2f}" for a, b in ratios))


if __name__ == "__main__":
    main()
