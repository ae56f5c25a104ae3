"""Sentences and units of unified text.

Every length in the comparison matrix is counted in units: a CJK character, or a Latin word
or number (``don't``, ``3.14`` and ``example.com`` are one unit each); punctuation and
whitespace are none. A sentence ends at a line break or after terminators (``。！？；…``,
``! ? ;``, a full stop unless a letter or digit follows or an abbreviation, initial or
dotted acronym precedes it) with the closing quotes after them. Fragments under
``min_units`` units are merged into a neighbour, never dropped, so every unit of a text is
in some sentence and document similarity keeps an honest denominator. The rules in full,
with examples: docs/design.md, "Units and sentences".
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple, cast, overload

import numpy as np

from .errors import ConfigError

__all__ = [
    "DEFAULT_MIN_UNITS",
    "Sentence",
    "SentenceTable",
    "SentenceView",
    "UnitPoints",
    "WordCodes",
    "scan",
    "scan_bytes",
    "split_sentences",
    "split_sentences_coded",
    "split_sentences_points",
    "split_table",
    "split_table_units",
    "unit_points",
    "unit_spans",
    "units",
    "unwrap_lines",
]

DEFAULT_MIN_UNITS = 4

# Scripts counted one character per unit (inclusive code point ranges). Kana and
# Hangul syllables are counted like Han so Japanese and Korean text degrades
# gracefully instead of becoming one giant "word" per run.
_CJK_RANGES = (
    (0x3040, 0x30FF),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0x20000, 0x3134F),
)
_CJK = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES)
_IS_CJK = np.zeros(0x110000, dtype=bool)  # the same set, looked up by code point
for _lo, _hi in _CJK_RANGES:
    _IS_CJK[_lo : _hi + 1] = True
_WORD = rf"[^\W_{_CJK}]"
UNIT_PATTERN = re.compile(rf"[{_CJK}]|{_WORD}+(?:['’.]{_WORD}+)*")

# Coded units (see split_sentences_coded): multi-character units get code points
# of the private-use planes 15 and 16, which no unit can be (they are not letters).
WORD_BASE = 0xF0000
_WORD_FIRST = chr(WORD_BASE)
_WORD_CODES = 0x110000 - WORD_BASE

_BREAKS = "\n\r\u2028\u2029"
_TERMINATORS = "。！？；!?;…．."
_CLOSING = "”’\"'」』》〉）)\\]】〕}"  # closing quotes and brackets kept with the terminators before them
_SEGMENT = re.compile(
    rf"([^{_BREAKS}{_TERMINATORS}]*)"  # body
    rf"(?:([{_TERMINATORS}]+)([{_CLOSING}]*)([^\S{_BREAKS}]*)([{_BREAKS}]?)"  # run, closing, spaces, break
    rf"|([{_BREAKS}])|\Z)"  # or a line break, or the end
)
_DOTS_ONLY = re.compile(r"[.．]+")
_ALNUM_NOT_CJK = re.compile(_WORD)
_NOT_CJK = re.compile(rf"[^{_CJK}]+")
_WORD_BEFORE = re.compile(rf"(?:{_WORD}+\.)*{_WORD}+$")
_WORD_REVERSED = re.compile(rf"{_WORD}+(?:\.{_WORD}+)*")  # _WORD_BEFORE, read backwards
# A single letter or dotted single letters: initials and acronyms (j, u.s, p.m).
_INITIALS = re.compile(r"(?:[^\W\d_]\.)*[^\W\d_]$")

# Abbreviations whose full stop does not end a sentence (case-folded, without the
# final dot). Deliberately short: a missed boundary only makes a sentence longer,
# a false one splits a sentence into fragments that match poorly.
ABBREVIATIONS = frozenset(
    {
        *("e.g", "i.e", "cf", "vs", "al", "approx", "ca", "resp", "eq", "eqs", "fig", "figs", "nos", "vol", "pp"),
        *("mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "eds", "dept", "inc", "ltd", "corp"),
        *("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"),
    }
)


def units(text: str) -> list[str]:
    """The units of ``text`` in order (see the module docstring).

    >>> units("用 Python 3.12 写的, e.g. this.")
    ['用', 'python', '3.12', '写', '的', 'e.g', 'this']

    Latin words are case-folded here too, so units of text that skipped
    unification still compare case-insensitively. This is the plain reference
    of what :func:`split_sentences` finds with numpy.
    """
    if _ALNUM_NOT_CJK.search(text) is None:
        # Fast path for text without Latin letters or digits (most Chinese
        # sentences): every unit is one CJK character, so delete the rest.
        return list(_NOT_CJK.sub("", text))
    return [u.casefold() for u in UNIT_PATTERN.findall(text)]


def unit_spans(text: str) -> list[tuple[int, int]]:
    """Character ``(start, end)`` of every unit of ``text``, in the order of :func:`units`."""
    return [m.span() for m in UNIT_PATTERN.finditer(text)]


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of a text.

    Attributes
    ----------
    index:
        Position in the text's sentence list (0-based).
    start, end:
        Character offsets into the text that was split: ``text[start:end]`` is the
        sentence, from its first to its last non-space character, terminator and
        closing quotes included.
    text:
        ``text[start:end]``.
    n_units:
        Its number of units, ``Num(d)``.
    """

    index: int
    start: int
    end: int
    text: str
    n_units: int

    @property
    def units(self) -> tuple[str, ...]:
        """Its units (see :func:`units`), computed on each access."""
        return tuple(units(self.text))


_SENTENCE_SLOTS = tuple(getattr(Sentence, field.name).__set__ for field in dataclasses.fields(Sentence))


def _is_boundary(text: str, run_start: int, run_end: int) -> bool:
    """Whether a run of dots ends a sentence (other terminators always do)."""
    # Letters or digits right after the dots mean a decimal point, a version, a
    # host name or an abbreviation.
    if run_end < len(text) and _ALNUM_NOT_CJK.match(text, run_end):
        return False
    return run_end - run_start != 1 or not _abbreviation_before(text, run_start)


def _abbreviation_before(text: str, dot: int) -> bool:
    """Whether the word before the full stop at ``dot`` is an abbreviation, an initial or an acronym.

    :func:`simdup_es.reference.abbreviation_before_reference` without searching: the word is the longest
    run of letters and digits joined by single dots that ends right before ``dot``
    (or before a line break there, where ``$`` matches too), so one match on the
    last 40 characters reversed finds it.
    """
    end = dot - 1 if dot and text[dot - 1] == "\n" else dot
    found = _WORD_REVERSED.match(text[max(0, dot - 40) : end][::-1])
    if found is None:
        return False
    word = found.group()[::-1].casefold()
    return word in ABBREVIATIONS or _INITIALS.match(word) is not None


def _raw_pieces(text: str) -> list[tuple[int, int, bool]]:
    """``(start, end, starts_line)`` of every piece between boundaries, spaces trimmed."""
    out: list[tuple[int, int, bool]] = []
    size = len(text)
    pos = 0  # where the next segment starts
    start = 0  # where the current piece starts (a piece may span dots that are no boundary)
    line_start = True
    # One regex pass; each match is a segment: text up to a terminator run (with its
    # closing quotes, the spaces after it and a line break after those) or up to a
    # line break. findall builds the groups in C: this runs for every document compared.
    for body, run, close, space, run_break, line_break in _SEGMENT.findall(text):
        run_start = pos + len(body)
        if run:
            run_end = run_start + len(run)
            pos = run_end + len(close) + len(space) + len(run_break)
            dots = run[-1] in ".．" and _DOTS_ONLY.fullmatch(run) is not None
            if dots and not run_break and not _is_boundary(text, run_start, run_end):
                continue
            cut, is_break = run_end + len(close), bool(run_break)
        else:
            cut, is_break = run_start, bool(line_break)
            pos = run_start + len(line_break)
        if cut > start and not text[start].isspace() and not text[cut - 1].isspace():
            out.append((start, cut, line_start))  # nothing to trim (most pieces)
        else:
            piece = text[start:cut]
            body = piece.strip()
            if body:
                begin = start + len(piece) - len(piece.lstrip())
                out.append((begin, begin + len(body), line_start))
        start = pos
        line_start = is_break
        if pos >= size:
            break
    return out


class WordCodes(dict[str, str]):
    """Code points standing for multi-character units, new ones numbered in turn.

    ``codes[word]`` gives the word's code point, handing out the next free one
    of the private-use planes 15 and 16 to a word not seen before. Share one
    table between texts compared with each other. Raises :class:`OverflowError`
    past the 131,072 private-use code points.
    """

    def __missing__(self, word: str) -> str:
        if len(self) >= _WORD_CODES:
            raise OverflowError(f"more than {_WORD_CODES} distinct words to code")
        code = self[word] = chr(WORD_BASE + len(self))
        return code


@lru_cache(maxsize=1)
def _bmp_word_chars() -> np.ndarray:
    """Which code points below 0x10000 are letters or digits of Latin units (``_WORD``).

    Found by the regular expression itself, once (about 10 ms), so the numpy
    scan below agrees with :func:`units` by construction.
    """
    table = np.zeros(0x10000, dtype=bool)
    table[[m.start() for m in _ALNUM_NOT_CJK.finditer("".join(map(chr, range(0x10000))))]] = True
    return table


class _Chars(NamedTuple):
    """Where the units of a text are (:func:`_chars`)."""

    points: np.ndarray  # the text's code points
    starts: np.ndarray  # offset of each unit
    word_starts: np.ndarray  # offsets of the Latin units (words and numbers)
    word_ends: np.ndarray
    word: np.ndarray  # whether each character is a letter or digit of a Latin unit (matches _WORD)


def _joined(texts: Sequence[str]) -> str:
    """``"\\n".join(texts)``, but one text as it is (``join`` copies a ``str`` subclass such as a unified text: 7 MB
    for 10 MB of Chinese)."""
    return texts[0] if len(texts) == 1 else "\n".join(texts)


def _points(text: str) -> np.ndarray:
    """The code points of ``text`` (lone surrogates included)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _chars(text: str) -> _Chars:
    """The units of ``text`` (those of :func:`units`), found with numpy rather than a
    regular expression (which costs about 15 ns per character even where nothing matches).

    A unit never spans a line break, so texts joined by ``"\\n"`` are scanned at once
    and each keeps its own units.
    """
    points = _points(text)
    # take, not indexing: twice as fast; clipped, every code point beyond 0xFFFF reads 0xFFFF (no letter).
    unit_start = _IS_CJK.take(points)
    word = _bmp_word_chars().take(points, mode="clip")
    if len(points) and int(points.max()) > 0xFFFF:  # characters beyond 0xFFFF
        for k in np.flatnonzero(points > 0xFFFF).tolist():
            word[k] = _ALNUM_NOT_CJK.match(text, k) is not None
    if word.any():
        # A Latin unit is a run of letters and digits, where one ' ’ or . between two
        # of them joins them (don't, 3.14, e.g).
        inner = points[1:-1]
        joined = np.concatenate(([False], word, [False]))
        joined[2:-2] |= word[:-2] & word[2:] & ((inner == 0x27) | (inner == 0x2E) | (inner == 0x2019))
        edges = np.flatnonzero(joined[1:] != joined[:-1])
        word_starts, word_ends = edges[0::2], edges[1::2]
        unit_start[word_starts] = True
    else:
        word_starts = word_ends = np.zeros(0, dtype=np.int64)
    return _Chars(points, np.flatnonzero(unit_start), word_starts, word_ends, word)


# Character kinds the sentence scan tells apart (_kinds), as bits.
_TERM, _DOT, _BREAK, _CLOSE, _SPACE, _WHITE, _DIGIT = 1, 2, 4, 8, 16, 32, 64


@lru_cache(maxsize=1)
def _kinds() -> np.ndarray:
    """The kind bits of every code point below 0x10000 (none above has any).

    Found by the character classes of :data:`_SEGMENT` themselves, so the numpy scan
    of :func:`_pieces_many` agrees with :func:`_raw_pieces` by construction; ``_WHITE``
    is what ``str.strip`` removes (``\\s``: ``str.isspace``), line breaks included.
    """
    every = "".join(map(chr, range(0x10000)))
    table = np.zeros(0x10000, dtype=np.uint8)
    for kind, pattern in (
        (_TERM, rf"[{_TERMINATORS}]"), (_DOT, r"[.．]"), (_BREAK, rf"[{_BREAKS}]"), (_CLOSE, rf"[{_CLOSING}]"),
        (_SPACE, rf"[^\S{_BREAKS}]"), (_WHITE, r"\s"), (_DIGIT, r"\d"),
    ):
        table[[m.start() for m in re.finditer(pattern, every)]] |= kind
    table[table & _DOT > 0] &= ~np.uint8(_TERM)
    return table


def _runs(at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Starts and ends of the runs of consecutive offsets in ``at`` (ascending), and where each starts in ``at``."""
    first = np.flatnonzero(np.diff(at, prepend=-2) != 1)
    last = np.append(first[1:], len(at)) - 1
    return at[first], at[last] + 1 if len(at) else at, first


def _skip(at: np.ndarray, kinds: np.ndarray, kind: int, back: bool = False) -> np.ndarray:
    """For each offset in ``at``, the end of the run of characters of ``kind`` starting there
    (``back``: the start of the run ending there); the offset itself if none.

    A step at a time while few runs go on (they are a character or two long), then by the runs
    of them all (one pass over the text): no text makes it quadratic.
    """
    step, look = (-1, -1) if back else (1, 0)
    end = at.copy()
    moving = np.flatnonzero(kinds[at + look] & kind > 0)
    for _ in range(4):
        if not len(moving):
            return end
        end[moving] += step
        moving = moving[kinds[end[moving] + look] & kind > 0]
    if len(moving):
        starts, ends, _ = _runs(np.flatnonzero(kinds & kind > 0))
        inside = end[moving] + look  # a character of kind: the run it is in
        if back:
            end[moving] = starts[np.searchsorted(starts, inside, side="right") - 1]
        else:
            end[moving] = ends[np.searchsorted(ends, inside, side="right")]
    return end


def _pieces_many(texts: Sequence[str], chars: _Chars, base: np.ndarray) -> tuple[np.ndarray, ...]:
    """:func:`_raw_pieces` of each of ``texts`` at once, with numpy: ``begin, end, starts_line, text``
    of every piece, offsets into the texts joined by line breaks (``chars``; text ``i`` starts at ``base[i]``).

    Boundaries are the runs of terminators (with their closing quotes; the spaces and one line
    break after them skipped) and the other line breaks. Only a single full stop with no letter or
    digit right after it needs the abbreviation check, done on its own text by :func:`_abbreviation_before`.
    """
    points = chars.points
    n = len(points)
    kinds = np.empty(n + 1, dtype=np.uint8)
    _kinds().take(points, mode="clip", out=kinds[:n])  # none beyond 0xFFFF: 0xFFFF has none
    kinds[n] = _BREAK  # the end of the last text, like the line breaks joining the others
    terminators = np.flatnonzero(kinds & (_TERM | _DOT) > 0)
    run_start, run_end, run_first = _runs(terminators)
    close_end = _skip(run_end, kinds, _CLOSE)
    space_end = _skip(close_end, kinds, _SPACE)
    after_break = kinds[space_end] & _BREAK > 0
    # A run of dots alone, with no line break after it, ends no sentence where a letter or digit
    # follows (3.14, example.com), nor as a single dot after an abbreviation, initial or acronym.
    boundary = after_break.copy()
    if len(run_start):  # a run with a terminator other than a dot
        boundary |= np.logical_or.reduceat(kinds[terminators] & _TERM > 0, run_first)
    dots = np.flatnonzero(~boundary)
    if len(dots):
        word = np.append(chars.word, False)
        dots = dots[~word[run_end[dots]]]
        single = run_end[dots] - run_start[dots] == 1
        # The word before a single dot is no abbreviation or initial if it ends in a digit or is no word.
        before = run_start[dots] - 1
        letter = word[before] & (kinds[before] & _DIGIT == 0) | (points[before] == 0x0A)
        boundary[dots[~single | ~letter | (before < 0)]] = True
        dots = dots[single & letter & (before >= 0)]
        single_dots = run_start[dots].tolist()
        owner = (np.searchsorted(base, single_dots, side="right") - 1).tolist()
        boundary[dots] = [
            not _abbreviation_before(texts[i], at - at0) for at, i, at0 in zip(single_dots, owner, base[owner].tolist())
        ]
    # Each boundary: where the piece before it ends, where the next one starts, and whether
    # that one starts a line. Line breaks not taken by a terminator run are boundaries of their own.
    breaks = np.flatnonzero(kinds & _BREAK > 0)
    taken = space_end[after_break]
    if len(taken):
        breaks = breaks[taken[np.minimum(np.searchsorted(taken, breaks), len(taken) - 1)] != breaks]
    cut = np.concatenate((close_end[boundary], breaks))
    order = np.argsort(cut, kind="stable")
    cut = cut[order]
    resume = np.concatenate(([0], np.concatenate((space_end[boundary] + after_break[boundary], breaks + 1))[order]))
    line = np.concatenate(([True], np.concatenate((after_break[boundary], np.ones(len(breaks), dtype=bool)))[order]))
    # Each piece runs from the boundary before it to its own, spaces trimmed.
    begin = np.minimum(_skip(resume[:-1], kinds, _WHITE), cut)
    keep = np.flatnonzero(begin < cut)
    begin, end = begin[keep], _skip(cut[keep], kinds, _WHITE, back=True)
    return begin, end, line[keep], np.searchsorted(base, begin, side="right") - 1


def _merged(pieces: list[tuple[int, int, bool]], bounds: list[int], min_units: int) -> list[tuple[int, int, int, int]]:
    """The sentences of a text's pieces (:func:`_raw_pieces`), short fragments merged into a neighbour.

    ``bounds`` holds the first and stop unit of each piece in turn. Each sentence:
    ``(start, end, first unit, stop unit)``.
    """
    merged: list[tuple[int, int, int, int]] = []
    pending: tuple[int, int, int, int] | None = None  # a line-initial fragment waiting for the next sentence
    for (start, end, line_start), u0, u1 in zip(pieces, bounds[0::2], bounds[1::2], strict=True):
        if pending is not None:
            start, u0 = pending[0], pending[2]
            line_start = True
            pending = None
        if u1 - u0 >= min_units:
            merged.append((start, end, u0, u1))
        elif line_start or not merged:
            pending = (start, end, u0, u1)
        else:
            merged[-1] = (merged[-1][0], end, merged[-1][2], u1)
    if pending is not None:
        if merged:
            merged[-1] = (merged[-1][0], pending[1], merged[-1][2], pending[3])
        else:
            merged.append(pending)
    if merged and merged[0][2] == merged[0][3]:
        merged = []  # the whole text is punctuation (only then can a sentence have no unit)
    return merged


def _merged_many(
    pieces: tuple[np.ndarray, ...], first_unit: np.ndarray, stop_unit: np.ndarray, min_units: int
) -> tuple[np.ndarray, ...]:
    """The sentences of the pieces of a batch of texts (:func:`_pieces_many`), short fragments merged into a neighbour.

    ``first_unit`` and ``stop_unit`` count each piece's units over the batch. Returns
    ``start, end, first unit, stop unit, text`` of each sentence, as the pieces give them.

    A fragment that starts a line opens a group that takes in the pieces after it until
    it has ``min_units`` (found by a search, the units being counted in order); any other
    fragment joins the group before it; a group still short at the end of its text joins
    the group before it, if any. Only whether a fragment falls inside an earlier fragment's
    group is decided one by one (only where the group before it may reach it), so the steps of
    :func:`simdup_es.reference.split_sentences_reference` give the same.
    """
    begin, end, line, text = pieces
    count = len(begin)
    if not count:
        return begin, end, first_unit, stop_unit, text
    opens = np.ones(count, dtype=bool)  # the first piece of each text
    opens[1:] = text[1:] != text[:-1]
    last = np.append(np.flatnonzero(opens[1:]), count - 1)[np.cumsum(opens) - 1]  # each piece's text's last piece
    small = stop_unit - first_unit < min_units
    heads = np.flatnonzero(small & (line | opens))
    # Each group opened by a fragment: the piece where it reaches min_units, or its text's last piece.
    reach = np.searchsorted(stop_unit, first_unit[heads] + min_units)
    done = reach <= last[heads]
    reach = np.minimum(reach, last[heads])
    # A fragment inside the group of an earlier one opens none. The later a group opens the farther
    # it reaches, so a fragment past the group of the fragment before it opens one; only the others
    # are decided in turn, each against the last group opened.
    opened = np.ones(len(heads), dtype=bool)
    maybe = np.flatnonzero(heads[1:] <= reach[:-1]) + 1
    if len(maybe):
        head_of, reach_of = heads.tolist(), reach.tolist()
        covered, decided = -1, -1
        for k in maybe.tolist():
            if k - 1 != decided:  # the fragment before opened a group
                covered = reach_of[k - 1]
            if head_of[k] <= covered:
                opened[k] = False
            else:
                covered = reach_of[k]
            decided = k
    done &= opened
    taken = np.zeros(count + 1, dtype=np.int64)
    taken[heads[opened] + 1] += 1
    taken[reach[opened] + 1] -= 1
    # A group starts at each text's first piece, at each fragment whose group reaches min_units (one
    # short at the end of its text joins the group before it) and at each other piece of min_units.
    group = opens | (np.cumsum(taken[:-1]) == 0) & ~small
    group[heads[done]] = True
    head = np.flatnonzero(group)
    tail = np.append(head[1:], count) - 1
    found = np.flatnonzero(stop_unit[tail] > first_unit[head])  # a text of punctuation alone has no sentence
    head, tail = head[found], tail[found]
    return begin[head], end[tail], first_unit[head], stop_unit[tail], text[head]


@dataclass(frozen=True, eq=False)
class SentenceTable:
    """The sentences of a batch of texts as columns (:func:`split_table`).

    Row ``k`` of :attr:`columns` is sentence ``k`` of the batch: the first text's sentences,
    then the second's, and so on. A table pickles as two arrays and the texts (the way
    workers send sentences back); :meth:`sentences` makes the :class:`Sentence` objects of
    one text when they are wanted.

    Attributes
    ----------
    texts:
        The texts split, in order; offsets refer to each one's own text.
    first:
        int64: row of each text's first sentence, then the number of rows.
    columns:
        int64, a row per sentence: its first and stop character in its text, and its number
        of units. A text's units fall into its sentences in turn, so sentence ``k`` holds the
        units from the sum of the counts before it.
    """

    texts: Sequence[str]
    first: np.ndarray
    columns: np.ndarray

    @property
    def start(self) -> np.ndarray:
        return self.columns[:, 0]

    @property
    def end(self) -> np.ndarray:
        return self.columns[:, 1]

    @property
    def units(self) -> np.ndarray:
        return self.columns[:, 2]

    def rows(self, i: int) -> range:
        """The rows of text ``i``'s sentences."""
        return range(int(self.first[i]), int(self.first[i + 1]))

    def sentences(self, i: int = 0) -> list[Sentence]:
        """The :class:`Sentence` objects of text ``i``, made a field at a time.

        A frozen dataclass's ``__init__`` (one ``object.__setattr__`` per field) takes twice as
        long as setting its slots, and a loop that sets them sentence by sentence a quarter
        longer than ``map`` over each slot.
        """
        rows = self.rows(i)
        return _made(self.texts[i], self.columns[rows.start : rows.stop], 0)

    def line_starts(self) -> np.ndarray:
        """Whether a line break (``"\\n"``) lies between each sentence and the one before it in its text."""
        shift = np.repeat(np.cumsum([0, *(len(t) + 1 for t in self.texts)])[:-1], np.diff(self.first))
        start, end = self.start + shift, self.end + shift  # offsets in the texts joined by line breaks
        newlines = np.flatnonzero(_points("\n".join(self.texts)) == 0x0A)
        starts = np.zeros(len(start) + 1, dtype=bool)
        starts[1:-1] = np.searchsorted(newlines, end[:-1]) < np.searchsorted(newlines, start[1:])
        starts[self.first] = False  # the sentence before is another text's
        return starts[:-1]


def _made(text: str, columns: np.ndarray, first: int) -> list[Sentence]:
    """The :class:`Sentence` objects of ``columns`` (rows of :attr:`SentenceTable.columns`) of ``text``, the first
    numbered ``first``: made a field at a time (:meth:`SentenceTable.sentences`)."""
    start, end, units_ = columns.T.tolist() if len(columns) else ([], [], [])
    made = list(map(object.__new__, itertools.repeat(Sentence, len(start))))
    fields = (range(first, first + len(start)), start, end, map(text.__getitem__, map(slice, start, end)), units_)
    for setter, values in zip(_SENTENCE_SLOTS, fields, strict=True):
        collections.deque(map(setter, made, values), maxlen=0)
    return made


VIEW_SENTENCES = 1000
"""From this many sentences, a text's scan (:func:`scan`) holds them as a :class:`SentenceView`: a 5 MB query has
100,000 sentences, some 250 bytes each as objects with their text, 24 bytes each as rows of a table. (From 1,000
rather than 5,000: two texts of 4,000 and 2,700 sentences compared held 1.7 MB less, in 1.12x the time.)"""


class SentenceView(Sequence[Sentence]):
    """The sentences of one text, held as the rows of a table (start, stop, units: :attr:`SentenceTable.columns`) and
    made when read: equal to the tuple of them (and pickled as it), which it stands for where a long text's sentences
    are read a few at a time (a long query compared with its candidates reads those of the pairs it finds).

    With ``keep`` (a short text's scan, :func:`scanned`), a sentence made is kept and read again as the same object:
    a candidate the search screens out after its matrix reads none of its sentences, and made them all before (a
    twentieth of a 2 kB query's time)."""

    __slots__ = ("_kept", "columns", "text")

    def __init__(self, text: str, columns: np.ndarray, *, keep: bool = False) -> None:
        self.text = text
        self.columns = columns
        self._kept: list[Sentence | None] | None = [None] * len(columns) if keep else None

    @property
    def keeps(self) -> bool:
        """Whether the sentences made are kept (a short text's view)."""
        return self._kept is not None

    def __len__(self) -> int:
        return len(self.columns)

    @overload
    def __getitem__(self, i: int) -> Sentence: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[Sentence, ...]: ...
    def __getitem__(self, i: int | slice) -> Sentence | tuple[Sentence, ...]:
        picked = range(len(self.columns))[i]  # an index or slice checked and made positive as a tuple's
        if isinstance(picked, int):
            kept = self._kept
            if kept is None:
                return _made(self.text, self.columns[picked : picked + 1], picked)[0]
            made = kept[picked]
            if made is None:
                made = kept[picked] = _made(self.text, self.columns[picked : picked + 1], picked)[0]
            return made
        if picked.step != 1 or self._kept is not None:
            return tuple(self[k] for k in picked)
        return tuple(_made(self.text, self.columns[picked.start : max(picked.start, picked.stop)], picked.start))

    def __iter__(self) -> Iterator[Sentence]:
        kept = self._kept
        if kept is None:
            for first in range(0, len(self.columns), 4096):  # a few at a time: never all of them at once
                yield from _made(self.text, self.columns[first : first + 4096], first)
            return
        if None in kept:  # the rest made at once (those read before stay the objects they were)
            for k, made in enumerate(_made(self.text, self.columns, 0)):
                if kept[k] is None:
                    kept[k] = made
        yield from cast("list[Sentence]", kept)

    def units(self) -> np.ndarray:
        """Each sentence's number of units (``int64``), read from the table."""
        return self.columns[:, 2]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SentenceView):
            other = tuple(other)
        return tuple(self) == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __reduce__(self) -> tuple[type[tuple[Sentence, ...]], tuple[tuple[Sentence, ...]]]:
        return tuple, (tuple(self),)


# From about this many characters in a batch, numpy finds its pieces and sentences sooner than the
# regular expression and a loop over each text's pieces: its fixed cost is some 60 calls.
_BATCH_CHARS = 5000


def split_table(texts: Sequence[str], *, min_units: int = DEFAULT_MIN_UNITS) -> SentenceTable:
    """Split each of ``texts`` into sentences, all at once: :func:`split_sentences` of each, as columns.

    Raises
    ------
    ConfigError
        ``min_units`` is not a positive integer.
    """
    return _split(texts, min_units)[0]


class UnitPoints(NamedTuple):
    """The units of a batch of texts, text after text (:func:`unit_points`)."""

    points: np.ndarray
    """uint32: the code point of each unit's first character."""
    word_at: np.ndarray
    """The units that are Latin words or numbers."""
    words: list[str]
    """Their text, case-folded (as :func:`units` gives them)."""
    first: np.ndarray
    """int64: each text's first unit, then the number of units."""


def unit_points(texts: Sequence[str]) -> UnitPoints:
    """The units of ``texts`` (those of :func:`units`, with numpy), all at once."""
    texts = tuple(texts)
    return _unit_points(texts, _chars(_joined(texts)))


def split_table_units(texts: Sequence[str], *, min_units: int = DEFAULT_MIN_UNITS) -> tuple[SentenceTable, UnitPoints]:
    """:func:`split_table` and :func:`unit_points` of ``texts``, from one scan of them."""
    texts = tuple(texts)
    table, chars = _split(texts, min_units)
    return table, _unit_points(texts, chars)


def _unit_points(texts: tuple[str, ...], chars: _Chars) -> UnitPoints:
    joined = _joined(texts)
    words = [joined[i:j].casefold() for i, j in zip(chars.word_starts.tolist(), chars.word_ends.tolist(), strict=True)]
    base = np.fromiter(itertools.accumulate((len(t) + 1 for t in texts), initial=0), dtype=np.int64, count=len(texts) + 1)
    return UnitPoints(chars.points[chars.starts], np.searchsorted(chars.starts, chars.word_starts), words,
                      np.searchsorted(chars.starts, base))


def _split(texts: Sequence[str], min_units: int) -> tuple[SentenceTable, _Chars]:
    """:func:`split_table`, with the units of the texts joined by line breaks (:func:`_chars`).

    Each text is cut into pieces between boundaries, and short fragments are merged. numpy's cost
    per call is about that of the work itself for a text of a few hundred characters, hence the
    batch; below :data:`_BATCH_CHARS` each text's pieces are found by :func:`_raw_pieces` and merged
    by :func:`_merged`, else all at once by :func:`_pieces_many` and :func:`_merged_many`, which give the same.
    """
    check_min_units(min_units)
    texts = tuple(texts)
    chars = _chars(_joined(texts))
    base = list(itertools.accumulate((len(t) + 1 for t in texts), initial=0))
    split = _table_each if len(chars.points) < _BATCH_CHARS else _table_many
    first, columns = split(texts, chars, base, min_units)
    return SentenceTable(texts, np.asarray(first, dtype=np.int64), columns), chars


def check_min_units(min_units: int) -> None:
    """A :class:`~simdup_es.errors.ConfigError` unless ``min_units`` is a positive integer."""
    if isinstance(min_units, bool) or not isinstance(min_units, int) or min_units < 1:
        raise ConfigError(f"min_units must be a positive integer, got {min_units!r}")


def _table_each(texts: Sequence[str], chars: _Chars, base: list[int], min_units: int) -> tuple[list[int], np.ndarray]:
    """The sentences of ``texts``, text by text (:func:`_raw_pieces`, then :func:`_merged`): the row of
    each text's first, then :attr:`SentenceTable.columns`."""
    pieces = [_raw_pieces(t) for t in texts]
    # Units never cross a piece boundary, so a piece's units are those starting in it.
    ends = [a + k for p, a in zip(pieces, base) for begin, end, _ in p for k in (begin, end)]
    bounds = np.searchsorted(chars.starts, np.array(ends, dtype=np.int64)).tolist()
    flat: list[int] = []  # the columns row by row: numpy reads a flat list four times as fast as one of rows
    first, k = [0], 0
    for p in pieces:
        flat += [n for start, end, u0, u1 in _merged(p, bounds[k : k + 2 * len(p)], min_units) for n in (start, end, u1 - u0)]
        k += 2 * len(p)
        first.append(len(flat) // 3)
    return first, np.array(flat, dtype=np.int64).reshape(-1, 3)


def _table_many(texts: Sequence[str], chars: _Chars, base: list[int], min_units: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_table_each` with numpy, all texts at once: :func:`_pieces_many`, then :func:`_merged_many`."""
    pieces = _pieces_many(texts, chars, np.array(base, dtype=np.int64))
    begin, end, first_unit, stop_unit, owner = _merged_many(
        pieces, np.searchsorted(chars.starts, pieces[0]), np.searchsorted(chars.starts, pieces[1]), min_units)
    shift = np.array(base, dtype=np.int64)[owner]  # offsets into each text rather than the batch
    columns = np.stack((begin - shift, end - shift, stop_unit - first_unit), axis=1)
    return np.searchsorted(owner, np.arange(len(texts) + 1)), columns


def split_sentences_coded(
    text: str, words: WordCodes | None, *, min_units: int = DEFAULT_MIN_UNITS,
    scans: Callable[[tuple[str, int]], Scan] | None = None,
) -> tuple[list[Sentence], list[str]]:
    """:func:`split_sentences`, plus each sentence's units as one code point per unit.

    A CJK unit is its own character; a Latin word or number is the private-use
    code point ``words`` gives it (pass the same :class:`WordCodes` for texts
    that are compared with each other; ``None`` gives all words one code,
    enough for counting). This is the form
    :func:`simdup_es.compare.compare` feeds to RapidFuzz. ``scans`` gives the :func:`scan` of
    ``(text, min_units)``: a cache of them (:class:`simdup_es.caches.TextCaches`) keeps those of
    stored texts, which a search compares again and again.

    Raises
    ------
    ConfigError
        ``min_units`` is not a positive integer.
    OverflowError
        More distinct words than private-use code points.
    """
    sentences, points, lengths = split_sentences_points(text, words, min_units=min_units, scans=scans)
    units_ = _points_text(points)
    stops = np.cumsum(lengths).tolist()
    return list(sentences), list(map(units_.__getitem__, map(slice, [0, *stops[:-1]], stops)))


def split_sentences_points(
    text: str, words: WordCodes | None, *, min_units: int = DEFAULT_MIN_UNITS,
    scans: Callable[[tuple[str, int]], Scan] | None = None,
) -> tuple[list[Sentence] | SentenceView, np.ndarray, np.ndarray]:
    """:func:`split_sentences_coded` with the sentences' coded units as one array (``uint32``, a code point a unit,
    sentence after sentence) and each sentence's number of units (``int64``): what the matrix reads of them, with no
    string a sentence (a 5 MB text's took 20 MB). The sentences are a list, or those of a text of
    :data:`VIEW_SENTENCES` or more a :class:`SentenceView` (no object a sentence until one is read)."""
    sentences, unit_points, word_at, found, lengths = (scans or scan)((text, min_units))
    if found:
        unit_points = unit_points.copy()
        unit_points[word_at] = WORD_BASE if words is None else _points("".join(map(words.__getitem__, found)))
    units = unit_points[: int(lengths.sum())]
    if isinstance(sentences, SentenceView) and not sentences.keeps:
        return sentences, units, lengths
    return list(sentences), units, lengths


Scan = tuple[tuple[Sentence, ...] | SentenceView, np.ndarray, np.ndarray, list[str], np.ndarray]


def _points_text(points: np.ndarray) -> str:
    """The string of these code points."""
    return points.astype("<u4").tobytes().decode("utf-32-le")


def scan(key: tuple[str, int]) -> Scan:
    """What :func:`split_sentences_coded` needs of ``text`` whatever the word codes: its sentences, the code
    point of each unit's first character, which units are words and their (case-folded) text, and each
    sentence's number of units (``int64``; its units follow those of the sentences before it). The arrays are
    read-only: a cache shares them between calls. (:func:`simdup_es.native.scan` is the compiled core's.)"""
    text, min_units = key
    table, chars = _split([text], min_units)
    starts = chars.starts
    word_at = np.searchsorted(starts, chars.word_starts)  # the units that are words
    found = [text[i:j].casefold() for i, j in zip(chars.word_starts.tolist(), chars.word_ends.tolist(), strict=True)]
    return scanned(text, table.columns, chars.points[starts], word_at, found)


def scanned(text: str, columns: np.ndarray, unit_points: np.ndarray, word_at: np.ndarray, found: list[str]) -> Scan:
    """The :data:`Scan` of ``text`` from its sentences' columns (:attr:`SentenceTable.columns`) and its units."""
    lengths = np.ascontiguousarray(columns[:, 2], dtype=np.int64)
    for shared in (unit_points, word_at, lengths):
        shared.flags.writeable = False
    return (SentenceView(text, columns, keep=len(lengths) < VIEW_SENTENCES),
            unit_points, word_at, found, lengths)


def scan_bytes(key: tuple[str, int], scanned: Scan) -> int:
    """About the bytes a :func:`scan` holds: the text, its sentences (each an object and its text), the arrays."""
    sentences, unit_points, word_at, found, lengths = scanned
    each = 24 if isinstance(sentences, SentenceView) and not sentences.keeps else 240
    return (2 * sys.getsizeof(key[0]) + each * len(sentences) + unit_points.nbytes + word_at.nbytes + lengths.nbytes
            + sum(map(sys.getsizeof, found)))


def split_sentences(text: str, *, min_units: int = DEFAULT_MIN_UNITS) -> list[Sentence]:
    """Split unified ``text`` into sentences with offsets into ``text``.

    Parameters
    ----------
    text:
        Unified text (see :func:`simdup_es.text.unify`); offsets refer to it.
    min_units:
        Fragments with fewer units are merged into a neighbour (see the module
        docstring). ``1`` merges only fragments without any unit (lone
        punctuation).

    Returns
    -------
    list[Sentence]
        In text order, non-overlapping, each with at least ``min_units`` units
        except when the whole text has fewer. Empty when ``text`` has no unit.

    Raises
    ------
    ConfigError
        ``min_units`` is not a positive integer.
    """
    return _split([text], min_units)[0].sentences()


# ------------------------------------------------------------------ hard-wrapped lines

WRAP_FULL = 0.6
"""A line of at least this share of a text's widest line is full: the layout broke it."""
WRAP_MIN_SHARE = 0.3
"""A text is hard-wrapped when at least this share of its lines (and two) are full."""


def _line_widths(lines: Sequence[str]) -> np.ndarray:
    """Display width of each line without its trailing spaces: 2 per CJK character, 1 per other."""
    joined = "\n".join(line.rstrip() for line in lines)
    points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    width = 1 + _IS_CJK[np.minimum(points, 0x10FFFF)].astype(np.int64)
    breaks = np.flatnonzero(points == 10)
    bounds = np.concatenate(([0], breaks + 1, [points.size + 1]))
    total = np.concatenate(([0], np.cumsum(width)))
    return total[bounds[1:] - 1] - total[bounds[:-1]]


def unwrap_lines(text: str) -> str:
    """``text`` with the line breaks of a hard-wrapped layout replaced by spaces (same length, same offsets).

    PDF text and hard-wrapped mail or licence files break lines inside sentences,
    where a sentence would otherwise end. When at least :data:`WRAP_MIN_SHARE` of
    the lines (and two) are *full* (:data:`WRAP_FULL` of the widest line's width),
    a break after a full line that does not end with a terminator (``。！？；!?;…``,
    where the sentence ends anyway) is a space. Shorter lines (a paragraph's last, a
    heading, a list item) still end where they end. A text of one paragraph per line
    has few full lines and is returned as it is.
    """
    if text.count("\n") < 2:
        return text
    lines = text.split("\n")
    widths = _line_widths(lines)
    full = widths >= WRAP_FULL * widths.max()
    if int(full.sum()) < max(2, WRAP_MIN_SHARE * int((widths > 0).sum())):
        return text
    out = []
    for line, is_full, after in zip(lines, full.tolist(), lines[1:], strict=False):
        stripped = line.rstrip()
        soft = is_full and after.strip() and stripped and stripped[-1] not in _TERMINATORS
        out.append(line + (" " if soft else "\n"))
    out.append(lines[-1])
    return "".join(out)


