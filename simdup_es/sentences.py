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
  ``vs.``, ``mr.``, ``dr.``, ``fig.``, ``no.``, ``et al.`` ...), a single letter
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

import re
from dataclasses import dataclass

from .errors import ConfigError

__all__ = ["DEFAULT_MIN_UNITS", "Sentence", "split_sentences", "unit_spans", "units"]

DEFAULT_MIN_UNITS = 4

# Scripts counted one character per unit. Kana and Hangul syllables are counted
# like Han so Japanese and Korean text degrades gracefully instead of becoming one
# giant "word" per run.
_CJK = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
_WORD = rf"[^\W_{_CJK}]"
UNIT_PATTERN = re.compile(rf"[{_CJK}]|{_WORD}+(?:['’.]{_WORD}+)*")

_CUT = re.compile(r"[\n\r\u2028\u2029]|(?P<run>[。！？；!?;…．.]+)[”’\"'」』》〉）)\]】〕}]*")
_DOTS_ONLY = re.compile(r"[.．]+")
_ALNUM_NOT_CJK = re.compile(_WORD)
_NOT_CJK = re.compile(rf"[^{_CJK}]+")
_WORD_BEFORE = re.compile(rf"(?:{_WORD}+\.)*{_WORD}+$")
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
    unification still compare case-insensitively.
    """
    if _ALNUM_NOT_CJK.search(text) is None:
        # Fast path for text without Latin letters or digits (most Chinese
        # sentences): every unit is one CJK character, so delete the rest.
        return list(_NOT_CJK.sub("", text))
    # Case-fold the text once rather than each unit: cheaper, and the same units
    # for text that is already unified (case folding is idempotent).
    return UNIT_PATTERN.findall(text.casefold())


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
    units:
        Its units (see :func:`units`); ``len(units)`` is ``Num(d)``.
    """

    index: int
    start: int
    end: int
    text: str
    units: tuple[str, ...]

    @property
    def n_units(self) -> int:
        return len(self.units)


def _is_boundary(text: str, run_start: int, run_end: int) -> bool:
    """Whether a run of dots ends a sentence (other terminators always do)."""
    # Letters or digits right after the dots mean a decimal point, a version, a
    # host name or an abbreviation.
    if run_end < len(text) and _ALNUM_NOT_CJK.match(text, run_end):
        return False
    if run_end - run_start == 1:
        # Look back a bounded distance only: searching from 0 would make
        # splitting quadratic in the length of the text.
        before = _WORD_BEFORE.search(text, max(0, run_start - 40), run_start)
        if before is not None:
            word = before.group().casefold()
            if word in ABBREVIATIONS or _INITIALS.match(word):
                return False
    return True


def _raw_pieces(text: str) -> list[tuple[int, int, bool]]:
    """``(start, end, starts_line)`` of every piece between boundaries, spaces trimmed."""
    out: list[tuple[int, int, bool]] = []
    pos = 0
    line_start = True
    # One pass over line breaks and terminator runs (with their closing quotes):
    # this runs for every document compared, so it stays a single regex scan.
    for m in _CUT.finditer(text):
        run_start, run_end = m.span("run")
        if run_start >= 0:
            if not _DOTS_ONLY.fullmatch(text, run_start, run_end) or _is_boundary(text, run_start, run_end):
                cut, after, is_break = m.end(), m.end(), False
            else:
                continue
        else:
            cut, after, is_break = m.start(), m.end(), True
        piece = text[pos:cut]
        body = piece.strip()
        if body:
            begin = pos + len(piece) - len(piece.lstrip())
            out.append((begin, begin + len(body), line_start))
        pos = after
        line_start = is_break
    piece = text[pos:]
    body = piece.strip()
    if body:
        begin = pos + len(piece) - len(piece.lstrip())
        out.append((begin, begin + len(body), line_start))
    return out


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
    if isinstance(min_units, bool) or not isinstance(min_units, int) or min_units < 1:
        raise ConfigError(f"min_units must be a positive integer, got {min_units!r}")
    # Each entry: [start, end, units]; units of merged pieces are concatenated,
    # which equals the units of the merged span because no unit crosses a boundary.
    merged: list[tuple[int, int, list[str]]] = []
    pending: tuple[int, int, list[str]] | None = None  # a line-initial fragment waiting for the next sentence
    for start, end, line_start in _raw_pieces(text):
        piece = (start, end, units(text[start:end]))
        if pending is not None:
            piece = (pending[0], end, pending[2] + piece[2])
            line_start = True
            pending = None
        if len(piece[2]) >= min_units:
            merged.append(piece)
        elif line_start or not merged:
            pending = piece
        else:
            last = merged[-1]
            merged[-1] = (last[0], end, last[2] + piece[2])
    if pending is not None:
        if merged:
            last = merged[-1]
            merged[-1] = (last[0], pending[1], last[2] + pending[2])
        else:
            merged.append(pending)
    out: list[Sentence] = []
    for start, end, unit_list in merged:
        if not unit_list:
            continue  # the whole text is punctuation: nothing to compare
        out.append(Sentence(len(out), start, end, text[start:end], tuple(unit_list)))
    return out
