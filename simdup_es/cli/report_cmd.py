"""``simdup report``: one document against the store, as a similarity report (terminal, HTML or JSON)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import InputError
from ._common import echo_json, id_base_option, make_service, open_output, output_console, service_options
from .store_cmds import by_id, pop_store_opts, query_of, query_source, query_source_options, searching, store_options


@click.command()
@query_source_options
@click.option("--id", "doc_id", help="Report on this stored document (its stored copy is left out).")
@store_options
@id_base_option
@service_options
@click.option("--exclude-quotations", is_flag=True,
              help="Do not count quotations: text in 「」 『』 “” or \"\" quotation marks, and block quotes.")
@click.option("--exclude-references", is_flag=True,
              help="Do not count the references or bibliography section (from its heading to the end).")
@click.option("--min-chars", type=click.IntRange(0), default=0, show_default=True,
              help="Do not count copied passages shorter than this many characters.")
@click.option("--include-self", is_flag=True,
              help="Count the document's own stored copy (same id, or the same text when given as a file or text).")
@click.option("--exclude-source", "exclude_sources", multiple=True, metavar="ID",
              help="Do not count this stored document as a source (repeatable); the report names it as left out.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True, help="At most this many sources.")
@click.option("--source-link", metavar="TEMPLATE",
              help="Link each source of the HTML page to its own report: TEMPLATE with {id} for the source's "
                   "percent-encoded id, e.g. 'reports/{id}.html' or 'https://host/report/{id}'.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the report as a self-contained HTML page here.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (offsets in characters of the document).")
def report(query_arg: str | None, text: str | None, file: Path | None, doc_id: str | None, title: str | None,
           exclude_quotations: bool, exclude_references: bool, min_chars: int, include_self: bool,
           exclude_sources: tuple[str, ...], limit: int, source_link: str | None, html_path: Path | None, as_json: bool,
           id_base: Path | None, **kwargs: Any) -> None:
    """A similarity report of one document, QUERY (a file, or text) or a stored document, against the store.

    How much of the document is copied: the share of the whole text, the share
    without quotations, the largest share from one source, each with its characters,
    and per section (or paragraph); every source with its own colour, its kind, its
    share and characters both ways, its title (else its file name or first line),
    address, author and date where the store holds them, and the stored copies of the
    same text on its line ("also in"); the document in its own characters with each
    copied passage coloured by its source, and each quotation found in a source
    marked as cited from it (--html), and each source side by side with it.

    Quotations (text in 「」 『』 “” or "" of 8 characters or words or more, block quotes) are
    looked up on their own too: a quotation from a long source is found in it.
    """
    from ..report import Exclusions, render_report_html

    text, file = query_source(query_arg, text, file)
    if sum(x is not None for x in (text, file, doc_id)) != 1:
        raise click.UsageError("give exactly one of QUERY, --text, --file or --id")
    exclusions = Exclusions(quotations=exclude_quotations, references=exclude_references, min_chars=min_chars,
                            texts=tuple(kwargs["exclude_files"]))
    service = make_service(kwargs)
    with searching(pop_store_opts(kwargs), service) as service:
        # A file the store holds as it is (same id, same text) is left out by its id, not by its text.
        query = query_of(service, text, file, doc_id, title, id_base, leave_out=not include_self)
        try:
            result = by_id(lambda q: service.report(q, exclusions=exclusions, include_self=include_self, limit=limit,
                                                    exclude_sources=exclude_sources), query, service.store, id_base)
        except InputError as exc:  # the document cannot be fingerprinted: say which file
            if file is None or exc.source is not None:
                raise
            raise type(exc)(exc.reason, source=str(file)) from None
    if html_path is not None:
        with open_output(html_path) as out:
            out.write(render_report_html(result, source_link=source_link))
        click.echo(f"wrote {html_path}", err=True)
    if as_json:
        echo_json(result.to_dict())
        return
    _print(result)


def _print(result: Any) -> None:
    """The headline, the figures, the sources in their colours, the sections, the notes and the copied passages."""
    from rich.table import Table
    from rich.text import Text

    console = output_console()
    console.print(Text(result.headline, style="bold"))
    f = result.figures
    figures = Table("", "share", "characters", box=None)
    for words, share, chars in (("whole text (总文字复制比)", f.share, f.copied),
                                ("without quotations (去除引用文献复制比)", f.share_without_quotations,
                                 f.copied_without_quotations),
                                ("largest from one source (单篇最大文字复制比)", f.largest_share, f.largest),
                                ("quoted text cited (引用)", f.cited / max(1, f.chars), f.cited)):
        figures.add_row(words, f"{share:.1%}", f"{chars:,} of {f.chars:,}")
    console.print(figures)
    if result.sources:
        table = Table("", "source", "kind", "of this document", "chars", "of the source", "chars")
        table.add_column("title", no_wrap=True, overflow="ellipsis", max_width=30)
        for s in result.sources:
            name = s.name + ("" if s.name_from == "title" else f" ({s.name_from})")
            also = f"\nalso in: {', '.join(s.also_in)}" if s.also_in else ""
            table.add_row(Text("  ", style=f"on {s.colour}"), Text(s.id + also),  # ids and titles are no markup
                          s.kind, f"{s.share_of_document:.1%}", f"{s.chars:,}", f"{s.share_of_source:.1%}",
                          f"{s.source_chars:,}", Text(name))
        console.print(table)
    if len(result.sections) > 1:
        sections = Table(result.sections[0].kind, "copied", "chars", "cited")
        for x in result.sections:
            sections.add_row(Text(x.title), f"{x.share:.1%}", f"{x.copied:,} of {x.chars:,}", f"{x.cited:,}")
        console.print(sections)
    for note in [*result.exclusions.in_words(), *(f"Left out: {i} ({why})." for i, why in result.left_out)]:
        console.print(Text(f"- {note}", style="dim"))
    original = result.document.original
    for start, end, k, cited in sorted([*((*p, False) for p in result.passages), *((*c, True) for c in result.citations)]):
        passage = " ".join(original[start:end].split())
        source = result.sources[k]
        line = Text(f"{start}-{end} ", style="dim")
        line.append(passage if len(passage) <= 100 else passage[:99] + "…",
                    style=f"italic black on {source.colour}" if cited else f"black on {source.colour}")
        line.append(f"  {'cited from ' if cited else ''}{source.id}", style="dim")
        console.print(line)
