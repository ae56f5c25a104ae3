"""Fingerprint levels below the document: parts and winnowed keys, to find edited and partial copies.

The document fingerprint finds whole-document near-duplicates (Hamming distance
<= 3). It cannot find a document that was edited by more than a few percent, or a
passage copied into a longer document: the changed or foreign text moves most of
the 64 bits. Two finer levels are kept beside it, each for a kind of copy the
coarser one misses:

- **parts**: paragraphs (lines of unified text), very short ones merged with their
  neighbours until a part has ``min_units``, long ones cut into overlapping
  windows of whole sentences of about ``window_units``. Each part gets a 64-bit
  SimHash with the document's tokens and weights (the same :class:`Fingerprinter`)
  and is looked up by its 8 blocks, matching with 6 of them equal. A part survives edits
  elsewhere in the document and, being a SimHash, small edits inside it (a word
  replaced, a synonym, punctuation, a regional word after script conversion).
- **keys**: winnowed 64-bit hashes of runs of units (:mod:`simdup_es.winnow`),
  each with its unit offset. Exact, so the finest and most selective level: two
  texts sharing a run of at least ``key_window + key_units - 1`` units (10 by
  default) share a key, whatever surrounds the run and however the rest of its
  sentence was edited: one copied clause inside a long host document, a short
  post with a character replaced or a prefix added.

Everything here is pure: text in, numbers out, what stores and :mod:`simdup_es.multilevel`
need. Offsets and sentence indices refer to the unified text (:func:`simdup_es.text.unify`),
like the comparison matrix's. :class:`~simdup_es.parts.PartPrinter` computes the levels
of documents with a fingerprinter's tokens and weights.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from .config import require_ints
from .errors import ConfigError
from .sentences import Sentence, SentenceTable
from .winnow import KEY_K, KEY_W, winnowed

__all__ = ["Key", "Lazy", "Levels", "Part", "PartParams", "SentenceRows", "U64Keys", "not_u64", "parts_of_columns", "split_parts",
           "text_keys"]

T = TypeVar("T")


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
        ``False`` cuts no parts: the levels are the keys alone
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


class Lazy(Sequence[T]):
    """A tuple made on first use by ``make``: equal to, hashed and pickled as that tuple.

    Levels from a :class:`~simdup_es.parts.PartPrinter` hold their sentences (rows of a
    :class:`~simdup_es.sentences.SentenceTable`), parts and keys this way: indexing reads
    none of their objects (a store keeps the part fingerprints and the keys' values), so
    they are never made there.
    """

    __slots__ = ("_make", "_built")

    def __init__(self, make: Callable[[], Iterable[T]]) -> None:
        self._make = make
        self._built: tuple[T, ...] | None = None

    def _all(self) -> tuple[T, ...]:
        if self._built is None:
            self._built = tuple(self._make())
        return self._built

    def __len__(self) -> int:
        return len(self._all())

    def __getitem__(self, i):  # type: ignore[no-untyped-def,override]
        return self._all()[i]

    def __iter__(self) -> Iterator[T]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Lazy):
            other = other._all()
        return self._all() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return repr(self._all())

    def __reduce__(self) -> tuple[type[tuple[T, ...]], tuple[tuple[T, ...]]]:
        return tuple, (self._all(),)


class U64Keys(Lazy[Key]):
    """Keys held as unsigned 64-bit numbers, ``(key, position)`` in turn: :meth:`values` reads them
    without making the :class:`Key` objects, and they need no check (:meth:`Levels.not_u64`)."""

    __slots__ = ("flat",)

    def __init__(self, flat: bytes) -> None:
        super().__init__(functools.partial(_keys_of, flat))
        self.flat = flat

    def __len__(self) -> int:
        return len(self.flat) // 16

    def values(self) -> list[int]:
        """:meth:`Levels.key_values`."""
        return memoryview(self.flat).cast("Q")[0::2].tolist()

    def pairs(self) -> np.ndarray:
        """The ``(key, position)`` rows, ``uint64``, read in place."""
        return np.frombuffer(self.flat, dtype=np.uint64).reshape(-1, 2)


class FlatParts(Lazy[Part]):
    """Parts held as unsigned 64-bit numbers, 5 to a part (first, stop, start, end, units), the :class:`Part`
    objects made on first use: the compiled core's, which a worker sends back as they are."""

    __slots__ = ("flat",)

    def __init__(self, flat: bytes) -> None:
        super().__init__(functools.partial(_parts_of, flat))
        self.flat = flat

    def __len__(self) -> int:
        return len(self.flat) // 40


def part_bounds(parts: Sequence[Part]) -> tuple[np.ndarray, np.ndarray]:
    """Each part's first and stop sentence (``int64``): of :class:`FlatParts` read in place, no :class:`Part` made
    (a 5 MB query has some 16,000 parts)."""
    if isinstance(parts, FlatParts):
        rows = np.frombuffer(parts.flat, dtype=np.uint64).reshape(-1, 5)
        return rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64)
    return (np.fromiter((p.first for p in parts), dtype=np.int64, count=len(parts)),
            np.fromiter((p.stop for p in parts), dtype=np.int64, count=len(parts)))


def _parts_of(flat: bytes) -> Iterator[Part]:
    numbers = iter(memoryview(flat).cast("Q"))
    return itertools.starmap(Part, zip(*[numbers] * 5))


class SentenceRows(Lazy[Sentence]):
    """The sentences of text ``i`` of a :class:`~simdup_es.sentences.SentenceTable`, made when first read."""

    __slots__ = ("table", "i")

    def __init__(self, table: SentenceTable, i: int) -> None:
        super().__init__(functools.partial(table.sentences, i))
        self.table = table
        self.i = i

    def __len__(self) -> int:
        return len(self.table.rows(self.i))


def _keys_of(flat: bytes) -> Iterator[Key]:
    numbers = iter(memoryview(flat).cast("Q"))
    return itertools.starmap(Key, zip(numbers, numbers))


@dataclass(frozen=True)
class Levels:
    """A document's part fingerprints and keys, as a store keeps them.

    ``parts[i]`` has fingerprint ``fingerprints[i]`` (``None`` where the part has no
    content word, e.g. only numbers and stop words). ``units`` is the whole text's.
    """

    version: str
    units: int
    # Tuples, or sequences equal to them whose objects are made on first use (Lazy: the
    # sentences, parts and keys of PartPrinter's batches).
    sentences: Sequence[Sentence]
    parts: Sequence[Part]
    fingerprints: tuple[int | None, ...]
    keys: Sequence[Key]

    def stored(self) -> tuple[list[int], list[int]]:
        """What a store indexes: the part fingerprints (without ``None``) and the distinct keys."""
        return [f for f in self.fingerprints if f is not None], sorted(set(self.key_values()))

    def key_values(self) -> list[int]:
        """The value of each key, in order (without making the key objects)."""
        return self.keys.values() if isinstance(self.keys, U64Keys) else [k.key for k in self.keys]

    def key_array(self) -> np.ndarray | list[int]:
        """:meth:`key_values`, read in place as a ``uint64`` array where the keys are held as one (:class:`U64Keys`: a
        10 MB query has a million keys, a Python int each otherwise)."""
        return self.keys.pairs()[:, 0] if isinstance(self.keys, U64Keys) else self.key_values()

    def not_u64(self) -> list[object]:
        """The fingerprints and key values that are not 64-bit unsigned integers (:func:`not_u64`)."""
        return not_u64(self.fingerprints) or ([] if isinstance(self.keys, U64Keys) else not_u64(self.key_values()))


_U64 = 1 << 64


def not_u64_reference(values: Iterable[object]) -> list[object]:
    """The values (``None`` aside) that are not 64-bit unsigned integers (``int`` or numpy), in order."""
    return [v for v in values if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))
                                                    or not 0 <= int(v) < _U64)]


_PLAIN = frozenset({int, type(None)})


def not_u64(values: Sequence[object]) -> list[object]:
    """:func:`not_u64_reference`, checked in one pass over the types and one ``min``/``max`` when
    every value is a plain ``int`` or ``None`` (as levels from the workers are): every
    document indexed goes through it."""
    kinds = set(map(type, values))
    if kinds <= _PLAIN:
        ints = [v for v in values if v is not None] if type(None) in kinds else values
        if not ints or (min(ints) >= 0 and max(ints) < _U64):  # type: ignore[type-var, operator]
            return []
    return not_u64_reference(values)


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
    return parts_of_columns([s.start for s in sentences], [s.end for s in sentences], counts, _paragraphs(text, sentences),
                  before, params)


def parts_of_columns(starts: Sequence[int], ends: Sequence[int], counts: Sequence[int],
                     paragraphs: Iterable[tuple[int, int]], before: Sequence[int], params: PartParams) -> list[Part]:
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
    values, positions = winnowed(text, params.key_units, params.key_window)
    return [Key(v, p) for v, p in zip(values.tolist(), positions.tolist(), strict=True)]
