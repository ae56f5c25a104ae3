"""Whether two versions of the code give the same search results, to the last digit.

Runs a fixed set of queries (the three kinds of ``bench_search_latency.py``: edited
2 kB documents, short cuts, 30,000-character runs; seeded) through
:func:`simdup_es.find_copies` against one store and writes everything a search
returns: ids, kinds, distances, every share, ``more``, and each comparison whole
(sentences with offsets, marked pairs with their ``p``/``w``/rule, scores, and the
units of the shared runs). Run it once with the code to compare against, then with
yours, and ``--against`` the first file: any difference is printed and the exit
status is 1::

    python benchmarks/check_search_identical.py --code /work/main --store S --out before.json
    python benchmarks/check_search_identical.py --store S --out after.json --against before.json

``--code DIR`` imports ``simdup_es`` from the checkout ``DIR`` (the benchmarks put this
checkout first on the path, so ``PYTHONPATH`` alone would not do); the first line on
stderr says which one ran.

``--store`` is an embedded store built by ``bench_search_latency.py --store``, or ``--url``
and ``--index`` an index ``bench_search_latency.py`` loaded into a node (read, not written). Each query also runs with ``limit=3``, which cuts the judging short.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _runs(mask: Any) -> list[list[int]]:
    """A boolean array as ``[start, stop)`` stretches of true."""
    out: list[list[int]] = []
    for i, v in enumerate(mask.tolist()):
        if v and out and out[-1][1] == i:
            out[-1][1] = i + 1
        elif v:
            out.append([i, i + 1])
    return out


def result(copies: Any) -> dict[str, Any]:
    """Everything one search returned, JSON-ready, floats unrounded."""
    matches = []
    for m in copies:
        c = m.comparison
        matches.append({
            "id": m.id, "kind": m.kind, "distance": m.distance,
            "shares": [m.similarity_query, m.similarity_match, m.containment_query_in_match,
                       m.containment_match_in_query, m.copied_query, m.copied_match],
            "comparison": None if c is None else {
                **c.to_dict(), "pairs_exact": [[p.i, p.j, p.a_start, p.a_end, p.b_start, p.b_end, p.lcs, p.p, p.w, p.rule]
                                               for p in c.pairs],
                "scores_exact": [c.similarity_a, c.similarity_b, c.resemblance, c.containment_a_in_b,
                                 c.containment_b_in_a],
                "runs_a": _runs(c.runs_a), "runs_b": _runs(c.runs_b)},
        })
    return {"more": copies.more, "matches": matches}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--store", type=Path, help="an embedded store (bench_search_latency.py --store)")
    where.add_argument("--url", help="an Elasticsearch or OpenSearch node, with --index")
    ap.add_argument("--index", default="bench-lat100k", help="the index at --url (bench_search_latency.py --index)")
    ap.add_argument("--queries", type=int, default=30, help="queries of the 2 kB and short kinds (30k: a tenth)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--against", type=Path, help="an earlier --out to compare with")
    ap.add_argument("--code", type=Path, help="a checkout to import simdup_es from (default: this one)")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    import bench_search_latency as bench  # the benchmark's corpus and queries (it puts this checkout first)

    if args.code:
        sys.path.insert(0, str(args.code.resolve()))
        for name in [m for m in sys.modules if m == "simdup_es" or m.startswith("simdup_es.")]:
            del sys.modules[name]  # imported above from this checkout

    import simdup_es
    from simdup_es import default_fingerprinter
    from simdup_es.multilevel import MultiParams
    from simdup_es.parts import PartPrinter
    from simdup_es.search import comparer, find_copies
    from simdup_es.store import open_store

    print(f"simdup_es from {Path(simdup_es.__file__).parent}", file=sys.stderr)
    _, queries = bench.build(bench.corpus(), 0, args.queries, args.seed)  # 0: the queries only, not the fill
    printer, compare, params = PartPrinter(default_fingerprinter()), comparer(), MultiParams()
    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    with (open_store(args.url, index=args.index) if args.url else open_store(path=args.store)) as store:
        for kind, qs in queries.items():
            for qid, text in qs:
                for limit in (20, 3):
                    out[f"{kind}/{qid}/limit{limit}"] = result(
                        find_copies(store, text, printer=printer, compare=compare, params=params, limit=limit))
    print(f"{len(out)} searches in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    args.out.write_text(json.dumps(out, ensure_ascii=False, sort_keys=True))
    if args.against:
        before = json.loads(args.against.read_text())
        after = json.loads(args.out.read_text())  # through JSON both, so floats compare alike
        differ = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        for k in differ[:20]:
            print(f"DIFFERENT: {k}", file=sys.stderr)
        hits = sum(len(v["matches"]) for v in after.values())
        print(f"{len(after)} searches, {hits} hits: {len(differ)} different from {args.against}")
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
