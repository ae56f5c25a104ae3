"""One service for search, compare and report: what ``simdup search``, ``compare`` and ``report`` do,
and what ``simdup serve`` answers.

A :class:`Service` holds what every request needs and keeps between requests: the store, the
fingerprinter the store was indexed with and its part printer, the comparer (its
:class:`~simdup_es.compare.CompareParams`, the thesaurus, and the caches of stored texts,
:class:`~simdup_es.caches.TextCaches`) and the search's thresholds
(:class:`~simdup_es.multilevel.MultiParams`, the document distance ``k`` among them). The command
line and the HTTP server parse their arguments into a :class:`Query` and render what it returns::

    with simdup_es.open_store(path=".simdup", read_only=True) as store:
        service = Service(store)
        copies = service.search(Query(text="……"))         # the copies, best first
        report = service.report(Query(id="corpus/a.txt"))  # a SimilarityReport

Pure apart from the store it is handed. Calls may run on several threads at once: the store
serialises or pools its calls, the caches lock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from .caches import TextCaches
from .commontext import EXCLUDED, KeyCounts, template_keys
from .errors import ConfigError, FingerprintVersionError, InputError, NotFound, SimdupError, TooLarge
from .fingerprint import Doc, Fingerprint, Fingerprinter, default_fingerprinter
from .multilevel import CommonText, Copies, MultiParams
from .parts import PartPrinter
from .search import MatrixComparer, Verdict, counted_keys, find_copies, find_copies_many
from .search import comparer as new_comparer
from .store.base import Store, StoredDoc
from .winnow import winnowed

if TYPE_CHECKING:  # the report's and the maps' modules load when first used: the command line starts without them
    from .markup import Layout
    from .offsets import Unified
    from .report.similarity import Exclusions, SimilarityReport

__all__ = ["Compared", "Query", "Service"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class Query:
    """A document to search with or compare: a stored one (``id``), a ``text`` (with its ``title``), or both.

    With both, ``text`` is the document and ``id`` its own stored copy, which a search leaves out
    (a file the store holds as it is, say). ``label`` names it where an error or a report does (a
    file's path; default its id). ``layout``: what a parser knows of ``text`` beyond it (a Markdown
    file's headings, block quotes and the file as written, :class:`~simdup_es.markup.Layout`), which a
    report shows; ``None``: found in the text.
    """

    id: str | None = None
    text: str | None = None
    title: str | None = None
    label: str | None = None
    layout: Layout | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.id is None and self.text is None:
            raise ConfigError("give the id of a stored document, or a text")


@dataclass(frozen=True)
class Compared:
    """Two documents compared: the :class:`~simdup_es.search.Verdict`, and both texts as given, mapped from the
    unified texts the comparison ran on (its offsets point into those)."""

    verdict: Verdict
    a: Unified
    b: Unified

    def common_text(self) -> dict[str, list[dict[str, Any]]]:
        """The common text A and B share (text that many stored documents hold, or an excluded text's), side by side:
        each stretch in the characters of its text as given, with how many stored documents hold it at most
        (``documents``; ``None`` for an excluded text's)."""
        from .report._common import common_spans
        out: dict[str, list[dict[str, Any]]] = {}
        shares, comparison = self.verdict.shares, self.verdict.comparison
        for side, shown, held in (("a", self.a, shares.held_a), ("b", self.b, shares.held_b)):
            spans = [(*shown.span(start, end), n) for start, end, n in common_spans(comparison, side, held)]  # type: ignore[arg-type]
            out[side] = [{"start": s, "end": e, "documents": None if n >= EXCLUDED else n, "text": shown.original[s:e]}
                         for s, e, n in spans]
        return out


class Service:
    """Search, compare and report over ``store`` with one set of parameters, keeping the caches of stored texts.

    Parameters
    ----------
    store:
        Where the documents are; ``None`` for a service that only compares texts.
    fingerprinter:
        The one the store's documents were indexed with (default parameters if ``None``).
    comparer:
        The comparison matrix with its parameters and caches (:func:`simdup_es.search.comparer`;
        ``None``: default parameters, made when first needed).
    params:
        The search's thresholds, ``k`` among them; a call may narrow them (:meth:`search`).
    exclude_texts:
        Texts whose text never counts in any call (templates, base files: MOSS's ``-b``); a call may add more.
    """

    def __init__(self, store: Store | None, *, fingerprinter: Fingerprinter | None = None,
                 comparer: MatrixComparer | None = None, params: MultiParams = MultiParams(),
                 exclude_texts: Sequence[str] = ()) -> None:
        if not isinstance(params, MultiParams):
            raise ConfigError(f"params must be MultiParams (the search's thresholds), got {type(params).__name__}")
        self._store = store
        self.fingerprinter = fingerprinter or default_fingerprinter()
        self.printer = PartPrinter(self.fingerprinter)
        self._comparer = comparer
        self.params = params
        self.exclude_texts = tuple(exclude_texts)
        self._versions_said = False  # whether searches that find nothing still need to say why they may not

    def with_store(self, store: Store) -> Service:
        """This service over ``store``: the same fingerprinter, comparer (and its caches), parameters and excluded
        texts."""
        return Service(store, fingerprinter=self.fingerprinter, comparer=self._comparer, params=self.params,
                       exclude_texts=self.exclude_texts)

    @property
    def comparer(self) -> MatrixComparer:
        if self._comparer is None:
            self._comparer = new_comparer()
        return self._comparer

    @property
    def store(self) -> Store:
        if self._store is None:
            raise ConfigError("this service has no store: it compares texts only")
        return self._store

    @property
    def caches(self) -> TextCaches:
        """The comparer's caches of stored texts (:class:`~simdup_es.caches.TextCaches`)."""
        return self.comparer.caches

    def other_versions(self) -> dict[str, int]:
        """How many stored documents the searches cannot find, by their fingerprint version (another release, or
        other fingerprint parameters). The caller says so: searches then log nothing about it."""
        self._versions_said = True
        version = self.fingerprinter.version
        return {v: n for v, n in self.store.versions().items() if v != version}

    def stored(self, doc_id: str) -> StoredDoc:
        """The stored document ``doc_id``; :class:`~simdup_es.errors.NotFound` when the store has none."""
        found = self.store.get([doc_id])
        if not found:
            raise NotFound(f"no document with id {doc_id!r} in {_store_name(self.store)}: check the id (as indexing "
                           "gave it: a file's path, a record's id), and that this is the store it was indexed into")
        return found[0]

    def search(self, query: Query, *, params: MultiParams | None = None, matrix: bool = True,
               limit: int = 20, exclude_texts: Sequence[str] = ()) -> Copies:
        """The stored copies of ``query`` (:func:`simdup_es.search.find_copies`), its own stored copy left out.

        A stored document is searched with its stored fingerprint (of this service's version, else
        :class:`~simdup_es.errors.FingerprintVersionError`). ``params`` replace the service's for this
        call; without ``matrix``, near-duplicates of the document level only. ``exclude_texts`` never
        count, beside the service's.
        """
        fingerprint, text = self._fingerprint(query) if query.text is None else (None, query.text)
        copies = find_copies(self.store, text, title=query.title, fingerprint=fingerprint, printer=self.printer,
                             exclude_id=query.id, compare=self.comparer if matrix else None, params=params or self.params,
                             matrix=matrix, limit=limit, exclude_texts=(*self.exclude_texts, *exclude_texts))
        if not copies and not self._versions_said:  # once: an empty answer may be for want of documents of its version
            held, version = self.store.versions(), self.fingerprinter.version
            self._versions_said = True
            if held and version not in held:
                logger.warning("the store holds no document of fingerprint version %s (it holds %s): searches "
                               "fingerprinted so find nothing; use the FingerprintParams (IDF table, marked words) "
                               "the store was indexed with", version, ", ".join(sorted(held)))
        return copies

    def search_many(self, items: Iterable[T], to_doc: Callable[[T], Doc], *, limit: int = 20,
                    workers: int | None = None, exclude: Callable[[T], str | None] | None = None
                    ) -> Iterator[tuple[T, Copies | SimdupError]]:
        """:meth:`search` of a stream of documents, in input order, fingerprinted on ``workers`` processes
        (:func:`simdup_es.search.find_copies_many`); ``exclude`` names each one's own stored copy."""
        return find_copies_many(self.store, items, to_doc, printer=self.printer, compare=self.comparer,
                                params=self.params, limit=limit, workers=workers, exclude=exclude,
                                exclude_texts=self.exclude_texts)

    def compare(self, a: Query, b: Query, params: MultiParams | None = None,
                exclude_texts: Sequence[str] = (), max_bytes: int | None = None) -> Compared:
        """Two documents (stored or texts) fingerprinted and compared sentence by sentence, and judged as a search
        with ``params`` (default the service's) judges a copy: with a store, the text that many stored documents
        hold is common, not copied (as is the text of ``exclude_texts`` and the service's). Texts of more than
        ``max_bytes`` together (UTF-8): :class:`~simdup_es.errors.TooLarge`, before any work."""
        from .offsets import unify_mapped

        (text_a, title_a), (text_b, title_b) = self._document(a, "comparison"), self._document(b, "comparison")
        if max_bytes is not None:
            size = sum(len(t.encode("utf-8", "surrogatepass")) for t in (text_a, text_b))
            if size > max_bytes:
                raise TooLarge(f"the two documents hold {size:,} bytes of text, more than the limit of "
                               f"{max_bytes:,} bytes a comparison takes", limit=max_bytes)
        fa, fb = (self.fingerprinter.fingerprint_many([Doc(t, title, q.label)])[0].unwrap()
                  for t, title, q in ((text_a, title_a, a), (text_b, title_b, b)))
        shown_a, shown_b = unify_mapped(text_a), unify_mapped(text_b)
        params = params or self.params
        excluded = (*self.exclude_texts, *exclude_texts)
        sides = None
        if self._store is not None or excluded:
            keys = counted_keys(np.concatenate((winnowed(shown_a.text)[0], winnowed(shown_b.text)[0])))
            counts = self._store.key_frequencies(keys) if self._store is not None else KeyCounts()
            common = CommonText.of(counts.excluding(template_keys(excluded)), shown_a.text, params,
                                   self.comparer.unit_codes)
            sides = (common.query, common.rarity(shown_b.text))
        with self.comparer.keeping():  # a long text's preparation not kept after the call
            comparison = self.comparer(shown_a.text, shown_b.text)
        verdict = Verdict(fa, fb, comparison, params, sides)
        return Compared(verdict, shown_a, shown_b)

    def report(self, query: Query, *, exclusions: Exclusions | None = None, include_self: bool = False,
               limit: int = 20, params: MultiParams | None = None, exclude_texts: Sequence[str] = (),
               exclude_sources: Collection[str] = ()) -> SimilarityReport:
        """The similarity report of ``query`` against the store: its copied passages and their sources, at most
        ``limit`` of them, and the sources its quotations are cited from (:mod:`simdup_es.report.similarity`).

        Its own stored copy is left out and named (by ``query.id``, or without an id the one source with
        the very same text), unless ``include_self``; ``exclusions`` are what does not count (none by default),
        and the text of ``exclude_texts`` (beside the service's). ``exclude_sources`` the ids of stored documents
        not to count (named as left out; one the store does not hold, as no such stored document).
        """
        from .report.quotes import find_quoted
        from .report.similarity import Exclusions, report_from_copies, report_limit, settings_in_words

        params = params or self.params
        exclusions = exclusions or Exclusions()
        excluded = (*self.exclude_texts, *exclude_texts)  # those exclusions.texts does not name: by their opening
        named = (*exclusions.texts, *(f"“{_opening(t)}”" for t in excluded[len(exclusions.texts):]))
        exclusions = replace(exclusions, texts=named, common=(params.common, params.common_share))
        asked = query
        if include_self:  # its own stored copy counts: searched as a text, nothing left out
            text, title = self._document(query, "report")
            asked = Query(text=text, title=title)
        with self.comparer.keeping():  # the query prepared once for the search and its quotations' sources
            found = self.search(asked, params=params,
                                limit=report_limit(limit, query.id, include_self, len(set(exclude_sources))),
                                exclude_texts=exclude_texts)
            if found.text is None:
                raise InputError("stored without its text, which the report needs: index it with its text",
                                 source=query.id)
            own = set() if include_self or query.id is None else {query.id}
            # Excluded quotations count nowhere: no source of theirs to look for.
            quoted = None if exclusions.quotations else find_quoted(
                self.store, found, self.comparer, self.printer, layout=query.layout, params=params,
                exclude={*exclude_sources, *own})
        words = settings_in_words(self.comparer.params, params)
        held = {d.id for d in self.store.get(list(dict.fromkeys(exclude_sources)))} if exclude_sources else set()
        result = report_from_copies(found.text, found, doc_id=query.id, label=query.label or query.id or
                                    "this document", exclusions=exclusions, include_self=include_self,
                                    settings=words, limit=limit, mapped=self.caches.mapped, quoted=quoted,
                                    exclude_sources=exclude_sources, layout=query.layout)
        mistyped = tuple((i, "no such stored document") for i in dict.fromkeys(exclude_sources) if i not in held)
        return replace(result, left_out=(*result.left_out, *mistyped)) if mistyped else result

    def _fingerprint(self, query: Query) -> tuple[Fingerprint, str | None]:
        """A stored document's fingerprint and text, to search with them."""
        assert query.id is not None
        doc = self.stored(query.id)
        version = self.fingerprinter.version
        if doc.version != version:
            raise FingerprintVersionError(
                f"document {query.id!r} was fingerprinted with version {doc.version}, this run uses {version}: use the "
                "same --idf/--marked-words as when indexing")
        return Fingerprint(doc.fingerprint, doc.version), doc.text

    def _document(self, query: Query, needs: str) -> tuple[str, str | None]:
        """The text and title of a query: its own, or its stored document's."""
        if query.text is not None:
            return query.text, query.title
        assert query.id is not None
        doc = self.stored(query.id)
        if not doc.text:
            raise InputError(f"stored without its text, which the {needs} needs: index it with its text",
                             source=query.id)
        return doc.text, doc.title


def _opening(text: str, chars: int = 20) -> str:
    """The first words of ``text`` on one line, to name a text that has no name."""
    words = " ".join(text.split())
    return words if len(words) <= chars else words[:chars - 1] + "…"


def _store_name(store: Store) -> str:
    """The store as a message names it: its folder, or its index."""
    path, index = getattr(store, "path", None), getattr(store, "index", None)
    return f"the store {str(path)!r}" if path is not None else f"the index {index!r}" if index else "the store"
