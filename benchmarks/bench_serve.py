"""simdup serve under load: 50 concurrent clients for 60 s against the embedded store.

The store: the first ``--docs`` records of the zh corpus (data/zh-docs.jsonl from
scripts/fetch-corpus, or $SIMDUP_DATA), indexed with every level into a fresh
folder (or ``--store DIR``, reused). The server: ``simdup serve --store DIR`` in a
subprocess (uvicorn, one process, read-only). The clients: ``--clients`` asyncio
tasks on one httpx2 client in another process, each posting ``POST /search`` with
the text of a query document, one after the other, for ``--seconds``.

Queries: ``--queries`` stored documents drawn at random (seeded), a third with their
second half cut (partial copies of themselves), so the searches do what a user's
do: fingerprint and levels of the text, candidates, the comparison matrix.

The reference, in this process, on the same queries and the same store opened
read-only: the library call the server makes, :func:`simdup_es.find_copies` (with
the stored documents read), one at a time, timed before the load and again after
it (the server idle both times). Printed side by side:

* the library call, p50;
* one client alone (no concurrency): the client's p50 (the HTTP round trip over
  localhost included) and the server's own time (``Server-Timing`` header);
* ``--clients`` at once: requests, errors (any status but 200, or a failed
  connection), throughput, the client's p50/p95 (which includes waiting for a turn:
  the searches of one process share one GIL, so 50 at once queue) and the server's
  own time per request, p50.

    python benchmarks/bench_serve.py [--clients 50] [--seconds 60] [--docs 2000] [--queries 200]
        [--store DIR] [--port 9271] [--threads 8] [--workers 1]

The machine is shared and noisy; compare the figures as ratios within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def corpus(limit: int) -> list[dict[str, Any]]:
    path = Path(os.environ.get("SIMDUP_DATA") or ROOT / "data") / "zh-docs.jsonl"
    if not path.exists():
        sys.exit(f"{path} is missing: run scripts/fetch-corpus first")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for _, line in zip(range(limit), f)]


def build(folder: Path, records: list[dict[str, Any]]) -> None:
    from simdup_es import default_fingerprinter
    from simdup_es.indexer import index_items
    from simdup_es.sources import Record
    from simdup_es.store import open_store

    store = open_store(path=folder, create=True)
    try:
        items = [Record(r["text"], r["id"], r["id"], r.get("title")) for r in records]
        summary = index_items(items, store, default_fingerprinter(), on_reject=lambda r: None)
        print(f"indexed {summary.indexed} documents in {summary.seconds:.1f} s into {folder}", flush=True)
    finally:
        store.close()


def pick_queries(records: list[dict[str, Any]], n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    chosen = rng.sample(records, min(n, len(records)))
    return [r["text"][: len(r["text"]) // 2] if i % 3 == 0 else r["text"] for i, r in enumerate(chosen)]


def library_times(folder: Path, queries: list[str], limit: int) -> list[float]:
    """Seconds of the library call for each query: find_copies over the store opened read-only."""
    from simdup_es import default_fingerprinter, find_copies
    from simdup_es.parts import PartPrinter
    from simdup_es.search import comparer
    from simdup_es.store import open_store

    store = open_store(path=folder, read_only=True)
    printer, compare = PartPrinter(default_fingerprinter()), comparer()
    try:
        for text in queries[:5]:  # warm: dictionaries, tables, the index
            find_copies(store, text, printer=printer, compare=compare, limit=limit)
        out = []
        for text in queries:
            started = time.perf_counter()
            docs: dict[str, Any] = {}
            find_copies(store, text, printer=printer, compare=compare, limit=limit, stored=docs)  # reads every result
            out.append(time.perf_counter() - started)
        return out
    finally:
        store.close()


async def _load(base: str, queries: list[str], clients: int, seconds: float) -> dict[str, Any]:
    import httpx2

    latencies: list[float] = []
    work: list[float] = []
    queued: list[float] = []
    errors: dict[str, int] = {}
    stop = time.monotonic() + seconds
    limits = httpx2.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx2.AsyncClient(base_url=base, timeout=120, limits=limits) as http:
        async def client(n: int) -> None:
            i = n
            while time.monotonic() < stop:
                text = queries[i % len(queries)]
                i += clients
                started = time.perf_counter()
                try:
                    r = await http.post("/search", json={"text": text})
                except Exception as exc:  # counted, not raised: the run goes on
                    errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                    continue
                if r.status_code != 200:
                    errors[str(r.status_code)] = errors.get(str(r.status_code), 0) + 1
                    continue
                latencies.append(time.perf_counter() - started)
                timing = dict(part.strip().split(";dur=") for part in r.headers["server-timing"].split(","))
                work.append(float(timing["work"]) / 1000)
                queued.append(float(timing["queue"]) / 1000)

        pings = []
        if clients == 1:  # the HTTP round trip alone: GET /health (one SQLite count) on the same connection
            for _ in range(200):
                started = time.perf_counter()
                await http.get("/health")
                pings.append(time.perf_counter() - started)
        started = time.monotonic()
        await asyncio.gather(*(client(n) for n in range(clients)))
        elapsed = time.monotonic() - started
    return {"latencies": latencies, "work": work, "queued": queued, "errors": errors, "elapsed": elapsed,
            "pings": pings}


def _client_process(base: str, queries: list[str], clients: int, seconds: float, out: Any) -> None:
    out.send(asyncio.run(_load(base, queries, clients, seconds)))
    out.close()


def run_clients(base: str, queries: list[str], clients: int, seconds: float) -> dict[str, Any]:
    """The load from another process (its own GIL and event loop), as real clients are."""
    ctx = multiprocessing.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_client_process, args=(base, queries, clients, seconds, send))
    proc.start()
    result: dict[str, Any] = receive.recv()
    proc.join()
    return result


def start_server(folder: Path, port: int, threads: int, limit: int, workers: int) -> subprocess.Popen[bytes]:
    import httpx2

    cmd = [sys.executable, "-c", "from simdup_es.cli import main; main()", "serve", "--store", str(folder),
           "--port", str(port), "--threads", str(threads), "--workers", str(workers), "--limit", str(limit), "--log-level", "warning",
           "--timeout", "300"]
    server = subprocess.Popen(cmd)
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return server
        except httpx2.HTTPError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            sys.exit("the server did not start")
        time.sleep(0.2)


def ms(values: list[float], q: float = 0.5) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]:.1f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--port", type=int, default=9271)
    ap.add_argument("--workers", type=int, default=1, help="Server processes (simdup serve --workers).")
    ap.add_argument("--store", type=Path, help="Store folder (built there if missing, kept).")
    args = ap.parse_args()

    records = corpus(args.docs)
    tmp = None
    folder = args.store
    if folder is None:
        tmp = Path(tempfile.mkdtemp(prefix="bench-serve-"))
        folder = tmp / "store"
    if not folder.exists():
        build(folder, records)
    queries = pick_queries(records, args.queries)
    try:
        before = library_times(folder, queries, args.limit)
        server = start_server(folder, args.port, args.threads, args.limit, args.workers)
        base = f"http://127.0.0.1:{args.port}"
        try:
            alone = run_clients(base, queries, 1, min(args.seconds, 20.0))
            load = run_clients(base, queries, args.clients, args.seconds)
        finally:
            server.terminate()
            server.wait(30)
        after = library_times(folder, queries, args.limit)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)

    lib = before + after
    lib_p50 = statistics.median(lib)
    print(f"\n{len(records)} documents, {len(queries)} queries, {os.cpu_count()} cores (shared), "
          f"{args.workers} server process{'es' if args.workers > 1 else ''} of {args.threads} threads")
    print(f"library call (find_copies), one at a time: p50 {ms(lib)} (before the load {ms(before)}, after {ms(after)})")
    for name, r in (("1 client", alone), (f"{args.clients} clients", load)):
        done, errors = len(r["latencies"]), sum(r["errors"].values())
        p50 = statistics.median(r["latencies"]) if r["latencies"] else float("nan")
        work = statistics.median(r["work"]) if r["work"] else float("nan")
        print(f"{name}: {done} searches in {r['elapsed']:.1f} s ({done / r['elapsed']:.1f}/s), errors {errors} "
              f"{r['errors'] or ''}")
        print(f"  client latency p50 {ms(r['latencies'])} ({p50 / lib_p50:.2f}x the library call), "
              f"p95 {ms(r['latencies'], 0.95)}")
        if r["pings"]:
            print(f"  GET /health round trip p50 {ms(r['pings'])} (the HTTP round trip with next to no work)")
        print(f"  server: the search call p50 {ms(r['work'])} ({work / lib_p50:.2f}x the library call), "
              f"waiting for a thread p50 {ms(r['queued'])}")
    print(f"library throughput one at a time: {1 / statistics.mean(lib):.1f}/s")


if __name__ == "__main__":
    main()
