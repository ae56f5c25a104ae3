"""``simdup serve``: the HTTP service (:mod:`simdup_es.serve`) over the store the options name."""

from __future__ import annotations

import base64
import contextlib
import os
import signal
import socket
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click

from ..common import byte_size
from ..errors import ConfigError, SimdupError
from ..multilevel import MultiParams
from ..parts import PartPrinter
from ._common import compare_options, compare_params, fingerprint_options, make_comparer, make_fingerprinter
from ..store.base import Store
from .store_cmds import k_option, note_other_versions, open_store, pop_store_opts, store_options

def parse_size(text: str) -> int:
    """Bytes from ``10M``, ``512k``, ``1.5MB`` or ``2000000`` (k, M, G are powers of 1024)."""
    size = byte_size(text)
    if size is None:
        raise click.BadParameter(f"{text!r} is not a size: give bytes, or a number with k, M or G (e.g. 10M)")
    if size < 1:
        raise click.BadParameter("the size must be at least 1 byte")
    return size


def secrets_of(opts: dict[str, Any]) -> tuple[str, ...]:
    """The credentials the options (or the ``SIMDUP_ES_*`` variables) hold, as they may appear in text."""
    password = opts.get("password") or os.environ.get("SIMDUP_ES_PASSWORD")
    api_key = opts.get("api_key") or os.environ.get("SIMDUP_ES_API_KEY")
    user = opts.get("user") or os.environ.get("SIMDUP_ES_USER")
    url = opts.get("es_url") or os.environ.get("SIMDUP_ES_URL") or ""
    found = [password, api_key, *(api_key.split(":", 1) if api_key else [])]
    try:
        found.append(urlsplit(url).password)
    except ValueError:
        pass
    if user and password:
        found.append(base64.b64encode(f"{user}:{password}".encode()).decode())
    if api_key:
        found.append(base64.b64encode(api_key.encode()).decode())
    # Longest first: a secret inside another is replaced after it.
    return tuple(sorted({s for s in found if s and len(s) >= 3}, key=len, reverse=True))


@click.command()
@store_options
@fingerprint_options
@compare_options
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0: every interface; put a proxy with TLS and access control in front).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port to listen on.")
@k_option
@click.option("--limit", type=click.IntRange(min=0), default=20, show_default=True,
              help="Copies a search returns when the request does not say.")
@click.option("--partial-threshold", type=click.FloatRange(0.0, 1.0), default=MultiParams.partial_threshold,
              show_default=True, help="A partial copy has at least this share of either side copied (default of requests).")
@click.option("--allow-index", is_flag=True, help="Accept POST /documents (indexing). Without it the service only reads.")
@click.option("--max-body", "max_body", default="10M", show_default=True,
              help="Largest request body (bytes, or with k, M, G); larger requests get 413.")
@click.option("--timeout", type=click.FloatRange(min=0.001), default=30.0, show_default=True,
              help="Seconds a request may take; then it gets 504.")
@click.option("--threads", type=click.IntRange(min=1), default=8, show_default=True,
              help="Store and search calls running at once (more requests wait their turn).")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Server processes sharing the port (each with its own copy of the store's index in memory); "
                   "more serve more searches at once on more cores.")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]), default="info",
              show_default=True, help="uvicorn's log level (info logs each request).")
def serve(idf_path: Path | None, marked_words: Path | None, max_bytes: int, host: str, port: int, k: int, limit: int,
          partial_threshold: float, allow_index: bool, max_body: str, timeout: float, threads: int, workers: int, log_level: str,
          **kwargs: Any) -> None:
    """Serve search, compare and the copy reports over HTTP (JSON API and report pages).

    Read-only unless --allow-index. Routes: GET /health; GET or POST /search;
    GET or POST /compare; GET /report/ID (HTML) and /report/ID.json; POST
    /documents (with --allow-index). docs/serve.md describes them.
    """
    try:
        import uvicorn

        from ..serve import ServeSettings, create_app, retry_within
    except ImportError as exc:
        raise ConfigError(f"simdup serve needs Starlette and uvicorn ({exc}): pip install 'simdup-es[serve]' (in a checkout of "
                          "simdup-es: pip install '.[serve]')") from None
    fingerprinter = make_fingerprinter(idf_path, marked_words, max_bytes)
    judged_by = compare_params(kwargs)
    compare = make_comparer(kwargs)
    store_opts = pop_store_opts(kwargs)
    settings = ServeSettings(allow_index=allow_index, max_body_bytes=parse_size(max_body), timeout=timeout,
                             threads=threads, k=k, limit=limit, max_limit=max(limit, 1000),
                             partial_threshold=partial_threshold, secrets=secrets_of(store_opts),
                             compare_params=judged_by)
    mode = "reading and indexing" if allow_index else "read-only"
    where = f"on http://{host}:{port}" + (f" in {workers} processes" if workers > 1 else "")
    announce = f"serving {mode} {where} (GET /health; Ctrl-C stops)"

    def serve_here(sock: socket.socket, alone: bool = False) -> None:
        """Open the store and run the app in this process on ``sock`` (inherited, when there are workers)."""
        with open_store(store_opts, create=allow_index, read_only=not allow_index,
                        retry=retry_within(timeout)) as store:
            app = create_app(store, fingerprinter=fingerprinter, compare=compare, settings=settings)
            if not alone:
                uvicorn.Server(uvicorn.Config(app, log_level=log_level)).run(sockets=[sock])
                return
            _look_at(store, fingerprinter.version)
            click.echo(announce, err=True)  # once the store is open and the port taken: not before a failure
            with contextlib.suppress(KeyboardInterrupt):  # uvicorn passes on the SIGINT it stopped for, once stopped
                uvicorn.Server(uvicorn.Config(app, log_level=log_level)).run(sockets=[sock])

    if workers == 1:
        with contextlib.closing(_listen_or_fail(host, port)) as sock:
            serve_here(sock, alone=True)
        return
    with open_store(store_opts, create=allow_index, read_only=not allow_index) as store:
        _look_at(store, fingerprinter.version)  # once, not in every worker
    # Loaded before the fork, so the workers share the dictionaries' pages.
    PartPrinter(fingerprinter).levels("预热。这是一段文字。")
    compare("预热。", "预热。")
    click.echo(announce, err=True)
    run_workers(serve_here, workers, host, port)


def _look_at(store: Store, version: str) -> None:
    """Say on stderr what searches will not find (other fingerprint versions), or that the store does not answer yet."""
    try:
        note_other_versions(store, version)
    except SimdupError as exc:  # a cluster down now may be up later: the service answers 503 until then
        click.echo(f"warning: the store does not answer now ({exc}); serving anyway: requests get 503 until it does",
                   err=True)


def _listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket made as asyncio makes its own: with ``proto`` set, for asyncio sets
    TCP_NODELAY only on such sockets' connections (without it, Nagle's algorithm and delayed ACKs
    add 40 ms to each small answer)."""
    # IPv4 for a name without ":", as uvicorn binds one ("localhost" may resolve to ::1 first)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    family, kind, proto, _, address = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def _listen_or_fail(host: str, port: int) -> socket.socket:
    """:func:`_listen`, or a :class:`ConfigError` saying why not (the port taken, say)."""
    try:
        return _listen(host, port)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def run_workers(serve_one: Callable[[socket.socket], None], workers: int, host: str, port: int) -> None:
    """``serve_one(sock)`` in ``workers`` forked processes sharing one listening socket, until a signal.

    Each worker opens its own store (an SQLite connection or a client must not cross a
    fork); the kernel spreads the connections. SIGINT and SIGTERM are passed on; when a
    worker dies, the others are stopped and the command fails.
    """
    if not hasattr(os, "fork"):
        raise ConfigError("--workers above 1 needs fork (Linux, macOS): run one process a port behind a proxy instead")
    sock = _listen_or_fail(host, port)
    pids: list[int] = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # the worker: it never returns into the command
            code = 0
            try:
                serve_one(sock)
            except KeyboardInterrupt:  # uvicorn passes on the SIGINT it stopped for, once it has stopped
                pass
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                os._exit(code)
        pids.append(pid)
    sock.close()
    stopping = False

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True
        for child in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signum)

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, stop)
    failed = False
    while pids:
        pid, status = os.wait()
        pids.remove(pid)
        if not stopping and pids:
            failed = True
            click.echo(f"a worker ended (status {status}): stopping the others", err=True)
            stop(signal.SIGTERM, None)
    if failed:
        raise ConfigError("a worker process ended on its own: see its messages above")


def register(group: click.Group) -> None:
    group.add_command(serve)
