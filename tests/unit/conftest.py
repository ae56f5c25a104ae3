"""Fixtures shared by the unit tests: the comparison matrix's segmenter, a test run in its own folder, the compiled core."""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

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


@pytest.fixture(scope="module")
def compiled() -> ModuleType:
    """The compiled core (simdup_es._native): a failure without it when SIMDUP_IMPLEMENTATION=native (as in CI), a
    skip that says why on a pure-Python install."""
    from simdup_es import native

    try:
        module = importlib.import_module("simdup_es._native")
    except ImportError as exc:
        if os.environ.get(native.ENV, "").lower() == "native":
            pytest.fail(f"{native.ENV}=native, but the compiled core is not installed: {exc}")
        pytest.skip(f"the compiled core is not installed (a pure-Python install: no cargo when it was built): {exc}")
    assert module.REVISION == native.REVISION, "a stale compiled core: reinstall the package (pip install -e .)"
    return module
