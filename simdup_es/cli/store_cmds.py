"""``simdup setup|index|search|query|delete``: commands that work on a store."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from .. import keys
from ..config import Retry
from ..errors import InputError, NotFound, SimdupError, WorkerError, reason_of
from ..indexer import LEVELS, IndexStopped, IndexSummary, LevelChoice, index_items
from ..live_groups import GroupKeeper
from ..multilevel import Copies, MultiMatch, MultiParams
from ..parts import PartPrinter
from ..service import Query, Service
from ..sources import Fields, path_id, record_doc
from ..store import DEFAULT_INDEX, DEFAULT_PATH
from ..store.base import NOT_FOUND, Store, StoredDoc, query_terms
from ._signals import exit_status, signal_name, terminate_as_interrupt
from ._common import (
    Checkpoint,
    RejectLog,
    SHOWN_REJECTS,
    bulk_options,
    counted,
    echo_json,
    existing_file,
    field_options,
    fingerprint_options,
    id_base_option,
    is_folder,
    looks_like_path,
    make_fingerprinter,
    make_service,
    open_output,
    output_console,
    progress_bar,
    read_document,
    read_inputs,
    record_fields,
    retry_options,
    service_options,
    split,
    stored_ids,
)

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


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
def open_store(opts: dict[str, Any], *, create: bool = False, read_only: bool = False, retry: Retry | None = None,
               layout: str | None = None) -> Iterator[Store]:
    """The store the options name (:func:`simdup_es.open_store`), closed on exit.

    ``read_only`` is for commands that do not write: an embedded store is opened
    read-only, so one the user may not write can be read. ``retry`` replaces the
    bulk retries of an Elasticsearch store; ``layout`` is the document layout of a new index.
    """
    from ..store import open_store as open_configured

    if not opts["es_url"] and (create or (opts["store_dir"] or DEFAULT_PATH).exists()):
        path = opts["store_dir"] or DEFAULT_PATH
        click.echo(f"using the embedded store {path}" + ("" if opts["store_dir"] else " (no cluster configured)"), err=True)
    store = open_configured(opts["es_url"], path=opts["store_dir"], index=opts["index"], create=create,
                            read_only=read_only, layout=layout, **connection_kwargs(opts))
    if retry is not None and hasattr(store, "retry"):
        store.retry = retry
    try:
        yield store
    finally:
        store.close()


def pop_store_opts(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The options :func:`store_options` added, popped from a command's ``kwargs``."""
    return {k: kwargs.pop(k) for k in ("store_dir", *CONNECTION_KEYS)}


def groups_option(func: F) -> F:
    """``--groups/--no-groups``: keep the store's duplicate groups current through this command's writes."""
    return click.option(
        "--groups/--no-groups", "keep_groups", default=None,
        help="Update the duplicate groups of the documents written or deleted (default: when the store has groups "
             "from 'simdup groups'; --groups starts them in a store without any). Keeps document-level groups; "
             "after 'simdup groups --matrix' or '--partial', use --no-groups and run that again.")(func)


def _documents(n: int) -> str:
    """``1 document``, ``2 documents``."""
    return counted(n, "document")


def _more_note(more: int) -> str:
    return f"{counted(more, 'more copy', 'more copies')} or candidate{'' if more == 1 else 's'} not shown: raise --limit"


@click.command()
@store_options
@click.option("--layout", type=click.Choice(keys.LAYOUTS), default=None,
              help="Document layout of a new index: 8x8 (default; 8 blocks of 8 bits, 8 - k of them equal), or terms "
                   "(also the fingerprint's 56 terms of 5 of its 8 blocks, asked for within k <= 3: no term's postings "
                   "grow with the index; for very large indices). Recorded in the index with its schema; searches "
                   "follow it. Elasticsearch only (docs/scale.md).")
def setup(layout: str | None, **kwargs: Any) -> None:
    """Install the index templates and create the index (safe to repeat)."""
    opts = pop_store_opts(kwargs)
    if layout and not opts["es_url"]:
        raise click.UsageError("--layout: for an Elasticsearch or OpenSearch index (give --es-url); the embedded store "
                               "has one layout")
    with open_store(opts, create=True, layout=layout) as store:
        made = getattr(store, "layout", None)
        described = f" ({made()} document layout, index schema {keys.SCHEMA})" if callable(made) else ""
        click.echo(f"ready: {_documents(store.count())}{described}", err=True)


@click.command()
@click.argument("inputs", nargs=-1, required=True)
@store_options
@field_options
@id_base_option
@fingerprint_options
@bulk_options
@retry_options
@click.option("--resume", is_flag=True,
              help="Go on from where a stopped run of the same INPUTS left off (its resume point is next to the "
                   "rejects file).")
@click.option("--levels", type=click.Choice(LEVELS), default="all", show_default=True,
              help="What to write besides the document fingerprint. all: part fingerprints and winnowed keys, so "
                   "search finds edited and partial copies; keys: the winnowed keys alone (as many copies found in "
                   "the evaluation, in less time and space); document: nothing more (near-duplicates of whole "
                   "documents only, fastest). Index again with another choice to change it.")
@groups_option
@click.option("--url-field", default="url", show_default=True,
              help="Record field with the document's address (a report links its sources there); '' for none.")
@click.option("--author-field", default="author", show_default=True,
              help="Record field with the document's author (a report names it); '' for none.")
@click.option("--date-field", default="date", show_default=True,
              help="Record field with the document's date, as written (a report shows it); '' for none.")
@click.option("--force-merge", is_flag=True,
              help="After indexing, merge the index's segments into one per shard (Elasticsearch and OpenSearch; "
                   "the embedded store updates SQLite's statistics and checkpoints): the key lookup of a search "
                   "for partial copies then takes about a third of the time. For an index that is done loading.")
def index(inputs: tuple[str, ...], text_field: str, title_field: str, id_field: str, idf_path: Path | None,
          marked_words: Path | None, max_bytes: int, workers: int | None, batch_size: int, rejects: Path,
          max_retries: int, initial_backoff: float, resume: bool, levels: LevelChoice, id_base: Path | None,
          keep_groups: bool | None, url_field: str, author_field: str, date_field: str, force_merge: bool,
          **kwargs: Any) -> None:
    """Fingerprint INPUTS and index them (JSON Lines, CSV, files or folders; - for stdin).

    Ids: a JSON Lines or CSV record keeps its id field; one without gets an id
    derived from its content. A document file (.txt .md .html .pdf .docx) gets its
    path relative to the current folder (or --id-base), whether it is named here
    or found in a folder, by a relative or an absolute path: 'simdup index
    docs' and 'simdup index docs/a.txt' both give docs/a.txt. So indexing the
    same input again changes nothing, and indexing an edited file again
    replaces its document. Run from the same folder (or give the same
    --id-base) each time. Exit status 1 means some records were rejected; each
    one is in the rejects file with its reason.

    Folders are walked without hidden files and without simdup's own outputs,
    which land in the working folder (maybe the indexed one): files named
    rejects.jsonl, search-rejects.jsonl or *.resume.json, the HTML reports of
    --html, and this run's rejects file.

    When the store fails for good part way (cluster unreachable, or too busy
    past the retries), the run stops with a resume point next to the rejects
    file: run the same command with --resume to go on from there.

    A record's url, author and date fields (--url-field, --author-field,
    --date-field; a Markdown file's front matter) are kept for reports.

    When the store has duplicate groups ('simdup groups'), each batch also
    updates the groups it touches (--no-groups: leave them to the next
    'simdup groups'; --groups: start groups in a store without any).
    """
    _refuse_missing_inputs(inputs)
    fingerprinter = make_fingerprinter(idf_path, marked_words, max_bytes)
    fields = _index_fields(text_field, title_field, id_field, url=url_field, author=author_field, date=date_field)
    checkpoint = Checkpoint(rejects, inputs, fields)
    state = _resume_point(checkpoint, resume)
    skip = state["settled"] if state else 0
    log: RejectLog | None = None  # opened once the store is: a run that cannot start keeps the last rejects file
    written = False  # every record settled: what an interrupt from then on stops is no record
    try:
        with terminate_as_interrupt(), \
                open_store(pop_store_opts(kwargs), create=True, retry=Retry(max_retries, initial_backoff)) as store, \
                progress_bar("indexing") as update:
            log = RejectLog(rejects, keep=state["rejects_bytes"] if state else None, show=SHOWN_REJECTS,
                            start=checkpoint.rejects_start if state else None)
            checkpoint.rejects_start = log.start
            on_reject, rejects_size = log.add, log.size
            keeper = GroupKeeper.for_store(store, keep_groups)
            before = _counted(store)
            items = read_inputs(inputs, fields, skip=(rejects, checkpoint.path), id_base=id_base)  # not its outputs
            summary = index_items(items, store, fingerprinter, workers=workers,
                                  batch_size=batch_size, on_reject=lambda r: on_reject(r.source, r.reason, r.id),
                                  on_progress=update, skip=skip,
                                  on_settled=lambda n: checkpoint.save(n, rejects_size()), levels=levels,
                                  write=keeper.put if keeper else None)
            checkpoint.remove()
            written = True
            total = _counted(store)
            if force_merge:
                _force_merge(store, summary.indexed, lambda: _indexed(summary, skip, before, total, keeper))
    except IndexStopped as exc:
        _stopped(exc, checkpoint)
        raise
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (terminate_as_interrupt)
        click.echo(f"interrupted ({signal_name(exc)})" + (" after every input record was indexed or rejected" if written
                                                         else _interrupted(checkpoint)), err=True)
        sys.exit(exit_status(exc))
    except WorkerError:
        if checkpoint.path.exists():
            click.echo(f"stopped: run the same command with --resume to go on from {checkpoint.path}", err=True)
        raise
    finally:
        if log is not None:
            log.close()
    _indexed(summary, skip, before, total, keeper)
    if log is not None and (log.count or log.header):  # (a header: the stopped run rejected some)
        click.echo(log.note(), err=True)
        sys.exit(1)


def _index_fields(text_field: str, title_field: str, id_field: str, **meta_fields: str) -> Fields:
    """The record fields to read, with the metadata fields kept for reports (url, author, date)."""
    meta = tuple((name, field) for name, field in meta_fields.items() if field)
    return dataclasses.replace(record_fields(text_field, title_field, id_field), meta=meta)


def _refuse_missing_inputs(inputs: tuple[str, ...]) -> None:
    """Stop before a store is made for nothing when no input exists (a typo, most likely)."""
    missing = [name for name in inputs if name != "-" and _no_such_path(name)]
    if missing and len(missing) == len(inputs):
        raise click.ClickException(f"no such file or folder: {', '.join(missing)}; nothing was indexed")


def _no_such_path(name: str) -> bool:
    """Whether nothing is at ``name`` (other failures, a name too long, are the reader's to report as rejects)."""
    try:
        os.lstat(name)
    except FileNotFoundError:
        return True
    except OSError:
        pass
    return False


def _counted(store: Store) -> int:
    """The documents the store holds, its last writes included (a stopped run's)."""
    store.refresh()
    return store.count()


def _indexed(summary: IndexSummary, skip: int, before: int, total: int, keeper: GroupKeeper | None) -> None:
    """The end of ``simdup index``: what was read, indexed and rejected; replaced documents; the groups."""
    resumed = f" (after {skip} settled by the stopped run)" if skip else ""
    click.echo(f"read {summary.read}{resumed}, indexed {summary.indexed}, rejected {summary.rejected} in "
               f"{summary.seconds:.1f} s ({summary.rate:,.0f} docs/s); the store holds {_documents(total)}",
               err=True)
    if (replaced := before + summary.indexed - total) > 0:  # (or deleted meanwhile by another writer)
        click.echo(f"{replaced} of the indexed records replaced a document of the same id, stored before or earlier "
                   "in this input", err=True)
    if keeper is not None:
        _echo_groups(keeper)


def _stopped(exc: IndexStopped, checkpoint: Checkpoint) -> None:
    """What ``index`` says when the store stopped it: its counts, and where the resume point is."""
    checkpoint.save(checkpoint.settled, checkpoint.rejects_bytes)  # there is one even if no batch got through
    s = exc.summary
    click.echo(f"read {s.read}, indexed {s.indexed}, rejected {s.rejected} in {s.seconds:.1f} s, then stopped", err=True)
    where = f" ({exc.next_source})" if exc.next_source and s.settled == checkpoint.settled else ""
    click.echo(f"not written: input records from number {checkpoint.settled + 1}{where} on; the resume point "
               f"is {checkpoint.path}: run the same command with --resume to go on there", err=True)


def _interrupted(checkpoint: Checkpoint) -> str:
    """What an interrupted ``index`` says: where the resume point is and from which record nothing was written."""
    # The file, not the last save's value: the signal may have come between writing it and noting that.
    if checkpoint.path.exists() and checkpoint.load() is not None:
        return (f": not written: input records from number {checkpoint.settled + 1} on; run the same "
                f"command with --resume to go on from {checkpoint.path}")
    return " before any record was written"


def _force_merge(store: Store, indexed: int, say_indexed: Callable[[], None]) -> None:
    """``--force-merge``, saying so first: on a large index the merge takes minutes. When it fails, every record
    is settled all the same: ``say_indexed`` says so before the error."""
    click.echo(f"indexed {indexed}; merging the index's segments (--force-merge) ...", err=True)
    started = time.perf_counter()
    try:
        store.force_merge()
    except SimdupError:
        say_indexed()
        raise
    click.echo(f"merged in {time.perf_counter() - started:.1f} s", err=True)


def _resume_point(checkpoint: Checkpoint, resume: bool) -> dict[str, Any] | None:
    """The stopped run's resume point when resuming, saying what the run starts from."""
    state = checkpoint.load() if resume else None
    if resume and state is None:
        click.echo(f"no resume point at {checkpoint.path} (the last run finished): starting from the beginning",
                   err=True)
    elif not resume and checkpoint.path.exists():
        click.echo(f"{checkpoint.path} holds the resume point of a stopped run; starting from the beginning "
                   "instead (--resume goes on from it)", err=True)
    if state and state["settled"]:
        click.echo(f"resuming after the {state['settled']} input records the stopped run settled", err=True)
    return state


def query_of(service: Service, text: str | None, file: Path | None, doc_id: str | None, title: str | None,
             id_base: Path | None = None, *, leave_out: bool = True) -> Query:
    """The query the arguments name: a stored document (:func:`by_id`), a file (its own stored copy left out,
    with ``leave_out``, when the store holds it as it is) or a text."""
    if doc_id is not None:
        return Query(id=doc_id)
    if file is None:
        return Query(text=text, title=title)
    record = read_document(str(file))  # as 'simdup index' reads it, title included (so that the fingerprints agree)
    own = own_stored_id(service.store, file, record.text, id_base) if leave_out else None
    return Query(own, record.text, title or record.title, label=file.name, layout=record.layout)


def by_id(call: Callable[[Query], T], query: Query, store: Store, id_base: Path | None) -> T:
    """``call(query)``; for a stored document the store does not hold, with the id ``index`` gives the file its id
    names (``./a.txt`` for ``a.txt``), when the store holds that one."""
    try:
        return call(query)
    except NotFound:
        if query.id is None or query.text is not None:
            raise
        (stored,) = stored_ids(store, [query.id], id_base)
        if stored == query.id:
            raise
        return call(Query(id=stored))


def document_text(text: str | None, file: Path | None, title: str | None) -> tuple[str, str | None]:
    """The text and title of QUERY: the file read as ``simdup index`` reads it (its title too, so that the
    fingerprints agree; ``title`` wins), or the text."""
    if file is not None:
        record = read_document(str(file))
        return record.text, title or record.title
    assert text is not None
    return text, title


def own_stored_id(store: Store, file: Path, text: str | None, id_base: Path | None) -> str | None:
    """The id of ``file``'s own document when the store holds it as it is now (same id, same text): a search
    for the file's copies leaves it out, and says so."""
    doc_id = path_id(file, id_base)
    if any(doc.text == text for doc in store.get([doc_id])):
        click.echo(f"left out {doc_id}: the file itself, as the store holds it", err=True)
        return doc_id
    return None


def query_source_options(func: F) -> F:
    """QUERY (a file, or text), --text, --file and --title; :func:`query_source` reads QUERY."""
    func = click.option("--title", help="Title of the query text (titles weigh in fingerprints).")(func)
    func = click.option("--file", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="Query file.")(func)
    func = click.option("--text", help="Query text.")(func)
    func = click.argument("query_arg", metavar="[QUERY]", required=False)(func)
    return func


def query_source(query: str | None, text: str | None, file: Path | None) -> tuple[str | None, Path | None]:
    """``(text, file)`` with the QUERY argument in its place: a file when it names one, else text (as
    ``simdup compare`` reads A and B); a mistyped path is an error rather than a query."""
    if query is None:
        return text, file
    if text is not None or file is not None:
        raise click.UsageError("give the query as QUERY or with --text or --file, not both")
    path = existing_file(query)
    if path is not None:
        return None, path
    if is_folder(Path(query)):
        raise click.UsageError(f"{query} is a folder, not a document ('simdup search --queries {query}' searches "
                               "with each of its documents)")
    if looks_like_path(query):
        raise InputError("no such file (give --text to use it as text)", source=query)
    return query, None


@click.command()
@query_source_options
@click.option("--id", "doc_id", help="Use this stored document as the query.")
@click.option("--queries", "queries", help="Many query documents (JSON Lines with id and text, CSV, files or a "
              "folder; - for stdin): one result line per query.")
@store_options
@field_options
@id_base_option
@service_options
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True,
              help="Show at most this many matches per query.")
@click.option("--no-matrix", is_flag=True, help="Document level only: stop after the Hamming re-rank (no partial copies).")
@click.option("--details", default=1, show_default=True, help="Show the copied sentences of the best N hits.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write an HTML report of the best hit here.")
@click.option("--json", "as_json", is_flag=True, help="JSON lines instead of a table.")
@click.option("--workers", type=click.IntRange(min=1), help="With --queries: fingerprinting processes (default: all cores).")
@click.option("--rejects", type=click.Path(dir_okay=False, path_type=Path), default=Path("search-rejects.jsonl"),
              show_default=True, help="With --queries: where rejected query records go, with their reasons "
              "(not index's rejects.jsonl, which may hold a stopped run's resume point).")
def search(query_arg: str | None, text: str | None, file: Path | None, doc_id: str | None, queries: str | None,
           title: str | None, text_field: str, title_field: str, id_field: str, limit: int, no_matrix: bool,
           details: int, html_path: Path | None, as_json: bool, workers: int | None, rejects: Path,
           id_base: Path | None, **kwargs: Any) -> None:
    """Find near-duplicates and partial copies of QUERY (a file, or text), a stored document or many queries.

    Near-duplicates: documents sharing at least 8 - k of 8 fingerprint blocks
    (5 for the default k = 3) within Hamming distance k. Partial copies: documents
    sharing a part (paragraph or window) or a sentence with the query, which the
    comparison matrix finds copied to at least --partial-threshold of either side.
    Results are near-duplicates first (nearest first), then partial copies.
    """
    text, file = query_source(query_arg, text, file)
    service = make_service(kwargs, matrix=not no_matrix)
    store_opts = pop_store_opts(kwargs)
    if queries is not None:
        if any(x is not None for x in (text, file, doc_id)):
            raise click.UsageError("give --queries, or one of QUERY, --text, --file or --id")
        if no_matrix:
            raise click.UsageError("--queries finds partial copies with the comparison matrix: leave out --no-matrix")
        fields = record_fields(text_field, title_field, id_field)
        _search_many(queries, fields, store_opts, service, limit, workers, rejects, as_json, id_base)
        return
    if sum(x is not None for x in (text, file, doc_id)) != 1:  # said before the store is opened
        raise click.UsageError("give exactly one of QUERY, --text, --file or --id, or --queries")
    with searching(store_opts, service) as service:
        query = query_of(service, text, file, doc_id, title, id_base)
        note_other_versions(service)
        try:
            found = by_id(lambda q: service.search(q, matrix=not no_matrix, limit=limit), query, service.store, id_base)
        except InputError as exc:  # the query cannot be fingerprinted: say which file
            if file is None or exc.source is not None:
                raise
            raise type(exc)(exc.reason, source=str(file)) from None
        store = service.store
        if not found and not no_matrix and not store.count_with_levels() and (documents := store.count()):
            click.echo(f"note: none of the store's {counted(documents, 'document')} was stored with its levels ('index "
                       "--levels document'): only near-duplicates of whole documents can be found; index them again "
                       "without it to find partial copies", err=True)
    _show_copies(found, service, as_json=as_json, details=details, html_path=html_path, matrix=not no_matrix)


@contextmanager
def searching(opts: dict[str, Any], service: Service, *, create: bool = False, read_only: bool = True,
              retry: Retry | None = None) -> Iterator[Service]:
    """``service`` over the store the options name (:func:`open_store`), closed on exit."""
    with open_store(opts, create=create, read_only=read_only, retry=retry) as store:
        yield service.with_store(store)


@contextmanager
def named_store(opts: dict[str, Any]) -> Iterator[Store | None]:
    """The store the options name, read-only, or ``None`` when none is configured and the default folder holds none
    (``compare`` then counts nothing as common)."""
    if not (opts["es_url"] or opts["store_dir"] or DEFAULT_PATH.exists()):
        yield None
        return
    with open_store(opts, read_only=True) as store:
        yield store


def note_other_versions(service: Service) -> None:
    """Say on stderr how many stored documents a search cannot find because of their fingerprint version."""
    version = service.fingerprinter.version
    if other := service.other_versions():
        n = sum(other.values())
        click.echo(f"note: {n} stored document{'s' if n != 1 else ''} of fingerprint version "
                   f"{', '.join(sorted(other))} (another release or other --idf/--marked-words) cannot be found by "
                   f"this search ({version}): index them again with 'simdup index' (or, in Elasticsearch, "
                   "'simdup backfill --field FIELD', which re-fingerprints them in place)", err=True)


def _search_many(queries: str, fields: Fields, store_opts: dict[str, Any], service: Service, limit: int,
                 workers: int | None, rejects: Path, as_json: bool, id_base: Path | None = None) -> None:
    """``search --queries``: one line per query, in input order; bad records to the rejects file."""
    log = RejectLog(rejects, show=SHOWN_REJECTS)
    done = searched = with_copies = 0
    with searching(store_opts, service) as service, progress_bar("searching") as update:
        note_other_versions(service)
        records = split(read_inputs((queries,), fields, skip=(rejects,), id_base=id_base), log)
        results = service.search_many(records, record_doc, limit=limit, workers=workers, exclude=lambda r: r.key)
        # The key, not the id: a record without an id is stored under its content id (as
        # 'simdup index' keys it), so that is the stored copy to leave out and the label to print.
        for record, found in results:
            done += 1
            if not isinstance(found, Copies):
                log.add(record.source, reason_of(found), record.id)
            else:
                searched += 1
                with_copies += bool(found)
                more = found.more
                if as_json:
                    echo_json({"id": record.key, "matches": [m.to_dict() for m in found], "more": more})
                else:
                    click.echo(f"{record.key}\t" + (", ".join(f"{m.id} ({m.kind}, d={m.distance})" for m in found)
                                                     or "no copies") + (f", and {more} more (raise --limit)" if more else ""))
            update(done)
    log.close()
    click.echo(f"searched {searched} queries, {with_copies} with copies; rejected {log.count}", err=True)
    if log.count:
        click.echo(log.note(), err=True)
        sys.exit(1)


def _show_copies(copies: Copies, service: Service, *, as_json: bool, details: int, html_path: Path | None,
                 matrix: bool = True) -> None:
    from ..offsets import Unified, unify_mapped
    from ..report import matches_json, render_terminal

    docs = copies.docs
    more = copies.more

    def mapped(doc: StoredDoc) -> Unified:  # stored texts as given, mapped from what was compared
        return service.caches.mapped(doc.text or "")

    scored = [(m, docs[m.id]) for m in copies if m.comparison is not None and m.id in docs and docs[m.id].text]
    query = unify_mapped(copies.text or "", copies.unified) if scored and (details or html_path is not None) else None
    if html_path is not None and not scored:
        click.echo(f"{html_path} not written: no compared copy to show", err=True)
    if as_json:
        for hit in matches_json(copies, mapped=service.caches.mapped):
            echo_json(hit)
        if more:
            click.echo(_more_note(more), err=True)
        _best_html(html_path, scored, query, mapped)
        return
    if not copies:
        click.echo("no copies (no stored document within the distance" + (", none sharing enough text)" if matrix
                                                                           else "; --no-matrix looks no further)"))
        return
    from rich.table import Table
    from rich.text import Text

    console = output_console()
    table = Table("id", "kind", "d", "query copied", "match copied", "common")
    table.add_column("title", no_wrap=True, overflow="ellipsis", max_width=24)
    table.columns[0].overflow = "fold"
    table.columns[0].min_width = 24
    for m in copies:
        doc, c = docs.get(m.id), m.comparison
        table.add_row(Text(m.id), m.kind, "-" if m.distance is None else str(m.distance),  # ids are no markup
                      f"{m.copied_query:.0%}" if c else "-", f"{m.copied_match:.0%}" if c else "-",
                      f"{m.common_query:.0%}" if c and m.common_query else "-", Text((doc.title or "") if doc else ""))
    console.print(table)
    if more:
        click.echo(_more_note(more))
    for m, doc in scored[:details]:
        assert m.comparison is not None and query is not None
        render_terminal(query, mapped(doc), m.comparison, console=console, label_a="query", label_b=m.id, max_pairs=10)
    _best_html(html_path, scored, query, mapped)


def _best_html(html_path: Path | None, scored: list[tuple[MultiMatch, StoredDoc]], query: Any,
               mapped: Callable[[StoredDoc], Any]) -> None:
    """``search --html``: the best compared hit side by side with the query."""
    from ..report import render_html

    if html_path is None or not scored:
        return
    best, doc = scored[0]
    assert best.comparison is not None and query is not None
    with open_output(html_path) as out:
        out.write(render_html(query, mapped(doc), best.comparison, label_a="query", label_b=best.id))
    click.echo(f"wrote {html_path} (the best hit; 'simdup report' shows every source)", err=True)


@click.command()
@query_source_options
@click.option("--index", default=DEFAULT_INDEX, envvar="SIMDUP_INDEX", show_default=True)
@fingerprint_options
def query(query_arg: str | None, text: str | None, file: Path | None, title: str | None, index: str,
          idf_path: Path | None, marked_words: Path | None, max_bytes: int) -> None:
    """Print the search requests for QUERY (a file, or text), ready for Kibana Dev Tools.

    The first finds near-duplicate candidates (document fingerprint blocks), the
    second partial-copy candidates (part fingerprints and winnowed keys).
    """
    from ..es.bodies import candidate_search, part_search

    text, file = query_source(query_arg, text, file)
    fingerprinter = make_fingerprinter(idf_path, marked_words, max_bytes)
    query_text, title = document_text(text, file, title)
    fp = fingerprinter.fingerprint(query_text or "", title)
    levels = PartPrinter(fingerprinter).levels(query_text or "")
    part_terms, key_terms = query_terms(levels.fingerprints, [k.key for k in levels.keys])
    bodies = [candidate_search(fp.value, fp.version, MultiParams.k),
              part_search(part_terms, key_terms, fp.version, limit=MultiParams.store_limit)]
    for n, body in enumerate(bodies):
        click.echo(("\n" if n else "") + f"GET {index}/_search")
        click.echo(json.dumps(body, ensure_ascii=False, indent=2))
    click.echo(f"# fingerprint {fp.hex}: re-rank the first request's hits by Hamming distance of simdup.fp and keep "
               f"d <= 3; the second's matched_queries name the parts (p<i>) and sentences (k<i>) each hit shares",
               err=True)


@click.command()
@click.argument("ids", nargs=-1)
@click.option("--ids-from", "ids_from", type=click.File("r", encoding="utf-8"),
              help="Also delete the ids in this file, one a line (- for stdin; empty lines are skipped).")
@store_options
@id_base_option
@groups_option
def delete(ids: tuple[str, ...], ids_from: Any, id_base: Path | None, keep_groups: bool | None, **kwargs: Any) -> None:
    """Delete the documents with these IDS from the store (text, fingerprints, levels, group).

    Prints "deleted N, not found M" on stderr; exit status 1 when an id was not
    found (or could not be deleted). When the store has duplicate groups, the
    groups the deleted documents leave are updated (a group may shrink, split or
    end); with --no-groups they keep their fields until the next 'simdup groups'.
    """
    wanted = list(ids)
    if ids_from is not None:
        wanted += [line.rstrip("\r\n") for line in ids_from if line.strip()]
    if not wanted:
        raise click.UsageError("give the ids to delete as arguments, or --ids-from FILE (one id a line)")
    wanted = list(dict.fromkeys(wanted))  # an id named twice is deleted once, not "not found" the second time
    with open_store(pop_store_opts(kwargs)) as store:
        wanted = list(dict.fromkeys(stored_ids(store, wanted, id_base)))
        keeper = GroupKeeper.for_store(store, keep_groups)
        grouped = 0 if keeper else sum(doc.group is not None for doc in store.get(wanted))
        # Groups made with --partial are remade with it: a plain run would drop their partial links.
        regroup = "simdup groups --partial" if grouped and store.group_kinds().get("partial") else "simdup groups"
        report = keeper.delete(wanted) if keeper else store.delete(wanted)
        total = _counted(store)
    missing = [doc_id for doc_id, reason in report.failed if reason == NOT_FOUND]
    failed = [(doc_id, reason) for doc_id, reason in report.failed if reason != NOT_FOUND]
    for doc_id in missing[:5]:
        click.echo(f"not found: {doc_id}", err=True)
    for doc_id, reason in failed[:5]:
        click.echo(f"not deleted {doc_id!r}: {reason}", err=True)
    more = f", failed {len(failed)}" if failed else ""
    click.echo(f"deleted {report.written}, not found {len(missing)}{more}; the store holds {_documents(total)}",
               err=True)
    if keeper is not None:
        _echo_groups(keeper)
    if grouped:
        were = "deleted document was in a duplicate group" if grouped == 1 else "deleted documents were in duplicate groups"
        click.echo(f"{grouped} {were}: run '{regroup}' to update the groups they left", err=True)
    if missing:
        click.echo("check the ids not found ('simdup search --id ID' reads a stored document)", err=True)
    if report.failed:
        sys.exit(1)


def _echo_groups(keeper: GroupKeeper) -> None:
    """One line on what the incremental group updates of a run did."""
    s = keeper.summary
    if not (s.updates or s.failed):  # nothing was written: nothing to say
        return
    walked = f"; {s.walked} found stored groups not right and walked the near-duplicates" if s.walked else ""
    click.echo(f"duplicate groups: {counted(s.updates, 'update')} looked at {_documents(s.looked_at)} "
               f"({counted(s.lookups, 'near-duplicate lookup')}), wrote {s.set} group fields, "
               f"cleared {s.cleared} in {s.seconds:.1f} s{walked}", err=True)
    for name, reason in s.failed[:5]:
        click.echo(f"group fields not written {name}: {reason}; run 'simdup groups' to repair", err=True)


def register(group: click.Group) -> None:
    for command in (setup, index, search, query, delete):
        group.add_command(command)
