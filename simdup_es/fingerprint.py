"""Documents to fingerprints: unify, tokenise, weigh, SimHash.

:class:`Fingerprinter` holds what a fingerprint depends on (parameters, IDF table,
tokenizer) and the *fingerprint version* that names that combination. Two
fingerprints are only comparable when their versions are equal.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar
from importlib.metadata import version as _pkg_version

from . import native, pool
from . import simhash as sh
from .config import FingerprintParams
from .errors import ConfigError, EmptyDocumentError, FingerprintVersionError, InputError, SimdupError, reason_of
from .text import unify_many
from .tokens import WORDLIKE, IdfTable, Lexicon, Tokenizer, dictionary_pos, stop_words, weigh_batch

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")

# Bump when tokenisation, weighting or hashing changes in a way that changes bits.
# 2: segmentation by jieba-rs instead of Python jieba.
# 3: the finer levels' keys are winnowed unit grams instead of whole-sentence hashes.
ALGORITHM_VERSION = 3


@dataclass(frozen=True, order=True)
class Fingerprint:
    """A 64-bit SimHash and the version of the recipe that made it."""

    value: int
    version: str

    @property
    def hex(self) -> str:
        return sh.to_hex(self.value)

    def blocks(self) -> tuple[int, ...]:
        """Its 8 byte blocks, lowest bits first (:func:`simdup_es.simhash.blocks`)."""
        return sh.blocks(self.value)

    def distance(self, other: Fingerprint) -> int:
        """Hamming distance; refuses fingerprints of different versions."""
        if not isinstance(other, Fingerprint):
            raise ConfigError(f"a distance is between two Fingerprints, not a Fingerprint and a {type(other).__name__}")
        if self.version != other.version:
            raise FingerprintVersionError(
                f"fingerprint versions differ ({self.version} vs {other.version}): "
                "recompute one side with the same parameters and IDF table"
            )
        return sh.hamming(self.value, other.value)


@dataclass(frozen=True)
class Doc:
    """One document to fingerprint: raw text and an optional title."""

    text: str
    title: str | None = None
    source: str | None = None


class Fingerprinter:
    """Turns text into :class:`Fingerprint` objects.

    >>> fp = Fingerprinter()
    >>> a = fp.fingerprint("今天的天气很好，我们去公园散步吧。")
    >>> a.distance(fp.fingerprint("今天的天气很好，我们去公园散步。")) <= 3
    True
    """

    def __init__(self, params: FingerprintParams = FingerprintParams()) -> None:
        self.params = params
        self.idf = IdfTable.load(params.idf_path)
        self.tokenizer = Tokenizer()
        self.lexicon = Lexicon(params, self.idf)
        self.version = self._version()
        native.module()  # SIMDUP_IMPLEMENTATION=native without a usable compiled core: refused here, up front
        self._pipeline: Any = None

    def native_pipeline(self) -> Any:
        """The compiled pipeline with this fingerprinter's tables (:mod:`simdup_es.native`), made on first use;
        ``None`` where the Python modules compute."""
        if self._pipeline is None and native.module() is not None:
            self._pipeline = native.pipeline(self.params, self.idf, dictionary_pos(), stop_words())
        return self._pipeline

    def _version(self) -> str:
        recipe = {k: sorted(v) if isinstance(v, frozenset) else v for k, v in asdict(self.params).items()}
        recipe.pop("idf_path")
        recipe.pop("max_bytes")
        recipe.update(idf=self.idf.digest, rjieba=_pkg_version("rjieba"), opencc=_pkg_version("opencc"))
        digest = hashlib.sha1(json.dumps(recipe, sort_keys=True, default=str).encode()).hexdigest()
        return f"{ALGORITHM_VERSION}.{digest[:8]}"

    def too_large(self, text: str) -> bool:
        """Whether ``text`` is over ``params.max_bytes`` in UTF-8 (encoded only when it may be)."""
        return len(text) * 3 > self.params.max_bytes and len(text.encode("utf-8")) > self.params.max_bytes

    def fingerprint(self, text: str, title: str | None = None) -> Fingerprint:
        """Fingerprint one document (its text and title unified, unless :class:`~simdup_es.text.UnifiedText`).

        Raises
        ------
        EmptyDocumentError
            The text has no words once punctuation and stop words are gone.
        InputError
            The text is larger than ``params.max_bytes``.
        """
        return self.fingerprint_many([Doc(text, title)])[0].unwrap()

    def fingerprint_many(self, docs: Sequence[Doc]) -> list[Result]:
        """Fingerprint a batch in this process; bad documents give an error result, not an exception."""
        # One step at a time over the whole batch rather than one document at a
        # time: each step's tables (OpenCC's, jieba-rs's, the lexicon) stay in the
        # CPU caches, which saves about a sixth of the time.
        results: list[Result | None] = [None] * len(docs)
        texts: dict[int, str] = {}
        for i, doc in enumerate(docs):
            if (wrong := not_text(doc)) is not None:
                results[i] = Result(None, InputError(wrong, source=doc.source))
                continue
            if not self.too_large(doc.text):
                texts[i] = doc.text
                continue
            why = (f"document is {_size(len(doc.text.encode('utf-8')))}, over the {_size(self.params.max_bytes)} limit; "
                   "split it or raise max_bytes (--max-bytes)")
            results[i] = Result(None, InputError(why, source=doc.source))
        titles = {i: title for i in texts if (title := docs[i].title)}
        # Texts and titles unified in one batch: each step runs once over them all.
        both = unify_many([*texts.values(), *titles.values()])
        texts, titles = dict(zip(texts, both)), dict(zip(titles, both[len(texts) :]))
        if (pipeline := self.native_pipeline()) is not None:
            values = pipeline.fingerprints(list(texts.values()), [titles.get(i, "") for i in texts])
        else:
            segmented = {i: self.tokenizer.cut(text) for i, text in texts.items()}
            values = self._hashed(segmented, [titles.get(i, "") for i in segmented])
        for i, value in zip(texts, values):
            results[i] = self._result(value, docs[i])
        return results  # type: ignore[return-value]

    def fingerprint_parts(
        self,
        docs: Sequence[Doc],
        tokens: Sequence[list[str]],
        parts: Sequence[Sequence[tuple[int, int] | list[str]]],
    ) -> list[tuple[Result, list[int | None]]]:
        """:meth:`fingerprint_many` of documents already segmented, and the fingerprints of their parts.

        ``tokens[i]`` is ``self.tokenizer.cut`` or ``segment`` of the unified text of
        ``docs[i]`` (whose text is not read again; its title is, and unified). Each of
        ``parts[i]`` is a part of that text, fingerprinted as a document without title
        (:func:`~simdup_es.tokens.weigh_batch`): ``(start, stop)`` where its tokens are
        ``tokens[i][start:stop]``, else its own tokens. A part's value is ``None`` where
        it has no content word. No size check.
        """
        titles = [doc.title or "" for doc in docs]
        if any(titles):
            titles = unify_many(titles)  # type: ignore[assignment]
        values = iter(self._hashed(dict(enumerate(tokens)), titles, parts))
        return [(self._result(next(values), doc), [next(values) for _ in spans]) for doc, spans in zip(docs, parts)]

    def _hashed(self, segmented: dict[int, list[str]], titles: Sequence[str],
                parts: Sequence[Sequence[tuple[int, int] | list[str]]] | None = None) -> list[int | None]:
        """SimHash of each of the ``segmented`` documents (``titles``: their unified titles, in the same
        order), each followed by its ``parts`` (``None`` for one without content words)."""
        title_words = [frozenset(self.tokenizer.words(t)) if t else frozenset() for t in titles]
        hashes, weights, offsets = weigh_batch(list(segmented.values()), self.lexicon, title_words, parts)
        values = sh.simhash_batch(hashes, weights, offsets).tolist()
        bounds = offsets.tolist()
        return [v if end > start else None for v, start, end in zip(values, bounds, bounds[1:])]

    def _result(self, value: int | None, doc: Doc) -> Result:
        if value is None:
            # Letters or CJK characters, yet no content word: all of them were stop words.
            why = (": only stop words (such as 的, 了, a, the), which carry no content; give a longer text"
                   if WORDLIKE.search(doc.text) else " (empty, whitespace or punctuation only): give a text with words")
            return Result(None, EmptyDocumentError("no words to fingerprint" + why, source=doc.source))
        return Result(Fingerprint(value, self.version), None)

    def map(self, docs: Iterable[Doc], *, workers: int | None = None, chunk_size: int = 64) -> Iterator[Result]:
        """Fingerprint a stream of documents on ``workers`` processes, in input order.

        ``workers=None`` uses every core; ``1`` stays in this process.
        """
        for results in self.map_chunks(docs, _fingerprint_chunk, workers=workers, chunk_size=chunk_size):
            yield from results

    def map_chunks(
        self,
        items: Iterable[T],
        task: Callable[[Fingerprinter, list[T]], R],
        *,
        workers: int | None = None,
        chunk_size: int = 64,
        chunk_weight: tuple[Callable[[T], int], int] | None = None,
    ) -> Iterator[R]:
        """``task(fingerprinter, chunk)`` for each chunk of ``items``, on ``workers`` processes, in input order.

        The pool behind :meth:`map`, for batch work that needs this fingerprinter
        (e.g. :meth:`PartPrinter.map_items <simdup_es.parts.PartPrinter.map_items>`).
        ``task`` must pickle (a module-level function or a :func:`functools.partial`
        of one); so must the items and what it returns. A chunk has ``chunk_size``
        items, fewer where ``chunk_weight = (weigh, most)`` is given and ``weigh`` of
        its items reaches ``most`` (the characters of long documents, say).
        """
        return pool.map_chunks(
            self, items, task, rebuild=functools.partial(Fingerprinter, self.params),
            warm_up=lambda: self.fingerprint("預熱"),  # jieba-rs and OpenCC loaded before forking: workers inherit them
            workers=workers, chunk_size=chunk_size, chunk_weight=chunk_weight,
        )

    def map_items(
        self, items: Iterable[T], to_doc: Callable[[T], Doc], *, workers: int | None = None
    ) -> Iterator[tuple[T, Result]]:
        """:meth:`map` over any items, each yielded with its result (in input order, streaming)."""
        pending: deque[T] = deque()  # items in flight

        def docs() -> Iterator[Doc]:
            for item in items:
                pending.append(item)
                yield to_doc(item)

        for result in self.map(docs(), workers=workers):
            yield pending.popleft(), result


@dataclass(frozen=True)
class Result:
    """A fingerprint, or the error that kept a document from getting one."""

    fingerprint: Fingerprint | None
    error: SimdupError | None

    def unwrap(self) -> Fingerprint:
        if self.error is not None:
            raise self.error
        assert self.fingerprint is not None
        return self.fingerprint

    @property
    def reason(self) -> str:
        """Why there is no fingerprint (an input problem's reason, else the error's message)."""
        return reason_of(self.error) if self.error is not None else ""


@functools.lru_cache(maxsize=1)
def default_fingerprinter() -> Fingerprinter:
    """The fingerprinter with default parameters, built on first use (``simdup_es.default_fingerprinter``)."""
    return Fingerprinter()


def _fingerprint_chunk(fingerprinter: Fingerprinter, docs: list[Doc]) -> list[Result]:
    return fingerprinter.fingerprint_many(docs)


def not_text(doc: Doc) -> str | None:
    """Why ``doc`` holds no text to fingerprint (its text or title not a string), or ``None``."""
    if not isinstance(doc.text, str):
        decode = ": decode it first" if isinstance(doc.text, (bytes, bytearray)) else ""
        return f"text must be a str, got {type(doc.text).__name__}{decode}"
    if doc.title is not None and not isinstance(doc.title, str):
        return f"title must be a str or None, got {type(doc.title).__name__}"
    return None


def _size(n: int) -> str:
    """Bytes for a message: ``12 bytes``, ``3.4 kB``, ``1.2 MB``."""
    return f"{n:,} bytes" if n < 1000 else f"{n / 1e3:.1f} kB" if n < 1_000_000 else f"{n / 1e6:.1f} MB"
