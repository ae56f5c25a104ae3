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
from ._common import changed_spans, percent

__all__ = ["render_terminal", "terminal_report"]

CHANGED_STYLE = "bold black on yellow"
RULE_STYLE = {"lcs": "cyan", "synonyms": "magenta"}


def _highlighted(text: str, spans: list[tuple[int, int]]) -> Text:
    out = Text(text.replace("\n", " "))  # one sentence, one cell: a merged line break reads as a space
    for start, end in spans:
        out.stylize(CHANGED_STYLE, start, end)
    return out


def _scores(comparison: Comparison, label_a: str, label_b: str) -> Table:
    table = Table(box=box.SIMPLE, show_header=False, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    c = comparison
    table.add_row(f"similarity of {label_a} against {label_b}", percent(c.similarity_a))
    table.add_row(f"similarity of {label_b} against {label_a}", percent(c.similarity_b))
    table.add_row("resemblance", percent(c.resemblance))
    table.add_row(f"containment of {label_a} in {label_b}", percent(c.containment_a_in_b))
    table.add_row(f"containment of {label_b} in {label_a}", percent(c.containment_b_in_a))
    lcs_note = "" if c.lcs_exact else " (lower bound from the sentence matrix)"
    table.add_row("LCS / units", f"{c.lcs} / {c.units_a} and {c.units_b}{lcs_note}")
    table.add_row(
        "sentences marked",
        f"{len(c.marked_a)} of {len(c.sentences_a)} and {len(c.marked_b)} of {len(c.sentences_b)}",
    )
    if c.core_a is not None and c.core_b is not None:
        cores = f"{label_a} {c.core_a[0]}–{c.core_a[1]}, {label_b} {c.core_b[0]}–{c.core_b[1]}"
        table.add_row("trusted core (sentences)", cores)
    return table


def terminal_report(
    a: str,
    b: str,
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
        The unified texts that were compared (sentence offsets refer to them).
    comparison:
        The result of :func:`simdup_es.compare.compare` on ``a`` and ``b``.
    label_a, label_b:
        Names of the texts, e.g. file names.
    max_pairs:
        Show at most this many pairs (the rest are counted).
    """
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
    table.add_column("rule", no_wrap=True)
    shown = pairs if max_pairs is None else pairs[:max_pairs]
    for pair in shown:
        sa = comparison.sentences_a[pair.i]
        sb = comparison.sentences_b[pair.j]
        spans_a, spans_b = changed_spans(sa, sb)
        table.add_row(
            str(pair.i),
            _highlighted(a[pair.a_start : pair.a_end], spans_a),
            str(pair.j),
            _highlighted(b[pair.b_start : pair.b_end], spans_b),
            f"{pair.p:.2f}",
            "" if pair.w is None else f"{pair.w:.2f}",
            Text(pair.rule, style=RULE_STYLE[pair.rule]),
        )
    parts.append(table)
    if len(shown) < len(pairs):
        parts.append(Text(f"... and {len(pairs) - len(shown)} more pairs", style="dim"))
    return Group(*parts)


def render_terminal(
    a: str,
    b: str,
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
