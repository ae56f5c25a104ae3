"""``simdup setup|index|search|query``: commands that work on a store."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, TypeVar

import click

from ..config import BlockLayout
from ..fingerprint import Fingerprint, Fingerprinter
from ..indexer import index_items
from ..search import Hit, find_duplicates, stored_query
from ..sources import Fields
from ..store import DEFAULT_INDEX, DEFAULT_PATH
from ..store.base import Store
from ._common import (
    RejectLog,
    bulk_options,
    compare_options,
    echo_json,
    field_options,
    fingerprint_options,
    make_comparer,
    make_fingerprinter,
    open_output,
    progress_bar,
    read_document,
    read_inputs,
)

F = TypeVar("F", bound=Callable[..., Any])


def connection_options(func: F) -> F:
    """How to reach an Elasticsearch index: flags, or ``SIMDUP_ES_*`` variables."""
    options = [
        click.option("--es-url", envvar="SIMDUP_ES_URL", help="Elasticsearch URL [env SIMDUP_ES_URL]."),
        click.option("--index", default=DEFAULT_INDEX, envvar="SIMDUP_INDEX", show_default=True,
                     help="Elasticsearch index [env SIMDUP_INDEX]."),
        click.option("--api-key", envvar="SIMDUP_ES_API_KEY", help="API key [env SIMDUP_ES_API_KEY]."),
        click.option("--user", envvar="SIMDUP_ES_USER", help="User for basic auth [env SIMDUP_ES_USER]."),
        click.option("--password", envvar="SIMDUP_ES_PASSWORD", help="Password [env SIMDUP_ES_PASSWORD]."),
        click.option("--ca-cert", type=click.Path(exists=True, dir_okay=False), envvar="SIMDUP_ES_CA_CERT",
                     help="CA certificate for TLS [env SIMDUP_ES_CA_CERT]."),
        click.option("--insecure", is_flag=True, help="Do not verify TLS certificates (testing only)."),
        click.option("--engine", type=click.Choice(["auto", "elasticsearch", "opensearch"], case_sensitive=False),
                     envvar="SIMDUP_ES_ENGINE",
                     help="The cluster's engine; auto asks it [env SIMDUP_ES_ENGINE; default auto]."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def store_options(func: F) -> F:
    """Where documents live: an Elasticsearch index, or the embedded store."""
    func = connection_options(func)
    return click.option(
        "--store", "store_dir", type=click.Path(file_okay=False, path_type=Path), envvar="SIMDUP_STORE",
        help=f"Embedded store folder (used when no cluster is configured; default {DEFAULT_PATH}).",
    )(func)


CONNECTION_KEYS = ("es_url", "index", "api_key", "user", "password", "ca_cert", "insecure", "engine")


def connection_kwargs(opts: dict[str, Any]) -> dict[str, Any]:
    """:class:`~simdup_es.es.connection.ConnectionSettings` fields from the options (unset ones fall to the env)."""
    return {"api_key": opts["api_key"], "username": opts["user"], "password": opts["password"],
            "ca_certs": opts["ca_cert"], "verify_certs": False if opts["insecure"] else None,
            "engine": opts["engine"].lower() if opts["engine"] else None}


@contextmanager
def open_store(opts: dict[str, Any], *, create: bool = False, layout: BlockLayout = BlockLayout()) -> Iterator[Store]:
    """The store the options name (:func:`simdup_es.open_store`), closed on exit."""
    from ..store import open_store as open_configured

    if not opts["es_url"] and (create or (opts["store_dir"] or DEFAULT_PATH).exists()):
        path = opts["store_dir"] or DEFAULT_PATH
        click.echo(f"using the embedded store {path}" + ("" if opts["store_dir"] else " (no cluster configured)"), err=True)
    store = open_configured(opts["es_url"], path=opts["store_dir"], index=opts["index"], layout=layout, create=create,
                            **connection_kwargs(opts))
    try:
        yield store
    finally:
        store.close()


def pop_store_opts(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The options :func:`store_options` added, popped from a command's ``kwargs``."""
    return {k: kwargs.pop(k) for k in ("store_dir", *CONNECTION_KEYS)}


@click.command()
@store_options
def setup(**kwargs: Any) -> None:
    """Install the index templates and create the index (safe to repeat)."""
    with open_store(pop_store_opts(kwargs), create=True) as store:
        click.echo(f"ready: {store.count()} documents", err=True)


@click.command()
@click.argument("inputs", nargs=-1, required=True)
@store_options
@field_options
@fingerprint_options
@bulk_options
def index(inputs: tuple[str, ...], text_field: str, title_field: str, id_field: str, idf_path: Path | None,
          marked_words: Path | None, max_bytes: int, workers: int | None, batch_size: int, rejects: Path,
          **kwargs: Any) -> None:
    """Fingerprint INPUTS and index them (JSON Lines, CSV, files or folders; - for stdin).

    Records without an id get one derived from their content, so indexing the
    same input twice changes nothing. Exit status 1 means some records were
    rejected; each one is in the rejects file with its reason.
    """
    fingerprinter = make_fingerprinter(idf_path, marked_words, max_bytes)
    fields = Fields(text_field, title_field or None, id_field or None)
    log = RejectLog(rejects)
    with open_store(pop_store_opts(kwargs), create=True) as store, progress_bar("indexing") as update:
        summary = index_items(read_inputs(inputs, fields), store, fingerprinter, workers=workers,
                              batch_size=batch_size, on_reject=lambda r: log.add(r.source, r.reason, r.id),
                              on_progress=update)
        store.refresh()
        total = store.count()
    log.close()
    click.echo(f"read {summary.read}, indexed {summary.indexed}, rejected {summary.rejected} "
               f"in {summary.seconds:.1f} s ({summary.rate:,.0f} docs/s); the store holds {total} documents", err=True)
    if summary.rejected:
        click.echo(f"rejected records and reasons: {rejects}", err=True)
        sys.exit(1)


def _query_document(store: Store | None, fingerprinter: Fingerprinter, text: str | None, file: Path | None,
                    doc_id: str | None, title: str | None) -> tuple[Fingerprint, str | None, str | None]:
    """The query's fingerprint, its text (for the comparison matrix) and the id to leave out."""
    given = [x is not None for x in (text, file, doc_id)]
    if sum(given) != 1:
        raise click.UsageError("give exactly one of --text or --file" + (" or --id" if store is not None else ""))
    if doc_id is not None:
        assert store is not None
        return (*stored_query(store, doc_id, fingerprinter.version), doc_id)
    if file is not None:
        record = read_document(str(file))  # title as 'simdup index' gives it, so the fingerprints agree
        text, title = record.text, title or record.title
    assert text is not None
    return fingerprinter.fingerprint(text, title), text, None


def query_source_options(func: F) -> F:
    func = click.option("--title", help="Title of the query text (titles weigh in fingerprints).")(func)
    func = click.option("--file", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="Query file.")(func)
    func = click.option("--text", help="Query text.")(func)
    return func


@click.command()
@query_source_options
@click.option("--id", "doc_id", help="Use this stored document as the query.")
@store_options
@fingerprint_options
@compare_options
@click.option("--limit", default=20, show_default=True, help="Show at most this many matches.")
@click.option("-k", "--k", "k", type=click.IntRange(0, 7), default=3, show_default=True,
              help="Largest Hamming distance kept. Above 3 the comparison matrix should decide: see the README.")
@click.option("--no-matrix", is_flag=True, help="Stop after the Hamming re-rank (no sentence comparison).")
@click.option("--details", default=1, show_default=True, help="Show the copied sentences of the best N hits.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write an HTML report of the best hit here.")
@click.option("--json", "as_json", is_flag=True, help="JSON lines instead of a table.")
def search(text: str | None, file: Path | None, doc_id: str | None, title: str | None, idf_path: Path | None, marked_words: Path | None,
           max_bytes: int, limit: int, k: int, no_matrix: bool, details: int, html_path: Path | None, as_json: bool,
           **kwargs: Any) -> None:
    """Find near-duplicates of a text, a file or a stored document.

    Candidates share at least 8 - k of 8 fingerprint blocks (5 for the default
    k = 3); those within Hamming distance k are then compared sentence by
    sentence and ranked by the share of text copied.
    """
    fingerprinter = make_fingerprinter(idf_path, marked_words, max_bytes)
    comparer = None if no_matrix else make_comparer(kwargs)
    with open_store(pop_store_opts(kwargs), layout=BlockLayout(k=k)) as store:
        fp, query_text, exclude = _query_document(store, fingerprinter, text, file, doc_id, title)
        hits = find_duplicates(store, query_text, fingerprint=fp, exclude_id=exclude, compare=comparer,
                               matrix=not no_matrix, limit=limit)
    _show_hits(hits, query_text, as_json=as_json, details=details, html_path=html_path)


def _show_hits(hits: list[Hit], query_text: str | None, *, as_json: bool, details: int, html_path: Path | None) -> None:
    from ..report import render_html, render_terminal
    from ..text import unify

    if as_json:
        for h in hits:
            echo_json(h.to_dict())
        return
    if not hits:
        click.echo("no near-duplicates (no stored document within the distance)")
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table("id", "d", "fingerprint", "query copied", "match copied")
    table.add_column("title", no_wrap=True, overflow="ellipsis", max_width=24)
    table.columns[0].overflow = "fold"
    table.columns[0].min_width = 24
    for h in hits:
        c = h.comparison
        table.add_row(h.match.id, str(h.match.distance), f"{h.match.similarity:.1f}%",
                      f"{c.similarity_a:.0%}" if c else "-", f"{c.similarity_b:.0%}" if c else "-",
                      (h.doc.title or "") if h.doc else "")
    console.print(table)
    scored = [h for h in hits if h.comparison is not None and h.doc is not None and h.doc.text]
    for h in scored[:details]:
        render_terminal(unify(query_text or ""), unify(h.doc.text or ""), h.comparison, console=console,
                        label_a="query", label_b=h.match.id, max_pairs=10)
    if html_path is not None and scored:
        best = scored[0]
        with open_output(html_path) as out:
            out.write(render_html(unify(query_text or ""), unify(best.doc.text or ""), best.comparison,
                                  label_a="query", label_b=best.match.id))
        click.echo(f"wrote {html_path}", err=True)


@click.command()
@query_source_options
@click.option("--dsl", is_flag=True, help="Print the Elasticsearch request body (what this command does).")
@click.option("--index", default=DEFAULT_INDEX, envvar="SIMDUP_INDEX", show_default=True)
@fingerprint_options
def query(text: str | None, file: Path | None, title: str | None, dsl: bool, index: str, idf_path: Path | None,
          marked_words: Path | None, max_bytes: int) -> None:
    """Print the candidate query for a text or file, ready for Kibana Dev Tools."""
    from ..es.bodies import candidate_search

    fingerprinter = make_fingerprinter(idf_path, marked_words, max_bytes)
    fp, _, _ = _query_document(None, fingerprinter, text, file, None, title)
    body = candidate_search(fp.value, fp.version, BlockLayout())
    click.echo(f"GET {index}/_search")
    click.echo(json.dumps(body, ensure_ascii=False, indent=2))
    click.echo(f"# fingerprint {fp.hex}: re-rank the hits by Hamming distance of simdup.fp and keep d <= 3", err=True)


def register(group: click.Group) -> None:
    for command in (setup, index, search, query):
        group.add_command(command)
