"""Waiting on a child Python process that should end, and saying where it waits when it does not."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

import pytest

PYTHON_FLAGS = ("-X", "faulthandler")
"""Run the child with these: on SIGABRT it writes every thread's stack to its stderr."""


def ended(run: subprocess.Popen[str], timeout: float, what: str) -> tuple[str, str]:
    """``run.communicate(timeout=timeout)``; past it, the test fails with the stacks of every thread of the
    child (started with :data:`PYTHON_FLAGS` and ``start_new_session=True``: its workers are killed with it),
    so a hang seen once, on a machine where it cannot be watched, says where it was."""
    try:
        return run.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass
    os.kill(run.pid, signal.SIGABRT)
    try:
        _, err = run.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        err = "(no stacks: it did not end on SIGABRT either)"
    with contextlib.suppress(ProcessLookupError):  # its workers, if any are left
        os.killpg(run.pid, signal.SIGKILL)
    pytest.fail(f"{what} did not end within {timeout:g} s; where its threads were:\n{err[-12000:]}")
