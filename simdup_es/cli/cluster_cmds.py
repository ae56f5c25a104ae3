"""``simdup backfill|groups``: commands that work on every document of a store in place."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..config import Retry
from ..errors import StoreError
from ._signals import exit_status, signal_name, terminate_as_interrupt
from ._common import (
    RejectLog,
    bulk_options,
    common_option,
    compare_options,
    counted,
    echo_json,
    fingerprint_options,
    k_option,
    make_comparer,
    make_fingerprinter,
    phase_progress,
    progress_bar,
    retry_options,
)
from .store_cmds import (CONNECTION_KEYS, connection_kwargs, connection_options, open_store, pop_store_opts,
                         store_options)


def _connect(kwargs: dict[str, Any]) -> tuple[Any, str]:
    """A client and the index name from the connection options (popped from ``kwargs``)."""
    from ..es.connection import ConnectionSettings

    opts = {k: kwargs.pop(k) for k in CONNECTION_KEYS}
    return ConnectionSettings.from_env(url=opts["es_url"], **connection_kwargs(opts)).client(), opts["index"]


@click.command()
@connection_options  # backfill works on an index simdup did not create: no --store
@click.option("--field", required=True, help="Field with the text to fingerprint (dotted path into _source).")
@click.option("--title-field", help="Field with a title: its words weigh more.")
@click.option("--id-field", help="Field that names documents in the rejects file (default: _id).")
@fingerprint_options
@bulk_options
@retry_options
@click.option("--retry-errors", is_flag=True,
              help="Also read documents an earlier run marked unusable (simdup.error), e.g. after their text "
                   "was added.")
def backfill(field: str, title_field: str | None, id_field: str | None, idf_path: Path | None,
             marked_words: Path | None, max_bytes: int, workers: int | None, batch_size: int, rejects: Path,
             max_retries: int, initial_backoff: float, retry_errors: bool, **kwargs: Any) -> None:
    """Add fingerprints to an existing index, in place.

    Adds the simdup fields to the index's mapping, then fingerprints the
    --field text of every document whose fingerprint is missing, of another
    version or without its levels (parts and keys, which partial copies are found
    by) and writes it back with partial updates. No other field changes its
    value, but Elasticsearch re-serialises _source, so numbers may change their
    spelling (1e+300 reads 1.0E300): see docs/elasticsearch.md for a companion index instead.
    Documents without usable text are marked (simdup.error) so they are not
    read again. Run it again later to fingerprint documents that arrived since.

    Interrupt it at any time: the next run goes on where it stopped, because
    it reads only documents that are not current yet. Exit status 1 means some
    documents were rejected; each one is in the rejects file with its reason.
    """
    from ..backfill import backfill as run

    fingerprinter = make_fingerprinter(idf_path, marked_words, max_bytes)
    client, index = _connect(kwargs)
    log = RejectLog(rejects)
    with contextlib.ExitStack() as stack:
        stack.callback(client.close)
        stack.callback(log.close)
        bar: list[Callable[[int], None]] = []

        last: list[Any] = []  # the summary as it stood at the last progress report

        def progress(summary: Any) -> None:
            if not bar:  # the total is known once the work is counted
                bar.append(stack.enter_context(progress_bar(f"backfill {index}", summary.to_scan)))
            bar[0](summary.done)
            last[:] = [summary]

        try:
            with terminate_as_interrupt():
                summary = run(client, index, field, fingerprinter, title_field=title_field, id_field=id_field,
                              on_reject=lambda r: log.add(r.source, r.reason, r.id), on_progress=progress,
                              retry_errors=retry_errors, workers=workers, batch_size=batch_size,
                              max_retries=max_retries, initial_backoff=initial_backoff)
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM
            if last:
                click.echo("so far: " + _backfilled(last[0], fingerprinter.version), err=True)
            click.echo(f"interrupted ({signal_name(exc)}): what was written stays; run the same command again to go "
                       "on", err=True)
            sys.exit(exit_status(exc))
        except StoreError:
            # The index is the resume point: the next run reads only documents not done yet. (A run that stopped
            # before it counted the work, a missing index say, has nothing to go on with: the error says why.)
            if bar:
                click.echo("so far: " + _backfilled(last[0], fingerprinter.version), err=True)
                click.echo("stopped: what was written stays, documents not written yet keep no current fingerprint; "
                           "run the same command again to go on", err=True)
            raise
    click.echo(_backfilled(summary, fingerprinter.version), err=True)
    if summary.rejected:
        click.echo(f"rejected documents and reasons: {rejects}", err=True)
        sys.exit(1)


def _backfilled(summary: Any, version: str) -> str:
    """What a backfill did (so far): counted, skipped, written, rejected."""
    marked = f" ({summary.marked} of them marked unusable earlier)" if summary.marked else ""
    changed = f", changed meanwhile {summary.changed} (the next run does them)" if summary.changed else ""
    return (f"{summary.total} documents; skipped {summary.current} with a current fingerprint{marked}; "
            f"scanned {summary.scanned}: fingerprinted {summary.fingerprinted}, without text field "
            f"{summary.without_text}, rejected {summary.rejected}{changed} in {summary.seconds:.1f} s "
            f"({summary.rate:,.0f} docs/s); version {version}")


@click.command()
@store_options
@k_option
@click.option("--matrix", is_flag=True, help="Keep only pairs the comparison matrix confirms (reads the texts).")
@click.option("--threshold", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="With --matrix: keep a pair when at least this share of either document is copied in the other.")
@click.option("--field", "text_field", default=None,
              help="With --matrix or --partial: the text field (Elasticsearch; by default 'text', or the field "
                   "'simdup backfill --field' recorded in the index; the embedded store keeps one).")
@click.option("--partial", is_flag=True, help="Also group partial copies: near-duplicate groups and other documents "
              "of which every two are copies of each other (complete link: no chains; one part lookup and the "
              "comparison matrix per document; give the --idf/--marked-words used when indexing).")
@click.option("--partial-threshold", type=click.FloatRange(0.0, 1.0), default=0.2, show_default=True,
              help="With --partial: share of either document copied in the other.")
@common_option("With --partial: ")
@fingerprint_options
@compare_options
@retry_options
@click.option("--workers", type=click.IntRange(min=1), help="With --partial: fingerprinting processes (default: all cores).")
@click.option("--dry-run", is_flag=True, help="Compute and count, write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON (and, with --list, each group as "
              "a JSON line after it).")
@click.option("--list", "list_groups", is_flag=True,
              help="Then print every group the store holds, one line each: group id, kind (near-duplicate, "
                   "partial, or mixed), size and member ids, tab-separated; largest first. The groups are "
                   "computed first, as without --list (give --partial again to keep partial groups); "
                   "with --dry-run the stored groups are only read.")
@click.option("--dask", "dask_address", metavar="ADDRESS",
              help="Run on a Dask cluster: a scheduler address (tcp://host:8786), or local[:N] for N worker "
                   "processes here. Elasticsearch indices only (--es-url), without --matrix and --partial; "
                   "needs pip install 'simdup-es[dask]' (in a checkout: '.[dask]'). See docs/groups.md.")
def groups(k: int, matrix: bool, threshold: float, text_field: str | None, partial: bool, partial_threshold: float,
           common: tuple[int | None, float], idf_path: Path | None, marked_words: Path | None, max_bytes: int,
           workers: int | None, max_retries: int, initial_backoff: float, dry_run: bool, as_json: bool, list_groups: bool,
           dask_address: str | None, **kwargs: Any) -> None:
    """Group near-duplicates and write the groups onto the documents.

    Finds every pair of documents within Hamming distance K (same fingerprint
    version), joins pairs into groups (connected components) and writes
    dup_group (the group's id), dup_group_size and dup_kind (near-duplicate,
    or partial for a member joined only by partial copies) onto each member.
    Only changes are written; documents that left a group get the fields cleared.
    Run it again after new documents arrive to update the groups.

    With --matrix a pair counts only when the sentence comparison finds at
    least THRESHOLD of one document copied in the other.

    With --partial the near-duplicate groups (kept as they are) and the other
    documents are grouped by the copies the part lookups and the matrix
    confirm, so that every two members of a group copy from each other: a
    page that copies from two unrelated pages joins the one it copies most
    from, never both (docs/groups.md).

    With --list the groups are read back from the store and printed (with
    --dry-run: the groups stored now, which this run did not change).
    """
    from ..groups import PartialLinks, copied_share, stored_groups, update_groups

    similarity: Callable[[str, str], float] | None = None
    prepare: Callable[[str], str] = str
    compare = make_comparer(kwargs) if matrix or partial else None
    if matrix:
        from ..text import unify

        assert compare is not None
        similarity, prepare = copied_share(compare), unify
    links = None
    if partial:
        from ..multilevel import MultiParams
        from ..parts import PartPrinter

        assert compare is not None
        links = PartialLinks(PartPrinter(make_fingerprinter(idf_path, marked_words, max_bytes)), compare,
                             MultiParams(k=k, partial_threshold=partial_threshold, common=common[0],
                                         common_share=common[1]), workers)
    if dask_address and (matrix or partial):
        raise click.UsageError("--dask groups document-level pairs: leave out --matrix and --partial")
    with open_store(pop_store_opts(kwargs), read_only=dry_run, retry=Retry(max_retries, initial_backoff)) as store, \
            phase_progress() as on_progress:
        if not store.versions() and (documents := store.count()):  # before anything is written to it
            raise click.ClickException(
                f"none of the store's {documents} documents has a fingerprint: nothing to group. Fingerprint them "
                "first ('simdup backfill --field FIELD' for an index of your own, 'simdup index' for files)")
        if dask_address:
            summary = _dask_groups(store, dask_address, k, dry_run)
        else:
            summary = update_groups(store, k=k, similarity=similarity, threshold=threshold, text_field=text_field,
                                    prepare_text=prepare, partial=links, dry_run=dry_run, on_progress=on_progress)
        listed = stored_groups(store) if list_groups else []
    if as_json:
        echo_json(summary.to_dict())
    if list_groups:
        _list_groups(listed, as_json)
    click.echo(_grouped(summary, k, matrix, partial, dry_run), err=True)
    if list_groups:
        members = sum(len(g.members) for g in listed)
        now = "the store holds (a dry run changed none)" if dry_run else "the store holds now"
        click.echo(f"listed {counted(len(listed), 'group')} with {counted(members, 'document')}: those {now}", err=True)
    if summary.gone:
        click.echo(f"{summary.gone} documents were deleted while the groups were computed", err=True)
    if not summary.groups and not dry_run and not matrix and not partial:
        click.echo("no groups, so 'index' and 'delete' do not keep groups current yet: give them --groups to have a "
                   "new copy start its group", err=True)
    if summary.failed:
        for name, reason in summary.failed[:5]:
            click.echo(f"not written {name}: {reason}", err=True)
        click.echo(f"{len(summary.failed)} documents could not be updated; run again to retry", err=True)
        sys.exit(1)


def _grouped(summary: Any, k: int, matrix: bool, partial: bool, dry_run: bool) -> str:
    """What a groups run found and wrote, in one line."""
    matrix_note = (f"; the matrix compared {summary.compared}, kept {summary.confirmed}"
                   + (f" ({summary.no_text} pairs without text dropped)" if summary.no_text else "")) if matrix else ""
    if summary.exact:  # groups without a pair: say where they come from
        matrix_note += (f"; {summary.exact} documents have the same fingerprint as another (distance 0: "
                        "grouped without a pair)")
    if partial:
        matrix_note += (f"; {counted(summary.partial, 'copy', 'copies')} the matrix confirmed, whole or partial, "
                        f"and {summary.verified} more pairs judged so that every two members of a group are copies of "
                        f"each other ({counted(summary.kinds.get('partial', 0), 'document')} in a group only by "
                        "them: kind partial)")
    verb = "would write" if dry_run else "wrote"
    times = ", ".join(f"{name} {sec:.1f} s" for name, sec in summary.seconds.items())
    return (
        f"{summary.fingerprinted} fingerprints ({summary.distinct} distinct, {summary.versions} "
        f"version{'s' * (summary.versions != 1)}); {counted(summary.pairs, 'pair')} within distance {k}{matrix_note}; "
        f"{counted(summary.groups, 'group')} with {counted(summary.grouped, 'document')} (largest {summary.largest}); "
        f"{verb} {summary.set} group fields, cleared {summary.cleared}, {summary.unchanged} unchanged ({times})"
    )


def _dask_groups(store: Any, address: str, k: int, dry_run: bool) -> Any:
    """:func:`~simdup_es.dask_groups.dask_update_groups` on ``store``'s index, on the cluster at ``address``."""
    from ..dask_groups import dask_client, dask_update_groups

    settings = getattr(store, "settings", None)
    if settings is None:
        raise click.UsageError("--dask reads an Elasticsearch index: give --es-url (the embedded store is one "
                               "machine's; run 'simdup groups' without --dask)")
    with dask_client(address) as client:
        return dask_update_groups(client, settings, store.index, k=k, dry_run=dry_run)


def _list_groups(listed: list[Any], as_json: bool) -> None:
    """Print :func:`~simdup_es.groups.stored_groups`: a line per group (JSON lines with ``as_json``)."""
    # Bare ids when the groups are in one index (always so embedded); index/_id across indices.
    indices = {key[:-1] for group in listed for key in group.members}
    name = (lambda key: key[-1]) if len(indices) <= 1 else "/".join
    for group in listed:
        ids = [name(key) for key in group.members]
        if as_json:
            echo_json({"group": group.id, "kind": group.kind, "size": len(ids), "members": ids,
                       "kinds": group.kinds})
        else:
            click.echo("\t".join([group.id, group.kind, str(len(ids)), *ids]))


def register(group: click.Group) -> None:
    for command in (backfill, groups):
        group.add_command(command)
