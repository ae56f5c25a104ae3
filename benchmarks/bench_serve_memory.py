"""simdup serve's peak memory against the size of one request.

For each request size and route, a fresh ``simdup serve`` (embedded store of the first ``--docs``
records of the zh corpus, one process) gets one request of about that many bytes, and the server
process's peak resident memory (``VmHWM`` of /proc) is read before it (the server loaded, idle) and
after the answer (a request of 20 kB first, which loads what any first request loads). Requests: ``POST /search`` and ``POST /report`` of a text made of corpus
documents one after another; ``POST /compare`` of such a text with itself edited (every third
line left out), each half the size. The ratio printed is the memory the request added (peak
after minus peak before) over the request's bytes, the figure ``--max-body`` multiplies into what
one request can cost.

    python benchmarks/bench_serve_memory.py --sizes 128k,512k,1M --routes search,compare,report
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_serve import build, corpus, start_server  # noqa: E402

from simdup_es.common import byte_size  # noqa: E402


def peak_kib(pid: int) -> int:
    """The process's peak resident memory (VmHWM), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc: Linux only")


def text_of(records: list[dict[str, Any]], size: int, skip: int = 0) -> str:
    """Corpus documents one after another up to ``size`` bytes of UTF-8 (from the ``skip``-th on)."""
    parts, total = [], 0
    for record in records[skip:] + records[:skip]:
        parts.append(record["text"])
        total += len(record["text"].encode())
        if total >= size:
            break
    return "\n".join(parts)


def edited(text: str) -> str:
    return "\n".join(line for i, line in enumerate(text.splitlines()) if i % 3 != 2)


def body_of(route: str, records: list[dict[str, Any]], size: int) -> dict[str, Any]:
    if route == "compare":
        a = text_of(records, size // 2, skip=len(records) // 2)
        return {"a": a, "b": edited(a)}
    return {"text": text_of(records, size, skip=len(records) // 2)}


def measure(folder: Path, port: int, route: str, body: bytes, warm: bytes) -> tuple[int, float, int, int]:
    """Status, seconds, and the server's peak memory (KiB) before and after one request (``warm`` first: the
    dictionaries and tables a first request loads are not the request's)."""
    import httpx2

    server = start_server(folder, port, threads=1, limit=20, workers=1)
    try:
        httpx2.post(f"http://127.0.0.1:{port}/{route}", content=warm, timeout=900,
                    headers={"content-type": "application/json"}).raise_for_status()
        before = peak_kib(server.pid)
        started = time.perf_counter()
        response = httpx2.post(f"http://127.0.0.1:{port}/{route}", content=body, timeout=900,
                               headers={"content-type": "application/json"})
        seconds = time.perf_counter() - started
        return response.status_code, seconds, before, peak_kib(server.pid)
    finally:
        server.terminate()
        server.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--sizes", default="128k,512k,1M")
    parser.add_argument("--routes", default="search,compare,report")
    parser.add_argument("--port", type=int, default=18479)
    parser.add_argument("--store", type=Path, help="an embedded store to serve (default: built from --docs)")
    args = parser.parse_args()
    records = corpus(max(args.docs, 3000))
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.store or Path(tmp) / "store"
        if args.store is None:
            build(folder, records[:args.docs])
        print(f"{'route':8} {'request':>10} {'status':>6} {'seconds':>8} {'idle peak':>10} {'peak':>10} "
              f"{'added / request':>16}", flush=True)
        for size_text in args.sizes.split(","):
            size = byte_size(size_text)
            assert size, size_text
            for route in args.routes.split(","):
                body = json.dumps(body_of(route, records, size), ensure_ascii=False).encode()
                warm = json.dumps(body_of(route, records, 20_000), ensure_ascii=False).encode()
                status, seconds, before, after = measure(folder, args.port, route, body, warm)
                added = (after - before) * 1024
                print(f"{route:8} {len(body) / 1e6:>8.2f}MB {status:>6} {seconds:>8.1f} {before / 1024:>8.0f}MB "
                      f"{after / 1024:>8.0f}MB {added / len(body):>15.1f}x", flush=True)


if __name__ == "__main__":
    main()
