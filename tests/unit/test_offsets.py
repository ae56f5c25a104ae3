"""unify_mapped: the unified text, and where each of its characters came from in the text as given."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es import offsets
from simdup_es.offsets import Unified, _Chunks, _stepwise, unify_mapped
from simdup_es.reference import unify_reference
from simdup_es.text import unify
from tests.unit.test_text_unify import _TEXTS

# Text as people write it: both scripts, phrases OpenCC rewrites with another length, Markdown,
# full-width forms, ligatures and ellipses that NFKC lengthens, white space of every kind.
_WRITTEN = st.lists(st.one_of(
    _TEXTS,
    st.sampled_from(["我的U盤在線上", "數值存儲", "建立了", "運算子", "軟體", "線上", "預設值", "使用者",
                     "**粗體**", "# 標題\n", "「引號」", "……", "ﬁne", "Straße", "。", "，", "\r\n", "  ", "\t"]),
), max_size=30).map("".join)


def _check_map(text: str) -> None:
    u = unify_mapped(text)
    assert u.text == unify(text)
    n = len(text)
    assert len(u.starts) == len(u.ends) == len(u.text)
    if len(u.text):
        assert (u.starts >= 0).all() and (u.ends <= n).all() and (u.starts < u.ends).all()  # never from nothing
        assert (np.diff(u.starts) >= 0).all() and (np.diff(u.ends) >= 0).all()  # in order
    # Each line of the unified text is the unified form of the original it maps to.
    at = 0
    for line in u.text.split("\n"):
        if line:
            s, e = u.span(at, at + len(line))
            assert unify(text[s:e]) == line, (line, text[s:e])
        at += len(line) + 1
    # A Latin letter or digit comes from a character that folds to (or to a string holding) it.
    for j, ch in enumerate(u.text):
        if ch.isascii() and ch.isalnum():
            src = text[u.starts[j] : u.ends[j]]
            assert ch in unicodedata.normalize("NFKC", src).casefold(), (ch, src)


@given(_WRITTEN)
@settings(max_examples=400, deadline=None)
def test_the_map_agrees_with_the_text(text: str) -> None:
    # The steps alone give unify's text (no fallback to a coarse alignment).
    assert _stepwise(text)[0] == unify_reference(text)
    _check_map(text)


def test_phrases_that_change_length_map_to_the_words_they_came_from() -> None:
    u = unify_mapped("我的U盤在線上，  **數值存儲**  建立了 運算子。Straße ﬁne")
    assert u.text == "我的u盘在在线, **数值保存** 创建了 运操作数。strasse fine"
    assert u.shown(2, 4) == "U盤"  # u盘 from U盤 (through 隨身碟 and back)
    assert u.shown(u.text.index("运操作数"), u.text.index("运操作数") + 4) == "運算子"  # one word, one block
    assert u.shown(u.text.index("保存"), u.text.index("保存") + 2) == "存儲"
    assert u.shown(u.text.index("strasse"), u.text.index("strasse") + 7) == "Straße"
    assert u.shown(u.text.index("fine"), u.text.index("fine") + 4) == "ﬁne"
    assert u.span(0, 0) == (0, 0) and u.span(len(u.text), len(u.text)) == (len(u.original), len(u.original))


def test_white_space_and_line_breaks_map_to_their_runs() -> None:
    text = "  第一行  文字\r\n\r\n\t第二行 \n"
    u = unify_mapped(text)
    assert u.text == "第一行 文字\n第二行"
    assert u.shown(0, 3) == "第一行"
    assert u.shown(3, 4) == "  "
    assert u.shown(6, 7) == "\r\n\r\n\t"
    assert u.shown(7, 10) == "第二行"


def test_a_traditional_text_is_shown_in_traditional() -> None:
    text = "預設的使用者名稱儲存在設定檔中。"
    u = unify_mapped(text)
    assert u.text != text  # compared in Simplified
    assert u.shown(0, len(u.text)) == text


# Many lines, blank ones, white space at their ends, CR/LF and control characters: what a long text's
# chunks and the line breaks between them are made of.
_LINES = st.lists(st.one_of(_WRITTEN, st.sampled_from(["", " ", "\t", "\x01", "\u3000", "\u200b "])),
                  min_size=1, max_size=12).flatmap(
    lambda lines: st.lists(st.sampled_from(["\n", "\r\n", "\r", " \n", "\n\n", "\n \u3000\n"]),
                           min_size=len(lines), max_size=len(lines)).map(
        lambda breaks: "".join(line + brk for line, brk in zip(lines, breaks))))


@given(_LINES, st.integers(min_value=1, max_value=40), st.booleans())
@settings(max_examples=300, deadline=None)
def test_a_long_text_maps_chunk_by_chunk_as_it_does_whole(text: str, size: int, trim: bool) -> None:
    text = text.rstrip() if trim else text
    unified = unify(text)
    whole = Unified(text, unified, *_stepwise(text)[1:])
    chunks = _Chunks(text, unified, size)
    for j in range(len(unified)):
        assert chunks.at(j) == (int(whole.starts[j]), int(whole.ends[j])), j


def test_a_long_text_is_mapped_only_where_spans_fall() -> None:
    line = "預設的使用者名稱儲存在設定檔中。\n"
    text = line * 2000  # 32,000 characters
    u = unify_mapped(text)
    assert u.shown(0, len(u.text)) == text.rstrip("\n")
    far = u.text.index("\n", 20_000) + 1
    assert u.shown(far, u.text.index("\n", far)) == line.rstrip("\n")
    assert u._chunks is not None and len(u._chunks.maps) <= 3  # the first, the last and the one at 20,000


def test_lines_named_wrongly_by_the_quick_test_are_found_by_unifying_each(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "甲\n\n乙 \n丙"
    # Wrong in the count (every line blank), and right in the count but wrong in which lines.
    for wrong in (lambda line: True, lambda line: line in ("甲\n", "\n") and line != "\n" or line == "乙 \n"):
        monkeypatch.setattr(offsets, "_blank", wrong)
        chunks = _Chunks(text, unify(text), 1)
        assert [text[slice(*chunks.at(j))] for j in range(5)] == ["甲", "\n\n", "乙", " \n", "丙"]
