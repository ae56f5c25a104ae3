"""Fingerprint levels below the document: parts and sentence keys (issue 11).

The document fingerprint finds whole-document near-duplicates (Hamming distance
<= 3). It cannot find a document that was edited by more than a few percent, or a
passage copied into a longer document: the changed or foreign text moves most of
the 64 bits. Two finer levels are kept beside it, each for a kind of copy the
coarser one misses:

- **parts**: paragraphs (lines of unified text), very short ones merged with their
  neighbours until a part has ``min_units``, long ones cut into overlapping
  windows of whole sentences of about ``window_units``. Each part gets a 64-bit
  SimHash with the document's tokens and weights (the same :class:`Fingerprinter`)
  and is looked up with the same 8 blocks and 5-of-8 rule. A part survives edits
  elsewhere in the document and, being a SimHash, small edits inside it (a word
  replaced, a synonym, punctuation, a regional word after script conversion).
- **sentence keys**: a 64-bit hash of each sentence of at least
  ``sentence_min_units`` units, over its units only (no punctuation or spaces;
  the text is unified, so one script and case). Exact, so it is the finest and
  most selective level: one copied sentence inside a long host document is
  found, whatever surrounds it, and a 30 % passage of a source inside an
  unrelated document shares every one of its sentences. Short sentences are
  left out: headings and option names recur across unrelated documents.

Everything here is pure: text in, numbers out. Offsets and sentence indices refer
to the unified text (:func:`simdup_es.text.unify`), like the comparison matrix's.
"""

from __future__ import annotations

import array
import bisect
import functools
import itertools
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

import xxhash

from .config import require_ints
from .errors import ConfigError
from .fingerprint import Doc, Fingerprinter, Result
from .sentences import Sentence, _split_lines_many, units
from .text import unify_many

T = TypeVar("T")

# Documents per worker job: each brings its parts, about as much work again.
_DOCS_PER_CHUNK = 32

__all__ = ["Levels", "Part", "PartParams", "PartPrinter", "SentenceKey", "sentence_keys", "split_parts"]


@dataclass(frozen=True)
class PartParams:
    """How a document is cut into parts and which sentences get a key.

    Attributes
    ----------
    min_units:
        Consecutive paragraphs shorter than this are merged into one part: a
        heading or a one-line paragraph carries too few words for a SimHash that
        means anything (a two-word part collides with any other two-word part
        sharing its heavier word).
    window_units:
        Target size of a window cut from a long paragraph (or merged run). Windows
        are whole sentences; about 100 units is a short paragraph, small enough
        that a 20 % edit of the document leaves most windows untouched.
    max_units:
        Paragraphs longer than this are cut into windows; shorter ones stay one part.
    overlap:
        Share of a window repeated in the next one (0 = adjacent windows). With
        half a window of overlap, a passage of ``window_units`` copied anywhere
        covers one of the windows at least halfway.
    sentence_min_units:
        Sentences with fewer units get no sentence key.
    with_parts:
        ``False`` cuts no parts: the levels are the sentence keys alone
        (``simdup index --levels keys``).
    """

    min_units: int = 40
    window_units: int = 100
    max_units: int = 160
    overlap: float = 0.5
    sentence_min_units: int = 8
    with_parts: bool = True

    def __post_init__(self) -> None:
        require_ints(self, ("min_units", "window_units", "max_units", "sentence_min_units"))
        if self.max_units < self.window_units:
            raise ConfigError(f"max_units ({self.max_units}) must be at least window_units ({self.window_units})")
        if not 0.0 <= self.overlap < 1.0:
            raise ConfigError(f"overlap must be in [0, 1), got {self.overlap}")


@dataclass(frozen=True, slots=True)
class Part:
    """Sentences ``first .. stop-1`` of a unified text: characters ``start .. end``."""

    first: int
    stop: int
    start: int
    end: int
    units: int


@dataclass(frozen=True, slots=True)
class SentenceKey:
    """The exact key of sentence ``index`` (``units`` long)."""

    key: int
    index: int
    units: int


@dataclass(frozen=True)
class Levels:
    """A document's part fingerprints and sentence keys, as a store keeps them.

    ``parts[i]`` has fingerprint ``fingerprints[i]`` (``None`` where the part has no
    content word, e.g. only numbers and stop words). ``units`` is the whole text's.
    """

    version: str
    units: int
    # Tuples, or sequences equal to them whose objects are made on first use (from a
    # worker; the keys always).
    sentences: Sequence[Sentence]
    parts: Sequence[Part]
    fingerprints: tuple[int | None, ...]
    keys: Sequence[SentenceKey]

    def stored(self) -> tuple[list[int], list[int]]:
        """What a store indexes: the part fingerprints (without ``None``) and the distinct sentence keys."""
        return [f for f in self.fingerprints if f is not None], sorted(set(self.key_values()))

    def key_values(self) -> list[int]:
        """The value of each sentence key, in order (without making the key objects)."""
        return self.keys.values() if isinstance(self.keys, _Keys) else [k.key for k in self.keys]


def _paragraphs(text: str, sentences: Sequence[Sentence]) -> list[tuple[int, int]]:
    """Sentence index ranges ``(first, stop)`` of the lines of ``text``."""
    out: list[tuple[int, int]] = []
    first = 0
    for k, (this, after) in enumerate(itertools.pairwise(sentences), 1):
        if text.find("\n", this.end, after.start) >= 0:
            out.append((first, k))
            first = k
    if sentences:
        out.append((first, len(sentences)))
    return out


def _windows(sentences: Sequence[Sentence], first: int, stop: int, params: PartParams) -> list[tuple[int, int]]:
    """Windows of whole sentences of about ``window_units`` over ``first .. stop-1``, overlapping."""
    step_units = max(1, round(params.window_units * (1.0 - params.overlap)))
    out: list[tuple[int, int]] = []
    i = first
    while True:
        j, got = i, 0
        while j < stop and (got < params.window_units or j == i):
            got += sentences[j].n_units
            j += 1
        # A last window shorter than half a window is folded into the previous one.
        if out and j == stop and got < params.window_units // 2:
            out[-1] = (out[-1][0], stop)
            break
        out.append((i, j))
        if j == stop:
            break
        # Advance by about step_units, at least one sentence, never past this window's end.
        nxt, moved = i, 0
        while nxt < j - 1 and moved < step_units:
            moved += sentences[nxt].n_units
            nxt += 1
        i = max(nxt, i + 1)
    return out


def split_parts(text: str, sentences: Sequence[Sentence], params: PartParams = PartParams()) -> list[Part]:
    """Cut a unified text, already split into ``sentences``, into parts.

    A run shorter than ``min_units`` takes in the next paragraph (line), and a
    short paragraph joins the run before it while that stays within
    ``max_units``; runs longer than ``max_units`` become overlapping windows. Every sentence
    is in at least one part; a text without sentences has no part.
    """
    before = list(itertools.accumulate((s.n_units for s in sentences), initial=0))  # units before each sentence
    return _parts(sentences, _paragraphs(text, sentences), before, params)


def _parts(sentences: Sequence[Sentence], paragraphs: Iterable[tuple[int, int]], before: Sequence[int],
           params: PartParams) -> list[Part]:
    """:func:`split_parts` given the paragraphs and where each sentence's units start (``before``, any origin)."""
    runs: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    got = 0
    for first, stop in paragraphs:
        n = before[stop] - before[first]
        if cur is None:
            cur, got = (first, stop), n
        elif got < params.min_units or (n < params.min_units and got + n <= params.max_units):
            cur, got = (cur[0], stop), got + n
        else:
            runs.append(cur)
            cur, got = (first, stop), n
    if cur is not None:
        if runs and got < params.min_units:  # a short tail joins the run before it
            runs[-1] = (runs[-1][0], cur[1])
        else:
            runs.append(cur)
    parts: list[Part] = []
    for first, stop in runs:
        n = before[stop] - before[first]
        spans = [(first, stop)] if n <= params.max_units else _windows(sentences, first, stop, params)
        for a, b in spans:
            parts.append(Part(a, b, sentences[a].start, sentences[b - 1].end, before[b] - before[a]))
    return parts


def sentence_key(sentence: Sentence) -> int:
    """64-bit key of a sentence: XXH3-64 of its units joined (punctuation and spaces do not count)."""
    return xxhash.xxh3_64_intdigest("\x1f".join(units(sentence.text)).encode("utf-8"))


def sentence_keys(sentences: Sequence[Sentence], params: PartParams = PartParams()) -> list[SentenceKey]:
    """Keys of the sentences with at least ``params.sentence_min_units`` units, in text order."""
    return [SentenceKey(sentence_key(s), s.index, s.n_units) for s in sentences if s.n_units >= params.sentence_min_units]


def _joined_keys(sentences: Sequence[Sentence], joined: Sequence[str], min_units: int) -> _Keys:
    """:func:`sentence_keys` given each sentence's units joined (:func:`split_sentences_joined`).

    As flat numbers, the key objects made on first use: indexing through workers
    sends the numbers and reads only the keys' values.
    """
    digest = xxhash.xxh3_64_intdigest
    return _Keys(_flat((digest(j.encode("utf-8")), s.index, s.n_units)
                       for s, j in zip(sentences, joined, strict=True) if s.n_units >= min_units))


# Characters jieba may segment together with their neighbours: a superset, in every
# jieba-rs version, of the runs its cut segments one by one (RE_HAN_DEFAULT: CJK
# ideographs, ASCII letters and digits, +#&._%-). It cuts everything else
# character by character (\r\n as one), whatever is around it.
_JOINS = re.compile(r"[\w+#&.%\-\u3400-\u9fff\uf900-\ufaff\U00020000-\U0010ffff]")


def part_spans(text: str, tokens: list[str], parts: Sequence[Part], segment: Callable[[str], list[str]]
               ) -> list[tuple[int, int] | list[str]]:
    """``segment`` of each part of ``text``, given ``tokens = segment(text)``: ``(i, j)`` where it is ``tokens[i:j]``.

    A part that starts and ends on token boundaries, each with a character jieba never
    joins to a neighbour (:data:`_JOINS`) on one side (a sentence's last ``。``, a line
    break), consists of whole runs that jieba segmented on
    their own, so its tokens are a slice of the document's (the Latin compound split of
    :meth:`Tokenizer.segment <simdup_es.tokens.Tokenizer.segment>` goes token by token);
    any other part is segmented again. Slicing saves segmenting the parts, about half
    the time of their fingerprints (99.6 % of the parts of the project's corpus are slices).
    """
    starts = list(itertools.accumulate(map(len, tokens), initial=0))
    if starts[-1] != len(text):  # the tokens do not spell the text: no slices
        return [segment(text[p.start : p.end]) for p in parts]
    out: list[tuple[int, int] | list[str]] = []
    for p in parts:
        i, j = bisect.bisect_left(starts, p.start), bisect.bisect_left(starts, p.end)
        if starts[i] == p.start and starts[j] == p.end and _apart(text, p.start) and _apart(text, p.end):
            out.append((i, j))
        else:
            out.append(segment(text[p.start : p.end]))
    return out


def _apart(text: str, at: int) -> bool:
    """Whether jieba never joins the characters on either side of offset ``at`` into one run."""
    return at == 0 or at == len(text) or _JOINS.match(text, at - 1) is None or _JOINS.match(text, at) is None


class PartPrinter:
    """Computes a document's :class:`Levels` with a :class:`Fingerprinter`'s tokens and weights.

    Parts are fingerprinted as documents of their own (their own TF and LEN), through
    the public :meth:`Fingerprinter.fingerprint_many` (:meth:`levels_many`) or
    :meth:`Fingerprinter.fingerprint_parts` (the index path, from slices of the
    document's tokens), so a part and a document of the same text get the same bits
    and the fingerprint version covers both.
    """

    def __init__(self, fingerprinter: Fingerprinter, params: PartParams = PartParams()) -> None:
        self.fingerprinter = fingerprinter
        self.params = params

    @property
    def version(self) -> str:
        return self.fingerprinter.version

    def levels(self, text: str, *, unified: bool = False) -> Levels:
        """The levels of one document (``unified=True`` if ``text`` is already unified)."""
        return self.levels_many([text], unified=unified)[0]

    def levels_many(self, texts: Sequence[str], *, unified: bool = False) -> list[Levels]:
        """Levels of many documents, their parts fingerprinted in one batch in this process."""
        prepared = self._split_many(texts if unified else unify_many(texts))
        docs = [Doc(split.text[p.start : p.end]) for split in prepared for p in split.parts]
        results = self.fingerprinter.fingerprint_many(docs, unified=True)
        fps = iter([r.fingerprint.value if r.fingerprint else None for r in results])
        return [self._levels(split, list(itertools.islice(fps, len(split.parts)))) for split in prepared]

    def map(self, texts: Iterable[str], *, workers: int | None = None, unified: bool = False) -> Iterator[Levels]:
        """Levels of a stream of documents, in input order, on ``workers`` processes
        (:meth:`Fingerprinter.map_chunks`): each worker splits its documents and fingerprints their parts."""
        task = functools.partial(_levels_chunk, params=self.params, unified=unified)
        for levels in self.fingerprinter.map_chunks(texts, task, workers=workers, chunk_size=_DOCS_PER_CHUNK):
            yield from levels

    def map_items(
        self, items: Iterable[T], to_doc: Callable[[T], Doc], *, workers: int | None = None
    ) -> Iterator[tuple[T, Result, Levels | None]]:
        """Each item with its document fingerprint and its levels, in input order, in one worker pass.

        ``to_doc`` runs here; unifying, splitting and fingerprinting the document and its
        parts run on the workers. The text is unified once: fingerprinting the unified
        text and title with ``unified=True`` gives the fingerprint of the raw ones (unify
        is not idempotent, so the parts are cut from that same unified text). Levels are
        ``None`` where the document has no fingerprint (the result's error says why); a
        document over ``max_bytes`` is not split.
        """
        for item, result, levels, _ in self.map_items_unified(items, to_doc, workers=workers):
            yield item, result, levels

    def map_items_unified(
        self, items: Iterable[T], to_doc: Callable[[T], Doc], *, workers: int | None = None
    ) -> Iterator[tuple[T, Result, Levels | None, str | None]]:
        """:meth:`map_items`, each also with the unified text its levels refer to (``None`` where no levels)."""
        pending: deque[T] = deque()  # items in flight

        def docs() -> Iterator[Doc]:
            for item in items:
                pending.append(item)
                yield to_doc(item)

        task = functools.partial(_items_chunk, params=self.params)
        for triples in self.fingerprinter.map_chunks(docs(), task, workers=workers, chunk_size=_DOCS_PER_CHUNK):
            for result, levels, text in triples:
                yield pending.popleft(), result, levels, text

    def _items_many(self, docs: Sequence[Doc]) -> _Batch:
        """:meth:`map_items_unified`' work on a batch, in this process."""
        fingerprinter = self.fingerprinter
        batch: list[Doc] = []
        tokens: list[list[str]] = []
        spans: list[list[tuple[int, int] | list[str]]] = []
        prepared: list[_Split | Result] = []
        fits = [not fingerprinter.too_large(doc.text) for doc in docs]
        # Unified in one batch: each OpenCC pass runs once over them all.
        splits = iter(self._split_many(unify_many([doc.text for doc, fit in zip(docs, fits, strict=True) if fit])))
        titles = iter(unify_many([doc.title for doc, fit in zip(docs, fits, strict=True) if fit and doc.title]))
        for doc, fit in zip(docs, fits, strict=True):
            if not fit:
                prepared.append(fingerprinter.fingerprint_many([doc])[0])  # too large: rejected with the reason
                continue
            split = next(splits)
            prepared.append(split)
            whole = fingerprinter.tokenizer.cut(split.text)
            batch.append(Doc(split.text, next(titles) if doc.title else doc.title, doc.source))
            tokens.append(whole)
            spans.append(part_spans(split.text, whole, split.parts, fingerprinter.tokenizer.cut))
        results = iter(fingerprinter.fingerprint_parts(batch, tokens, spans, unified=True))
        out = _Batch()
        for split in prepared:
            if isinstance(split, Result):
                out.append((split, None, None))
                continue
            result, fps = next(results)
            out.append((result, None, None) if result.error else (result, self._levels(split, fps), split.text))
        return out

    def _split_many(self, texts: Sequence[str]) -> list[_Split]:
        """Unified texts cut into sentences (all at once) and parts, with their sentence keys."""
        out = []
        for u, (sentences, joined, lines, before) in zip(texts, _split_lines_many(texts), strict=True):
            keys = _joined_keys(sentences, joined, self.params.sentence_min_units)
            parts = []
            if self.params.with_parts and sentences:
                parts = _parts(sentences, itertools.pairwise([0, *lines, len(sentences)]), before, self.params)
            out.append(_Split(u, sentences, parts, keys))
        return out

    def _levels(self, split: _Split, fps: Sequence[int | None]) -> Levels:
        return Levels(
            version=self.version,
            units=sum(s.n_units for s in split.sentences),
            sentences=tuple(split.sentences),
            parts=tuple(split.parts),
            fingerprints=tuple(fps),
            keys=split.keys,
        )


class _Split(NamedTuple):
    """A unified text cut into sentences and parts, with its sentence keys."""

    text: str
    sentences: list[Sentence]
    parts: list[Part]
    keys: _Keys


def _levels_chunk(fingerprinter: Fingerprinter, texts: list[str], *, params: PartParams, unified: bool) -> list[Levels]:
    return PartPrinter(fingerprinter, params).levels_many(texts, unified=unified)


def _items_chunk(fingerprinter: Fingerprinter, docs: list[Doc], *, params: PartParams) -> _Batch:
    return PartPrinter(fingerprinter, params)._items_many(docs)


class _Batch(list[tuple[Result, "Levels | None", "str | None"]]):
    """Results, levels and unified texts of a batch; pickles the levels as flat arrays of numbers.

    On the way back from a worker, unpickling the levels' frozen dataclasses (or even
    tuples of numbers) for every document was most of the CPU the process that feeds
    two workers spent on them; bytes are copied, and each text is sent once rather
    than in sentences.
    """

    def __reduce__(self) -> tuple[Callable[[list[tuple[Result, _Packed | None]]], _Batch], tuple[object, ...]]:
        return _unpack_batch, ([(r, None if v is None or u is None else _pack(v, u)) for r, v, u in self],)


def _unpack_batch(packed: list[tuple[Result, _Packed | None]]) -> _Batch:
    return _Batch((r, None, None) if p is None else (r, _unpack(p), p[2]) for r, p in packed)


# (version, units, unified text, sentences, parts, fingerprints, keys); sentences, parts and
# keys are flat arrays of unsigned 64-bit numbers, 3, 5 and 3 to an element (_flat).
_Packed = tuple[str, int, str, bytes, bytes, tuple[int | None, ...], bytes]


def _pack(levels: Levels, unified: str) -> _Packed:
    return (levels.version, levels.units, unified, _flat((s.start, s.end, s.n_units) for s in levels.sentences),
            _flat((p.first, p.stop, p.start, p.end, p.units) for p in levels.parts), levels.fingerprints,
            levels.keys._flat if isinstance(levels.keys, _Keys)
            else _flat((k.key, k.index, k.units) for k in levels.keys))


def _unpack(packed: _Packed) -> Levels:
    version, n, u, sentences, parts, fingerprints, keys = packed
    return Levels(version=version, units=n, sentences=_Sentences(sentences, u), parts=_Parts(parts),
                  fingerprints=fingerprints, keys=_Keys(keys))


def _flat(rows: Iterable[tuple[int, ...]]) -> bytes:
    return array.array("Q", itertools.chain.from_iterable(rows)).tobytes()


class _Lazy(Sequence[T]):
    """A tuple a worker sent as flat numbers (:func:`_flat`), its objects made on first use.

    Equal to, and hashed and pickled as, that tuple. Indexing reads no sentence or part
    (a store keeps the part fingerprints and the keys' values), so they are never made there.
    """

    __slots__ = ("_flat", "_built")
    _width = 1  # numbers per element

    def __init__(self, flat: bytes) -> None:
        self._flat = flat
        self._built: tuple[T, ...] | None = None

    def _make(self, rows: Iterator[tuple[int, ...]]) -> tuple[T, ...]:
        raise NotImplementedError

    def _all(self) -> tuple[T, ...]:
        if self._built is None:
            numbers = iter(memoryview(self._flat).cast("Q"))
            self._built = self._make(zip(*[numbers] * self._width))
        return self._built

    def __len__(self) -> int:
        return len(self._flat) // (8 * self._width)

    def __getitem__(self, i):  # type: ignore[no-untyped-def,override]
        return self._all()[i]

    def __iter__(self) -> Iterator[T]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Lazy):
            other = other._all()
        return self._all() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return repr(self._all())

    def __reduce__(self) -> tuple[type[tuple[T, ...]], tuple[tuple[T, ...]]]:
        return tuple, (self._all(),)


class _Sentences(_Lazy[Sentence]):
    """A document's sentences: ``(start, end, units)`` each, cut from the unified text."""

    __slots__ = ("_text",)
    _width = 3

    def __init__(self, flat: bytes, text: str) -> None:
        super().__init__(flat)
        self._text = text

    def _make(self, rows: Iterator[tuple[int, ...]]) -> tuple[Sentence, ...]:
        text = self._text
        return tuple(Sentence(i, a, b, text[a:b], n) for i, (a, b, n) in enumerate(rows))


class _Parts(_Lazy[Part]):
    _width = 5

    def _make(self, rows: Iterator[tuple[int, ...]]) -> tuple[Part, ...]:
        return tuple(Part(*row) for row in rows)


class _Keys(_Lazy[SentenceKey]):
    _width = 3

    def values(self) -> list[int]:
        """:meth:`Levels.key_values`."""
        return memoryview(self._flat).cast("Q")[0 :: self._width].tolist()

    def _make(self, rows: Iterator[tuple[int, ...]]) -> tuple[SentenceKey, ...]:
        return tuple(SentenceKey(*row) for row in rows)
