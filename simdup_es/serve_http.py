"""The connection limits of ``simdup serve``: uvicorn's HTTP/1.1 protocol (on httptools) with a bounded request
head and a deadline for it.

uvicorn bounds neither the size of a request's head on httptools nor how long a connection may stay
open before its first request: a client sending a 100 MB header holds the event loop parsing it, and
a thousand connections that never send anything stay open for good. :func:`protocol` makes the
protocol class that refuses a head (request line and headers) over ``max_head`` bytes with 431 and
closes a connection whose head is not complete ``idle`` seconds after it opened (or after the
request's first byte). Between requests uvicorn's own keep-alive timeout applies (``timeout_keep_alive``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol


def _too_large(max_head: int) -> bytes:
    """The 431 answer, whole, with its JSON error."""
    body = json.dumps({"error": {"type": "header_too_large", "message": f"the request line and headers are larger "
                                 f"than {max_head:,} bytes: send shorter headers"}}).encode()
    return b"".join([STATUS_LINE[431], b"content-type: application/json\r\ncontent-length: ", str(len(body)).encode(),
                     b"\r\nconnection: close\r\n\r\n", body])


def protocol(max_head: int, idle: float) -> type[HttpToolsProtocol]:
    """An :class:`HttpToolsProtocol` with a head of at most ``max_head`` bytes, complete within ``idle`` seconds."""

    class BoundedProtocol(HttpToolsProtocol):
        _in_head = True
        _head = 0  # bytes of the request line and headers parsed
        _received = 0  # bytes received since the head began
        _refused = False
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()  # a connection that sends nothing is closed too

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._deadline is None:
                self._deadline = self.loop.call_later(idle, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if self._in_head and not self.transport.is_closing():
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            if self._in_head:  # a head over many reads: httptools keeps it all until a header is complete
                self._received += len(data)
            super().data_received(data)
            if self._in_head and self._received > max_head:
                self._refuse()

        def on_url(self, url: bytes) -> None:
            self._head += len(url)
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._head += len(name) + len(value) + 4
            super().on_header(name, value)

        def _refuse(self) -> None:
            if not self._refused and not self.transport.is_closing():
                self._refused = True
                self.transport.write(_too_large(max_head))
                self.transport.close()

        def send_400_response(self, msg: str) -> None:
            if not self._refused:  # after a 431 the parser fails on what follows: one answer is enough
                super().send_400_response(msg)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._in_head = True
            self._arm()

        def on_headers_complete(self) -> None:
            too_large = self._head > max_head
            self._in_head, self._head, self._received = False, 0, 0
            self._disarm()
            if too_large:  # the whole head came in one read: refused before the application sees it
                self._refuse()
                return
            super().on_headers_complete()

        def on_response_complete(self) -> None:
            # The next request's head: uvicorn's keep-alive timer runs until its first byte.
            self._in_head, self._head, self._received = True, 0, 0
            super().on_response_complete()

    return BoundedProtocol


MMAP_THRESHOLD = 128 * 1024
"""Allocations from this size on are mapped apart, and given back to the system when freed (glibc's ``M_MMAP_THRESHOLD``,
fixed: :func:`give_back_freed_memory`)."""


def give_back_freed_memory(threshold: int = MMAP_THRESHOLD) -> bool:
    """Make glibc map every allocation of ``threshold`` bytes or more apart (``mallopt(M_MMAP_THRESHOLD)``), so that the
    large buffers of a request (a 10 MB text's arrays, tens of MB each) go back to the system when freed.

    By default glibc raises this threshold after each large buffer freed (up to 32 MiB), after which such buffers
    come from its heaps, which keep what they freed: the next steps of a request, and the next requests, then add
    to the peak instead of reusing it (measured, ``benchmarks/bench_serve_memory.py``: a 10 MB search +258 MB
    against +173 MB). False where there is no glibc (or ``MALLOC_MMAP_THRESHOLD_`` already sets it: the user's
    choice stands)."""
    import ctypes
    import ctypes.util
    import os

    if os.environ.get("MALLOC_MMAP_THRESHOLD_") is not None:
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    m_mmap_threshold = -3  # malloc.h
    return bool(mallopt(ctypes.c_int(m_mmap_threshold), ctypes.c_int(threshold)))


__all__ = ["MMAP_THRESHOLD", "give_back_freed_memory", "protocol"]
