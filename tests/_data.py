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
