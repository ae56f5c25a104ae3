"""unify_mapped: the unified text, and where each of its characters came from in the text as given."""

from __future__ import annotations

import unicodedata

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.offsets import _stepwise, unify_mapped
from simdup_es.text import unify, unify_reference
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
