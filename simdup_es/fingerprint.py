"""Documents to fingerprints: unify, tokenise, weigh, SimHash.

:class:`Fingerprinter` holds what a fingerprint depends on (parameters, IDF table,
tokenizer) and the *fingerprint version* that names that combination. Two
fingerprints are only comparable when their versions are equal.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import TypeVar
from importlib.metadata import version as _pkg_version

import numpy as np

from . import simhash as sh
from .config import BlockLayout, FingerprintParams
from .errors import EmptyDocumentError, FingerprintVersionError, InputError, SimdupError
from .text import unify
from .tokens import IdfTable, Lexicon, Tokenizer, weigh

log = logging.getLogger(__name__)
T = TypeVar("T")

# Bump when tokenisation, weighting or hashing changes in a way that changes bits.
# 2: segmentation by jieba-rs instead of Python jieba.
ALGORITHM_VERSION = 2


@dataclass(frozen=True, order=True)
class Fingerprint:
    """A 64-bit SimHash and the version of the recipe that made it."""

    value: int
    version: str

    @property
    def hex(self) -> str:
        return sh.to_hex(self.value)

    def blocks(self, layout: BlockLayout = BlockLayout()) -> tuple[int, ...]:
        return sh.blocks(self.value, layout)

    def distance(self, other: Fingerprint) -> int:
        """Hamming distance; refuses fingerprints of different versions."""
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

    def _version(self) -> str:
        recipe = {k: sorted(v) if isinstance(v, frozenset) else v for k, v in asdict(self.params).items()}
        recipe.pop("idf_path")
        recipe.pop("max_bytes")
        recipe.update(idf=self.idf.digest, rjieba=_pkg_version("rjieba"), opencc=_pkg_version("opencc"))
        digest = hashlib.sha1(json.dumps(recipe, sort_keys=True, default=str).encode()).hexdigest()
        return f"{ALGORITHM_VERSION}.{digest[:8]}"

    def _features(self, doc: Doc, unified: bool) -> tuple[list[int], list[float]]:
        text = doc.text
        if len(text) * 3 > self.params.max_bytes and len(text.encode("utf-8")) > self.params.max_bytes:
            raise InputError(
                f"document is {len(text.encode('utf-8')) / 1e6:.1f} MB, over the {self.params.max_bytes / 1e6:g} MB "
                "limit; split it or raise max_bytes (--max-bytes)",
                source=doc.source,
            )
        if not unified:
            text = unify(text)
        title_words: frozenset[str] = frozenset()
        if doc.title:
            title_words = frozenset(self.tokenizer.words(doc.title if unified else unify(doc.title)))
        hashes, weights = weigh(self.tokenizer.segment(text), self.lexicon, title_words=title_words)
        if not hashes:
            raise EmptyDocumentError("no words to fingerprint (empty, whitespace or punctuation only)", source=doc.source)
        return hashes, weights

    def fingerprint(self, text: str, title: str | None = None, *, unified: bool = False) -> Fingerprint:
        """Fingerprint one document.

        Raises
        ------
        EmptyDocumentError
            The text has no words once punctuation and stop words are gone.
        InputError
            The text is larger than ``params.max_bytes``.
        """
        return self.fingerprint_many([Doc(text, title)], unified=unified)[0].unwrap()

    def fingerprint_many(self, docs: Sequence[Doc], *, unified: bool = False) -> list[Result]:
        """Fingerprint a batch in this process; bad documents give an error result, not an exception."""
        results: list[Result] = []
        hashes: list[int] = []
        weights: list[float] = []
        offsets = [0]
        for doc in docs:
            try:
                h, w = self._features(doc, unified)
            except InputError as exc:
                results.append(Result(None, exc))
                continue
            hashes += h
            weights += w
            offsets.append(len(hashes))
            results.append(Result(None, None))
        values = sh.simhash_batch(np.array(hashes, dtype=np.uint64), np.array(weights), np.array(offsets))
        ok = iter(values.tolist())
        return [r if r.error else Result(Fingerprint(next(ok), self.version), None) for r in results]

    def map(
        self, docs: Iterable[Doc], *, workers: int | None = None, chunk_size: int = 64, unified: bool = False
    ) -> Iterator[Result]:
        """Fingerprint a stream of documents on ``workers`` processes, in input order.

        ``workers=None`` uses every core; ``1`` stays in this process.
        """
        workers = workers or os.cpu_count() or 1
        chunks = _chunked(docs, chunk_size)
        first = next(chunks, None)
        second = next(chunks, None) if workers > 1 else None
        if second is None:  # one process, or too little work to pay for starting more
            for chunk in itertools.chain(filter(None, [first]), chunks):
                yield from self.fingerprint_many(chunk, unified=unified)
            return
        assert first is not None  # there is a second chunk
        chunks = itertools.chain([first, second], chunks)
        # fork shares the loaded dictionaries and tables with the workers; elsewhere
        # each worker builds its own fingerprinter from the parameters.
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        if method == "fork":
            self.fingerprint("預熱")  # load jieba-rs and OpenCC before forking so workers inherit them
        ctx = multiprocessing.get_context(method)
        with ctx.Pool(workers, initializer=_init_worker, initargs=(self if method == "fork" else self.params,)) as pool:
            # Hand the pool a window of chunks at a time: Pool.imap would otherwise
            # drain the whole input into memory, which a 10M-line file does not fit.
            window = workers * 8
            while batch := list(itertools.islice(chunks, window)):
                for results in pool.imap(_work, [(chunk, unified) for chunk in batch]):
                    yield from results


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


def _chunked(items: Iterable[Doc], size: int) -> Iterator[list[Doc]]:
    chunk: list[Doc] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


_worker: Fingerprinter | None = None


def _init_worker(state: Fingerprinter | FingerprintParams) -> None:
    global _worker
    _worker = state if isinstance(state, Fingerprinter) else Fingerprinter(state)


def _work(job: tuple[list[Doc], bool]) -> list[Result]:
    assert _worker is not None
    docs, unified = job
    return _worker.fingerprint_many(docs, unified=unified)
