"""The compiled core (simdup_es._native) gives the Python modules' results bit for bit: fingerprints, weights,
tokens, sentences, keys, parts and their fingerprints, on any text (hypothesis) and on every document of the
corpora; and the switch (SIMDUP_IMPLEMENTATION) picks it, or refuses a module that is missing or stale.

Both implementations run in this process whichever the switch chose: each test sets the one it wants
(``on_native``, ``on_python``; the ``compiled`` fixture is in conftest.py). Without the compiled module the tests fail when SIMDUP_IMPLEMENTATION=native
(as in CI) and are skipped, saying why, on a pure-Python install.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdup_es.tokens as tokens_module
from simdup_es import keys, native
from simdup_es.config import FingerprintParams
from simdup_es.errors import ConfigError
from simdup_es.fingerprint import Doc, Fingerprinter
from simdup_es.keys import StoredKeys
from simdup_es.levels import PartParams, split_parts, text_keys
from simdup_es.parts import PartPrinter
from simdup_es.store.base import MAX_STORED_PARTS
from simdup_es.sentences import ABBREVIATIONS, split_sentences
from simdup_es.text import UnifiedText, unify, unify_many
from simdup_es.tokens import _rjieba_class, weigh_batch
from tests._data import ROOT, load_corpus

T = TypeVar("T")


@functools.lru_cache(maxsize=1)
def rjieba() -> Any:
    """An rjieba ``Jieba`` of the tests' own (its dictionary loaded once)."""
    return _rjieba_class()()


@contextmanager
def on_python() -> Iterator[None]:
    """The Python modules compute, jieba-rs through rjieba."""
    with mock.patch.multiple(native, _MODULE=None, _WHY=""), mock.patch.object(tokens_module, "_rust", rjieba()):
        yield


@contextmanager
def on_native(compiled: ModuleType) -> Iterator[None]:
    with mock.patch.multiple(native, _MODULE=compiled, _WHY=""):
        yield


def both(compiled: ModuleType, work: Callable[[], T]) -> tuple[T, T]:
    """``work()`` on the compiled core, then on the Python modules (each making its own fingerprinters)."""
    with on_native(compiled):
        a = work()
    with on_python():
        b = work()
    return a, b


# ------------------------------------------------------------------------------ revision and switch


def test_the_package_notes_the_revision_of_the_crate_beside_it() -> None:
    found = native.source_revision(ROOT / "native")
    assert native.REVISION == found, f"native/ changed: set REVISION = {found!r} in simdup_es/native.py"


def test_the_compiled_core_is_built_from_this_crate_for_the_installed_rjieba(compiled: ModuleType) -> None:
    from importlib.metadata import version

    assert compiled.REVISION == native.source_revision(ROOT / "native")
    assert compiled.RJIEBA == version("rjieba")
    assert native._mismatch(compiled) == ""


def test_a_stale_module_is_refused_when_asked_for_and_passed_over_with_a_warning_when_not(
        compiled: ModuleType, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(native, "REVISION", "0123456789abcdef")
    why = native._mismatch(compiled)
    assert "built from other sources" in why and "build/" in why
    monkeypatch.setenv(native.ENV, "native")
    assert native._choose() == ("native", None, why)
    monkeypatch.setenv(native.ENV, "")
    with caplog.at_level("WARNING", logger="simdup_es.native"):
        assert native._choose() == ("", None, "")
    assert "built from other sources" in caplog.text and "Python implementation" in caplog.text


def test_a_module_for_another_rjieba_is_refused(compiled: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "_rjieba_version", lambda: "9.9.9")
    why = native._mismatch(compiled)
    assert "rjieba 9.9.9" in why and f"rjieba=={compiled.RJIEBA}" in why


def test_a_missing_module_is_an_error_only_when_asked_for(monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "simdup_es._native", None)  # import fails as when it was never built
    monkeypatch.setenv(native.ENV, "native")
    choice, module, why = native._choose()
    assert module is None and "not installed" in why and "cargo" in why
    with mock.patch.multiple(native, _MODULE=module, _WHY=why), pytest.raises(ConfigError, match="not installed"):
        Fingerprinter()
    monkeypatch.setenv(native.ENV, "")
    with caplog.at_level("WARNING", logger="simdup_es.native"):
        assert native._choose() == ("", None, "")  # a pure install: the Python modules, quietly
    assert not caplog.text
    monkeypatch.setenv(native.ENV, "python")
    assert native._choose() == ("python", None, "")


def test_the_switch_is_read_at_import_and_a_wrong_value_is_refused(compiled: ModuleType) -> None:
    code = "from simdup_es import native; print(native.implementation())"
    for value, expected in (("python", "python"), ("native", "native"), ("", "native"), (" Native ", "native")):
        out = subprocess.run([sys.executable, "-c", code], env=os.environ | {native.ENV: value}, capture_output=True,
                             text=True, check=True).stdout
        assert out.strip() == expected, value
    run = subprocess.run([str(Path(sys.executable).parent / "simdup"), "fingerprint", "--text", "你好世界"],
                         env=os.environ | {native.ENV: "rust"}, capture_output=True, text=True)
    assert run.returncode != 0 and f"{native.ENV} is 'native' or 'python'" in run.stderr and "Traceback" not in run.stderr


def test_the_python_path_loads_rjieba_and_the_native_one_its_own_jieba(compiled: ModuleType) -> None:
    code = ("import sys; from simdup_es import tokens; tokens._rust_jieba(); "
            "print(type(tokens._rust).__module__ == 'simdup_es._native', 'rjieba.rjieba' in sys.modules)")
    for value, expected in (("python", "False True"), ("native", "True False")):
        out = subprocess.run([sys.executable, "-c", code], env=os.environ | {native.ENV: value}, capture_output=True,
                             text=True, check=True).stdout
        assert out.strip() == expected


def test_the_character_table_is_the_interpreters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIMDUP_CACHE", str(tmp_path))
    flags, folds = native.char_table()  # built, then read from the cache
    assert native.char_table() == (flags, folds) and list(tmp_path.glob("chars-*"))
    assert dict(folds)[ord("ß")] == "ss" and dict(folds)[ord("Σ")] == "σ" and ord("a") not in dict(folds)
    for c in map(chr, itertools.chain(range(0, 0x3000), range(0x1D400, 0x1D800), range(0x10400, 0x10500))):
        f = flags[ord(c)]
        assert (bool(f & 1), bool(f & 2), bool(f & 4), bool(f & 8)) == (
            c.isalnum(), c.isdecimal(), c.isspace(), c.casefold() != c), hex(ord(c))


# ------------------------------------------------------------------------------ tokens and weights

_WORDS = ["文档", "检索", "的", "了", "，", "。", " ", "\n", "elasticsearch", "Elasticsearch", "a", "the", "近似", "重复",
          "3.14", "a.out", "out", ".", "mh-alias", "-f", "c++", "C++", "x_y", "50%", "tcl_platform", "軟體", "使用者",
          "预设", "İstanbul", "Straße", "ΣΊΣΥΦΟΣ", "𠀀", "ｆｕｌｌ", "１２３", "かな", "한국어", "e.g.", "Dr.", "U.S.",
          "\t", "\u3000", "…", "“", "”", "中华人民共和国", "我们今天讨论这个问题", "国务院", "北京大学", "0x1f", "v1.2.3", "1.1a", "2.5mg", "a.1a", "x.5y"]
_TEXT = (st.lists(st.sampled_from(_WORDS) | st.text(max_size=3) | st.text(alphabet="ab.-_%+#&\n 文字。", max_size=6),
                  max_size=60).map("".join)
         .filter(lambda t: not any("\ud800" <= c <= "\udfff" for c in t)))


@settings(max_examples=100, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=4), st.lists(st.sampled_from(["", "文档", "近似重复 检索", "Elasticsearch a.out"])
                                                        | _TEXT, min_size=4, max_size=4),
       st.sets(st.sampled_from(["文档", "elasticsearch", "out", "检索"]), max_size=2),
       st.integers(1, 6), st.sampled_from([0.0, 1.0, 2.5]), st.sampled_from([0, 3.0, 4.5]))
def test_fingerprints_and_weights_are_the_pythons(compiled: ModuleType, texts: list[str], titles: list[str],
                                                  marked: set[str], max_count: int, length: float, noun: float) -> None:
    params = FingerprintParams(max_count=max_count, length_boost=length, noun_boost=noun, marked_words=marked)
    docs = [Doc(text, title or None) for text, title in zip(texts, titles)]

    def work() -> tuple[list[object], list[list[tuple[int, float]]]]:
        fp = Fingerprinter(params)
        results = [(r.fingerprint, repr(r.error)) for r in fp.fingerprint_many(docs)]
        return results, _weights(fp, docs)

    (fps, weights), (ref_fps, ref_weights) = both(compiled, work)
    assert fps == ref_fps
    assert weights == ref_weights


def _weights(fp: Fingerprinter, docs: list[Doc]) -> list[list[tuple[int, float]]]:
    """The (hash, weight) pairs of each document, sorted: the compiled core's, or weigh_batch's."""
    texts = unify_many([d.text for d in docs])
    titles = [unify(d.title) if d.title else "" for d in docs]
    if (pipeline := fp.native_pipeline()) is not None:
        return [sorted(pairs) for pairs in pipeline.weights(texts, titles)]
    title_words = [frozenset(fp.tokenizer.words(t)) if t else frozenset() for t in titles]
    hashes, weights, offsets = weigh_batch([fp.tokenizer.cut(t) for t in texts], fp.lexicon, title_words)
    bounds = offsets.tolist()
    return [sorted(zip(hashes[a:b].tolist(), weights[a:b].tolist())) for a, b in zip(bounds, bounds[1:])]


@settings(max_examples=100, deadline=None)
@given(_TEXT, st.booleans())
def test_jieba_cuts_as_rjieba(compiled: ModuleType, text: str, hmm: bool) -> None:
    tokens = rjieba().cut(text, hmm)
    assert compiled.Jieba().cut(text, hmm) == tokens
    for word in set(tokens):
        assert compiled.Jieba().has_word(word) == rjieba().has_word(word)


def test_the_dictionary_is_rjiebas() -> None:
    # native/data/jieba-dict.txt is what jieba-rs embeds (rjieba's dictionary); what the corpus cuts check.
    lines = (ROOT / "native" / "data" / "jieba-dict.txt").read_text(encoding="utf-8").splitlines()
    assert len(lines) > 340_000 and all(len(line.split()) == 3 for line in lines)
    assert all(rjieba().has_word(line.split()[0]) for line in lines)


def test_a_lone_surrogate_is_refused_by_both(compiled: ModuleType) -> None:
    def work() -> str:
        with pytest.raises(UnicodeEncodeError) as raised:
            PartPrinter(Fingerprinter())._items_many([Doc(UnifiedText("文档\ud800检索"))])
        return type(raised.value).__name__

    assert both(compiled, work) == ("UnicodeEncodeError", "UnicodeEncodeError")


def test_threads_sharing_one_fingerprinter_get_the_same_fingerprints(compiled: ModuleType) -> None:
    texts = [d["text"] for d in load_corpus("zh-docs.jsonl")[:400]]
    with on_native(compiled):
        fp = Fingerprinter()
        expected = [r.fingerprint for r in fp.fingerprint_many([Doc(t) for t in texts])]
        with ThreadPoolExecutor(4) as pool:  # each thread its own slice, one lexicon filling up for all
            found = list(pool.map(lambda text: fp.fingerprint_many([Doc(text)])[0].fingerprint, texts))
    assert found == expected


# ------------------------------------------------------------------------------ sentences, keys, parts

# Sentences of every kind: terminators with closing quotes and spaces, dots that end none (3.14,
# example.com, e.g., initials), line breaks of each kind, white space around them, CJK and Latin units.
_PIECES = ["中华人民共和国的数据库是", "我们今天讨论这个问题", "。", "！", "？", "；", "……", ".", "..", "．", "!", "?", ";",
           "\n", "\n\n", "\r\n", "\r", "\u2028", " ", "\t", "\u3000", "”", "’", "」", "）", ")", "]", "}", "\"", "'",
           "the file a.out is here", "3.14", "example.com", "don't", "l’eau", "p.m", "J", "u.s", "STRASSE Straße",
           "İstanbul", "𠀀字", "\ue000", "１２", "ｈｅｌｌｏ", "かなカナ", "한국", "x" * 45 + ".", "1. ", "v1.2.3",
           *(a + ". " for a in sorted(ABBREVIATIONS)), "Ab. Cd", "a.b. c", "𝟙𝟚", "٣.١"]
_LEVEL_TEXT = st.lists(st.sampled_from(_PIECES) | st.text(max_size=2), max_size=120).map("".join).filter(
    lambda t: not any("\ud800" <= c <= "\udfff" for c in t))
_PART_PARAMS = st.builds(
    lambda window, low, high, overlap, k, w, with_parts: PartParams(
        min_units=max(1, window // low), window_units=window, max_units=window * high, overlap=overlap,
        key_units=k, key_window=w, with_parts=with_parts),
    st.integers(2, 60), st.integers(1, 4), st.integers(1, 3), st.sampled_from([0.0, 0.25, 0.5, 0.9]),
    st.integers(1, 6), st.integers(1, 8), st.booleans())


def _plain(levels: Any) -> tuple[object, ...]:
    """A Levels as plain values: every sentence, part, fingerprint and key."""
    return (levels.version, levels.units, tuple(levels.sentences), tuple(levels.parts), levels.fingerprints,
            tuple(levels.keys), levels.key_values(), levels.stored())


def _stored(stored: StoredKeys | None, levels: Any) -> tuple[object, ...] | None:
    """What a store writes of a document's levels, as plain values (and that they name those very levels)."""
    if stored is None:
        return None
    assert stored.levels is levels
    return stored.layout, stored.members, stored.units, stored.cut, stored.parts, stored.keys, stored.fingerprint, \
        stored.version


_LAYOUTS = st.sampled_from([None, (None,), (keys.EIGHT_BY_EIGHT,), (keys.TERMS,)])


def _scanned(scanned: tuple[Any, ...]) -> tuple[object, ...]:
    sentences, unit_points, word_at, found, lengths = scanned
    return (tuple(sentences), unit_points.dtype.str, unit_points.tolist(), word_at.dtype.str, word_at.tolist(), found,
            lengths.dtype.str, lengths.tolist())


@settings(max_examples=200, deadline=None)
@given(_LEVEL_TEXT, st.integers(1, 8))
def test_the_sentence_scan_is_the_pythons(compiled: ModuleType, text: str, min_units: int) -> None:
    from simdup_es import sentences as sentences_module

    a, b = both(compiled, lambda: native.scan((text, min_units)))
    assert _scanned(a) == _scanned(b) and _scanned(b) == _scanned(sentences_module.scan((text, min_units)))
    with mock.patch.object(sentences_module, "VIEW_SENTENCES", 1), on_native(compiled):  # a view of the same rows
        assert _scanned(native.scan((text, min_units))) == _scanned(b)


@settings(max_examples=200, deadline=None)
@given(st.one_of(_LEVEL_TEXT, st.text(alphabet=st.sampled_from("文件 a B ß Σς İ ﬁ x2 e.g 12.5 。\n"), max_size=60)))
def test_unit_codes_from_a_scan_are_the_pythons(compiled: ModuleType, text: str) -> None:
    from simdup_es.commontext import codes_of_scan
    from simdup_es.winnow import unit_codes

    _, points, word_at, words, _ = native.scan((text, 2))
    a, b = both(compiled, lambda: codes_of_scan(points, word_at, words))
    assert a.dtype == b.dtype == np.uint64 and a.tolist() == b.tolist() == unit_codes(text).tolist()


def test_unit_codes_refuse_words_that_are_not_the_scans(compiled: ModuleType) -> None:
    points, word_at = np.array([97, 98], dtype=np.uint32), np.array([0, 1], dtype=np.int64)
    assert np.frombuffer(compiled.unit_codes(points, word_at, ["a", "bc"]), np.uint64)[0] == ord("a")
    with pytest.raises(ValueError, match="a word for each of word_at"):
        compiled.unit_codes(points, word_at, ["a"])
    with pytest.raises(ValueError, match="a word for each of word_at"):
        compiled.unit_codes(points, np.array([0, 2], dtype=np.int64), ["a", "b"])


def test_the_sentence_scan_leaves_lone_surrogates_and_bad_arguments_to_the_python_path(compiled: ModuleType) -> None:
    text = "甲乙丙丁。\ud800戊己庚辛。"
    a, b = both(compiled, lambda: native.scan((text, 2)))
    assert _scanned(a) == _scanned(b) and len(a[0]) == 2
    with on_native(compiled), pytest.raises(ConfigError, match="min_units must be a positive integer"):
        native.scan(("文字", 0))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_LEVEL_TEXT, st.sampled_from([None, "", "标题 Title", "数据库"])), min_size=1, max_size=3),
       _PART_PARAMS, st.booleans(), _LAYOUTS, st.sampled_from([1, 2, 3, MAX_STORED_PARTS]))
def test_levels_and_what_the_stores_write_are_the_pythons(
        compiled: ModuleType, batch: list[tuple[str, str | None]], params: PartParams, declared: bool,
        encode: tuple[str | None] | None, max_parts: int) -> None:
    # Unified text, or any text declared unified (case to fold, full-width forms, \r): the same either way.
    # The stored keys in each layout (or none), with as many parts kept as a store keeps or a few (evenly spread).
    docs = [Doc(UnifiedText(text) if declared else text, title) for text, title in batch]

    def work() -> tuple[list[object], list[object]]:
        printer = PartPrinter(Fingerprinter(), params)
        with mock.patch("simdup_es.parts.MAX_STORED_PARTS", max_parts), \
                mock.patch("simdup_es.store.base.MAX_STORED_PARTS", max_parts):
            items = [(r.fingerprint, repr(r.error), None if lv is None else _plain(lv), text, _stored(stored, lv))
                     for r, lv, text, stored in printer._items_many(docs, encode=encode)]
        return items, [_plain(lv) for lv in printer.levels_many([d.text for d in docs])]

    found, expected = both(compiled, work)
    assert found == expected
    if encode is not None:  # what the stores write of each document, and in the layout asked for
        items = found[0]
        assert all((item[4] is None) == (item[2] is None) for item in items)  # type: ignore[index]
        for _, _, plain, _, stored in items:  # type: ignore[misc]
            if stored is not None:
                layout, members, units, cut, parts, key_values = stored[:6]
                assert layout == encode[0] and (members is None) == (layout is None) and units == plain[1]
                kept = len(parts) // 8
                assert kept == min(max_parts, len(plain[7][0])) and cut == len(plain[7][0]) - kept
                assert memoryview(key_values).cast("Q").tolist() == plain[7][1]


def _long_text(seed: int) -> str:
    """About 150 kB of words, Latin compounds, lone characters and line breaks (\\r\\n among them), with a run of
    Han characters longer than the pieces the compiled core segments a long text in (64 KiB)."""
    import random

    rng = random.Random(seed)
    pool = [*_WORDS, "\r\n", "\r", "\n", "。", " ", "文字" * 3, "a.b-c"]
    words = [rng.choice(pool) for _ in range(30_000)]
    run = "".join(rng.choice("中华人民共和国我们今天讨论这个问题北京大学") for _ in range(25_000))
    words.insert(rng.randrange(len(words)), run)
    return "".join(words)


@pytest.mark.parametrize("seed", [1, 2])
def test_texts_longer_than_a_segmented_piece_are_the_pythons(compiled: ModuleType, seed: int) -> None:
    # The compiled core segments a long text a piece at a time (held tokens stay few): the same tokens.
    text = _long_text(seed)
    docs = [Doc(text, "标题 Title"), Doc(text[1000:] + "\r\n结束。", None)]

    def work() -> tuple[list[object], list[list[tuple[int, float]]], list[object]]:
        fp = Fingerprinter()
        printer = PartPrinter(fp)
        found = [(r.fingerprint, None if lv is None else _plain(lv)) for r, lv, _, _ in printer._items_many(docs)]
        return [r.fingerprint for r in fp.fingerprint_many(docs)], _weights(fp, docs), found

    found, expected = both(compiled, work)
    assert found == expected


@pytest.fixture(scope="module")
def pipeline(compiled: ModuleType) -> Any:
    with on_native(compiled):
        return Fingerprinter().native_pipeline()


@settings(max_examples=300, deadline=None)
@given(st.lists(_LEVEL_TEXT, min_size=1, max_size=3), _PART_PARAMS, st.integers(1, 6), st.booleans())
def test_sentences_keys_and_parts_are_the_plain_functions(pipeline: Any, texts: list[str], params: PartParams,
                                                          min_units: int, declared: bool) -> None:
    # Sentences of any min_units (the levels' 4 merges away most boundaries), so every rule shows.
    texts = texts if declared else [unify(t) for t in texts]
    found = pipeline.levels(texts, [""] * len(texts), min_units=params.min_units, window_units=params.window_units,
                            max_units=params.max_units, overlap=params.overlap, key_units=params.key_units,
                            key_window=params.key_window, with_parts=params.with_parts, sentence_units=min_units,
                            with_document=False, part_max_bytes=None)
    _, columns, first, units, parts, part_first, _, keys, key_first = found
    columns, parts, keys = (memoryview(b).cast("q" if b is columns else "Q").tolist() for b in (columns, parts, keys))
    first = memoryview(first).cast("q").tolist()
    for i, text in enumerate(texts):
        sentences = split_sentences(text, min_units=min_units)
        assert columns[3 * first[i] : 3 * first[i + 1]] == [n for s in sentences for n in (s.start, s.end, s.n_units)]
        assert units[i] == sum(s.n_units for s in sentences)
        expected = split_parts(text, sentences, params) if params.with_parts else []
        assert parts[5 * part_first[i] : 5 * part_first[i + 1]] == [
            n for p in expected for n in (p.first, p.stop, p.start, p.end, p.units)]
        assert keys[2 * key_first[i] : 2 * key_first[i + 1]] == [n for k in text_keys(text, params) for n in (k.key, k.position)]


def _native_cut(pipeline: Any, texts: list[str], params: PartParams = PartParams(), min_units: int = 1
                ) -> list[tuple[list[tuple[int, int, int]], list[tuple[int, ...]]]]:
    """The compiled core's sentences and parts of each unified text."""
    _, columns, first, _, parts, part_first, *_ = pipeline.levels(
        texts, [""] * len(texts), min_units=params.min_units, window_units=params.window_units,
        max_units=params.max_units, overlap=params.overlap, key_units=params.key_units, key_window=params.key_window,
        with_parts=params.with_parts, sentence_units=min_units, with_document=False, part_max_bytes=None)
    rows, at, cut = memoryview(columns).cast("q").tolist(), memoryview(first).cast("q").tolist(), memoryview(parts).cast("Q").tolist()
    return [([tuple(rows[k : k + 3]) for k in range(3 * at[i], 3 * at[i + 1], 3)],  # type: ignore[misc]
             [tuple(cut[k : k + 5]) for k in range(5 * part_first[i], 5 * part_first[i + 1], 5)]) for i in range(len(texts))]


def _python_cut(text: str, params: PartParams = PartParams(), min_units: int = 1
                ) -> tuple[list[tuple[int, int, int]], list[tuple[int, ...]]]:
    sentences = split_sentences(text, min_units=min_units)
    parts = split_parts(text, sentences, params) if params.with_parts else []
    return [(s.start, s.end, s.n_units) for s in sentences], [(p.first, p.stop, p.start, p.end, p.units) for p in parts]


def test_abbreviations_initials_and_acronyms_end_no_sentence_in_either(pipeline: Any) -> None:
    words = [*sorted(ABBREVIATIONS), "j", "u.s", "p.m", "a.b.c", "ab", "3", "x1", "a1.b", "ß", "İ", "v1.2", "a" * 41]
    texts = [unify(form.format(w)) for w in words
             for form in ("我们说 {}. 你们好", "{}.\n下一行", "见{}.下", "({}.)", "看{}... 好", "{}. 2", "x {}.")]
    assert [cut for cut, _ in _native_cut(pipeline, texts)] == [_python_cut(t)[0] for t in texts]


@pytest.mark.parametrize("window", [3, 5, 6, 7, 10, 14, 30])
@pytest.mark.parametrize("overlap", [0.0, 0.25, 0.5, 0.9])
def test_windows_of_short_sentences_are_the_pythons(pipeline: Any, window: int, overlap: float) -> None:
    # Sentences of 1 to 3 units, so that each unit a window advances by shows (its rounding too).
    texts = ["".join("字" * (1 + k * n % 3) + "。" for k in range(n)) for n in (1, 5, 17, 40, 101)]
    texts += ["\n".join(t[: 7 * j] for j in range(1, 12)) for t in texts[-2:]]  # and paragraphs of every length
    for min_part in (1, window // 2 or 1, window):
        params = PartParams(min_units=min_part, window_units=window, max_units=window + window // 2, overlap=overlap)
        assert _native_cut(pipeline, texts, params) == [_python_cut(t, params) for t in texts]


def test_levels_go_through_the_workers_unchanged(compiled: ModuleType) -> None:
    docs = [Doc(d["text"], d.get("title")) for d in load_corpus("zh-docs.jsonl")[:300]]

    def work() -> list[object]:
        printer = PartPrinter(Fingerprinter())
        return [(r.fingerprint, None if lv is None else _plain(lv), text)
                for _, r, lv, text in printer.map_items_unified(docs, lambda d: d, workers=2)]

    native_levels, python_levels = both(compiled, work)
    assert native_levels == python_levels and len(native_levels) == 300


# ------------------------------------------------------------------------------ the corpora


def _corpus_docs() -> list[Doc]:
    """Every document of the evaluation corpora and of the shipped sample."""
    from importlib import resources

    docs = [Doc(r["text"], r.get("title")) for name in ("zh-docs.jsonl", "en-docs.jsonl", "en-licences.jsonl")
            for r in load_corpus(name)]
    docs += [Doc(r[side], r.get("name") if side == "zh_cn" else None) for r in load_corpus("manpages-pairs.jsonl")
             for side in ("zh_cn", "zh_tw")]
    sample = resources.files("simdup_es.data").joinpath("sample.jsonl").read_text(encoding="utf-8")
    return docs + [Doc(r["text"], r.get("title")) for r in map(json.loads, sample.splitlines())]


def test_every_corpus_document_gets_the_same_fingerprint_levels_and_stored_keys(compiled: ModuleType) -> None:
    docs = _corpus_docs()
    assert len(docs) > 10_000

    def work() -> tuple[list[object], list[object], list[object], list[object]]:
        printer = PartPrinter(Fingerprinter())
        batches = [docs[i : i + 64] for i in range(0, len(docs), 64)]
        # With what the stores write of them, as simdup index makes it: the members of the default layout.
        items = [(r.fingerprint, r.reason, None if lv is None else _plain(lv), text, _stored(stored, lv))
                 for batch in batches for r, lv, text, stored in printer._items_many(batch, encode=(keys.EIGHT_BY_EIGHT,))]
        # The document fingerprint alone, the levels alone (parts segmented again where the index slices), the
        # stored keys of the terms layout.
        every = docs[::4]
        fps = [r.fingerprint for i in range(0, len(every), 64) for r in printer.fingerprinter.fingerprint_many(every[i : i + 64])]
        levels = [_plain(lv) for i in range(0, len(every), 64) for lv in printer.levels_many([d.text for d in every[i : i + 64]])]
        terms = [_stored(stored, lv) for i in range(0, len(every), 64)
                 for _, lv, _, stored in printer._items_many(every[i : i + 64], encode=(keys.TERMS,))]
        return items, fps, levels, terms

    (items, fps, levels, terms), (ref_items, ref_fps, ref_levels, ref_terms) = both(compiled, work)
    assert sum(a != b for a, b in zip(items, ref_items)) == 0
    assert fps == ref_fps and levels == ref_levels and terms == ref_terms
    assert sum(lv is not None and len(lv[3]) > 0 for _, _, lv, _, _ in items) > 5_000  # parts were cut and compared
    assert sum(stored is not None for _, _, _, _, stored in items) > 9_000  # and their keys encoded


def test_jieba_cuts_every_corpus_document_as_rjieba(compiled: ModuleType) -> None:
    texts = unify_many([d.text for d in _corpus_docs()])
    ours = compiled.Jieba()
    assert all(ours.cut(t) == rjieba().cut(t, True) for t in texts)
