"""Terminal view of a comparison: scores, then the similar sentences side by side.

Within each pair the units one LCS of the two sentences leaves out are
highlighted: what was changed stands out against the copied rest. Pairs decided
by the word-level check are marked "synonyms".
"""

from __future__ import annotations

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..compare import Comparison
from ..offsets import Unified
from ..sentences import Sentence
from ._common import Span, as_unified, changed_spans, pair_how, percent

__all__ = ["render_terminal", "terminal_report"]

CHANGED_STYLE = "bold black on yellow"
HOW_STYLE = {"same": "cyan", "edited": "yellow", "words replaced": "magenta"}


def _highlighted(shown: Unified, sentence: Sentence, spans: list[Span]) -> Text:
    """A sentence in its original characters, the changed units (spans of the unified sentence) highlighted."""
    origin, stop = shown.span(sentence.start, sentence.end)
    text = shown.original[origin:stop]
    out = Text(" ".join(text.splitlines()))  # one sentence, one cell: a line break reads as a space
    for start, end in spans:
        s, e = shown.span(sentence.start + start, sentence.start + end)
        out.stylize(CHANGED_STYLE, max(0, s - origin), min(len(text), e - origin))
    return out


def _scores(comparison: Comparison, label_a: str, label_b: str) -> Table:
    table = Table(box=box.SIMPLE, show_header=False, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    c = comparison
    table.add_row(f"similarity of {label_a} against {label_b}", percent(c.similarity_a))
    table.add_row(f"similarity of {label_b} against {label_a}", percent(c.similarity_b))
    table.add_row("what the two texts share in order, of all they hold", percent(c.resemblance))
    table.add_row(f"share of {label_a} found in {label_b}, in order", percent(c.containment_a_in_b))
    table.add_row(f"share of {label_b} found in {label_a}, in order", percent(c.containment_b_in_a))
    lcs_note = "" if c.lcs_exact else " (at least; counted over copied sentences)"
    table.add_row("characters (or words) shared in order / in each text", f"{c.lcs} / {c.units_a} and {c.units_b}{lcs_note}")
    table.add_row(
        "sentences marked",
        f"{len(c.marked_a)} of {len(c.sentences_a)} and {len(c.marked_b)} of {len(c.sentences_b)}",
    )
    if c.core_a is not None and c.core_b is not None:
        cores = f"{label_a} {c.core_a[0]}–{c.core_a[1]}, {label_b} {c.core_b[0]}–{c.core_b[1]}"
        table.add_row("trusted core (sentences)", cores)
    return table


def terminal_report(
    a: str | Unified,
    b: str | Unified,
    comparison: Comparison,
    *,
    label_a: str = "A",
    label_b: str = "B",
    max_pairs: int | None = None,
) -> RenderableType:
    """The report as a rich renderable (print it with any :class:`rich.console.Console`).

    Parameters
    ----------
    a, b:
        The texts that were compared: :class:`~simdup_es.offsets.Unified` texts are shown
        in their original characters, plain strings as they are (offsets refer to them).
    comparison:
        The result of :func:`simdup_es.compare.compare` on ``a`` and ``b``.
    label_a, label_b:
        Names of the texts, e.g. file names.
    max_pairs:
        Show at most this many pairs (the rest are counted).
    """
    shown_a, shown_b = as_unified(a), as_unified(b)
    parts: list[RenderableType] = [_scores(comparison, label_a, label_b)]
    pairs = comparison.pairs
    if not pairs:
        parts.append(Text("No similar sentences.", style="dim"))
        return Group(*parts)
    table = Table(box=box.SIMPLE_HEAD, expand=True, show_lines=True)
    # Indices get columns of their own: glued to CJK text (no spaces to break at)
    # they would push the whole sentence onto the next line.
    table.add_column("#", justify="right", style="dim", no_wrap=True)
    table.add_column(label_a, ratio=1, overflow="fold")
    table.add_column("#", justify="right", style="dim", no_wrap=True)
    table.add_column(label_b, ratio=1, overflow="fold")
    table.add_column("p", justify="right", no_wrap=True)
    table.add_column("w", justify="right", no_wrap=True)
    table.add_column("how", no_wrap=True)
    shown = pairs if max_pairs is None else pairs[:max_pairs]
    for pair in shown:
        sa = comparison.sentences_a[pair.i]
        sb = comparison.sentences_b[pair.j]
        spans_a, spans_b = changed_spans(sa, sb)
        table.add_row(
            str(pair.i),
            _highlighted(shown_a, sa, spans_a),
            str(pair.j),
            _highlighted(shown_b, sb, spans_b),
            f"{pair.p:.2f}",
            "" if pair.w is None else f"{pair.w:.2f}",
            Text(pair_how(pair), style=HOW_STYLE[pair_how(pair)]),
        )
    parts.append(table)
    if len(shown) < len(pairs):
        parts.append(Text(f"... and {len(pairs) - len(shown)} more pairs", style="dim"))
    return Group(*parts)


def render_terminal(
    a: str | Unified,
    b: str | Unified,
    comparison: Comparison,
    *,
    console: Console | None = None,
    label_a: str = "A",
    label_b: str = "B",
    max_pairs: int | None = None,
) -> None:
    """Print :func:`terminal_report` to ``console`` (default: a new stdout console)."""
    (console or Console()).print(
        terminal_report(a, b, comparison, label_a=label_a, label_b=label_b, max_pairs=max_pairs)
    )
