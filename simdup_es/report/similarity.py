"""A similarity report for one document against a store: how much of it is copied, and from where.

What people who check copies are used to (an overall similarity index, every source
with its own colour and share, the document in its own words with each copied
passage coloured by its source), over the copies :func:`simdup_es.search.find_copies`
finds. :func:`report_from_copies` builds it (:meth:`simdup_es.service.Service.report` searches
and builds it); :class:`SimilarityReport` holds it (:meth:`~SimilarityReport.to_dict` for JSON);
:func:`simdup_es.report.render_report_html` draws it as one self-contained page.

Offsets are in characters of the document as given (for HTML, PDF and DOCX files,
the extracted text): the comparison runs on unified text and
:func:`simdup_es.offsets.unify_mapped` maps it back. Shares count the characters that
are not white space. Each copied character of the document is coloured by one source:
the one that covers most of the document among those that copied it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..compare import CompareParams, Comparison
from ..errors import ConfigError
from ..multilevel import Copies, MultiMatch, MultiParams
from ..offsets import Unified, unify_mapped
from ..opencc_tables import lookup
from ..text import space_table
from ..store.base import StoredDoc
from ._common import Span, copied_spans, original_spans, spans_dict

__all__ = ["PALETTE", "Exclusions", "Source", "SimilarityReport", "excluded_spans", "report_from_copies",
           "report_limit", "settings_in_words"]

log = logging.getLogger(__name__)

PALETTE = ("#f6c343", "#7ec8e3", "#f28b82", "#a8d5a2", "#c9a0dc", "#ffb870", "#9fb8f0", "#e6a4b4", "#b5d99c",
           "#d7c49e")
"""Background colours of the sources, in order (light enough to read black text on; a tenth source reuses the first)."""

# A quotation: 「…」, 『…』, “…” or "…" within one paragraph (a stray mark does not swallow the rest).
_QUOTATIONS = re.compile(r"「[^」\n]*」|『[^』\n]*』|“[^”\n]*”|\"[^\"\n]*\"")
# A heading that opens the references: the word alone on its line (Markdown hashes, numbering and a colon allowed).
_REFERENCES = re.compile(
    r"^[ \t]*(?:#+[ \t]*)?(?:[0-9ivx]+[.)]?[ \t]*)?(?:references|bibliography|works cited|literature cited|"
    r"参考文献|參考文獻|参考资料|參考資料|引用文献|文献)[ \t]*[:：]?[ \t]*$", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Exclusions:
    """What the report does not count as copied.

    Attributes
    ----------
    quotations:
        Text in quotation marks: 「」, 『』, “” and "" (within one paragraph).
    references:
        The references or bibliography section: from a line that is only such a heading
        (References, Bibliography, Works cited, 参考文献, …) to the end.
    min_chars:
        Copied passages shorter than this many characters (white space not counted).
    """

    quotations: bool = False
    references: bool = False
    min_chars: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.min_chars, bool) or not isinstance(self.min_chars, int) or self.min_chars < 0:
            raise ConfigError(f"min_chars must be a whole number of characters, 0 or more; got {self.min_chars!r}")

    def in_words(self) -> list[str]:
        """Each exclusion as a sentence for the report (one saying there are none)."""
        out = []
        if self.quotations:
            out.append("Quotations in 「」, 『』, “” and \"\" are not counted.")
        if self.references:
            out.append("The references or bibliography section is not counted.")
        if self.min_chars:
            out.append(f"Copied passages shorter than {self.min_chars} characters are not counted.")
        return out or ["Nothing is excluded: quotations, references and short matches all count."]


def excluded_spans(text: str, exclusions: Exclusions) -> list[tuple[int, int, str]]:
    """``(start, end, reason)`` of the parts of ``text`` the exclusions leave out (quotations, references)."""
    out: list[tuple[int, int, str]] = []
    if exclusions.quotations:
        out.extend((m.start(), m.end(), "quotation") for m in _QUOTATIONS.finditer(text))
    if exclusions.references:
        heading = _REFERENCES.search(text)
        if heading is not None:
            out.append((heading.start(), len(text), "references"))
    return sorted(out)


@dataclass(frozen=True, eq=False)
class Source:
    """A stored document the report found copied from.

    ``share_of_document``: the share of the document's characters copied from it (after
    the exclusions; other sources may share some); ``share_of_source``: the share of its
    own characters found in the document. ``spans`` and ``source_spans`` are the copied
    passages in original characters of the document and of the source.
    """

    id: str
    title: str | None
    kind: str
    colour: str
    distance: int | None
    share_of_document: float
    share_of_source: float
    spans: tuple[Span, ...]
    source_spans: tuple[Span, ...]
    text: Unified = field(repr=False)
    comparison: Comparison = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "kind": self.kind, "colour": self.colour, "distance": self.distance,
                "share_of_document": round(self.share_of_document, 4), "share_of_source": round(self.share_of_source, 4),
                "spans": spans_dict(self.spans), "source_spans": spans_dict(self.source_spans)}


@dataclass(frozen=True, eq=False)
class SimilarityReport:
    """One document against a store (see the module docstring).

    ``passages`` are ``(start, end, source index)``: the document's copied passages, each
    character given to one source; ``share`` is their share of the document's characters.
    ``excluded`` are ``(start, end, reason)``; ``left_out`` names the stored copies of the
    document itself that were not counted, with the reason.
    """

    document: Unified
    label: str
    sources: tuple[Source, ...]
    passages: tuple[tuple[int, int, int], ...]
    share: float
    excluded: tuple[tuple[int, int, str], ...]
    exclusions: Exclusions
    settings: tuple[str, ...]
    left_out: tuple[tuple[str, str], ...] = ()
    more: int = 0

    @property
    def headline(self) -> str:
        """"28% of this document is copied, from 3 sources" (or that none was found)."""
        if not self.sources:
            excluded = sum(why == _ALL_EXCLUDED for _, why in self.left_out)
            if excluded:
                sources = "1 source shares" if excluded == 1 else f"{excluded} sources share"
                return f"No copied text counts: {sources} only excluded text."
            return "No copied text found in the store."
        n = len(self.sources)
        return f"{100 * self.share:.0f}% of this document is copied, from {n} source{'s' if n != 1 else ''}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the headline figures, the sources, the passages and the settings, offsets in
        characters of the document as given."""
        ids = [s.id for s in self.sources]
        return {"document": {"label": self.label, "chars": len(self.document.original)},
                "share": round(self.share, 4), "headline": self.headline,
                "sources": [s.to_dict() for s in self.sources],
                "passages": [{"start": a, "end": b, "source": ids[k]} for a, b, k in self.passages],
                "excluded": [{"start": a, "end": b, "reason": r} for a, b, r in self.excluded],
                "exclusions": self.exclusions.in_words(), "settings": list(self.settings),
                "left_out": [{"id": i, "reason": r} for i, r in self.left_out], "more": self.more}


def _ink(text: str) -> np.ndarray:
    """Per character of ``text``: True unless white space (what shares count)."""
    return lookup(space_table(), text) == 0


def _mask(n: int, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    out = np.zeros(n, dtype=bool)
    for s, e in spans:
        out[s:e] = True
    return out


def _runs(mask: np.ndarray) -> list[Span]:
    """``(start, end)`` of each run of True."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.view(np.int8), [0]))))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist()))


def _kept(spans: Sequence[Span], n: int, excluded: np.ndarray, ink: np.ndarray, min_chars: int) -> list[Span]:
    """The spans without the excluded characters, those left shorter than ``min_chars`` (ink) dropped."""
    mask = _mask(n, spans) & ~excluded
    return [(s, e) for s, e in _runs(mask) if int(ink[s:e].sum()) >= max(1, min_chars)]


def settings_in_words(params: CompareParams, multi: MultiParams) -> list[str]:
    """How sources are found and judged, in sentences (the comparison's own, then the kinds)."""
    from .html import settings_in_words as comparison_words

    return [*comparison_words(params),
            f"A source is a near-duplicate when its fingerprint differs from the document's in at most {multi.k} of "
            f"64 bits, or when most of both texts are copied; a partial copy when at least "
            f"{100 * multi.partial_threshold:.0f}% of either text is copied, or a long passage is."]


def report_limit(limit: int, doc_id: str | None, include_self: bool) -> int:
    """How many copies to ask the search for, for a report of at most ``limit`` sources: one more when the
    document's own stored copy is found by its text (no id), which :func:`report_from_copies` leaves out."""
    return limit + 1 if doc_id is None and not include_self else limit


def report_from_copies(text: str, copies: Copies, *, doc_id: str | None = None, label: str = "this document",
                       exclusions: Exclusions = Exclusions(), include_self: bool = False, settings: Sequence[str] = (),
                       limit: int | None = None, mapped: Callable[[str], Unified] = unify_mapped) -> SimilarityReport:
    """The report from a search already made: ``copies`` of ``text`` (:func:`simdup_es.search.find_copies`,
    made with ``exclude_id=doc_id`` unless ``include_self``, and :func:`report_limit`), with the stored documents
    they name; at most ``limit`` sources.

    ``doc_id`` is the document's id in the store (its stored copy is left out and named, unless
    ``include_self``; without an id, one source with the very same text is); ``settings`` are the
    sentences saying how copies were judged (:func:`settings_in_words`); ``mapped`` maps a stored text
    (from a cache, as a service keeps them).
    """
    document = unify_mapped(text, copies.unified)
    left_out: list[tuple[str, str]] = []
    if doc_id is not None and not include_self:
        left_out.append((doc_id, "this document's own stored copy"))
    matches: list[tuple[MultiMatch, StoredDoc, Unified]] = []
    own = not include_self and doc_id is None  # the own stored copy is to be found by its text
    more = copies.more
    for m in copies:
        doc = copies.docs.get(m.id)
        if m.comparison is None or doc is None or not doc.text:
            left_out.append((m.id, "a near-duplicate stored without its text, so nothing can be shown"))
            continue
        if own and doc.text == document.original:  # one of them: the others are exact copies
            left_out.append((m.id, "the same text as this document: its own stored copy"))
            own = False
            continue
        if limit is not None and len(matches) == limit:
            more += 1
            continue
        matches.append((m, doc, mapped(doc.text)))
    return _report(document, matches, exclusions, label, tuple(settings), left_out, more)


_ALL_EXCLUDED = "all it shares with this document is excluded"


def _report(document: Unified, matches: Sequence[tuple[MultiMatch, StoredDoc, Unified]], exclusions: Exclusions,
            label: str, settings: tuple[str, ...], left_out: list[tuple[str, str]], more: int) -> SimilarityReport:
    """The report from the judged copies: spans in original characters, exclusions, one source per character."""
    original = document.original
    n = len(original)
    ink = _ink(original)
    total = max(1, int(ink.sum()))
    excluded = excluded_spans(original, exclusions)
    excluded_mask = _mask(n, [(a, b) for a, b, _ in excluded])
    found: list[tuple[float, MultiMatch, StoredDoc, Unified, list[Span], list[Span]]] = []
    for m, doc, shown in matches:
        assert m.comparison is not None
        spans = _kept(original_spans(document, copied_spans(m.comparison, "a")), n, excluded_mask, ink,
                      exclusions.min_chars)
        if not spans:
            left_out.append((m.id, _ALL_EXCLUDED))
            continue
        source_ink = _ink(shown.original)
        source_spans = _kept(original_spans(shown, copied_spans(m.comparison, "b")), len(shown.original),
                             np.zeros(len(shown.original), dtype=bool), source_ink, exclusions.min_chars)
        found.append((int(ink[_mask(n, spans)].sum()) / total, m, doc, shown, spans, source_spans))
    found.sort(key=lambda f: (-f[0], f[1].id))
    sources: list[Source] = []
    owner = np.full(n, -1, dtype=np.int64)
    for k, (share, m, doc, shown, spans, source_spans) in enumerate(found):
        source_ink = _ink(shown.original)
        source_share = int(source_ink[_mask(len(shown.original), source_spans)].sum()) / max(1, int(source_ink.sum()))
        assert m.comparison is not None
        sources.append(Source(m.id, doc.title, m.kind, PALETTE[k % len(PALETTE)], m.distance, share, source_share,
                              tuple(spans), tuple(source_spans), shown, m.comparison))
        mine = _mask(n, spans) & (owner < 0)
        owner[mine] = k
    passages = [(s, e, int(owner[s])) for s, e in _owner_runs(owner)]
    share = int((ink & (owner >= 0)).sum()) / total
    return SimilarityReport(document, label, tuple(sources), tuple(passages), share, tuple(excluded), exclusions,
                            settings, tuple(left_out), more)


def _owner_runs(owner: np.ndarray) -> list[Span]:
    """``(start, end)`` of each run of one source (not -1) in ``owner``."""
    if not owner.size:
        return []
    cuts = np.flatnonzero(np.diff(owner)) + 1
    starts = np.concatenate(([0], cuts))
    ends = np.concatenate((cuts, [owner.size]))
    return [(int(s), int(e)) for s, e in zip(starts, ends) if owner[s] >= 0]
