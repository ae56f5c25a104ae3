"""Similarity report: rendering time after the search, beside the search's own time.

A 10 kB document (UTF-8) is made of its own text (lines of zh corpus documents that are
not stored) with, between them, a passage of 500 characters of each of 5 stored documents,
one of them converted to Traditional script. The embedded store holds
the 5 sources and 300 other documents of the corpus. Each round, timed apart:

* search: :func:`simdup_es.search.find_copies` (candidates, the comparison matrix);
* quotations: :func:`simdup_es.report.find_quoted` (the quotations of the document looked up
  together, each compared with its best candidates), what a report adds to the search;
* report: what comes after it, :func:`simdup_es.report.report_from_copies` (the offset maps of
  the document and its sources, spans, figures and sections, one source per character) and
  :func:`simdup_es.report.render_report_html` (the page, side by side views included).

Rounds interleave the three; p50 and p90 of each are printed, with the quotations' and the
report's p50 as ratios of the search's (all measured in the same run). Goal: report <= 100 ms p50.
Documents come from data/zh-docs.jsonl (scripts/fetch-corpus, or $SIMDUP_DATA).

    python benchmarks/bench_report.py [--rounds 30] [--sources 5] [--kb 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simdup_es import default_fingerprinter  # noqa: E402
from simdup_es.parts import PartPrinter  # noqa: E402
from simdup_es.report import render_report_html, report_from_copies  # noqa: E402
from simdup_es.report.quotes import find_quoted  # noqa: E402
from simdup_es.search import comparer, find_copies  # noqa: E402
from simdup_es.store.base import StoredDoc  # noqa: E402
from simdup_es.store.local import LocalStore  # noqa: E402
from simdup_es.text import converter  # noqa: E402


def corpus() -> list[dict[str, str]]:
    path = Path(os.environ.get("SIMDUP_DATA") or ROOT / "data") / "zh-docs.jsonl"
    if not path.exists():
        sys.exit(f"{path} is missing: run scripts/fetch-corpus")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def compose(records: list[dict[str, str]], n_sources: int, kb: int) -> tuple[str, list[dict[str, str]], list[dict[str, str]]]:
    """The document, its sources and the other stored documents."""
    by_size = sorted((r for r in records if 1200 <= len(r["text"]) <= 2500), key=lambda r: r["id"])
    sources = by_size[:n_sources]
    own = (r["text"].splitlines() for r in by_size[n_sources:])
    parts: list[str] = []
    used = n_sources
    for k, source in enumerate(sources):
        passage = "\n".join(source["text"].splitlines()[1:])[:500]  # about 1.5 kB of each source
        parts.append("\n".join(next(own)[1:4])[:200])
        parts.append(converter("s2t").convert(passage) if k == 0 else passage)
        used += 1
    while len("\n".join(parts).encode()) < kb * 1000:
        parts.append("\n".join(next(own)[1:4])[:200])
        used += 1
    stored = {r["id"] for r in by_size[:used]}
    others = [r for r in records if r["id"] not in stored][:300]
    return "\n".join(parts), sources, others


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--sources", type=int, default=5)
    ap.add_argument("--kb", type=int, default=10)
    args = ap.parse_args()
    text, sources, others = compose(corpus(), args.sources, args.kb)
    printer = PartPrinter(default_fingerprinter())
    compare = comparer()
    with tempfile.TemporaryDirectory() as tmp:
        store = LocalStore(Path(tmp) / "store")
        store.setup()
        for r in [*sources, *others]:
            fp = printer.fingerprinter.fingerprint(r["text"], r.get("title"))
            store.put([StoredDoc(r["id"], fp.value, fp.version, r["text"], r.get("title"),
                                 levels=printer.levels(r["text"]))])
        store.refresh()
        search_ms: list[float] = []
        quoted_ms: list[float] = []
        report_ms: list[float] = []
        for _ in range(args.rounds + 2):  # two warm-up rounds (OpenCC tables, caches)
            t0 = time.perf_counter()
            copies = find_copies(store, text, printer=printer, compare=compare)
            t_quoted = time.perf_counter()
            quoted = find_quoted(store, copies, compare, printer)
            t1 = time.perf_counter()
            report = report_from_copies(text, copies, quoted=quoted, mapped=compare.caches.mapped)
            page = render_report_html(report)
            t2 = time.perf_counter()
            search_ms.append(1000 * (t_quoted - t0))
            quoted_ms.append(1000 * (t1 - t_quoted))
            report_ms.append(1000 * (t2 - t1))
        store.close()
    search_ms, quoted_ms, report_ms = search_ms[2:], quoted_ms[2:], report_ms[2:]
    found = sorted(s.id for s in report.sources)
    print(f"document: {len(text.encode())} bytes, {len(text)} characters; {report.headline}; "
          f"{quoted.searched} quotations looked up, {quoted.compared} compared with a candidate")
    print(f"sources found: {len(found)} of {len(sources)} planted ({sum(s['id'] in found for s in sources)} planted ones); "
          f"page {len(page.encode()) // 1024} kB")
    for name, ms in (("search", search_ms), ("quotations", quoted_ms), ("report after both", report_ms)):
        q = statistics.quantiles(ms, n=10)
        print(f"{name:26s} p50 {statistics.median(ms):7.1f} ms   p90 {q[-1]:7.1f} ms   ({len(ms)} rounds)")
    search = statistics.median(search_ms)
    verdict = "met" if statistics.median(report_ms) <= 100 else "NOT met"
    print(f"quotations / search (p50): {statistics.median(quoted_ms) / search:.2f}; report / search (p50): "
          f"{statistics.median(report_ms) / search:.2f}; goal report <= 100 ms p50: {verdict}")


if __name__ == "__main__":
    main()
