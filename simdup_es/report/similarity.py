"""A similarity report for one document against a store: how much of it is copied, and from where.

What people who check copies are used to: the share of the whole text copied, the share
without quotations, the largest share from one source, the copied characters beside every
share and a breakdown per section (:mod:`simdup_es.report.figures`); every source with its
own colour, shares and characters, its title, address, author and date where the store
holds them, the stored copies of one text as one source; the document in its own words with
each copied passage coloured by its source, and quoted text found in a source marked as cited
(:mod:`simdup_es.report.quotes`). :func:`report_from_copies` builds it after a search
(:meth:`simdup_es.service.Service.report` searches and builds it); :class:`SimilarityReport` holds
it (:meth:`~SimilarityReport.to_dict` for JSON); :func:`simdup_es.report.render_report_html` draws
it as one self-contained page.

Offsets are in characters of the document as given (for HTML, PDF, DOCX and Markdown files,
the extracted text; for Markdown the JSON adds the spans of the file as written): the comparison
runs on unified text and :func:`simdup_es.offsets.unify_mapped` maps it back. Shares count
the characters that are not white space. Each copied character of the document is coloured by
one source: the one that covers most of the document among those that copied it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..compare import CompareParams, Comparison
from ..commontext import COMMON_MIN, EXCLUDED
from ..errors import ConfigError
from ..extract import kind_of
from ..markup import Layout, plain_layout
from ..multilevel import Copies, MultiMatch, MultiParams
from ..offsets import Unified, unify_mapped
from ..store.base import StoredDoc
from ._common import Span, common_spans, copied_spans, original_spans, spans_dict
from .figures import Figures, Section, count_figures, count_sections, ink, mask, runs
from .quotes import Cited, QuotedCopies, quotation_spans

__all__ = ["PALETTE", "Exclusions", "Source", "SimilarityReport", "excluded_spans", "report_from_copies",
           "report_limit", "settings_in_words", "source_name", "text_key"]

log = logging.getLogger(__name__)

PALETTE = ("#f6c343", "#7ec8e3", "#f28b82", "#a8d5a2", "#c9a0dc", "#ffb870", "#9fb8f0", "#e6a4b4", "#b5d99c",
           "#d7c49e")
"""Background colours of the sources, in order (light enough to read black text on; a tenth source reuses the first)."""

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
        Quotations: text in quotation marks, 「」, 『』, “” and "" (within one paragraph), and block quotes, of at
        least :data:`~simdup_es.report.quotes.MIN_QUOTED` letters (a quoted term is no quotation).
    references:
        The references or bibliography section: from a line that is only such a heading
        (References, Bibliography, Works cited, 参考文献, …) to the end.
    min_chars:
        Copied passages shorter than this many characters (white space not counted).
    texts:
        The names of texts whose text never counts (``--exclude-file``: templates, base files).
    common:
        The common-text threshold, ``(count, share)`` as :class:`~simdup_es.multilevel.MultiParams` holds it
        (``common``, ``common_share``): text held by more stored documents is common, not counted. ``None``: no
        store was asked.
    """

    quotations: bool = False
    references: bool = False
    min_chars: int = 0
    texts: tuple[str, ...] = ()
    common: tuple[int | None, float] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.min_chars, bool) or not isinstance(self.min_chars, int) or self.min_chars < 0:
            raise ConfigError(f"min_chars must be a whole number of characters, 0 or more; got {self.min_chars!r}")

    def in_words(self) -> list[str]:
        """Each exclusion as a sentence for the report (one saying there are none)."""
        out = []
        if self.quotations:
            out.append("Quotations in 「」, 『』, “” and \"\", and block quotes, are not counted.")
        if self.references:
            out.append("The references or bibliography section is not counted.")
        if self.min_chars:
            out.append(f"Copied passages shorter than {self.min_chars} characters are not counted.")
        out += [f"The text of {name} does not count." for name in self.texts]
        if self.common is not None:
            count, share = self.common
            held = (f"{count} stored documents" if count is not None else
                    f"{100 * share:g}% of the stored documents (at least {COMMON_MIN})")
            out.append(f"Text held by more than {held} is common text, not counted.")
        return out or ["Nothing is excluded: quotations, references and short matches all count."]


def excluded_spans(text: str, exclusions: Exclusions, layout: Layout | None = None) -> list[tuple[int, int, str]]:
    """``(start, end, reason)`` of the parts of ``text`` the exclusions leave out (quotations, references)."""
    out: list[tuple[int, int, str]] = []
    if exclusions.quotations:
        out.extend((s, e, "quotation") for s, e in quotation_spans(text, layout))
    if exclusions.references:
        heading = _REFERENCES.search(text)
        if heading is not None:
            out.append((heading.start(), len(text), "references"))
    return sorted(out)


@dataclass(frozen=True, eq=False)
class Source:
    """A stored document the report found copied or quoted from.

    ``kind``: ``near-duplicate`` or ``partial`` (as the search judged it), or ``cited`` (found only
    through a quotation). ``chars``: the document's characters copied from it (white space aside,
    after the exclusions; other sources may share some), ``cited_chars`` those inside quotations;
    ``share_of_document`` is ``chars`` over the document's. ``source_chars`` of its own ``source_total``
    are found in the document (``share_of_source``). ``spans`` (``cited`` the quoted ones among them)
    and ``source_spans`` are the passages in original characters of the document and of the source.
    ``name`` is what the report calls it: its stored title, else its file name (an id that is a
    file's path) or its first line, as ``name_from`` says. ``meta``: the address, author and date the
    store holds. ``also_in``: stored documents with the same text, shown as this one.
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
    chars: int = 0
    cited_chars: int = 0
    source_chars: int = 0
    source_total: int = 0
    cited: tuple[Span, ...] = ()
    name: str = ""
    name_from: str = "title"
    meta: tuple[tuple[str, str], ...] = ()
    also_in: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "name": self.name, "name_from": self.name_from, **dict(self.meta),
                "kind": self.kind, "colour": self.colour, "distance": self.distance,
                "share_of_document": round(self.share_of_document, 4), "chars": self.chars,
                "cited_chars": self.cited_chars, "share_of_source": round(self.share_of_source, 4),
                "source_chars": self.source_chars, "source_total": self.source_total, "also_in": list(self.also_in),
                "spans": spans_dict(self.spans), "cited": spans_dict(self.cited),
                "source_spans": spans_dict(self.source_spans)}


@dataclass(frozen=True, eq=False)
class SimilarityReport:
    """One document against a store (see the module docstring).

    ``passages`` are ``(start, end, source index)``: the document's copied passages outside
    quotations, each character given to one source; ``citations`` the same inside quotations
    (quoted text found in a source); ``quotations`` every quotation's span. ``figures`` count them
    (``share`` is the share of the whole text), ``sections`` break them down. ``excluded`` are
    ``(start, end, reason)``; ``left_out`` names the sources not counted, with the reason. ``common``
    are ``(start, end, documents)``: common text the document shares with a source (text that many
    stored documents hold: at most ``documents`` of them; an excluded file's: ``None``), never counted.
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
    citations: tuple[tuple[int, int, int], ...] = ()
    quotations: tuple[Span, ...] = ()
    figures: Figures = Figures(0, 0, 0, 0, None)
    sections: tuple[Section, ...] = ()
    layout: Layout = field(default=Layout(), repr=False)
    common: tuple[tuple[int, int, int | None], ...] = ()

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
        common = f"; {100 * self.figures.common_share:.0f}% common text" if self.figures.common else ""
        return f"{100 * self.share:.0f}% of this document is copied, from {n} source{'s' if n != 1 else ''}{common}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the headline figures, the sources, the passages, the sections and the settings,
        offsets in characters of the document as given (and, for a Markdown file, ``in_file``: the span of the
        file as written)."""
        ids = [s.id for s in self.sources]
        where = self.layout.written_span if self.layout.written is not None else None

        def span(a: int, b: int, **more: Any) -> dict[str, Any]:
            return {"start": a, "end": b, **more, **({"in_file": list(where(a, b))} if where else {})}

        return {"document": {"label": self.label, "chars": len(self.document.original)},
                "share": round(self.share, 4), "headline": self.headline, "figures": self.figures.to_dict(),
                "sources": [s.to_dict() for s in self.sources],
                "passages": [span(a, b, source=ids[k]) for a, b, k in self.passages],
                "citations": [span(a, b, source=ids[k]) for a, b, k in self.citations],
                "quotations": [span(a, b) for a, b in self.quotations],
                "sections": [{**s.to_dict(), **span(s.start, s.end)} for s in self.sections],
                "excluded": [span(a, b, reason=r) for a, b, r in self.excluded],
                "common": [span(a, b, documents=n) for a, b, n in self.common],
                "exclusions": self.exclusions.in_words(), "settings": list(self.settings),
                "left_out": [{"id": i, "reason": r} for i, r in self.left_out], "more": self.more}


def settings_in_words(params: CompareParams, multi: MultiParams) -> list[str]:
    """How sources are found and judged, in sentences (the comparison's own, then the kinds)."""
    from .html import settings_in_words as comparison_words

    partial = (f"when at least {100 * multi.partial_threshold:.0f}% of either text is copied, or a long passage is"
               if multi.partial_threshold else "when any passage is copied that few stored documents hold")
    return [*comparison_words(params),
            f"A source is a near-duplicate when its fingerprint differs from the document's in at most {multi.k} of "
            f"64 bits, or when most of both texts are copied; a partial copy {partial}. Quotations are also looked "
            "up on their own: a source one is found in is cited."]


def report_limit(limit: int, doc_id: str | None, include_self: bool, excluded: int = 0) -> int:
    """How many copies to ask the search for, for a report of at most ``limit`` sources: one more when the
    document's own stored copy is found by its text (no id), which :func:`report_from_copies` leaves out, and
    one more for each source to exclude."""
    return limit + excluded + (1 if doc_id is None and not include_self else 0)


def report_from_copies(text: str, copies: Copies, *, doc_id: str | None = None, label: str = "this document",
                       exclusions: Exclusions = Exclusions(), include_self: bool = False, settings: Sequence[str] = (),
                       limit: int | None = None, mapped: Callable[[str], Unified] = unify_mapped,
                       quoted: QuotedCopies | None = None, exclude_sources: Collection[str] = (),
                       layout: Layout | None = None) -> SimilarityReport:
    """The report from a search already made: ``copies`` of ``text`` (:func:`simdup_es.search.find_copies`,
    made with ``exclude_id=doc_id`` unless ``include_self``, and :func:`report_limit`), with the stored documents
    they name, and what its quotations' lookup found (:func:`~simdup_es.report.quotes.find_quoted`; ``None``:
    none was made); at most ``limit`` sources.

    ``doc_id`` is the document's id in the store (its stored copy is left out and named, unless
    ``include_self``; without an id, one source with the very same text is); ``settings`` are the
    sentences saying how copies were judged (:func:`settings_in_words`); ``mapped`` maps a stored text
    (from a cache, as a service keeps them); ``exclude_sources`` are ids not to count (named as left out);
    ``layout`` the document's headings, block quotes and file as written when a parser knows them (a
    Markdown file's :class:`~simdup_es.markup.Layout`; by default found in the text,
    :func:`~simdup_es.markup.plain_layout`).
    """
    document = unify_mapped(text, copies.unified)
    left_out: list[tuple[str, str]] = []
    if doc_id is not None and not include_self:
        left_out.append((doc_id, "this document's own stored copy"))
    excluded = set(exclude_sources)
    cited = dict(quoted.cited) if quoted else {}
    left_out += [(i, "excluded on request") for i in dict.fromkeys(exclude_sources)
                 if any(m.id == i for m in copies) or i in cited]
    own = not include_self and doc_id is None  # the own stored copy is to be found by its text
    matches: list[tuple[MultiMatch, StoredDoc, Unified]] = []
    more = copies.more
    for m in copies:
        doc = copies.docs.get(m.id)
        if m.id in excluded:
            continue
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
    cited = {i: c for i, c in cited.items() if i not in excluded and i != doc_id}
    assembly = _Assembly(document, layout or plain_layout(text), exclusions, left_out, mapped)
    return assembly.report(matches, cited, label, tuple(settings), more, limit)


_ALL_EXCLUDED = "all it shares with this document is excluded"


_COLLAPSE = re.compile(r"[\W_]+")


def text_key(unified: str) -> str:
    """What two stored texts share when they are one text: their unified words (``unified``, the unified text),
    punctuation and spacing aside (a file and its copy with ASCII punctuation)."""
    return _COLLAPSE.sub("", unified)


def source_name(doc_id: str, title: str | None, text: str) -> tuple[str, str]:
    """What a report calls a source, and where that came from: its ``title``; else the file name its id names (a
    document file's id is its path); else its first line (cut at 80 characters)."""
    if title and title.strip():
        return " ".join(title.split()), "title"
    base = doc_id.rsplit("/", 1)[-1]
    if kind_of(base) is not None:
        return base, "file name"
    line = next((line.strip() for line in text.splitlines() if line.strip()), doc_id)
    return (line if len(line) <= 80 else line[:79] + "…"), "first line"


@dataclass
class _Found:
    """A source on its way into the report: its match (``None``: found only through quotations), stored
    document, map, comparison, and masks of its passages in the document and in itself."""

    id: str
    match: MultiMatch | None
    doc: StoredDoc
    shown: Unified
    comparison: Comparison
    in_document: np.ndarray
    in_source: np.ndarray
    also_in: list[str] = field(default_factory=list)


class _Assembly:
    """The report's spans, masks and figures for one document (what :func:`report_from_copies` does after
    choosing the sources to show)."""

    def __init__(self, document: Unified, layout: Layout, exclusions: Exclusions, left_out: list[tuple[str, str]],
                 mapped: Callable[[str], Unified]) -> None:
        self.document, self.layout, self.exclusions, self.left_out = document, layout, exclusions, left_out
        self.mapped = mapped
        original = document.original
        self.n = len(original)
        self.inked = ink(original)
        self.excluded = excluded_spans(original, exclusions, layout)
        self.excluded_mask = mask(self.n, [(a, b) for a, b, _ in self.excluded])
        self.quotations = quotation_spans(original, layout)
        self.quoted = mask(self.n, self.quotations)
        self.common: dict[Span, int | None] = {}  # common text shared with a source: the most documents holding it

    def _kept(self, spans: Sequence[Span], n: int, inked: np.ndarray, excluded: np.ndarray | None) -> np.ndarray:
        """The mask of ``spans`` without excluded characters, passages left shorter than ``min_chars`` dropped."""
        marked = mask(n, spans)
        if excluded is not None:
            marked &= ~excluded
        least = max(1, self.exclusions.min_chars)
        for s, e in runs(marked):
            if int(inked[s:e].sum()) < least:
                marked[s:e] = False
        return marked

    def _found(self, matches: Sequence[tuple[MultiMatch, StoredDoc, Unified]],
               cited: Mapping[str, Cited]) -> list[_Found]:
        """Every source with counted text (found by the search, or by quotations only), the stored copies of one
        text joined into one."""
        shown_ids = {m.id for m, _, _ in matches}
        only_quoted = [(None, c.doc, self.mapped(c.doc.text or "")) for i, c in cited.items()
                       if c.comparison is not None and i not in shown_ids]
        out: list[_Found] = []
        for m, doc, shown in [*matches, *only_quoted]:
            quoted = cited.get(doc.id)
            comparison = m.comparison if m is not None else quoted.comparison if quoted is not None else None
            assert comparison is not None
            spans = original_spans(self.document, copied_spans(comparison, "a")) if m is not None else []
            source_spans = original_spans(shown, copied_spans(comparison, "b")) if m is not None else []
            if quoted is not None:
                spans, source_spans = [*spans, *quoted.spans], [*source_spans, *quoted.source_spans]
            common = self._common(m) if m is not None else np.zeros(self.n, dtype=bool)
            in_document = self._kept(spans, self.n, self.inked, self.excluded_mask | common)
            if not in_document.any():
                self.left_out.append((doc.id, _ALL_EXCLUDED))
                continue
            in_source = self._kept(source_spans, len(shown.original), ink(shown.original), _source_common(m, shown))
            out.append(_Found(doc.id, m, doc, shown, comparison, in_document, in_source))
        return _collapsed(out, self.inked)

    def _common(self, m: MultiMatch) -> np.ndarray:
        """The mask of the common text the document shares with ``m``'s source (kept with its counts)."""
        out = np.zeros(self.n, dtype=bool)
        if m.comparison is None:
            return out
        for start, end, documents in common_spans(m.comparison, "a", m.held_query):
            for span in original_spans(self.document, [(start, end)]):
                known = self.common.get(span, 0)
                self.common[span] = None if documents >= EXCLUDED or known is None else max(known, documents)
                out[span[0] : span[1]] = True
        return out

    def report(self, matches: Sequence[tuple[MultiMatch, StoredDoc, Unified]],
               cited: Mapping[str, Cited], label: str,
               settings: tuple[str, ...], more: int, limit: int | None) -> SimilarityReport:
        found = self._found(matches, cited)
        if limit is not None and len(found) > limit:
            more += len(found) - limit
            found = found[:limit]
        total = max(1, int(self.inked.sum()))
        # a source's index per character of the document, in 2 bytes when the sources allow (a 5 MB text has 1.7
        # million characters)
        owner: np.ndarray = np.full(self.n, -1, dtype=np.int16 if len(found) < 2**15 else np.int32)
        sources = []
        for k, f in enumerate(found):
            mine = f.in_document & (owner < 0)
            owner[mine] = k
            chars = int((f.in_document & self.inked).sum())
            source_ink = ink(f.shown.original)
            source_total = int(source_ink.sum())
            source_chars = int((source_ink & f.in_source).sum())
            name, name_from = source_name(f.id, f.doc.title, f.doc.text or "")
            sources.append(Source(
                f.id, f.doc.title, f.match.kind if f.match is not None else "cited", PALETTE[k % len(PALETTE)],
                f.match.distance if f.match is not None else None, chars / total, source_chars / max(1, source_total),
                tuple(runs(f.in_document)), tuple(runs(f.in_source)), f.shown, f.comparison, chars,
                int((f.in_document & self.inked & self.quoted).sum()), source_chars, source_total,
                tuple(runs(f.in_document & self.quoted)), name, name_from, f.doc.meta, tuple(f.also_in)))
        copied = owner >= 0
        shared = [(a, b, n) for (a, b), n in sorted(self.common.items()) if not copied[a:b].all()]
        common = mask(self.n, [(a, b) for a, b, _ in shared]) & ~self.excluded_mask
        figures = count_figures(self.inked, [f.in_document for f in found], [f.id for f in found], self.quoted, common)
        sections = count_sections(self.document.original, self.layout, self.inked, copied, self.quoted)
        passages = [(s, e, int(owner[s])) for s, e in _owner_runs(np.where(self.quoted, -1, owner))]
        citations = [(s, e, int(owner[s])) for s, e in _owner_runs(np.where(self.quoted, owner, -1))]
        return SimilarityReport(self.document, label, tuple(sources), tuple(passages), figures.share,
                                tuple(self.excluded), self.exclusions, settings, tuple(self.left_out), more,
                                tuple(citations), tuple(self.quotations), figures, tuple(sections), self.layout,
                                tuple(shared))


def _source_common(m: MultiMatch | None, shown: Unified) -> np.ndarray | None:
    """The mask of the common text (and an excluded text's) a source shares with the document: out of what the
    source counts as found in the document (``source_chars``), as it is out of the document's copied text."""
    if m is None or m.comparison is None or not m.held_match:
        return None
    return mask(len(shown.original), original_spans(shown, [(a, b) for a, b, _ in common_spans(m.comparison, "b",
                                                                                                m.held_match)]))


def _collapsed(found: list[_Found], inked: np.ndarray) -> list[_Found]:
    """``found`` ordered by the document's characters copied from each (most first, then titled ones, then by id),
    the stored copies of one text (:func:`text_key`) joined into the first of them, which names the others
    (``also_in``)."""
    found.sort(key=lambda f: (-int((f.in_document & inked).sum()), not f.doc.title, f.id))
    first: dict[str, _Found] = {}
    out = []
    for f in found:
        key = text_key(f.shown.text)
        into = first.get(key)
        if into is None:
            first[key] = f
            out.append(f)
        else:
            into.also_in.append(f.id)
            into.in_document |= f.in_document
    return out


def _owner_runs(owner: np.ndarray) -> list[Span]:
    """``(start, end)`` of each run of one source (not -1) in ``owner``."""
    if not owner.size:
        return []
    cuts = np.flatnonzero(owner[1:] != owner[:-1]) + 1  # a byte a character, not a difference of each
    starts = np.concatenate(([0], cuts))
    ends = np.concatenate((cuts, [owner.size]))
    return [(int(s), int(e)) for s, e in zip(starts, ends) if owner[s] >= 0]
