"""The encoding of a text document's bytes: UTF-8 first, then the legacy encodings, or a refusal that names them.

Pure: bytes in, ``(text, encoding)`` out. The order, and why:

1. A byte-order mark (UTF-8, UTF-16, UTF-32), else UTF-8 itself: a text that is valid
   UTF-8 is nearly never meant as anything else.
2. UTF-16 without a mark, when there are NUL bytes (ASCII letters put one beside each of
   theirs; so do some CJK characters): little- and big-endian are both read, and the one
   made of characters a text holds (:func:`_usual_share`) is taken; other NUL bytes mean
   a binary file.
3. Chinese, GB18030 (GBK and GB2312 are parts of it) and Big5 (as Windows writes it,
   cp950): their byte ranges overlap, so the same bytes often read in both. Each
   reading is judged by the share of its characters past ASCII that are common Han
   characters by the encodings' own standards (GB2312's first level, 3,755 characters;
   Big5's frequently used ones, 5,401) or CJK punctuation: a text read in its own
   encoding is nearly all such, a text read in the other a random mix of rare characters
   and symbols (:func:`common_share`).
   The reading with the larger share wins when it is plausible and clearly ahead, and
   most of its Han characters stand beside others, as in Chinese text (a Western text
   read as Chinese turns each accented letter and the next byte into one Han character,
   alone between Latin letters); two plausible readings close together are a refusal
   that names both.
4. Anything else (Shift_JIS, EUC-KR, the Latin code pages, ...): charset-normalizer's
   best match, or a refusal when it has none. A Western text with a few accented letters
   reads alike in several Latin code pages; where windows-1252 reads it as well as the
   best match, it is taken, as the most used of them (and what HTML reads Latin-1 as).

Nothing is ever decoded with replacement characters: a file that no rule reads is
refused, with the encodings it might be in, so that no mojibake is indexed.
"""

from __future__ import annotations

import codecs
import math
import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["EncodingError", "common_share", "decode_text"]

_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
#: The Chinese legacy encodings read by rule 3, by the name a user knows them by.
CHINESE = {"gb18030": "GB18030", "cp950": "Big5"}
#: Share of a reading's Han characters that must be common for it to be taken (the project corpus read in
#: its own encoding: never below 0.75 in 8,289 texts of 15 characters and more; read in the other, a median of 0.57).
MIN_COMMON = 0.7
#: How far ahead of the other Chinese reading the taken one must be.
MARGIN = 0.15
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]")
_NON_ASCII = re.compile("[^\x00-\x7f]")
_PUNCTUATION = frozenset("—―‘’“”…·•‧、")
_SAMPLE = 1 << 20  # bytes judged by rules 3 and 4: the rest only has to decode


@dataclass(frozen=True)
class EncodingError(ValueError):
    """No encoding reads the bytes with confidence: ``reason`` says why, naming the candidates."""

    reason: str

    def __str__(self) -> str:
        return self.reason


@lru_cache(maxsize=1)
def _common() -> frozenset[str]:
    """The common Han characters of GB2312 (level 1: rows 0xB0-0xD7) and Big5 (0xA440-0xC67E)."""
    chars: set[str] = set()
    trails_gb = range(0xA1, 0xFF)
    for lead in range(0xB0, 0xD8):
        chars.update(bytes([lead, t]).decode("gb2312", "ignore") for t in trails_gb)
    trails_big5 = [*range(0x40, 0x7F), *range(0xA1, 0xFF)]
    for lead in range(0xA4, 0xC7):
        chars.update(bytes([lead, t]).decode("big5", "ignore") for t in trails_big5 if (lead << 8 | t) <= 0xC67E)
    chars.discard("")
    return frozenset(chars)


def common_share(text: str) -> float | None:
    """The share of ``text``'s characters past ASCII that Chinese text is made of: common Han characters
    (:func:`_common`), CJK punctuation, full-width forms, box drawing and the punctuation GB2312 and Big5
    share; ``None`` without any."""
    rest = _NON_ASCII.findall(text)
    if not rest:
        return None
    common = _common()
    return sum(c in common or c in _PUNCTUATION or "\u3000" <= c < "\u3040" or "\uff00" <= c < "\uff60"
               or "\u2500" <= c < "\u2580" for c in rest) / len(rest)


def _usual_share(text: str) -> float:
    """The share of ``text``'s characters that texts are made of: ASCII, Latin, Greek, Cyrillic, punctuation,
    CJK symbols, kana, Hangul, common Han (:func:`_common`), full-width forms.

    A text read with the wrong byte order is a random draw from the 65,536 code points, about a third of them such.
    """
    if not text:
        return 0.0
    common = _common()
    usual = sum(1 for c in text if ord(c) < 0x530 or 0x2000 <= ord(c) < 0x2070 or 0x3000 <= ord(c) < 0x3100
                or 0xAC00 <= ord(c) < 0xD7A4 or 0xFF00 <= ord(c) < 0xFFF0 or c in common)
    return usual / len(text)


def _utf16(data: bytes) -> tuple[str, str] | None:
    """Rule 2: ``data`` read as UTF-16 without a byte-order mark, ``None`` when no byte order reads as text."""
    readings = {codec: text for codec in ("utf-16-le", "utf-16-be") if (text := _strict(data, codec)) is not None}
    scored = sorted(((_usual_share(text[:_SAMPLE // 2]), codec) for codec, text in readings.items()), reverse=True)
    if not scored or scored[0][0] < 0.9 or (len(scored) > 1 and scored[1][0] > scored[0][0] - 0.3):
        return None
    return readings[scored[0][1]], scored[0][1]


def _name(codec: str) -> str:
    return CHINESE.get(codec) or codecs.lookup(codec).name.upper().replace("_", "-")


def _strict(data: bytes, codec: str) -> str | None:
    try:
        return data.decode(codec)
    except UnicodeDecodeError:
        return None


def _in_runs(text: str) -> bool:
    """Whether most Han characters of ``text`` have a Han or CJK neighbour, as in Chinese text."""
    han = neighboured = 0
    for match in _HAN.finditer(text):
        han += 1
        at = match.start()
        before, after = text[at - 1 : at], text[at + 1 : at + 2]
        neighboured += any(ch and (ord(ch) >= 0x2E80) for ch in (before, after))
    return neighboured * 2 >= han


@dataclass(frozen=True)
class _Reading:
    """A reading of the bytes: the text, its codec, and another codec that reads them as plausibly, if any."""

    text: str
    codec: str
    rival: str | None = None
    alone: bool = False  # its Han characters are common, but most stand alone between other letters


def _chinese(data: bytes) -> _Reading | None:
    """Rule 3: the plausible Chinese reading of ``data`` (with the other when it is as plausible), or ``None``."""
    readings = {codec: text for codec in CHINESE if (text := _strict(data, codec)) is not None}
    scored = sorted(((common_share(text[:_SAMPLE]), codec) for codec, text in readings.items()),
                    key=lambda s: -1.0 if s[0] is None else s[0], reverse=True)
    if not scored:
        return None
    (best, codec), *rest = scored
    if best is None:  # no Han character in either reading: only the same text either way is safe
        return _Reading(readings[codec], codec) if len(set(readings.values())) == 1 else None
    if best < MIN_COMMON:
        return None
    rival = next((other for share, other in rest
                  if readings[other] != readings[codec] and share is not None and share > best - MARGIN), None)
    return _Reading(readings[codec], codec, rival, alone=not _in_runs(readings[codec][:_SAMPLE]))


#: Codecs of Japanese and Korean: multi-byte like the Chinese ones, so their bytes often read as Chinese too.
_JA_KO = frozenset({"cp932", "shift_jis", "shift_jis_2004", "shift_jisx0213", "euc_jp", "euc_jis_2004",
                    "euc_jisx0213", "cp949", "euc_kr", "johab", "iso2022_jp", "iso2022_kr"})
_GB = frozenset({"gb18030", "gbk", "gb2312", "hz"})
_BIG5 = frozenset({"cp950", "big5", "big5hkscs"})
#: How much less mess (charset-normalizer's chaos) a Japanese or Korean reading must have than every Chinese one.
_CLEARLY = 0.05


@dataclass(frozen=True)
class _Detected:
    """What charset-normalizer makes of the bytes: its best codec, and how messy it finds each reading."""

    codec: str | None
    chaos: dict[str, float]  # by codec, and "gb18030"/"cp950" for the least messy reading of each Chinese family

    def clearly(self, codec: str, *others: str) -> bool:
        """Whether charset-normalizer finds ``codec``'s reading clearly less messy than each of ``others``'."""
        mine = self.chaos.get(codec, math.inf)
        return all(mine + _CLEARLY < self.chaos.get(o, math.inf) for o in others)


def _detected(data: bytes) -> _Detected:
    """Rule 4: charset-normalizer's view of ``data``; windows-1252 where it reads the bytes as well as the best."""
    from charset_normalizer import from_bytes

    # Half-width katakana, which Japanese text seldom holds, are what Big5 and accented capitals read as in Shift_JIS.
    # UTF-16 and -32 without a byte-order mark or a NUL byte are taken only when they read as text (rule 2).
    matches = [m for m in from_bytes(data[:_SAMPLE]) if not _half_width_kana(str(m))
               and (not m.encoding.startswith("utf_") or m.encoding == "utf_8" or _usual_share(str(m)) >= 0.9)]
    if not matches:
        return _Detected(None, {})
    best = matches[0]
    codec = codecs.lookup(best.encoding).name
    if codec not in _JA_KO and any("cp1252" in m.could_be_from_charset and m.chaos <= best.chaos + 0.01
                                   for m in matches):
        codec = "cp1252"
    chaos: dict[str, float] = {}
    for m in reversed(matches):  # the least messy last, so it stays
        names = {codecs.lookup(m.encoding).name, *m.could_be_from_charset}
        names |= {"gb18030"} if _GB & names else {"cp950"} if _BIG5 & names else set()
        chaos.update(dict.fromkeys(names, m.chaos))
    chaos.setdefault(codec, best.chaos)
    return _Detected(codec, chaos)


def _half_width_kana(text: str) -> bool:
    """Whether most of ``text``'s characters past ASCII are half-width katakana."""
    rest = _NON_ASCII.findall(text)
    return sum("\uff61" <= c < "\uffa0" for c in rest) * 2 > len(rest)


def _unclear(*names: str | None) -> EncodingError:
    given = [n for n in names if n]
    listed = " or ".join(dict.fromkeys(_name(n) for n in given))
    return EncodingError(f"is not UTF-8, and which encoding it is in is unclear ({listed}: the bytes read as text in "
                         f"each): convert it to UTF-8 first (iconv -f {_name(given[0])} -t UTF-8)")


def _legacy(data: bytes) -> tuple[str, str]:
    """Rules 3 and 4 reconciled.

    A plausible Chinese reading stands, unless charset-normalizer finds a Japanese or Korean one clearly less
    messy (then which is unclear), or its Han characters stand alone (a Western text's accented letters?). Two
    Chinese readings alike are settled by charset-normalizer when it finds one clearly less messy. Without a
    Chinese reading (or with two alike and a Japanese or Korean one clearly better), charset-normalizer's.
    """
    chinese = _chinese(data)
    detected = _detected(data)
    ja_ko = detected.codec if detected.codec in _JA_KO and detected.clearly(detected.codec, *CHINESE) else None
    if chinese is not None and (chinese.alone or (ja_ko and chinese.rival is None)):
        raise _unclear(chinese.codec, detected.codec)
    if chinese is not None and chinese.rival is None:
        return chinese.text, chinese.codec
    if chinese is not None and chinese.rival is not None and not ja_ko:
        for codec, other in ((chinese.codec, chinese.rival), (chinese.rival, chinese.codec)):
            if detected.clearly(codec, other):
                return _strict(data, codec) or "", codec
        raise _unclear(chinese.codec, chinese.rival)
    if detected.codec is None:
        raise EncodingError("is not UTF-8, and no encoding reads it as text: convert it to UTF-8 first")
    if detected.codec in _GB | _BIG5:  # rule 3 found no plausible Chinese reading: it would be mojibake
        raise EncodingError(f"is not UTF-8; read as {_name(detected.codec)}, its characters make no sense: convert "
                            "it to UTF-8 first")
    text = _strict(data, detected.codec)
    if text is None:
        raise _unclear(detected.codec)
    return text, detected.codec


def decode_text(data: bytes) -> tuple[str, str]:
    """``(text, encoding)`` of a text document's bytes (see the module docstring); ``EncodingError`` if unclear.

    ``EncodingError`` is also raised for bytes that are no text (NUL bytes outside UTF-16).
    """
    for bom, codec in _BOMS:
        if data.startswith(bom):
            text = _strict(data, codec)
            if text is None:
                raise EncodingError(f"starts as {_name(codec)} text (byte-order mark) but has bytes that are not: "
                                    "convert it to UTF-8 first")
            return text, codec
    if b"\x00" in data[:8192]:
        found = _utf16(data)
        if found is None:
            raise EncodingError("looks binary (contains NUL bytes), not a text document")
        return found
    text = _strict(data, "utf-8")
    if text is not None:
        return text, "utf-8"
    return _legacy(data)
