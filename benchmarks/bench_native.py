"""The compiled core against the Python modules: microseconds per document of about 745 characters.

In one process, on --docs documents of the zh corpus ($SIMDUP_DATA/zh-docs.jsonl, text and title)
whose text is 745 ± 100 characters, in batches of 64, each implementation on a fingerprinter of its
own (made before the clock starts; its word cache fills in the first round, as in an index pass):

  1. the fingerprint with every level (``PartPrinter._items_many``: what each index worker runs;
     unify included), the Python modules and the compiled core, and their ratio;
  2. the document fingerprint alone (``Fingerprinter.fingerprint_many``), both;
  3. what neither changes: ``unify_many`` (OpenCC and the rest of unification) and jieba-rs's cut
     alone (rjieba, on the unified texts);
  4. the compiled core alone on the unified texts (``simdup_es.native.levels``).

Rounds interleave the measurements, so load from other processes hits them alike; each figure is
the best round, of wall time and of this process's CPU time. Both implementations' results are
compared first (they must be identical).

    python benchmarks/bench_native.py [--docs 2000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import simdup_es.tokens as tokens_module
from simdup_es import native
from simdup_es.fingerprint import Doc, Fingerprinter
from simdup_es.parts import PartPrinter
from simdup_es.text import unify_many

ROOT = Path(__file__).resolve().parent.parent
BATCH = 64
SIZE, SPREAD = 745, 100


def load(docs: int) -> list[Doc]:
    corpus = Path(os.environ.get("SIMDUP_DATA", ROOT / "data")) / "zh-docs.jsonl"
    if not corpus.exists():
        raise SystemExit(f"{corpus} is missing: run scripts/fetch-corpus or set SIMDUP_DATA")
    with open(corpus, encoding="utf-8") as f:
        records = [r for r in map(json.loads, f) if abs(len(r["text"]) - SIZE) <= SPREAD]
    return [Doc(r["text"], r.get("title")) for r in records[:docs]]


@contextmanager
def implementation(compiled: Any | None) -> Iterator[None]:
    """The compiled core (``compiled``) or the Python modules (``None``; jieba-rs through rjieba) compute."""
    jieba = tokens_module._rjieba_class()() if compiled is None else compiled.Jieba()
    with mock.patch.multiple(native, _MODULE=compiled, _WHY=""), mock.patch.object(tokens_module, "_rust", jieba):
        yield


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    try:
        import simdup_es._native as compiled
    except ImportError as exc:
        raise SystemExit(f"the compiled core is not installed ({exc}): install the package with cargo on PATH") from None
    if compiled.REVISION != native.REVISION:
        raise SystemExit("the compiled core is stale: reinstall the package (pip install -e .)")
    docs = load(args.docs)
    batches = [docs[i : i + BATCH] for i in range(0, len(docs), BATCH)]
    printers: dict[str, PartPrinter] = {}
    for name, module in (("python", None), ("native", compiled)):
        with implementation(module):
            printers[name] = PartPrinter(Fingerprinter())
            printers[name].fingerprinter.fingerprint("預熱")  # dictionaries and tables loaded before the clock starts
    check(printers, batches, compiled)

    unified = [unify_many([d.text for d in batch]) for batch in batches]
    rjieba = tokens_module._rjieba_class()()
    pipeline = printers["native"].fingerprinter.native_pipeline()
    work: dict[str, tuple[Any | None, Callable[[], object]]] = {
        "levels python": (None, lambda: [printers["python"]._items_many(b) for b in batches]),
        "levels native": (compiled, lambda: [printers["native"]._items_many(b) for b in batches]),
        "document python": (None, lambda: [printers["python"].fingerprinter.fingerprint_many(b) for b in batches]),
        "document native": (compiled, lambda: [printers["native"].fingerprinter.fingerprint_many(b) for b in batches]),
        "unify_many": (None, lambda: [unify_many([d.text for d in b] + [d.title for d in b if d.title]) for b in batches]),
        "rjieba cut": (None, lambda: [rjieba.cut(t, True) for u in unified for t in u]),
        "native core": (compiled, lambda: [native.levels(pipeline, u, [""] * len(u), printers["native"].params,
                                                         with_document=True, part_max_bytes=None) for u in unified]),
    }
    wall = {name: float("inf") for name in work}
    cpu = dict(wall)
    for _ in range(args.rounds):
        for name, (module, fn) in work.items():
            with implementation(module):
                w, c = time.perf_counter(), time.process_time()
                fn()
                wall[name] = min(wall[name], time.perf_counter() - w)
                cpu[name] = min(cpu[name], time.process_time() - c)
    report(docs, args.rounds, {k: v / len(docs) * 1e6 for k, v in wall.items()}, {k: v / len(docs) * 1e6 for k, v in cpu.items()})


def check(printers: dict[str, PartPrinter], batches: list[list[Doc]], compiled: Any) -> None:
    """Both implementations give the same fingerprints and levels on the documents measured."""
    found = {}
    for name, module in (("python", None), ("native", compiled)):
        with implementation(module):
            found[name] = [(r.fingerprint, lv) for b in batches for r, lv, _ in printers[name]._items_many(b)]
    if found["python"] != found["native"]:
        raise SystemExit("the compiled core and the Python modules disagree on these documents")


def report(docs: list[Doc], rounds: int, wall: dict[str, float], cpu: dict[str, float]) -> None:
    size = statistics.mean(len(d.text) for d in docs)
    print(f"{len(docs)} zh documents of {SIZE} ± {SPREAD} characters (mean {size:.0f}), batches of {BATCH}, "
          f"best of {rounds} rounds; load average {os.getloadavg()[0]:.1f}; identical results")
    print(f"{'us per document':34} {'wall':>8} {'cpu':>8}")
    for name in wall:
        print(f"  {name:32} {wall[name]:8.0f} {cpu[name]:8.0f}")
    for what in ("levels", "document"):
        print(f"  {what}: native / python  wall {wall[what + ' native'] / wall[what + ' python']:.2f}x, "
              f"cpu {cpu[what + ' native'] / cpu[what + ' python']:.2f}x")
    print(f"  fingerprint with every level, native: {wall['levels native']:.0f} us wall (goal <= 150); of it unify_many "
          f"{wall['unify_many']:.0f}, the core {wall['native core']:.0f} (jieba-rs's cut alone {wall['rjieba cut']:.0f})")


if __name__ == "__main__":
    main()
