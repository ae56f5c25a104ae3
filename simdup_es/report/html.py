"""Self-contained HTML report of a comparison.

One file, inline CSS, no script and no external asset, so it can be mailed or
archived. At the top the scores; below, the two texts side by side. Every sentence
marked similar is an ``<a>`` with ``id="a-3"`` (or ``b-5``) whose ``href`` points at
its first counterpart in the other text; further counterparts follow as small
numbered links, so anchors work both ways; the first counterpart is the best one
(highest p). Inside a marked sentence the units its best counterpart does not
share (one LCS leaves them out) are marked as changed.
A table of all pairs closes the page. Everything taken from the texts is escaped.
"""

from __future__ import annotations

from html import escape

from ..compare import Comparison, SentencePair
from ..sentences import Sentence
from ._common import Span, changed_spans, counterparts, percent

__all__ = ["render_html"]

_CSS = """
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
a.copied{color:inherit;text-decoration:none;background:#ffe08a;border-radius:3px;padding:0 1px}
a.copied.synonyms{background:#f2c6ff}
a.copied:target{outline:3px solid #e25c00}
a.copied mark{color:inherit;background:#ffb199;border-bottom:2px solid #d0421b}
sup.more a{font-size:.7em;margin-left:2px;color:#0645ad}
.trimmed{color:#999}
.legend span{padding:0 .4rem;border-radius:3px;margin-right:.6rem}
table.pairs{border-collapse:collapse;margin-top:1.5rem;font-size:.9rem}
table.pairs td,table.pairs th{padding:.2rem .6rem;border-bottom:1px solid #eee;vertical-align:top}
@media (max-width:800px){.texts{grid-template-columns:1fr}}
"""


def _sentence_html(text: str, sentence: Sentence, side: str, pairs: list[SentencePair], changed: list[Span]) -> str:
    """A copied sentence: a link to its best counterpart, numbered links to the others."""
    other = "b" if side == "a" else "a"
    body = text[sentence.start : sentence.end]
    pieces: list[str] = []
    pos = 0
    for start, end in changed:
        pieces.append(escape(body[pos:start]))
        pieces.append(f"<mark>{escape(body[start:end])}</mark>")
        pos = end
    pieces.append(escape(body[pos:]))
    best = pairs[0]
    k = best.j if side == "a" else best.i
    w_text = "" if best.w is None else f", w={best.w:.2f}"
    title = f"{side.upper()}{sentence.index} ~ {other.upper()}{k}: p={best.p:.2f}{w_text} ({best.rule})"
    html = (
        f'<a class="copied {best.rule}" id="{side}-{sentence.index}" href="#{other}-{k}" '
        f'title="{escape(title)}">{"".join(pieces)}</a>'
    )
    if len(pairs) > 1:
        others = [p.j if side == "a" else p.i for p in pairs[1:]]
        more = " ".join(f'<a href="#{other}-{k}">{other.upper()}{k}</a>' for k in others)
        html += f'<sup class="more">{more}</sup>'
    return html


def _text_html(
    text: str,
    side: str,
    comparison: Comparison,
    pairs_of: dict[int, list[SentencePair]],
    core: tuple[int, int] | None,
) -> str:
    sentences = comparison.sentences_a if side == "a" else comparison.sentences_b
    out: list[str] = []
    pos = 0
    for s in sentences:
        out.append(escape(text[pos : s.start]))
        pairs = pairs_of.get(s.index)
        if pairs:
            best = pairs[0]
            # Changes are shown against the best counterpart only.
            changed_a, changed_b = changed_spans(comparison.sentences_a[best.i], comparison.sentences_b[best.j])
            out.append(_sentence_html(text, s, side, pairs, changed_a if side == "a" else changed_b))
        elif core is not None and not core[0] <= s.index < core[1]:
            out.append(f'<span class="trimmed" id="{side}-{s.index}">{escape(s.text)}</span>')
        else:
            out.append(f'<span id="{side}-{s.index}">{escape(s.text)}</span>')
        pos = s.end
    out.append(escape(text[pos:]))
    return "".join(out)


def render_html(
    a: str,
    b: str,
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
        The unified texts that were compared (sentence offsets refer to them).
    comparison:
        The result of :func:`simdup_es.compare.compare` on ``a`` and ``b``.
    label_a, label_b:
        Names of the texts, e.g. file names.
    title:
        Page title; default ``"label_a vs label_b"``.
    """
    c = comparison
    of_a, of_b = counterparts(c)
    page_title = title if title is not None else f"{label_a} vs {label_b}"
    la, lb = escape(label_a), escape(label_b)
    lcs_note = "" if c.lcs_exact else " (lower bound from the sentence matrix)"
    rows = [
        (f"similarity of {la} against {lb}", percent(c.similarity_a)),
        (f"similarity of {lb} against {la}", percent(c.similarity_b)),
        ("resemblance", percent(c.resemblance)),
        (f"containment of {la} in {lb}", percent(c.containment_a_in_b)),
        (f"containment of {lb} in {la}", percent(c.containment_b_in_a)),
        ("LCS / units", f"{c.lcs} / {c.units_a} and {c.units_b}{lcs_note}"),
        ("similar sentence pairs", str(len(c.pairs))),
        ("sentences marked", f"{len(of_a)} of {len(c.sentences_a)} and {len(of_b)} of {len(c.sentences_b)}"),
    ]
    p = c.params
    params = (
        f"similar_weight={p.similar_weight}, right_weight={p.right_weight}, min_units={p.min_units}, "
        f"synonyms={'on' if p.use_synonyms else 'off'}, trim_boilerplate={'on' if p.trim_boilerplate else 'off'}"
    )
    scores = "".join(f'<tr><th>{k}</th><td class="n">{v}</td></tr>' for k, v in rows)
    pair_rows = "".join(
        f'<tr><td><a href="#a-{q.i}">{la} {q.i}</a></td><td><a href="#b-{q.j}">{lb} {q.j}</a></td>'
        f'<td class="n">{q.p:.3f}</td><td class="n">{"" if q.w is None else f"{q.w:.3f}"}</td><td>{q.rule}</td></tr>'
        for q in c.pairs
    )
    text_a = _text_html(a, "a", c, of_a, c.core_a)
    text_b = _text_html(b, "b", c, of_b, c.core_b)
    return f"""<!DOCTYPE html>
<html lang="zh">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="simdup-es">
<title>{escape(page_title)}</title>
<style>{_CSS}</style>
</head>
<body>
<h1>{escape(page_title)}</h1>
<table class="scores">{scores}</table>
<p class="legend"><span style="background:#ffe08a">similar by LCS</span>\
<span style="background:#f2c6ff">similar with synonyms</span>\
<mark style="background:#ffb199;border-bottom:2px solid #d0421b">changed</mark> · {escape(params)}</p>
<div class="texts">
<div class="text" id="text-a"><h2>{la}</h2>{text_a}</div>
<div class="text" id="text-b"><h2>{lb}</h2>{text_b}</div>
</div>
<table class="pairs"><tr><th>{la}</th><th>{lb}</th><th>p</th><th>w</th><th>rule</th></tr>{pair_rows}</table>
</body>
</html>
"""
