"""Quotations of a document, and the stored sources they quote.

A quotation is text in 「」, 『』, “” or "" (within one paragraph) or a block quote (a
Markdown ``>`` block, ``>`` lines of a plain text). Quoting names a source; a report marks
what it finds there as cited, apart from copied text, and still names the source.

The search for the whole document finds a source whose text it shares at length; a
sentence quoted from a long source is too small a part of either text to make it a copy.
:func:`find_quoted` looks the quotations up together, after that search::

    quotations ──unify, levels (one batch)──> parts and keys of each
        ──one store lookup (all of them)──> candidates, each with the keys it matched
        ──per quotation: its best candidates──> the quotation compared with each
        ──at least SHARE_QUOTED of it copied──> cited from that source

A quotation a source of the whole document holds as it is needs no lookup (the document's
comparison with that source marks it). One lookup for all quotations, not a search each:
the lookups and the judging of whole-document candidates were most of a search's time.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from ..compare import Comparison
from ..markup import Layout
from ..multilevel import Copies, MultiParams
from ..offsets import Unified, unify_mapped
from ..parts import PartPrinter
from ..search import MatrixComparer
from ..sentences import UNIT_PATTERN
from ..store.base import Store, StoredDoc
from ..text import unify_many
from ._common import Span, copied_spans, original_spans
from .figures import ink, mask

__all__ = ["MAX_QUOTATIONS", "MIN_QUOTED", "PER_QUOTATION", "SHARE_QUOTED", "Cited", "QuotedCopies", "find_quoted",
           "quotation_spans"]

# A quotation: 「…」, 『…』, “…” or "…" within one paragraph (a stray mark does not swallow the rest).
QUOTATIONS = re.compile(r"「[^」\n]*」|『[^』\n]*』|“[^”\n]*”|\"[^\"\n]*\"")

MIN_QUOTED = 8
"""Units a quotation holds at least (CJK characters and words, as the comparison counts them): shorter quoted text
names a term or a title, it quotes no passage (and would be found in many sources)."""
MAX_QUOTATIONS = 50
"""Quotations looked up, the longest first: a document quoting more is mostly quotation."""
SHARE_QUOTED = 0.5
"""A quotation is found in a source when at least this share of its characters (white space aside) is copied there."""
PER_QUOTATION = 3
"""Candidates a quotation is compared with: those that matched most of its parts and keys."""


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
class Cited:
    """A source quotations were found in: its stored document, the quoted passages found there in original
    characters of the document (``spans``) and of the source (``source_spans``), and ``comparison``, the whole
    document's with the source when the search for the whole document did not find it (for the side by side)."""

    doc: StoredDoc
    spans: list[Span] = field(default_factory=list)
    source_spans: list[Span] = field(default_factory=list)
    comparison: Comparison | None = None


@dataclass
class QuotedCopies:
    """What :func:`find_quoted` found: the sources by id (:class:`Cited`), the quotations looked up and the
    (quotation, candidate) pairs compared."""

    cited: dict[str, Cited] = field(default_factory=dict)
    searched: int = 0
    compared: int = 0


def find_quoted(store: Store, copies: Copies, compare: MatrixComparer, printer: PartPrinter, *,
                layout: Layout | None = None, params: MultiParams = MultiParams(), exclude: Collection[str] = (),
                per_quotation: int = PER_QUOTATION) -> QuotedCopies:
    """The sources of the quotations of the text ``copies`` were found for (:func:`simdup_es.search.find_copies`,
    whose ``docs`` and ``unified`` text it reads), at most :data:`MAX_QUOTATIONS` of them, the longest first;
    none of ``exclude`` (ids), and no stored copy of the very same text.

    ``compare`` is the search's comparer (its caches hold the stored texts' unified forms and maps), ``printer``
    the levels the store was indexed with, ``params.store_limit`` the candidates asked of the store at least.
    """
    text = copies.text or ""
    spans = sorted(sorted(quotation_spans(text, layout), key=lambda sp: sp[0] - sp[1])[:MAX_QUOTATIONS])
    # A quotation a source of the whole document holds as it is is marked by the document's comparison with it
    # (not one left out: excluded, or the document's own stored copy).
    held = [compare.caches.unify(d.text) for m in copies if m.id not in exclude
            and (d := copies.docs.get(m.id)) is not None and d.text and d.text != text]
    unified = unify_many([text[s:e] for s, e in spans])
    kept = [i for i, u in enumerate(unified) if not any(_inner(u) in t for t in held)]
    out = QuotedCopies(searched=len(kept))
    if not kept:
        return out
    spans, unified = [spans[i] for i in kept], [unified[i] for i in kept]
    chosen = _chosen(store, printer, unified, params, exclude, per_quotation)
    docs = {**copies.docs, **{d.id: d for d in store.get([i for i in chosen if i not in copies.docs])}}
    for doc_id, quotations in chosen.items():
        doc = docs.get(doc_id)
        if doc is None or not doc.text or doc.text == text:  # no text to compare, or the document's own copy
            continue
        source = compare.caches.unify(doc.text)
        for i in quotations:
            out.compared += 1
            found = _quoted_in(text, spans[i], unified[i], compare(unified[i], source))
            if found is not None:
                cited = out.cited.setdefault(doc_id, Cited(doc))
                cited.spans.extend(found[0])
                cited.source_spans.extend(original_spans(compare.caches.mapped(doc.text), found[1]))
    known = {m.id for m in copies}
    for doc_id, cited in out.cited.items():  # the side by side of a source only quotations found
        if doc_id not in known and copies.unified is not None:
            cited.comparison = compare(copies.unified, compare.caches.unify(cited.doc.text or ""))
    return out


def _chosen(store: Store, printer: PartPrinter, unified: Sequence[str], params: MultiParams, exclude: Collection[str],
            per_quotation: int) -> dict[str, list[int]]:
    """By stored document, the quotations it is among the ``per_quotation`` best candidates of (most of the
    quotation's parts and keys matched, then the store's order), from one lookup of all quotations' parts and keys."""
    levels = printer.levels_many(unified)
    parts = [f for lv in levels for f in lv.fingerprints]
    part_of = [i for i, lv in enumerate(levels) for _ in lv.fingerprints]
    values = [lv.key_values() for lv in levels]
    keys = [k for v in values for k in v]
    key_of = [i for i, v in enumerate(values) for _ in v]
    found = [c for c in store.part_candidates(parts, keys, printer.version,
                                              limit=max(params.store_limit, per_quotation * len(unified)))
             if c.id not in exclude]
    hits = [Counter([*(part_of[p] for p in c.parts), *(key_of[k] for k in c.keys)]) for c in found]
    chosen: dict[str, list[int]] = {}
    for i in range(len(unified)):
        for _, order in sorted((-n[i], order) for order, n in enumerate(hits) if n[i])[:per_quotation]:
            chosen.setdefault(found[order].id, []).append(i)
    return chosen


def _quoted_in(text: str, span: Span, unified: str, comparison: Comparison) -> tuple[list[Span], list[Span]] | None:
    """The passages of the quotation ``text[span]`` found in a source, in characters of ``text``, and those of the
    source in its unified text; ``None`` when less than :data:`SHARE_QUOTED` of the quotation is copied there."""
    copied = copied_spans(comparison, "a")
    if not copied:
        return None
    start, end = span
    shown: Unified = unify_mapped(text[start:end], unified)
    spans = original_spans(shown, copied)
    inked = ink(shown.original)
    if int((mask(len(inked), spans) & inked).sum()) < SHARE_QUOTED * max(1, int(inked.sum())):
        return None
    return [(start + s, start + e) for s, e in spans], copied_spans(comparison, "b")
