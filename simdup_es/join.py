"""All pairs of 64-bit fingerprints within Hamming distance ``k``: pure functions over numpy.

:func:`join_pairs` is Manku et al.'s table method (the self-join that grouping
needs: 1M fingerprints in well under a second); :func:`simdup_es.reference.near_pairs_reference` is its
slow, obviously-correct twin that the tests hold it to. Used by
:mod:`simdup_es.groups` (on the fingerprints of any store's
:meth:`~simdup_es.store.base.Store.scan`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable

import numpy as np

from .config import FINGERPRINT_BITS
from .errors import ConfigError


def _even_blocks(m: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(starts, widths)`` of ``m`` blocks covering 64 bits, as even as possible."""
    base, extra = divmod(FINGERPRINT_BITS, m)
    widths = tuple(base + (j < extra) for j in range(m))
    return tuple(itertools.accumulate((0,) + widths[:-1])), widths


def join_blocks(n: int, k: int) -> int:
    """How many blocks :func:`join_pairs` cuts fingerprints into for ``n`` of them and distance ``k``.

    With ``m`` blocks a pair within ``k`` shares at least ``m - k`` of them, so there
    is one table per choice of ``m - k`` blocks, keyed by those blocks' bits. More
    blocks mean more tables (sorts) but longer keys, so fewer candidate pairs per
    table. The estimate: a sort costs about 2 units per entry, checking a candidate
    pair 1 unit, and a table has about ``n**2 / 2**(key bits + 1)`` of them
    (``k = 3``: 4 x 16 bits below ~30,000 fingerprints, Manku's 10 x ~26 bits above).
    """
    best, best_cost = k + 1, float("inf")
    for m in range(k + 1, min(k + 3, FINGERPRINT_BITS) + 1):
        r = m - k
        tables = math.comb(m, r)
        key_bits = FINGERPRINT_BITS * r // m
        cost = tables * (2 * n + n * n / 2 ** (key_bits + 1))
        if cost < best_cost:
            best, best_cost = m, cost
    return best


def join_pairs(fingerprints: np.ndarray, k: int, *, blocks: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All pairs within distance ``k``: ``(i, j, distance)`` with positions ``i < j``.

    Manku et al.'s tables: cut the bits into ``blocks`` (default :func:`join_blocks`)
    even blocks; a pair within ``k`` agrees on at least ``blocks - k`` of them. For
    each choice of that many blocks, sort the fingerprints by those blocks' bits;
    only neighbours in a run of equal keys are compared. A pair is kept in the first
    table (in :func:`itertools.combinations` order) where its keys are equal, so it
    comes out once (:func:`table_pairs` is one table). :func:`simdup_es.reference.near_pairs_reference` is the reference.
    """
    fps = np.asarray(fingerprints, dtype=np.uint64)
    m = _check(len(fps), k, blocks)
    parts = [table_pairs(fps, k, m, t) for t in range(len(tables(m, k)))]
    if not parts or len(fps) < 2:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.uint8)
    return tuple(np.concatenate([p[n] for p in parts]) for n in range(3))  # type: ignore[return-value]


def _check(n: int, k: int, blocks: int | None) -> int:
    if not 0 <= k < FINGERPRINT_BITS:
        raise ConfigError(f"k must be between 0 and {FINGERPRINT_BITS - 1}, got {k}")
    m = join_blocks(n, k) if blocks is None else blocks
    if not k < m <= FINGERPRINT_BITS:
        raise ConfigError(f"blocks must be more than k ({k}) and at most {FINGERPRINT_BITS}, got {m}")
    return m


def tables(blocks: int, k: int) -> list[tuple[int, ...]]:
    """The tables of :func:`join_pairs` with ``blocks`` blocks: the blocks each one is keyed by, in order."""
    return list(itertools.combinations(range(blocks), blocks - k))


def table_key(fingerprints: np.ndarray, blocks: int, table: tuple[int, ...]) -> np.ndarray:
    """Each fingerprint's key in ``table`` (:func:`tables`): the bits of its blocks, packed."""
    fps = np.asarray(fingerprints, dtype=np.uint64)
    starts, widths = _even_blocks(blocks)
    key = np.zeros(len(fps), np.uint64)
    for c in table:
        key = (key << np.uint64(widths[c])) | ((fps >> np.uint64(starts[c])) & np.uint64((1 << widths[c]) - 1))
    return key


def table_pairs(fingerprints: np.ndarray, k: int, blocks: int, table: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs of :func:`join_pairs` (with ``blocks`` blocks) that its table number ``table`` keeps.

    Those within ``k`` whose keys are equal in that table and in no earlier one. The
    tables of a pair are known from the two fingerprints alone, so a distributed job
    can send each fingerprint to one place per table (by its key there) and find every
    pair exactly once (:mod:`simdup_es.dask_groups`).
    """
    fps = np.asarray(fingerprints, dtype=np.uint64)
    n = len(fps)
    empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.uint8))
    if n < 2:
        return empty
    m = blocks
    starts, widths = _even_blocks(m)
    parts = [(np.uint64(st), np.uint64((1 << w) - 1)) for st, w in zip(starts, widths)]
    combos = tables(m, k)
    combo, earlier = combos[table], combos[:table]
    pos_bits = max(1, (n - 1).bit_length())
    key = table_key(fps, m, combo)
    key_bits = sum(widths[c] for c in combo)
    if key_bits + pos_bits <= 64:  # sort one packed array: faster than argsort
        packed = (key << np.uint64(pos_bits)) | np.arange(n, dtype=np.uint64)
        packed.sort()
        key = packed >> np.uint64(pos_bits)
        order = (packed & np.uint64((1 << pos_bits) - 1)).astype(np.int64)
    else:
        order = np.argsort(key, kind="stable")
        key = key[order]
    out_i: list[np.ndarray] = []
    out_j: list[np.ndarray] = []
    out_d: list[np.ndarray] = []
    # Runs of equal keys; compare each entry with the next 1, 2, ... of its run.
    active = np.flatnonzero(key[1:] == key[:-1])
    gap = 1
    while len(active):
        a, b = order[active], order[active + gap]
        fa, fb = fps[a], fps[b]
        dist = np.bitwise_count(fa ^ fb)
        hit = np.flatnonzero(dist <= k)
        if len(hit):
            fa, fb = fa[hit], fb[hit]
            equal = [((fa >> st) & mk) == ((fb >> st) & mk) for st, mk in parts]
            first = np.ones(len(hit), dtype=bool)
            for prev in earlier:  # found in an earlier table already?
                first &= ~np.logical_and.reduce([equal[c] for c in prev])
            hit = hit[first]
            out_i.append(np.minimum(a[hit], b[hit]))
            out_j.append(np.maximum(a[hit], b[hit]))
            out_d.append(dist[hit])
        gap += 1
        nxt = active + gap
        active = active[nxt < n]
        active = active[key[active + gap] == key[active]]
    if not out_i:
        return empty
    return np.concatenate(out_i), np.concatenate(out_j), np.concatenate(out_d).astype(np.uint8)


class UnionFind:
    """Disjoint sets over arbitrary integer positions; a set's root is its smallest member."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, x: int) -> int:
        parent = self.parent
        root = parent.setdefault(x, x)
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    def union(self, a: int, b: int) -> bool:
        """Join the sets of ``a`` and ``b``; false if they were one already."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[max(ra, rb)] = min(ra, rb)
        return True

    def connected(self, a: int, b: int) -> bool:
        return a in self.parent and b in self.parent and self.find(a) == self.find(b)

    def roots(self) -> dict[int, int]:
        """``{position: smallest position of its set}`` for every position seen."""
        return {x: self.find(x) for x in list(self.parent)}


def components(pairs: Iterable[tuple[int, int]]) -> dict[int, int]:
    """Connected components of a graph given by its edges: ``{node: smallest node of its component}``.

    Nodes that occur in no pair are not in the result (they are alone).
    """
    uf = UnionFind()
    for a, b in pairs:
        uf.union(int(a), int(b))
    return uf.roots()


__all__ = ["UnionFind", "components", "join_blocks", "join_pairs", "table_key", "table_pairs",
           "tables"]
