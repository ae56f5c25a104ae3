"""Human-readable views of a :class:`simdup_es.compare.Comparison`.

- :func:`render_terminal` / :func:`terminal_report`: the marked sentence pairs side
  by side with rich, the units they share highlighted;
- :func:`render_html`: a self-contained HTML page (inline CSS, no script, no
  external asset) with both texts, every copied passage highlighted and linked to
  its counterpart, and the scores at the top.

Both take the two unified texts that were compared and the comparison.
"""

from __future__ import annotations

from .html import render_html
from .terminal import render_terminal, terminal_report

__all__ = ["render_html", "render_terminal", "terminal_report"]
