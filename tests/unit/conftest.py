"""Fixtures shared by the unit tests of the comparison matrix."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

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
