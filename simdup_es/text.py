"""Raw documents to unified text.

:func:`unify` is pure: str in, str out. :func:`extract` turns the bytes of a
``.txt``/``.md``, ``.html``, ``.pdf`` or ``.docx`` document into text; it takes bytes,
not paths, so reading files stays with the caller.

Unified text is NFKC-normalised (full-width ASCII becomes half-width), converted
from Traditional to Simplified Chinese (OpenCC's tables, shipped in the
``opencc`` wheel: see :func:`to_simplified`), case-folded, stripped of control characters, with runs of
spaces collapsed to one and runs of blank lines to one line break. Line breaks are
kept because they end sentences for the comparison matrix.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import accumulate

import numpy as np

# Raw formats -> text lives in .extract; its names are re-exported here, where users import them.
from .extract import (MAX_DOCX_UNPACKED_BYTES, MAX_DOCX_XML_BYTES, MAX_FILE_BYTES, MAX_HTML_OPEN_ELEMENTS, Kind,
                      decode, extract, html_to_text, kind_of, too_large)
from .opencc_tables import CONFIGS, JOIN, Shortcuts, lookup, converter, load_shortcuts, native_script

__all__ = [
    "MAX_DOCX_UNPACKED_BYTES", "MAX_DOCX_XML_BYTES", "MAX_FILE_BYTES", "MAX_HTML_OPEN_ELEMENTS", "Kind",
    "decode", "extract", "html_to_text", "kind_of", "too_large",
    "UnifiedText", "to_simplified", "to_simplified_many", "unify", "unify_many",
]

# Control and format characters except tab and line breaks (which become spaces and
# line breaks below). Zero-width spaces and BOMs are format characters (Cf).
# Lone surrogates (from JSON "\\ud800" escapes) cannot be encoded and go too.
CONTROL = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\ufeff\ud800-\udfff]"
)
_SPACES = re.compile(r"[^\S\n]+")
_LINE_BREAKS = re.compile(r"\s*\n\s*")

# Every key of OpenCC's tables (t2s, s2twp, tw2sp) holds a character of these CJK
# blocks (a few phrase keys add Latin letters, '-' or '·' to them: U盘, B超), so text
# without one is left as it is by all three conversions (checked character by
# character in the tests).
_CJK_RANGES = ((0x2E80, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))
_CJK = re.compile("[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in _CJK_RANGES) + "]")

# The characters of Chinese text that are not in NFKC form, nearly all full-width
# punctuation. Replacing a character by its NFKC form leaves the NFKC form of the
# whole text unchanged (it is a compatibility-equivalent string), and once these
# are gone the text is usually found normalised at the quick check, not
# decomposed and recomposed.
NFKC_COMMON = tuple((c, unicodedata.normalize("NFKC", c)) for c in "，：？（）；！")


def _nfkc(text: str) -> str:
    for wide, narrow in NFKC_COMMON:
        if wide in text:
            text = text.replace(wide, narrow)
    if unicodedata.is_normalized("NFKC", text):
        return text
    # A line break is a starter that composes with nothing: normalising line by line
    # gives the same text, and only the lines that need it are decomposed and recomposed.
    return "\n".join([unicodedata.normalize("NFKC", line) for line in text.split("\n")])


def to_simplified(text: str) -> str:
    """One script and one vocabulary for Chinese text, whichever it was written in.

    Traditional and Simplified texts differ in characters, and translations made
    in Taiwan also in words (檔名/文件名, 預設/默认, 使用者/用户). Character
    conversion alone (``t2s``) left the zh_TW and zh_CN man pages 13.8 bits apart
    on average; converting every text to Simplified characters, then to Taiwan
    phrasing (``s2twp``) and back to mainland phrasing (``tw2sp``) maps both onto
    the same form: 1.9 bits on average, and a pure script conversion to 0
    (benchmarks/eval_script.py). The round trip can replace a word with its
    regional synonym (执行 -> 运行); it does so the same way for every text.
    Text without CJK characters is returned as it is (the conversions would not
    change it), and passes that cannot change a text are skipped (see
    :class:`Shortcuts`): the result is always that of the three conversions. On the
    native implementation the compiled core runs them on the shortcuts' flat tables
    (:func:`~simdup_es.opencc_tables.native_script`), as OpenCC does.
    """
    return to_simplified_many([text])[0]


def to_simplified_many(texts: Sequence[str]) -> list[str]:
    """:func:`to_simplified` of each text, one conversion pass at a time over them all.

    Running each of OpenCC's tables over all the texts before the next one keeps
    the table in the CPU caches: about an eighth faster than text by text.
    """
    out = list(texts)
    shortcuts = load_shortcuts()
    _convert(out, char_flags(out, shortcuts), shortcuts)
    return out


# What char_flags finds in a text, a bit each; _MARKS are the bits of Shortcuts.marks.
_MARKS, HAS_CONTROL, HAS_CJK, HAS_IDS = 3, 4, 8, 16
# OpenCC copies an ideographic description sequence (⿰氵青) whole where no key starts: its operands
# are any characters, JOIN too, so a text that holds an operator is never joined to the next.
_IDS = (0x2FF0, 0x2FFF)


@lru_cache(maxsize=2)
def _flag_table(shortcuts: Shortcuts | None) -> np.ndarray:
    """uint8 by code point: the shortcuts' mark, HAS_CONTROL and HAS_CJK; the last one 0, for every code point above."""
    marks = shortcuts.marks if shortcuts is not None else np.zeros(1, dtype=np.uint8)
    table = np.zeros(max(len(marks), _CJK_RANGES[-1][1] + 2), dtype=np.uint8)
    table[: len(marks)] = marks
    for lo, hi in _CJK_RANGES:
        table[lo : hi + 1] |= HAS_CJK
    table[_IDS[0] : _IDS[1] + 1] |= HAS_IDS
    table[[m.start() for m in CONTROL.finditer("".join(map(chr, range(0x10000))))]] |= HAS_CONTROL
    return table


@lru_cache(maxsize=1)
def space_table() -> np.ndarray:
    """uint8 by code point: 1 for space and line break, 3 for any other white space (str.split's); the last one 0."""
    table = np.array([3 if chr(c).isspace() else 0 for c in range(0x3002)], dtype=np.uint8)  # U+3000 is the highest
    table[[ord(" "), ord("\n"), len(table) - 1]] = 1, 1, 0
    return table

def _or_pieces(values: np.ndarray, lengths: list[int]) -> np.ndarray:
    """The OR of ``values`` over each of the consecutive pieces of these lengths (0 for an empty one)."""
    starts = list(accumulate(lengths[:-1], initial=0))
    if lengths and all(lengths):
        return np.bitwise_or.reduceat(values, starts)
    out = np.zeros(len(lengths), dtype=values.dtype)
    full = np.flatnonzero(lengths)  # reduceat would take one value for an empty piece
    if len(full):
        out[full] = np.bitwise_or.reduceat(values, np.take(starts, full))
    return out


def char_flags(texts: Sequence[str], shortcuts: Shortcuts | None) -> np.ndarray:
    """What :func:`_flag_table` holds for the characters of each text, ORed."""
    return _or_pieces(lookup(_flag_table(shortcuts), "".join(texts)), [len(t) for t in texts])


def _convert(out: list[str], flags: np.ndarray, shortcuts: Shortcuts | None) -> None:
    """:func:`to_simplified` of each text of ``out`` in place, given its :func:`char_flags` with the same ``shortcuts``."""
    # Text without a CJK character is left alone; the others take the passes their mark needs.
    # (Marks are ORed here, not the highest: 3 is a text with both, which takes every pass.)
    flag_list = flags.tolist()
    todo = [(i, min(f & _MARKS, 2) if shortcuts is not None else 2) for i, f in enumerate(flag_list) if f & HAS_CJK]
    # (configs, texts, whether they may be joined): every pass of the three configs, then the shortcuts'.
    passes: list[tuple[Sequence[str], list[int], bool]] = [(CONFIGS, [i for i, mark in todo if mark == 2], False)]
    script = native_script(shortcuts)
    if script is not None:  # the compiled core runs the shortcuts' passes, on their flat tables
        native = [(i, mark) for i, mark in todo if mark < 2]
        if native:
            converted = script.to_simplified([out[i] for i, _ in native], [mark == 1 for _, mark in native])
            for (i, _), text in zip(native, converted, strict=True):
                out[i] = text
    elif shortcuts is not None:
        passes += [
            ([shortcuts.main["t2s"]], [i for i, mark in todo if mark == 1], True),
            ([shortcuts.main["s2twp"], shortcuts.main["tw2sp"]], [i for i, mark in todo if mark < 2], True),
        ]
    for configs, which, joinable in passes:
        # The shortcut passes convert the batch's texts joined by JOIN, in one call: no
        # key of their tables holds it (checked when they are built and read), so no
        # match spans it and each text comes out as alone. Two thirds less time on
        # titles, 5 % on texts. (The texts that hold it, a NUL or an ideographic
        # description character go one by one.)
        joined = [i for i in which if not flag_list[i] & HAS_IDS and JOIN not in out[i] and "\0" not in out[i]
                  ] if joinable else []
        if len(joined) > 1:
            text = JOIN.join([out[i] for i in joined])
            for config in configs:
                text = converter(config).convert(text)
            for i, converted in zip(joined, text.split(JOIN), strict=True):
                out[i] = converted
            done = set(joined)
            which = [i for i in which if i not in done]
        for config in configs if which else ():
            convert = converter(config).convert
            for i in which:
                out[i] = _convert_one(convert, out[i])


def _convert_one(convert: Callable[[str], str], text: str) -> str:
    """``convert(text)``, but OpenCC ends a text at a NUL: each piece between them converted (no key holds one)."""
    return "\0".join(map(convert, text.split("\0"))) if "\0" in text else convert(text)


class UnifiedText(str):
    """A text :func:`unify` made: unify returns it unchanged.

    The steps of unification are not idempotent as a whole (the OpenCC round trip can
    change a word again), so a text is unified once and then carries the mark.
    ``UnifiedText(text)`` declares ``text`` unified as it is: a part cut from a unified
    text, say. Its methods (slicing, ``strip``...) return plain strings.
    """

    __slots__ = ()


def unify(text: str) -> UnifiedText:
    """Return the unified form of ``text``: the form fingerprints and comparisons see.

    A :class:`UnifiedText` is returned unchanged (the steps are not idempotent).

    The same result as :func:`simdup_es.reference.unify_reference`; :func:`unify_many` of batches of 64 takes
    about 0.4 of its time on the project corpus with OpenCC converting, 0.15 with the compiled core (it skips
    the OpenCC passes that cannot change a text and runs the others on flat tables, see :class:`Shortcuts`;
    ``benchmarks/bench_fingerprint.py`` measures both).

    >>> unify("  ＡＢＣ　軟體\\r\\n\\r\\n測試  ")
    'abc 软件\\n测试'
    """
    return unify_many([text])[0]


def unify_many(texts: Sequence[str]) -> list[UnifiedText]:
    """:func:`unify` of each text, each step over them all (see :func:`to_simplified_many`).

    A :class:`UnifiedText` is returned as it is. Steps that would not change a text are
    skipped, found for the whole batch at once by :func:`char_flags` and :func:`_needs_spacing`.
    """
    todo = [i for i, text in enumerate(texts) if not isinstance(text, UnifiedText)]
    out: list[UnifiedText] = list(texts)  # type: ignore[arg-type]  # the others replaced below
    for i, text in zip(todo, _unified([texts[i] for i in todo]), strict=True):
        out[i] = UnifiedText(text)
    return out


def _unified(texts: Sequence[str]) -> list[str]:
    """:func:`unify_many`'s steps, over plain strings."""
    out = [_nfkc(text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text) for text in texts]
    shortcuts = load_shortcuts()
    flags = char_flags(out, shortcuts)
    # The other flags stay right once the control characters are gone: they are
    # those of the characters that stay.
    for i in np.flatnonzero(flags & HAS_CONTROL).tolist():
        out[i] = CONTROL.sub("", out[i])
    _convert(out, flags, shortcuts)
    out = [text.casefold() for text in out]
    # (For one text alone, the check costs about what the split and join do.)
    for i in np.flatnonzero(_needs_spacing(out)).tolist() if len(out) > 1 else range(len(out)):
        # str.split() and the regular expressions' \s are the same white space, so
        # this does what _SPACES, _LINE_BREAKS and strip do, three times faster.
        out[i] = "\n".join([line for line in map(" ".join, map(str.split, out[i].split("\n"))) if line])
    return out


def _needs_spacing(texts: Sequence[str]) -> np.ndarray:
    """Whether each text holds white space other than single spaces and line breaks between other characters.

    Text without is left alone by the white-space steps of :func:`simdup_es.reference.unify_reference`.
    """
    # Joined by line breaks, a text's leading or trailing white space is next to one.
    space = lookup(space_table(), "\n" + "\n".join(texts) + "\n")
    one = space & 1
    values = space >> 1
    paired = one[1:] & one[:-1]
    values[1:] |= paired
    values[:-1] |= paired
    return _or_pieces(values, [n for t in texts for n in (1, len(t))] + [1])[1::2] > 0


