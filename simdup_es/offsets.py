"""Unified text with a map back to the text as the user gave it.

Fingerprints and comparisons see the unified text (:func:`simdup_es.text.unify`):
NFKC, Simplified script and mainland wording, case-folded, white space collapsed.
A reader must see what the author wrote. :func:`unify_mapped` returns the same
unified text (checked against :func:`~simdup_es.text.unify`) and, for every unified
character, the span of the original it came from, so any span of unified text
(a sentence, a copied passage) can be shown in the original characters.

Each step of unification is run on its own and records its *edits*: the places
where a piece of input became a piece of output of another length (``\\r\\n`` to
``\\n``, a run of spaces to one, an OpenCC phrase conversion such as U盘 to 随身碟).
Outside the edits a character maps to a character. OpenCC converts by forward
maximum matching over keys that hold no line break and no punctuation, so a text
cut at those converts piece by piece as it does whole (checked on every text: if
the pieces do not give the whole's result, the map falls back to coarser pieces);
a piece that changes length is aligned with its conversion by Levenshtein
opcodes, and a stretch the alignment cannot match one for one maps as a block.
Pure: str in, text and arrays out.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from itertools import accumulate, chain

import numpy as np
from rapidfuzz.distance import Levenshtein

from .opencc_tables import CONFIGS, JOIN, FlatTable, converter, load_shortcuts, chain_tables
from .text import CONTROL, HAS_CJK, HAS_CONTROL, NFKC_COMMON, char_flags, unify, unify_many

__all__ = ["Unified", "unify_mapped"]

log = logging.getLogger(__name__)

# (input start, input end, output start, output end) of a piece whose length changed.
Edit = tuple[int, int, int, int]

# Pieces longer than this are not aligned character by character (the alignment
# costs |a| * |b| / 64 words of memory); they map as one block.
_ALIGN_MAX = 4000
# Where OpenCC's pieces are cut: no key of its tables holds a line break, a space or this punctuation
# (and unify_mapped checks the result against unify's). Clauses: short pieces, quick to convert word by word.
_OPENCC_CUT = re.compile(r"[^\n ,.;:!?()。、「」『』“”]*[\n ,.;:!?()。、「」『』“”]?")
# A text longer than two chunks is mapped a chunk of about this many unified characters at a time (whole lines).
_CHUNK = 500
_LINE_BREAK = re.compile(r"\r\n?|\n")


class Unified:
    """A text as given (``original``), its unified form (``text``) and the map between them.

    ``starts[j]`` and ``ends[j]`` bound the original characters unified character ``j``
    came from (a block of several when a phrase changed length). A long text is mapped
    in chunks of whole lines, each when a span first falls in it (see :class:`_Chunks`):
    a 5 MB query whose copies cover a few pages maps those pages, not the whole text.
    """

    def __init__(self, original: str, text: str, starts: np.ndarray | None = None,
                 ends: np.ndarray | None = None) -> None:
        self.original = original
        self.text = text
        self._map = None if starts is None or ends is None else (starts, ends)
        self._chunks: _Chunks | None = None

    @property
    def starts(self) -> np.ndarray:
        return self._whole()[0]

    @property
    def ends(self) -> np.ndarray:
        return self._whole()[1]

    def _whole(self) -> tuple[np.ndarray, np.ndarray]:
        if self._map is None:
            self._map = _mapped_whole(self.original, self.text)
        return self._map

    def _at(self, j: int) -> tuple[int, int]:
        if self._map is None:
            try:
                if self._chunks is None:
                    self._chunks = _Chunks(self.original, self.text)
                return self._chunks.at(j)
            except _NotLineLocal:
                log.warning("offset map: unifying line by line differs from unify(); mapping the whole text")
        starts, ends = self._whole()
        return int(starts[j]), int(ends[j])

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of ``text[start:end]`` (an empty span maps to an empty one)."""
        if end <= start:
            at = self._at(start)[0] if start < len(self.text) else len(self.original)
            return at, at
        return self._at(start)[0], self._at(end - 1)[1]

    def spans(self, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
        """:meth:`span` of each."""
        return [self.span(s, e) for s, e in spans]

    def shown(self, start: int, end: int) -> str:
        """The original characters of ``text[start:end]``."""
        s, e = self.span(start, end)
        return self.original[s:e]


class _Chunks:
    """The map of a long text, made a chunk of whole lines at a time, each when first asked for.

    Unification works line by line: no step's change spans a line break (OpenCC's keys
    hold none, NFKC runs per line) but the joining of white space around one, which maps
    the line break between two unified lines to the run it replaced. So a stretch of whole
    lines maps within the text as it does alone, and the line break joining two chunks
    maps with the two lines around it. Which original line each unified line comes from
    is found by a cheap test (a line that is white space and control characters only
    unifies to nothing), checked on every chunk against the unified text; if the test is
    ever wrong, each line is unified to find them.
    """

    def __init__(self, original: str, unified: str, size: int = 0) -> None:
        self.original, self.unified = original, unified
        self.size = size or _CHUNK
        # Original line k is [bounds[k], bounds[k + 1]), unified line m [u_starts[m], u_starts[m + 1] - 1): arrays, as
        # lists of numbers and of lines they took some 100 bytes a line (a 5 MB text has 100,000 lines).
        self.bounds = _offsets(_LINE_BREAK.finditer(original), len(original))
        self.u_starts = _offsets(re.finditer("\n", unified), len(unified) + 1) if unified else np.zeros(1, np.int64)
        self.exact = False
        self.lock = threading.Lock()  # a served report's threads share the maps of stored texts
        bounds = self.bounds
        kept = np.fromiter((k for k in range(len(bounds) - 1)
                            if not _blank(original[int(bounds[k]) : int(bounds[k + 1])])), dtype=np.int64)
        if len(kept) != len(self.u_starts) - 1:
            kept = self._unified_lines()
        self._chunk_lines(kept)

    def _chunk_lines(self, kept: np.ndarray) -> None:
        self.kept = kept
        # Chunks: runs of unified lines of about ``size`` characters; first[c] is chunk c's first line.
        self.first, chars = [0], 0
        for m, length in enumerate(np.diff(self.u_starts).tolist()):  # each line's characters and its line break
            if chars >= self.size:
                self.first.append(m)
                chars = 0
            chars += length
        # Each chunk's starts and ends as the two rows of one array, in 32 bits where the text allows: objects
        # and 8-byte integers were most of what a long comparison's maps held.
        self.maps: dict[tuple[int, int], np.ndarray] = {}

    def _unified_lines(self) -> np.ndarray:
        """The original line of each unified line, by unifying each line (exact, as costly as unifying the text)."""
        bounds = self.bounds.tolist()
        done = unify_many([self.original[a:b] for a, b in zip(bounds, bounds[1:])])
        self.exact = True
        kept = [k for k, u in enumerate(done) if u]
        if [done[k] for k in kept] != (self.unified.split("\n") if self.unified else []):
            raise _NotLineLocal
        return np.array(kept, dtype=np.int64)

    def at(self, j: int) -> tuple[int, int]:
        """The original span of unified character ``j``."""
        m = int(np.searchsorted(self.u_starts, j, side="right")) - 1
        c = bisect_right(self.first, m) - 1
        lines = (self.first[c], self.first[c + 1] if c + 1 < len(self.first) else len(self.u_starts) - 1)
        if j >= self.u_starts[m + 1] - 1 and m + 1 == lines[1]:
            lines = (m, m + 2)  # the line break joining two chunks: the two lines around it
        with self.lock:
            found = self._map(lines)
        k = j - int(self.u_starts[lines[0]])
        return int(found[0, k]), int(found[1, k])

    def _map(self, lines: tuple[int, int]) -> np.ndarray:
        found = self.maps.get(lines)
        if found is None:
            first, last = lines[0], lines[1] - 1
            at = int(self.bounds[self.kept[first]])
            piece = self.original[at : int(self.bounds[self.kept[last] + 1])]
            expected = self.unified[int(self.u_starts[first]) : int(self.u_starts[last + 1]) - 1]
            got, starts, ends = _stepwise(piece)
            if got != expected and not self.exact:  # the cheap test named the wrong lines
                self._chunk_lines(self._unified_lines())
                return self._map(lines)
            if got != expected:
                starts, ends = _aligned_map(piece, expected)
            found = np.stack((starts, ends))
            found += at
            found = self.maps[lines] = found.astype(np.int32 if len(self.original) < 2**31 else np.int64)
        return found


def _offsets(breaks: Iterator[re.Match[str]], last: int) -> np.ndarray:
    """0, where each of ``breaks`` ends, and ``last``: where each line starts (and where one more would)."""
    return np.fromiter(chain((0,), (m.end() for m in breaks), (last,)), dtype=np.int64)


class _NotLineLocal(Exception):
    """Unifying line by line did not give the text's unified form (never seen): map the whole text."""


def _blank(line: str) -> bool:
    """Whether ``line`` unifies to nothing, near enough (:class:`_Chunks` checks): white space and control
    characters only."""
    return not line or line.isspace() or not CONTROL.sub("", line).strip()


def _identity(n: int) -> tuple[np.ndarray, np.ndarray]:
    starts = np.arange(n, dtype=np.int64)
    return starts, starts + 1


def _compose(starts: np.ndarray, ends: np.ndarray, edits: Sequence[Edit], n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """The map of a step's output to the original, from the map of its input and its edits.

    Each output character takes the original span of its input character (outside the
    edits) or of its edit's whole input block. Built segment by segment with numpy.
    """
    if not edits:
        return starts, ends
    lengths: list[int] = []
    lo: list[int] = []  # first input character of the segment's span (minus the output offset when sliding)
    hi: list[int] = []
    slide: list[int] = []  # 1: one for one (the input index moves with the output), 0: a block
    pos = out = 0
    for a, b, oa, ob in edits:
        lengths += [a - pos, ob - oa]
        lo += [pos - out, a if b > a else max(a - 1, 0)]
        hi += [pos - out, b - 1 if b > a else max(a - 1, 0)]
        slide += [1, 0]
        pos, out = b, ob
    lengths.append(len(starts) - pos)
    lo.append(pos - out)
    hi.append(pos - out)
    slide.append(1)
    counts = np.array(lengths, dtype=np.int64)
    assert int(counts.sum()) == n_out, (int(counts.sum()), n_out)
    steps = np.repeat(np.array(slide, dtype=np.int64), counts) * np.arange(n_out, dtype=np.int64)
    first = np.repeat(np.array(lo, dtype=np.int64), counts) + steps
    last = np.repeat(np.array(hi, dtype=np.int64), counts) + steps
    return starts[first], ends[last]


def _aligned(a: str, b: str, at_a: int, at_b: int) -> list[Edit]:
    """Edits turning ``a`` into ``b`` (which differ in length), placed at ``at_a``/``at_b``.

    Levenshtein opcodes: equal stretches and one-for-one replacements map character
    to character; each run of other operations becomes one block.
    """
    if len(a) > _ALIGN_MAX or len(b) > _ALIGN_MAX:
        return [(at_a, at_a + len(a), at_b, at_b + len(b))]
    blocks: list[list[int]] = []  # [src start, src end, dest start, dest end, whether lengths changed]
    # Edit operations one character at a time (opcodes would join ﬁｶﾞ -> fiガ into one replacement).
    for op in Levenshtein.editops(a, b):
        tag, src, dest = op.tag, op.src_pos, op.dest_pos
        src_end, dest_end = src + (tag != "insert"), dest + (tag != "delete")
        changed = int(tag != "replace")
        # Touching changes are one (ﬁ -> fi: replace ﬁ by f, insert i); so are a phrase's insertions
        # and deletions a character or two apart (线上 -> 在线: insert 在, keep 线, drop 上).
        if blocks and (src == blocks[-1][1] and dest == blocks[-1][3]
                       or changed and blocks[-1][4] and src - blocks[-1][1] <= 2 and dest - blocks[-1][3] <= 2):
            blocks[-1][1], blocks[-1][3] = src_end, dest_end
            blocks[-1][4] |= changed
        else:
            blocks.append([src, src_end, dest, dest_end, changed])
    blocks = [block for block in blocks if block[4]]  # one-for-one replacements map character to character
    for block in blocks:
        if block[0] == block[1]:  # an insertion alone: it belongs with the character before (or after)
            if block[0] > 0:
                block[0] -= 1
                block[2] -= 1
            else:
                block[1] += 1
                block[3] += 1
    return [(at_a + sa, at_a + sb, at_b + da, at_b + db) for sa, sb, da, db, _ in blocks]


def _piecewise(pieces: Sequence[str], convert: Callable[[str], str], align_equal: bool = False) -> tuple[str, list[Edit]]:
    """Each piece converted; edits where a piece changed length (aligned within it), or with ``align_equal``
    changed at all."""
    converted = list(map(convert, pieces))
    edits: list[Edit] = []
    changed = [k for k, (c, p) in enumerate(zip(converted, pieces)) if len(c) != len(p) or align_equal and c != p]
    if changed:
        at_in = list(accumulate(map(len, pieces), initial=0))
        at_out = list(accumulate(map(len, converted), initial=0))
        for k in changed:
            edits.extend(_aligned(pieces[k], converted[k], at_in[k], at_out[k]))
    return "".join(converted), edits


def _sub(pattern: re.Pattern[str], repl: str, text: str, changing: re.Pattern[str] | None = None) -> tuple[str, list[Edit]]:
    """``pattern.sub(repl, text)`` and its edits (one per match of another length).

    ``changing`` finds just the matches of another length (and no others), when most are not.
    """
    out = pattern.sub(repl, text)
    if len(out) == len(text) and (changing is not None or not any(len(m.group()) != len(repl) for m in pattern.finditer(text))):
        return out, []
    edits: list[Edit] = []
    shift = 0  # output offset minus input offset so far
    for m in (changing or pattern).finditer(text):
        a, b = m.span()
        if b - a != len(repl):
            edits.append((a, b, a + shift, a + shift + len(repl)))
            shift += len(repl) - (b - a)
    return out, edits


def _composes_backwards(ch: str) -> bool:
    """Whether NFKC may join ``ch`` to the character before it: a combining mark, or a Hangul vowel or final."""
    return bool(unicodedata.combining(ch)) or "\u1160" <= ch <= "\u11ff" or "\ud7b0" <= ch <= "\ud7ff"


@lru_cache(maxsize=1)
def _unstable() -> re.Pattern[str]:
    """A character NFKC changes or may join to the one before, then any more of them, after one character
    (a run of them and the character they may join)."""
    chars = []
    for c in map(chr, range(0x30000)):  # every character NFKC changes is below U+30000
        n = unicodedata.normalize("NFKC", c)
        if n != c or (n and _composes_backwards(n[0])):
            chars.append(re.escape(c))
    return re.compile(".?[" + "".join(chars) + "]+", re.S)


def _clusters(line: str) -> list[str]:
    """``line`` cut into pieces that normalise alone as they do in the line: each run of characters NFKC
    changes or joins, with the character before it (ﬁ -> fi, ｶﾞ -> ガ), and the stretches between."""
    out: list[str] = []
    pos = 0
    for m in _unstable().finditer(line):
        if m.start() > pos:
            out.append(line[pos : m.start()])
        out.extend(_split_run(m.group()))
        pos = m.end()
    if pos < len(line):
        out.append(line[pos:])
    return out


def _split_run(run: str) -> list[str]:
    """A run of changing characters, cut before each whose NFKC form does not join the one before."""
    out: list[str] = []
    for ch in run:
        n = unicodedata.normalize("NFKC", ch)
        if out and n and _composes_backwards(n[0]):
            out[-1] += ch
        else:
            out.append(ch)
    return out


def _nfkc_step(text: str) -> tuple[str, list[Edit]]:
    """NFKC line by line; a line that is not normalised, piece by piece (see :func:`_clusters`)."""
    for wide, narrow in NFKC_COMMON:  # one for one (full-width punctuation): the map stays
        if wide in text:
            text = text.replace(wide, narrow)
    if unicodedata.is_normalized("NFKC", text):
        return text, []
    out: list[str] = []
    edits: list[Edit] = []
    at_in = at_out = 0
    for line in text.split("\n"):
        if unicodedata.is_normalized("NFKC", line):
            done = line
        elif (done := unicodedata.normalize("NFKC", line)) != line:
            joined, piece_edits = _piecewise(_clusters(line), lambda p: unicodedata.normalize("NFKC", p),
                                             align_equal=True)
            if joined == done:
                edits.extend((a + at_in, b + at_in, c + at_out, d + at_out) for a, b, c, d in piece_edits)
            else:
                edits.extend(_aligned(line, done, at_in, at_out))
        out.append(done)
        at_in += len(line) + 1
        at_out += len(done) + 1
    return "\n".join(out), edits


def _opencc_step(text: str, config: str) -> tuple[str, list[Edit]]:
    """One OpenCC conversion, piece by piece (cut where no key reaches, checked against the whole).

    A piece whose length changed (or that may hold words that did, :func:`_resizing`) is
    converted again word by word (:func:`~simdup_es.opencc_tables.chain_tables`): each word
    that changed length maps as a block (U盘 -> 随身碟), the rest character for character.
    Without the tables, or if they do not give OpenCC's result, the piece is aligned.
    """
    if not char_flags([text], load_shortcuts())[0] & HAS_CJK:  # no key of the three configs without a CJK character
        return text, []
    which = _config_for(text, config)
    if which is None:
        return text, []
    convert = converter(which).convert
    pieces = _OPENCC_CUT.findall(text)
    out = _convert_pieces(convert, pieces)
    edits: list[Edit] = []
    # A clause of the same length may still hold a word that grew and one that shrank (字串 -> 字符串 beside
    # 識別符號 -> 标识符): such a clause is mapped word by word too. Only a clause holding a word of such a key
    # or value, before or after conversion, can (_resizing); few clauses do.
    resizing = _resizing(config)
    changed = [k for k, (a, b) in enumerate(zip(pieces, out))
               if len(a) != len(b) or a != b and resizing is not None and resizing.search(a + "\0" + b)]
    if changed:
        at_in = list(accumulate(map(len, pieces), initial=0))
        at_out = list(accumulate(map(len, out), initial=0))
        for k in changed:
            edits.extend((a + at_in[k], b + at_in[k], c + at_out[k], d + at_out[k])
                         for a, b, c, d in _word_edits(pieces[k], out[k], config))
    # Converted whole, the text would come out the same (no key spans a cut); unify_mapped checks
    # its result against unify's.
    return "".join(out), edits


@lru_cache(maxsize=4)
def _resizing(config: str) -> re.Pattern[str] | None:
    """The words of ``config``'s chain that a key of another length turns into, or is turned from
    (``None`` without the flat tables): a clause converted without any of them in it, nor in its
    conversion, kept each word's length."""
    tables = chain_tables(config)
    if tables is None:
        return None
    words = {w for table in tables[1:] for k, v in table.values.items() if len(k) != len(v) for w in (k, v) if w}
    return re.compile("|".join(map(re.escape, sorted(words, key=len, reverse=True))))


def _config_for(text: str, config: str) -> str | None:
    """The config to run, as :func:`simdup_es.text.to_simplified` runs it: without its normalization
    (flat tables, faster) when the text holds no character that normalization changes; none (``None``)
    for t2s when the text holds no character t2s changes."""
    shortcuts = load_shortcuts()
    if shortcuts is None:
        return config
    mark = shortcuts.mark(text)
    if mark >= 2:
        return config
    return None if config == "t2s" and mark == 0 else shortcuts.main[config]


def _convert_pieces(convert: Callable[[str], str], pieces: list[str]) -> list[str]:
    """Each piece converted: joined by a character no key holds, in one call (one call per piece costs
    ten times more); one by one if a piece holds it or the join does not come apart as it went in."""
    if all(JOIN not in p for p in pieces) if len(pieces) < 8 else JOIN not in "".join(pieces):
        out = _convert_nul(convert, JOIN.join(pieces)).split(JOIN)
        if len(out) == len(pieces):
            return out
    return [_convert_nul(convert, p) for p in pieces]


def _convert_nul(convert: Callable[[str], str], text: str) -> str:
    """OpenCC stops at a NUL (see :func:`simdup_es.text._convert_one`): each piece between them converted."""
    return "\0".join(map(convert, text.split("\0"))) if "\0" in text else convert(text)


Spans = list[tuple[int, int]]


@lru_cache(maxsize=1 << 15)
def _word_edits(piece: str, converted: str, config: str) -> tuple[Edit, ...]:
    """Edits of one converted piece: through the chain's tables word by word when they give OpenCC's result.

    As OpenCC does, the segmentation table cuts the piece into segments (its words) and each
    table of the chain converts every segment on its own: no key spans two segments.
    Plain lists, not arrays: pieces are clauses, and numpy's per-call cost would dominate.
    Kept for the next text that holds the same clause (phrases recur: the stored texts a
    server maps again and again, a document's repeated lines).
    """
    tables = chain_tables(config)
    if tables is not None:
        text, spans, pos = "", [], 0
        for word in _segments(tables[0], piece):
            segment = word, [(i, i + 1) for i in range(pos, pos + len(word))]
            pos += len(word)
            for table in tables[1:]:
                words = _converted_words(table, *segment)
                segment = "".join(w for w, _ in words), [span for _, ws in words for span in ws]
            text += segment[0]
            spans += segment[1]
        if text == converted:
            return tuple(_span_edits(spans, 0, 0))
    return tuple(_aligned(piece, converted, 0, 0))


def _segments(table: FlatTable, text: str) -> list[str]:
    """OpenCC's segmentation (maximum matching): each key of ``table`` found, and each run of characters
    between them, one segment."""
    out: list[str] = []
    run = ""
    for word, _ in table.words(text):
        if word in table.values:
            if run:
                out.append(run)
                run = ""
            out.append(word)
        else:
            run += word
    if run:
        out.append(run)
    return out


def _converted_words(table: FlatTable, text: str, spans: Spans) -> list[tuple[str, Spans]]:
    """Each word of ``text`` converted, with the piece's span of each of its characters (``spans`` per
    character of ``text``); the characters of a word of another length each come from all of it."""
    out: list[tuple[str, Spans]] = []
    pos = 0
    for word, got in table.words(text):
        n, m = len(word), len(got)
        out.append((got, spans[pos : pos + n] if n == m else [(spans[pos][0], spans[pos + n - 1][1])] * m))
        pos += n
    return out


def _span_edits(spans: Sequence[tuple[int, int]], at_in: int, at_out: int) -> list[Edit]:
    """A piece's map (output character -> input span) as edits: each group of output characters with one
    input span that is not one character for one, and each stretch of input no output character came from."""
    edits: list[Edit] = []
    j, n = 0, len(spans)
    expected = 0  # the input character a one-for-one output character would come from
    while j < n:
        s, e = spans[j]
        k = j + 1
        while k < n and spans[k] == (s, e):
            k += 1
        if s > expected:
            edits.append((at_in + expected, at_in + s, at_out + j, at_out + j))
        if not (k - j == 1 and e - s == 1):
            edits.append((at_in + s, at_in + e, at_out + j, at_out + k))
        expected = e
        j = k
    return edits


@lru_cache(maxsize=1)
def _expanding_case() -> re.Pattern[str]:
    """The characters whose case folding is longer than one (ß -> ss; all in the BMP)."""
    return re.compile("[" + "".join(re.escape(chr(c)) for c in range(0x10000) if len(chr(c).casefold()) != 1) + "]")


def _casefold_step(text: str) -> tuple[str, list[Edit]]:
    folded = text.casefold()
    if len(folded) == len(text):
        return folded, []
    edits: list[Edit] = []
    shift = 0
    for m in _expanding_case().finditer(text):
        n = len(m.group().casefold())
        edits.append((m.start(), m.end(), m.start() + shift, m.start() + shift + n))
        shift += n - 1
    return folded, edits


def _cr_step(text: str) -> tuple[str, list[Edit]]:
    return _sub(_CR, "\n", text) if "\r" in text else (text, [])


def _control_step(text: str) -> tuple[str, list[Edit]]:
    return _sub(CONTROL, "", text) if char_flags([text], load_shortcuts())[0] & HAS_CONTROL else (text, [])


def _space_step(text: str) -> tuple[str, list[Edit]]:
    """Runs of white space to one space, or one line break if they hold one; none at either end; as
    :func:`simdup_es.text.unify` does it (split and join), the edits from the runs that change."""
    out = "\n".join([line for line in map(" ".join, map(str.split, text.split("\n"))) if line])
    if out == text:
        return out, []
    spans = np.array([m.span() for m in _WHITE_EDIT.finditer(text)], dtype=np.int64).reshape(-1, 2)
    a, b = spans[:, 0], spans[:, 1]
    repl = np.where((a == 0) | (b == len(text)), 0, 1)  # a space or a line break; nothing at the ends
    keep = (b - a) != repl
    a, b, repl = a[keep], b[keep], repl[keep]
    shift = np.concatenate(([0], np.cumsum(repl - (b - a))[:-1]))
    starts = a + shift
    return out, list(zip(a.tolist(), b.tolist(), starts.tolist(), (starts + repl).tolist()))


_CR = re.compile(r"\r\n?")
# The white space _space_step changes: runs of two or more, single characters other than a space or line
# break, and any run at either end of the text.
_WHITE_EDIT = re.compile(r"^\s+|\s+$|\s{2,}|[^\S \n]")

_STEPS: tuple[Callable[[str], tuple[str, list[Edit]]], ...] = (
    _cr_step,
    _nfkc_step,
    _control_step,
    *(lambda t, c=config: _opencc_step(t, c) for config in CONFIGS),  # type: ignore[misc]
    _casefold_step,
    _space_step,
)


def unify_mapped(text: str, unified: str | None = None) -> Unified:
    """:func:`~simdup_es.text.unify` of ``text``, and where each of its characters came from.

    The unified text is :func:`~simdup_es.text.unify`'s, character for character
    (fingerprints and comparisons are unchanged): the steps' result is checked against
    it (``unified``, when the caller has it already, saves computing it again), and if
    they ever differ the map falls back to an alignment of the whole text. Computing
    the map costs a few times what unifying does, so it is made only for texts that are shown.

    >>> u = unify_mapped("ＡＢＣ　軟體\\r\\n\\r\\n測試")
    >>> u.text, u.shown(4, 6), u.shown(7, 9)
    ('abc 软件\\n测试', '軟體', '測試')
    """
    expected = unify(text) if unified is None else unified
    if len(text) > 2 * _CHUNK:
        return Unified(text, expected)  # mapped where spans fall
    return Unified(text, expected, *_mapped_whole(text, expected))


def _mapped_whole(text: str, expected: str) -> tuple[np.ndarray, np.ndarray]:
    """The map of the whole of ``text``, whose unified form is ``expected``."""
    current, starts, ends = _stepwise(text)
    if current != expected:  # a step diverged from unify: map what unify gives, coarsely
        log.warning("offset map: the stepwise unification differs from unify(); aligning the whole text")
        return _aligned_map(text, expected)
    return starts, ends


def _aligned_map(text: str, expected: str) -> tuple[np.ndarray, np.ndarray]:
    """A coarse map of ``text`` to ``expected`` by aligning them."""
    starts, ends = _identity(len(text))
    return _compose(starts, ends, _aligned(text, expected, 0, 0) if len(text) != len(expected) else [], len(expected))


def _stepwise(text: str) -> tuple[str, np.ndarray, np.ndarray]:
    """The steps of unification one after the other, and the map their edits make."""
    current = text
    starts, ends = _identity(len(text))
    for step in _STEPS:
        current, edits = step(current)
        starts, ends = _compose(starts, ends, edits, len(current))
    return current, starts, ends
