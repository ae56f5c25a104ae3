"""simdup serve's peak memory against the size of one request.

For each request size and route, a fresh ``simdup serve`` (embedded store of the first ``--docs``
records of the zh corpus, one process) gets one request of about that many bytes, and the server
process's peak resident memory (``VmHWM`` of /proc) is read before it (the server loaded, idle) and
after the answer (a request of 20 kB first, which loads what any first request loads: :func:`warm_of`). Requests:
``POST /search`` and ``POST /report`` of a text made of corpus documents one after another;
``POST /compare`` of such a text with itself edited (every third line left out), three fifths and two fifths of the size;
``POST /documents`` of corpus documents (a server started with ``--allow-index`` on a copy of the
store). The answer is read as it comes and counted, not kept. The ratio printed is the memory the
request added (peak after minus peak before) over the request's bytes, the figure the route's
largest allowed request multiplies into what one request can cost; a request past that limit gets
413 (printed as such, no ratio).

    python benchmarks/bench_serve_memory.py --sizes 128k,512k,2M,10M --routes search,compare,report,documents
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
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
    """Corpus documents one after another, as many as ``size`` bytes of UTF-8 hold (from the ``skip``-th on)."""
    parts, total = [], 0
    for record in records[skip:] + records[:skip]:
        total += len(record["text"].encode()) + 1
        if total > size:
            break
        parts.append(record["text"])
    return "\n".join(parts)


def edited(text: str) -> str:
    return "\n".join(line for i, line in enumerate(text.splitlines()) if i % 3 != 2)


def body_of(route: str, records: list[dict[str, Any]], size: int, skip: int | None = None) -> dict[str, Any]:
    """A request of at most ``size`` bytes of JSON (its escapes and framing left room), of the documents from the
    ``skip``-th on (default: the second half of the corpus, none of them stored)."""
    room, skip = size, len(records) // 2 if skip is None else skip
    while len(json.dumps(body := _body(route, records, room, skip), ensure_ascii=False).encode()) > size:
        room -= 20_000
    return body


def _body(route: str, records: list[dict[str, Any]], size: int, skip: int) -> dict[str, Any]:
    if route == "compare":  # b is two thirds of a: together they fill the request
        a = text_of(records, size * 3 // 5, skip=skip)
        return {"a": a, "b": edited(a)}
    if route == "documents":  # new ids: the store grows by each document posted
        documents, total = [], 0
        for i, record in enumerate(records[skip:] * (1 + size // 2_000_000)):
            total += len(json.dumps(record, ensure_ascii=False).encode()) + 20
            if total > size:
                break
            documents.append({"id": f"posted-{i}", "text": record["text"], "title": record.get("title")})
        return {"documents": documents}
    return {"text": text_of(records, size, skip=skip)}


def warm_of(route: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    """A request of about 20 kB that finds copies (stored documents with every fourth character changed): it loads what
    any first request loads (the word-level check's thesaurus, the caches' first stored texts), which are not the
    measured request's."""
    if route == "documents":
        return body_of(route, records, 20_000)
    text = text_of(records, 10_000 if route == "compare" else 20_000)  # skip 0: stored documents
    retouched = "".join("的" if i % 4 == 3 and not c.isspace() else c for i, c in enumerate(text))
    return {"a": text, "b": retouched} if route == "compare" else {"text": retouched}


def post(port: int, route: str, body: bytes) -> tuple[int, int]:
    """The status and the bytes of the answer, read as it comes (a client that keeps no answer whole)."""
    import httpx2

    with httpx2.stream("POST", f"http://127.0.0.1:{port}/{route}", content=body, timeout=900,
                       headers={"content-type": "application/json"}) as response:
        return response.status_code, sum(map(len, response.iter_bytes()))


def measure(folder: Path, port: int, route: str, body: bytes, warm: bytes,
            options: tuple[str, ...] = ()) -> tuple[int, float, int, int, int]:
    """Status, seconds, the answer's bytes, and the server's peak memory (KiB) before and after one request (``warm``
    first: the dictionaries and tables a first request loads are not the request's). ``options``: of simdup serve."""
    if route == "documents":  # a writable copy: the bench's store stays as built
        copy = folder.parent / "written"
        shutil.rmtree(copy, ignore_errors=True)
        folder = Path(shutil.copytree(folder, copy))
        options = (*options, "--allow-index")
    server = start_server(folder, port, threads=1, limit=20, workers=1, options=options)
    try:
        status, _ = post(port, route, warm)
        assert status == 200, f"the warming request got {status}"
        before = peak_kib(server.pid)
        started = time.perf_counter()
        status, answered = post(port, route, body)
        seconds = time.perf_counter() - started
        return status, seconds, answered, before, peak_kib(server.pid)
    finally:
        server.terminate()
        server.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--sizes", default="128k,512k,1M")
    parser.add_argument("--routes", default="search,compare,report,documents")
    parser.add_argument("--port", type=int, default=18479)
    parser.add_argument("--store", type=Path, help="an embedded store to serve (default: built from --docs)")
    parser.add_argument("--skip", type=int, help="requests from this corpus document on (default: the second half)")
    parser.add_argument("--serve-options", default="", help="more options of simdup serve, e.g. '--max-compare 2M'")
    args = parser.parse_args()
    records = corpus(10**6)  # all of it (some 11 MB of text): requests are made of the documents not stored
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.store or Path(tmp) / "store"
        if args.store is None:
            build(folder, records[:args.docs])
        print(f"{'route':9} {'request':>10} {'status':>6} {'seconds':>8} {'answer':>10} {'idle peak':>10} {'peak':>10} "
              f"{'added':>10} {'added / request':>16}", flush=True)
        for size_text in args.sizes.split(","):
            size = byte_size(size_text)
            assert size, size_text
            for route in args.routes.split(","):
                body = json.dumps(body_of(route, records, size, args.skip), ensure_ascii=False).encode()
                warm = json.dumps(warm_of(route, records), ensure_ascii=False).encode()
                status, seconds, answered, before, after = measure(folder, args.port, route, body, warm,
                                                                    tuple(shlex.split(args.serve_options)))
                added = (after - before) * 1024
                ratio = f"{added / len(body):>15.1f}x" if status == 200 else f"{'(refused)':>16}"
                print(f"{route:9} {len(body) / 1e6:>8.2f}MB {status:>6} {seconds:>8.1f} {answered / 1e6:>8.2f}MB "
                      f"{before / 1024:>8.0f}MB {after / 1024:>8.0f}MB {added / 1e6:>8.0f}MB {ratio}", flush=True)


if __name__ == "__main__":
    main()
