"""Cold start of ``simdup fingerprint --text 你好`` beside a bare ``python -c pass``.

Each command runs in a fresh process, --rounds times, interleaved so that load from
other processes hits them alike; prints the median and best wall time and the peak
RSS of each (a child's peak RSS includes the moment before it execs, so bare
``python -c pass`` shows about the size of this script). Commands:

  * ``python -c pass``: the interpreter alone (the reference);
  * ``import rjieba; rjieba.Jieba().cut(...)``: jieba-rs and its dictionary alone;
  * ``simdup fingerprint --text 你好`` with the table cache filled (every start but the first);
  * the same with an empty cache folder (the first start: builds the IDF, POS and
    stop-word caches), once per round.

Goal: <= 1.0 s wall and <= 150 MiB RSS with the cache filled.

    python benchmarks/bench_startup.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak RSS in MiB of one run of ``argv``."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(argv)} failed with status {proc.returncode}")
    return wall, usage.ru_maxrss / 1024  # kB on Linux


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    simdup = str(Path(sys.executable).with_name("simdup"))
    cache = tempfile.mkdtemp(prefix="simdup-cache-")
    env = dict(os.environ, SIMDUP_CACHE=cache)
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "rjieba.Jieba().cut alone": [sys.executable, "-c", "import rjieba; rjieba.Jieba().cut('你好', True)"],
        "simdup fingerprint --text 你好": [simdup, "fingerprint", "--text", "你好"],
    }
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    results["the same, empty cache"] = []
    try:
        run(commands["simdup fingerprint --text 你好"], env)  # fill the cache
        for _ in range(args.rounds):
            for name, argv in commands.items():
                results[name].append(run(argv, env))
            empty = tempfile.mkdtemp(prefix="simdup-cache-")
            try:
                results["the same, empty cache"].append(run(commands["simdup fingerprint --text 你好"], dict(env, SIMDUP_CACHE=empty)))
            finally:
                shutil.rmtree(empty)
    finally:
        shutil.rmtree(cache)
    print(f"{args.rounds} rounds; {os.cpu_count()} cores, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'command':34s} {'median s':>9s} {'best s':>7s} {'RSS MiB median':>15s} {'max':>6s}")
    for name, runs in results.items():
        walls = [w for w, _ in runs]
        rss = [r for _, r in runs]
        print(f"{name:34s} {statistics.median(walls):9.2f} {min(walls):7.2f} {statistics.median(rss):15.1f} {max(rss):6.1f}")
    base = statistics.median(w for w, _ in results["python -c pass"])
    cold = statistics.median(w for w, _ in results["simdup fingerprint --text 你好"])
    print(f"simdup fingerprint minus python -c pass, median: {cold - base:.2f} s (goal: whole <= 1.0 s, <= 150 MiB)")


if __name__ == "__main__":
    main()
