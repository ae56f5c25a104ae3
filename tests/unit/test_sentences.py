"""Sentence splitting and units (simdup_es.sentences)."""

from __future__ import annotations

import itertools
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.errors import ConfigError
from tests._data import batch_by_route
from simdup_es.reference import abbreviation_before_reference, split_sentences_reference, unwrap_lines_reference
from simdup_es.sentences import (
    Sentence,
    WordCodes,
    _abbreviation_before,
    SentenceTable,
    _chars,
    _pieces_many,
    _raw_pieces,
    split_sentences,
    split_sentences_coded,
    split_sentences_points,
    split_table,
    unit_spans,
    units,
)
from simdup_es.text import unify
from tests._data import fixture_text, load_corpus


def texts(sentences: list[Sentence]) -> list[str]:
    return [s.text for s in sentences]


def check_offsets(text: str, sentences: list[Sentence]) -> None:
    previous_end = 0
    for k, s in enumerate(sentences):
        assert s.index == k
        assert text[s.start : s.end] == s.text
        assert s.start >= previous_end
        assert s.text == s.text.strip()
        previous_end = s.end


def test_units_count_characters_for_chinese_and_words_for_latin() -> None:
    assert units("用 Python 3.12 写的, e.g. this.") == ["用", "python", "3.12", "写", "的", "e.g", "this"]
    assert units("我爱北京天安门") == list("我爱北京天安门")
    assert units("don't stop—it's 1,000 km") == ["don't", "stop", "it's", "1", "000", "km"]
    assert units("。,!?……  ") == []


def test_unit_spans_locate_units() -> None:
    text = "abc 中文 x.y"
    assert [text[s:e] for s, e in unit_spans(text)] == ["abc", "中", "文", "x.y"]


def test_chinese_terminators_and_closing_quotes() -> None:
    raw = "他说:“今天天气很好。”我们出去走走吧!你想去哪里?公园;还是商场……都可以。"
    for text in (raw, unicodedata.normalize("NFKC", raw)):  # NFKC turns …… into "......"
        got = split_sentences(text)
        ellipsis = "……" if text == raw else "......"
        assert texts(got) == [
            "他说:“今天天气很好。”",  # the closing quote stays with its sentence
            "我们出去走走吧!",
            "你想去哪里?公园;",  # "公园;" has 2 units: it joins the sentence before it
            f"还是商场{ellipsis}都可以。",  # likewise "都可以。"
        ]
        check_offsets(text, got)


def test_full_width_and_half_width_terminators_split_alike() -> None:
    full = "第一句话在这里！第二句话在这里？第三句话在这里；第四句话在这里。"
    half = unicodedata.normalize("NFKC", full)
    assert len(split_sentences(full)) == len(split_sentences(half)) == 4


def test_line_breaks_end_sentences() -> None:
    text = "第一行没有标点符号\n第二行也没有标点符号\n\n第三行在空行之后"
    assert texts(split_sentences(text)) == ["第一行没有标点符号", "第二行也没有标点符号", "第三行在空行之后"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "pi is about 3.14 and e is about 2.72. the next one is here.",
            ["pi is about 3.14 and e is about 2.72.", "the next one is here."],
        ),
        (
            "use a tool, e.g. a hammer, for this job. then stop it right now.",
            ["use a tool, e.g. a hammer, for this job.", "then stop it right now."],
        ),
        (
            "see fig. 3 for the results we got. it is very clear.",
            ["see fig. 3 for the results we got.", "it is very clear."],
        ),
        (
            "j. r. smith moved to the u.s. in 1990. he stayed there for years.",
            ["j. r. smith moved to the u.s. in 1990.", "he stayed there for years."],
        ),
        (
            "visit example.com for the full docs. or ask us by mail.",
            ["visit example.com for the full docs.", "or ask us by mail."],
        ),
        (
            "prices grew by 5. sales grew by 7. costs fell by 2.",
            ["prices grew by 5.", "sales grew by 7.", "costs fell by 2."],
        ),
        (
            "wait for it now... the answer is here. thanks a lot, friend!",
            ["wait for it now...", "the answer is here.", "thanks a lot, friend!"],
        ),
        (
            "圆周率约等于3.14159,是一个无理数。它的小数位无限不循环。",
            ["圆周率约等于3.14159,是一个无理数。", "它的小数位无限不循环。"],
        ),
    ],
)
def test_full_stops_in_latin_text(text: str, expected: list[str]) -> None:
    got = split_sentences(text)
    assert texts(got) == expected
    check_offsets(text, got)


def test_short_fragment_joins_previous_sentence() -> None:
    text = "这件事情我已经知道了。好。明天我们再讨论细节。"
    assert texts(split_sentences(text)) == ["这件事情我已经知道了。好。", "明天我们再讨论细节。"]


def test_line_initial_short_fragment_joins_next_sentence() -> None:
    text = (
        "前言部分到这里就结束了。\n第一章\n本章介绍系统的总体设计。\n"
        "1. first we collect the data here.\n2. then we clean it up."
    )
    got = split_sentences(text)
    assert texts(got) == [
        "前言部分到这里就结束了。",
        "第一章\n本章介绍系统的总体设计。",
        "1. first we collect the data here.",
        "2. then we clean it up.",
    ]
    check_offsets(text, got)


def test_min_units_controls_merging() -> None:
    text = "好的。我们走吧。现在就出发去车站。"
    assert len(split_sentences(text, min_units=1)) == 3
    # "好的。" starts the text, so it joins the sentence after it.
    assert texts(split_sentences(text, min_units=4)) == ["好的。我们走吧。", "现在就出发去车站。"]
    assert texts(split_sentences(text, min_units=7)) == ["好的。我们走吧。现在就出发去车站。"]


def test_text_of_only_short_fragments_is_one_sentence() -> None:
    assert texts(split_sentences("好。行。")) == ["好。行。"]


def test_text_without_units_has_no_sentence() -> None:
    assert split_sentences("") == []
    assert split_sentences("。。。\n!?  ") == []


def test_punctuation_only_fragment_is_merged_not_lost() -> None:
    text = "第一句话写在这里。\n……\n第二句话写在这里。"
    got = split_sentences(unicodedata.normalize("NFKC", text))
    assert len(got) == 2
    assert sum(s.n_units for s in got) == len(units(text))


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "4"])
def test_min_units_is_validated(bad: object) -> None:
    with pytest.raises(ConfigError, match="min_units"):
        split_sentences("一句话。", min_units=bad)  # type: ignore[arg-type]


# Chinese, Latin (with case folding that changes length: ß, İ), kana, an astral
# Han character, private-use and a lone surrogate, and the punctuation that splits.
_ALPHABET = st.sampled_from(list("的是了我在天地人好中文あ𠀀abcxyzAßİ0123456789 .。!?;,…\n“”\"'-\U000f0000\ud800"))


@given(st.lists(_ALPHABET, max_size=200).map("".join), st.integers(min_value=1, max_value=8))
def test_sentences_partition_the_units(text: str, min_units: int) -> None:
    got = split_sentences(text, min_units=min_units)
    check_offsets(text, got)
    # Every unit of the text is in exactly one sentence, in order; the counts
    # (found with numpy) agree with the units (found by the plain regex).
    assert [u for s in got for u in s.units] == units(text)
    for s in got:
        assert s.n_units == len(s.units) >= 1
        assert s.n_units >= min_units or len(got) == 1


@given(st.lists(_ALPHABET | st.sampled_from(["word", "Word", "e.g.", "3.14"]), max_size=200).map("".join),
       st.integers(min_value=1, max_value=8), st.booleans())
def test_sentences_coded_as_one_array_are_the_coded_strings_joined(text: str, min_units: int, shared: bool) -> None:
    # What the matrix reads: the same sentences, the same codes in one array, each sentence's count of them.
    words = WordCodes({"word": chr(0xF0005)}) if shared else None
    sentences, raw = split_sentences_coded(text, None if words is None else WordCodes(words), min_units=min_units)
    got, points, lengths = split_sentences_points(text, None if words is None else WordCodes(words), min_units=min_units)
    assert got == sentences and points.dtype == np.uint32 and lengths.dtype == np.int64
    assert points.tolist() == [ord(c) for c in "".join(raw)] and lengths.tolist() == [len(r) for r in raw]


@given(st.lists(st.lists(_ALPHABET, max_size=80).map("".join), min_size=1, max_size=3))
def test_coded_sentences_code_each_unit(texts_: list[str]) -> None:
    words = WordCodes()
    reference = WordCodes()
    for text in texts_:
        sentences, codes = split_sentences_coded(text, words)
        assert sentences == split_sentences(text)
        expected = ["".join(u if len(u) == 1 and "\u3040" <= u <= "\U0003134f" else reference[u] for u in s.units)
                    for s in sentences]
        assert codes == expected
    assert words == reference  # the same words, numbered in the same order


def test_word_codes_run_out_loudly() -> None:
    words = WordCodes((str(k), "") for k in range(0x20000))
    with pytest.raises(OverflowError):
        words["one more"]


@pytest.mark.parametrize("name", ["zh_article.txt", "zh_other.txt", "en_article.txt"])
def test_real_articles(name: str) -> None:
    text = unify(fixture_text(name))
    got = split_sentences(text)
    check_offsets(text, got)
    assert len(got) >= 5
    assert [u for s in got for u in s.units] == units(text)
    assert all(s.n_units >= 4 for s in got)


# Everything the splitter treats specially: terminators (full and half width), runs of
# dots, abbreviations and initials, closing quotes, spaces and every line break
# (\r\n, U+2028), CJK (BMP and astral), kana, Hangul, letters that fold to several
# (ß, İ), an astral letter, digits, joiners, private-use, a lone surrogate, U+001F.
_PIECES = st.sampled_from([
    *"的是了我在天中文あア한𠀀", *"abxyzAß\u0130\U0001d400079", *" \t\u3000\x0b\x85", *"\n\r\u2028\u2029",
    *".．。!！?？;；…", *"”’\"'」』》〉）)]】〕}", *"'’_-,，:", "\ue000", "\U000f0000", "\ud800", "\x1f",
    "\r\n", "...", "e.g.", "i.e. ", "fig. ", "u.s.", "j. ", "no. ", "vs.", "3.14", "v1.2.", "example.com", "don't",
])
_texts = st.lists(_PIECES, max_size=120).map("".join)


@settings(max_examples=300, deadline=None)
@given(_texts, st.integers(min_value=1, max_value=8))
def test_split_sentences_agrees_with_the_plain_reference(text: str, min_units: int) -> None:
    assert split_sentences(text, min_units=min_units) == split_sentences_reference(text, min_units)


def _each(table: SentenceTable) -> list[list[Sentence]]:
    return [table.sentences(i) for i in range(len(table.texts))]


@settings(max_examples=300, deadline=None)
@given(st.lists(_texts, max_size=5), st.integers(min_value=1, max_value=8))
def test_sentences_of_a_batch_are_those_of_each_text(batch: list[str], min_units: int) -> None:
    # Scanned at once, joined by line breaks: no unit, word or sentence crosses from one text to the next.
    assert _each(split_table(batch, min_units=min_units)) == [split_sentences(t, min_units=min_units) for t in batch]


def test_sentences_of_a_batch_on_the_corpus() -> None:
    batch = [unify(d["text"]) for name in ("zh-docs.jsonl", "en-docs.jsonl") for d in load_corpus(name)[::25]]
    batch += [unify(fixture_text(name)) for name in ("zh_article.txt", "zh_other.txt", "en_article.txt")]
    got = _each(split_table(batch))
    assert got == [split_sentences(t) for t in batch]
    assert sum(map(len, got)) > 3000


@settings(max_examples=300, deadline=None)
@given(_texts)
def test_abbreviation_check_agrees_with_the_regex_search(text: str) -> None:
    for dot in range(len(text) + 1):
        assert _abbreviation_before(text, dot) == abbreviation_before_reference(text, dot)


@pytest.mark.parametrize(
    ("text", "dot", "expected"),
    [("see e.g. x", 7, True), ("by j. smith", 4, True), ("the u.s. now", 7, True), ("ends here. x", 9, False),
     ("a long way.", 10, False), ("e.g\n.", 4, True), ("no. 5", 2, False)],
)
def test_abbreviations_before_a_full_stop(text: str, dot: int, expected: bool) -> None:
    assert text[dot] == "."
    assert _abbreviation_before(text, dot) is abbreviation_before_reference(text, dot) is expected


def _pieces_of_each(batch: list[str]) -> list[list[tuple[int, int, bool]]]:
    """:func:`_pieces_many` of a batch, back in each text's offsets."""
    chars = _chars("\n".join(batch))
    base = np.array(list(itertools.accumulate((len(t) + 1 for t in batch), initial=0)), dtype=np.int64)
    begin, end, line, owner = _pieces_many(batch, chars, base)
    out: list[list[tuple[int, int, bool]]] = [[] for _ in batch]
    for b, e, s, i in zip(begin.tolist(), end.tolist(), line.tolist(), owner.tolist(), strict=True):
        out[i].append((b - int(base[i]), e - int(base[i]), s))
    return out


# Runs of the same piece: long runs of spaces, closing quotes and terminators (the numpy scan
# steps through short runs one character at a time, long ones by another way).
_runs_texts = st.lists(st.tuples(_PIECES, st.integers(min_value=1, max_value=9)).map(lambda p: p[0] * p[1]),
                       max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(_texts | _runs_texts, min_size=1, max_size=5))
def test_pieces_of_a_batch_are_the_regex_pieces_of_each_text(batch: list[str]) -> None:
    assert _pieces_of_each(batch) == [_raw_pieces(t) for t in batch]


@pytest.mark.parametrize("spaces", [" ", " " * 4, " " * 5, "\u3000 \t" * 7])
def test_pieces_after_long_runs_of_spaces_and_quotes(spaces: str) -> None:
    text = (f"{spaces}第一句话在这里。{'”' * 9}{spaces}第二句话!!!{spaces}\n"
            f"{spaces}e.g.{spaces}第三句{spaces}\n{spaces}")
    assert _pieces_of_each([text, spaces, text]) == [_raw_pieces(text), [], _raw_pieces(text)]


def test_pieces_of_a_batch_on_the_corpus() -> None:
    batch = [unify(d["text"]) for name in ("zh-docs.jsonl", "en-docs.jsonl") for d in load_corpus(name)[::25]]
    pieces = _pieces_of_each(batch)
    assert pieces == [_raw_pieces(t) for t in batch]
    assert sum(map(len, pieces)) > 5000


def _columns(table: SentenceTable) -> list[list[list[int]]]:
    return [np.stack((table.start, table.end, table.units), axis=1)[table.rows(i)].tolist() for i in range(len(table.texts))]


@settings(max_examples=300, deadline=None)
@given(st.lists(_texts | _runs_texts, max_size=5), st.integers(min_value=1, max_value=8))
def test_numpy_and_text_by_text_sentences_agree(batch: list[str], min_units: int) -> None:
    # The batch route (_pieces_many, _merged_many) and the one for little text (_raw_pieces, _merged).
    many = split_table(batch_by_route(batch, numpy=True), min_units=min_units)
    each = split_table(batch_by_route(batch, numpy=False), min_units=min_units)
    assert _columns(many)[:-1] == _columns(each) and many.first.tolist()[:-1] == each.first.tolist()
    assert _each(many)[:-1] == [split_sentences(t, min_units=min_units) for t in batch]


# Fragments a few units long, many at the start of a line: groups opened by fragments that
# take in other fragments, each of which might have opened a group of its own.
_fragments = st.lists(st.sampled_from(["好。", "一二!", "甲乙丙", "子丑寅卯辰。", "ab cd.", "\n", "\n", "。", " "]),
                      max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(_fragments, min_size=1, max_size=5), st.integers(min_value=1, max_value=8))
def test_fragments_of_a_batch_merge_as_in_the_reference(batch: list[str], min_units: int) -> None:
    got = _each(split_table(batch_by_route(batch, numpy=True), min_units=min_units))[:-1]
    assert got == [split_sentences_reference(t, min_units) for t in batch]


@settings(max_examples=300, deadline=None)
@given(st.lists(_texts, max_size=5), st.integers(min_value=1, max_value=8), st.booleans())
def test_line_starts_and_unit_counts_of_a_batch(batch: list[str], min_units: int, numpy: bool) -> None:
    table = split_table(batch_by_route(batch, numpy), min_units=min_units)
    starts = table.line_starts().tolist()
    for k, (text, sentences) in enumerate(zip(batch, _each(table)[: len(batch)], strict=True)):
        rows = table.rows(k)
        lines = [i for i in range(1, len(sentences)) if starts[rows.start + i]]
        assert lines == [i for i in range(1, len(sentences)) if "\n" in text[sentences[i - 1].end : sentences[i].start]]
        assert not sentences or not starts[rows.start]  # the sentence before is another text's
        assert table.units[rows.start : rows.stop].tolist() == [s.n_units for s in sentences]


@settings(max_examples=200, deadline=None)
@given(st.lists(_texts | _runs_texts | st.text(alphabet="AßİΣ. 一\n"), max_size=5), st.integers(min_value=1, max_value=8),
       st.booleans())
def test_columns_of_a_batch_are_its_sentences(batch: list[str], min_units: int, numpy: bool) -> None:
    # The columns the index path reads instead of Sentence objects: the same numbers, made without them.
    routed = batch_by_route(batch, numpy)
    table = split_table(routed, min_units=min_units)
    assert len(table.first) == len(routed) + 1 and table.first[-1] == len(table.start)
    assert _columns(table) == [[[s.start, s.end, s.n_units] for s in split_sentences(t, min_units=min_units)]
                               for t in routed]


_WRAP_TEXT = st.text(alphabet=st.sampled_from(list("中文字句。,;.! ab\n")), max_size=300)


@settings(max_examples=300, deadline=None)
@given(_WRAP_TEXT)
def test_unwrap_lines_equals_its_reference_and_keeps_offsets(text: str) -> None:
    from simdup_es.sentences import unwrap_lines

    got = unwrap_lines(text)
    assert got == unwrap_lines_reference(text)
    assert len(got) == len(text) and all(a == b or (a == "\n" and b == " ") for a, b in zip(text, got))


def test_a_hard_wrapped_text_has_the_sentences_of_its_paragraphs() -> None:
    import textwrap

    from simdup_es.sentences import unwrap_lines

    para = ("所有接受文件名作为参数的命令和过程希望文件名是依赖于当前平台的三种形式之一。在每种平台上都支持这种平台上的"
            "标准形式的文件名,额外的,在所有平台上还支持一种方便的语法来构造简单的文件名。打算被移植的脚本不要假定特定形式的文件名。")
    text = "第一章 文件名\n" + "\n".join(textwrap.wrap(para, 24)) + "\n" + "\n".join(textwrap.wrap(para, 24))
    want = [s.units for s in split_sentences(para)]
    got = [s.units for s in split_sentences(unwrap_lines(text))]
    assert len(split_sentences(text)) > 2 * len(want) + 1  # each line a sentence
    assert got == [tuple("第一章文件名"), *want, *want]  # a heading (a short line) keeps its break
    lines = "第一行是一个完整的句子。\n第二行也是一个完整的句子。\n短句\n第四行是这段文字的最后一句话了。"
    assert unwrap_lines(lines) == lines  # one sentence a line: nothing to unwrap


def test_a_sentence_view_reads_as_the_tuple_of_its_sentences() -> None:
    import pickle

    from simdup_es.sentences import SentenceView

    text = "".join(f"第{i}句话在这里。Line {i} here! " for i in range(40))
    table = split_table([text])
    made = tuple(table.sentences())
    view = SentenceView(text, table.columns)
    assert len(view) == len(made) > 20
    assert view == made and made == view and tuple(view) == made and list(view) == list(made)
    assert [view[i] for i in range(len(made))] == list(made)
    assert view[-1] == made[-1] and view[-len(made)] == made[0]
    assert view[3:9] == made[3:9] and view[::3] == made[::3] and view[9:3] == () and view[5:] == made[5:]
    with pytest.raises(IndexError):
        view[len(made)]
    with pytest.raises(IndexError):
        view[-len(made) - 1]
    assert view.units().tolist() == [s.n_units for s in made]
    assert hash(view) == hash(made) and pickle.loads(pickle.dumps(view)) == made
    assert view != made[:-1] and view != list(made)  # equal to the tuple only, as a tuple is


def test_a_short_text_s_view_keeps_the_sentences_it_makes() -> None:
    import pickle

    from simdup_es.sentences import scan

    text = "".join(f"第{i}句话在这里。Line {i} here! " for i in range(6))
    want = tuple(split_sentences(text))
    view = scan((text, 4))[0]
    third = view[2]
    assert view[2] is third and view[-4] is third and view[1:3] == want[1:3] and view[1:3][1] is third
    made = list(view)
    assert made[2] is third and list(view) == made and all(a is b for a, b in zip(view, made))
    assert view == want and pickle.loads(pickle.dumps(view)) == want


def test_a_long_text_scans_to_a_view_of_the_same_sentences(monkeypatch: pytest.MonkeyPatch) -> None:
    import simdup_es.sentences as sentences_module
    from simdup_es.sentences import SentenceView, scan

    text = "".join(f"第{i}句话在这里。Line {i} here! " for i in range(60))
    few = scan((text, 4))
    monkeypatch.setattr(sentences_module, "VIEW_SENTENCES", 10)
    many = scan((text, 4))
    assert isinstance(many[0], SentenceView) and not many[0].keeps and few[0].keeps
    assert many[0] == few[0] == tuple(split_sentences(text))
    assert all((x == y).all() for x, y in zip(many[1:3], few[1:3], strict=True)) and many[3] == few[3]
    got, points, lengths = split_sentences_points(text, WordCodes())
    assert isinstance(got, SentenceView) and got == tuple(split_sentences(text))
