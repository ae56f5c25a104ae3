"""The figures of a similarity report, counted in characters: the whole text, without quotations, the largest
share from one source, and each section.

They are the figures people who check copies for a living read (CNKI's 总文字复制比,
去除引用文献复制比, 单篇最大文字复制比 and 重复字数, a breakdown per chapter), counted from
per-character masks of the document: which characters are ink (not white space), copied from
each source, inside a quotation. Every share is a count of ink characters over the document's
ink. Pure numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..common import counts_before
from ..markup import Layout, sections
from ..opencc_tables import lookup
from ..text import space_table

__all__ = ["Figures", "Section", "count_figures", "count_sections", "ink", "mask", "runs"]

Span = tuple[int, int]


_INK_CHARS = 1 << 20
"""Characters of a text looked up at a time (:func:`ink`): its code points are 4 bytes each."""


def ink(text: str) -> np.ndarray:
    """Per character of ``text``: True unless white space (what shares count); looked up a piece at a time (a
    10 MB text's code points at once took 13 MB, and the table's values as many again)."""
    out = np.empty(len(text), dtype=bool)
    table = space_table()
    for start in range(0, len(text), _INK_CHARS):
        np.equal(lookup(table, text[start : start + _INK_CHARS]), 0, out=out[start : start + _INK_CHARS])
    return out


def mask(n: int, spans: Sequence[Span]) -> np.ndarray:
    """Per character of a text of ``n``: True inside one of ``spans``."""
    out = np.zeros(n, dtype=bool)
    for s, e in spans:
        out[s:e] = True
    return out


def runs(marked: np.ndarray) -> list[Span]:
    """``(start, end)`` of each run of True."""
    padded = np.zeros(marked.size + 2, dtype=bool)  # a byte a character (the int64 difference took 16)
    padded[1:-1] = marked
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist()))


@dataclass(frozen=True)
class Figures:
    """The report's figures, each a count of ink characters (white space not counted) and its share of ``chars``.

    Attributes
    ----------
    chars:
        The document's characters.
    copied, share:
        Copied from any source, quoted text included (总文字复制比; 重复字数).
    cited:
        Copied text inside quotation marks or block quotes (引用).
    copied_without_quotations, share_without_quotations:
        Copied text outside quotations (去除引用文献复制比).
    largest, largest_share, largest_source:
        The most copied from one source, and its id (单篇最大文字复制比); ``None`` without sources.
    common, common_share:
        Common text the document shares with its sources (text many stored documents hold, or an
        excluded file's), not copied: shown apart and never counted above.

    Shares are properties of the counts (over ``chars``), so the two cannot disagree.
    """

    chars: int
    copied: int
    cited: int
    largest: int
    largest_source: str | None
    common: int = 0

    @property
    def common_share(self) -> float:
        return self.common / max(1, self.chars)

    @property
    def share(self) -> float:
        return self.copied / max(1, self.chars)

    @property
    def copied_without_quotations(self) -> int:
        return self.copied - self.cited

    @property
    def share_without_quotations(self) -> float:
        return self.copied_without_quotations / max(1, self.chars)

    @property
    def largest_share(self) -> float:
        return self.largest / max(1, self.chars)

    def to_dict(self) -> dict[str, object]:
        return {"chars": self.chars, "copied": self.copied, "share": round(self.share, 4), "cited": self.cited,
                "copied_without_quotations": self.copied_without_quotations,
                "share_without_quotations": round(self.share_without_quotations, 4),
                "largest": self.largest, "largest_share": round(self.largest_share, 4),
                "largest_source": self.largest_source, "common": self.common,
                "common_share": round(self.common_share, 4)}


@dataclass(frozen=True, slots=True)  # no dict each: a 5 MB text without headings has some 30,000 (its lines)
class Section:
    """A section of the document (``text[start:end]``): ``kind`` ``heading`` (from a heading to the next),
    ``preface`` (before the first heading) or ``paragraph`` (a document without headings); ``title`` its
    heading, or its first words. ``chars``, ``copied`` and ``cited`` count its ink as :class:`Figures` does."""

    start: int
    end: int
    kind: str
    title: str
    chars: int
    copied: int
    cited: int

    @property
    def share(self) -> float:
        return self.copied / max(1, self.chars)

    def to_dict(self) -> dict[str, object]:
        return {"start": self.start, "end": self.end, "kind": self.kind, "title": self.title, "chars": self.chars,
                "copied": self.copied, "cited": self.cited, "share": round(self.share, 4)}


def count_figures(inked: np.ndarray, by_source: Sequence[np.ndarray], ids: Sequence[str],
                  quoted: np.ndarray, common: np.ndarray | None = None) -> Figures:
    """The figures from the document's ink, each source's counted characters, the quotations and the common text
    shared (masks)."""
    copied = np.zeros(inked.size, dtype=bool)
    largest, largest_source = 0, None
    for k, m in enumerate(by_source):
        copied |= m
        n = int((m & inked).sum())
        if n > largest:
            largest, largest_source = n, ids[k]
    copied &= inked
    shared = int((common & inked & ~copied).sum()) if common is not None else 0
    return Figures(int(inked.sum()), int(copied.sum()), int((copied & quoted).sum()), largest, largest_source, shared)


def _first_words(text: str, start: int, end: int, room: int = 40) -> str:
    """``text[start:end]``'s words joined by one space, cut to ``room`` characters (the last ``…``) when longer:
    read from a growing prefix, not the whole section (a paragraph of a long text without blank lines can be all
    of it, and its words made a list beside two copies). The words of a prefix begin those of the whole."""
    size = 4 * room
    while True:
        stop = min(end, start + size)
        words = " ".join(text[start:stop].split())
        if stop == end or len(words) > room:
            return words if len(words) <= room else words[: room - 1] + "…"
        size *= 4


def count_sections(text: str, layout: Layout, inked: np.ndarray, copied: np.ndarray,
                   quoted: np.ndarray) -> list[Section]:
    """Each section's figures (:func:`simdup_es.markup.sections`); those without ink are left out."""
    heads = {h.start: text[h.start : h.end] for h in layout.headings}
    found = list(sections(text, layout))
    bounds = np.array([at for start, end, _ in found for at in (start, end)], dtype=np.int64)
    # Read at the sections' bounds one mask at a time, a block of characters at a time (counts_before), and kept as
    # arrays: a 5 MB text has some 30,000 paragraphs, whose counts as lists of ints took 6 MB.
    ink, copied_ink, cited = (np.diff(counts_before(m, bounds))[0::2] for m in (inked, copied & inked,
                                                                             copied & inked & quoted))
    out = []
    for k, (start, end, kind) in enumerate(found):
        chars = int(ink[k])
        if not chars:
            continue
        title = heads.get(start) if kind == "heading" else None
        if title is None:
            title = _first_words(text, start, end)
        out.append(Section(start, end, kind, " ".join(title.split()), chars, int(copied_ink[k]), int(cited[k])))
    return out
