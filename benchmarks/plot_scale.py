"""Fit and plot what ``bench_scale.py`` measured: node CPU and latency per query against N, projected to 1e9.

Reads the JSON lines ``bench_scale.py`` wrote (``--inputs``), fits each query kind's node
CPU per query as ``a + b * N`` (least squares over the measured sizes: a fixed cost per
request plus a cost per posting walked, postings growing with N; an upper bound when
Lucene skips) and as ``c * N**alpha`` (log-log least squares: what was measured), prints the fits and the projection to 1 billion documents on S shards, and draws
``docs/scale.png``.

    python benchmarks/plot_scale.py   # the runs in benchmarks/scale-runs/, which docs/scale.md reports
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BILLION = 1_000_000_000


def read(paths: list[str]) -> tuple[dict[str, list[dict]], dict[str, list[dict]]]:
    """Query rows by query kind and index rows by index, the last run's row of each size."""
    queries: dict[str, dict[int, dict]] = defaultdict(dict)
    indices: dict[str, dict[int, dict]] = defaultdict(dict)
    for path in paths:
        run = Path(path).stem  # each run is its own curve: runs are not comparable on this shared machine
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if "query" in row:
                kind = f"{row['query'] if row['index'] == 'doc' else row['index']} [{run}]"
                queries[kind][row["n"]] = row
            else:
                indices[row["index"]][row["n"]] = row
    return ({k: [v[n] for n in sorted(v)] for k, v in queries.items()},
            {k: [v[n] for n in sorted(v)] for k, v in indices.items()})


def fit(rows: list[dict], key: str) -> tuple[float, float]:
    """``(a, b)`` of ``key = a + b * N``, least squares, neither below 0."""
    n = np.array([r["n"] for r in rows], float)
    y = np.array([r[key] for r in rows], float)
    if len(rows) == 1:
        return float(y[0]), 0.0
    b, a = np.polyfit(n, y, 1)
    if a < 0:  # through the origin
        a, b = 0.0, float((n @ y) / (n @ n))
    return float(a), max(float(b), 0.0)


def power(rows: list[dict], key: str) -> tuple[float, float]:
    """``(c, alpha)`` of ``key = c * N**alpha``, least squares in log-log."""
    n = np.log([r["n"] for r in rows])
    y = np.log([max(r[key], 1e-3) for r in rows])
    if len(rows) == 1:
        return float(np.exp(y[0])), 0.0
    alpha, logc = np.polyfit(n, y, 1)
    return float(np.exp(logc)), float(alpha)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", default=",".join(sorted(str(p) for p in (ROOT / "benchmarks" / "scale-runs").glob("*.jsonl"))),
                    help="bench_scale.py outputs, comma-separated (default: the runs docs/scale.md reports)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "scale.png"))
    ap.add_argument("--shards", default="1,16,64,256")
    args = ap.parse_args()
    queries, indices = read([p for p in args.inputs.split(",") if Path(p).exists()])
    shards = [int(s) for s in args.shards.split(",")]

    print("node CPU per query (ms), two fits: linear a + b*N (every posting walked) and power c*N^alpha "
          "(what was measured); on S shards: per shard f(N/S), whole query S*f(N/S)")
    fits = {}
    for kind, rows in sorted(queries.items()):
        a, b = fit(rows, "cpu_ms")
        c, alpha = power(rows, "cpu_ms")
        fits[kind] = (a, b, c, alpha)
        measured = ", ".join(f"N={r['n']:,}: cpu {r['cpu_ms']:.2f} ms p50 {r['p50_ms']:.1f} p95 {r['p95_ms']:.1f}"
                             for r in rows)
        print(f"  {kind:24s} linear a={a:.3f} b={b * 1e6:.4f}/million; power c={c:.4g} alpha={alpha:.3f} | {measured}")
        for s in shards:
            m = BILLION / s
            print(f"  {'':24s} 1e9 on S={s}: per shard linear {a + b * m:,.1f} ms, power {c * m ** alpha:,.1f} ms; "
                  f"whole query linear {s * (a + b * m):,.0f} ms, power {s * c * m ** alpha:,.0f} ms")
    print("index: bytes and Lucene documents per stored document")
    for name, rows in sorted(indices.items()):
        sizes = ", ".join(f"N={r['n']:,}: {r['bytes_per_doc']:,.0f} B, {r['lucene_per_doc']:.2f} Lucene docs"
                          for r in rows)
        last = rows[-1]
        print(f"  {name:14s} {sizes} | 1e9 -> {last['bytes_per_doc'] * BILLION / 2**40:.2f} TiB primary, "
              f"{last['lucene_per_doc'] * BILLION:,.0f} Lucene documents")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_cpu, ax_lat) = plt.subplots(1, 2, figsize=(11, 4.2))
    grid = np.logspace(4, 9, 60)
    for i, (kind, rows) in enumerate(sorted(queries.items())):
        colour = f"C{i % 10}"
        n = [r["n"] for r in rows]
        ax_cpu.plot(n, [r["cpu_ms"] for r in rows], "o", color=colour, label=kind)
        a, b, c, alpha = fits[kind]
        ax_cpu.plot(grid, c * grid**alpha, "--", color=colour, lw=1)
        ax_cpu.plot(grid, a + b * grid, ":", color=colour, lw=1)
        ax_lat.plot(n, [r["p50_ms"] for r in rows], "o-", color=colour, label=f"{kind} p50")
        ax_lat.plot(n, [r["p95_ms"] for r in rows], "^:", color=colour, label=f"{kind} p95")
    for ax in (ax_cpu, ax_lat):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("stored documents N (one shard)")
        ax.grid(True, which="both", alpha=0.3)
    ax_cpu.set_ylabel("node CPU per query, ms")
    ax_cpu.set_title("node CPU/query; to 1e9 on 1 shard: --- c*N^a, ... a+b*N", fontsize=10)
    ax_lat.set_ylabel("latency in the client, ms")
    ax_lat.set_title("latency (2 shared cores, noisy)")
    ax_cpu.legend(fontsize=8)
    ax_lat.legend(fontsize=6, ncol=2, loc="upper left")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
