"""Sentences and units of unified text (SPEC §6).

The comparison matrix works sentence by sentence, and every length in it is counted
in *units*:

- each CJK character (Han, kana, Hangul syllable) is one unit, as a Chinese reader
  counts characters;
- each Latin-script (or other alphabetic) word and each number is one unit, as an
  English reader counts words. Letters and digits joined by an apostrophe or a dot
  stay one unit: ``don't``, ``3.14``, ``e.g``, ``example.com``.

Mixed sentences mix both: ``用 python 3.12 写的`` is 5 units (用, python, 3.12, 写,
的). Punctuation and whitespace are not units. ``Num(d)`` of SPEC §6 is the number of
units of ``d``, and LCS is computed over unit sequences.

Sentence boundaries
-------------------
A sentence ends at a line break, or after a run of terminators ``。！？；…`` or
``! ? ;`` (NFKC turns the full-width forms and ``…`` into ``! ? ; ...``, so both
spellings are handled), together with any closing quotes or brackets that follow
(``。”``, ``?)``). A full stop ``.`` is treated more carefully because it has other
jobs in Latin text:

- it is no boundary when a letter or digit follows it directly (``3.14``,
  ``v1.2``, ``example.com``, ``e.g.x``);
- it is no boundary after a known abbreviation (``e.g.``, ``i.e.``, ``cf.``,
  ``vs.``, ``mr.``, ``dr.``, ``fig.``, ``nos.``, ``et al.`` ...; not ``no.``,
  which ends too many sentences), a single letter
  (initials: ``j. smith``) or a dotted acronym (``u.s.``). A single *digit*
  before a dot does end a sentence (``grew by 5.``); a list marker ``1.`` that
  starts a line is then a short fragment and joins the item after it. Unified text is
  case-folded, so the usual "capital letter follows" test is not available; the
  price is that a sentence really ending in one of these (``... plan b.``) runs on
  into the next one, which only makes that sentence longer.

A run of two or more dots (an ellipsis) is a boundary unless a letter or digit
follows directly.

Short fragments
---------------
Fragments with fewer than ``min_units`` units (default 4: headings like
``第一章``, list markers like ``1.``, replies like ``好。``, a lone ``......``) are
*merged into a neighbour* rather than dropped: a fragment that starts a line (a
heading, a list marker) joins the sentence after it, any other fragment joins the
sentence before it, and a text made only of short fragments becomes one sentence.
Merging keeps every unit of the text inside some sentence, so document similarity
(marked units / all units) keeps an honest denominator, and offsets still cover
the text; dropping fragments would instead let a two-character reply match
anything with p = 1 or vanish from both numerator and denominator. A merged
sentence may span a line break.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from .errors import ConfigError

__all__ = [
    "DEFAULT_MIN_UNITS",
    "Sentence",
    "WordCodes",
    "split_sentences",
    "split_sentences_coded",
    "split_sentences_joined",
    "split_sentences_joined_many",
    "unit_spans",
    "units",
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

_UNIT_SEPARATOR = "\x1f"  # joins the units of a sentence (see split_sentences_joined)

_BREAKS = "\n\r\u2028\u2029"
_TERMINATORS = "。！？；!?;…．."
_SEGMENT = re.compile(
    rf"([^{_BREAKS}{_TERMINATORS}]*)"  # body
    rf"(?:([{_TERMINATORS}]+)([”’\"'」』》〉）)\]】〕}}]*)([^\S{_BREAKS}]*)([{_BREAKS}]?)"  # run, closing, spaces, break
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


def _is_boundary(text: str, run_start: int, run_end: int) -> bool:
    """Whether a run of dots ends a sentence (other terminators always do)."""
    # Letters or digits right after the dots mean a decimal point, a version, a
    # host name or an abbreviation.
    if run_end < len(text) and _ALNUM_NOT_CJK.match(text, run_end):
        return False
    return run_end - run_start != 1 or not _abbreviation_before(text, run_start)


def _abbreviation_before(text: str, dot: int) -> bool:
    """Whether the word before the full stop at ``dot`` is an abbreviation, an initial or an acronym.

    :func:`_abbreviation_before_reference` without searching: the word is the longest
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


def _abbreviation_before_reference(text: str, dot: int) -> bool:
    """:func:`_abbreviation_before` with the regular expression searched as written."""
    # Look back a bounded distance only: searching from 0 would make
    # splitting quadratic in the length of the text.
    before = _WORD_BEFORE.search(text, max(0, dot - 40), dot)
    if before is None:
        return False
    word = before.group().casefold()
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
    inside: np.ndarray  # whether each character is part of a unit


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
    unit_start = _IS_CJK[points]
    word = _bmp_word_chars()[np.minimum(points, 0xFFFF)]  # 0xFFFF is no letter
    if len(text) * 2 < len(text.encode("utf-16-le", "surrogatepass")):  # characters beyond 0xFFFF
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
        inside = unit_start | joined[1:-1]
        unit_start[word_starts] = True
    else:
        word_starts = word_ends = np.zeros(0, dtype=np.int64)
        inside = unit_start
    return _Chars(points, np.flatnonzero(unit_start), word_starts, word_ends, inside)


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


class _Scan(NamedTuple):
    """What :func:`_scan` found in a batch of texts."""

    sentences: list[list[Sentence]]  # each text's
    ranges: list[list[tuple[int, int]]]  # each text's sentences' units (first, stop), counted over the batch
    chars: _Chars  # of the texts joined by line breaks


def _scan(texts: Sequence[str], min_units: int) -> _Scan:
    """Split each text into sentences (:func:`_raw_pieces`, short fragments merged) and locate
    the units of them all, joined by line breaks, at once (:func:`_chars`).

    numpy's cost per call is about that of the work itself for a text of a few
    hundred characters, hence the batch.
    """
    if isinstance(min_units, bool) or not isinstance(min_units, int) or min_units < 1:
        raise ConfigError(f"min_units must be a positive integer, got {min_units!r}")
    chars = _chars("\n".join(texts))
    pieces = [_raw_pieces(t) for t in texts]
    base = itertools.accumulate((len(t) + 1 for t in texts), initial=0)
    # Units never cross a piece boundary, so a piece's units are those starting in it.
    ends = [at + k for p, at in zip(pieces, base) for begin, end, _ in p for k in (begin, end)]
    bounds = np.searchsorted(chars.starts, np.array(ends, dtype=np.int64)).tolist()
    sentences, ranges = [], []
    first = 0
    for t, p in zip(texts, pieces, strict=True):
        merged = _merged(p, bounds[first : first + 2 * len(p)], min_units)
        first += 2 * len(p)
        sentences.append([Sentence(k, start, end, t[start:end], u1 - u0) for k, (start, end, u0, u1) in enumerate(merged)])
        ranges.append([(u0, u1) for _, _, u0, u1 in merged])
    return _Scan(sentences, ranges, chars)


def _joined_units(points: np.ndarray, chars: _Chars) -> tuple[str, list[int]]:
    """The units of a text (``points``, as :func:`_chars` found them), each followed by U+001F,
    and where each unit starts in that string, then one past its end."""
    inside = np.flatnonzero(chars.inside)
    first = np.searchsorted(inside, chars.starts)  # each unit's first character among them
    # Where each unit character goes: after one separator per unit before it.
    shift = np.zeros(len(inside), dtype=np.int64)
    shift[first[1:]] = 1
    at = np.arange(len(inside)) + np.cumsum(shift)
    out = np.full(len(inside) + len(first), ord(_UNIT_SEPARATOR), dtype="<u4")
    out[at] = points[inside]
    joined = out.tobytes().decode("utf-32-le")
    return joined, at[first].tolist() + [len(joined)]


def split_sentences_coded(
    text: str, words: WordCodes | None, *, min_units: int = DEFAULT_MIN_UNITS
) -> tuple[list[Sentence], list[str]]:
    """:func:`split_sentences`, plus each sentence's units as one code point per unit.

    A CJK unit is its own character; a Latin word or number is the private-use
    code point ``words`` gives it (pass the same :class:`WordCodes` for texts
    that are compared with each other; ``None`` gives all words one code,
    enough for counting). This is the form
    :func:`simdup_es.compare.compare` feeds to RapidFuzz.

    Raises
    ------
    ConfigError
        ``min_units`` is not a positive integer.
    OverflowError
        More distinct words than private-use code points.
    """
    scan = _scan([text], min_units)
    chars = scan.chars
    coded = chars.points.copy()
    if words is None:
        coded[chars.word_starts] = WORD_BASE
    elif len(chars.word_starts):
        found = [text[i:j].casefold() for i, j in zip(chars.word_starts.tolist(), chars.word_ends.tolist(), strict=True)]
        coded[chars.word_starts] = _points("".join(map(words.__getitem__, found)))
    units_ = coded[chars.starts].astype("<u4").tobytes().decode("utf-32-le")
    return scan.sentences[0], [units_[u0:u1] for u0, u1 in scan.ranges[0]]


def split_sentences_joined(text: str, *, min_units: int = DEFAULT_MIN_UNITS) -> tuple[list[Sentence], list[str]]:
    """:func:`split_sentences`, plus each sentence's units joined by U+001F: ``"\\x1f".join(sentence.units)``.

    Found in the same pass, with numpy: the text's unit characters, a separator
    after each unit, then one slice per sentence.

    Raises
    ------
    ConfigError
        ``min_units`` is not a positive integer.
    """
    return split_sentences_joined_many([text], min_units=min_units)[0]


def split_sentences_joined_many(
    texts: Sequence[str], *, min_units: int = DEFAULT_MIN_UNITS
) -> list[tuple[list[Sentence], list[str]]]:
    """:func:`split_sentences_joined` of each text, their units found in one pass over them all (:func:`_scan`)."""
    scan = _scan(texts, min_units)
    folded = [t.casefold() for t in texts]
    # Case folding maps character by character where it keeps a text's length, so each unit
    # folds in place; a text with a character that folds to several (ß, İ) goes word by word.
    same = [len(f) == len(t) for f, t in zip(folded, texts)]
    joined, offsets = _joined_units(_points("\n".join(f if ok else t for f, t, ok in zip(folded, texts, same))), scan.chars)
    return [
        (sentences, [joined[offsets[u0] : offsets[u1] - 1] for u0, u1 in ranges] if ok
         else [_UNIT_SEPARATOR.join(units(x.text)) for x in sentences])
        for sentences, ranges, ok in zip(scan.sentences, scan.ranges, same)
    ]


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
    return _scan([text], min_units).sentences[0]


def _split_sentences_reference(text: str, min_units: int = DEFAULT_MIN_UNITS) -> list[Sentence]:
    """:func:`split_sentences` the plain way: :func:`_raw_pieces`, counted with :func:`units`."""
    merged: list[tuple[int, int, int]] = []  # (start, end, units)
    pending: tuple[int, int, int] | None = None
    for start, end, line_start in _raw_pieces(text):
        n = len(units(text[start:end]))
        if pending is not None:
            start, n, line_start, pending = pending[0], pending[2] + n, True, None
        if n >= min_units:
            merged.append((start, end, n))
        elif line_start or not merged:
            pending = (start, end, n)
        else:
            merged[-1] = (merged[-1][0], end, merged[-1][2] + n)
    if pending is not None:
        if merged:
            merged[-1] = (merged[-1][0], pending[1], merged[-1][2] + pending[2])
        else:
            merged.append(pending)
    return [Sentence(k, start, end, text[start:end], n) for k, (start, end, n) in enumerate(merged) if n]
