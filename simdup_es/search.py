"""Search over a store: candidates, exact re-rank, comparison matrix.

:func:`find_copies` is what ``simdup search`` does, in one call: near-duplicates by
the document fingerprint (as :func:`find_duplicates`, unchanged) and edited or
partial copies by parts and winnowed keys (:mod:`simdup_es.multilevel`)::

    store = simdup_es.open_store(path=".simdup")
    for copy in simdup_es.find_copies(store, text):
        print(copy.kind, copy.to_dict())

Pure apart from the store it is handed: no client, no files (but the synonym
file a :func:`comparer` may be given).
"""

from __future__ import annotations

import logging
import sys
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from . import simhash as sh
from .compare import CachedSegmenter, Comparison, CompareParams, Screen, compare, compare_screened
from .errors import ConfigError, FingerprintVersionError, InputError, NotFound, SimdupError
from .fingerprint import Doc, Fingerprint, Fingerprinter, default_fingerprinter
from .multilevel import Copies, Kind, MultiMatch, MultiParams, PartCandidate, StoredText, copied_shares, judge
from .multilevel import find_copies as judge_copies
from .levels import Levels
from .lru import ByteLRU
from .parts import PartPrinter
from .store.base import Store, StoredDoc
from .text import UnifiedText, unify, unify_many
from .thesaurus import Thesaurus, load_thesaurus
from .tokens import dictionary_words

logger = logging.getLogger(__name__)

MAX_STORE_LIMIT = 10_000
"""The most part candidates :func:`find_copies` asks of a store for one query (a cluster's default
``index.max_result_window``), however often the query's text was copied."""

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


def near_duplicates(store: Store, fingerprint: Fingerprint, *, exclude_id: str | None = None) -> list[Match]:
    """Documents in ``store`` within ``store.layout.k`` of ``fingerprint`` (re-rank 1)."""
    ids, fps = store.candidates(fingerprint.value, fingerprint.version, exclude_id=exclude_id)
    return rerank(fingerprint.value, ids, fps, store.layout.k)


@dataclass(frozen=True)
class Hit:
    """A near-duplicate with its stored document and, after re-rank 2, the sentence comparison."""

    match: Match
    doc: StoredDoc | None
    comparison: Comparison | None = None

    @property
    def copied(self) -> float:
        """The larger document similarity of the two directions, 0 before re-rank 2."""
        c = self.comparison
        return max(c.similarity_a, c.similarity_b) if c else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the match, its title, the share copied each way and the pairs ``[i, j]`` of sentences."""
        c = self.comparison
        return {"id": self.match.id, "distance": self.match.distance, "similarity": round(self.match.similarity / 100, 6),
                "fingerprint": sh.to_hex(self.match.fingerprint), "title": self.doc.title if self.doc else None,
                "copied_from_query": round(c.similarity_a, 4) if c else None,
                "copied_from_match": round(c.similarity_b, 4) if c else None,
                "pairs": [[p.i, p.j] for p in c.pairs] if c else None}


def sentence_rerank(
    query: str, matches: Sequence[Match], docs: Mapping[str, StoredDoc], compare: Callable[[str, str], Comparison]
) -> list[Hit]:
    """Re-rank 2: compare the (unified) query with each match sentence by sentence.

    ``compare`` takes two unified texts (e.g. :func:`simdup_es.compare.compare`
    with parameters bound). Hits are ordered by the share of text copied (larger
    direction) and then by distance; a match whose text the store does not keep
    is left unscored, at the end.
    """
    hits = []
    for m in matches:
        doc = docs.get(m.id)
        comparison = compare(query, unify_stored(doc.text)) if doc is not None and doc.text else None
        hits.append(Hit(m, doc, comparison))
    return sorted(hits, key=lambda h: (h.comparison is None, -h.copied, h.match.distance, h.match.id))


def comparer(params: CompareParams = CompareParams(), synonym_file: Path | None = None) -> MatrixComparer:
    """The comparison matrix with ``params`` bound, and one segmenter cache for all its calls.

    A search compares the query's sentences with every hit: with one cache they
    are segmented once. ``synonym_file`` adds synonym groups to Cilin.
    """
    return MatrixComparer(params, load_thesaurus(synonym_file) if params.use_synonyms else None)


class MatrixComparer:
    """:func:`simdup_es.compare.compare` with its parameters, thesaurus and a segmenter cache bound (:func:`comparer`).

    A :data:`Comparer`; :meth:`screened` also lets a search skip the rest of a comparison
    that cannot make a copy.
    """

    def __init__(self, params: CompareParams, thesaurus: Thesaurus | None) -> None:
        self.params = params
        self.thesaurus = thesaurus
        self.segment = CachedSegmenter(dictionary_words)

    def __call__(self, a: str, b: str) -> Comparison:
        return compare(a, b, self.params, segment=self.segment, thesaurus=self.thesaurus)

    def screened(self, a: str, b: str, screen: Screen) -> Comparison | None:
        """:func:`simdup_es.compare.compare_screened`: ``None`` when ``screen`` refuses a bound of the comparison."""
        return compare_screened(a, b, self.params, screen, segment=self.segment, thesaurus=self.thesaurus)


def stored_query(store: Store, doc_id: str, version: str) -> tuple[Fingerprint, str | None]:
    """The fingerprint and text of a stored document, to search with it.

    Raises :class:`NotFound` for an unknown id and :class:`FingerprintVersionError`
    when it was fingerprinted with another ``version``.
    """
    found = store.get([doc_id])
    if not found:
        raise NotFound(f"no document with id {doc_id!r} in the store")
    doc = found[0]
    if doc.version != version:
        raise FingerprintVersionError(
            f"document {doc_id!r} was fingerprinted with version {doc.version}, this run uses {version}: use the "
            "same --idf/--marked-words as when indexing")
    return Fingerprint(doc.fingerprint, doc.version), doc.text


def find_duplicates(
    store: Store,
    text: str | None,
    *,
    title: str | None = None,
    fingerprint: Fingerprint | None = None,
    fingerprinter: Fingerprinter | None = None,
    exclude_id: str | None = None,
    compare: Comparer | None = None,
    matrix: bool = True,
    limit: int = 20,
) -> list[Hit]:
    """The stored near-duplicates of a text, best first: what ``simdup search`` shows.

    Candidates by shared blocks, exact Hamming re-rank (``store.layout.k``), then,
    with ``matrix``, the comparison matrix (``compare``, default :func:`comparer`)
    ranks them by the share of text copied; at most ``limit`` hits, cut after the
    last re-rank. ``fingerprint`` (for example from :func:`stored_query`) saves
    fingerprinting ``text`` (with ``fingerprinter``, default parameters if
    ``None``); without ``text`` there is no sentence comparison.
    """
    _check_limit(limit)
    unified, fingerprint = _query(text, title, fingerprint, fingerprinter, matrix)
    matches = near_duplicates(store, fingerprint, exclude_id=exclude_id)
    if not matches:
        _note_version(store, fingerprint.version)
    if not (matrix and text):
        matches = matches[:limit]
    docs = {d.id: d for d in store.get([m.id for m in matches])}
    if matrix and text:
        assert unified is not None
        return sentence_rerank(unified, matches, docs, compare or comparer())[:limit]
    return [Hit(m, docs.get(m.id)) for m in matches]


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
    stored: dict[str, StoredDoc] | None = None,
) -> Copies:
    """The stored copies of a text, best first: near-duplicates, then partial copies.

    The document level finds every stored document within ``params.k`` (kind
    ``near-duplicate``, the same documents :func:`find_duplicates` finds with
    ``store.layout.k == params.k``); the parts and winnowed keys of ``text`` find
    edited and partial copies, which the comparison matrix (``compare``, default
    :func:`comparer`) judges both ways (kind ``partial``, see :class:`MultiParams`
    for the thresholds and their defaults). ``fingerprint`` and ``levels`` save
    computing them (with ``printer``, default parameters if ``None``). Without
    ``matrix`` or ``text`` there is only the document level, unscored. At most
    ``limit`` results; ``more`` on the result counts the copies (or candidates not
    yet judged) left out by that limit. ``stored``, if given, gets the stored document of every result,
    by id (those the matrix read, and the others in one ``get``), for a caller that shows them.
    """
    if not isinstance(params, MultiParams):
        raise ConfigError(f"params must be MultiParams (the search's thresholds), got {type(params).__name__}")
    _check_limit(limit)
    printer = printer or PartPrinter(default_fingerprinter())
    unified, fingerprint = _query(text, title, fingerprint, printer.fingerprinter, matrix)
    if not (matrix and text):
        near = near_duplicates(store, fingerprint, exclude_id=exclude_id)
        unscored = [_unscored(m.id, m.distance) for m in near if m.distance <= params.k]
        found = Copies(unscored[:limit], more=max(0, len(unscored) - limit))
    else:
        assert unified is not None
        if levels is None:
            levels = printer.levels(unified)
        found = _copies(store, unified, fingerprint, levels, exclude_id, compare or comparer(), params, limit, stored)
    if stored is not None and (missing := [m.id for m in found if m.id not in stored]):
        stored.update((d.id, d) for d in store.get(missing))
    if not found:
        _note_version(store, fingerprint.version)
    found.unified = unified
    return found


# The fingerprint versions each store was asked about (once: an empty answer may be for want of them).
_versions_noted: weakref.WeakKeyDictionary[Store, set[str]] = weakref.WeakKeyDictionary()


def _noted(store: Store) -> set[str] | None:
    """The versions noted for ``store``; ``None`` for a store of one's own that cannot be weakly referenced or hashed."""
    try:
        return _versions_noted.setdefault(store, set())
    except TypeError:
        return None


def version_said(store: Store, version: str) -> None:
    """The caller says itself what the store's fingerprint versions mean for searches of ``version`` (the command
    line's note): searches need not log it."""
    if (noted := _noted(store)) is not None:
        noted.add(version)


def _note_version(store: Store, version: str) -> None:
    """Log, once per store and version, that the store holds no document of ``version``: its searches find nothing."""
    noted = _noted(store)
    if noted is None or version in noted:
        return
    noted.add(version)
    held = store.versions()
    if held and version not in held:
        logger.warning("the store holds no document of fingerprint version %s (it holds %s): searches fingerprinted so "
                    "find nothing; use the FingerprintParams (IDF table, marked words) the store was indexed with",
                    version, ", ".join(sorted(held)))


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


def _copies(store: Store, unified: str, fingerprint: Fingerprint, levels: Levels, exclude_id: str | None,
            compare: Comparer, params: MultiParams, limit: int, stored: dict[str, StoredDoc] | None = None) -> Copies:
    """find_copies with the query's ``unified`` text, fingerprint and levels: at most ``limit``, and how many more."""
    keys = [k.key for k in levels.keys]
    if fingerprint.version == levels.version:
        (ids, fps), found = store.copy_candidates(fingerprint.value, levels.fingerprints, keys, levels.version,
                                                  exclude_id=exclude_id, limit=params.store_limit)
        near_matches = rerank(fingerprint.value, ids, fps, store.layout.k)
    else:
        near_matches = near_duplicates(store, fingerprint, exclude_id=exclude_id)
        found = store.part_candidates(levels.fingerprints, keys, levels.version, exclude_id=exclude_id,
                                      limit=params.store_limit)
    near = [(m.id, m.distance) for m in near_matches if m.distance <= params.k]

    def texts(ids: Sequence[str]) -> Mapping[str, StoredText]:
        docs = store.get(ids)
        if stored is not None:
            stored.update((d.id, d) for d in docs)
        return _UnifiedTexts(docs, fingerprint.version, ids)

    def judge_all(found: Sequence[PartCandidate]) -> Copies:
        return judge_copies(unified, levels, near, found, texts, compare, query_fingerprint=fingerprint.value,
                            params=params, limit=limit,
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
    # A near-duplicate whose text the store does not keep is still one, unscored.
    judged = {m.id for m in matches}
    unscored = [_unscored(i, d) for i, d in near if i not in judged]
    # Stable: partial copies keep the order find_copies gave them.
    def rank(m: MultiMatch) -> tuple[bool, int]:
        return m.kind != "near-duplicate", m.distance if m.kind == "near-duplicate" and m.distance is not None else 65

    ordered = sorted(matches + unscored, key=rank)
    return Copies(ordered[:limit], more=matches.more + max(0, len(ordered) - limit))


class _UnifiedTexts(Mapping[str, StoredText]):
    """Stored documents with text as :class:`StoredText`, unified when first read: a batch is read at
    once, but judging stops after a few misses in a row (the rest is never unified). The text asked
    for is unified with the next few of ``ids`` (the judging order): OpenCC takes less time over
    several texts in one call than over each alone (``benchmarks/bench_search_breakdown.py``)."""

    def __init__(self, docs: Iterable[StoredDoc], version: str, ids: Sequence[str]) -> None:
        self._docs = {d.id: d for d in docs if d.text}
        self._version = version
        self._order = [i for i in dict.fromkeys(ids) if i in self._docs]
        self._at = {doc_id: at for at, doc_id in enumerate(self._order)}
        self._unified: dict[str, str] = {}

    def __getitem__(self, doc_id: str) -> StoredText:
        d = self._docs[doc_id]
        if doc_id not in self._unified:
            at = self._at.get(doc_id, len(self._order))
            batch, chars = [doc_id], len(d.text or "")
            for i in (i for i in self._order[at + 1 : at + UNIFY_AHEAD] if i not in self._unified):
                chars += len(self._docs[i].text or "")
                if chars > UNIFY_AHEAD_CHARS:
                    break
                batch.append(i)
            self._unified.update(zip(batch, unify_stored_many([self._docs[i].text or "" for i in batch]), strict=True))
        return StoredText(self._unified[doc_id], d.fingerprint if d.version == self._version else None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._docs)

    def __len__(self) -> int:
        return len(self._docs)


# How many stored texts are unified in one call: the one judged and the next ones, which are
# judged too unless the limit is reached (judging ends only after 5 misses in a row). Long texts
# gain little from sharing a call, and one never judged would be unified for nothing: the next
# ones join while the call holds at most UNIFY_AHEAD_CHARS characters.
UNIFY_AHEAD = 5
UNIFY_AHEAD_CHARS = 20_000

# What the unified stored texts may hold (each about twice its text's bytes).
UNIFY_CACHE_BYTES = 32 * 2**20

unified_cache: ByteLRU[str, str] = ByteLRU(unify, lambda text, unified: sys.getsizeof(text) + sys.getsizeof(unified),
                                           UNIFY_CACHE_BYTES)
""":func:`unify` of stored texts, by text (so a changed document is another entry): ``unified_cache.max_bytes``
sets its budget."""


def unify_stored(text: str) -> str:
    """:func:`unify` of a stored text, cached (:data:`unified_cache`): the copies of a widely copied text are
    candidates of query after query."""
    return unified_cache(text)


def unify_stored_many(texts: Sequence[str]) -> list[str]:
    """:func:`unify_stored` of each text, those not cached unified in one :func:`unify_many` call."""
    return unified_cache.many(texts, unify_many)  # type: ignore[arg-type]  # list[UnifiedText] is a list[str]


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
) -> Iterator[tuple[T, Copies | SimdupError]]:
    """:func:`find_copies` for a stream of query documents, in input order.

    Fingerprints and levels are computed on ``workers`` processes (every core by
    default, :meth:`PartPrinter.map_items`); the store lookups and the comparison
    matrix run here. A query that cannot be fingerprinted (empty, too large) is
    yielded with the error instead of matches. ``exclude`` names the stored
    document to leave out of an item's results (itself, when the batch is stored).
    """
    printer = printer or PartPrinter(default_fingerprinter())
    compare = compare or comparer()
    for item, result, levels, unified in printer.map_items_unified(items, to_doc, workers=workers):
        if result.error is not None:
            yield item, result.error
            continue
        assert levels is not None and unified is not None
        exclude_id = exclude(item) if exclude else None
        yield item, _copies(store, unified, result.unwrap(), levels, exclude_id, compare, params, limit)


@dataclass(frozen=True)
class Verdict:
    """Two documents compared: the judgement :func:`find_copies` makes of a hit (:func:`simdup_es.multilevel.judge`,
    document distance ``k``), from the fingerprint distance and the matrix."""

    a: Fingerprint
    b: Fingerprint
    comparison: Comparison
    params: MultiParams = MultiParams()

    @property
    def k(self) -> int:
        return self.params.k

    @property
    def distance(self) -> int:
        return self.a.distance(self.b)

    @cached_property
    def match(self) -> MultiMatch | None:
        """The kind and copied shares, as a search with ``params`` would give B for A; ``None``: not a copy."""
        return judge("b", self.comparison, self.distance, self.params)

    @property
    def kind(self) -> Kind | None:
        return self.match.kind if self.match is not None else None

    @property
    def near_duplicate(self) -> bool:
        """Within distance ``k``, or both texts mostly copied."""
        return self.kind == "near-duplicate"

    @cached_property
    def copied(self) -> tuple[float, float]:
        """The share of A and of B in copied passages (what the kind is decided on), copy or not."""
        m = self.match  # a copy carries them; only a non-copy counts them again
        return (m.copied_query, m.copied_match) if m is not None else copied_shares(self.comparison, self.params)[:2]

    def __str__(self) -> str:
        d, (a, b) = self.distance, self.copied
        verdict = "near-duplicates" if self.near_duplicate else "a partial copy" if self.kind else "not copies"
        note = ""
        if self.kind and min(a, b) == 0:  # copied text is shown on both sides, but counts on one only
            p = self.params
            note = (f"; what {'A' if a == 0 else 'B'} shares is too short to count on its side: a passage counts from "
                    f"{p.passage_min_units} units, within one sentence from {p.sentence_units} or half the text")
        return (f"fingerprints {self.a.hex} / {self.b.hex}: distance {d}/64, similarity {sh.similarity(d):.1f}% "
                f"-> {verdict} ({a:.0%} of A and {b:.0%} of B copied; k = {self.k}{note})")

    def to_dict(self) -> dict[str, Any]:
        d, (a, b) = self.distance, self.copied
        return {"a": self.a.hex, "b": self.b.hex, "distance": d, "similarity": round(sh.similarity(d) / 100, 6),
                "kind": self.kind, "near_duplicate": self.near_duplicate, "copied_a": round(a, 6),
                "copied_b": round(b, 6), "version": self.a.version, "comparison": self.comparison.to_dict()}
