"""A fault-injecting HTTP proxy on 127.0.0.1 in front of the real node (for the fault suite).

Everything it does not fault it forwards unchanged. Faults, each a probability
(drawn from a seeded generator, so a run is repeatable) or a setting:

``bulk_429``
    answer a ``_bulk`` request 429 as a whole, without forwarding it;
``item_429``
    answer each item of a ``_bulk`` request 429 on its own: that item is not
    forwarded (the node never sees it, as when a real node rejects it);
``reset``
    read a ``_bulk`` request, then reset the connection (nothing forwarded);
``delay``
    seconds to wait before forwarding any request;
``down``
    refuse every request by resetting its connection, as a killed node does;
``refuse``
    an HTTP status (401, 403, 500...) to answer every request with, as a
    cluster that refuses the credentials or fails;
``refuse_bulk``
    an HTTP status to answer every ``_bulk`` request with (503: a proxy whose
    node is down);
``everything``
    ``bulk_429`` and ``reset`` hit every request, not only ``_bulk``;
``after``
    the ``_bulk`` faults start once this many ``_bulk`` requests were forwarded
    (``down_after``: the proxy goes down then).

It counts the ``_bulk`` requests it received (``bulk_requests``: each attempt,
faulted or not), the ids of the bulk items it forwarded (``sent``), and records the
``Authorization`` headers it saw, so a test can prove a secret was sent before
it searches the output for it.
"""

from __future__ import annotations

import http.client
import json
import random
import socket
import struct
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "accept-encoding", "host"}
_BUSY = {"type": "es_rejected_execution_exception", "reason": "rejected by the fault proxy"}


class FaultProxy:
    """``with FaultProxy(upstream) as proxy:`` ... ``proxy.url`` ... (faults settable at any time)."""

    def __init__(self, upstream: str, *, seed: int = 13) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 9200)
        self.bulk_429 = self.item_429 = self.reset = self.delay = 0.0
        self.down = self.everything = False
        self.after = 0
        self.refuse: int | None = None
        self.refuse_bulk: int | None = None
        self.bulk_requests = 0
        self.down_after: int | None = None
        self.forwarded = 0  # _bulk requests
        self.sent: Counter[str] = Counter()  # bulk item ids forwarded
        self.counts: Counter[str] = Counter()
        self.authorization: set[str] = set()
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._server.handle_error = lambda request, address: None  # type: ignore[method-assign] # resets are on purpose
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def chance(self, p: float) -> bool:
        with self._lock:
            return p > 0 and self._rng.random() < p

    def count(self, what: str, n: int = 1) -> None:
        with self._lock:
            self.counts[what] += n


def _handler(proxy: FaultProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _any(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.headers.get("Authorization"):
                proxy.authorization.add(self.headers["Authorization"])
            bulk = self.path.split("?")[0].endswith("/_bulk")
            if bulk:
                with proxy._lock:
                    proxy.bulk_requests += 1
            faults = (bulk or proxy.everything) and proxy.forwarded >= proxy.after
            if proxy.down or (faults and proxy.chance(proxy.reset)):
                proxy.count("reset")
                return self._reset()
            if proxy.delay:
                time.sleep(proxy.delay)
            if proxy.refuse:
                error = {"type": "security_exception", "reason": f"refused by the fault proxy ({proxy.refuse})"}
                return self._answer(proxy.refuse, {"error": {**error, "root_cause": [error]}, "status": proxy.refuse})
            if bulk and proxy.refuse_bulk:
                error = {"type": "unavailable", "reason": f"answered {proxy.refuse_bulk} by the fault proxy"}
                return self._answer(proxy.refuse_bulk, {"error": {**error, "root_cause": [error]},
                                                        "status": proxy.refuse_bulk})
            if faults and proxy.chance(proxy.bulk_429):
                proxy.count("bulk_429")
                return self._answer(429, {"error": {**_BUSY, "root_cause": [_BUSY]}, "status": 429})
            if bulk:
                return self._bulk_items(body, proxy.item_429 if faults else 0.0)
            status, headers, data = self._forward(body)
            self._answer(status, data, headers)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _any

        def _forward(self, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
            conn = http.client.HTTPConnection(*proxy.upstream, timeout=120)
            try:
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                conn.request(self.command, self.path, body=body if body or self.command != "GET" else None,
                             headers=headers)
                response = conn.getresponse()
                data = response.read()
                kept = [(k, v) for k, v in response.getheaders() if k.lower() not in _HOP]
                return response.status, kept, data
            finally:
                conn.close()

        def _bulk_items(self, body: bytes, item_429: float) -> None:
            """Answer some items 429 and forward the rest, merging the answers in order."""
            lines = body.split(b"\n")
            items: list[tuple[dict[str, Any], bytes]] = []
            n = 0
            while n < len(lines):
                if not lines[n].strip():
                    n += 1
                    continue
                action = json.loads(lines[n])
                size = 1 if "delete" in action else 2
                items.append((action, b"\n".join(lines[n:n + size]) + b"\n"))
                n += size
            rejected = [proxy.chance(item_429) for _ in items]
            killed = False
            proxy.count("item_429", sum(rejected))
            kept = [(action, raw) for (action, raw), r in zip(items, rejected) if not r]
            answers: list[Any] = []
            headers: list[tuple[str, str]] = [("X-Elastic-Product", "Elasticsearch")]
            if kept:
                status, headers, data = self._forward(b"".join(raw for _, raw in kept))
                with proxy._lock:
                    proxy.forwarded += 1
                    proxy.sent.update(str(next(iter(action.values())).get("_id")) for action, _ in kept)
                    killed = proxy.down_after is not None and proxy.forwarded >= proxy.down_after
                    proxy.down = proxy.down or killed
                if killed:  # the node wrote the request, then died before it answered
                    return self._reset()
                if status != 200:
                    return self._answer(status, data, headers)
                answers = json.loads(data)["items"]
            merged = []
            for (action, _), r in zip(items, rejected):
                if r:
                    op, meta = next(iter(action.items()))
                    merged.append({op: {"_index": meta.get("_index", ""), "_id": meta.get("_id"), "status": 429,
                                        "error": _BUSY}})
                else:
                    merged.append(answers.pop(0))
            errors = any(next(iter(item.values())).get("status", 200) >= 300 for item in merged)
            self._answer(200, {"took": 1, "errors": errors, "items": merged}, headers)

        def _answer(self, status: int, data: Any, headers: list[tuple[str, str]] | None = None) -> None:
            payload = data if isinstance(data, bytes) else json.dumps(data).encode()
            self.send_response(status)
            names = set()
            for k, v in headers or [("X-Elastic-Product", "Elasticsearch"), ("Content-Type", "application/json")]:
                names.add(k.lower())
                self.send_header(k, v)
            if "content-type" not in names:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        def _reset(self) -> None:
            # SO_LINGER 0: close sends RST, as a killed process's socket does.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True

        def finish(self) -> None:
            try:
                super().finish()
            except (OSError, ValueError):
                pass

    return Handler
