"""The similarity report as one self-contained HTML page (inline CSS, no script, no external asset).

From the top: the headline (share copied, number of sources); the figures (the whole text,
without quotations, the largest share from one source, quoted text found in a source), each
with its characters; the sources, each with its colour, kind, shares and characters both ways,
title, address, author and date, and the stored copies of its text; the sections; what was
excluded and how copies are judged, in words; the document in its original characters with every
copied passage coloured by its source (a link to that source's section), quoted text found in a
source marked as cited and numbered with it, excluded text hatched; then, per source, the document
and the source side by side (:func:`simdup_es.report.html.pair_view`), marking the same characters.
Everything taken from the texts is escaped. Printed (or saved as PDF from a browser), the page
looks as on screen: its colours kept, the side by side views open or folded as they are.
"""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from ._common import COLUMNS
from .html import CSS, EscapeCache, page_head, pair_view
from .similarity import SimilarityReport, Source

__all__ = ["render_report_html"]

_PAGE_CSS = """
.headline{font-size:1.6rem;font-weight:600;margin:.3rem 0 1rem}
table.figures,table.sources,table.sections{border-collapse:collapse;margin-bottom:1rem}
table.figures td,table.figures th,table.sources td,table.sources th,table.sections td,table.sections th{
padding:.25rem .7rem;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.swatch{display:inline-block;width:1.1rem;height:1.1rem;border-radius:3px;vertical-align:middle;border:1px solid #0002}
.meta,.also{font-size:.85rem;color:#555}
.document{white-space:pre-wrap;word-break:break-word;border:1px solid #ddd;border-radius:6px;padding:.8rem 1rem;
background:#fff;margin-bottom:1.5rem}
a.passage{color:inherit;text-decoration:none;border-radius:3px;padding:0 1px}
a.passage:hover{outline:2px solid #555}
a.cited{color:inherit;text-decoration:none;font-style:italic;border-bottom:3px double;padding:0 1px}
a.cited::after{content:attr(data-cite);font-size:.7em;vertical-align:super;font-style:normal;margin-left:1px}
span.quotation{border-bottom:1px dashed #999}
span.common{color:#555;background:#ececec;border-bottom:1px dotted #999;border-radius:3px}
span.excluded{color:#666;background:repeating-linear-gradient(135deg,#f3f3f3 0 6px,#e6e6e6 6px 12px);border-radius:3px}
section.source{margin:1.2rem 0}
section.source summary{cursor:pointer;font-weight:600;margin-bottom:.6rem}
ul.notes{font-size:.9rem;color:#444;margin:.2rem 0 1rem;padding-left:1.2rem}
h2.part{font-size:1.1rem;margin:1.4rem 0 .5rem}
@media print{
body{max-width:none;padding:0;font-size:10.5pt;-webkit-print-color-adjust:exact;print-color-adjust:exact}
a{text-decoration:none}
.document{border:none;padding:0}
.texts{grid-template-columns:1fr 1fr}
tr,.swatch,summary{break-inside:avoid}
h2.part{break-after:avoid}
}
"""

_FIGURE_ROWS = (
    ("share", "copied", "copied from any source, quoted text included", "总文字复制比"),
    ("share_without_quotations", "copied_without_quotations", "copied, quotations left out", "去除引用文献复制比"),
    ("largest_share", "largest", "the largest share from one source", "单篇最大文字复制比"),
)


def _figures_html(report: SimilarityReport) -> str:
    f = report.figures
    rows = [f'<tr id="figure-{name}"><th>{escape(words)} <span class="meta">({cn})</span></th>'
            f'<td class="n share">{100 * getattr(f, name):.1f}%</td><td class="n chars">{getattr(f, chars):,}</td>'
            f"<td>{'' if name != 'largest_share' or f.largest_source is None else escape(_named(report, f.largest_source))}"
            "</td></tr>" for name, chars, words, cn in _FIGURE_ROWS]
    rows.append(f'<tr id="figure-cited"><th>quoted text found in a source, cited <span class="meta">(引用)</span></th>'
                f'<td class="n share">{100 * f.cited / max(1, f.chars):.1f}%</td><td class="n chars">{f.cited:,}</td>'
                "<td></td></tr>")
    return ('<table class="figures" id="figures"><tr><th></th><th>share</th><th>characters</th><th></th></tr>'
            + "".join(rows) + f'<tr id="figure-chars"><th>the document <span class="meta">(总字数)</span></th><td></td>'
            f'<td class="n chars">{f.chars:,}</td><td></td></tr></table>')


def _named(report: SimilarityReport, source_id: str) -> str:
    return next((s.name or s.id for s in report.sources if s.id == source_id), source_id)


def _source_row(k: int, s: Source, link: str | None) -> str:
    kind = {"near-duplicate": "near-duplicate", "cited": "cited only"}.get(s.kind, "partial")
    meta = dict(s.meta)
    name = escape(s.name or s.id)
    if meta.get("url"):
        name = f'<a href="{escape(meta["url"], quote=True)}" rel="noreferrer">{name}</a>'
    details = [escape(v) for v in (meta.get("author"), meta.get("date")) if v]
    if s.name_from != "title":
        details.append(f"(no title: its {escape(s.name_from)})")
    report_link = (f' <a class="report-link" href="{escape(link.replace("{id}", quote(s.id, safe="")), quote=True)}">'
                   "its report</a>") if link else ""
    also = (f'<div class="also">also in: {", ".join(escape(i) for i in s.also_in)}</div>' if s.also_in else "")
    return (f'<tr id="row-{k}" data-source="{escape(s.id, quote=True)}"><td><span class="swatch" style="background:'
            f'{s.colour}"></span></td><td>{name}<div class="meta">{" · ".join(details)}</div></td>'
            f'<td><a href="#source-{k}">{escape(s.id)}</a>{report_link}{also}</td><td>{kind}</td>'
            f'<td class="n share">{100 * s.share_of_document:.1f}%</td><td class="n chars">{s.chars:,}</td>'
            f'<td class="n cited">{s.cited_chars:,}</td><td class="n share">{100 * s.share_of_source:.1f}%</td>'
            f'<td class="n chars">{s.source_chars:,} of {s.source_total:,}</td></tr>')


def _sources_html(report: SimilarityReport, link: str | None) -> str:
    rows = [_source_row(k, s, link) for k, s in enumerate(report.sources)]
    if not rows:
        return ""
    return ('<table class="sources" id="sources"><tr><th></th><th>title</th><th>source</th><th>kind</th>'
            '<th colspan="2">of this document<br>copied from it</th><th>of which<br>cited</th>'
            '<th colspan="2">of the source<br>found in this document</th></tr>' + "".join(rows) + "</table>")


def _sections_html(report: SimilarityReport) -> str:
    if len(report.sections) < 2:
        return ""
    kind = "paragraph" if report.sections[0].kind == "paragraph" else "section"
    rows = "".join(
        f'<tr id="section-{k}"><td>{escape(s.title)}</td><td class="n share">{100 * s.share:.1f}%</td>'
        f'<td class="n chars">{s.copied:,} of {s.chars:,}</td><td class="n cited">{s.cited:,}</td></tr>'
        for k, s in enumerate(report.sections))
    return (f'<h2 class="part">By {kind}</h2><table class="sections" id="sections"><tr><th>{kind}</th>'
            "<th>copied</th><th>characters</th><th>of which cited</th></tr>" + rows + "</table>")


def _document_html(report: SimilarityReport) -> str:
    """The document in its original characters: passages coloured and linked by source, quoted text found in a
    source marked as cited, common text in grey, exclusions hatched."""
    text = report.document.original
    marks: list[tuple[int, int, str, int | str]] = [(s, e, "p", k) for s, e, k in report.passages]
    marks += [(s, e, "c", k) for s, e, k in report.citations]
    marks += [(s, e, "x", r) for s, e, r in report.excluded]
    marks += [(s, e, "m", "an excluded file's text" if n is None else f"held by {n:,} stored documents")
              for s, e, n in report.common]
    out: list[str] = []
    pos = 0
    for start, end, what, arg in sorted(marks, key=lambda m: (m[0], m[1])):
        start = max(start, pos)
        if end <= start:
            continue
        out.append(escape(text[pos:start]))
        piece = escape(text[start:end])
        if what in "pc":
            assert isinstance(arg, int)
            source = report.sources[arg]
            title = escape(f"{'quoted from' if what == 'c' else 'from'} {source.name or source.id} ({source.id})",
                           quote=True)
            if what == "p":
                out.append(f'<a class="passage" data-source="{arg}" href="#source-{arg}" '
                           f'style="background:{source.colour}" title="{title}">{piece}</a>')
            else:
                out.append(f'<a class="cited" data-source="{arg}" data-cite="[{arg + 1}]" href="#source-{arg}" '
                           f'style="border-color:{source.colour}" title="{title}">{piece}</a>')
        elif what == "m":
            out.append(f'<span class="common" title="common text, {escape(str(arg))}: not counted">{piece}</span>')
        else:
            out.append(f'<span class="excluded" data-reason="{escape(str(arg))}" title="excluded: {escape(str(arg))}">'
                       f"{piece}</span>")
        pos = end
    out.append(escape(text[pos:]))
    return "".join(out)


def _source_sections(report: SimilarityReport) -> str:
    out = []
    cache = EscapeCache()  # the document is shown beside each source: escaped once
    for k, s in enumerate(report.sources):
        view = pair_view(report.document, s.text, s.comparison, label_a=report.label, label_b=s.id,
                         prefix=f"s{k}-", colour=s.colour, cache=cache, spans_a=s.spans, spans_b=s.source_spans)
        title = f" — {escape(s.name)}" if s.name and s.name != s.id else ""
        out.append(f'<section class="source" id="source-{k}"><details><summary><span class="swatch" '
                   f'style="background:{s.colour}"></span> [{k + 1}] {escape(s.id)}{title}: '
                   f"{100 * s.share_of_document:.1f}% of this document ({s.chars:,} characters), "
                   f"{100 * s.share_of_source:.1f}% of the source (side by side)</summary>\n{view}</details></section>")
    return "\n".join(out)


_EXPLAINED = (
    ("share", "characters copied over the document's characters; white space is not counted, and a character copied "
              "from several sources counts once, for the source that covers most of the document"),
    ("characters", "how many characters that share is (重复字数)"),
    ("cited", "quoted text (in 「」, 『』, “”, \"\" or a block quote) found in a source: underlined twice in the "
              "source's colour and numbered with it, counted with the copied text and apart"),
    ("of the source", "the source's characters found in this document, of all it holds"),
    *COLUMNS,
)


def render_report_html(report: SimilarityReport, *, title: str | None = None, source_link: str | None = None) -> str:
    """The report as one HTML document (UTF-8 text; write it with ``encoding="utf-8"``).

    ``source_link``: where each source's own report is, ``{id}`` standing for its percent-encoded id (a
    server passes ``/report/{id}``; ``None``: no link).
    """
    page_title = title if title is not None else f"Similarity report: {report.label}"
    notes = [*report.exclusions.in_words(), *report.settings]
    notes += [f"Left out: {i} ({reason})." for i, reason in report.left_out]
    if report.more:
        notes.append(f"{report.more} more candidates were not judged: the search stopped at its limit of sources "
                     "(raise it to see them).")
    notes_html = "".join(f"<li>{escape(n)}</li>" for n in notes)
    explained = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in _EXPLAINED)
    return page_head(page_title, CSS + _PAGE_CSS) + f"""<body>
<h1>{escape(page_title)}</h1>
<p class="headline" id="headline">{escape(report.headline)}</p>
{_figures_html(report)}
{_sources_html(report, source_link)}
{_sections_html(report)}
<ul class="notes" id="notes">{notes_html}</ul>
<div class="document" id="document">{_document_html(report)}</div>
{_source_sections(report)}
<h2 class="part">What the figures and columns say</h2>
<dl class="columns" id="explained">{explained}</dl>
</body>
</html>
"""

