"""Common text: what many stored documents hold, told from how many documents hold each winnowed key.

A footer every page of a site carries, a template sentence, a licence clause: text that more than a
few stored documents hold is *common*. Sharing it makes no copy, and it never counts in a share; it
is shown apart, with how many documents hold it. Text that few documents hold is copied text from
one sentence up (:mod:`simdup_es.multilevel` judges by it). The measure is the store's own: how many
stored documents hold each winnowed key of the text (a key is the hash of a run of
:data:`~simdup_es.winnow.KEY_K` units, :mod:`simdup_es.winnow`), asked of the store per query
(:meth:`simdup_es.store.base.Store.key_frequencies`), so it stays current as documents come and go.
The idea is MOSS's ``-m`` (Schleimer, Wilkerson and Aiken, "Winnowing: local algorithms for document
fingerprinting": a passage held by more than ``m`` programs is ignored), with the threshold relative
to the store's size by default.

Per unit of a text (:class:`Rarity`): a unit is under a *chain* of keys when a gram of the text equal
to a counted key starts at most :data:`~simdup_es.winnow.KEY_W` units after the previous one, from the
first gram's start to the last gram's end; a chain of keys held by more than ``common`` documents is
common text, one of keys held by more than ``short_common`` is too frequent for a short passage to
count. A comparison carries each chain to its sentence's edge when fewer than ``KEY_W`` units lie between
(:func:`to_sentence_edges`: winnowing leaves a text's first and last few units under no key). Both texts of a
comparison are read this way against the query's counted keys: a run the two
share holds the same grams on both sides. Text of an *excluded* document (a template the user names,
MOSS's ``-b``) counts as held by every document (:data:`EXCLUDED`).

Pure: numpy over unit codes, no store and no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import native
from .sentences import UnitPoints
from .text import unify
from .winnow import KEY_K, KEY_W, batch_codes, gram_hashes, winnowed

__all__ = ["COMMON_MIN", "COMMON_SHARE", "EXCLUDED", "Held", "KeyCounts", "Rarity", "codes_of_scan", "common_threshold",
           "held_passages", "rarity", "template_keys", "to_sentence_edges"]

COMMON_MIN = 10
"""The fewest documents above which a key is common whatever the store's size (MOSS's ``-m`` default)."""
COMMON_SHARE = 0.01
"""The share of the store's documents above which a key is common by default: ``max(10, 1 %)``. On the
evaluation's store (docs/evaluation.md) it lies between the footers and headers (held by 3-6 % of the
documents) and a paragraph copied into 100 documents (0.6-0.7 %)."""
EXCLUDED = 1 << 62
"""The count given to a key of an excluded document: more than any store holds."""


def common_threshold(documents: int, count: int | None = None, share: float = COMMON_SHARE) -> int:
    """Documents above which a key is common: ``count`` when given, else ``share`` of ``documents``, at least
    :data:`COMMON_MIN`."""
    return count if count is not None else max(COMMON_MIN, int(share * documents))


@dataclass(frozen=True)
class KeyCounts:
    """How many stored documents hold each of some keys, out of ``documents`` (the stored documents that hold
    any key). ``keys`` are sorted and distinct, ``counts`` theirs; a key not asked counts 0 (:meth:`of`)."""

    keys: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    documents: int = 0

    @classmethod
    def of_pairs(cls, keys: Iterable[int], counts: Iterable[int], documents: int) -> KeyCounts:
        """From keys (any order, repeats the same count) and their counts."""
        values = np.fromiter(keys, dtype=np.uint64)
        numbers = np.fromiter(counts, dtype=np.int64, count=values.size)
        unique, first = np.unique(values, return_index=True)
        return cls(unique, numbers[first], int(documents))

    def __len__(self) -> int:
        return int(self.keys.size)

    @functools.cached_property
    def _table(self) -> Any:
        """These counts as the compiled core reads them (made once: a search reads every candidate by them)."""
        core = native.module()
        assert core is not None
        return core.KeyTable(np.asarray(self.keys, dtype=np.uint64), np.asarray(self.counts, dtype=np.int64))

    def of(self, values: np.ndarray | Sequence[int]) -> np.ndarray:
        """The count of each of ``values`` (``int64``), 0 for a key not counted here."""
        values = np.asarray(values, dtype=np.uint64)
        if not self.keys.size:
            return np.zeros(values.shape, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.keys, values), self.keys.size - 1)
        return np.where(self.keys[at] == values, self.counts[at], 0)

    def excluding(self, keys: Iterable[int]) -> KeyCounts:
        """These counts, and ``keys`` (of excluded documents: templates) held by every document (:data:`EXCLUDED`)."""
        more = np.unique(np.fromiter(keys, dtype=np.uint64))
        if not more.size:
            return self
        merged = np.union1d(self.keys, more)
        counts = self.of(merged)
        counts[np.isin(merged, more)] = EXCLUDED
        return KeyCounts(merged, counts, self.documents)


@dataclass(frozen=True)
class Rarity:
    """Per unit of a text: ``held``, the most documents holding a key of the chain of keys held by more
    than ``short_common`` documents the unit lies under (0 for a unit under none); ``common``, whether it
    lies under a chain of keys held by more than ``common`` documents (module docstring). ``held`` is int64, or
    the narrowest of int16, int32 and int64 that holds it when the compiled core made it."""

    held: np.ndarray
    common: np.ndarray

    @property
    def frequent(self) -> np.ndarray:
        """Under a chain of keys held by more than ``short_common`` documents: no short passage counts here."""
        return self.held > 0

    @classmethod
    def none(cls, units: int) -> Rarity:
        """A text with nothing common (no store to ask)."""
        return cls(np.zeros(units, np.int64), np.zeros(units, bool))


def to_sentence_edges(side: Rarity, sentence: np.ndarray) -> Rarity:
    """``side`` with each chain (common, and too frequent for a short passage) carried to its sentence's edge when
    fewer than :data:`~simdup_es.winnow.KEY_W` units lie between; ``sentence``: each unit's sentence, ascending.

    Only winnowed keys are counted, and winnowing picks one in every ``KEY_W`` grams: the first key of a text many
    documents hold starts up to ``KEY_W - 1`` units after the text does, and the last ends up to ``KEY_W - 1`` units
    before it, so a footer's first and last few characters lie under no counted key. A tail of the sentence that
    short is part of the same text (and could never be a passage of its own)."""
    if side.held.size != sentence.size or not side.held.any():
        return side
    return Rarity(_to_edges(side.held, sentence), _to_edges(side.common.astype(np.int64), sentence) > 0)


def _to_edges(values: np.ndarray, sentence: np.ndarray) -> np.ndarray:
    """:func:`to_sentence_edges` of one per-unit array: each run of nonzero ``values`` carried to the edges of its
    first and last unit's sentences, with the run's value at that edge, when fewer than ``KEY_W`` units away."""
    out = values.copy()
    edges = np.diff(np.concatenate(([0], (values != 0).astype(np.int8), [0])))
    for start, stop in zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist(), strict=True):
        first = int(np.searchsorted(sentence, sentence[start], side="left"))
        last = int(np.searchsorted(sentence, sentence[stop - 1], side="right"))
        if start - first < KEY_W:
            out[first:start] = np.maximum(out[first:start], values[start])
        if last - stop < KEY_W:
            out[stop:last] = np.maximum(out[stop:last], values[stop - 1])
    return out


def template_keys(texts: Iterable[str]) -> list[int]:
    """The winnowed keys of texts whose text never counts (templates, base files: :meth:`KeyCounts.excluding`)."""
    return sorted({int(v) for text in texts for v in winnowed(unify(text))[0].tolist()})


def codes_of_scan(points: np.ndarray, word_at: np.ndarray, words: list[str]) -> np.ndarray:
    """:func:`simdup_es.winnow.unit_codes` of a text from its sentence scan's units (:func:`simdup_es.sentences.scan`:
    the code point of each unit's first character, which units are words and their text), which a search keeps. The
    compiled core codes them where it computes (:mod:`simdup_es.native`)."""
    if (core := native.module()) is not None:
        return np.frombuffer(core.unit_codes(np.ascontiguousarray(points, dtype=np.uint32),
                                             np.ascontiguousarray(word_at, dtype=np.int64), words), dtype=np.uint64)
    return batch_codes(UnitPoints(np.asarray(points), np.asarray(word_at), words,
                                  np.array([0, len(points)], dtype=np.int64)))


def rarity(codes: np.ndarray, counts: KeyCounts, common: int, short_common: int) -> Rarity:
    """:class:`Rarity` of a text of unit ``codes`` (:func:`simdup_es.winnow.unit_codes`) by the ``counts`` of the
    keys asked (``short_common`` at most ``common``). The compiled core computes it where it computes
    (:mod:`simdup_es.native`)."""
    if native.module() is not None:
        # held in the narrowest integer type that holds its counts (a long query keeps it for all its comparisons)
        held, width, common_ = counts._table.rarity(np.asarray(codes, dtype=np.uint64), common, short_common, KEY_K,
                                                    KEY_W)
        return Rarity(np.frombuffer(held, dtype=width), np.frombuffer(common_, dtype=bool))
    n = int(codes.size)
    held = counts.of(gram_hashes(codes, KEY_K)) if counts.keys.size else np.zeros(0, np.int64)
    at = np.flatnonzero(held > min(short_common, common))
    return Rarity(_chains(at, held[at], n), _chains(at[held[at] > common], None, n) > 0)


def _chains(at: np.ndarray, weight: np.ndarray | None, n: int) -> np.ndarray:
    """Per unit of ``n``: the largest ``weight`` of the grams (starting at ``at``, ascending) of the chain it lies
    under, 0 for none (1 for every chain without ``weight``). A chain: grams at most ``KEY_W`` apart."""
    out = np.zeros(n, dtype=np.int64)
    if not at.size:
        return out
    cut = np.flatnonzero(np.diff(at) > KEY_W) + 1
    firsts, lasts = at[np.concatenate(([0], cut))], at[np.concatenate((cut - 1, [at.size - 1]))]
    tops = (np.maximum.reduceat(weight, np.concatenate(([0], cut))) if weight is not None
            else np.ones(firsts.size, np.int64))
    for first, stop, top in zip(firsts.tolist(), np.minimum(lasts + KEY_K, n).tolist(), tops.tolist(), strict=True):
        out[first:stop] = top  # chains never overlap: each ends KEY_K after its last gram, the next starts > KEY_W on
    return out


@dataclass(frozen=True, slots=True)
class Held:
    """A stretch of common text two texts share: units ``start .. stop - 1`` of one side, held by ``documents``
    stored documents at most (:data:`EXCLUDED` or more: an excluded document's text)."""

    start: int
    stop: int
    documents: int

    @property
    def excluded(self) -> bool:
        return self.documents >= EXCLUDED


def held_passages(shared: np.ndarray, held: np.ndarray) -> tuple[Held, ...]:
    """The stretches of ``shared`` units (copied and common), each with the most documents holding its text."""
    if not shared.any():
        return ()
    edges = np.diff(np.concatenate(([0], shared.astype(np.int8), [0])))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    # Each stretch's maximum over it alone: the units between two stretches count 0 (counts are never negative).
    tops = np.maximum.reduceat(np.where(shared, held, 0), starts).tolist()
    return tuple(Held(a, b, t) for a, b, t in zip(starts.tolist(), stops.tolist(), tops, strict=True))
