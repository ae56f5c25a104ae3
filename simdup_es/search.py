"""Near-duplicate search over a store: candidates, exact re-rank, comparison matrix.

:func:`find_duplicates` is what ``simdup search`` does, in one call::

    store = simdup_es.open_store(path=".simdup")
    for hit in simdup_es.find_duplicates(store, text):
        print(hit.to_dict())

Pure apart from the store it is handed: no client, no files (but the synonym
file a :func:`comparer` may be given).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import simhash as sh
from .compare import Comparison, CompareParams
from .config import BlockLayout
from .errors import FingerprintVersionError, NotFound
from .fingerprint import Fingerprint, Fingerprinter
from .store.base import Store, StoredDoc
from .text import unify

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
        """The larger document similarity of the two directions (SPEC §6), 0 before re-rank 2."""
        c = self.comparison
        return max(c.similarity_a, c.similarity_b) if c else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the match, its title, the share copied each way and the pairs ``[i, j]`` of sentences."""
        c = self.comparison
        return {"id": self.match.id, "distance": self.match.distance, "similarity": round(self.match.similarity, 2),
                "fingerprint": sh.to_hex(self.match.fingerprint), "title": self.doc.title if self.doc else None,
                "copied_from_query": round(c.similarity_a, 4) if c else None,
                "copied_from_match": round(c.similarity_b, 4) if c else None,
                "pairs": [[p.i, p.j] for p in c.pairs] if c else None}


def sentence_rerank(
    query_text: str, matches: Sequence[Match], docs: Mapping[str, StoredDoc], compare: Callable[[str, str], Comparison]
) -> list[Hit]:
    """Re-rank 2: compare the query with each match sentence by sentence.

    ``compare`` takes two unified texts (e.g. :func:`simdup_es.compare.compare`
    with parameters bound). Hits are ordered by the share of text copied (larger
    direction) and then by distance; a match whose text the store does not keep
    is left unscored, at the end.
    """
    query = unify(query_text)
    hits = []
    for m in matches:
        doc = docs.get(m.id)
        comparison = compare(query, unify(doc.text)) if doc is not None and doc.text else None
        hits.append(Hit(m, doc, comparison))
    return sorted(hits, key=lambda h: (h.comparison is None, -h.copied, h.match.distance, h.match.id))


def comparer(params: CompareParams = CompareParams(), synonym_file: Path | None = None) -> Comparer:
    """The comparison matrix with ``params`` bound, and one segmenter cache for all its calls.

    A search compares the query's sentences with every hit: with one cache they
    are segmented once. ``synonym_file`` adds synonym groups to Cilin.
    """
    from .compare import CachedSegmenter, compare
    from .thesaurus import load_thesaurus
    from .tokens import dictionary_words

    thesaurus = load_thesaurus(synonym_file) if params.use_synonyms else None
    segment = CachedSegmenter(dictionary_words)
    return lambda a, b: compare(a, b, params, segment=segment, thesaurus=thesaurus)


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
    if fingerprint is None:
        if text is None:
            raise ValueError("give the text to search with, or its fingerprint")
        if fingerprinter is None:
            from . import default_fingerprinter

            fingerprinter = default_fingerprinter()
        fingerprint = fingerprinter.fingerprint(text, title)
    matches = near_duplicates(store, fingerprint, exclude_id=exclude_id)
    if not (matrix and text):
        matches = matches[:limit]
    docs = {d.id: d for d in store.get([m.id for m in matches])}
    if matrix and text:
        return sentence_rerank(text, matches, docs, compare or comparer())[:limit]
    return [Hit(m, docs.get(m.id)) for m in matches]


@dataclass(frozen=True)
class Verdict:
    """Two documents compared: fingerprint distance (near-duplicates when at most ``k``) and the matrix."""

    a: Fingerprint
    b: Fingerprint
    comparison: Comparison
    k: int = BlockLayout().k

    @property
    def distance(self) -> int:
        return self.a.distance(self.b)

    @property
    def near_duplicate(self) -> bool:
        return self.distance <= self.k

    def __str__(self) -> str:
        d = self.distance
        verdict = "near-duplicates" if self.near_duplicate else "not near-duplicates"
        return (f"fingerprints {self.a.hex} / {self.b.hex}: distance {d}/64, similarity {sh.similarity(d):.1f}% "
                f"-> {verdict} (k = {self.k})")

    def to_dict(self) -> dict[str, Any]:
        d = self.distance
        return {"a": self.a.hex, "b": self.b.hex, "distance": d, "similarity": round(sh.similarity(d), 2),
                "near_duplicate": self.near_duplicate, "version": self.a.version,
                "comparison": self.comparison.to_dict()}
