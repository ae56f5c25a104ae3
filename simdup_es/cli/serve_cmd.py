"""``simdup serve``: the HTTP service (:mod:`simdup_es.serve`) over the store the options name."""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click

from ..config import BlockLayout
from ..errors import ConfigError
from ..multilevel import MultiParams
from ._common import compare_options, fingerprint_options, make_comparer, make_fingerprinter
from .store_cmds import open_store, pop_store_opts, store_options

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b?|b)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes from ``10M``, ``512k``, ``1.5MB`` or ``2000000`` (k, M, G are powers of 1024)."""
    found = _SIZE.match(text)
    if not found:
        raise click.BadParameter(f"{text!r} is not a size: give bytes, or a number with k, M or G (e.g. 10M)")
    unit = (found.group(2) or "b")[0].lower()
    size = int(float(found.group(1)) * {"b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[unit])
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
@click.option("-k", "--k", "k", type=click.IntRange(0, 7), default=3, show_default=True,
              help="Largest Hamming distance of a near-duplicate; requests may ask for less.")
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
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]), default="info",
              show_default=True, help="uvicorn's log level (info logs each request).")
def serve(idf_path: Path | None, marked_words: Path | None, max_bytes: int, host: str, port: int, k: int, limit: int,
          partial_threshold: float, allow_index: bool, max_body: str, timeout: float, threads: int, log_level: str,
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
        raise ConfigError(f"simdup serve needs Starlette and uvicorn ({exc}): pip install 'simdup-es[serve]'") from None
    fingerprinter = make_fingerprinter(idf_path, marked_words, max_bytes)
    compare = make_comparer(kwargs)
    store_opts = pop_store_opts(kwargs)
    settings = ServeSettings(allow_index=allow_index, max_body_bytes=parse_size(max_body), timeout=timeout,
                             threads=threads, limit=limit, max_limit=max(limit, 1000),
                             partial_threshold=partial_threshold, secrets=secrets_of(store_opts))
    with open_store(store_opts, create=allow_index, read_only=not allow_index, layout=BlockLayout(k=k),
                    retry=retry_within(timeout)) as store:
        app = create_app(store, fingerprinter=fingerprinter, compare=compare, settings=settings)
        mode = "reading and indexing" if allow_index else "read-only"
        click.echo(f"serving {mode} on http://{host}:{port} (GET /health; Ctrl-C stops)", err=True)
        uvicorn.run(app, host=host, port=port, log_level=log_level)


def register(group: click.Group) -> None:
    group.add_command(serve)
