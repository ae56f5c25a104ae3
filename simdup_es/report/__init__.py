"""Human-readable views of a :class:`simdup_es.compare.Comparison`.

- :func:`render_terminal` / :func:`terminal_report`: the marked sentence pairs side
  by side with rich, the units they share highlighted;
- :func:`render_html`: a self-contained HTML page (inline CSS, no script, no
  external asset) with both texts, every copied passage highlighted and linked to
  its counterpart, and the scores at the top.

Both take the two texts that were compared (as :class:`~simdup_es.offsets.Unified`, to show
them in the user's own characters) and the comparison.

- :func:`report_from_copies` / :func:`render_report_html`: one document against a store
  (:meth:`simdup_es.service.Service.report` searches and builds it): its figures
  (:class:`Figures`, per :class:`Section`), every source with its colour, shares and
  characters, the document's copied passages coloured by source and its quotations found in a
  source (:func:`find_quoted`) marked as cited (:class:`SimilarityReport`,
  :meth:`SimilarityReport.to_dict` for JSON).
"""

from __future__ import annotations

from ._common import copied_spans, matches_json, original_spans, pair_how, spans_dict, verdict_json
from .figures import Figures, Section
from .html import pair_view, render_html
from .page import render_report_html
from .quotes import QuotedCopies, find_quoted
from .similarity import Exclusions, SimilarityReport, Source, report_from_copies
from .terminal import render_terminal, terminal_report

__all__ = ["Exclusions", "Figures", "QuotedCopies", "Section", "SimilarityReport", "Source", "copied_spans",
           "find_quoted", "matches_json", "original_spans", "pair_how", "pair_view", "render_html", "render_report_html",
           "render_terminal", "report_from_copies", "spans_dict", "terminal_report", "verdict_json"]
