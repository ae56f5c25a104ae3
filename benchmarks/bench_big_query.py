"""A 5 MB query: ``find_copies`` wall time and peak memory, few matches and many.

Two cases, each a 5 MB Chinese query made by a seeded script from ``data/zh-docs.jsonl``
(``SIMDUP_DATA`` or ``--data``):

* ``few``: the 42-document sample store (``simdup sample`` + ``simdup index``); the
  query is corpus documents that are not in it, concatenated up to 5 MB;
* ``many``: a store of 3,000 corpus documents; the query is those same documents'
  texts, in a seeded order, concatenated up to 5 MB (so the query repeats every
  stored document and every candidate is a copy).

Each case runs in a fresh process (so peak RSS is its own) and prints the wall time
and peak RSS of ``find_copies`` beside, in the same run, its reference: the same
process fingerprinting the same text alone (``unify`` + the document fingerprint +
the levels, which every search does first and which is linear in the text), and the
``compare`` of the query with one candidate (the longest stored document; this includes
preparing the query once). Wall time and CPU time (all threads of the process): on a
shared machine the CPU time is what the run would take alone, near enough, as the
search is single-threaded but for RapidFuzz's threads on large matrices. ``--repeat``
runs each case again.

    python benchmarks/bench_big_query.py [--dir DIR] [--mb 5] [--repeat 1] [--cases few,many]
        [--against CHECKOUT]

``--against`` names a checkout of another commit (e.g. ``git worktree add /tmp/old
COMMIT``): every measurement is then made with its ``simdup_es`` too, alternating,
so the two codes are compared within one run.

Stores are built in ``--dir`` (kept, reused when present) or a temporary folder.
The machine is shared: compare the figures within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STORED_MANY = 3000


def corpus(data: Path) -> list[dict]:
    with open(data / "zh-docs.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def big_text(texts: list[str], mb: float, seed: int) -> str:
    """Texts in a seeded order, joined by blank lines, repeated as needed, up to ``mb`` MB of UTF-8."""
    order = list(range(len(texts)))
    random.Random(seed).shuffle(order)
    limit = int(mb * 1_000_000)
    out: list[str] = []
    size = 0
    while size < limit:
        for i in order:
            t = texts[i] + "\n\n"
            out.append(t)
            size += len(t.encode("utf-8"))
            if size >= limit:
                break
    return "".join(out).encode("utf-8")[:limit].decode("utf-8", "ignore")


def build(work: Path, data: Path, mb: float, seed: int) -> dict[str, tuple[Path, Path]]:
    """The two stores and query files in ``work`` (made once, reused when present)."""
    from simdup_es import default_fingerprinter
    from simdup_es.indexer import index_items
    from simdup_es.sources import Record
    from simdup_es.store import open_store

    docs = corpus(data)
    rng = random.Random(seed)
    picked = sorted(rng.sample(range(len(docs)), STORED_MANY))
    sample_lines = (Path(__file__).resolve().parents[1] / "simdup_es" / "data" / "sample.jsonl").read_text(
        encoding="utf-8").splitlines()
    sample = [json.loads(line) for line in sample_lines]
    sample_ids = {d["id"] for d in sample}
    others = [d["text"] for i, d in enumerate(docs) if d["id"] not in sample_ids and i not in set(picked)]
    cases = {
        "few": (sample, big_text(others, mb, seed)),
        "many": ([docs[i] for i in picked], big_text([docs[i]["text"] for i in picked], mb, seed)),
    }
    out = {}
    for name, (stored, query) in cases.items():
        store_dir, query_file = work / f"store-{name}", work / f"query-{name}.txt"
        if not query_file.exists():
            query_file.write_text(query, encoding="utf-8")
            # The stored document the compare reference takes: the longest one (most work).
            longest = max(stored, key=lambda d: len(d["text"]))["text"]
            query_file.with_suffix(".other").write_text(longest, encoding="utf-8")
        if not store_dir.exists():
            t = time.perf_counter()
            with open_store(path=store_dir, create=True) as store:
                records = (Record(d["text"], d.get("title") or "bench", d["id"]) for d in stored)
                summary = index_items(records, store, default_fingerprinter(), on_reject=lambda r: None, workers=2)
                store.refresh()
            print(f"# built {store_dir.name}: {summary.indexed} documents in {time.perf_counter() - t:.0f} s",
                  file=sys.stderr)
        out[name] = (store_dir, query_file)
    return out


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_case(store_dir: Path, query_file: Path, what: str) -> dict:
    """One measurement in this process: ``what`` is ``search``, ``fingerprint`` or ``compare``."""
    from simdup_es import default_fingerprinter
    from simdup_es.parts import PartPrinter
    from simdup_es.search import comparer, find_copies
    from simdup_es.store import open_store
    from simdup_es.text import UnifiedText, unify

    text = query_file.read_text(encoding="utf-8")
    base = peak_mib()
    printer = PartPrinter(default_fingerprinter())
    t, cpu = time.perf_counter(), time.process_time()
    info: dict = {}
    if what == "fingerprint":
        unified = unify(text)
        printer.fingerprinter.fingerprint(UnifiedText(unified), None)
        printer.levels(UnifiedText(unified))
    elif what == "compare":  # the query against one stored document it contains
        other = query_file.with_suffix(".other").read_text(encoding="utf-8")
        unified = unify(text)
        c = comparer()(unified, unify(other))
        info = {"pairs": len(c.pairs)}
    else:
        with open_store(path=store_dir, read_only=True) as store:
            found = find_copies(store, text, printer=printer, compare=comparer(), limit=20)
        info = {"results": len(found), "more": found.more, "top": [m.id for m in found][:3]}
    import simdup_es

    return {"seconds": time.perf_counter() - t, "cpu": time.process_time() - cpu, "peak_mib": peak_mib(),
            "start_mib": base, "module": str(Path(simdup_es.__file__).parents[1]), **info}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=None, help="build stores and queries here (kept; reused when present)")
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("SIMDUP_DATA", "data")))
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--cases", default="few,many")
    ap.add_argument("--against", type=Path, default=None, help="a checkout of another commit to measure alongside")
    ap.add_argument("--one", nargs=3, metavar=("STORE", "QUERY", "WHAT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_case(Path(args.one[0]), Path(args.one[1]), args.one[2])))
        return
    tmp = None
    work = args.dir
    if work is None:
        tmp = work = Path(tempfile.mkdtemp(prefix="simdup-big-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        made = build(work, args.data, args.mb, args.seed)
        print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print("| case | query | what | code | wall s | CPU s | peak RSS MiB | |")
        print("|---|---:|---|---|---:|---:|---:|---|")
        for _ in range(args.repeat):
            for name in args.cases.split(","):
                store_dir, query_file = made[name]
                size = query_file.stat().st_size / 1e6
                for what in ("fingerprint", "compare", "search"):
                    for code in ("this", args.against):
                        if code is None:
                            continue
                        env = dict(os.environ)
                        if code != "this":  # the script's folder, then PYTHONPATH, come before the installed package
                            env["PYTHONPATH"] = str(Path(code).resolve())
                        got = subprocess.run([sys.executable, __file__, "--one", str(store_dir), str(query_file), what],
                                             check=True, capture_output=True, text=True, env=env)
                        r = json.loads(got.stdout.strip().splitlines()[-1])
                        extra = {k: v for k, v in r.items()
                                 if k not in ("seconds", "cpu", "peak_mib", "start_mib", "module")}
                        print(f"| {name} | {size:.1f} MB | {what} | {'this' if code == 'this' else r['module']} "
                              f"| {r['seconds']:.2f} | {r['cpu']:.2f} | {r['peak_mib']:.0f} | {extra or ''} |", flush=True)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
