"""simdup serve under load: 50 concurrent clients for 60 s against the embedded store.

The store: the first ``--docs`` records of the zh corpus (data/zh-docs.jsonl from
scripts/fetch-corpus, or $SIMDUP_DATA), indexed with every level into a fresh
folder (or ``--store DIR``, reused). The server: ``simdup serve --store DIR`` in a
subprocess (uvicorn, one process, read-only). The clients: ``--clients`` asyncio
tasks on one httpx2 client in another process, each posting ``POST /search`` with
the text of a query document, one after the other, for ``--seconds``.

Queries: ``--queries`` stored documents drawn at random (seeded; by default every
one), a third with their second half cut (partial copies of themselves), so the
searches do what a user's do: fingerprint and levels of the text, candidates, the
comparison matrix. Each caller takes the next text of the list, so in 60 s a text is
searched about once or twice in each phase: what a server or the library keeps from
one search to the next helps as it would with users' texts, through the stored
documents that are found again and again (the sources of many copies), not
through a query seen a moment ago (one client alone goes through the list from
its other end).

Two references, both the library call the server makes for a search,
:func:`simdup_es.find_copies` (same store opened read-only, same arguments, the
stored documents of the results read), timed in the same run:

* **the library under the same load** (the goal's reference): ``--clients``
  callers at once for ``--seconds`` (half before the HTTP load, half after it, so a
  change in the machine's other load shows as a difference between the halves), as
  threads spread over as many processes as the server has (``--workers``), each
  process with one store shared by its threads and at most ``--threads`` calls at
  once, the others waiting their turn first come, first served (``--library-threads``
  to change it), as a server process shares its store and its threads. With 50
  callers on 2 cores every call waits for the processor (the GIL in a process, the
  cores between processes), so its p50 is mostly queueing too: by Little's law
  about callers / throughput. ``client p50 / this p50`` is what serving
  over HTTP costs under load: the HTTP round trip, JSON both ways, the event loop,
  and the work the answer needs beyond ``find_copies`` (each match's copied
  ``spans`` in original characters, which ``--no-spans`` leaves out: the clients
  then post ``"spans": false`` and get what ``find_copies`` gives, no more);
* **the library idle**: one call at a time, before the load and again after it.
  ``client p50 / this p50`` with 50 clients is mostly the queueing any server has
  on this machine (50 searches at once on 2 cores), not the cost of HTTP.

Also printed: one client alone (no concurrency; its p50 over the idle library is the
cost of serving one search: HTTP and the spans), the server's own time per request
(``Server-Timing``: waiting for a thread, and the call), throughput of each, and the
CPU seconds each spent per search (server processes, client process, library
processes: read from ``/proc`` and ``getrusage``), a figure the machine's other
load changes much less than latencies.

    python benchmarks/bench_serve.py [--clients 50] [--seconds 60] [--docs 2000] [--queries 200]
        [--store DIR] [--port 9271] [--threads 8] [--workers 1] [--library-threads N] [--idle 400] [--no-spans]

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


def library_times(folder: Path, queries: list[str], limit: int) -> tuple[list[float], float]:
    """Seconds of the library call for each query, one at a time (find_copies over the store opened
    read-only), and the CPU seconds of them all."""
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
        cpu = time.process_time()
        for text in queries:
            started = time.perf_counter()
            find_copies(store, text, printer=printer, compare=compare, limit=limit)  # reads every result
            out.append(time.perf_counter() - started)
        return out, time.process_time() - cpu
    finally:
        store.close()


class FifoLimiter:
    """At most ``n`` holders at once, the others let in first come, first served, as the server's thread
    limiter (anyio's CapacityLimiter) does. (``threading.Semaphore`` is not fair: a thread that releases it
    and asks again at once mostly wins, so a few callers run and the rest starve, and the p50 of the calls
    made would flatter the library.)"""

    def __init__(self, n: int) -> None:
        import threading
        from collections import deque

        self._lock = threading.Lock()
        self._free = n
        self._waiting: deque[threading.Event] = deque()

    def __enter__(self) -> None:
        import threading

        with self._lock:
            if self._free and not self._waiting:
                self._free -= 1
                return
            turn = threading.Event()
            self._waiting.append(turn)
        turn.wait()  # the slot is handed over by __exit__

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().set()
            else:
                self._free += 1


def _library_process(folder: Path, queries: list[str], limit: int, first: int, threads: int, step: int,
                      seconds: float, running: int, go: Any, out: Any) -> None:
    """One process of the library under load: ``threads`` callers sharing one store, from ``go`` for ``seconds``,
    at most ``running`` calls at once (as a server process runs at most ``--threads``; 0: no limit)."""
    import threading

    from simdup_es import default_fingerprinter, find_copies
    from simdup_es.parts import PartPrinter
    from simdup_es.search import comparer
    from simdup_es.store import open_store

    store = open_store(path=folder, read_only=True)
    printer, compare = PartPrinter(default_fingerprinter()), comparer()
    for text in queries[:5]:  # warm, as the server is before its load
        find_copies(store, text, printer=printer, compare=compare, limit=limit)
    latencies: list[float] = []
    turns = FifoLimiter(running or threads)
    out.send("ready")
    go.wait()
    cpu = time.process_time()
    stop = time.monotonic() + seconds

    def caller(n: int) -> None:
        i = n
        while time.monotonic() < stop:
            text = queries[i % len(queries)]
            i += step
            started = time.perf_counter()  # waiting for a turn included, as a client waits for a thread
            with turns:
                find_copies(store, text, printer=printer, compare=compare, limit=limit)
            latencies.append(time.perf_counter() - started)  # list.append is atomic under the GIL

    started = time.monotonic()
    callers = [threading.Thread(target=caller, args=(first + t,)) for t in range(threads)]
    for t in callers:
        t.start()
    for t in callers:
        t.join()
    out.send({"latencies": latencies, "elapsed": time.monotonic() - started, "cpu": time.process_time() - cpu})
    store.close()


def library_load(folder: Path, queries: list[str], limit: int, callers: int, processes: int, running: int,
                 seconds: float) -> dict[str, Any]:
    """The library call made by ``callers`` at once for ``seconds``: threads spread over ``processes``
    processes (as the server's workers), each process's threads sharing one store, at most ``running``
    calls at once in a process."""
    ctx = multiprocessing.get_context("spawn")
    go = ctx.Event()
    shares = [callers // processes + (1 if w < callers % processes else 0) for w in range(processes)]
    pipes, procs = [], []
    first = 0
    for share in shares:
        receive, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_library_process,
                           args=(folder, queries, limit, first, share, callers, seconds, running, go, send))
        proc.start()
        pipes.append(receive)
        procs.append(proc)
        first += share
    for receive in pipes:
        assert receive.recv() == "ready"
    go.set()
    parts = [receive.recv() for receive in pipes]
    for proc in procs:
        proc.join()
    return {"latencies": [x for part in parts for x in part["latencies"]],
            "elapsed": max(part["elapsed"] for part in parts), "cpu": sum(part["cpu"] for part in parts)}


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` and of its child processes still running (the
    server's workers), from /proc (Linux); NaN elsewhere."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    try:
        while todo:
            p = todo.pop()
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo += [int(c) for c in f.read().split()]
    except OSError:
        return float("nan")
    return total


async def _load(base: str, queries: list[str], clients: int, seconds: float, spans: bool) -> dict[str, Any]:
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
                    r = await http.post("/search", json={"text": text, "spans": spans})
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
        started, cpu = time.monotonic(), time.process_time()
        await asyncio.gather(*(client(n) for n in range(clients)))
        elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
    return {"latencies": latencies, "work": work, "queued": queued, "errors": errors, "elapsed": elapsed,
            "pings": pings, "client_cpu": cpu}


def _client_process(base: str, queries: list[str], clients: int, seconds: float, spans: bool, out: Any) -> None:
    out.send(asyncio.run(_load(base, queries, clients, seconds, spans)))
    out.close()


def run_clients(base: str, queries: list[str], clients: int, seconds: float, server: int,
                spans: bool = True) -> dict[str, Any]:
    """The load from another process (its own GIL and event loop), as real clients are; with the CPU
    seconds the server (process ``server`` and its workers) spent meanwhile."""
    ctx = multiprocessing.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_client_process, args=(base, queries, clients, seconds, spans, send))
    cpu = process_cpu(server)
    proc.start()
    result: dict[str, Any] = receive.recv()
    result["server_cpu"] = process_cpu(server) - cpu  # the server idles while the client process starts
    proc.join()
    return result


def start_server(folder: Path, port: int, threads: int, limit: int, workers: int,
                 options: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
    import httpx2

    cmd = [sys.executable, "-c", "from simdup_es.cli import main; main()", "serve", "--store", str(folder),
           "--port", str(port), "--threads", str(threads), "--workers", str(workers), "--limit", str(limit), "--log-level", "warning",
           "--timeout", "300", *options]
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


def p50(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def row(name: str, latencies: list[float], elapsed: float, cpu: float, errors: str = "") -> str:
    done = len(latencies)
    return (f"| {name} | {done} | {done / elapsed:.1f} | {errors} | {ms(latencies)} | {ms(latencies, 0.95)} "
            f"| {1000 * cpu / max(done, 1):.1f} ms |")


def report(args: argparse.Namespace, n_docs: int, n_queries: int, idle: tuple[list[float], list[float], float],
           lib: tuple[dict[str, Any], dict[str, Any]], alone: dict[str, Any], load: dict[str, Any]) -> None:
    """The table and the ratios (markdown, for docs/serve.md)."""
    before, after, idle_cpu = idle
    idle_all = before + after
    lib_all = lib[0]["latencies"] + lib[1]["latencies"]
    lib_elapsed, lib_cpu = lib[0]["elapsed"] + lib[1]["elapsed"], lib[0]["cpu"] + lib[1]["cpu"]
    w = args.workers
    print(f"\n{n_docs} documents, {n_queries} query texts (each searched {len(load['latencies']) / n_queries:.1f} "
          f"times by the {args.clients} clients), {os.cpu_count()} cores (shared; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end), {w} server process{'es' if w > 1 else ''} "
          f"of {args.threads} threads; library under load: {args.clients} callers over {w} "
          f"process{'es' if w > 1 else ''}, {args.library_threads or 'all'} at once in each; the clients ask for "
          f"{'the spans' if args.spans else 'no spans'}\n")
    print("| | searches | per s | errors | p50 | p95 | CPU per search |")
    print("|---|---|---|---|---|---|---|")
    print(row("library, one call at a time", idle_all, sum(idle_all), idle_cpu))
    print(row(f"library, {args.clients} callers at once", lib_all, lib_elapsed, lib_cpu))
    for name, r in (("HTTP, 1 client", alone), (f"HTTP, {args.clients} clients", load)):
        errors = str(sum(r["errors"].values())) + (f" {r['errors']}" if r["errors"] else "")
        print(row(name, r["latencies"], r["elapsed"], r["server_cpu"], errors))
    goal = p50(load["latencies"]) / p50(lib_all)
    print(f"\n- library under load, p50 of each half: {ms(lib[0]['latencies'])} before the HTTP load, "
          f"{ms(lib[1]['latencies'])} after; one call at a time: {ms(before)} before, {ms(after)} after")
    print(f"- **the cost of serving under load** (the goal, <= 1.5): {args.clients} clients' p50 / the library's p50 "
          f"with {args.clients} callers = **{goal:.2f}** ({'met' if goal <= 1.5 else 'NOT met'}); "
          f"throughput {len(load['latencies']) / load['elapsed']:.1f}/s against "
          f"{len(lib_all) / lib_elapsed:.1f}/s ({len(load['latencies']) / load['elapsed'] / (len(lib_all) / lib_elapsed):.2f}x)")
    print(f"- queueing: {args.clients} clients' p50 / one library call's p50 (idle) = "
          f"{p50(load['latencies']) / p50(idle_all):.1f} (50 searches at once on {os.cpu_count()} cores wait their turn)")
    print(f"- one search served alone: 1 client's p50 / one library call's p50 = "
          f"{p50(alone['latencies']) / p50(idle_all):.2f}; GET /health round trip p50 {ms(alone['pings'])}")
    print(f"- the server's own time under load ({args.clients} clients, Server-Timing): the call p50 "
          f"{ms(load['work'])}, waiting for a thread p50 {ms(load['queued'])}; the clients' process used "
          f"{1000 * load['client_cpu'] / max(len(load['latencies']), 1):.1f} ms CPU per search")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--port", type=int, default=9271)
    ap.add_argument("--workers", type=int, default=1, help="Server processes (simdup serve --workers).")
    ap.add_argument("--library-threads", type=int, default=None,
                    help="Calls running at once in a process of the library under load (default: --threads, as the "
                         "server; 0: every caller at once).")
    ap.add_argument("--no-spans", dest="spans", action="store_false",
                    help='Clients ask for no spans ("spans": false): the answer find_copies alone gives.')
    ap.add_argument("--idle", type=int, default=400, help="Queries of the library one call at a time (each side).")
    ap.add_argument("--store", type=Path, help="Store folder (built there if missing, kept).")
    args = ap.parse_args()
    if args.library_threads is None:
        args.library_threads = args.threads

    records = corpus(args.docs)
    tmp = None
    folder = args.store
    if folder is None:
        tmp = Path(tempfile.mkdtemp(prefix="bench-serve-"))
        folder = tmp / "store"
    if not folder.exists():
        build(folder, records)
    queries = pick_queries(records, args.queries)
    half = args.seconds / 2
    try:
        before, cpu_before = library_times(folder, queries[: args.idle], args.limit)
        lib_before = library_load(folder, queries, args.limit, args.clients, args.workers, args.library_threads, half)
        server = start_server(folder, args.port, args.threads, args.limit, args.workers)
        base = f"http://127.0.0.1:{args.port}"
        try:
            # Alone from the other end of the list: the load then starts on texts the server has not seen.
            alone = run_clients(base, queries[::-1], 1, min(args.seconds, 20.0), server.pid, args.spans)
            load = run_clients(base, queries, args.clients, args.seconds, server.pid, args.spans)
        finally:
            server.terminate()
            server.wait(30)
        lib_after = library_load(folder, queries, args.limit, args.clients, args.workers, args.library_threads, half)
        after, cpu_after = library_times(folder, queries[: args.idle], args.limit)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    report(args, len(records), len(queries), (before, after, cpu_before + cpu_after), (lib_before, lib_after),
           alone, load)


if __name__ == "__main__":
    main()
