"""Human-readable views of a :class:`simdup_es.compare.Comparison`.

- :func:`render_terminal` / :func:`terminal_report`: the marked sentence pairs side
  by side with rich, the units they share highlighted;
- :func:`render_html`: a self-contained HTML page (inline CSS, no script, no
  external asset) with both texts, every copied passage highlighted and linked to
  its counterpart, and the scores at the top.

Both take the two unified texts that were compared and the comparison.
"""

from __future__ import annotations

from ._common import copied_spans, original_spans, spans_dict
from .html import pair_view, render_html
from .terminal import render_terminal, terminal_report

__all__ = ["copied_spans", "original_spans", "pair_view", "render_html", "render_terminal", "spans_dict",
           "terminal_report"]
