"""unify_many's shortcuts: the steps it skips, and the batch lookups that decide it, against their references.

The texts mix what each shortcut has to get right: every character str.split()
takes for white space (runs of it, at either end of a line or text, next to
control characters that go and leave two spaces side by side, next to characters
that NFKC turns into spaces), every control character unify removes, lone
surrogates, CRLF/CR mixes, CJK in both scripts, full-width forms, characters whose
case folding is not their lower case (ß, İ, ς) and characters NFKC takes the long
way for, within one line or across several.
"""

from __future__ import annotations

import sys
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdup_es.text as text_module
from simdup_es.reference import unify_reference
from simdup_es.text import (_CJK, CONTROL, HAS_CJK, HAS_CONTROL, _LINE_BREAKS, _MARKS, _SPACES, _flag_table, char_flags,
                            lookup, _needs_spacing, _nfkc, load_shortcuts, space_table, UnifiedText, unify, unify_many)

ALL = "".join(map(chr, range(sys.maxunicode + 1)))
SPACES = [c for c in ALL if c.isspace()]
CONTROLS = [m.group() for m in CONTROL.finditer(ALL)]

# A group at a time, so that the two thousand control characters (surrogates) do not crowd out the rest.
_PIECES = st.one_of(
    st.sampled_from(SPACES),
    st.sampled_from(CONTROLS),
    st.sampled_from(["\r\n", "\r\n\r\n", "\r\r\n", " \r\n ", "\n\n\n", "  ", " ", "\n"]),
    st.sampled_from(["软件", "軟體", "苧麻", "使用者", "預設", "U盘", "B超", "乾隆", "後來", "\uf900", "\U0002f800", "〇", "。"]),
    st.sampled_from(["ß", "ẞ", "İ", "ς", "Σ", "ﬁ", "Ǆ", "ＡＢＣ", "ａｂｃ", "１２３", "，", "：", "（）", "．", "－", "／", "…", "™", "①"]),
    st.sampled_from(["Ⅻ", "ｶﾞ", "¨", "\u00af", "\u2002", "e\u0301", "\u0301", "\u0345", "가", "\u1100\u1161", "\u1161", "\u11a8"]),
    st.sampled_from(["Abc", "def", ".", "a-b", "2.5%", "\U0001f600"]),
)
# Pieces, and arbitrary text between them.
_TEXTS = st.lists(_PIECES | st.text(max_size=3), max_size=40).map("".join)


def spacing(text: str) -> str:
    """What unify_reference's white-space steps make of a text."""
    return _LINE_BREAKS.sub("\n", _SPACES.sub(" ", text)).strip()


@given(st.lists(_TEXTS, max_size=8))
@settings(max_examples=300, deadline=None)
def test_unify_many_is_the_reference_of_each(texts: list[str]) -> None:
    expected = [unify_reference(t) for t in texts]
    assert unify_many(texts) == expected
    assert [unify(t) for t in texts] == expected


@given(st.lists(st.lists(st.sampled_from(SPACES + ["a", "軟", "\x00", "\u200b", "\r\n", "¨"]), max_size=12).map("".join), max_size=8))
@settings(max_examples=300, deadline=None)
def test_white_space_and_control_characters_alone(texts: list[str]) -> None:
    # Mostly white space: the runs, ends and empty lines the shortcuts must see.
    assert unify_many(texts) == [unify_reference(t) for t in texts]


@given(st.lists(_TEXTS, max_size=8))
@settings(max_examples=300, deadline=None)
def test_needs_spacing_is_whether_the_white_space_steps_change_a_text(texts: list[str]) -> None:
    assert _needs_spacing(texts).tolist() == [spacing(t) != t for t in texts]


@given(st.lists(_TEXTS, max_size=8))
@settings(max_examples=300, deadline=None)
def test_flags_are_those_of_each_text(texts: list[str]) -> None:
    shortcuts = load_shortcuts()
    assert shortcuts is not None
    flags = char_flags(texts, shortcuts).tolist()
    assert [bool(f & HAS_CJK) for f in flags] == [_CJK.search(t) is not None for t in texts]
    assert [bool(f & HAS_CONTROL) for f in flags] == [CONTROL.search(t) is not None for t in texts]
    assert [min(f & _MARKS, 2) for f in flags] == [shortcuts.mark(t) for t in texts]


def test_the_tables_hold_every_character_as_the_references_see_it() -> None:
    flags = lookup(_flag_table(load_shortcuts()), ALL)
    assert len(flags) == sys.maxunicode + 1
    assert np.flatnonzero(flags & HAS_CONTROL).tolist() == [ord(c) for c in CONTROLS]
    assert np.flatnonzero(flags & HAS_CJK).tolist() == [m.start() for m in _CJK.finditer(ALL)]
    space = lookup(space_table(), ALL)
    assert np.flatnonzero(space).tolist() == [ord(c) for c in SPACES] and len(SPACES) > 20
    assert np.flatnonzero(space == 1).tolist() == [ord("\n"), ord(" ")]


def test_nfkc_line_by_line_is_nfkc() -> None:
    # _nfkc normalises the lines of a text apart when it is not normalised:
    # a line break composes with no character on either side.
    chars = [c for c in ALL if not 0xD800 <= ord(c) <= 0xDFFF]
    assert unicodedata.normalize("NFKC", "\n".join(chars)) == "\n".join(unicodedata.normalize("NFKC", c) for c in chars)
    text = "ＡＢ\u0301\nｶﾞ，e\n\u0301Ⅻ"
    assert _nfkc(text) == unicodedata.normalize("NFKC", text) == "AB\u0301\nガ,e\n\u0301XII"


@given(_TEXTS)
@settings(max_examples=300, deadline=None)
def test_nfkc_is_nfkc(text: str) -> None:
    assert _nfkc(text) == unicodedata.normalize("NFKC", text)


def test_empty_texts_and_batches() -> None:
    assert unify_many([]) == [] and _needs_spacing([]).tolist() == [] and char_flags([], None).tolist() == []
    texts = ["", " 軟體 ", "", "\n", "abc", ""]
    assert unify_many(texts) == [unify_reference(t) for t in texts] == ["", "软件", "", "", "abc", ""]
    assert _needs_spacing(texts).tolist() == [False, True, False, True, False, False]


def test_the_flags_follow_the_shortcuts_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    # A table built while there were no shortcuts (no marks) must not serve once there are.
    # 苧 is the one character whose Simplified form the two passes after t2s do not make.
    texts = ["使用者可以用預設的檔名執行指令碼", "苧麻布", "軟體\uf900", "abc"]
    expected = [unify_reference(t) for t in texts]
    _flag_table.cache_clear()
    monkeypatch.setattr(text_module, "load_shortcuts", lambda: None)
    assert unify_many(texts) == expected
    monkeypatch.undo()
    assert unify_many(texts) == expected and unify_many(texts)[0] == "用户可以用预设的文件名运行脚本"


def test_unified_text_is_not_unified_again() -> None:
    # The round trip of OpenCC's tables is not idempotent: unifying "并执行文件" twice adds a character.
    import pickle

    raw = "并执行文件"
    once = unify(raw)
    assert type(once) is UnifiedText and unify_reference(once) != once
    assert unify(once) is once and unify_many([once, raw]) == [once, once] and unify_many([once])[0] is once
    # A plain string is unified as ever, even one that a unification made.
    assert unify(str(once)) == unify_reference(once) != once
    back = pickle.loads(pickle.dumps(once))
    assert type(back) is UnifiedText and back == once and unify(back) is back


def test_a_unified_text_fingerprints_as_its_raw_text() -> None:
    from simdup_es import default_fingerprinter

    fp = default_fingerprinter()
    raw, title = "读取并执行文件。再读取并执行另一个档案，输出档案。", "執行檔案"
    assert fp.fingerprint(unify(raw), unify(title)) == fp.fingerprint(raw, title)
    assert fp.fingerprint(unify(raw)) != fp.fingerprint(str(unify(raw)))
