"""Fingerprint throughput on ~1.1 kB raw Chinese documents.

Prints docs/s, each beside its references measured in the same run (rounds
interleave the functions, so load from other processes on a shared machine hits
them alike; best round of each):

  1. the whole fingerprint from raw text (unify, segment, weigh, SimHash), one process;
  2. ``rjieba.cut`` (jieba-rs, HMM on) alone and ``jieba.lcut`` (Python jieba, HMM on)
     alone on the same unified texts;
  3. ``unify_many`` alone over the same batches of 64 that fingerprinting gives it, and the
     reference ``unify_reference`` it replaced, one text at a time;
  1b, 3b. (1) and (3) with OpenCC's C++ library converting the scripts, where the compiled core
     converts them (the native implementation): what the core saves there;
  4. the whole fingerprint through ``Fingerprinter.map`` on N worker processes
     against ``map(workers=1)``, on --map-docs documents (fresh pool included).

Goals: (1) >= 2,500 docs/s and <= 5x the time of ``rjieba.cut`` alone; (4) >= 1.8x
on two cores. Documents: consecutive ~1.1 kB slices of the zh corpus from
scripts/fetch-corpus ($SIMDUP_DATA/zh-docs.jsonl).

    python benchmarks/bench_fingerprint.py [--docs 2000] [--rounds 5] [--map-docs 20000] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import numpy as np

import simdup_es.text as text_module
from simdup_es import native
from simdup_es.fingerprint import Doc, Fingerprinter
from simdup_es.reference import unify_reference  # noqa: E402
from simdup_es.text import unify, unify_many

ROOT = Path(__file__).resolve().parent.parent


def load_docs(n: int, size: int = 1100) -> list[str]:
    corpus = Path(os.environ.get("SIMDUP_DATA", ROOT / "data")) / "zh-docs.jsonl"
    if not corpus.exists():
        raise SystemExit(f"{corpus} is missing: run scripts/fetch-corpus or set SIMDUP_DATA")
    with open(corpus, encoding="utf-8") as f:
        slices = [s for line in f for s in _slices(json.loads(line)["text"], size)]
    return (slices * (n // max(1, len(slices)) + 1))[:n]


def _slices(text: str, size: int) -> list[str]:
    """Consecutive pieces of ``size`` UTF-8 bytes or a little more."""
    pieces, start, nbytes = [], 0, 0
    for i, ch in enumerate(text):
        nbytes += len(ch.encode("utf-8"))
        if nbytes >= size:
            pieces.append(text[start : i + 1])
            start, nbytes = i + 1, 0
    return pieces


def best_rates(fns: dict[str, tuple[Callable[[], object], int]], rounds: int) -> dict[str, float]:
    """docs/s of each function (with its document count), best of ``rounds`` interleaved rounds."""
    best = {name: float("inf") for name in fns}
    for _ in range(rounds):
        for name, (fn, _) in fns.items():
            t = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t)
    return {name: fns[name][1] / seconds for name, seconds in best.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--map-docs", type=int, default=20000)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()

    import jieba
    import rjieba

    raw = load_docs(args.docs)
    unified = [unify(d) for d in raw]
    fp = Fingerprinter()
    batch = [Doc(d) for d in raw]
    fp.fingerprint_many(batch[:50])  # load jieba-rs, OpenCC and the tables
    rust = rjieba.Jieba()
    rust.cut("预热", True)
    python = jieba.Tokenizer()
    python.tmp_dir = os.environ.get("SIMDUP_CACHE") or None
    python.initialize()
    many = [Doc(d) for d in load_docs(args.map_docs)]
    print(
        f"{len(raw)} documents, mean {np.mean([len(d.encode()) for d in raw]):.0f} bytes raw; "
        f"map: {len(many)} documents on {args.workers} workers; {os.cpu_count()} cores, "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )

    def fingerprint_all() -> None:
        for i in range(0, len(batch), 64):
            fp.fingerprint_many(batch[i : i + 64])

    def with_opencc(fn: Callable[[], object]) -> Callable[[], object]:
        """``fn`` with OpenCC converting the scripts, where the compiled core would."""
        def run() -> object:
            with mock.patch.object(text_module, "native_script", lambda shortcuts: None):
                return fn()
        return run

    def unify_all() -> None:
        for i in range(0, len(raw), 64):
            unify_many(raw[i : i + 64])

    rates = best_rates(
        {
            "fingerprint, raw text, 1 process": (fingerprint_all, len(raw)),
            "fingerprint, OpenCC converting": (with_opencc(fingerprint_all), len(raw)),
            "rjieba.cut alone (HMM)": (lambda: [rust.cut(d, True) for d in unified], len(raw)),
            "jieba.lcut alone (HMM)": (lambda: [python.lcut(d) for d in unified], len(raw)),
            "unify_many alone (batches of 64)": (unify_all, len(raw)),
            "unify_many, OpenCC converting": (with_opencc(unify_all), len(raw)),
            "unify_reference alone": (lambda: [unify_reference(d) for d in raw], len(raw)),
        },
        args.rounds,
    )
    for name, rate in rates.items():
        print(f"{name:40s} {rate:10,.0f} docs/s")
    whole, cut = rates["fingerprint, raw text, 1 process"], rates["rjieba.cut alone (HMM)"]
    print(f"fingerprint time / rjieba.cut time (goal <= 5):   {cut / whole:.2f}")
    print(f"fingerprint time / jieba.lcut time:               {rates['jieba.lcut alone (HMM)'] / whole:.2f}")
    print(f"unify_reference time / unify_many time:           {rates['unify_many alone (batches of 64)'] / rates['unify_reference alone']:.2f}")
    print(f"time with OpenCC converting / time ({native.implementation()}): fingerprint "
          f"{rates['fingerprint, raw text, 1 process'] / rates['fingerprint, OpenCC converting']:.2f}, "
          f"unify_many {rates['unify_many alone (batches of 64)'] / rates['unify_many, OpenCC converting']:.2f}")

    if args.workers > 1:
        # Wall time, and CPU time of this process and of the worker processes: on a
        # shared machine the CPU times show what the pool costs beyond the work.
        best: dict[int, tuple[float, float, float]] = {}
        for _ in range(max(1, args.rounds // 2)):
            for workers in (1, args.workers):
                before = os.times()
                t = time.perf_counter()
                assert sum(1 for _ in fp.map(many, workers=workers)) == len(many)
                wall = time.perf_counter() - t
                after = os.times()
                cpu = (after.user + after.system - before.user - before.system,
                       after.children_user + after.children_system - before.children_user - before.children_system)
                if workers not in best or wall < best[workers][0]:
                    best[workers] = (wall, *cpu)
        for workers, (wall, main_cpu, child_cpu) in best.items():
            print(f"map, {workers} worker(s): {len(many) / wall:8,.0f} docs/s; CPU s: this process {main_cpu:.2f}, "
                  f"workers {child_cpu:.2f}")
        (w1, c1, _), (wn, cn, kn) = best[1], best[args.workers]
        print(f"map speed-up on {args.workers} workers (goal >= 1.8 on 2): {w1 / wn:.2f}x wall; "
              f"CPU of the pool run / CPU of one process: {(cn + kn) / c1:.2f}")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
