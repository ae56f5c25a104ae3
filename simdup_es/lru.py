"""A least-recently-used cache bounded by the bytes of what it holds.

A search reads the stored texts of its candidates and works each one out again (unified,
split into sentences) on every query; the copies of a widely copied text are candidates of
query after query. :class:`ByteLRU` keeps those results up to a byte budget rather than a
count, since one stored text may be 100 characters or 5 MB.

Entries are keyed by the stored text itself, never by a document id: what is cached is a
pure function of its key, so a document that is replaced or deleted cannot leave a stale
entry behind (its new text is another key; the old entry is only never asked for again and
ages out).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, NamedTuple, TypeVar

from .errors import ConfigError

__all__ = ["ByteLRU", "CacheInfo"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class CacheInfo(NamedTuple):
    """Hits, misses, entries and bytes held, and the budget."""

    hits: int
    misses: int
    entries: int
    bytes: int
    max_bytes: int


class ByteLRU(Generic[K, V]):
    """``key -> make(key)``, remembered for the most recently used keys up to ``max_bytes``.

    ``size(key, value)`` estimates an entry's bytes. An entry larger than the whole budget
    is made and returned but not kept. Thread-safe: ``make`` runs outside the lock (two
    threads may both make a missing entry; both results are equal).

    >>> cache = ByteLRU(str.upper, lambda k, v: len(k) + len(v), max_bytes=8)
    >>> cache("ab"), cache("cd"), cache("ef")
    ('AB', 'CD', 'EF')
    >>> cache.info().entries  # 4 bytes each: the first was dropped for the third
    2
    """

    def __init__(self, make: Callable[[K], V], size: Callable[[K, V], int], max_bytes: int) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
            raise ConfigError(f"max_bytes must be a non-negative integer, got {max_bytes!r}")
        self._make = make
        self._size = size
        self._max = max_bytes
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._hits = self._misses = 0
        self._lock = threading.Lock()

    def __call__(self, key: K) -> V:
        with self._lock:
            got = self._items.get(key)
            if got is not None:
                self._items.move_to_end(key)
                self._hits += 1
                return got[0]
            self._misses += 1
        value = self._make(key)
        with self._lock:
            self._keep(key, value)
            self._evict(self._max)
        return value

    def many(self, keys: Sequence[K], make_many: Callable[[list[K]], list[V]]) -> list[V]:
        """``[self(key) for key in keys]``, the missing ones made by one ``make_many(missing)`` call.

        ``make_many`` must give what ``make`` gives, key by key: for work that is cheaper in
        a batch (OpenCC over several short texts at once, say).
        """
        found: dict[K, V] = {}
        with self._lock:
            for key in keys:
                got = self._items.get(key)
                if got is not None:
                    self._items.move_to_end(key)
                    found[key] = got[0]
            self._hits += len(found)
            missing = [key for key in dict.fromkeys(keys) if key not in found]
            self._misses += len(missing)
        if missing:
            made = make_many(missing)
            with self._lock:
                for key, value in zip(missing, made, strict=True):
                    found[key] = value
                    self._keep(key, value)
                self._evict(self._max)
        return [found[key] for key in keys]

    def _keep(self, key: K, value: V) -> None:
        """Hold ``key -> value`` unless it is held already or larger than the whole budget (under the lock)."""
        size = self._size(key, value)
        if size <= self._max and key not in self._items:
            self._items[key] = (value, size)
            self._bytes += size

    def _evict(self, budget: int) -> None:
        while self._bytes > budget and self._items:
            _, (_, size) = self._items.popitem(last=False)
            self._bytes -= size

    @property
    def max_bytes(self) -> int:
        return self._max

    @max_bytes.setter
    def max_bytes(self, value: int) -> None:
        """A new budget; entries past it are dropped at once, least recently used first."""
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"max_bytes must be a non-negative integer, got {value!r}")
        with self._lock:
            self._max = value
            self._evict(value)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._items

    def info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self._hits, self._misses, len(self._items), self._bytes, self._max)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0
            self._hits = self._misses = 0
