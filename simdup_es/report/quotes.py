"""Quotations of a document, and the stored sources they quote.

A quotation is text in 「」, 『』, “” or "" (within one paragraph) or a block quote (a
Markdown ``>`` block, ``>`` lines of a plain text). Quoting names a source; a report marks
what it finds there as cited, apart from copied text, and still names the source.

The search for the whole document finds a source whose text it shares at length; a
sentence quoted from a long source is too small a part of either text to make it a copy,
so :func:`find_quoted` searches each quotation on its own, as a query of its own
(:func:`simdup_es.search.find_copies`), and compares the document with each source only a
quotation found, for the side by side view.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..compare import Comparison
from ..multilevel import Copies, MultiMatch, MultiParams
from ..offsets import Unified, unify_mapped
from ..parts import PartPrinter
from ..search import Comparer, comparer, find_copies, unify_stored
from ..sentences import UNIT_PATTERN
from ..markup import Layout
from ..store.base import Store, StoredDoc

__all__ = ["MIN_QUOTED", "QuotedCopies", "find_quoted", "quotation_spans"]

Span = tuple[int, int]

# A quotation: 「…」, 『…』, “…” or "…" within one paragraph (a stray mark does not swallow the rest).
QUOTATIONS = re.compile(r"「[^」\n]*」|『[^』\n]*』|“[^”\n]*”|\"[^\"\n]*\"")

MIN_QUOTED = 8
"""Units a quotation holds at least (CJK characters and words, as the comparison counts them): shorter quoted text
names a term or a title, it quotes no passage (and would be found in many sources)."""
MAX_QUOTATIONS = 50
"""Quotations searched on their own, the longest first: a document quoting more is mostly quotation."""
SHARE_QUOTED = 0.5
"""A quotation is found in a source when at least this share of it is copied there."""


def quotation_spans(text: str, layout: Layout | None = None) -> list[Span]:
    """``(start, end)`` of each quotation of ``text``: text in quotation marks (the marks included) and ``layout``'s
    block quotes, of at least :data:`MIN_QUOTED` units (「导航」 names a term, it quotes nothing);
    nested ones joined."""
    marked = [(m.start(), m.end()) for m in QUOTATIONS.finditer(text) if len(UNIT_PATTERN.findall(m.group())) >= MIN_QUOTED]
    spans = sorted(marked + list(layout.quotes if layout else ()))
    out: list[Span] = []
    for s, e in spans:
        if out and s < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _inner(quotation: str) -> str:
    """A quotation without its quotation marks and the white space at its ends."""
    return quotation.strip().strip("「」『』“”\"").strip()


@dataclass
class QuotedCopies:
    """What the quotations' own searches found.

    ``found``: for each quotation found in a source, its span in the document, the quotation's
    offset map (:class:`~simdup_es.offsets.Unified`, offsets relative to the span) and the copy
    (its comparison is the quotation's against the source). ``whole``: the document compared with
    each source only a quotation found (by id). ``searched``: the quotations searched.
    """

    found: list[tuple[Span, Unified, MultiMatch]] = field(default_factory=list)
    whole: dict[str, Comparison] = field(default_factory=dict)
    searched: int = 0


def find_quoted(store: Store, text: str, copies: Copies, *, layout: Layout | None = None,
                printer: PartPrinter | None = None, compare: Comparer | None = None,
                params: MultiParams = MultiParams(), exclude_id: str | None = None,
                stored: dict[str, StoredDoc] | None = None, per_quotation: int = 3) -> QuotedCopies:
    """Search each quotation of ``text`` (:func:`quotation_spans`) on its own (at most :data:`MAX_QUOTATIONS`, the
    longest first), after :func:`~simdup_es.search.find_copies` found ``copies``
    of the whole text (its ``unified`` text is compared with each new source).

    ``stored`` gets the stored documents of the sources found, as ``find_copies`` gives them.
    """
    compare = compare or comparer()
    stored = stored if stored is not None else {}
    spans = sorted(sorted(quotation_spans(text, layout), key=lambda sp: sp[0] - sp[1])[:MAX_QUOTATIONS])
    # A quotation a source of the whole document holds as it is needs no search of its own: the document's
    # comparison with that source marks it (and the report counts it as cited there).
    found_texts = [unify_stored(d.text) for m in copies if (d := stored.get(m.id)) is not None and d.text]
    spans = [(s, e) for s, e in spans if not any(_inner(unify_stored(text[s:e])) in t for t in found_texts)]
    out = QuotedCopies(searched=len(spans))
    known = {m.id for m in copies}
    for s, e in spans:
        got: dict[str, StoredDoc] = {}
        found = find_copies(store, text[s:e], printer=printer, exclude_id=exclude_id, compare=compare, params=params,
                            limit=per_quotation, stored=got)
        mapped: Unified | None = None
        for m in found:
            if m.comparison is None or m.copied_query < SHARE_QUOTED or not (doc := got.get(m.id)) or not doc.text:
                continue
            mapped = mapped or unify_mapped(text[s:e], found.unified)
            stored.setdefault(m.id, doc)
            out.found.append(((s, e), mapped, m))
            if m.id not in known and m.id not in out.whole and copies.unified is not None:
                out.whole[m.id] = compare(copies.unified, unify_stored(doc.text))
    return out
