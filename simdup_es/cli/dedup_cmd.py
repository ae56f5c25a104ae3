"""``simdup dedup``: write the deduplicated dataset (the library: :mod:`simdup_es.dedup`)."""

from __future__ import annotations

import csv
import dataclasses
import json
import shutil
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from ..dedup import KEEP_RULES, DedupParams, DedupSummary, Deduplicated, Entry, KeepRule, Removed, dedup_records
from ..extract import kind_of
from ..keys import MAX_K
from ..sources import Fields, Item, Record, Reject, bounded_lines, csv_encoding, csv_rows
from ._common import (RejectLog, SHOWN_REJECTS, compare_options, field_options, fingerprint_options, id_base_option,
                      k_range, make_comparer, make_fingerprinter, open_output, phase_progress, read_inputs,
                      record_fields, split)
from ._signals import exit_status, signal_name, terminate_as_interrupt
from .store_cmds import open_store, pop_store_opts, store_options

if TYPE_CHECKING:
    from ..dask_dedup import Matrix

COLLECTIONS = (".jsonl", ".ndjson", ".csv")
DEFAULT_REJECTS = Path("dedup-rejects.jsonl")


@click.command()
@click.argument("inputs", nargs=-1)
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True,
              help="Where the kept records go: a JSON Lines or CSV file for collections (the kept lines and rows as "
                   "they were), a folder for folders and document files (the kept files copied, collections in them "
                   "filtered).")
@click.option("--keep", "keep", type=click.Choice(KEEP_RULES), default="first", show_default=True,
              help="Which record of a set of duplicates stays: the first read, the longest text, or the one whose "
                   "--by field is the earliest or latest (numbers as numbers, other values as text: ISO dates order "
                   "right; a record without the field comes last).")
@click.option("--by", "by", metavar="FIELD", help="With --keep earliest|latest: the record field to order by.")
@click.option("--removed", "removed_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Where each removed record's id goes with its kept twin, as JSON Lines (default: OUTPUT's name "
                   "with .removed.jsonl).")
@click.option("--rejects", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_REJECTS,
              show_default=True, help="Records that cannot be read or fingerprinted, with their reasons (appended).")
@k_range(DedupParams.k, f"Fingerprint distance up to which two records are compared, 0 to {MAX_K} (the matrix "
         "decides every pair): more finds copies edited further, at more comparisons and a slower join.")
@click.option("--min-share", type=click.FloatRange(0.0, 1.0), default=DedupParams.min_share, show_default=True,
              help="Share of each record the comparison matrix must find in copied passages of the other.")
@click.option("--min-verbatim", type=click.FloatRange(0.0, 1.0), default=DedupParams.min_verbatim,
              show_default=True, help="Share of each record in runs of 8 units or more the other has word for word.")
@click.option("--workers", type=click.IntRange(min=1), help="Fingerprinting processes (default: all cores).")
@click.option("--dask", "dask_address", metavar="ADDRESS",
              help="Run on a Dask cluster (a scheduler address, or local[:N]): JSON Lines inputs past one machine; "
                   "OUTPUT is then a folder of parts. Every worker must read the inputs and write OUTPUT.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@store_options
@field_options
@id_base_option
@fingerprint_options
@compare_options
def dedup(inputs: tuple[str, ...], output: Path, keep: str, by: str | None, removed_path: Path | None, rejects: Path,
          k: int, min_share: float, min_verbatim: float, workers: int | None, dask_address: str | None,
          as_json: bool, text_field: str, title_field: str, id_field: str, id_base: Path | None,
          idf_path: Path | None, marked_words: Path | None, max_bytes: int, **kwargs: Any) -> None:
    """Write INPUTS without their near-duplicates: one record of each set is kept.

    INPUTS are JSON Lines or CSV collections, or folders and document files; with none, the
    documents of the store (--store or --es-url), written to OUTPUT as JSON Lines. Two records
    are duplicates when their fingerprints are within K and the comparison matrix finds most of
    each in the other, much of it word for word. Records are taken in the order of --keep: each
    one is removed when a record kept before it is such a copy (its twin), else kept; the removed
    ones go to the --removed file with their twins. read = kept + removed + rejected.
    """
    rule = KeepRule(keep, by)  # type: ignore[arg-type]
    params = DedupParams(k, min_share, min_verbatim)
    store_opts = pop_store_opts(kwargs)
    synonym_file = kwargs["synonym_file"]  # (for the workers of --dask, which make their own matrix)
    compare = make_comparer(kwargs)
    fingerprinter = make_fingerprinter(idf_path, marked_words, max_bytes)
    fields = record_fields(text_field, title_field, id_field)
    fields = dataclasses.replace(fields, extra=by)
    removed_path = removed_path or _beside(output, ".removed.jsonl")
    if dask_address:
        assert compare is not None
        matrix = (compare.params, str(synonym_file) if synonym_file else None)
        _on_dask(dask_address, inputs, output, (removed_path, rejects), (rule, params, matrix), fields, fingerprinter,
                 as_json)
        return
    layout = _layout(inputs, output, store_opts)
    log = RejectLog(rejects, show=SHOWN_REJECTS)
    started = time.perf_counter()
    try:
        with terminate_as_interrupt(), phase_progress() as update:
            items = (_stored_items(store_opts) if layout == "store" else
                     read_inputs(inputs, fields, skip=(rejects, removed_path, output), id_base=id_base))
            records = split(items, log)
            result = dedup_records(records, fingerprinter, rule=rule, params=params, compare=compare,
                                   rank=lambda r: r.extra, workers=workers,
                                   on_reject=lambda r, why: log.add(r.source, why, r.id),
                                   on_progress=(lambda phase, done: update(phase, done, None)) if update else None)
    except KeyboardInterrupt as exc:
        log.close()
        click.echo(f"interrupted ({signal_name(exc)}): nothing was written; run the same command again", err=True)
        sys.exit(exit_status(exc))
    result.summary.read += log.count - result.summary.rejected  # what the readers rejected (lines, files) as well
    result.summary.rejected = log.count
    log.close()
    _write(result, layout, inputs, output, store_opts, fields)
    entries = result.entries
    _write_removed(removed_path, ((entries[p], entries[r.twin], r) for p, r in sorted(result.removed.items())))
    _report(result.summary, f"in {time.perf_counter() - started:.1f} s", str(output), removed_path, log, as_json)


def _on_dask(address: str, inputs: tuple[str, ...], output: Path, side_files: tuple[Path, Path],
             how: tuple[KeepRule, DedupParams, Matrix], fields: Fields, fingerprinter: Any, as_json: bool) -> None:
    """``dedup --dask``: the job (:mod:`simdup_es.dask_dedup`), its side files (removed, rejects) and its report."""
    removed_path, rejects = side_files
    rule, params, matrix = how
    from ..dask_dedup import dask_dedup, jsonl_files
    from ..dask_groups import dask_client

    files = jsonl_files(inputs)
    if not files:
        raise click.UsageError("no JSON Lines files in INPUTS")
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise click.UsageError(f"{output} exists: on Dask OUTPUT is a new (or empty) folder of parts")
    with dask_client(address) as client:
        result = dask_dedup(client, files, output, fields, fingerprinter, rule=rule, params=params, matrix=matrix)
    _write_removed(removed_path, result.removed)
    log = RejectLog(rejects, show=SHOWN_REJECTS)
    for source, reason, doc_id in result.rejects:
        log.add(source, reason, doc_id)
    log.close()
    _report(result.summary, "on Dask", f"{output}/part-*.jsonl", removed_path, log, as_json)


def _beside(path: Path, suffix: str) -> Path:
    return path.with_name((path.stem if path.suffix else path.name) + suffix)


def _layout(inputs: tuple[str, ...], output: Path, store_opts: dict[str, Any]) -> str:
    """``collection`` (OUTPUT a file), ``files`` (OUTPUT a folder) or ``store`` (OUTPUT a JSON Lines file)."""
    if not inputs:
        if not (store_opts["store_dir"] or store_opts["es_url"]):
            raise click.UsageError("give INPUTS, or a store to read (--store DIR or --es-url URL)")
        return "store"
    if "-" in inputs:
        raise click.UsageError("dedup reads its inputs twice (once to find duplicates, once to write): give files, "
                               "not - (standard input)")
    paths = [Path(name) for name in inputs]
    missing = [name for name, p in zip(inputs, paths) if not p.exists()]
    if missing:
        raise click.UsageError(f"no such file or folder: {', '.join(missing)}")
    if any(p.resolve() == output.resolve() for p in paths):
        raise click.UsageError(f"{output} is an input too: give another OUTPUT")
    collections = [p for p in paths if p.is_file() and p.suffix.lower() in COLLECTIONS]
    if len(collections) == len(paths):
        if len({p.suffix.lower().replace(".ndjson", ".jsonl") for p in paths}) > 1:
            raise click.UsageError("the inputs mix JSON Lines and CSV: give one kind (or a folder, for a folder out)")
        return "collection"
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise click.UsageError(f"{output} exists: for folders and document files OUTPUT is a new (or empty) folder")
    return "files"


def _stored_items(store_opts: dict[str, Any]) -> Iterator[Item]:
    """The documents of the store, in id order, as records (``store:<id>`` their source); one without its text is a
    reject."""
    from ..groups import distinct

    with open_store(store_opts, read_only=True) as store:
        store.refresh()
        with store.scan() as scan:
            fps, codes, names = scan.fingerprints()
            node_fps, node_codes, _ = distinct(fps, codes)
            node_of = {(fp, names[c]): n for n, (fp, c) in enumerate(zip(node_fps.tolist(), node_codes.tolist()))}
            docs = scan.members(node_of, every=True)
        order = sorted(range(len(docs.keys)), key=lambda p: docs.keys[p])
        for start in range(0, len(order), 500):
            chunk = order[start : start + 500]
            for p, text in zip(chunk, store.texts([docs.refs[p] for p in chunk])):
                doc_id = docs.keys[p][-1]
                yield Record(text, f"store:{doc_id}", doc_id) if text else \
                    Reject(f"store:{doc_id}", "stored without its text", doc_id)


def _write(result: Deduplicated, layout: str, inputs: tuple[str, ...], output: Path, store_opts: dict[str, Any],
           fields: Fields) -> None:
    """Write the kept records: the lines and rows as they were, the files copied, the store's documents as JSON."""
    kept = {e.source for p, e in enumerate(result.entries) if p not in result.removed}
    if layout == "store":
        _write_stored(output, [s.removeprefix("store:") for s in sorted(kept)], store_opts, fields)
    elif layout == "collection":
        with open_output(output) as out:
            header: list[str] | None = None
            for name in inputs:
                header = _copy_collection(Path(name), kept, out, header)
    else:
        _write_files([Path(name) for name in inputs], kept, output)


def _copy_collection(path: Path, kept: set[str], out: TextIO, header: list[str] | None) -> list[str] | None:
    """Append ``path``'s kept lines (JSON Lines) or rows (CSV, after one header) to ``out``; the CSV header."""
    name = str(path)
    if path.suffix.lower() != ".csv":
        with open(path, "rb") as f:
            for n, raw in enumerate(bounded_lines(f), 1):
                if raw is not None and f"{name}:{n}" in kept:
                    out.write(raw.decode("utf-8-sig" if n == 1 else "utf-8").rstrip("\r\n") + "\n")
        return header
    writer = csv.writer(out)
    with open(path, encoding=csv_encoding(path, name), newline="") as f:
        for n, (start, row) in enumerate(csv_rows(f)):
            if isinstance(row, csv.Error):
                continue
            if n == 0:
                if header is None:
                    writer.writerow(row)
                header = header or row
            elif f"{name}:{start}" in kept:
                writer.writerow(row)
    return header


def _write_files(paths: list[Path], kept: set[str], output: Path) -> None:
    """Into the folder ``output``: each kept document file copied, each collection with its kept records, at its
    path under the input folder it was found in (a file named as an input: at its name)."""
    by_file: dict[str, set[str]] = {}
    for source in kept:
        name, _, line = source.rpartition(":")
        if line.isdigit() and Path(name).suffix.lower() in COLLECTIONS:
            by_file.setdefault(name, set()).add(source)
        elif kind_of(source):
            by_file.setdefault(source, set())
    output.mkdir(parents=True, exist_ok=True)
    for name, lines in by_file.items():
        file = Path(name)
        base = next((p for p in paths if p.is_dir() and file.is_relative_to(p)), None)
        dest = output / (file.relative_to(base) if base is not None else Path(file.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        if lines:
            with open_output(dest) as out:
                _copy_collection(file, lines, out, None)
        else:
            shutil.copy2(file, dest)


def _write_stored(output: Path, ids: list[str], store_opts: dict[str, Any], fields: Fields) -> None:
    with open_store(store_opts, read_only=True) as store, open_output(output) as out:
        for start in range(0, len(ids), 500):
            for doc in store.get(ids[start : start + 500]):
                record = {fields.id or "id": doc.id, **({fields.title: doc.title} if fields.title and doc.title else {}),
                          fields.text: doc.text}
                out.write(json.dumps(record, ensure_ascii=False) + "\n")


def _write_removed(path: Path, rows: Iterable[tuple[Entry, Entry, Removed]]) -> None:
    """The removed records with their kept twins, one JSON line each."""
    with open_output(path) as out:
        for entry, twin, r in rows:
            out.write(json.dumps({"id": entry.key, "source": entry.source, "kept_id": twin.key,
                                  "kept_source": twin.source, "distance": r.distance,
                                  "copied": [round(r.shares[0], 4), round(r.shares[1], 4)]}, ensure_ascii=False) + "\n")


def _report(s: DedupSummary, how: str, output: str, removed: Path, log: RejectLog, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps({**s.to_dict(), "output": output, "removed_file": str(removed)}))
    click.echo(f"read {s.read}, kept {s.kept}, removed {s.removed}, rejected {s.rejected} {how} "
               f"({s.pairs} candidate pairs, {s.compared} compared); wrote {output}; the removed records with their "
               f"kept twins: {removed}", err=True)
    if s.rejected:
        click.echo(log.note(), err=True)
        sys.exit(1)
