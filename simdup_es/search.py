"""Search over a store: candidates, exact re-rank, comparison matrix.

:func:`find_copies` is what ``simdup search`` does, in one call: near-duplicates by
the document fingerprint and edited or partial copies by parts and winnowed keys
(:mod:`simdup_es.multilevel`); with ``matrix=False``, the document level alone::

    store = simdup_es.open_store(path=".simdup")
    for copy in simdup_es.find_copies(store, text):
        print(copy.kind, copy.to_dict())

Searches given one :func:`comparer` share what it keeps of the stored texts it compared
(:class:`simdup_es.caches.TextCaches`); :class:`simdup_es.service.Service` keeps one for its
lifetime. Pure apart from the store it is handed: no client, no files (but the synonym file a
:func:`comparer` may be given).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import cached_property, lru_cache, partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from . import simhash as sh
from .caches import TextCaches
from .compare import (CachedSegmenter, Comparison, CompareParams, PreparedText, Screen, compare, compare_screened,
                      prepare)
from .errors import ConfigError, InputError, SimdupError
from .fingerprint import Doc, Fingerprint, Fingerprinter, default_fingerprinter
from .commontext import Rarity, template_keys
from .multilevel import (CommonText, Copies, Kind, MultiMatch, MultiParams, PartCandidate, Shares, StoredText,
                         copied_shares, judge, rare_levels)
from .multilevel import find_copies as judge_copies
from .levels import Levels
from .parts import PartPrinter
from .sentences import unwrap_lines
from .store.base import Store, StoredDoc, spread
from .text import UnifiedText, unify
from .thesaurus import Thesaurus, load_thesaurus
from .tokens import dictionary_words
from .winnow import unit_codes

logger = logging.getLogger(__name__)

MAX_STORE_LIMIT = 10_000
"""The most part candidates :func:`find_copies` asks of a store for one query (a cluster's default
``index.max_result_window``), however often the query's text was copied."""
MAX_COUNTED_KEYS = 1000
"""The most keys of a query whose document frequencies a search asks of the store (:func:`counted_keys`): all the
keys of a query of up to about 3,500 units (10 kB of Chinese), an even spread of a longer one's. A cluster counts
each key with a filter of its own (about 20 us each on one node)."""

Comparer = Callable[[str, str], Comparison]
"""Two unified texts to their :class:`~simdup_es.compare.Comparison`."""


@dataclass(frozen=True)
class Match:
    """A stored document within distance ``k`` of the query."""

    id: str
    distance: int
    fingerprint: int

    @property
    def similarity(self) -> float:
        return sh.similarity(self.distance)


def rerank(query: int, ids: list[str], fingerprints: np.ndarray, k: int) -> list[Match]:
    """Exact Hamming re-rank: candidates within ``k``, nearest first (ties by id)."""
    if not ids:
        return []
    distances = sh.hamming_many(query, fingerprints)
    keep = np.flatnonzero(distances <= k)
    matches = [Match(ids[i], int(distances[i]), int(fingerprints[i])) for i in keep]
    return sorted(matches, key=lambda m: (m.distance, m.id))


def near_duplicates(store: Store, fingerprint: Fingerprint, *, k: int = 3, exclude_id: str | None = None) -> list[Match]:
    """Documents in ``store`` within ``k`` of ``fingerprint`` (re-rank 1)."""
    ids, fps = store.candidates(fingerprint.value, fingerprint.version, k=k, exclude_id=exclude_id)
    return rerank(fingerprint.value, ids, fps, k)


def comparer(params: CompareParams = CompareParams(), synonym_file: Path | None = None,
             caches: TextCaches | None = None) -> MatrixComparer:
    """The comparison matrix with ``params`` bound, and what it keeps for all its calls.

    A search compares the query's sentences with every hit: they are prepared and
    segmented once. ``synonym_file`` adds synonym groups to Cilin; ``caches`` keep the
    stored texts' derived forms (new ones by default).
    """
    return MatrixComparer(params, load_thesaurus(synonym_file) if params.use_synonyms else None, caches)


KEEP_PREPARED_CHARS = 50_000
"""The longest query whose preparation (:func:`simdup_es.compare.prepare`, some 60 bytes a character) a
:class:`MatrixComparer` keeps among its last two; of longer ones it keeps the last of each thread, and within
:meth:`MatrixComparer.keeping` (a search's comparisons with its candidates, a server's request) that one only until
the block ends."""


class MatrixComparer:
    """:func:`simdup_es.compare.compare` with its parameters and thesaurus bound (:func:`comparer`), and what it keeps
    between comparisons: the words of the sentences it segmented, the last two queries prepared
    (:func:`simdup_es.compare.prepare`) of at most :data:`KEEP_PREPARED_CHARS` (a longer one only within
    :meth:`keeping`), and the caches of stored texts (:attr:`caches`).

    A :data:`Comparer`; :meth:`screened` also lets a search skip the rest of a comparison
    that cannot make a copy.
    """

    def __init__(self, params: CompareParams = CompareParams(), thesaurus: Thesaurus | None = None,
                 caches: TextCaches | None = None) -> None:
        self.params = params
        self.thesaurus = thesaurus
        self.caches = caches or TextCaches()
        self.segment = CachedSegmenter(dictionary_words)
        self._prepare = partial(prepare, params=params, scans=self.caches.scans)
        # A long query's sentence scan is not kept among the stored texts' (up to their whole budget after its request).
        self._prepare_long = partial(prepare, params=params)
        # Two: a search holds one query at a time. Short ones only: a 5 MB query's preparation takes 300 MB, which
        # a server would hold after its request (and a second one's beside it).
        self._kept = lru_cache(maxsize=2)(self._prepare)
        self._held = threading.local()  # per thread, within keeping(): the last long query prepared

    def prepared(self, a: str) -> PreparedText:
        """``a`` prepared (:func:`simdup_es.compare.prepare`): among the last two if short, else as this thread's last
        long one (within :meth:`keeping`, until the block ends)."""
        if len(a) <= KEEP_PREPARED_CHARS:
            return self._kept(a)
        held: dict[str, PreparedText] | None = getattr(self._held, "texts", None)
        if held is None:  # outside any block: kept until this thread prepares another long one
            held = self._held.__dict__.setdefault("last", {})
        got = held.get(a)
        if got is None:
            held.clear()  # one long query at a time: the one before is freed first
            got = held[a] = self._prepare_long(a)
        return got

    @contextmanager
    def keeping(self) -> Iterator[None]:
        """Within the block, this thread's last long query prepared is kept for the calls after it (a search compares
        its query with each candidate), and freed at its end: a server keeps no request's long query after it.
        Blocks may nest: the outermost frees it."""
        outermost = getattr(self._held, "texts", None) is None
        if outermost:
            self._held.texts = {}
        try:
            yield
        finally:
            if outermost:
                self._held.texts = None

    def __call__(self, a: str, b: str) -> Comparison:
        return compare(self.prepared(a), b, self.params, segment=self.segment, thesaurus=self.thesaurus,
                       scans=self.caches.scans)

    def unit_codes(self, text: str) -> np.ndarray:
        """:func:`simdup_es.winnow.unit_codes` of a unified text, from the sentence scan its comparisons keep (kept);
        of a text longer than :data:`KEEP_PREPARED_CHARS` whose scan is not kept (a long query), worked out alone
        (its sentences are not made unless it is compared, and nothing is kept)."""
        key = (unwrap_lines(text) if self.params.unwrap else text, self.params.min_units)
        if len(text) > KEEP_PREPARED_CHARS and key not in self.caches.scans and key not in self.caches.codes:
            return unit_codes(key[0])
        return self.caches.codes(key)

    def screened(self, a: str, b: str, screen: Screen) -> Comparison | None:
        """:func:`simdup_es.compare.compare_screened`: ``None`` when ``screen`` refuses a bound of the comparison."""
        return compare_screened(self.prepared(a), b, self.params, screen, segment=self.segment,
                                thesaurus=self.thesaurus, scans=self.caches.scans)


def find_copies(
    store: Store,
    text: str | None,
    *,
    title: str | None = None,
    fingerprint: Fingerprint | None = None,
    levels: Levels | None = None,
    printer: PartPrinter | None = None,
    exclude_id: str | None = None,
    compare: Comparer | None = None,
    params: MultiParams = MultiParams(),
    matrix: bool = True,
    limit: int = 20,
    exclude_texts: Sequence[str] = (),
) -> Copies:
    """The stored copies of a text, best first: near-duplicates, then partial copies.

    The document level finds every stored document within ``params.k`` (kind
    ``near-duplicate``); the parts and winnowed keys of ``text`` find
    edited and partial copies, which the comparison matrix (``compare``, default
    :func:`comparer`) judges both ways (kind ``partial``, see :class:`MultiParams`
    for the thresholds and their defaults). ``fingerprint`` and ``levels`` save
    computing them (with ``printer``, default parameters if ``None``). Without
    ``matrix`` or ``text`` there is only the document level, unscored. At most
    ``limit`` results; ``more`` on the result counts the copies (or candidates not
    yet judged) left out by that limit, ``docs`` holds the stored document of every
    result by id (those the matrix read, and the others in one ``get``).

    Text that many stored documents hold is common, not copied (:mod:`simdup_es.commontext`: the store
    counts the documents holding each of the query's keys, :func:`counted_keys`); so is the text of
    ``exclude_texts`` (a template or a base file whose text never counts, as MOSS's ``-b``).
    """
    if not isinstance(params, MultiParams):
        raise ConfigError(f"params must be MultiParams (the search's thresholds), got {type(params).__name__}")
    _check_limit(limit)
    printer = printer or PartPrinter(default_fingerprinter())
    unified: UnifiedText | None
    if fingerprint is None and levels is None and matrix and text and isinstance(text, str):
        # Fingerprint and levels in one pass over the query (the compiled core segments it once).
        fingerprint, levels, made = printer.document(text, title)
        unified = made if isinstance(made, UnifiedText) else UnifiedText(made)  # not a copy of a 10 MB text
    else:
        unified, fingerprint = _query(text, title, fingerprint, printer.fingerprinter, matrix)
    if not (matrix and text):
        near = near_duplicates(store, fingerprint, k=params.k, exclude_id=exclude_id)
        unscored = [_unscored(m.id, m.distance) for m in near if m.distance <= params.k]
        found = Copies(unscored[:limit], more=max(0, len(unscored) - limit))
    else:
        assert unified is not None
        if levels is None:
            levels = printer.levels(unified)
        found = _copies(store, unified, fingerprint, levels, exclude_id, compare or comparer(), params, limit,
                        template_keys(exclude_texts))
    if missing := [m.id for m in found if m.id not in found.docs]:
        found.docs.update((d.id, d) for d in store.get(missing))
    found.unified, found.text = unified, text
    return found


def _check_limit(limit: object) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ConfigError(f"limit must be a whole number, 0 or more (0: count the copies in 'more'), got {limit!r}")


def _query(text: str | None, title: str | None, fingerprint: Fingerprint | None, fingerprinter: Fingerprinter | None,
           matrix: bool) -> tuple[UnifiedText | None, Fingerprint]:
    """The query's text unified once (for the fingerprint, the levels and the matrix), and its fingerprint."""
    if text is not None and not isinstance(text, str):
        raise InputError(f"the text to search with must be a str, got {type(text).__name__}"
                         + (": decode it first" if isinstance(text, (bytes, bytearray)) else ""))
    unified = unify(text) if text is not None and (fingerprint is None or matrix and text) else None
    if fingerprint is None:
        if unified is None:
            raise ConfigError("give the text to search with, or its fingerprint")
        fingerprint = (fingerprinter or default_fingerprinter()).fingerprint(unified, title)
    return unified, fingerprint


def counted_keys(keys: Iterable[int] | np.ndarray) -> list[int]:
    """The keys of a query (its levels' key values, in text order) whose document frequencies a search asks for: the
    distinct ones, an even spread of :data:`MAX_COUNTED_KEYS` of them when there are more.

    Found with numpy (a 10 MB query has a million keys: a Python int and a dict slot each were 60 MB), but for keys
    that are not 64-bit unsigned integers (:func:`counted_keys_reference`)."""
    if not isinstance(keys, (np.ndarray, Sequence)):
        keys = list(keys)
    try:
        values = keys if isinstance(keys, np.ndarray) else np.fromiter(keys, dtype=np.uint64, count=len(keys))
    except (OverflowError, TypeError, ValueError):
        return counted_keys_reference(keys)
    first = np.unique(values, return_index=True)[1]
    first.sort()  # each distinct key where it first comes
    return values[first[spread(len(first), MAX_COUNTED_KEYS)]].tolist()


def counted_keys_reference(keys: Iterable[int]) -> list[int]:
    """:func:`counted_keys` of any keys, plainly."""
    values = list(dict.fromkeys(keys))
    return [values[i] for i in spread(len(values), MAX_COUNTED_KEYS)]


class _KeyValues(Sequence[int]):
    """A query's key values as the store reads them (``int`` each): the stores read an even spread of them
    (:func:`simdup_es.store.base.query_terms`), so a long query's million keys are not all made ints."""

    __slots__ = ("values",)

    def __init__(self, values: np.ndarray | list[int]) -> None:
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, i):  # type: ignore[no-untyped-def,override]
        got = self.values[i]
        return got.tolist() if isinstance(got, (np.ndarray, np.generic)) else got

    def __iter__(self) -> Iterator[int]:
        return iter(self.values.tolist() if isinstance(self.values, np.ndarray) else self.values)


def _copies(store: Store, unified: str, fingerprint: Fingerprint, levels: Levels, exclude_id: str | None,
            compare: Comparer, params: MultiParams, limit: int, template: Sequence[int] = ()) -> Copies:
    """:func:`_judged_copies`, the query prepared once for all its comparisons however long (and freed after them)."""
    with compare.keeping() if isinstance(compare, MatrixComparer) else nullcontext():
        return _judged_copies(store, unified, fingerprint, levels, exclude_id, compare, params, limit, template)


def _judged_copies(store: Store, unified: str, fingerprint: Fingerprint, levels: Levels, exclude_id: str | None,
                   compare: Comparer, params: MultiParams, limit: int, template: Sequence[int] = ()) -> Copies:
    """find_copies with the query's ``unified`` text, fingerprint and levels: at most ``limit``, and how many more,
    with the stored documents the judge read of those. ``template``: keys of excluded texts.

    The store first counts the documents holding each of the query's keys; the candidates are then those sharing
    its rare keys and parts (:func:`simdup_es.multilevel.rare_levels`)."""
    counts = store.key_frequencies(counted_keys(levels.key_array())).excluding(template)
    common = CommonText.of(counts, unified, params, compare.unit_codes if isinstance(compare, MatrixComparer) else unit_codes)
    levels = rare_levels(levels, common)
    keys = _KeyValues(levels.key_array())
    if fingerprint.version == levels.version:
        (ids, fps), found = store.copy_candidates(fingerprint.value, levels.fingerprints, keys, levels.version,
                                                  k=params.k, exclude_id=exclude_id, limit=params.store_limit)
        near_matches = rerank(fingerprint.value, ids, fps, params.k)
    else:
        near_matches = near_duplicates(store, fingerprint, k=params.k, exclude_id=exclude_id)
        found = store.part_candidates(levels.fingerprints, keys, levels.version, exclude_id=exclude_id,
                                      limit=params.store_limit)
    near = [(m.id, m.distance) for m in near_matches if m.distance <= params.k]
    read: dict[str, StoredDoc] = {}
    caches = compare.caches if isinstance(compare, MatrixComparer) else TextCaches()

    def texts(ids: Sequence[str]) -> Mapping[str, StoredText]:
        docs = store.get(ids)
        read.update((d.id, d) for d in docs)
        return _UnifiedTexts(docs, fingerprint.version, ids, caches)

    def judge_all(found: Sequence[PartCandidate]) -> Copies:
        return judge_copies(unified, levels, near, found, texts, compare, common=common,
                            query_fingerprint=fingerprint.value, params=params, limit=limit,
                            screened=compare.screened if isinstance(compare, MatrixComparer) else None)

    matches, asked = judge_all(found), params.store_limit
    # The store cut its candidates and every one was judged with copies still coming: a text copied
    # more often than the cut asks for more, as long as the larger list confirms more copies.
    while matches.ran_out and len(found) >= asked:
        if asked >= MAX_STORE_LIMIT:
            logger.warning("%d copies confirmed among the store's first %d candidates, and the rest not judged",
                           len(matches), asked)
            break
        asked = min(asked * 4, MAX_STORE_LIMIT)
        found = store.part_candidates(levels.fingerprints, keys, levels.version, exclude_id=exclude_id, limit=asked)
        more = judge_all(found)
        logger.debug("%d candidates asked of the store: %d copies, against %d", asked, len(more), len(matches))
        if len(more) <= len(matches):
            break
        matches = more
    # A near-duplicate whose text the store does not keep is still one, unscored; one the matrix judged no copy
    # (texts that share nothing but a fingerprint's bits) is none.
    judged = {m.id for m in matches} | {i for i, d in read.items() if d.text}
    unscored = [_unscored(i, d) for i, d in near if i not in judged]
    # Stable: partial copies keep the order find_copies gave them.
    def rank(m: MultiMatch) -> tuple[bool, int]:
        return m.kind != "near-duplicate", m.distance if m.kind == "near-duplicate" and m.distance is not None else 65

    ordered = sorted(matches + unscored, key=rank)
    copies = Copies(ordered[:limit], more=matches.more + max(0, len(ordered) - limit))
    copies.docs = {m.id: read[m.id] for m in copies if m.id in read}
    return copies


# How many stored texts are unified in one call: the one judged and the next ones, which are
# judged too unless the limit is reached (judging ends only after 5 misses in a row). Long texts
# gain little from sharing a call, and one never judged would be unified for nothing: the next
# ones join while the call holds at most UNIFY_AHEAD_CHARS characters.
UNIFY_AHEAD = 5
UNIFY_AHEAD_CHARS = 20_000


class _UnifiedTexts(Mapping[str, StoredText]):
    """Stored documents with text as :class:`StoredText`, in their unified form: the one the store kept
    (:attr:`StoredDoc.unified`, of a document of the query's fingerprint version, whose unification it
    records), else the text unified when first read. A batch is read at once, but judging stops after
    a few misses in a row (the rest is never unified). The text asked for is unified with the next few
    of ``ids`` (the judging order): OpenCC takes less time over several texts in one call than over each
    alone (``benchmarks/bench_search_breakdown.py``)."""

    def __init__(self, docs: Iterable[StoredDoc], version: str, ids: Sequence[str], caches: TextCaches,
                 ahead_chars: int = UNIFY_AHEAD_CHARS) -> None:
        self._docs = {d.id: d for d in docs if d.text}
        self._caches = caches
        self._ahead_chars = ahead_chars
        self._version = version
        self._unified: dict[str, str] = {d.id: UnifiedText(d.unified) for d in self._docs.values()
                                         if d.unified is not None and d.version == version}
        self._order = [i for i in dict.fromkeys(ids) if i in self._docs and i not in self._unified]
        self._at = {doc_id: at for at, doc_id in enumerate(self._order)}

    def __getitem__(self, doc_id: str) -> StoredText:
        d = self._docs[doc_id]
        if doc_id not in self._unified:
            at = self._at.get(doc_id, len(self._order))
            batch, chars = [doc_id], len(d.text or "")
            for i in (i for i in self._order[at + 1 : at + UNIFY_AHEAD] if i not in self._unified):
                chars += len(self._docs[i].text or "")
                if chars > self._ahead_chars:
                    break
                batch.append(i)
            _note_unifying()
            self._unified.update(zip(batch, self._caches.unify_many([self._docs[i].text or "" for i in batch]),
                                     strict=True))
        return StoredText(self._unified[doc_id], d.fingerprint if d.version == self._version else None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._docs)

    def __len__(self) -> int:
        return len(self._docs)


@lru_cache(maxsize=1)
def _note_unifying() -> None:
    """Say once per process that stored texts are unified at search time (kept unified by neither store for them)."""
    logger.info("some stored documents are kept without their unified text (indexed before the stores kept it, or "
                "by other means than 'simdup index'): each search unifies theirs again; index them again to spare it")


def _unscored(doc_id: str, distance: int) -> MultiMatch:
    """A near-duplicate without a comparison (no matrix, or no text): its shares are unknown."""
    return MultiMatch(doc_id, "near-duplicate", distance, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


T = TypeVar("T")


def find_copies_many(
    store: Store,
    items: Iterable[T],
    to_doc: Callable[[T], Doc],
    *,
    printer: PartPrinter | None = None,
    compare: Comparer | None = None,
    params: MultiParams = MultiParams(),
    limit: int = 20,
    workers: int | None = None,
    exclude: Callable[[T], str | None] | None = None,
    exclude_texts: Sequence[str] = (),
) -> Iterator[tuple[T, Copies | SimdupError]]:
    """:func:`find_copies` for a stream of query documents, in input order.

    Fingerprints and levels are computed on ``workers`` processes (every core by
    default, :meth:`PartPrinter.map_items`); the store lookups and the comparison
    matrix run here. A query that cannot be fingerprinted (empty, too large) is
    yielded with the error instead of matches. ``exclude`` names the stored
    document to leave out of an item's results (itself, when the batch is stored);
    ``exclude_texts`` are texts whose text never counts.
    """
    printer = printer or PartPrinter(default_fingerprinter())
    compare = compare or comparer()
    template = template_keys(exclude_texts)
    for item, result, levels, unified in printer.map_items_unified(items, to_doc, workers=workers):
        if result.error is not None:
            yield item, result.error
            continue
        assert levels is not None and unified is not None
        exclude_id = exclude(item) if exclude else None
        yield item, _copies(store, unified, result.unwrap(), levels, exclude_id, compare, params, limit, template)


@dataclass(frozen=True)
class Verdict:
    """Two documents compared: the judgement :func:`find_copies` makes of a hit (:func:`simdup_es.multilevel.judge`,
    document distance ``k``), from the fingerprint distance and the matrix. ``sides``: what each text holds in
    common with the store (:class:`~simdup_es.commontext.Rarity`; ``None``: nothing, no store was asked)."""

    a: Fingerprint
    b: Fingerprint
    comparison: Comparison
    params: MultiParams = MultiParams()
    sides: tuple[Rarity, Rarity] | None = None

    @property
    def k(self) -> int:
        return self.params.k

    @property
    def distance(self) -> int:
        return self.a.distance(self.b)

    @cached_property
    def match(self) -> MultiMatch | None:
        """The kind and copied shares, as a search with ``params`` would give B for A; ``None``: not a copy."""
        return judge("b", self.comparison, self.distance, self.params, self.sides)

    @property
    def kind(self) -> Kind | None:
        return self.match.kind if self.match is not None else None

    @property
    def near_duplicate(self) -> bool:
        """A copy within distance ``k``, or both texts mostly copied."""
        return self.kind == "near-duplicate"

    @cached_property
    def shares(self) -> Shares:
        """The share of A and of B in counted passages of rare copied text (what the kind is decided on), and of the
        common text they share (with how many documents hold it), copy or not."""
        return copied_shares(self.comparison, self.params, self.sides)

    @property
    def copied(self) -> tuple[float, float]:
        """The share of A and of B in counted passages of rare copied text."""
        return self.shares.copied_a, self.shares.copied_b

    @property
    def common(self) -> tuple[float, float]:
        """The share of A and of B in the common text they share (text that many stored documents hold)."""
        return self.shares.common_a, self.shares.common_b

    def __str__(self) -> str:
        d, (a, b), (ca, cb) = self.distance, self.copied, self.common
        verdict = "near-duplicates" if self.near_duplicate else "a partial copy" if self.kind else "not copies"
        sides = "; ".join(f"{name}: {x:.0%} copied" + (f", {c:.0%} common text" if c else "")
                          for name, x, c in (("A", a, ca), ("B", b, cb)))
        return (f"fingerprints {self.a.hex} / {self.b.hex}: distance {d}/64, similarity {sh.similarity(d):.1f}% "
                f"-> {verdict} ({sides}; k = {self.k})")

    def to_dict(self) -> dict[str, Any]:
        return {**self.summary_dict(), "comparison": self.comparison.to_dict()}

    def summary_dict(self) -> dict[str, Any]:
        """:meth:`to_dict` without its comparison."""
        d, (a, b), (ca, cb) = self.distance, self.copied, self.common
        return {"a": self.a.hex, "b": self.b.hex, "distance": d, "similarity": round(sh.similarity(d) / 100, 6),
                "kind": self.kind, "near_duplicate": self.near_duplicate, "copied_a": round(a, 6),
                "copied_b": round(b, 6), "common_a": round(ca, 6), "common_b": round(cb, 6), "version": self.a.version}
