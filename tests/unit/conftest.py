"""Fixtures shared by the unit tests: the comparison matrix's segmenter, a test run in its own folder."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

Segment = Callable[[str], Sequence[str]]
_WORDLIKE = re.compile(r"[^\W_]")


@pytest.fixture(scope="module")
def segment(tmp_path_factory: pytest.TempPathFactory) -> Segment:
    """jieba words without punctuation or spaces, from a tokenizer of our own."""
    import jieba

    tokenizer = jieba.Tokenizer()
    tokenizer.tmp_dir = str(tmp_path_factory.mktemp("jieba"))
    tokenizer.initialize()

    def words(text: str) -> list[str]:
        return [t for t in tokenizer.lcut(text) if _WORDLIKE.search(t)]

    return words


@pytest.fixture()
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path``, made the working folder for the test (commands write their default outputs there)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
