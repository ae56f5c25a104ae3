"""Self-contained HTML report of a comparison.

One file, inline CSS, no script and no external asset, so it can be mailed or
archived. At the top the scores and the settings in words; below, the two texts side by side,
in the characters the user gave (:class:`~simdup_es.offsets.Unified` texts map the
compared, unified text back to them). Every sentence
marked similar is an ``<a>`` with ``id="a-3"`` (or ``b-5``) whose ``href`` points at
its first counterpart in the other text; further counterparts follow as small
numbered links, so anchors work both ways; the first counterpart is the best one
(highest p). Inside a marked sentence the units its best counterpart does not
share (one LCS leaves them out) are marked as changed.
A table of all pairs closes the page. Everything taken from the texts is escaped.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from html import escape

import numpy as np

from ..compare import CompareParams, Comparison, SentencePair
from ..offsets import Unified
from ..sentences import Sentence
from ._common import (COLUMNS, Span, as_unified, changed_spans, copied_spans, counterparts, original_spans, pair_how,
                      percent)

__all__ = ["CSS", "EscapeCache", "pair_view", "render_html", "settings_in_words"]

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans CJK SC","PingFang SC","Microsoft YaHei",sans-serif;
margin:0 auto;max-width:1400px;padding:1rem 1.5rem;color:#222;line-height:1.7}
h1{font-size:1.3rem;margin:.2rem 0 .8rem}
table.scores{border-collapse:collapse;margin-bottom:1rem}
table.scores td,table.scores th{padding:.15rem .8rem;border-bottom:1px solid #eee;text-align:left}
table.scores td.n{text-align:right;font-variant-numeric:tabular-nums}
.texts{display:grid;grid-template-columns:1fr 1fr;gap:1.5rem}
.text{white-space:pre-wrap;word-break:break-word;border:1px solid #ddd;border-radius:6px;padding:.8rem 1rem;
background:#fff}
.text h2{white-space:normal;font-size:1rem;margin:0 0 .5rem;color:#555}
a.pair{color:inherit;text-decoration:none}
a.pair.synonyms{text-decoration:underline dotted #8a4baf}
a.pair:target{outline:3px solid #e25c00}
span.copied{background:#ffe08a}
mark{color:inherit;background:#ffb199;border-bottom:2px solid #d0421b}
dl.columns{font-size:.85rem;color:#444;display:grid;grid-template-columns:max-content 1fr;gap:.1rem .8rem}
dl.columns dt{font-weight:600}dl.columns dd{margin:0}
sup.more a{font-size:.7em;margin-left:2px;color:#0645ad}
.trimmed{color:#999}
.elided{display:block;color:#999;font-style:italic;margin:.4em 0}
.legend span{padding:0 .4rem;border-radius:3px;margin-right:.6rem}
table.pairs{border-collapse:collapse;margin-top:1.5rem;font-size:.9rem}
table.pairs td,table.pairs th{padding:.2rem .6rem;border-bottom:1px solid #eee;vertical-align:top}
table.pairs td a{color:inherit}
ul.settings{font-size:.85rem;color:#555;margin:.2rem 0 1rem;padding-left:1.2rem}
@media (max-width:800px){.texts{grid-template-columns:1fr}}
"""


def page_head(title: str, css: str) -> str:
    """The start of a self-contained page, to ``</head>``: its title and inline style."""
    return f"""<!DOCTYPE html>
<html lang="zh">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="simdup-es">
<title>{escape(title)}</title>
<style>{css}</style>
</head>
"""

class _Marker:
    """One side's original text as HTML: its copied passages (original spans, sorted) in the copied colour, the
    words a sentence changed marked, everything escaped; unmarked stretches escaped once per page (``cache``)."""

    def __init__(self, original: str, copied: list[Span], colour: str | None, cache: EscapeCache) -> None:
        self.original, self.copied, self.cache = original, copied, cache
        self.starts = [s for s, _ in copied]
        self.open = f'<span class="copied" style="background:{colour}">' if colour else '<span class="copied">'

    def html(self, start: int, end: int, changed: list[Span] = ()) -> str:  # type: ignore[assignment]
        """``original[start:end]`` with the copied spans and the ``changed`` spans (absolute, sorted) marked."""
        k = max(0, bisect_right(self.starts, start) - 1)
        copied = [(max(s, start), min(e, end)) for s, e in self.copied[k:bisect_left(self.starts, end)]
                  if e > start and s < end]
        if not copied and not changed:
            return self.cache.get_escaped(self.original, start, end)
        cuts = sorted({start, end, *(x for span in (*copied, *changed) for x in span if start < x < end)})
        out = []
        for a, b in zip(cuts, cuts[1:]):
            piece = escape(self.original[a:b])
            if any(s <= a and b <= e for s, e in changed):
                piece = f"<mark>{piece}</mark>"
            if any(s <= a and b <= e for s, e in copied):
                piece = f"{self.open}{piece}</span>"
            out.append(piece)
        return "".join(out)


def _changed(shown: Unified, sentence: Sentence, spans: list[Span]) -> list[Span]:
    """Spans relative to a unified sentence as spans of the original text."""
    out: list[Span] = []
    for start, end in spans:
        s, e = shown.span(sentence.start + start, sentence.start + end)
        s = max(s, out[-1][1] if out else 0)
        if e > s:
            out.append((s, e))
    return out


def _sentence_html(marker: _Marker, start: int, end: int, sentence: Sentence, side: str,
                   pairs: list[SentencePair], changed: list[Span], prefix: str) -> str:
    """A sentence of a pair, in its original characters: a link to its best counterpart, numbered links to the
    others; its copied passages and changed words marked as everywhere on the page."""
    other = "b" if side == "a" else "a"
    best = pairs[0]
    k = best.j if side == "a" else best.i
    title = f"{side.upper()}{sentence.index} ~ {other.upper()}{k}: p {best.p:.2f}, {pair_how(best)}"
    html = (f'<a class="pair {best.rule}" id="{prefix}{side}-{sentence.index}" href="#{prefix}{other}-{k}" '
            f'title="{escape(title)}">{marker.html(start, end, changed)}</a>')
    if len(pairs) > 1:
        others = [p.j if side == "a" else p.i for p in pairs[1:]]
        more = " ".join(f'<a href="#{prefix}{other}-{k}">{other.upper()}{k}</a>' for k in others)
        html += f'<sup class="more">{more}</sup>'
    return html


def _text_html(shown: Unified, side: str, comparison: Comparison, pairs_of: dict[int, list[SentencePair]],
               copied: list[Span], changes: dict[tuple[int, int], tuple[list[Span], list[Span]]],
               prefix: str = "", colour: str | None = None, cache: EscapeCache | None = None) -> str:
    """One side in its original characters, every sentence an element with an id, the paired ones links to their
    counterparts, the ``copied`` passages (original spans) marked wherever they are.

    A side longer than ``ELIDE_FROM`` characters shows its copied sentences with ``CONTEXT`` sentences around
    them, each stretch left out said in words (a 5 MB document beside each of its sources would make a page
    of hundreds of megabytes; a report shows the whole document once, above its sources)."""
    sentences = comparison.sentences_a if side == "a" else comparison.sentences_b
    core = comparison.core_a if side == "a" else comparison.core_b
    original = shown.original
    marker = _Marker(original, copied, colour, cache if cache is not None else EscapeCache())
    shows = range(len(sentences)) if len(original) <= ELIDE_FROM else _visible(len(sentences), pairs_of)
    out: list[str] = []
    pos = last = 0
    for k in shows:
        s = sentences[k]
        start, end = shown.span(s.start, s.end)
        if k > last:
            out.append(_elided(k - last))
            pos = start
        last = k + 1
        start = max(start, pos)
        end = max(start, end)
        out.append(marker.html(pos, start))
        pairs = pairs_of.get(s.index)
        if pairs:
            best = pairs[0]
            # Changes are shown against the best counterpart only (each pair aligned once for both sides).
            if (best.i, best.j) not in changes:
                changes[best.i, best.j] = changed_spans(comparison.sentences_a[best.i], comparison.sentences_b[best.j])
            changed = _changed(shown, s, changes[best.i, best.j][0 if side == "a" else 1])
            out.append(_sentence_html(marker, start, end, s, side, pairs, changed, prefix))
        elif core is not None and not core[0] <= s.index < core[1]:
            out.append(f'<span class="trimmed" id="{prefix}{side}-{s.index}">{marker.html(start, end)}</span>')
        else:
            out.append(f'<span id="{prefix}{side}-{s.index}">{marker.html(start, end)}</span>')
        pos = max(pos, end)
    out.append(_elided(len(sentences) - last) if last < len(sentences) else marker.html(pos, len(original)))
    return "".join(out)


ELIDE_FROM = 50_000
CONTEXT = 3


def _visible(n: int, pairs_of: dict[int, list[SentencePair]]) -> list[int]:
    """The sentences of ``n`` a long side shows: the copied ones and ``CONTEXT`` on either side of each."""
    copied = np.zeros(n + 2 * CONTEXT + 1, dtype=np.int64)
    for i in pairs_of:  # +1 where a window opens, -1 after it closes
        copied[i] += 1
        copied[i + 2 * CONTEXT + 1] -= 1
    return np.flatnonzero(np.cumsum(copied)[CONTEXT : CONTEXT + n] > 0).tolist()


def _elided(n: int) -> str:
    return f'<span class="elided">[… {n:,} sentence{"s" if n != 1 else ""} not copied from this source …]</span>'


class EscapeCache(dict[tuple[int, int, int], str]):
    """Escaped stretches of texts, for one page that shows a text several times (a report shows its
    document beside each source): keyed by the text's identity, so keep it no longer than the texts."""

    def get_escaped(self, text: str, start: int, end: int) -> str:
        key = (id(text), start, end)
        got = self.get(key)
        if got is None:
            got = self[key] = escape(text[start:end])
        return got


def pair_view(a: str | Unified, b: str | Unified, comparison: Comparison, *, label_a: str = "A", label_b: str = "B",
              prefix: str = "", colour: str | None = None, cache: EscapeCache | None = None,
              spans_a: Sequence[Span] | None = None, spans_b: Sequence[Span] | None = None) -> str:
    """The two texts side by side (an HTML fragment), in their original characters, the copied passages marked and
    the sentences of each pair linked to each other.

    ``spans_a`` and ``spans_b`` are the copied passages in original characters (default: those of
    :func:`~simdup_es.report.copied_spans`, as :func:`~simdup_es.report.original_spans` maps them), so that a
    page marks the same characters in every view of a text. ``prefix`` starts every id (several views on one
    page); ``colour`` is the copied passages' background; ``cache`` saves escaping a text shown in several
    views of the page again.
    """
    shown_a, shown_b = as_unified(a), as_unified(b)
    if spans_a is None:
        spans_a = original_spans(shown_a, copied_spans(comparison, "a"))
    if spans_b is None:
        spans_b = original_spans(shown_b, copied_spans(comparison, "b"))
    of_a, of_b = counterparts(comparison)
    changes: dict[tuple[int, int], tuple[list[Span], list[Span]]] = {}
    text_a = _text_html(shown_a, "a", comparison, of_a, sorted(spans_a), changes, prefix, colour, cache)
    text_b = _text_html(shown_b, "b", comparison, of_b, sorted(spans_b), changes, prefix, colour, cache)
    return (f'<div class="texts">\n<div class="text" id="{prefix}text-a"><h2>{escape(label_a)}</h2>{text_a}</div>\n'
            f'<div class="text" id="{prefix}text-b"><h2>{escape(label_b)}</h2>{text_b}</div>\n</div>')


def settings_in_words(params: CompareParams) -> list[str]:
    """What the comparison's parameters mean, in sentences a reader can follow."""
    p = params
    out = [
        f"A sentence counts as copied when the characters (or words) it shares in order with a sentence of the other "
        f"text make up at least {100 * p.right_weight:.0f}% of the longer of the two; from "
        f"{100 * p.similar_weight:.0f}% on, " + ("words replaced by synonyms count as shared."
                                                   if p.use_synonyms else "the words they share are counted."),
        f"A stretch of {p.run_units} or more characters (or words) that both texts share counts as copied wherever it is.",
        f"Sentences shorter than {p.min_units} characters (or words) are joined to a neighbour.",
    ]
    if p.trim_boilerplate:
        out.append("Only the central part both texts share is scored: headers, footers and other boilerplate are left out.")
    return out


def render_html(
    a: str | Unified,
    b: str | Unified,
    comparison: Comparison,
    *,
    label_a: str = "A",
    label_b: str = "B",
    title: str | None = None,
) -> str:
    """The report as one HTML document (UTF-8 text; write it with ``encoding="utf-8"``).

    Parameters
    ----------
    a, b:
        The texts that were compared: :class:`~simdup_es.offsets.Unified` texts (from
        :func:`~simdup_es.offsets.unify_mapped`) are shown in their original characters;
        a plain string is shown as it is (sentence offsets must refer to it).
    comparison:
        The result of :func:`simdup_es.compare.compare` on the unified texts.
    label_a, label_b:
        Names of the texts, e.g. file names.
    title:
        Page title; default ``"label_a vs label_b"``.
    """
    c = comparison
    shown_a, shown_b = as_unified(a), as_unified(b)
    of_a, of_b = counterparts(c)
    page_title = title if title is not None else f"{label_a} vs {label_b}"
    la, lb = escape(label_a), escape(label_b)
    lcs_note = "" if c.lcs_exact else " (at least; counted over copied sentences)"
    rows = [
        (f"similarity of {la} against {lb}", percent(c.similarity_a)),
        (f"similarity of {lb} against {la}", percent(c.similarity_b)),
        ("what the two texts share in order, of all they hold", percent(c.resemblance)),
        (f"share of {la} found in {lb}, in order", percent(c.containment_a_in_b)),
        (f"share of {lb} found in {la}, in order", percent(c.containment_b_in_a)),
        ("characters (or words) shared in order / in each text", f"{c.lcs} / {c.units_a} and {c.units_b}{lcs_note}"),
        ("similar sentence pairs", str(len(c.pairs))),
        ("sentences marked", f"{len(of_a)} of {len(c.sentences_a)} and {len(of_b)} of {len(c.sentences_b)}"),
    ]
    scores = "".join(f'<tr><th>{k}</th><td class="n">{v}</td></tr>' for k, v in rows)
    pair_rows = "".join(
        f'<tr><td><a href="#a-{q.i}">{escape(_excerpt(shown_a, q.a_start, q.a_end))}</a></td>'
        f'<td><a href="#b-{q.j}">{escape(_excerpt(shown_b, q.b_start, q.b_end))}</a></td>'
        f'<td class="n">{q.p:.2f}</td><td class="n">{"" if q.w is None else f"{q.w:.2f}"}</td><td>{pair_how(q)}</td></tr>'
        for q in c.pairs
    )
    settings = "".join(f"<li>{escape(line)}</li>" for line in settings_in_words(c.params))
    return page_head(page_title, CSS) + f"""<body>
<h1>{escape(page_title)}</h1>
<table class="scores">{scores}</table>
<p class="legend"><span class="copied">copied</span> <a class="pair synonyms">words replaced by synonyms</a> \
<mark>changed</mark></p>
<ul class="settings">{settings}</ul>
{pair_view(shown_a, shown_b, c, label_a=label_a, label_b=label_b)}
<table class="pairs"><tr><th>{la}</th><th>{lb}</th><th>p</th><th>w</th><th>how</th></tr>{pair_rows}</table>
{columns_html()}
</body>
</html>
"""


def columns_html() -> str:
    """The columns of the pairs' table explained (a definition list)."""
    return ('<dl class="columns">' + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in COLUMNS)
            + "</dl>")


def _excerpt(shown: Unified, start: int, end: int, limit: int = 60) -> str:
    """The original text of a sentence, cut to ``limit`` characters."""
    text = " ".join(shown.shown(start, end).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
