"""The embedded store's in-memory indexes: candidate tables of document fingerprints, and the level index.

:class:`MemoryIndex` holds, per fingerprint version, a :class:`TableIndex`: ``k + 1`` blocks
of the fingerprint for ``k =`` :data:`TABLE_K` (pigeonhole, as Manku, Jain and Das Sarma's
"Detecting near-duplicates for web crawling"), one table sorted by each block's low bits, so
a lookup within ``k <= TABLE_K`` reads a few buckets and one within a larger ``k`` (up to 7)
reads every row; either returns exactly the fingerprints within ``k``. Writes go to a small
unsorted tail that is merged in when it grows. :class:`LevelIndex` holds the documents'
part fingerprints, found by the same 6 quads a cluster's index holds
(:func:`simdup_es.keys.quad_keys`) and kept when :func:`simdup_es.keys.part_match` says so,
and their winnowed keys. :func:`simdup_es.reference.near_positions_reference` is the slow twin of a table lookup. Pure: no
SQLite here (:mod:`simdup_es.store.local` reads the rows).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .. import keys as index_keys
from ..config import FINGERPRINT_BITS
from ..errors import ConfigError

TABLE_K = 3
"""The distance the candidate tables are cut for (4 tables of 16 bits): the default ``k``; a lookup within more
reads every row of the version."""
#: Widest bucket key: a table's offsets array has ``2**MAX_KEY_BITS + 1`` entries. At most 16:
#: keys are ``uint16`` so that numpy radix-sorts them.
MAX_KEY_BITS = 16


@dataclass(frozen=True)
class TableLayout:
    """The candidate tables for a distance bound ``k``: ``k + 1`` blocks, as even as possible.

    ``starts[j]`` and ``widths[j]`` say which bits block ``j`` covers (lowest bits
    first); its table is keyed by the low ``key_bits[j] = min(widths[j], 16)`` bits
    of the block.
    """

    k: int
    starts: tuple[int, ...]
    widths: tuple[int, ...]

    @classmethod
    def for_k(cls, k: int) -> TableLayout:
        if not 0 <= k < FINGERPRINT_BITS:
            raise ConfigError(f"k must be between 0 and {FINGERPRINT_BITS - 1}, got {k}")
        t = k + 1
        base, extra = divmod(FINGERPRINT_BITS, t)
        widths = tuple(base + (j < extra) for j in range(t))
        starts = tuple(itertools.accumulate((0,) + widths[:-1]))
        return cls(k, starts, widths)

    @property
    def tables(self) -> int:
        return len(self.widths)

    @property
    def key_bits(self) -> tuple[int, ...]:
        return tuple(min(w, MAX_KEY_BITS) for w in self.widths)

    def key(self, fingerprints: np.ndarray, j: int) -> np.ndarray:
        """Bucket key of table ``j`` for each fingerprint (``uint16``, so numpy radix-sorts it)."""
        keys = np.asarray(fingerprints, dtype=np.uint64) >> np.uint64(self.starts[j])
        if self.key_bits[j] < 16:
            keys &= np.uint64((1 << self.key_bits[j]) - 1)
        return keys.astype(np.uint16)  # 16 key bits: the cast keeps exactly the low 16


class TableIndex:
    """Immutable candidate tables over the fingerprints of one version.

    ``seqs`` are the store's row numbers (positive, each once). Each table is an
    ``(n, 2)`` ``uint64`` array of ``(fingerprint, seq)`` rows sorted by the table's
    key, so building it takes one gather and a bucket is one contiguous slice.
    """

    def __init__(self, seqs: np.ndarray, fingerprints: np.ndarray, layout: TableLayout) -> None:
        seqs = np.asarray(seqs, dtype=np.int64)
        fps = np.asarray(fingerprints, dtype=np.uint64)
        if seqs.shape != fps.shape or seqs.ndim != 1:
            raise ValueError("seqs and fingerprints must be 1-d arrays of the same length")
        self.layout = layout
        rows = np.empty((len(fps), 2), np.uint64)
        rows[:, 0] = fps
        rows[:, 1] = seqs.view(np.uint64)
        # Per table: (shift, key mask, offsets as a list for fast scalar access, sorted rows).
        self._tables: list[tuple[int, int, list[int], np.ndarray]] = []
        self._offsets: list[np.ndarray] = []
        for j in range(layout.tables):
            key = layout.key(fps, j)
            order = np.argsort(key, kind="stable")  # radix sort for <= 16-bit keys
            offsets = np.concatenate(([0], np.cumsum(np.bincount(key, minlength=1 << layout.key_bits[j]), dtype=np.int64)))
            self._offsets.append(offsets)
            sorted_rows = np.take(rows, order, axis=0)  # 3x faster than rows[order] here
            self._tables.append((layout.starts[j], (1 << layout.key_bits[j]) - 1, offsets.tolist(), sorted_rows))

    def __len__(self) -> int:
        return len(self._tables[0][3])

    @property
    def nbytes(self) -> int:
        return sum(t.nbytes + o.nbytes for (_, _, _, t), o in zip(self._tables, self._offsets))

    def entries(self) -> tuple[np.ndarray, np.ndarray]:
        """All ``(seqs, fingerprints)``, in table 0's order."""
        rows = self._tables[0][3]
        return np.ascontiguousarray(rows[:, 1]).view(np.int64), np.ascontiguousarray(rows[:, 0])

    def lookup(self, query: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(seqs, fingerprints)`` within distance ``k`` of ``query``: from the tables for ``k <= layout.k`` (a seq
        may occur more than once: it can share several blocks with the query), else from every row."""
        if k > self.layout.k:
            rows = self._tables[0][3]
            found = rows[np.bitwise_count(rows[:, 0] ^ np.uint64(query)) <= k]
            return found[:, 1].view(np.int64), found[:, 0]
        parts = []
        for shift, mask, offsets, rows in self._tables:
            key = (query >> shift) & mask
            lo, hi = offsets[key], offsets[key + 1]
            if hi > lo:
                parts.append(rows[lo:hi])
        if not parts:
            return np.empty(0, np.int64), np.empty(0, np.uint64)
        found = np.concatenate(parts) if len(parts) > 1 else parts[0]
        found = found[np.bitwise_count(found[:, 0] ^ np.uint64(query)) <= k]
        return found[:, 1].view(np.int64), found[:, 0]


def _codes(vcodes: np.ndarray) -> list[int]:
    """The distinct version codes (small positive integers) in an array."""
    return np.flatnonzero(np.bincount(vcodes)).tolist() if len(vcodes) else []


class MemoryIndex:
    """Per-version :class:`TableIndex` plus an unsorted tail of recent rows.

    Rows are ``(seq, fingerprint as int64, version code)``. A tail row supersedes
    any base entry with the same seq (merge drops the base entry); until the merge,
    lookups may report both and the caller dedupes by seq. A tail row with version
    code 0 marks a deleted document: it matches nothing and merge drops its entry
    (until then the base may report its seq, which the caller's re-read from SQLite drops).
    """

    def __init__(self, layout: TableLayout, generation: int = 0) -> None:
        self.layout = layout
        self.generation = generation
        self.base: dict[int, TableIndex] = {}
        self._tail_parts: list[np.ndarray] = []
        self._tail: np.ndarray | None = None  # (n, 3) int64
        self._tail_fps = np.empty(0, np.uint64)
        self.tail_size = 0

    def add(self, rows: np.ndarray) -> None:
        if len(rows):
            self._tail_parts.append(rows)
            self._tail = None
            self.tail_size += len(rows)

    def _tail_rows(self) -> np.ndarray:
        if self._tail is None:
            parts = self._tail_parts
            self._tail = np.concatenate(parts) if parts else np.empty((0, 3), np.int64)
            self._tail_parts = [self._tail] if len(self._tail) else []
            self._tail_fps = np.ascontiguousarray(self._tail[:, 1]).view(np.uint64)
        return self._tail

    def lookup(self, query: int, vcode: int, k: int) -> list[int]:
        """Seqs within ``k`` (as the index knows them), without duplicates."""
        found: list[int] = []
        table = self.base.get(vcode)
        if table is not None:
            found.extend(table.lookup(query, k)[0].tolist())
        tail = self._tail_rows()
        if len(tail):
            hit = (np.bitwise_count(self._tail_fps ^ np.uint64(query)) <= k) & (tail[:, 2] == vcode)
            found.extend(tail[hit, 0].tolist())
        return list(dict.fromkeys(found))

    def merge(self) -> None:
        """Fold the tail into the tables (the latest row per seq wins)."""
        tail = self._tail_rows()
        if not len(tail):
            return
        order = np.argsort(tail[:, 0], kind="stable")  # near-linear: tails come mostly in seq order
        seqs = tail[order, 0]
        last = np.ones(len(seqs), dtype=bool)
        last[:-1] = seqs[1:] != seqs[:-1]
        tail = tail[order[last]]
        live = tail[tail[:, 2] > 0]  # vcode 0: a deleted document, which only removes its entry
        for vcode in set(self.base) | set(_codes(live[:, 2])):
            old = self.base.get(vcode)
            mine = live[live[:, 2] == vcode]
            if old is None:
                seqs, fps = np.empty(0, np.int64), np.empty(0, np.uint64)
            else:
                seqs, fps = old.entries()
                keep = ~np.isin(seqs, tail[:, 0])
                if not len(mine) and keep.all():
                    continue
                seqs, fps = seqs[keep], fps[keep]
            seqs = np.concatenate([seqs, mine[:, 0]])
            fps = np.concatenate([fps, np.ascontiguousarray(mine[:, 1]).view(np.uint64)])
            if len(seqs):
                self.base[vcode] = TableIndex(seqs, fps, self.layout)
            else:
                self.base.pop(vcode, None)
        self._tail_parts, self._tail, self.tail_size = [], None, 0
        self._tail_fps = np.empty(0, np.uint64)

    @classmethod
    def from_rows(cls, rows: np.ndarray, layout: TableLayout, generation: int) -> MemoryIndex:
        """An index over rows with distinct seqs (a snapshot), without a tail."""
        index = cls(layout, generation)
        codes = _codes(rows[:, 2])
        for vcode in codes:
            mine = rows if len(codes) == 1 else rows[rows[:, 2] == vcode]
            index.base[vcode] = TableIndex(mine[:, 0], np.ascontiguousarray(mine[:, 1]).view(np.uint64), layout)
        return index

    def rows(self) -> np.ndarray:
        """Every row the tables hold (call :meth:`merge` first), for a snapshot."""
        parts = []
        for vcode, table in self.base.items():
            seqs, fps = table.entries()
            part = np.empty((len(seqs), 3), np.int64)
            part[:, 0], part[:, 1], part[:, 2] = seqs, fps.view(np.int64), vcode
            parts.append(part)
        return np.concatenate(parts) if parts else np.empty((0, 3), np.int64)

    @property
    def nbytes(self) -> int:
        return sum(t.nbytes for t in self.base.values()) + sum(p.nbytes for p in self._tail_parts)


class SortedKeys:
    """Sorted 64-bit keys, and where each value's entries lie in them (``np.searchsorted``'s ``left`` and ``right``),
    found through a table of where each value of the keys' top bits starts.

    The keys are hashes, so a bucket holds a few of them and a lookup reads one bucket (a cache line or two)
    where a binary search reads some 23 places across a large array (100,000 documents hold 10 million keys).
    A bucket larger than :data:`WINDOW` (a key many documents hold) is searched in the whole array.
    """

    WINDOW = 32

    def __init__(self, keys: np.ndarray) -> None:
        self.keys = keys
        bits = max(1, min(24, (len(keys) // 8).bit_length()))  # 4 to 8 keys a bucket
        self._shift = np.uint64(64 - bits)
        firsts = np.searchsorted(keys, np.arange(1 << bits, dtype=np.uint64) << self._shift)  # no copy of the keys
        self.starts: np.ndarray = np.append(firsts, len(keys)).astype(np.int32 if len(keys) < 2**31 else np.int64)

    def ranges(self, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``np.searchsorted(keys, wanted, "left")`` and ``"right"``."""
        wanted = np.asarray(wanted, dtype=np.uint64)
        if not len(self.keys) or not len(wanted):
            return np.zeros(len(wanted), np.int64), np.zeros(len(wanted), np.int64)
        bucket = (wanted >> self._shift).astype(np.intp)
        first: np.ndarray = self.starts[bucket].astype(np.int64)
        last: np.ndarray = self.starts[bucket + 1].astype(np.int64)
        at = first[:, None] + np.arange(self.WINDOW)
        inside = at < last[:, None]
        window = self.keys[np.minimum(at, len(self.keys) - 1)]
        lo = first + np.count_nonzero(inside & (window < wanted[:, None]), axis=1)
        hi = first + np.count_nonzero(inside & (window <= wanted[:, None]), axis=1)
        big = np.flatnonzero(last - first > self.WINDOW)
        if len(big):
            lo[big] = np.searchsorted(self.keys, wanted[big], "left")
            hi[big] = np.searchsorted(self.keys, wanted[big], "right")
        return lo, hi


class LevelIndex:
    """Part fingerprints and keys of the documents with levels, for :meth:`LocalStore.part_candidates`.

    Documents are numbered by position ``0 .. n-1`` (``seqs`` ascending, ``ids``, ``vcodes``,
    ``units``); ``part_owner`` and ``key_owner`` give the position of each part and key.
    ``alive[pos]`` is cleared when the document was written again after the index was built
    (its current levels, if any, are in a newer index). Parts are found by their 6 quads
    (:func:`simdup_es.keys.quad_keys`), one table per quad bucketed by its quad's 32 bits
    folded to at most 16, then checked (:func:`simdup_es.keys.part_match`).
    """

    def __init__(self, seqs: np.ndarray, ids: list[str], vcodes: np.ndarray, units: np.ndarray, part_fps: np.ndarray,
                 part_owner: np.ndarray, keys: np.ndarray, key_owner: np.ndarray) -> None:
        self.seqs, self.ids, self.vcodes, self.units = seqs, ids, vcodes, units
        self.alive = np.ones(len(seqs), dtype=bool)
        order = np.argsort(keys, kind="stable")
        self.keys, self.key_owner = SortedKeys(keys[order]), key_owner[order]
        self._holders: tuple[np.ndarray, int] | None = None  # for key_counts, until a document is dropped
        self._ranks: np.ndarray | None = None
        self.part_fps, self.part_owner = part_fps, part_owner
        # About one part a bucket: offsets of 6 * 2**bits entries, however few the parts (a tail of a few documents).
        self._bits = min(MAX_KEY_BITS, max(4, len(part_fps).bit_length()))
        buckets = self._buckets(part_fps)
        size = 1 << self._bits
        orders, counts = [], []
        for quad in range(buckets.shape[1]):  # radix sorts of uint16 keys
            orders.append(np.argsort(buckets[:, quad], kind="stable").astype(np.uint32))
            counts.append(np.bincount(buckets[:, quad], minlength=size))
        self._order = np.concatenate(orders) if orders else np.empty(0, np.uint32)  # quad p's parts at p * n
        self._offsets = np.concatenate(([0], np.cumsum(np.concatenate(counts), dtype=np.int64)))

    def _buckets(self, fps: np.ndarray) -> np.ndarray:
        """Each part's bucket in each quad's table: ``(len(fps), 6)`` ``uint16`` (made a slice at a time: a part's
        quads take 6 numbers of 8 bytes while they are made)."""
        out = np.empty((len(fps), len(index_keys.QUAD_BLOCKS)), np.uint16)
        for start in range(0, len(fps), 1 << 16):
            quads = index_keys.quad_keys(fps[start : start + (1 << 16)]) & np.uint64(0xFFFFFFFF)  # the quad's 4 bytes
            out[start : start + (1 << 16)] = (quads ^ quads >> np.uint64(16)) & np.uint64((1 << self._bits) - 1)
        return out

    def __len__(self) -> int:
        return len(self.seqs)

    def drop(self, seqs: np.ndarray) -> None:
        """Mark the documents with these seqs as superseded."""
        pos = np.searchsorted(self.seqs, seqs)
        pos = pos[pos < len(self.seqs)]
        self.alive[pos[np.isin(self.seqs[pos], seqs)]] = False
        self._holders = None

    @property
    def nbytes(self) -> int:
        arrays = (self.seqs, self.alive, self.vcodes, self.units, self.part_fps, self.part_owner, self.keys.keys,
                  self.keys.starts, self.key_owner, self._order, self._offsets, *(() if self._ranks is None else (self._ranks,)))
        return sum(a.nbytes for a in arrays)

    def part_pairs(self, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(query, position)`` of the documents with a part sharing at least :data:`simdup_es.keys.PART_MATCH`
        blocks with each of the query parts ``queries`` (each document once a query part), by query then document."""
        queries = np.asarray(queries, dtype=np.uint64)
        if not len(self.part_fps) or not len(queries):
            return np.empty(0, np.int64), np.empty(0, np.int64)
        quads = np.arange(len(index_keys.QUAD_BLOCKS)) << self._bits
        at = (self._buckets(queries).astype(np.int64) + quads).ravel()  # (query, quad), query-major
        lo, counts = self._offsets[at], self._offsets[at + 1] - self._offsets[at]
        found = self._order[_ranges(lo, counts)].astype(np.int64)
        query = np.repeat(np.arange(len(at)) // len(quads), counts)
        ok = index_keys.part_match(queries[query], self.part_fps[found])
        pairs = np.unique(query[ok] * len(self.seqs) + self.part_owner[found[ok]])
        return pairs // len(self.seqs), pairs % len(self.seqs)

    def key_pairs(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(key, position)`` of the documents holding each of ``keys``, by key."""
        lo, hi = self.keys.ranges(keys)
        counts = hi - lo
        return np.repeat(np.arange(len(keys)), counts), self.key_owner[_ranges(lo, counts)].astype(np.int64)

    def best_matches(self, part_terms: list[tuple[int, int]], key_terms: list[tuple[int, int]], vcode: int, limit: int
                     ) -> list[tuple[int, frozenset[int], frozenset[int]]]:
        """The ``limit`` live documents of version ``vcode`` that match the most of the query's parts and keys (ties
        by id), each as its position and which parts and keys it matched (the ``(index, value)`` terms'
        indices): :func:`simdup_es.multilevel.matched_by_document` and :func:`~simdup_es.multilevel.best_candidates`
        counted in arrays, objects made for the chosen documents alone (a 2 kB query's keys match thousands)."""
        part_query, part_docs = self.part_pairs(np.array([f for _, f in part_terms], dtype=np.uint64))
        key_query, key_docs = self.key_pairs(np.array([k for _, k in key_terms], dtype=np.uint64))
        terms = len(part_terms) + len(key_terms)
        docs = np.concatenate((part_docs, key_docs))
        term = np.concatenate((part_query, key_query + len(part_terms)))
        ok = self.alive[docs] & (self.vcodes[docs] == vcode)
        pairs = np.unique(docs[ok] * terms + term[ok])  # by document, then term
        docs, term = pairs // terms, pairs % terms
        firsts = np.flatnonzero(np.diff(docs, prepend=-1))  # each document's first pair
        docs, sizes = docs[firsts], np.diff(firsts, append=len(docs))
        if len(docs) > limit:  # the best (unordered: the caller ranks what every index returns)
            chosen = np.lexsort((self._id_ranks()[docs], -sizes))[:limit]
            docs, firsts, sizes = docs[chosen], firsts[chosen], sizes[chosen]
            term = term[_ranges(firsts, sizes)]
            firsts = np.cumsum(sizes) - sizes
        index = np.array([i for i, _ in part_terms] + [i for i, _ in key_terms], dtype=np.int64)[term].tolist()
        parts_to = (firsts + np.add.reduceat(term < len(part_terms), firsts)).tolist() if len(term) else []
        return [(doc, frozenset(index[a:b]), frozenset(index[b : a + n]))
                for doc, a, b, n in zip(docs.tolist(), firsts.tolist(), parts_to, sizes.tolist())]

    def _id_ranks(self) -> np.ndarray:
        """Each document's place in the order of the ids (as Python orders strings), made at the first ranking."""
        if self._ranks is None:
            self._ranks = np.empty(len(self.ids), dtype=np.int64)
            self._ranks[sorted(range(len(self.ids)), key=self.ids.__getitem__)] = np.arange(len(self.ids))
        return self._ranks

    def key_counts(self, keys: np.ndarray) -> tuple[np.ndarray, int]:
        """How many live documents hold each key, and how many hold any key. A document holds a key once (the
        store keeps its distinct keys), so the live entries between a key's first and last are the count."""
        if self._holders is None:
            live = self.alive[self.key_owner]
            holds = np.zeros(len(self.seqs), dtype=bool)
            holds[self.key_owner] = True
            self._holders = (np.concatenate(([0], np.cumsum(live, dtype=np.int64))),
                             int(np.count_nonzero(holds & self.alive)))
        before, documents = self._holders
        lo, hi = self.keys.ranges(keys)
        return before[hi] - before[lo], documents


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The positions ``starts[i] .. starts[i] + counts[i] - 1`` of each ``i``, one after another."""
    ends = np.cumsum(counts)
    return np.repeat(starts - ends + counts, counts) + np.arange(ends[-1] if len(ends) else 0)
