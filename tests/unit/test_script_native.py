"""The compiled core's conversions (``simdup_es._native.Script`` on the flat tables) give OpenCC's text: config
by config and through :func:`~simdup_es.text.to_simplified` and :func:`~simdup_es.text.unify`, on every text of
the corpora and on random text made of the tables' keys, NULs, the JOIN character and ideographic description
characters; and the Python implementation, or a table that cannot be read, leaves the conversion to OpenCC.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdup_es.opencc_tables as tables_module
from simdup_es import native
from simdup_es.opencc_tables import CONFIGS, JOIN, Shortcuts, _flat_table, converter, load_shortcuts, native_script
from simdup_es.text import _convert_one, to_simplified, to_simplified_many, unify_many
from tests._data import fixture_text, load_corpus


@contextmanager
def on(compiled: ModuleType | None) -> Iterator[None]:
    """The compiled core (``compiled``) or OpenCC (``None``) converts."""
    with mock.patch.multiple(native, _MODULE=compiled, _WHY=""):
        yield


def shortcuts() -> Shortcuts:
    found = load_shortcuts()
    assert found is not None
    return found


@pytest.fixture(scope="module")
def script(compiled: ModuleType) -> Any:
    with on(compiled):
        found = native_script(shortcuts())
    assert found is not None
    return found


def opencc(config: int, text: str) -> str:
    """What :func:`simdup_es.text._convert` has OpenCC make of ``text`` with one of the shortcuts' configs."""
    return _convert_one(converter(shortcuts().main[CONFIGS[config]]).convert, text)


def both_ways(compiled: ModuleType, texts: list[str]) -> tuple[list[str], list[str]]:
    """:func:`to_simplified_many` of ``texts``, the compiled core converting, then OpenCC."""
    with on(compiled):
        ours = to_simplified_many(texts)
    with on(None):
        theirs = to_simplified_many(texts)
    return ours, theirs


@functools.cache
def table_keys() -> list[str]:
    """Every key of the flat tables of the three configs (segmentations and chains)."""
    keys: set[str] = set()
    for name in CONFIGS:
        spec = json.loads(Path(shortcuts().main[name]).read_text(encoding="utf-8"))
        steps = [spec["segmentation"]] if "segmentation" in spec else []
        for step in steps + spec["conversion_chain"]:
            keys.update(_flat_table(step["dict"]["file"]).values)
    return sorted(keys)


def test_the_tables_are_those_of_the_three_configs() -> None:
    keys = table_keys()
    assert len(keys) > 50_000 and "使用者" in keys and "軟體" in keys and any(len(k) > 8 for k in keys)


# ---------------------------------------------------------------------------------------------- the corpora


def _corpus_texts() -> list[str]:
    """Every text of the evaluation corpora (Simplified, and the Traditional side of the man page pairs), their
    titles and names, and the fixtures."""
    texts = [v for name in ("zh-docs.jsonl", "manpages-pairs.jsonl", "en-docs.jsonl", "en-licences.jsonl")
             for record in load_corpus(name) for v in record.values() if isinstance(v, str) and v]
    return texts + [fixture_text(name) for name in ("zh_article.txt", "zh_article_tw.txt", "zh_other.txt", "en_article.txt")]


def test_every_corpus_text_converts_as_opencc_converts_it_config_by_config(script: Any) -> None:
    texts = _corpus_texts()
    assert len(texts) > 40_000 and sum(len(t) for t in texts) > 10_000_000
    for config in range(3):
        differ = [t for t in texts if script.convert(config, t) != opencc(config, t)]
        assert differ == [], CONFIGS[config]
    # The corpus holds Traditional text, and text each config changes.
    assert all(sum(script.convert(config, t) != t for t in texts) > 1000 for config in range(3))


def test_every_corpus_text_is_simplified_and_unified_as_with_opencc(compiled: ModuleType) -> None:
    texts = _corpus_texts()
    batches = [texts[i : i + 64] for i in range(0, len(texts), 64)]
    ours, theirs = zip(*(both_ways(compiled, batch) for batch in batches), strict=True)
    assert list(ours) == list(theirs)
    with on(compiled):
        unified = [unify_many(batch) for batch in batches]
    with on(None):
        assert [unify_many(batch) for batch in batches] == unified


# ------------------------------------------------------------------------------------------ random text

# Ideographic description characters (OpenCC copies a complete sequence whole), compatibility ideographs
# (their texts take OpenCC's configs with normalization), a NUL (each piece between converts alone), JOIN.
_OTHERS = st.sampled_from(["⿰", "⿱", "⿲", "⿾", "⿿", "\uf900", "\ufa0e", "\0", JOIN, "\n", " ", "，", "a", "1", "·", "-"])
_CJK = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF) | st.characters(min_codepoint=0x20000, max_codepoint=0x2A6DF)
_PIECE = st.deferred(lambda: st.sampled_from(table_keys())) | _CJK | _OTHERS
_TEXT = st.lists(_PIECE, max_size=30).map("".join)


@given(_TEXT)
@settings(max_examples=500, deadline=None)
def test_each_config_converts_random_text_as_opencc(script: Any, text: str) -> None:
    for config in range(3):
        assert script.convert(config, text) == opencc(config, text)


@given(st.lists(_TEXT, max_size=8))
@settings(max_examples=300, deadline=None)
def test_texts_converted_together_are_opencc_s_each_alone(compiled: ModuleType, texts: list[str]) -> None:
    ours, theirs = both_ways(compiled, texts)
    assert ours == theirs
    with on(None):
        assert theirs == [to_simplified(t) for t in texts]


@pytest.mark.parametrize("text", [
    "⿰氵青", "⿰氵", "⿰", "⿲言語語", "⿰⿰言語語語", "⿾語語", "語⿰言語語", "⿰\0語", "⿰言\0語", f"⿰{JOIN}語",
    "⿰" * 20 + "語" * 21,  # deeper than OpenCC parses: each character on its own
    "⿰" + "⿾" * 64 + "語",  # more characters than OpenCC parses
    "⿰" + "⿾" * 62 + "語",
    "U盘和B超", "乾隆乾燥", "\U0002f800\uf900軟體",
])
def test_description_sequences_nuls_and_edges_convert_as_opencc(script: Any, compiled: ModuleType, text: str) -> None:
    for config in range(3):
        assert script.convert(config, text) == opencc(config, text)
    ours, theirs = both_ways(compiled, [text, "执行程序"])
    assert ours == theirs


def test_a_surrogate_is_refused_as_opencc_refuses_it(compiled: ModuleType) -> None:
    for module in (compiled, None):
        with on(module), pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
            to_simplified("軟體\ud800")


# ----------------------------------------------------------------------------------- who converts


def test_opencc_converts_on_the_python_implementation_and_without_shortcuts(compiled: ModuleType) -> None:
    with on(None):
        assert native_script(shortcuts()) is None
    with on(compiled):
        assert native_script(None) is None
        assert native_script(shortcuts()) is native_script(shortcuts())  # built once


def test_a_table_that_does_not_match_its_checksum_leaves_it_to_opencc(
        compiled: ModuleType, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    config = json.loads(Path(shortcuts().main["s2twp"]).read_text(encoding="utf-8"))
    table = Path(config["conversion_chain"][1]["dict"]["file"])
    changed = tmp_path / table.name
    changed.write_text(table.read_text(encoding="utf-8").replace("\t", "\tX", 1), encoding="utf-8")
    config["conversion_chain"][1]["dict"]["file"] = str(changed)
    path = tmp_path / "opencc-s2twp-0000000000000000.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    damaged = Shortcuts(shortcuts().marks, {**shortcuts().main, "s2twp": str(path)})
    with caplog.at_level(logging.WARNING, logger=tables_module.__name__):
        assert tables_module._script(compiled, damaged) is None
    assert "OpenCC converts" in caplog.text


@pytest.mark.parametrize(("tables", "configs", "why"), [
    (["a\tb\na\tc\n"], [(None, [0])] * 3, "twice"),
    (["ab\n"], [(None, [0])] * 3, "no tab"),
    (["a\t\n"], [(None, [0])] * 3, "empty key or value"),
    (["\tb\n"], [(None, [0])] * 3, "empty key or value"),
    (["a\tb\n"] * 9, [(None, [0])] * 3, "at most 8"),
    (["a\tb\n"], [(None, [1])] * 3, "not there"),
    (["a\tb\n"], [(None, [])] * 3, "empty"),
    (["a\tb\n"], [(None, [0])] * 2, "three configs"),
])
def test_tables_it_cannot_hold_are_refused(compiled: ModuleType, tables: list[str], configs: list[Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        compiled.Script(tables, configs)


_SMALL_TABLES = st.lists(st.dictionaries(st.text("ab⿰c", min_size=1, max_size=3), st.text("abxyz", min_size=1, max_size=3),
                                         min_size=1, max_size=6), min_size=1, max_size=4)


@given(_SMALL_TABLES, st.booleans(), st.lists(st.text("ab⿰⿲c\0x", max_size=14), min_size=1, max_size=4))
@settings(max_examples=200, deadline=None)
def test_made_up_tables_convert_as_opencc_converts_with_them(
        compiled: ModuleType, tables: list[dict[str, str]], segmented: bool, texts: list[str]) -> None:
    """Against OpenCC itself: a segmentation (the first table) or none, a chain of the others (or the one)."""
    import tempfile

    import opencc

    chain = list(range(1, len(tables))) if segmented and len(tables) > 1 else list(range(len(tables)))
    segmentation = 0 if segmented and len(tables) > 1 else None
    forms = ["".join(f"{k}\t{v} {v}{v}\n" for k, v in sorted(t.items())) for t in tables]  # the first value is taken
    ours = compiled.Script(forms, [(segmentation, chain)] * 3)
    with tempfile.TemporaryDirectory() as folder:
        for i, form in enumerate(forms):
            Path(f"{folder}/t{i}.txt").write_text(form, encoding="utf-8")
        spec: dict[str, Any] = {"name": "made", "conversion_chain": [{"dict": {"type": "text", "file": f"{folder}/t{i}.txt"}}
                                                                   for i in chain]}
        if segmentation is not None:
            spec["segmentation"] = {"type": "mmseg", "dict": {"type": "text", "file": f"{folder}/t0.txt"}}
        Path(f"{folder}/made.json").write_text(json.dumps(spec), encoding="utf-8")
        theirs = opencc.OpenCC(f"{folder}/made.json")
        for text in texts:
            assert ours.convert(1, text) == _convert_one(theirs.convert, text)


def test_a_text_table_is_read_as_opencc_reads_it(compiled: ModuleType) -> None:
    # A BOM, comments, blank lines and CRLF; a value is the first of a line's values.
    made = compiled.Script(["\ufeffab\tX Y\r\n# a\tcomment\n\na\tZ\nabc\tW\n"], [(None, [0])] * 3)
    assert made.convert(0, "abcab ba aab #a") == "WX bZ ZX #Z"
