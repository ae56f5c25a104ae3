"""Fingerprint throughput on ~1 kB Chinese documents (issue: fingerprint core).

Prints docs/s for
  1. jieba tokenisation alone (our own jieba.Tokenizer, lcut),
  2. the whole fingerprint from unified text (tokenise, filter, weigh, SimHash),
  3. the numpy SimHash step alone,
  4. batch fingerprinting on all cores vs one process,
and the ratios the goals are stated in. Unified-text normalisation is excluded
from 1-3 (it is done once up front), as the goal asks.

Documents: ~1 kB slices of the zh corpus from scripts/fetch-corpus (data/zh-docs.jsonl),
or of the seed papers when that is missing.

    python benchmarks/bench_fingerprint.py [--docs 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from simdup_es import simhash as sh
from simdup_es.fingerprint import Doc, Fingerprinter
from simdup_es.text import unify

ROOT = Path(__file__).resolve().parent.parent


def load_docs(n: int) -> list[str]:
    corpus = Path(os.environ.get("SIMDUP_DATA", ROOT / "data")) / "zh-docs.jsonl"
    texts: list[str] = []
    if corpus.exists():
        with open(corpus, encoding="utf-8") as f:
            texts = [json.loads(line)["text"] for line in f]
    else:
        seeds = ROOT.parent / "shared" / "seeds"
        texts = [p.read_text(encoding="utf-8") for p in sorted(seeds.glob("*.txt"))]
    # ~1 kB of UTF-8 is ~340 Chinese characters.
    slices = [t[i : i + 340] for t in texts for i in range(0, max(1, len(t) - 340), 340)]
    slices = [s for s in slices if len(s) > 200]
    return [unify(s) for s in (slices * (n // max(1, len(slices)) + 1))[:n]]


def best_rate(fn, n: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return n / best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    docs = load_docs(args.docs)
    fp = Fingerprinter()
    seg = fp.tokenizer._segmenter()  # warm up jieba
    fp.fingerprint_many([Doc(d) for d in docs[:50]], unified=True)
    print(f"{len(docs)} documents, mean {np.mean([len(d.encode()) for d in docs]):.0f} bytes, {os.cpu_count()} cores")

    rows = []
    tok = best_rate(lambda: [seg.lcut(d) for d in docs], len(docs), args.rounds)
    rows.append(("jieba lcut alone", tok))
    batch = [Doc(d) for d in docs]
    whole = best_rate(lambda: [fp.fingerprint_many(batch[i : i + 64], unified=True) for i in range(0, len(batch), 64)],
                      len(docs), args.rounds)
    rows.append(("whole fingerprint, 1 process", whole))

    feats = [fp._features(d, True) for d in batch]
    tokens = [t for words, _ in feats for t in words]
    weights = np.array([w for _, ws in feats for w in ws])
    offsets = np.cumsum([0] + [len(words) for words, _ in feats])
    hashes = sh.token_hashes(tokens)
    rows.append(("numpy SimHash step alone", best_rate(lambda: sh.simhash_batch(hashes, weights, offsets), len(docs), args.rounds)))

    par = best_rate(lambda: list(fp.map(batch, unified=True)), len(docs), args.rounds)
    rows.append((f"whole fingerprint, {os.cpu_count()} processes", par))
    for name, rate in rows:
        print(f"{name:38s} {rate:10,.0f} docs/s")
    print(f"time ratio whole/tokenise (goal <= 1.15): {tok / whole:.3f}")
    print(f"parallel speed-up (goal >= 1.7):          {par / whole:.2f}x")


if __name__ == "__main__":
    main()
