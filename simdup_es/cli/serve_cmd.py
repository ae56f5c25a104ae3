"""``simdup serve``: the HTTP service (:mod:`simdup_es.serve`) over the store the options name."""

from __future__ import annotations

import base64
import contextlib
import errno
import ipaddress
import os
import signal
import socket
import traceback
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlsplit

import click

from ..common import byte_size
from ..errors import ConfigError, SimdupError
from ._common import make_service, service_options
from ..service import Service
from .store_cmds import note_other_versions, pop_store_opts, searching, store_options

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
        parts = urlsplit(url)
        in_url = parts.password
    except ValueError:
        in_url = None
    if in_url:  # as written (percent-encoded), as sent, and in the Authorization header a proxy may echo
        user_in_url = unquote(parts.username or "")
        found += [in_url, unquote(in_url), base64.b64encode(f"{user_in_url}:{unquote(in_url)}".encode()).decode()]
    if user and password:
        found.append(base64.b64encode(f"{user}:{password}".encode()).decode())
    if api_key:
        found.append(base64.b64encode(api_key.encode()).decode())
    # Longest first: a secret inside another is replaced after it.
    return tuple(sorted({s for s in found if s and len(s) >= 3}, key=len, reverse=True))


@click.command()
@store_options
@service_options
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0: every interface; put a proxy with TLS and access control in front).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port to listen on.")
@click.option("--limit", type=click.IntRange(min=0), default=20, show_default=True,
              help="Copies a search returns when the request does not say.")
@click.option("--allow-index", is_flag=True, help="Accept POST /documents (indexing). Without it the service only reads.")
@click.option("--max-body", "max_body", default="10M", show_default=True,
              help="Largest request body (bytes, or with k, M, G); larger requests get 413.")
@click.option("--max-compare", "max_compare", default="512k", show_default=True,
              help="Largest POST /compare body (bytes, or with k, M, G; --max-body if smaller): a comparison of two texts "
                   "takes memory faster than their length. Larger requests get 413.")
@click.option("--timeout", type=click.FloatRange(min=0.001), default=30.0, show_default=True,
              help="Seconds a request may take; then it gets 504.")
@click.option("--threads", type=click.IntRange(min=1), default=8, show_default=True,
              help="Store and search calls running at once (more requests wait their turn).")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Server processes sharing the port (each with its own copy of the store's index in memory); "
                   "more serve more searches at once on more cores.")
@click.option("--token", envvar="SIMDUP_SERVE_TOKEN", default=None,
              help="Writes (POST /documents) must carry the header 'Authorization: Bearer TOKEN' "
                   "[env var: SIMDUP_SERVE_TOKEN].")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="A host name requests may give in their Host header (repeatable). On a loopback address "
                   "(the default --host) only localhost, 127.0.0.1 and ::1 are allowed besides these, so that a web "
                   "page cannot reach the server through a DNS name it points at 127.0.0.1; elsewhere any host "
                   "unless some are given.")
@click.option("--max-header", "max_header", default="64k", show_default=True,
              help="Largest request line and headers (bytes, or with k, M); larger requests get 431.")
@click.option("--idle-timeout", type=click.IntRange(min=1), default=5, show_default=True,
              help="Seconds a connection may stay idle (before a request, between requests) or take to send a "
                   "request's headers; then it is closed.")
@click.option("--max-connections", type=click.IntRange(min=1), default=None,
              help="Connections open at once in a process (idle ones included); while more are open, every request "
                   "gets 503. Default: no limit but the open files the system allows (raised to its hard limit).")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]), default="info",
              show_default=True, help="uvicorn's log level (info logs each request).")
def serve(host: str, port: int, limit: int, allow_index: bool, max_body: str, max_compare: str, timeout: float,
          threads: int, workers: int, token: str | None, allowed_hosts: tuple[str, ...], max_header: str,
          idle_timeout: int, max_connections: int | None, log_level: str, **kwargs: Any) -> None:
    """Serve search, compare and the copy reports over HTTP (JSON API and report pages).

    Read-only unless --allow-index. Routes: GET / (a page to report a pasted
    or uploaded text, or a stored document); GET /docs (the API); GET
    /health; GET or POST /search; GET or POST /compare; GET /report/ID (HTML)
    and /report/ID.json; POST /report; POST /documents (with --allow-index).
    docs/serve.md describes them. Request bodies must be JSON sent as
    'Content-Type: application/json'. -k and --partial-threshold are what
    requests get when they do not say; a request may ask for a smaller k.
    """
    try:
        import uvicorn

        from ..serve import ServeSettings, create_app, retry_within, scrub
        from ..serve_http import give_back_freed_memory, protocol
    except ImportError as exc:
        raise ConfigError(f"simdup serve needs Starlette and uvicorn ({exc}): pip install 'simdup-es[serve]' (in a checkout of "
                          "simdup-es: pip install '.[serve]')") from None
    give_back_freed_memory()  # before the workers fork: theirs too
    service = make_service(kwargs)
    store_opts = pop_store_opts(kwargs)
    hosts = tuple(h.lower() for h in allowed_hosts) + (LOOPBACK_NAMES if _loopback(host) else ())
    settings = ServeSettings(allow_index=allow_index, max_body_bytes=parse_size(max_body),
                             max_compare_bytes=parse_size(max_compare), timeout=timeout,
                             threads=threads, limit=limit, max_limit=max(limit, 1000), secrets=secrets_of(store_opts),
                             allowed_hosts=hosts, token=token)
    head = parse_size(max_header)
    limits: dict[str, Any] = {"log_level": log_level, "http": protocol(head, idle_timeout), "limit_concurrency": max_connections,
                              "timeout_keep_alive": idle_timeout, "h11_max_incomplete_event_size": head}
    hidden = (*settings.secrets, *([token] if token else []))
    _more_open_files()
    mode = "reading and indexing" if allow_index else "read-only"
    where = f"on http://{host}:{port}" + (f" in {workers} processes" if workers > 1 else "")
    announce = f"serving {mode} {where} (start page /, API docs /docs, GET /health; Ctrl-C stops)"

    def serve_here(sock: socket.socket, alone: bool = False) -> None:
        """Open the store and run the app in this process on ``sock`` (inherited, when there are workers)."""
        with searching(store_opts, service, create=allow_index, read_only=not allow_index,
                       retry=retry_within(timeout)) as served:
            app = create_app(served, settings)
            if not alone:
                uvicorn.Server(uvicorn.Config(app, **limits)).run(sockets=[sock])
                return
            _look_at(served, lambda text: scrub(text, hidden))
            click.echo(announce, err=True)  # once the store is open and the port taken: not before a failure
            with contextlib.suppress(KeyboardInterrupt):  # uvicorn passes on the SIGINT it stopped for, once stopped
                uvicorn.Server(uvicorn.Config(app, **limits)).run(sockets=[sock])

    if workers == 1:
        with contextlib.closing(_listen_or_fail(host, port)) as sock:
            serve_here(sock, alone=True)
        return
    with searching(store_opts, service, create=allow_index, read_only=not allow_index) as served:
        _look_at(served, lambda text: scrub(text, hidden))  # once, not in every worker
    # Loaded before the fork, so the workers share the dictionaries' pages.
    service.printer.levels("预热。这是一段文字。")
    service.comparer("预热。", "预热。")
    click.echo(announce, err=True)
    run_workers(serve_here, workers, host, port)


def _more_open_files() -> None:
    """Raise the soft limit of open files to the hard one: each connection is a file, and at the soft limit
    (often 1,024) new connections are not accepted until idle ones close (``--idle-timeout``)."""
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        target = 1 << 20 if hard == resource.RLIM_INFINITY else hard
        if soft != resource.RLIM_INFINITY and soft < target:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def _loopback(host: str) -> bool:
    """Whether ``host`` (``--host``) is a loopback address or name, which only this machine reaches."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _look_at(service: Service, scrubbed: Callable[[str], str] = str) -> None:
    """Say on stderr what searches will not find (other fingerprint versions), or that the store does not answer yet
    (the message ``scrubbed`` of credentials a cluster or proxy may echo)."""
    try:
        note_other_versions(service)
    except SimdupError as exc:  # a cluster down now may be up later: the service answers 503 until then
        click.echo(scrubbed(f"warning: the store does not answer now ({exc}); serving anyway: requests get 503 until "
                            "it does"), err=True)


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
        busy = " (choose another with --port)" if exc.errno == errno.EADDRINUSE else ""
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}{busy}") from None


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
