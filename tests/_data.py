"""Fixture texts and the evaluation corpus, for tests of every kind."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def data_dir() -> Path:
    return Path(os.environ.get("SIMDUP_DATA") or ROOT / "data")


def load_corpus(name: str) -> list[dict]:
    """Records of a corpus made by scripts/fetch-corpus; a missing corpus fails the test."""
    path = data_dir() / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run scripts/fetch-corpus (scripts/test does it for you)")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def batch_by_route(batch: list[str], numpy: bool) -> list[str]:
    """``batch`` as the sentence splitter takes the route asked for: the numpy one over the batch (a filler text,
    last, takes it past ``sentences._BATCH_CHARS``; drop its results) or text by text (a batch below it)."""
    from hypothesis import assume

    from simdup_es.sentences import _BATCH_CHARS

    if numpy:
        return [*batch, "字" * _BATCH_CHARS]
    assume(sum(len(text) + 1 for text in batch) < _BATCH_CHARS)
    return batch


def reject_rows(path: Path, *, last_run: bool = False) -> list[dict]:
    """The rejects in a rejects file (each run's after a header line of its own), of the last run only if asked."""
    rows: list[dict] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "run" in row and "source" not in row:
            if last_run:
                rows.clear()
            continue
        rows.append(row)
    return rows
