"""Documents to fingerprints: unify, tokenise, weigh, SimHash.

:class:`Fingerprinter` holds what a fingerprint depends on (parameters, IDF table,
tokenizer) and the *fingerprint version* that names that combination. Two
fingerprints are only comparable when their versions are equal.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import itertools
import json
import logging
import multiprocessing
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import TypeVar
from importlib.metadata import version as _pkg_version
from multiprocessing.pool import AsyncResult, Pool

from . import simhash as sh
from .config import BlockLayout, FingerprintParams
from .errors import EmptyDocumentError, FingerprintVersionError, InputError, SimdupError, WorkerError
from .text import unify_many
from .tokens import _WORDLIKE, IdfTable, Lexicon, Tokenizer, weigh_batch

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

    def too_large(self, text: str) -> bool:
        """Whether ``text`` is over ``params.max_bytes`` in UTF-8 (encoded only when it may be)."""
        return len(text) * 3 > self.params.max_bytes and len(text.encode("utf-8")) > self.params.max_bytes

    def _check_size(self, doc: Doc) -> None:
        text = doc.text
        if self.too_large(text):
            raise InputError(
                f"document is {len(text.encode('utf-8')) / 1e6:.1f} MB, over the {self.params.max_bytes / 1e6:g} MB "
                "limit; split it or raise max_bytes (--max-bytes)",
                source=doc.source,
            )

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
        # One step at a time over the whole batch rather than one document at a
        # time: each step's tables (OpenCC's, jieba-rs's, the lexicon) stay in the
        # CPU caches, which saves about a sixth of the time.
        results: list[Result | None] = [None] * len(docs)
        texts: dict[int, str] = {}
        for i, doc in enumerate(docs):
            try:
                self._check_size(doc)
            except InputError as exc:
                results[i] = Result(None, exc)
                continue
            texts[i] = doc.text
        titles = {i: title for i in texts if (title := docs[i].title)}
        if not unified:  # texts and titles in one batch: each step runs once over them all
            both = unify_many([*texts.values(), *titles.values()])
            texts, titles = dict(zip(texts, both)), dict(zip(titles, both[len(texts) :]))
        segmented = {i: self.tokenizer.cut(text) for i, text in texts.items()}
        values = self._hashed(segmented, [titles.get(i, "") for i in segmented])
        for i, value in zip(segmented, values):
            results[i] = self._result(value, docs[i])
        return results  # type: ignore[return-value]

    def fingerprint_parts(
        self,
        docs: Sequence[Doc],
        tokens: Sequence[list[str]],
        parts: Sequence[Sequence[tuple[int, int] | list[str]]],
        *,
        unified: bool = False,
    ) -> list[tuple[Result, list[int | None]]]:
        """:meth:`fingerprint_many` of documents already segmented, and the fingerprints of their parts.

        ``tokens[i]`` is ``self.tokenizer.cut`` or ``segment`` of the unified text of
        ``docs[i]`` (whose text is not read again; its title is, and unified unless
        ``unified``). Each of ``parts[i]`` is a part of that text, fingerprinted as a
        document without title (:func:`~simdup_es.tokens.weigh_batch`): ``(start, stop)``
        where its tokens are ``tokens[i][start:stop]``, else its own tokens. A part's
        value is ``None`` where it has no content word. No size check.
        """
        titles = [doc.title or "" for doc in docs]
        if not unified and any(titles):
            titles = unify_many(titles)
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
                   if _WORDLIKE.search(doc.text) else " (empty, whitespace or punctuation only)")
            return Result(None, EmptyDocumentError("no words to fingerprint" + why, source=doc.source))
        return Result(Fingerprint(value, self.version), None)

    def map(
        self, docs: Iterable[Doc], *, workers: int | None = None, chunk_size: int = 64, unified: bool = False
    ) -> Iterator[Result]:
        """Fingerprint a stream of documents on ``workers`` processes, in input order.

        ``workers=None`` uses every core; ``1`` stays in this process.
        """
        task = functools.partial(_fingerprint_chunk, unified=unified)
        for results in self.map_chunks(docs, task, workers=workers, chunk_size=chunk_size):
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
        workers = workers or os.cpu_count() or 1
        chunks = _chunked(items, chunk_size, *(chunk_weight or ()))
        first = next(chunks, None)
        second = next(chunks, None) if workers > 1 else None
        if second is None:  # one process, or too little work to pay for starting more
            for chunk in itertools.chain(filter(None, [first]), chunks):
                yield task(self, chunk)
            return
        assert first is not None  # there is a second chunk
        chunks = itertools.chain([first, second], chunks)
        # fork shares the loaded dictionaries and tables with the workers; elsewhere
        # each worker builds its own fingerprinter from the parameters.
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        if method == "fork":
            self.fingerprint("預熱")  # load jieba-rs and OpenCC before forking so workers inherit them
        # What is alive now (modules, tables, the caller's data) is never garbage
        # while the pool runs: out of the collector's sight, forked workers do not
        # copy its pages on write and neither process scans it again (gc.freeze's
        # purpose): for index on 2 cores, about 5 % less wall time and 12 % less CPU
        # in this process. Not when the program froze objects of its own, which
        # thawing would undo.
        frozen = method == "fork" and gc.get_freeze_count() == 0
        threshold = gc.get_threshold()
        ctx = multiprocessing.get_context(method)
        try:
            if frozen:
                gc.freeze()
                # And seldom over what this process makes while feeding the workers (index of 4,000
                # documents: 6 against 12 ms of collections); not at all if the program turned it off.
                _collect_seldom()
            with _Pool(workers, _init_worker, (self if method == "fork" else self.params,), context=ctx) as pool:
                # At most `window` chunks in flight, topped up as each one is taken:
                # Pool.imap would drain the whole input into memory (a 10M-line file
                # does not fit), and waiting for a whole window before sending the next
                # would leave workers idle at its end.
                window = workers * 4
                pending: deque[AsyncResult[R]] = deque()
                try:
                    for chunk in chunks:
                        pending.append(pool.apply_async(_work, ((task, chunk),)))
                        if len(pending) >= window:
                            yield pool.result(pending.popleft())
                    while pending:
                        yield pool.result(pending.popleft())
                except BaseException as exc:  # the caller stopped early (GeneratorExit), or an error
                    # Let the chunks under way finish before the pool is terminated:
                    # terminating kills a worker that is halfway through writing a
                    # result, its lock on the result queue stays held, and the pool's
                    # shutdown hangs for good (cpython#96995). Not on an interrupt,
                    # which the workers got too.
                    if not isinstance(exc, KeyboardInterrupt):
                        deadline = time.monotonic() + _DRAIN_SECONDS
                        for result in pending:
                            result.wait(max(0.0, deadline - time.monotonic()))
                    raise
        finally:
            if frozen:
                gc.unfreeze()
                gc.set_threshold(*threshold)

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


@functools.lru_cache(maxsize=1)
def default_fingerprinter() -> Fingerprinter:
    """The fingerprinter with default parameters, built on first use (``simdup_es.default_fingerprinter``)."""
    return Fingerprinter()


def _chunked(items: Iterable[T], size: int, weigh: Callable[[T], int] | None = None, most: int = 0
             ) -> Iterator[list[T]]:
    """Lists of ``size`` items, or fewer once ``weigh`` of them adds up to ``most``."""
    chunk: list[T] = []
    weight = 0
    for item in items:
        chunk.append(item)
        if weigh is not None:
            weight += weigh(item)
        if len(chunk) == size or (weigh is not None and weight >= most):
            yield chunk
            chunk, weight = [], 0
    if chunk:
        yield chunk


class _Pool(Pool):
    """multiprocessing's process pool, its worker-handler thread woken only by what it handles.

    CPython's pool also wakes that thread whenever a result waits in the result pipe
    (``_get_sentinels``), so it spins until the result-handler thread has read the
    result, taking the GIL from it: about 40 µs of the feeding process's CPU per
    document indexed on 2 workers, and 12,000-24,000 turns for 4,000 documents. It
    maintains the workers; what it must wake for is a worker that exits (its
    sentinel) and a change to the pool (the change notifier: close, terminate, the
    last task done), which is what remains here, as in CPython's own ThreadPool.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._seen: set[multiprocessing.process.BaseProcess] = set(self._pool)  # type: ignore[attr-defined]
        self._done = 0

    def _get_sentinels(self) -> list[object]:
        return [self._change_notifier._reader]  # type: ignore[attr-defined]

    def result(self, pending: AsyncResult[R]) -> R:
        """``pending.get()``, or :class:`WorkerError` once a worker has ended while the pool runs.

        A worker killed halfway through a task (by the kernel when memory runs out,
        by a crash in native code) takes the task with it: the pool starts another
        worker, but the result never comes, and ``get()`` would wait for ever.
        """
        while not pending.ready():
            self._seen.update(self._pool)  # type: ignore[attr-defined]
            ended = [p.exitcode for p in self._seen if p.exitcode is not None]
            if ended:
                raise WorkerError(
                    f"a fingerprinting worker process ended (exit code {ended[0]}"
                    + (f": killed by signal {-ended[0]}, by the kernel if memory ran out" if ended[0] < 0 else "")
                    + f") after {self._done} batches had come back; its documents were not fingerprinted."
                    " Run again with fewer workers or more memory"
                )
            pending.wait(_POLL_SECONDS)
        self._done += 1
        return pending.get()


_worker: Fingerprinter | None = None
_DRAIN_SECONDS = 10.0  # the longest a stopped map waits for its chunks under way (a worker may have died)
_POLL_SECONDS = 1.0  # how often a map waiting for a result looks for workers that ended
_WORKER_GC_THRESHOLD = 10_000  # allocations between collections of the youngest objects, while a pool runs


def _init_worker(state: Fingerprinter | FingerprintParams) -> None:
    global _worker
    _worker = state if isinstance(state, Fingerprinter) else Fingerprinter(state)
    # A worker's garbage is nearly all freed by reference counting, but at the default
    # threshold (700) the collector ran about every 16 documents, over what had grown
    # since (token caches): 13-20 us of CPU a document, 3 % of a worker's. Not again over
    # the tables it starts with (as gc.freeze before forking, for spawned workers too).
    gc.freeze()
    _collect_seldom()


def _collect_seldom() -> None:
    """Collect the youngest objects after at least :data:`_WORKER_GC_THRESHOLD` allocations;
    0 (automatic collection off) stays 0."""
    first, *rest = gc.get_threshold()
    gc.set_threshold(first and max(first, _WORKER_GC_THRESHOLD), *rest)


def _work(job: tuple[Callable[[Fingerprinter, list[T]], R], list[T]]) -> R:
    assert _worker is not None
    task, chunk = job
    return task(_worker, chunk)


def _fingerprint_chunk(fingerprinter: Fingerprinter, docs: list[Doc], *, unified: bool) -> list[Result]:
    return fingerprinter.fingerprint_many(docs, unified=unified)
