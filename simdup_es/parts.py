"""Fingerprint levels of documents (parts and winnowed keys) computed with a fingerprinter: :class:`PartPrinter`.

The levels themselves (:class:`~simdup_es.levels.Levels`, :class:`~simdup_es.levels.Part`,
:class:`~simdup_es.levels.Key`, :class:`~simdup_es.levels.PartParams`, ...) are pure and live in
:mod:`simdup_es.levels`. This module cuts documents into them and fingerprints their parts
with a :class:`Fingerprinter`'s tokens and weights, on worker processes, and holds the
wire format the workers send them back in (:class:`_Batch`, :class:`_Sent`): a
:class:`~simdup_es.sentences.SentenceTable` of the batch and flat numbers, read into
:class:`~simdup_es.levels.Lazy` sequences whose objects are made on first use.
"""

from __future__ import annotations

import array
import bisect
import functools
import itertools
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple, TypeVar

import numpy as np

from . import native
from .fingerprint import Doc, Fingerprint, Fingerprinter, Result, not_text
from .keys import StoredKeys
from .levels import FlatParts, Lazy, Levels, Part, PartParams, SentenceRows, U64Keys, parts_of_columns
from .sentences import Sentence, SentenceTable, split_sentences, split_table_units
from .store.base import MAX_STORED_PARTS, stored_keys
from .text import UnifiedText, unify, unify_many
from .winnow import batch_codes, winnow_many

T = TypeVar("T")

# Documents per worker job: each brings its parts, about as much work again. Each job
# costs the workers and the process feeding them about 1 ms of CPU whatever its size
# (sending, waking, switching), 30 us a document for 32 documents of 1 kB: for index,
# 5-7 % of the wall time more than jobs of 128. Jobs of long documents hold fewer,
# _CHARS_PER_CHUNK of text at most, so that the documents in flight (4 jobs per worker)
# stay a few MB.
_DOCS_PER_CHUNK = 128
_CHARS_PER_CHUNK = 256_000

__all__ = ["PartPrinter", "part_spans"]

_Made = tuple["str | None", "str | None", int, bytes, bytes]
""":class:`~simdup_es.keys.StoredKeys` as a worker sends it: ``(layout, members, cut, parts, keys)``."""


def _flat_keys(values: np.ndarray, positions: np.ndarray) -> U64Keys:
    """:func:`text_keys` from a text's winnowed hashes and their positions, as flat numbers, the key objects made on
    first use."""
    rows = np.empty((len(values), 2), dtype=np.uint64)
    rows[:, 0], rows[:, 1] = values, positions
    return U64Keys(rows.tobytes())


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

    def document(self, text: str, title: str | None = None) -> tuple[Fingerprint, Levels, str]:
        """The fingerprint and levels of one document and its unified text, from one pass over it (a search's
        query: the compiled core segments it once for both).

        Raises what :meth:`Fingerprinter.fingerprint` raises."""
        ((result, levels, unified, _),) = self._items_many([Doc(text, title)])
        fingerprint = result.unwrap()
        assert levels is not None and unified is not None
        return fingerprint, levels, unified

    def levels(self, text: str) -> Levels:
        """The levels of one document (unified unless :class:`~simdup_es.text.UnifiedText`)."""
        return self.levels_many([text])[0]

    def levels_many(self, texts: Sequence[str]) -> list[Levels]:
        """Levels of many documents, their parts fingerprinted in one batch in this process."""
        unified = unify_many(texts)
        if (pipeline := self.fingerprinter.native_pipeline()) is not None:
            found = native.levels(pipeline, unified, [""] * len(unified), self.params, with_document=False,
                                  part_max_bytes=self.fingerprinter.params.max_bytes)
            return [self._levels(split, fps) for split, fps in _native_splits(found)]
        prepared = self._split_many(unified)
        docs = [Doc(UnifiedText(split.text[p.start : p.end])) for split in prepared for p in split.parts]
        results = self.fingerprinter.fingerprint_many(docs)
        fps = iter([r.fingerprint.value if r.fingerprint else None for r in results])
        return [self._levels(split, list(itertools.islice(fps, len(split.parts)))) for split in prepared]

    def map(self, texts: Iterable[str], *, workers: int | None = None) -> Iterator[Levels]:
        """Levels of a stream of documents, in input order, on ``workers`` processes
        (:meth:`Fingerprinter.map_chunks`): each worker splits its documents and fingerprints their parts."""
        task = functools.partial(_levels_chunk, params=self.params)
        for levels in self.fingerprinter.map_chunks(texts, task, workers=workers, chunk_size=_DOCS_PER_CHUNK,
                                                    chunk_weight=(len, _CHARS_PER_CHUNK)):
            yield from levels

    def map_items(
        self, items: Iterable[T], to_doc: Callable[[T], Doc], *, workers: int | None = None
    ) -> Iterator[tuple[T, Result, Levels | None]]:
        """Each item with its document fingerprint and its levels, in input order, in one worker pass.

        ``to_doc`` runs here; unifying, splitting and fingerprinting the document and its
        parts run on the workers. The text is unified once, and the parts are cut from
        that same unified text (unify is not idempotent). Levels are
        ``None`` where the document has no fingerprint (the result's error says why); a
        document over ``max_bytes`` is not split.

        The workers send neither the unified texts nor the sentences back (a store keeps
        the part fingerprints and the keys' values): the levels' sentences are cut again
        from the document's text here, only if they are read.
        """
        for item, result, levels, _, _ in self._map_items(items, to_doc, workers, texts=False):
            yield item, result, levels

    def map_items_unified(
        self, items: Iterable[T], to_doc: Callable[[T], Doc], *, workers: int | None = None
    ) -> Iterator[tuple[T, Result, Levels | None, str | None]]:
        """:meth:`map_items`, each also with the unified text its levels refer to (``None`` where no levels)."""
        for item, result, levels, text, _ in self._map_items(items, to_doc, workers, texts=True):
            yield item, result, levels, text

    def map_stored(
        self, items: Iterable[T], to_doc: Callable[[T], Doc], *, layout: str | None, workers: int | None = None
    ) -> Iterator[tuple[T, Result, Levels | None, StoredKeys | None, str | None]]:
        """:meth:`map_items`, each also with what a store writes of its levels (:class:`~simdup_es.keys.StoredKeys`,
        with the members of an Elasticsearch index of ``layout``, or none for ``None``), made on the workers, and
        the unified text (``None`` where no levels): the process feeding the store joins them to the documents as
        they are (``simdup index``; a store keeps the unified text for the searches' judge,
        :attr:`simdup_es.store.base.StoredDoc.unified`)."""
        for item, result, levels, text, stored in self._map_items(items, to_doc, workers, texts=True, encode=(layout,)):
            yield item, result, levels, stored, text

    def _map_items(
        self, items: Iterable[T], to_doc: Callable[[T], Doc], workers: int | None, *, texts: bool,
        encode: tuple[str | None] | None = None,
    ) -> Iterator[tuple[T, Result, Levels | None, str | None, StoredKeys | None]]:
        pending: deque[tuple[T, Doc]] = deque()  # items in flight, with their documents

        def docs() -> Iterator[Doc]:
            for item in items:
                doc = to_doc(item)
                pending.append((item, doc))
                yield doc

        task = functools.partial(_items_chunk, params=self.params, texts=texts, encode=encode)
        for batch in self.fingerprinter.map_chunks(docs(), task, workers=workers, chunk_size=_DOCS_PER_CHUNK,
                                                   chunk_weight=(_doc_chars, _CHARS_PER_CHUNK)):
            done = [pending.popleft() for _ in range(len(batch))]
            for (item, _), (result, levels, text, stored) in zip(done, batch.items([doc for _, doc in done]), strict=True):
                yield item, result, levels, text, stored

    def _items_many(self, docs: Sequence[Doc], *, texts: bool = True, encode: tuple[str | None] | None = None) -> _Batch:
        """:meth:`map_items_unified`' work on a batch, in this process (``texts``: see :class:`_Batch`), with
        :meth:`map_stored`'s for ``encode = (layout,)``."""
        fingerprinter = self.fingerprinter
        fits = [not_text(doc) is None and not fingerprinter.too_large(doc.text) for doc in docs]
        # Texts and titles unified in one batch: each step runs once over them all.
        bodies = [doc.text for doc, fit in zip(docs, fits, strict=True) if fit]
        unified = unify_many(bodies + [doc.title for doc, fit in zip(docs, fits, strict=True) if fit and doc.title])
        titles = iter(unified[len(bodies) :])
        batch = [Doc(text, next(titles) if doc.title else doc.title, doc.source)
                 for text, doc in zip(unified[: len(bodies)], (doc for doc, fit in zip(docs, fits, strict=True) if fit))]
        done = iter(self._native_items(batch, encode) if fingerprinter.native_pipeline() is not None
                    else self._python_items(batch))
        out = _Batch(version=self.version, texts=texts)
        for doc, fit in zip(docs, fits, strict=True):
            if not fit:  # too large, or no text: rejected with the reason
                out.append((fingerprinter.fingerprint_many([doc])[0], None, None, None))
                continue
            split, result, fps, made = next(done)
            if result.error:
                out.append((result, None, None, None))
                continue
            levels, fp = self._levels(split, fps), result.unwrap().value
            if made is not None:  # the compiled core's
                stored: StoredKeys | None = _stored(made, levels, fp)
            else:
                stored = None if encode is None else stored_keys(fp, self.version, levels, encode[0])
            out.append((result, levels, split.text, stored))
        return out

    def _python_items(self, batch: list[Doc]) -> Iterator[tuple[_Split, Result, list[int | None], _Made | None]]:
        """Each unified document of ``batch`` (its title unified too) cut into its levels and fingerprinted with
        its parts, by the Python modules."""
        fingerprinter = self.fingerprinter
        splits = self._split_many([doc.text for doc in batch])
        tokens = [fingerprinter.tokenizer.cut(split.text) for split in splits]
        spans = [part_spans(split.text, whole, split.parts, fingerprinter.tokenizer.cut) for split, whole in zip(splits, tokens)]
        for split, (result, fps) in zip(splits, fingerprinter.fingerprint_parts(batch, tokens, spans), strict=True):
            yield split, result, fps, None

    def _native_items(self, batch: list[Doc], encode: tuple[str | None] | None
                      ) -> Iterator[tuple[_Split, Result, list[int | None], _Made | None]]:
        """:meth:`_python_items` by the compiled core (:mod:`simdup_es.native`), each with what a store writes of it
        with ``encode = (layout,)``: ``(layout, members, cut, parts, keys)`` of :class:`~simdup_es.keys.StoredKeys`."""
        fingerprinter = self.fingerprinter
        layout = None if encode is None else encode[0]
        found = native.levels(fingerprinter.native_pipeline(), [doc.text for doc in batch], [doc.title or "" for doc in batch],
                              self.params, with_document=True, part_max_bytes=None,
                              store_parts=None if encode is None else MAX_STORED_PARTS,
                              members=None if layout is None else (self.version, layout))
        made = found.stored
        for k, ((split, fps), value, doc) in enumerate(zip(_native_splits(found), found.fingerprints, batch, strict=True)):
            yield split, fingerprinter._result(value, doc), fps, None if made is None else (
                layout, made.members[k], made.cuts[k], made.parts[8 * made.part_first[k] : 8 * made.part_first[k + 1]],
                made.keys[8 * made.key_first[k] : 8 * made.key_first[k + 1]])

    def _split_many(self, texts: Sequence[str]) -> list[_Split]:
        """Unified texts cut into sentences (all at once, as a table) and parts, with their keys."""
        (table, found), params = split_table_units(texts), self.params
        first, counts = table.first.tolist(), table.units.tolist()
        winnowed = winnow_many(batch_codes(found), found.first, params.key_units, params.key_window)
        if params.with_parts:
            starts, ends = table.start.tolist(), table.end.tolist()
            lines = np.flatnonzero(table.line_starts())
            line_first = np.searchsorted(lines, table.first).tolist()
            lines = (lines - table.first[np.searchsorted(table.first, lines, side="right") - 1]).tolist()
        out = []
        for k, u in enumerate(table.texts):
            i, j = first[k], first[k + 1]
            before = list(itertools.accumulate(counts[i:j], initial=0))  # units before each sentence
            parts = []
            if params.with_parts and j > i:
                paragraphs = itertools.pairwise([0, *lines[line_first[k] : line_first[k + 1]], j - i])
                parts = parts_of_columns(starts[i:j], ends[i:j], counts[i:j], paragraphs, before, params)
            out.append(_Split(u, SentenceRows(table, k), parts, _flat_keys(*winnowed[k]), before[-1]))
        return out

    def _levels(self, split: _Split, fps: Sequence[int | None]) -> Levels:
        return Levels(
            version=self.version,
            units=split.units,
            sentences=split.sentences,
            parts=split.parts if isinstance(split.parts, FlatParts) else tuple(split.parts),
            fingerprints=tuple(fps),
            keys=split.keys,
        )


class _Split(NamedTuple):
    """A unified text cut into sentences and parts, with its keys and its number of units."""

    text: str
    sentences: SentenceRows
    parts: Sequence[Part]
    keys: U64Keys
    units: int


def _native_splits(found: native.BatchLevels) -> Iterator[tuple[_Split, list[int | None]]]:
    """Each text of a batch the compiled core cut, as :meth:`PartPrinter._split_many` gives it, with its parts' fingerprints."""
    for k, text in enumerate(found.table.texts):
        a, b, c, d = found.part_first[k], found.part_first[k + 1], found.key_first[k], found.key_first[k + 1]
        parts = FlatParts(found.parts[40 * a : 40 * b])
        yield _Split(text, SentenceRows(found.table, k), parts, U64Keys(found.keys[16 * c : 16 * d]), found.units[k]), \
            found.part_fingerprints[a:b]


def _doc_chars(doc: Doc) -> int:
    return len(doc.text)


def _levels_chunk(fingerprinter: Fingerprinter, texts: list[str], *, params: PartParams) -> list[Levels]:
    return PartPrinter(fingerprinter, params).levels_many(texts)


def _items_chunk(fingerprinter: Fingerprinter, docs: list[Doc], *, params: PartParams, texts: bool = True,
                 encode: tuple[str | None] | None = None) -> _Batch:
    return PartPrinter(fingerprinter, params)._items_many(docs, texts=texts, encode=encode)


class _Batch(list[tuple[Result, "Levels | None", "str | None", "StoredKeys | None"]]):
    """Results, levels, unified texts and stored keys of a batch, as :meth:`PartPrinter._items_many` made them.

    Pickled (on the way back from a worker) as plain numbers, strings and flat arrays
    (:class:`_Sent`): unpickling frozen dataclasses (or even tuples of numbers) for
    every document was most of the CPU the process that feeds two workers spent on
    them. The unified texts and their sentences go as one :class:`SentenceTable`, or not at
    all without ``texts`` (:meth:`PartPrinter.map_items`).
    """

    def __init__(self, items: Iterable[tuple[Result, Levels | None, str | None, StoredKeys | None]] = (),
                 version: str = "", texts: bool = True) -> None:
        super().__init__(items)
        self.version = version  # of the printer: its fingerprints and levels go as numbers
        self.texts = texts  # whether pickling sends the unified texts and the sentences

    def items(self, docs: Sequence[Doc]) -> Iterator[tuple[Result, Levels | None, str | None, StoredKeys | None]]:
        """The batch's results, levels, texts and stored keys (``docs``, the batch's documents, unused here)."""
        return iter(self)

    def __reduce__(self) -> tuple[type[_Sent], tuple[str, list[tuple[object, ...]], SentenceTable | None]]:
        # A row per document: (head, units, parts, fingerprints, keys, stored[, row in the table]). head is
        # the fingerprint's value (or the whole Result when it is not one of the batch's version); parts and
        # keys are flat arrays of unsigned 64-bit numbers, 5 and 2 to an element; stored is None or the
        # StoredKeys' (layout, members, cut, parts, keys).
        rows: list[tuple[object, ...]] = []
        texts: list[str] = []
        columns: list[np.ndarray] = []
        for result, levels, text, stored in self:
            fp = result.fingerprint
            plain = fp is not None and result.error is None and fp.version == self.version and type(fp.value) is int
            head = fp.value if plain else result  # type: ignore[union-attr]
            if levels is None:
                rows.append((head,))
                continue
            assert levels.version == self.version  # one printer made them all
            keys = levels.keys
            parts = levels.parts
            row = (head, levels.units, parts.flat if isinstance(parts, FlatParts) else
                   _flat((p.first, p.stop, p.start, p.end, p.units) for p in parts),
                   levels.fingerprints, keys.flat if isinstance(keys, U64Keys) else _flat((k.key, k.position) for k in keys),
                   None if stored is None else (stored.layout, stored.members, stored.cut, stored.parts, stored.keys))
            if self.texts and text is not None:
                row += (len(texts),)
                texts.append(text)
                columns.append(_columns(levels.sentences))
            rows.append(row)
        return _Sent, (self.version, rows, _table(texts, columns) if texts else None)


def _columns(sentences: Sequence[Sentence]) -> np.ndarray:
    """:attr:`SentenceTable.columns` of ``sentences``, read from their table if they are rows of one."""
    if isinstance(sentences, SentenceRows):
        rows, table = sentences.table.rows(sentences.i), sentences.table
        return table.columns[rows.start : rows.stop]
    return np.array([(s.start, s.end, s.n_units) for s in sentences], dtype=np.int64).reshape(-1, 3)


def _table(texts: list[str], columns: list[np.ndarray]) -> SentenceTable:
    return SentenceTable(tuple(texts), np.cumsum([0, *map(len, columns)]), np.concatenate(columns))


class _Sent(list[tuple[object, ...]]):
    """A :class:`_Batch` as it comes out of a worker: a row of numbers, strings and bytes per document,
    and the batch's sentences if they were sent."""

    def __init__(self, version: str, rows: list[tuple[object, ...]], table: SentenceTable | None) -> None:
        super().__init__(rows)
        self.version = version
        self.table = table

    def items(self, docs: Sequence[Doc]) -> Iterator[tuple[Result, Levels | None, str | None, StoredKeys | None]]:
        """:meth:`_Batch.items`, the objects made from the numbers (the sentences not sent cut again from
        ``docs`` when first read)."""
        version, table = self.version, self.table
        for row, doc in zip(self, docs, strict=True):
            head = row[0]
            result: Result = Result(Fingerprint(head, version), None) if type(head) is int else head  # type: ignore[assignment]
            if len(row) == 1:
                yield result, None, None, None  # type: ignore[misc]
                continue
            _, units, parts, fingerprints, keys, made, *at = row
            k: int = at[0] if at else -1  # type: ignore[assignment]
            sentences: Sequence[Sentence] = SentenceRows(table, k) if table and at else Lazy(
                functools.partial(_resplit, doc.text))
            # Positional: a quarter less time than by keyword, for every document indexed.
            levels = Levels(version, units, sentences, FlatParts(parts),  # type: ignore[arg-type]
                            fingerprints, U64Keys(keys))  # type: ignore[arg-type]
            stored = None if made is None else _stored(made, levels, result.fingerprint.value)  # type: ignore[arg-type,union-attr]
            yield result, levels, table.texts[k] if table and at else None, stored  # type: ignore[misc]


def _stored(made: _Made, levels: Levels, fingerprint: int) -> StoredKeys:
    """The :class:`~simdup_es.keys.StoredKeys` a worker sent (``made``) with the levels and fingerprint they are of."""
    layout, members, cut, parts, keys = made
    return StoredKeys(layout, members, levels.units, cut, parts, keys, levels, fingerprint, levels.version)


def _resplit(raw: str) -> list[Sentence]:
    """A document's sentences, not sent by the worker: its raw text unified and cut again, as the worker did."""
    return split_sentences(unify(raw))


def _flat(rows: Iterable[tuple[int, ...]]) -> bytes:
    return array.array("Q", itertools.chain.from_iterable(rows)).tobytes()
