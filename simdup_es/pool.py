"""The process pool behind :meth:`Fingerprinter.map_chunks <simdup_es.fingerprint.Fingerprinter.map_chunks>`.

:func:`map_chunks` runs ``task(state, chunk)`` for chunks of a stream on worker
processes, in input order, with a bounded number of chunks in flight. Each worker
holds its own ``state`` (inherited when forked, rebuilt when spawned); the pool
stops with :class:`~simdup_es.errors.WorkerError` when a worker dies, and keeps the
garbage collector off long-lived objects while it runs.
"""

from __future__ import annotations

import functools
import gc
import itertools
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.pool import AsyncResult, Pool
from typing import Any, TypeVar

from .errors import WorkerError

log = logging.getLogger(__name__)

# What the interpreter itself keeps in the garbage collector's permanent generation.
# CPython 3.12 puts the base and MRO tuples of its static builtin types there at
# startup (375 on 3.12.1; 0 on 3.11 and 3.13), so gc.get_freeze_count() is not 0
# there before any program called gc.freeze(). Read at import, before simdup froze
# anything; a program that froze objects before importing simdup counts as the
# interpreter then, on 3.12 only.
_INTERPRETER_FROZEN = gc.get_freeze_count() if sys.version_info[:2] == (3, 12) else 0

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")


def map_chunks(
    state: S,
    items: Iterable[T],
    task: Callable[[S, list[T]], R],
    *,
    rebuild: Callable[[], S],
    warm_up: Callable[[], object] | None = None,
    workers: int | None = None,
    chunk_size: int = 64,
    chunk_weight: tuple[Callable[[T], int], int] | None = None,
) -> Iterator[R]:
    """``task(state, chunk)`` for each chunk of ``items``, on ``workers`` processes, in input order.

    Forked workers inherit ``state`` (``warm_up()`` runs first, to load what they
    share); spawned ones make their own with ``rebuild()``, which must pickle. See
    :meth:`Fingerprinter.map_chunks <simdup_es.fingerprint.Fingerprinter.map_chunks>`
    for ``task``, ``chunk_size`` and ``chunk_weight``.
    """
    workers = workers or os.cpu_count() or 1
    chunks = _chunked(items, chunk_size, *(chunk_weight or ()))
    first = next(chunks, None)
    second = next(chunks, None) if workers > 1 else None
    if second is None:  # one process, or too little work to pay for starting more
        for chunk in itertools.chain(filter(None, [first]), chunks):
            yield task(state, chunk)
        return
    assert first is not None  # there is a second chunk
    chunks = itertools.chain([first, second], chunks)
    # fork shares the loaded dictionaries and tables with the workers; elsewhere
    # each worker builds its own state (rebuild: a fingerprinter from its parameters).
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    if method == "fork" and warm_up is not None:
        warm_up()  # load what the workers need (jieba-rs and OpenCC) before forking so they inherit it
    # What is alive now (modules, tables, the caller's data) is never garbage
    # while the pool runs: out of the collector's sight, forked workers do not
    # copy its pages on write and neither process scans it again (gc.freeze's
    # purpose): for index on 2 cores, about 5 % less wall time and 12 % less CPU
    # in this process. Not when the program froze objects of its own, which
    # thawing would undo.
    frozen = method == "fork" and _may_freeze()
    threshold = gc.get_threshold()
    ctx = multiprocessing.get_context(method)
    try:
        if frozen:
            gc.freeze()
            # And seldom over what this process makes while feeding the workers (index of 4,000
            # documents: 6 against 12 ms of collections); not at all if the program turned it off.
            _collect_seldom()
        make = functools.partial(_same, state) if method == "fork" else rebuild
        with _Pool(workers, _init_worker, (make,), context=ctx) as pool:
            # At most `window` chunks in flight, topped up as each one is taken:
            # Pool.imap would drain the whole input into memory (a 10M-line file
            # does not fit), and waiting for a whole window before sending the next
            # would leave workers idle at its end. Eight a worker: they keep fingerprinting
            # while the feeding process waits on a store's write.
            window = workers * 8
            pending: deque[AsyncResult[R]] = deque()
            for chunk in chunks:
                pending.append(pool.apply_async(_work, ((task, chunk),)))
                if len(pending) >= window:
                    yield pool.result(pending.popleft())
            while pending:
                yield pool.result(pending.popleft())
    finally:
        if frozen:
            gc.unfreeze()
            gc.set_threshold(*threshold)


def _may_freeze() -> bool:
    """Whether the pool may freeze and later thaw every object: none is frozen but the interpreter's own."""
    count = gc.get_freeze_count()
    if count <= _INTERPRETER_FROZEN:
        return True
    log.info("the garbage collector is not frozen for the worker pool (an optimisation: about 5 %% less wall "
             "time): %d objects were frozen by the program (%d by the interpreter), and thawing them after the "
             "pool would undo that", count - _INTERPRETER_FROZEN, _INTERPRETER_FROZEN)
    return False


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
    """multiprocessing's process pool, its workers ended only by it, its worker-handler thread woken only by what it
    handles.

    A worker killed while it holds a lock of the pool's queues (waiting for a task, or
    halfway through writing a result) leaves it held, and the pool's shutdown waits for it
    for good (cpython#96995): an interrupt or SIGTERM that reached the workers (Ctrl-C goes
    to the whole process group, a service manager may signal every process) used to do
    that. So the workers ignore both (:func:`_init_worker`) and the process that runs the
    pool decides: it lets the chunks in flight finish and the workers leave
    (:meth:`finish`), and kills them (SIGKILL: they ignore SIGTERM) only when they cannot.

    CPython's pool also wakes that thread whenever a result waits in the result pipe
    (``_get_sentinels``), so it spins until the result-handler thread has read the
    result, taking the GIL from it: about 40 µs of the feeding process's CPU per
    document indexed on 2 workers, and 12,000-24,000 turns for 4,000 documents. It
    maintains the workers; what it must wake for is a worker that exits (its
    sentinel) and a change to the pool (the change notifier: close, terminate, the
    last task done), which is what remains here, as in CPython's own ThreadPool.
    """

    @staticmethod
    def Process(ctx: Any, *args: Any, **kwds: Any) -> Any:  # noqa: N802  (Pool's name)
        process = ctx.Process(*args, **kwds)
        process.terminate = process.kill  # it ignores SIGTERM (_init_worker)
        return process

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._seen: set[multiprocessing.process.BaseProcess] = set(self._pool)  # type: ignore[attr-defined]
        self._done = 0

    def __exit__(self, *exc: object) -> None:
        self.finish()

    def finish(self) -> None:
        """End the pool without killing a worker that may be writing a result.

        A worker killed halfway through writing a result (half a megabyte for a chunk
        of 128 documents, more than a pipe holds) leaves the result queue's lock held and
        its message cut short, and the pool's own threads wait on them for good: its
        shutdown never returns. So the chunks in flight run to their end (a fraction of
        a second; their results are dropped) and the workers leave on the pool's
        sentinel. Only a pool that cannot end so (a worker ended and took its chunk, the
        chunks outlast :data:`_FINISH_SECONDS`, or the wait is interrupted) is terminated.
        """
        try:
            deadline = time.monotonic() + _FINISH_SECONDS
            while ((pending := list(self._cache.values()))  # type: ignore[attr-defined]
                   and not self._ended() and (left := deadline - time.monotonic()) > 0):
                if pending[0].ready():  # the result thread takes it out of the cache a moment after
                    time.sleep(0.001)
                else:
                    pending[0].wait(min(left, _POLL_SECONDS))
            ended = self._ended()
            if ended or self._cache:  # type: ignore[attr-defined]
                if not ended:  # (a worker that ended: the map that waited on it has said so, WorkerError)
                    log.warning("the fingerprinting workers did not finish their chunks in flight within %g s; "
                                "stopping them", _FINISH_SECONDS)
                self._terminate_within()
                return
            self.close()
            # Every chunk came back, so a worker that has not left on the sentinel by then holds no result: killing
            # it cannot hang the pool.
            deadline = time.monotonic() + _FINISH_SECONDS
            for worker in self._pool:  # type: ignore[attr-defined]
                worker.join(max(0.0, deadline - time.monotonic()))
            if stuck := [worker for worker in self._pool if worker.exitcode is None]:  # type: ignore[attr-defined]
                log.warning("%d fingerprinting workers did not leave within %g s of their last chunk; stopping them",
                            len(stuck), _FINISH_SECONDS)
                for worker in stuck:
                    worker.kill()
            self.join()
        except BaseException:
            self._terminate_within()
            raise

    def _terminate_within(self) -> None:
        """``terminate()``, given :data:`_FINISH_SECONDS` to return.

        It may wait for good on a lock of the pool's queues that a worker took before it died
        (cpython#96995), so it runs on a thread of its own; past the time the workers are killed
        and the pool's threads (daemons) are left where they wait, for the process to go on.
        """
        ending = threading.Thread(target=self.terminate, name="simdup-pool-terminate", daemon=True)
        ending.start()
        ending.join(_FINISH_SECONDS)
        if ending.is_alive():
            log.warning("the fingerprinting workers' pool did not end within %g s of being stopped (a lock left held "
                        "by a worker that ended); killing its workers", _FINISH_SECONDS)
            for worker in {*self._seen, *self._pool}:  # type: ignore[attr-defined]
                worker.kill()

    def _ended(self) -> list[int]:
        """The exit codes of the workers that ended while the pool runs."""
        self._seen.update(self._pool)  # type: ignore[attr-defined]
        return [p.exitcode for p in self._seen if p.exitcode is not None]

    def _get_sentinels(self) -> list[object]:
        return [self._change_notifier._reader]  # type: ignore[attr-defined]

    def result(self, pending: AsyncResult[R]) -> R:
        """``pending.get()``, or :class:`WorkerError` once a worker has ended while the pool runs.

        A worker killed halfway through a task (by the kernel when memory runs out,
        by a crash in native code) takes the task with it: the pool starts another
        worker, but the result never comes, and ``get()`` would wait for ever.
        """
        while not pending.ready():
            if ended := self._ended():
                raise WorkerError(
                    f"a fingerprinting worker process ended (exit code {ended[0]}"
                    + (f": killed by signal {-ended[0]}, by the kernel if memory ran out" if ended[0] < 0 else "")
                    + f") after {self._done} batches had come back; its documents were not fingerprinted."
                    " Run again with fewer workers or more memory"
                )
            pending.wait(_POLL_SECONDS)
        self._done += 1
        return pending.get()


_worker: Any = None  # the worker process's state
_POLL_SECONDS = 1.0  # how often a map waiting for a result looks for workers that ended
_FINISH_SECONDS = 10.0  # how long an ending pool waits for the chunks in flight before it kills the workers
_WORKER_GC_THRESHOLD = 10_000  # allocations between collections of the youngest objects, while a pool runs


def _same(state: S) -> S:
    return state


def _init_worker(make: Callable[[], object]) -> None:
    global _worker
    # The process that runs the pool stops it (:class:`_Pool`); the workers' signals are its to act on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _worker = make()
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


def _work(job: tuple[Callable[[Any, list[T]], R], list[T]]) -> R:
    assert _worker is not None
    task, chunk = job
    return task(_worker, chunk)
