"""``simdup`` commands: fingerprint, compare, idf."""

from __future__ import annotations

import itertools
import logging
import sys
from pathlib import Path
from typing import Any

import click

from .. import keys
from ..errors import ConfigError, SimdupError
from ..indexer import LEVELS, LevelChoice
from ..levels import PartParams
from ..parts import PartPrinter
from ..sources import Fields, Record, record_doc
from ..store.base import levels_fields
from ..tokens import Tokenizer, build_idf, format_idf
from . import cluster_cmds, dedup_cmd, kibana_cmds, report_cmd, serve_cmd, store_cmds
from ._common import (
    SHOWN_REJECTS,
    RejectLog,
    echo_json,
    field_options,
    record_fields,
    id_base_option,
    fingerprint_options,
    make_fingerprinter,
    make_service,
    open_output,
    progress,
    read_document,
    read_inputs,
    service_options,
    split,
)


class _Group(click.Group):
    """Turns library errors into one-line messages instead of tracebacks."""

    def invoke(self, ctx: click.Context):  # type: ignore[no-untyped-def]
        try:
            return super().invoke(ctx)
        except SimdupError as exc:
            raise click.ClickException(str(exc)) from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.version_option(package_name="simdup-es")
def main(verbose: int) -> None:
    """Find near-duplicate documents: SimHash fingerprints, Elasticsearch, comparison matrix."""
    level = logging.WARNING - 10 * verbose
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    # Client retries log whole tracebacks at WARNING; the command says what failed.
    for noisy in ("elastic_transport", "elasticsearch", "pypdf"):
        logging.getLogger(noisy).setLevel(logging.DEBUG if verbose >= 2 else logging.ERROR)


store_cmds.register(main)
cluster_cmds.register(main)
main.add_command(report_cmd.report)
main.add_command(dedup_cmd.dedup)
kibana_cmds.register(main)
serve_cmd.register(main)


@main.command()
@click.argument("inputs", nargs=-1)
@click.option("--text", "texts", multiple=True, help="Fingerprint this text (repeatable).")
@field_options
@id_base_option
@fingerprint_options
@click.option("--workers", type=click.IntRange(min=1), help="Processes to use (default: all cores).")
@click.option("--rejects", type=click.Path(dir_okay=False, path_type=Path), help="Write rejected records here (JSON Lines).")
@click.option("--levels", type=click.Choice(LEVELS), default="all", show_default=True,
              help="What the 'simdup' object holds besides the document fingerprint, as 'simdup index --levels' writes "
                   "it: all (parts and winnowed keys, without which a search finds no partial copy of the document), "
                   "keys, or document.")
@click.option("--layout", type=click.Choice(keys.LAYOUTS), default=keys.EIGHT_BY_EIGHT, show_default=True,
              help="The document layout of the index the 'simdup' object is for (what 'simdup setup --layout' made it "
                   "with).")
def fingerprint(
    inputs: tuple[str, ...],
    texts: tuple[str, ...],
    text_field: str,
    title_field: str,
    id_field: str,
    idf_path: Path | None,
    marked_words: Path | None,
    max_bytes: int,
    workers: int | None,
    rejects: Path | None,
    levels: LevelChoice,
    layout: str,
    id_base: Path | None,
) -> None:
    """Fingerprint documents; print one JSON line each.

    INPUTS are files (.txt .md .html .pdf .docx, or .jsonl/.csv collections),
    folders, or - for JSON Lines on stdin. Exit status 1 means some records were
    rejected; the summary on stderr counts them. Each line's "simdup" object is what
    'simdup index' writes into a document (its levels included): a writer that puts it
    into the document at ingest needs no backfill.
    """
    if not inputs and not texts:
        raise click.UsageError("give INPUTS or --text")
    fingerprinter = make_fingerprinter(idf_path, marked_words, max_bytes)
    fields = record_fields(text_field, title_field, id_field)
    log = RejectLog(rejects, show=SHOWN_REJECTS)
    literal = [Record(t, f"--text[{i}]") for i, t in enumerate(texts)]
    read = read_inputs(inputs, fields, skip=[rejects] if rejects else [], id_base=id_base)
    records = itertools.chain(literal, split(read, log))
    done = 0
    results = (((record, result, None, None) for record, result in fingerprinter.map_items(records, record_doc,
                                                                                          workers=workers))
               if levels == "document" else
               PartPrinter(fingerprinter, PartParams(with_parts=levels == "all")).map_items_unified(
                   records, record_doc, workers=workers))
    for record, result, doc_levels, unified in progress(results, "fingerprint"):
        if result.error is not None:
            log.add(record.source, result.reason, record.id)
            continue
        fp = result.unwrap()
        done += 1
        # "simdup" is the object a writer puts in a document (the index's fields, blocks as hex terms).
        simdup: dict[str, object] = {**keys.fingerprint_object(fp.value, fp.version, layout)}
        if doc_levels is not None:
            simdup |= levels_fields(record.key, doc_levels)
        if unified is not None and text_field == "text":  # read by a search's judge with the "text" field only
            simdup[keys.UNIFIED_NAME] = unified
        echo_json({"id": record.key, "source": record.source, "fingerprint": fp.hex,
                   "blocks": keys.block_terms(fp.value), "version": fp.version,
                   "simdup": simdup})
    log.close()
    click.echo(f"fingerprinted {done}, rejected {log.count}, total {done + log.count}", err=True)
    if log.count:
        sys.exit(1)


@main.command()
@click.argument("a")
@click.argument("b")
@store_cmds.store_options
@service_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of the report.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), help="Write an HTML report here.")
@click.option("--max-pairs", default=30, show_default=True, help="Sentence pairs shown in the terminal.")
@click.option("--text", "as_text", is_flag=True, help="A and B are texts, never file names.")
def compare(a: str, b: str, as_json: bool, html_path: Path | None, max_pairs: int, as_text: bool, **kwargs: Any) -> None:
    """Compare two documents A and B (files, or literal text).

    Prints the fingerprint distance, then the comparison matrix: which sentences
    of A reappear in B, the share of each document copied, resemblance and
    containment; A and B are judged as 'simdup search' judges a copy (-k,
    --partial-threshold). With a store (--store, --es-url, or the default
    folder), text that many stored documents hold is common text, shown
    apart and not counted (--common). The table of sentence pairs has these columns:

    \b
    p    the share of the longer sentence found in the other, in order (characters,
         or words of Latin script): their longest common subsequence over the
         length of each, the smaller of the two
    w    for a pair decided on its words: the share of words the two share or
         replace by a synonym, the smaller of the two (empty when p decided)
    how  same: the same words in the same order (punctuation, spacing, script aside);
         edited: most words in order, some added, dropped or changed;
         words replaced: the same sentence with words replaced by synonyms

    --json gives every share as a fraction from 0 to 1.
    """
    from ..report import render_html, render_terminal, verdict_json
    from ..sentences import unwrap_lines
    from ..service import Query

    unwrap = kwargs["unwrap"]
    store_opts = store_cmds.pop_store_opts(kwargs)
    service = make_service(kwargs)
    doc_a, doc_b = read_document(a, "A", text=as_text), read_document(b, "B", text=as_text)
    html = open_output(html_path) if html_path is not None else None
    # Compared unified; shown, and pointed into, as given.
    query_a, query_b = (Query(text=r.text, title=r.title, label=r.source) for r in (doc_a, doc_b))
    with store_cmds.named_store(store_opts) as store:
        compared = (service if store is None else service.with_store(store)).compare(query_a, query_b)
    verdict, shown_a, shown_b = compared.verdict, compared.a, compared.b
    name_a, name_b = Path(doc_a.source).name, Path(doc_b.source).name
    comparison = verdict.comparison
    if html is not None:
        with html:
            html.write(render_html(shown_a, shown_b, comparison, label_a=name_a, label_b=name_b))
        click.echo(f"wrote {html_path}", err=True)
    common = compared.common_text()
    if as_json:
        echo_json({**verdict_json(verdict, shown_a, shown_b), "common": common})
        return
    click.echo(str(verdict))
    for side, stretches in common.items():
        for c in stretches:
            held = "an excluded file's" if c["documents"] is None else f"held by {c['documents']} stored documents"
            shown = " ".join(c["text"].split())
            click.echo(f"common text of {side.upper()}, {held} (not counted): {shown[:60]}{'…' * (len(shown) > 60)}")
    if verdict.kind is None and comparison.pairs:
        p = verdict.params
        click.echo(f"note: the sentences marked below share too little rare text to count as copied: a passage "
                   f"counts from {p.passage_units} copied units, or from {p.short_units} (or half its text) that few "
                   "stored documents hold", err=True)
    render_terminal(shown_a, shown_b, comparison, label_a=name_a, label_b=name_b, max_pairs=max_pairs)
    wrapped = [] if unwrap else [name for name, shown in ((name_a, shown_a), (name_b, shown_b))
                                 if unwrap_lines(shown.text) != shown.text]
    if wrapped:
        verb, its = ("looks", "its") if len(wrapped) == 1 else ("look", "their")
        click.echo(f"note: {' and '.join(wrapped)} {verb} hard-wrapped (PDF, mail): {its} line breaks end sentences here, "
                   "which lowers the similarity; --unwrap reads them as sentences", err=True)


@main.group()
def idf() -> None:
    """Corpus IDF tables for fingerprint weights."""


@idf.command("build")
@click.argument("corpus", nargs=-1, required=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
@field_options
def idf_build(corpus: tuple[str, ...], output: Path, text_field: str, title_field: str, id_field: str) -> None:
    """Compute IDF over CORPUS (files, folders, JSON Lines) and write it to OUTPUT.

    Load it with --idf in fingerprint, index and search; it changes the
    fingerprint version, so index and query with the same table.
    """
    from ..text import unify

    tokenizer = Tokenizer()
    log = RejectLog(None)
    out = open_output(output)  # before the corpus is read, not after
    records = split(read_inputs(corpus, Fields(text_field, title_field or None, id_field or None)), log)  # ids unused
    table, n = build_idf(tokenizer.words(unify(r.text)) for r in progress(records, "idf"))
    with out:
        if n == 0:
            raise click.ClickException("the corpus has no readable documents")
        out.write(format_idf(table, n))
    click.echo(f"wrote {len(table)} words from {n} documents to {output} ({log.count} rejected)", err=True)


@main.command()
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
def sample(folder: Path) -> None:
    """Write the sample corpus into FOLDER as text files, to try simdup on.

    42 real Chinese documents (man pages, LibreOffice help, classical poems) shipped in
    the package; some are copies of others: a zh_TW conversion (zh-man-page-tw_...), an
    edited copy (...~edited), a paragraph deleted or appended, an exact copy. Existing files
    of the same names are replaced; nothing else in FOLDER is touched.
    """
    import json
    from importlib import resources

    lines = resources.files("simdup_es.data").joinpath("sample.jsonl").read_text(encoding="utf-8").splitlines()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for line in lines:
            doc = json.loads(line)
            name = doc["id"].replace(":", "_").replace("/", "_").replace("#", "-")
            (folder / f"{name}.txt").write_text(doc["text"] + "\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the sample into {folder}: {exc.strerror or exc} "
                          f"({exc.filename or folder}); name a folder you can write") from None
    click.echo(f"wrote {len(lines)} documents to {folder}/", err=True)
