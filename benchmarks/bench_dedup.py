"""``simdup dedup`` against datasketch's MinHash LSH dedup of the same input, in one run.

The input: the evaluation corpus as ``benchmarks/eval_copies.py`` stores it for a seed (the
default sizes: real Chinese and English documents as their packages ship them, footers and
navigation kept, edited copies of sources, passages pasted into hosts, short texts and their
edits, SPDX licences and their variants, template pages and mosaics), written as one JSON Lines
file in the order the evaluation stores it.

- **simdup**: ``simdup dedup IN -o OUT`` as a user runs it (a subprocess, its defaults: ``--keep
  first``, ``-k 6``, all cores), wall clock of the whole command.
- **MinHash LSH** (datasketch): MinHash of each record's character 5-grams (lower-cased,
  whitespace collapsed), 128 permutations, ``MinHashLSH(threshold=0.8)``; records in input order,
  each one removed when the LSH holds a kept record for it (its twin: the first such), else
  inserted: text-dedup's and datasketch's own recipe. Wall clock of hashing and the LSH.

Both remove a record and name the kept twin it duplicates. For each, the figures: removed,
removed that are confirmed copies of their twin under the evaluation's oracle
(``benchmarks/copy_oracle.py``: at least a fifth of the smaller side's character 8-shingles
shared, or a shared run of 30 characters of rare text, every shingle of it held by at most
max(10, 1 % of the input) records; precision = confirmed / removed), and the time. Then how the two removed sets overlap. The two alternate ``--rounds``
times (the machine is shared: compare the ratio within a round).

    SIMDUP_DATA=data python benchmarks/bench_dedup.py [--seed 7] [--rounds 1] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import copy_oracle  # noqa: E402
import eval_copies  # noqa: E402

from simdup_es.text import unify_many  # noqa: E402


def write_corpus(path: Path, seed: int, quick: bool) -> dict[str, str]:
    size = {k: v[1 if quick else 0] for k, v in eval_copies.SIZES.items()}
    corpus = eval_copies.build(seed, size, lambda m: print(m, file=sys.stderr))
    with open(path, "w", encoding="utf-8") as f:
        for doc_id, text in corpus.stored.items():
            f.write(json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n")
    return corpus.stored


def run_simdup(src: Path, folder: Path, extra: list[str]) -> tuple[dict[str, str], float]:
    out, removed = folder / "simdup-out.jsonl", folder / "simdup-removed.jsonl"
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", "from simdup_es.cli import main; main()", "dedup", str(src), "-o",
                           str(out), "--removed", str(removed), "--rejects", str(folder / "rejects.jsonl"), *extra],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"simdup dedup failed ({proc.returncode}): {proc.stderr[-2000:]}")
    print(proc.stderr.strip().splitlines()[-1], file=sys.stderr)
    twins = {r["id"]: r["kept_id"] for r in map(json.loads, removed.read_text(encoding="utf-8").splitlines())}
    return twins, seconds


def run_minhash(src: Path) -> tuple[dict[str, str], float]:
    from datasketch import MinHash, MinHashLSH

    started = time.perf_counter()
    lsh = MinHashLSH(threshold=0.8, num_perm=128)
    twins: dict[str, str] = {}
    with open(src, encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            text = " ".join(record["text"].lower().split())
            m = MinHash(num_perm=128)
            m.update_batch([text[i : i + 5].encode("utf-8") for i in range(max(1, len(text) - 4))])
            found = lsh.query(m)
            if found:
                twins[record["id"]] = min(found)  # (any kept one the LSH returns is a twin; the first id)
            else:
                lsh.insert(record["id"], m)
    return twins, time.perf_counter() - started


class Oracle:
    """The evaluation's oracle over the input: every record as it reads them, the shingle frequencies counted once."""

    def __init__(self, texts: dict[str, str]) -> None:
        ids = list(texts)
        self.texts = {i: copy_oracle.Text.of(u) for i, u in zip(ids, unify_many([texts[i] for i in ids]), strict=True)}
        self.index = copy_oracle.ShingleIndex(self.texts.values())

    def reasons(self, twins: dict[str, str]) -> dict[str | None, int]:
        """How many removed records the oracle takes as copies of their twins, by its reason (``None``: not a copy)."""
        out: dict[str | None, int] = {}
        for a, b in twins.items():
            reason = copy_oracle.verdict(self.texts[a], self.texts[b], self.index).reason
            out[reason] = out.get(reason, 0) + 1
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="the evaluation's --quick sizes")
    ap.add_argument("--simdup-args", default="", help="more options for simdup dedup, e.g. '-k 8'")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        src = folder / "corpus.jsonl"
        texts = write_corpus(src, args.seed, args.quick)
        rows = []
        for n in range(args.rounds):
            order = ("simdup", "minhash") if n % 2 == 0 else ("minhash", "simdup")
            for name in order:
                twins, seconds = (run_simdup(src, folder, args.simdup_args.split()) if name == "simdup"
                                  else run_minhash(src))
                rows.append((n + 1, name, twins, seconds))
    print(f"\n{len(texts)} records (the evaluation corpus, seed {args.seed}), load {os.getloadavg()[0]:.1f}")
    oracle = Oracle(texts)
    print("| round | method | removed | confirmed copies of their twin (oracle: share / rare run) | precision | seconds |")
    print("|---|---|---|---|---|---|")
    for n, name, twins, seconds in rows:
        why = oracle.reasons(twins)
        ok = len(twins) - why.get(None, 0)
        label = "simdup dedup" if name == "simdup" else "MinHash LSH (datasketch, 0.8, char 5-grams, 128)"
        print(f"| {n} | {label} | {len(twins)} | {ok} ({why.get('share', 0)} / {why.get('rare run', 0)}) | "
              f"{ok / len(twins) if twins else 1:.3f} | {seconds:.1f} |")
    simdup = {a for n, name, t, _ in rows if name == "simdup" and n == 1 for a in t}
    minhash = {a for n, name, t, _ in rows if name == "minhash" and n == 1 for a in t}
    print(f"\nremoved by both {len(simdup & minhash)}, by simdup only {len(simdup - minhash)}, by MinHash only "
          f"{len(minhash - simdup)}")
    for n in range(1, args.rounds + 1):
        by = {name: seconds for m, name, _, seconds in rows if m == n}
        print(f"round {n}: simdup / MinHash time = {by['simdup'] / by['minhash']:.2f}")


if __name__ == "__main__":
    main()
