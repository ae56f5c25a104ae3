"""The similarity report as one self-contained HTML page (inline CSS, no script, no external asset).

From the top: the headline (share copied, number of sources); the sources, each with
its colour, kind and shares both ways; what was excluded and how copies are judged,
in words; the document in its original characters with every copied passage
coloured by its source (a link to that source's section) and excluded text marked;
then, per source, the document and the source side by side
(:func:`simdup_es.report.html.pair_view`). Everything taken from the texts is escaped.
"""

from __future__ import annotations

from html import escape

from .html import CSS, EscapeCache, page_head, pair_view
from .similarity import SimilarityReport

__all__ = ["render_report_html"]

_PAGE_CSS = """
.headline{font-size:1.6rem;font-weight:600;margin:.3rem 0 1rem}
table.sources{border-collapse:collapse;margin-bottom:1rem}
table.sources td,table.sources th{padding:.25rem .7rem;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
table.sources td.n{text-align:right;font-variant-numeric:tabular-nums}
.swatch{display:inline-block;width:1.1rem;height:1.1rem;border-radius:3px;vertical-align:middle;border:1px solid #0002}
.document{white-space:pre-wrap;word-break:break-word;border:1px solid #ddd;border-radius:6px;padding:.8rem 1rem;
background:#fff;margin-bottom:1.5rem}
a.passage{color:inherit;text-decoration:none;border-radius:3px;padding:0 1px}
a.passage:hover{outline:2px solid #555}
span.excluded{color:#666;background:repeating-linear-gradient(135deg,#f3f3f3 0 6px,#e6e6e6 6px 12px);border-radius:3px}
section.source{margin:1.2rem 0}
section.source summary{cursor:pointer;font-weight:600;margin-bottom:.6rem}
ul.notes{font-size:.9rem;color:#444;margin:.2rem 0 1rem;padding-left:1.2rem}
"""


def _document_html(report: SimilarityReport) -> str:
    """The document in its original characters: passages coloured and linked by source, exclusions marked."""
    text = report.document.original
    marks: list[tuple[int, int, str, int | str]] = [(s, e, "p", k) for s, e, k in report.passages]
    marks += [(s, e, "x", r) for s, e, r in report.excluded]
    out: list[str] = []
    pos = 0
    for start, end, what, arg in sorted(marks, key=lambda m: (m[0], m[1])):
        start = max(start, pos)
        if end <= start:
            continue
        out.append(escape(text[pos:start]))
        piece = escape(text[start:end])
        if what == "p":
            assert isinstance(arg, int)
            source = report.sources[arg]
            out.append(f'<a class="passage" data-source="{arg}" href="#source-{arg}" style="background:{source.colour}" '
                       f'title="{escape(f"from {source.id}", quote=True)}">{piece}</a>')
        else:
            out.append(f'<span class="excluded" data-reason="{escape(str(arg))}" title="excluded: {escape(str(arg))}">'
                       f"{piece}</span>")
        pos = end
    out.append(escape(text[pos:]))
    return "".join(out)


def _sources_html(report: SimilarityReport) -> str:
    rows = []
    for k, s in enumerate(report.sources):
        kind = "near-duplicate" if s.kind == "near-duplicate" else "partial"  # the kind as search and groups name it
        rows.append(
            f'<tr id="row-{k}"><td><span class="swatch" style="background:{s.colour}"></span></td>'
            f'<td><a href="#source-{k}">{escape(s.id)}</a></td><td>{escape(s.title or "")}</td><td>{kind}</td>'
            f'<td class="n">{100 * s.share_of_document:.1f}%</td><td class="n">{100 * s.share_of_source:.1f}%</td></tr>')
    if not rows:
        return ""
    return ('<table class="sources"><tr><th></th><th>source</th><th>title</th><th>kind</th>'
            '<th>share of this document<br>copied from it</th><th>share of the source<br>found in this document</th></tr>'
            + "".join(rows) + "</table>")


def _source_sections(report: SimilarityReport) -> str:
    out = []
    cache = EscapeCache()  # the document is shown beside each source: escaped once
    for k, s in enumerate(report.sources):
        view = pair_view(report.document, s.text, s.comparison, label_a=report.label, label_b=s.id,
                         prefix=f"s{k}-", colour=s.colour, cache=cache)
        out.append(f'<section class="source" id="source-{k}"><details><summary><span class="swatch" '
                   f'style="background:{s.colour}"></span> {escape(s.id)}{" — " + escape(s.title) if s.title else ""}: '
                   f"{100 * s.share_of_document:.1f}% of this document, {100 * s.share_of_source:.1f}% of the source "
                   f"(side by side)</summary>\n{view}</details></section>")
    return "\n".join(out)


def render_report_html(report: SimilarityReport, *, title: str | None = None) -> str:
    """The report as one HTML document (UTF-8 text; write it with ``encoding="utf-8"``)."""
    page_title = title if title is not None else f"Similarity report: {report.label}"
    notes = [*report.exclusions.in_words(), *report.settings]
    notes += [f"Left out: {i} ({reason})." for i, reason in report.left_out]
    if report.more:
        notes.append(f"{report.more} more candidates were not judged: the search stopped at its limit of sources "
                     "(raise it to see them).")
    notes_html = "".join(f"<li>{escape(n)}</li>" for n in notes)
    return page_head(page_title, CSS + _PAGE_CSS) + f"""<body>
<h1>{escape(page_title)}</h1>
<p class="headline" id="headline">{escape(report.headline)}</p>
{_sources_html(report)}
<ul class="notes" id="notes">{notes_html}</ul>
<div class="document" id="document">{_document_html(report)}</div>
{_source_sections(report)}
</body>
</html>
"""
