"""SIGTERM as Ctrl-C: a long command stopped by ``kill`` or a service manager says what it did and how to go on."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C raises :class:`KeyboardInterrupt`."""

    signum = signal.SIGTERM


def exit_status(exc: KeyboardInterrupt) -> int:
    """The exit status of a process ended by the signal behind ``exc``: 128 + its number, as a shell reports it."""
    return 128 + int(getattr(exc, "signum", signal.SIGINT))


def signal_name(exc: KeyboardInterrupt) -> str:
    """``SIGTERM`` or ``SIGINT`` (Ctrl-C)."""
    return "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` in this process, as Ctrl-C raises KeyboardInterrupt.

    Only in the process that entered the block: a worker process forked from it ignores
    the signal until its own handlers are set (:mod:`simdup_es.pool` ignores SIGTERM in
    its workers and ends them itself). Outside the main thread (a test runner's) SIGTERM
    is left alone.
    """
    here = os.getpid()

    def stop(signum: int, frame: FrameType | None) -> None:
        if os.getpid() == here:
            raise Terminated

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
