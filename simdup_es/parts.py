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
- **keys**: winnowed 64-bit hashes of runs of units (:mod:`simdup_es.winnow`),
  each with its unit offset. Exact, so the finest and most selective level: two
  texts sharing a run of at least ``key_window + key_units - 1`` units (10 by
  default) share a key, whatever surrounds the run and however the rest of its
  sentence was edited: one copied clause inside a long host document, a short
  post with a character replaced or a prefix added.

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

import numpy as np

from .config import require_ints
from .errors import ConfigError
from .fingerprint import Doc, Fingerprint, Fingerprinter, Result
from .sentences import Sentence, _split_columns_many, split_sentences
from .text import unify, unify_many
from .winnow import KEY_K, KEY_W
from .winnow import text_keys as winnow_keys

T = TypeVar("T")

# Documents per worker job: each brings its parts, about as much work again. Each job
# costs the workers and the process feeding them about 1 ms of CPU whatever its size
# (sending, waking, switching), 30 us a document for 32 documents of 1 kB: for index,
# 5-7 % of the wall time more than jobs of 128. Jobs of long documents hold fewer,
# _CHARS_PER_CHUNK of text at most, so that the documents in flight (4 jobs per worker)
# stay a few MB.
_DOCS_PER_CHUNK = 128
_CHARS_PER_CHUNK = 256_000

__all__ = ["Key", "Levels", "Part", "PartParams", "PartPrinter", "split_parts", "text_keys"]


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
    key_units, key_window:
        The keys' gram length ``k`` and winnowing window ``w`` (:mod:`simdup_es.winnow`):
        a shared run of ``k + w - 1`` units always shares a key.
    with_parts:
        ``False`` cuts no parts: the levels are the sentence keys alone
        (``simdup index --levels keys``).
    """

    min_units: int = 40
    window_units: int = 100
    max_units: int = 160
    overlap: float = 0.5
    key_units: int = KEY_K
    key_window: int = KEY_W
    with_parts: bool = True

    def __post_init__(self) -> None:
        require_ints(self, ("min_units", "window_units", "max_units", "key_units", "key_window"))
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
class Key:
    """A winnowed key: the hash of the gram of units starting at unit ``position``."""

    key: int
    position: int


@dataclass(frozen=True)
class Levels:
    """A document's part fingerprints and keys, as a store keeps them.

    ``parts[i]`` has fingerprint ``fingerprints[i]`` (``None`` where the part has no
    content word, e.g. only numbers and stop words). ``units`` is the whole text's.
    """

    version: str
    units: int
    # Tuples, or sequences equal to them whose objects are made on first use (the
    # sentences and keys of PartPrinter's batches, the parts from a worker).
    sentences: Sequence[Sentence]
    parts: Sequence[Part]
    fingerprints: tuple[int | None, ...]
    keys: Sequence[Key]

    def stored(self) -> tuple[list[int], list[int]]:
        """What a store indexes: the part fingerprints (without ``None``) and the distinct keys."""
        return [f for f in self.fingerprints if f is not None], sorted(set(self.key_values()))

    def key_values(self) -> list[int]:
        """The value of each key, in order (without making the key objects)."""
        return self.keys.values() if isinstance(self.keys, _Keys) else [k.key for k in self.keys]

    @property
    def keys_are_u64(self) -> bool:
        """Whether the keys' values are read from unsigned 64-bit numbers (those of a
        :class:`PartPrinter`), so that a store need not check them again."""
        return isinstance(self.keys, _Keys)


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


def _windows(counts: Sequence[int], first: int, stop: int, params: PartParams) -> list[tuple[int, int]]:
    """Windows of whole sentences (``counts[k]`` units each) of about ``window_units`` over ``first .. stop-1``, overlapping."""
    step_units = max(1, round(params.window_units * (1.0 - params.overlap)))
    out: list[tuple[int, int]] = []
    i = first
    while True:
        j, got = i, 0
        while j < stop and (got < params.window_units or j == i):
            got += counts[j]
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
            moved += counts[nxt]
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
    counts = [s.n_units for s in sentences]
    before = list(itertools.accumulate(counts, initial=0))  # units before each sentence
    return _parts([s.start for s in sentences], [s.end for s in sentences], counts, _paragraphs(text, sentences),
                  before, params)


def _parts(starts: Sequence[int], ends: Sequence[int], counts: Sequence[int], paragraphs: Iterable[tuple[int, int]],
           before: Sequence[int], params: PartParams) -> list[Part]:
    """:func:`split_parts` given the sentences as columns (start, end, unit count), the paragraphs and where
    each sentence's units start (``before``, any origin)."""
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
        spans = [(first, stop)] if n <= params.max_units else _windows(counts, first, stop, params)
        for a, b in spans:
            parts.append(Part(a, b, starts[a], ends[b - 1], before[b] - before[a]))
    return parts


def text_keys(text: str, params: PartParams = PartParams()) -> list[Key]:
    """The winnowed keys of a unified text, in text order."""
    values, positions = winnow_keys(text, params.key_units, params.key_window)
    return [Key(v, p) for v, p in zip(values.tolist(), positions.tolist(), strict=True)]


def _flat_keys(text: str, params: PartParams) -> _Keys:
    """:func:`text_keys` as flat numbers, the key objects made on first use."""
    values, positions = winnow_keys(text, params.key_units, params.key_window)
    rows = np.empty((len(values), 2), dtype=np.uint64)
    rows[:, 0], rows[:, 1] = values, positions
    return _Keys(rows.tobytes())


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
        for levels in self.fingerprinter.map_chunks(texts, task, workers=workers, chunk_size=_DOCS_PER_CHUNK,
                                                    chunk_weight=(len, _CHARS_PER_CHUNK)):
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

        The workers send neither the unified texts nor the sentences back (a store keeps
        the part fingerprints and the keys' values): the levels' sentences are cut again
        from the document's text here, only if they are read.
        """
        for item, result, levels, _ in self._map_items(items, to_doc, workers, texts=False):
            yield item, result, levels

    def map_items_unified(
        self, items: Iterable[T], to_doc: Callable[[T], Doc], *, workers: int | None = None
    ) -> Iterator[tuple[T, Result, Levels | None, str | None]]:
        """:meth:`map_items`, each also with the unified text its levels refer to (``None`` where no levels)."""
        return self._map_items(items, to_doc, workers, texts=True)

    def _map_items(
        self, items: Iterable[T], to_doc: Callable[[T], Doc], workers: int | None, *, texts: bool
    ) -> Iterator[tuple[T, Result, Levels | None, str | None]]:
        pending: deque[tuple[T, Doc]] = deque()  # items in flight, with their documents

        def docs() -> Iterator[Doc]:
            for item in items:
                doc = to_doc(item)
                pending.append((item, doc))
                yield doc

        task = functools.partial(_items_chunk, params=self.params, texts=texts)
        for batch in self.fingerprinter.map_chunks(docs(), task, workers=workers, chunk_size=_DOCS_PER_CHUNK,
                                                   chunk_weight=(_doc_chars, _CHARS_PER_CHUNK)):
            done = [pending.popleft() for _ in range(len(batch))]
            for (item, _), (result, levels, text) in zip(done, batch.triples([doc for _, doc in done]), strict=True):
                yield item, result, levels, text

    def _items_many(self, docs: Sequence[Doc], *, texts: bool = True) -> _Batch:
        """:meth:`map_items_unified`' work on a batch, in this process (``texts``: see :class:`_Batch`)."""
        fingerprinter = self.fingerprinter
        batch: list[Doc] = []
        tokens: list[list[str]] = []
        spans: list[list[tuple[int, int] | list[str]]] = []
        prepared: list[_Split | Result] = []
        fits = [not fingerprinter.too_large(doc.text) for doc in docs]
        # Texts and titles unified in one batch: each step runs once over them all.
        bodies = [doc.text for doc, fit in zip(docs, fits, strict=True) if fit]
        unified = unify_many(bodies + [doc.title for doc, fit in zip(docs, fits, strict=True) if fit and doc.title])
        splits = iter(self._split_many(unified[: len(bodies)]))
        titles = iter(unified[len(bodies) :])
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
        out = _Batch(version=self.version, texts=texts)
        for split in prepared:
            if isinstance(split, Result):
                out.append((split, None, None))
                continue
            result, fps = next(results)
            out.append((result, None, None) if result.error else (result, self._levels(split, fps), split.text))
        return out

    def _split_many(self, texts: Sequence[str]) -> list[_Split]:
        """Unified texts cut into sentences (all at once, as columns) and parts, with their keys."""
        _, columns = _split_columns_many(texts)
        first, table, params = columns.first, columns.table, self.params
        starts, ends, counts = (table[:, k].tolist() for k in range(3)) if params.with_parts else ((), (), ())
        out = []
        for k, u in enumerate(texts):
            i, j = first[k], first[k + 1]
            before = columns.before[k]
            parts = []
            if params.with_parts and j > i:
                parts = _parts(starts[i:j], ends[i:j], counts[i:j], itertools.pairwise([0, *columns.lines[k], j - i]),
                               before, params)
            units_ = before[-1] - before[0] if before else 0
            out.append(_Split(u, _Sentences(table[i:j].tobytes(), u), parts, _flat_keys(u, params), units_))
        return out

    def _levels(self, split: _Split, fps: Sequence[int | None]) -> Levels:
        return Levels(
            version=self.version,
            units=split.units,
            sentences=split.sentences,
            parts=tuple(split.parts),
            fingerprints=tuple(fps),
            keys=split.keys,
        )


class _Split(NamedTuple):
    """A unified text cut into sentences and parts, with its keys and its number of units."""

    text: str
    sentences: _Sentences
    parts: list[Part]
    keys: _Keys
    units: int


def _doc_chars(doc: Doc) -> int:
    return len(doc.text)


def _levels_chunk(fingerprinter: Fingerprinter, texts: list[str], *, params: PartParams, unified: bool) -> list[Levels]:
    return PartPrinter(fingerprinter, params).levels_many(texts, unified=unified)


def _items_chunk(fingerprinter: Fingerprinter, docs: list[Doc], *, params: PartParams, texts: bool = True) -> _Batch:
    return PartPrinter(fingerprinter, params)._items_many(docs, texts=texts)


class _Batch(list[tuple[Result, "Levels | None", "str | None"]]):
    """Results, levels and unified texts of a batch, as :meth:`PartPrinter._items_many` made them.

    Pickled (on the way back from a worker) as plain numbers, strings and flat arrays
    (:class:`_Sent`): unpickling frozen dataclasses (or even tuples of numbers) for
    every document was most of the CPU the process that feeds two workers spent on
    them. Without ``texts`` neither the unified texts nor the sentences go
    (:meth:`PartPrinter.map_items`).
    """

    def __init__(self, triples: Iterable[tuple[Result, Levels | None, str | None]] = (), version: str = "",
                 texts: bool = True) -> None:
        super().__init__(triples)
        self.version = version  # of the printer: its fingerprints and levels go as numbers
        self.texts = texts  # whether pickling sends the unified texts and the sentences

    def triples(self, docs: Sequence[Doc]) -> Iterator[tuple[Result, Levels | None, str | None]]:
        """The batch's results, levels and texts (``docs``, the batch's documents, unused here)."""
        return iter(self)

    def __reduce__(self) -> tuple[type[_Sent], tuple[str, list[_Packed]]]:
        rows: list[_Packed] = []
        for result, levels, text in self:
            fp = result.fingerprint
            plain = fp is not None and result.error is None and fp.version == self.version and type(fp.value) is int
            head = fp.value if plain else result  # type: ignore[union-attr]
            if levels is None:
                rows.append((head,))
            else:
                assert levels.version == self.version  # one printer made them all
                rows.append(_pack(head, levels, text if self.texts else None))
        return _Sent, (self.version, rows)


class _Sent(list["_Packed"]):
    """A :class:`_Batch` as it comes out of a worker: a row of numbers, strings and bytes per document (:func:`_pack`)."""

    def __init__(self, version: str, rows: list[_Packed]) -> None:
        super().__init__(rows)
        self.version = version

    def triples(self, docs: Sequence[Doc]) -> Iterator[tuple[Result, Levels | None, str | None]]:
        """:meth:`_Batch.triples`, the objects made from the numbers (the sentences not sent from ``docs``)."""
        version = self.version
        for row, doc in zip(self, docs, strict=True):
            head = row[0]
            result = Result(Fingerprint(head, version), None) if type(head) is int else head
            if len(row) == 1:
                yield result, None, None  # type: ignore[misc]
            else:
                yield result, *_unpack(version, row, doc.text)  # type: ignore[misc]


# (head, units, parts, fingerprints, keys[, unified text, sentences]): head is the fingerprint's value
# (or the whole Result when it is not one of the batch's version); parts, keys and sentences are flat
# arrays of unsigned 64-bit numbers, 5, 2 and 3 to an element (_flat).
_Packed = tuple[object, ...]


def _pack(head: object, levels: Levels, text: str | None) -> _Packed:
    keys = levels.keys
    packed = (head, levels.units, _flat((p.first, p.stop, p.start, p.end, p.units) for p in levels.parts),
              levels.fingerprints, keys._flat if isinstance(keys, _Keys) else _flat((k.key, k.position) for k in keys))
    if text is None:
        return packed
    sentences = levels.sentences
    return (*packed, text, sentences._flat if isinstance(sentences, _Sentences) else
            _flat((s.start, s.end, s.n_units) for s in sentences))


def _unpack(version: str, packed: _Packed, raw: str) -> tuple[Levels, str | None]:
    """The levels of a packed row and its unified text (``None`` when not sent: the sentences are then cut
    again from ``raw``, the document's text, when first read)."""
    _, units, parts, fingerprints, keys, *sent = packed
    sentences: Sequence[Sentence] = _Sentences(sent[1], sent[0]) if sent else _Resplit(raw)  # type: ignore[arg-type]
    # Positional: a quarter less time than by keyword, for every document indexed.
    return (Levels(version, units, sentences, _Parts(parts), fingerprints, _Keys(keys)),  # type: ignore[arg-type]
            sent[0] if sent else None)  # type: ignore[return-value]


def _flat(rows: Iterable[tuple[int, ...]]) -> bytes:
    return array.array("Q", itertools.chain.from_iterable(rows)).tobytes()


class _Lazy(Sequence[T]):
    """A tuple a worker sent in a cheaper form, its objects made on first use.

    Equal to, and hashed and pickled as, that tuple. Indexing reads no sentence or part
    (a store keeps the part fingerprints and the keys' values), so they are never made there.
    """

    __slots__ = ("_built",)

    def __init__(self) -> None:
        self._built: tuple[T, ...] | None = None

    def _build(self) -> tuple[T, ...]:
        raise NotImplementedError

    def _all(self) -> tuple[T, ...]:
        if self._built is None:
            self._built = self._build()
        return self._built

    def __len__(self) -> int:
        return len(self._all())

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


class _Resplit(_Lazy[Sentence]):
    """A document's sentences, not sent by the worker: its raw text unified and cut again, as the worker did."""

    __slots__ = ("_raw",)

    def __init__(self, raw: str) -> None:
        super().__init__()
        self._raw = raw

    def _build(self) -> tuple[Sentence, ...]:
        return tuple(split_sentences(unify(self._raw)))


class _Flat(_Lazy[T]):
    """A tuple a worker sent as flat numbers (:func:`_flat`), ``_width`` to an element."""

    __slots__ = ("_flat",)
    _width = 1

    def __init__(self, flat: bytes) -> None:
        super().__init__()
        self._flat = flat

    def _make(self, rows: Iterator[tuple[int, ...]]) -> tuple[T, ...]:
        raise NotImplementedError

    def _build(self) -> tuple[T, ...]:
        numbers = iter(memoryview(self._flat).cast("Q"))
        return self._make(zip(*[numbers] * self._width))

    def __len__(self) -> int:
        return len(self._flat) // (8 * self._width)


class _Sentences(_Flat[Sentence]):
    """A document's sentences: ``(start, end, units)`` each, cut from the unified text."""

    __slots__ = ("_text",)
    _width = 3

    def __init__(self, flat: bytes, text: str) -> None:
        super().__init__(flat)
        self._text = text

    def _make(self, rows: Iterator[tuple[int, ...]]) -> tuple[Sentence, ...]:
        text = self._text
        return tuple(Sentence(i, a, b, text[a:b], n) for i, (a, b, n) in enumerate(rows))


class _Parts(_Flat[Part]):
    __slots__ = ()
    _width = 5

    def _make(self, rows: Iterator[tuple[int, ...]]) -> tuple[Part, ...]:
        return tuple(Part(*row) for row in rows)


class _Keys(_Flat[Key]):
    __slots__ = ()
    _width = 2

    def values(self) -> list[int]:
        """:meth:`Levels.key_values`."""
        return memoryview(self._flat).cast("Q")[0 :: self._width].tolist()

    def _make(self, rows: Iterator[tuple[int, ...]]) -> tuple[Key, ...]:
        return tuple(Key(*row) for row in rows)
