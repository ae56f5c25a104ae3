"""What is known of a document's text beyond its characters: headings, block quotes, and the file as written.

A report breaks a document down by section and treats quoted text apart, so it needs
the headings and block quotes; for a Markdown file it also points into the file as the
author wrote it, while the text that is fingerprinted and shown has the markup taken out.
:class:`Layout` holds all three:

- :func:`markdown_text` parses Markdown with markdown-it-py (CommonMark, with tables and
  strikethrough) and keeps the text a reader sees: emphasis, link targets, heading and list
  marks, HTML and front matter go; entities and backslash escapes become the character they
  stand for. Each stretch of the text is found again in the file, in order, so every
  character maps to the characters it came from (an entity such as ``&amp;`` maps as one block).
- :func:`plain_layout` finds headings (``#`` lines, 第一章 and numbered headings, capitalised
  headings such as a man page's ``DESCRIPTION``) and ``>`` quoted lines in plain text.

Pure: strings in, text and spans out.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property

__all__ = ["Heading", "Layout", "markdown_text", "plain_layout"]

Span = tuple[int, int]
# (text start, text end, written start, written end, the file's own characters): character to character when they
# are, else a block (an entity, a line break written \r\n).
Piece = tuple[int, int, int, int, bool]


@dataclass(frozen=True)
class Heading:
    """A heading: ``text[start:end]`` (its words, no markup), ``level`` 1 for a chapter or title."""

    start: int
    end: int
    level: int


@dataclass(frozen=True, eq=False)
class Layout:
    """A document's headings and block quotes (spans of its text) and, for a text taken out of markup,
    where each piece of the text stands in the file as written.

    ``pieces`` cover the text in order, each ``(start, end, written start, written end, own)``: a piece of the
    file's ``own`` characters maps character to character, another as a block (an entity, a separator
    between table cells, a line break written ``\r\n``).
    Without ``written`` the text is the document as written.
    """

    headings: tuple[Heading, ...] = ()
    quotes: tuple[Span, ...] = ()
    written: str | None = None
    pieces: tuple[Piece, ...] = ()

    def written_span(self, start: int, end: int) -> Span:
        """The span of the file as written that ``text[start:end]`` came from (itself without ``written``)."""
        if self.written is None or not self.pieces:
            return start, end
        if end <= start:
            at = self._at(start)[0] if start < self.pieces[-1][1] else len(self.written)
            return at, at
        return self._at(start)[0], self._at(end - 1)[1]

    def _at(self, i: int) -> Span:
        k = bisect_right(self._starts, i) - 1
        s, e, ws, we, own = self.pieces[k]
        if own:
            return ws + i - s, ws + i - s + 1
        return ws, we

    @cached_property
    def _starts(self) -> list[int]:
        return [p[0] for p in self.pieces]


# --------------------------------------------------------------------------- Markdown

_LINE = re.compile(r"\r\n?|\n")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)
_FIELD = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*?)[ \t]*$", re.MULTILINE)


class _Builder:
    """The text and its pieces, built token by token, each found in ``source`` after the last one."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.out: list[str] = []
        self.length = 0
        self.pieces: list[Piece] = []
        self.cursor = 0  # in source: nothing before it is looked at again

    def take(self, text: str, bound: int) -> None:
        """``text`` as it stands in the source after the cursor (before ``bound``); what is not found there
        character for character maps as a block to where the cursor is."""
        if not text:
            return
        at = self.source.find(text, self.cursor, bound)
        if at >= 0:
            self._piece(text, at, at + len(text))
            return
        for ch in text:  # not in one stretch (a code span's line breaks read as spaces): character by character
            at = self.source.find(ch, self.cursor, bound)
            if at < 0:
                self._piece(ch, self.cursor, self.cursor)
            else:
                self._piece(ch, at, at + 1)

    def stand_for(self, text: str, markup: str, bound: int) -> None:
        """``text`` standing for ``markup`` (``&amp;`` for ``&``): the block where ``markup`` is."""
        at = self.source.find(markup, self.cursor, bound) if markup else -1
        if at < 0:
            self.take(text, bound)
        else:
            self._piece(text, at, at + len(markup), block=True)

    def separate(self, sep: str, bound: int) -> None:
        """Line breaks (or a space) between blocks: the source's own where it has them, else a block of the gap."""
        if not self.out:
            return
        for ch in sep:
            found = _LINE.search(self.source, self.cursor, bound) if ch == "\n" else None
            if found is not None:
                self._piece(ch, found.start(), found.end(), block=found.group() != "\n")
                continue
            at = self.source.find(ch, self.cursor, bound)
            if at >= 0:
                self._piece(ch, at, at + 1)
            else:
                self._piece(ch, self.cursor, max(self.cursor, bound), block=True)

    def _piece(self, text: str, ws: int, we: int, block: bool = False) -> None:
        start = self.length
        self.out.append(text)
        self.length += len(text)
        self.pieces.append((start, self.length, ws, we, not block and we - ws == len(text)))
        self.cursor = max(self.cursor, we)


def _front_matter(source: str) -> tuple[int, dict[str, str]]:
    """Where a YAML front matter block ends (0 without one) and its plain ``key: value`` fields."""
    found = _FRONT_MATTER.match(source[: 1 << 16])
    if found is None:
        return 0, {}
    fields = {k.lower(): v.strip("\"'") for k, v in _FIELD.findall(found.group(1)) if v.strip("\"'")}
    return found.end(), fields


def markdown_text(source: str) -> tuple[str, Layout, dict[str, str]]:
    """The text a reader sees in a Markdown document, its :class:`Layout` (pieces into ``source``), and the
    fields of its front matter (``title``, ``author``, ``date``, … as written; empty without one).

    Blocks are separated by a line break, or two where the source leaves a blank line between them;
    table cells by a space. Raw HTML, images' addresses and link targets are left out.
    """
    from markdown_it import MarkdownIt

    skip, fields = _front_matter(source)
    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    parser.disable("text_join")  # entities and escapes stay apart: they are mapped as blocks
    body = source[skip:]
    lines = [skip] + [skip + m.end() for m in _LINE.finditer(body)] + [len(source)]
    build = _Builder(source)
    build.cursor = skip
    headings: list[Heading] = []
    quotes: list[Span] = []
    depth = 0  # block quotes open
    quote_start: int | None = None
    heading_level = 0
    last_line = -1
    for t in parser.parse(body):
        if t.type in ("blockquote_open", "blockquote_close"):
            depth += 1 if t.type == "blockquote_open" else -1
            if depth == 0 and quote_start is not None:
                quotes.append((quote_start, build.length))
                quote_start = None
        elif t.type == "heading_open":
            heading_level = int(t.tag[1:])
        if t.type not in ("inline", "fence", "code_block") or t.map is None:
            continue
        first, stop = t.map
        start_at, bound = lines[min(first, len(lines) - 1)], lines[min(stop, len(lines) - 1)]
        same_line = first == last_line  # the cells of a table row
        build.separate(" " if same_line else "\n\n" if _blank_between(source, build.cursor, start_at) else "\n",
                       bound if same_line else start_at)
        build.cursor = max(build.cursor, start_at)
        begin = build.length
        if depth and quote_start is None:
            quote_start = begin
        if t.type == "inline":
            _inline(build, t.children or [], bound)
        else:
            build.take(t.content.rstrip("\n"), bound)
        if heading_level and t.type == "inline":
            headings.append(Heading(begin, build.length, heading_level))
            heading_level = 0
        last_line = first if t.type == "inline" else -1
    text = "".join(build.out)
    return text, Layout(tuple(headings), tuple(quotes), source, tuple(build.pieces)), fields


def _blank_between(source: str, start: int, end: int) -> bool:
    """Whether a blank line lies between two blocks (markup such as ``>`` or ``-`` aside)."""
    gap = source[start:end]
    return any(not line.strip(" \t>") for line in _LINE.split(gap)[1:-1])


def _inline(build: _Builder, children: Iterable[object], bound: int) -> None:
    for c in children:
        kind, content = getattr(c, "type", ""), getattr(c, "content", "")
        if kind in ("text", "code_inline"):
            build.take(content, bound)
        elif kind == "text_special":
            build.stand_for(content, getattr(c, "markup", ""), bound)
        elif kind in ("softbreak", "hardbreak"):
            build.separate("\n", bound)
        elif kind == "image":
            _inline(build, getattr(c, "children", None) or [], bound)


# --------------------------------------------------------------------------- plain text

# Headings of plain text: Markdown hashes; 第一章, 第3节; numbered (1., 1.2, 一、, （一）); capitalised words
# (NAME, DESCRIPTION 描述). Short, on a line of their own, not ending a sentence.
_PLAIN_HEADING = re.compile(
    r"^[ \t]*(?:(?P<hash>#{1,6})[ \t]+\S.*|"
    r"第[一二三四五六七八九十百千零〇\d]+[章节篇部回卷].{0,40}|"
    r"(?P<num>\d+(?:\.\d+)*)[.、)]?[ \t]*[^\d\s.,，。].{0,38}|[一二三四五六七八九十]+[、.．].{1,38}|"
    r"[（(][一二三四五六七八九十\d]+[)）].{1,38}|"
    r"[A-Z][A-Z0-9 &/-]{2,40}(?:[ \t]+[^\x00-\x7f].{0,20})?)[ \t]*$", re.MULTILINE)
_ENDS_SENTENCE = tuple("。！？；!?;，,：:")
_QUOTED_LINES = re.compile(r"(?:^[ \t]*>.*(?:\n|\Z))+", re.MULTILINE)


def plain_layout(text: str) -> Layout:
    """The headings and ``>`` quoted lines of a plain text (the text is the document as written)."""
    headings = []
    for m in _PLAIN_HEADING.finditer(text):
        line = m.group(0).strip()
        if line.endswith(_ENDS_SENTENCE) or len(line) > 48:
            continue
        if m.group("num") is not None and "." not in m.group("num") and not re.match(r"\s*\d+[.、)]", m.group(0)):
            continue  # "3 apples in a row" is not a heading; "3. Results" and "3.1 Results" are
        level = len(m.group("hash")) if m.group("hash") else 1 + m.group("num").count(".") if m.group("num") else 1
        start = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
        headings.append(Heading(start, m.start() + len(m.group(0).rstrip()), level))
    quotes = tuple((m.start(), m.end() - (m.group(0).endswith("\n"))) for m in _QUOTED_LINES.finditer(text))
    return Layout(tuple(headings), quotes)


_PARAGRAPH_END = re.compile(r"\n(?=[ \t]*(?:\n|\Z))")  # a line break before a blank line, or before the end
_INK = re.compile(r"\S")


def paragraphs(text: str) -> list[Span]:
    """The paragraphs of a text: stretches between blank lines, or its lines when it has no blank line.

    Each runs from its first non-space character to the line break before the next blank line (or the
    end). Found between those line breaks: one regular expression matching a whole paragraph keeps a
    frame for each of its characters (some 130 bytes: 94 MB for a text of 2 MB with no blank line).
    """
    return list(_paragraphs(text))


def _paragraphs(text: str) -> Iterable[Span]:
    """:func:`paragraphs` as they are found (a 5 MB text may have 50,000: its sections are made from them without
    a list of them beside)."""
    blocks = _blocks(text)
    first = list(itertools.islice(blocks, 2))
    if len(first) > 1 or not _inner_line_break(text):
        return itertools.chain(first, blocks)
    return ((m.start(), m.end()) for m in re.finditer(r"[^\n]*\S[^\n]*", text))


def _inner_line_break(text: str) -> bool:
    """``"\\n" in text.strip()``, without that copy of the text (7 MB of a 5 MB one)."""
    ink = _INK.search(text)
    if ink is None:
        return False
    end = len(text)
    while text[end - 1].isspace():  # stops at the last ink, at the latest at the first
        end -= 1
    return text.find("\n", ink.start(), end) >= 0


def _blocks(text: str) -> Iterator[Span]:
    """The stretches between blank lines, each from its first non-space character (:func:`paragraphs`)."""
    start = 0
    for stop in itertools.chain((m.start() for m in _PARAGRAPH_END.finditer(text)), (len(text),)):
        ink = _INK.search(text, start, stop)
        if ink is not None:
            yield ink.start(), stop
        start = stop


def sections(text: str, layout: Layout) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of the document's sections: from each top heading to the next (``kind``
    ``heading``; a stretch before the first is ``preface``), or its paragraphs when it has fewer than
    two headings (``paragraph``)."""
    if len(layout.headings) >= 2:
        levels = sorted({h.level for h in layout.headings})
        top = levels[0]
        title = sum(h.level == top for h in layout.headings) == 1 and len(levels) > 1  # one title above chapters
        starts = [h.start for h in layout.headings if h.level == (levels[1] if title else top)]
        out: list[tuple[int, int, str]] = []
        if text[: starts[0]].strip():
            out.append((0, starts[0], "preface"))
        bounds = [*starts, len(text)]
        out += [(a, b, "heading") for a, b in zip(bounds, bounds[1:])]
        return out
    return [(a, b, "paragraph") for a, b in _paragraphs(text)]
