"""Per-query latency of ``find_copies`` with and without the candidates' caches, in one process.

The store is one ``benchmarks/eval_copies.py --store DIR`` built (same --seed). Queries of the
given rows run twice; in the second round, timed, every other query runs after the caches of the
candidates' unified texts and sentence scans (the comparer's caches, :class:`simdup_es.caches.TextCaches`)
were emptied, so both halves see the same load. Emptying
them before every other query understates what they save.

    SIMDUP_DATA=data python benchmarks/bench_query_cache.py --store results/store7 --rows short --n 600
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_copies as E  # noqa: E402

from simdup_es import SimdupError, default_fingerprinter  # noqa: E402
from simdup_es.multilevel import MultiParams  # noqa: E402
from simdup_es.parts import PartPrinter  # noqa: E402
from simdup_es.search import comparer, find_copies  # noqa: E402
from simdup_es.store import open_store  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rows", default="short", help="row name prefixes, comma-separated")
    ap.add_argument("--n", type=int, default=600)
    args = ap.parse_args()
    c = E.build(args.seed, {k: v[0] for k, v in E.SIZES.items()}, lambda m: None)
    kinds = args.rows.split(",")
    queries = [q for q in c.queries if any(r.startswith(k) for k in kinds for r in q.targets)][: args.n]
    printer, compare, params = PartPrinter(default_fingerprinter()), comparer(), MultiParams()
    ms: dict[bool, list[float]] = {True: [], False: []}
    with open_store(path=args.store) as store:
        for rnd in range(2):
            for n, q in enumerate(queries):
                cached = (n + rnd) % 2 == 0
                if not cached:
                    compare.caches.clear()
                t = time.perf_counter()
                try:
                    find_copies(store, q.text, printer=printer, compare=compare, params=params, limit=100, exclude_id=q.exclude)
                except SimdupError:
                    pass
                if rnd:
                    ms[cached].append(1000 * (time.perf_counter() - t))
    for cached in (False, True):
        x = np.array(ms[cached])
        print(f"{args.rows}: {'with' if cached else 'without'} the caches, {x.size} queries: p50 {np.median(x):.2f} ms, "
              f"p95 {np.percentile(x, 95):.2f} ms, mean {x.mean():.2f} ms")


if __name__ == "__main__":
    main()
