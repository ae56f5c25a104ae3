"""``simdup report``: one document against the store, as a similarity report (terminal, HTML or JSON)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import InputError, NotFound
from ..multilevel import MultiParams
from ..parts import PartPrinter
from ._common import (compare_options, compare_params, echo_json, fingerprint_options, make_comparer, make_fingerprinter,
                      id_base_option, open_output, output_console, read_document, stored_ids)
from .store_cmds import (k_option, open_store, own_stored_id, pop_store_opts, query_source, query_source_options,
                         store_options)


@click.command()
@query_source_options
@click.option("--id", "doc_id", help="Report on this stored document (its stored copy is left out).")
@store_options
@id_base_option
@fingerprint_options
@compare_options
@click.option("--exclude-quotations", is_flag=True, help="Do not count text in 「」 『』 “” or \"\" quotation marks.")
@click.option("--exclude-references", is_flag=True,
              help="Do not count the references or bibliography section (from its heading to the end).")
@click.option("--min-chars", type=click.IntRange(0), default=0, show_default=True,
              help="Do not count copied passages shorter than this many characters.")
@click.option("--include-self", is_flag=True,
              help="Count the document's own stored copy (same id, or the same text when given as a file or text).")
@k_option
@click.option("--partial-threshold", type=click.FloatRange(0.0, 1.0), default=MultiParams.partial_threshold,
              show_default=True, help="A partial copy has at least this share of either side copied.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True, help="At most this many sources.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the report as a self-contained HTML page here.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (offsets in characters of the document).")
def report(query_arg: str | None, text: str | None, file: Path | None, doc_id: str | None, title: str | None,
           idf_path: Path | None, marked_words: Path | None, max_bytes: int, exclude_quotations: bool, exclude_references: bool,
           min_chars: int, include_self: bool, k: int, partial_threshold: float, limit: int, html_path: Path | None,
           as_json: bool, id_base: Path | None, **kwargs: Any) -> None:
    """A similarity report of one document, QUERY (a file, or text) or a stored document, against the store.

    How much of the document is copied and from how many sources; every source with
    its own colour, its kind and its share both ways; the document in its own
    characters with each copied passage coloured by its source (--html), and each
    source side by side with it.
    """
    from ..report import Exclusions, SimilarityReport, render_report_html, similarity_report

    text, file = query_source(query_arg, text, file)
    if sum(x is not None for x in (text, file, doc_id)) != 1:
        raise click.UsageError("give exactly one of QUERY, --text, --file or --id")
    exclusions = Exclusions(quotations=exclude_quotations, references=exclude_references, min_chars=min_chars)
    params = compare_params(kwargs)
    compare = make_comparer(kwargs)
    fingerprinter = make_fingerprinter(idf_path, marked_words, max_bytes)
    label = doc_id
    if file is not None:
        record = read_document(str(file))  # extracted as 'simdup index' reads it, title included
        text, title, label = record.text, title or record.title, file.name
    with open_store(pop_store_opts(kwargs), read_only=True) as store:
        def run(doc_id: str | None, label: str | None) -> SimilarityReport:
            return similarity_report(store, text, doc_id=doc_id, title=title, label=label or "this document",
                                     exclusions=exclusions, include_self=include_self, params=params,
                                     multi=MultiParams(k=k, partial_threshold=partial_threshold), compare=compare,
                                     printer=PartPrinter(fingerprinter), limit=limit)

        try:
            # A file the store holds as it is (same id, same text) is left out by its id, not by its text.
            own = own_stored_id(store, file, text, id_base) if file is not None and not include_self else None
            result = run(own if file is not None else doc_id, label)
        except InputError as exc:  # the document cannot be fingerprinted: say which file
            if file is None or exc.source is not None:
                raise
            raise type(exc)(exc.reason, source=str(file)) from None
        except NotFound:
            stored = stored_ids(store, [doc_id], id_base)[0] if doc_id is not None else None
            if stored in (None, doc_id):
                raise
            result = run(stored, stored)  # a file named another way than index named it (./a.txt for a.txt)
    if html_path is not None:
        with open_output(html_path) as out:
            out.write(render_report_html(result))
        click.echo(f"wrote {html_path}", err=True)
    if as_json:
        echo_json(result.to_dict())
        return
    _print(result)


def _print(result: Any) -> None:
    """The headline, the sources in their colours, the notes and the copied passages."""
    from rich.table import Table
    from rich.text import Text

    console = output_console()
    console.print(Text(result.headline, style="bold"))
    if result.sources:
        table = Table("", "source", "kind", "of this document", "of the source")
        table.add_column("title", no_wrap=True, overflow="ellipsis", max_width=30)
        for s in result.sources:
            table.add_row(Text("  ", style=f"on {s.colour}"), Text(s.id),  # ids and titles are no markup
                          s.kind,
                          f"{s.share_of_document:.0%}", f"{s.share_of_source:.0%}", Text(s.title or ""))
        console.print(table)
    for note in [*result.exclusions.in_words(), *(f"Left out: {i} ({why})." for i, why in result.left_out)]:
        console.print(Text(f"- {note}", style="dim"))
    original = result.document.original
    for start, end, k in result.passages:
        passage = " ".join(original[start:end].split())
        source = result.sources[k]
        line = Text(f"{start}-{end} ", style="dim")
        line.append(passage if len(passage) <= 100 else passage[:99] + "…", style=f"black on {source.colour}")
        line.append(f"  {source.id}", style="dim")
        console.print(line)
