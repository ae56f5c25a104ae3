"""Markdown read through its parser, plain text's headings and quoted lines, and a PDF's lines joined as they read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.extract import join_lines
from simdup_es.markup import _inner_line_break, Layout, markdown_text, paragraphs, plain_layout, sections
from simdup_es.sources import Fields, Record, read_file

MARKDOWN = """---
title: 一篇文章
author: 张三
date: 2024-05-01
---
# 标题 **粗体**

第一段 *强调* 和 [链接](http://x.com) 与 `code` &amp; \\* 转义
第二行<br>

> 引用的一段
> 第二行

- 项目一
- 项目二

| 甲 | 乙 |
|---|---|
| 丙 | 丁 |

## 第二节 ##

```
代码块
```
"""


def faithful(text: str, layout: Layout) -> tuple[int, int]:
    """Checks every piece of the text against the file as written; returns (characters as written, standing for
    markup): a piece said to be the file's own characters is."""
    assert layout.written is not None
    own = other = at = 0
    for s, e, ws, we, same in layout.pieces:
        assert s == at and ws <= we  # the pieces cover the text in order
        at = e
        if same:
            assert text[s:e] == layout.written[ws:we]
            own += e - s
        else:
            other += e - s
    assert at == len(text)
    return own, other


def test_markdown_markup_is_out_of_the_text_and_every_character_maps_into_the_file() -> None:
    text, layout, fields = markdown_text(MARKDOWN)
    assert text == ("标题 粗体\n\n第一段 强调 和 链接 与 code & * 转义\n第二行\n\n引用的一段\n第二行\n\n项目一\n项目二\n\n"
                    "甲 乙\n丙 丁\n\n第二节\n\n代码块")
    own, other = faithful(text, layout)
    assert other == 2  # & for &amp;, * for \*
    assert fields == {"title": "一篇文章", "author": "张三", "date": "2024-05-01"}
    assert [(text[h.start : h.end], h.level) for h in layout.headings] == [("标题 粗体", 1), ("第二节", 2)]
    assert [text[s:e] for s, e in layout.quotes] == ["引用的一段\n第二行"]
    # A span of the text is a span of the file: the emphasis inside it comes along.
    s = text.index("强调 和 链接")
    ws, we = layout.written_span(s, s + len("强调 和 链接"))
    assert MARKDOWN[ws:we] == "强调* 和 [链接"
    assert layout.written_span(text.index("&"), text.index("&") + 1) == (MARKDOWN.index("&amp;"), MARKDOWN.index("&amp;") + 5)


def test_a_markdown_file_is_read_without_markup_its_title_and_fields_kept(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(MARKDOWN.replace("\n", "\r\n").encode("utf-8"))
    [record] = list(read_file(path, Fields()))
    assert isinstance(record, Record) and "**" not in record.text and "#" not in record.text
    assert record.title == "一篇文章" and dict(record.meta) == {"author": "张三", "date": "2024-05-01"}
    assert record.layout is not None and record.layout.written == MARKDOWN.replace("\n", "\r\n")
    faithful(record.text, record.layout)
    (tmp_path / "b.md").write_text("# 只有标题\n\n正文。\n", encoding="utf-8")
    [plain] = list(read_file(tmp_path / "b.md", Fields()))
    assert isinstance(plain, Record) and plain.title == "只有标题" and plain.text == "只有标题\n\n正文。"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(list("ab 中文\n#*_>-[]()`<&;!|\\1.\r\t") + ["&amp;", "**", "> ", "\n\n", "---\n", "```"]),
                max_size=60).map("".join))
def test_any_markdown_maps_into_the_file_as_written(source: str) -> None:
    text, layout, _ = markdown_text(source)
    faithful(text, layout)
    for h in layout.headings:
        assert 0 <= h.start <= h.end <= len(text)
    for s, e in layout.quotes:
        assert 0 <= s <= e <= len(text)


def test_plain_text_headings_quotes_and_paragraphs() -> None:
    text = ("第一章 总论\n这是第一章的正文，说明了目的。\n> 引用的一行\n> 又一行\n1.2 方法\n正文继续。\n"
            "DESCRIPTION 描述\nThe text.\n3 apples in a row are not a heading\n")
    layout = plain_layout(text)
    assert [text[h.start : h.end] for h in layout.headings] == ["第一章 总论", "1.2 方法", "DESCRIPTION 描述"]
    assert [text[s:e] for s, e in layout.quotes] == ["> 引用的一行\n> 又一行"]
    # The top level only (1.2 is inside the first chapter).
    assert [(text[s:e].split("\n")[0], k) for s, e, k in sections(text, layout)] == [("第一章 总论", "heading"),
                                                                                   ("DESCRIPTION 描述", "heading")]
    flat = "第一段。\n第二段。\n"
    assert [flat[s:e] for s, e, _ in sections(flat, plain_layout(flat))] == ["第一段。", "第二段。"]
    blocks = "一段\n接着。\n\n二段。"
    assert [blocks[s:e] for s, e, _ in sections(blocks, plain_layout(blocks))] == ["一段\n接着。", "二段。"]


def _paragraphs_reference(text: str) -> list[tuple[int, int]]:
    """The paragraphs as one regular expression finds them (a frame a character: slow and large on long texts)."""
    blocks = [(m.start(), m.end()) for m in re.finditer(r"\S(?:.|\n(?![ \t]*(?:\n|\Z)))*", text)]
    if len(blocks) > 1 or "\n" not in text.strip():
        return blocks
    return [(m.start(), m.end()) for m in re.finditer(r"[^\n]*\S[^\n]*", text)]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(["\n", " ", "\t", "\r", "\u3000", "\u2028", "a", "字", "。"]), max_size=40))
def test_paragraphs_are_the_reference_ones(text: str) -> None:
    assert paragraphs(text) == _paragraphs_reference(text)


def test_pdf_lines_joined_without_a_space_between_cjk_characters() -> None:
    wrapped = ("这是一个很长的句子它在这里被换行了然后继续写新的生 \n命的意义在于不断地探索未知的世界并且坚持\n下去直到最后。\n短行\n"
               "The quick brown fox jumps over the lazy dog and it keeps\nrunning through the field until the sun sets.")
    assert join_lines(wrapped) == ("这是一个很长的句子它在这里被换行了然后继续写新的生命的意义在于不断地探索未知的世界并且坚持下去直到最后。\n短行\n"
                                   "The quick brown fox jumps over the lazy dog and it keeps running through the field until "
                                   "the sun sets.")


_CJK_SPACE = re.compile(r"(?<=[\u4e00-\u9fff]) +(?=[\u4e00-\u9fff])")


def wrap(text: str, width: int = 60) -> str:
    """``text`` hard-wrapped as a PDF's layout breaks it: each line cut after about ``width`` columns (a CJK
    character two), a Latin line at a space (the space taken by the break), never after a sentence's end."""
    out = []
    for line in text.split("\n"):
        while len(line) > width // 2:
            cut, cols = 0, 0
            while cut < len(line) and cols < width:
                cols += 2 if "\u2e80" <= line[cut] <= "\u9fff" else 1
                cut += 1
            if cut >= len(line):
                break
            space = line.rfind(" ", 0, cut)
            if not ("\u4e00" <= line[cut - 1] <= "\u9fff" and "\u4e00" <= line[cut] <= "\u9fff"):
                if space <= 0:
                    break
                cut = space
            out.append(line[:cut])
            line = line[cut + 1 :] if line[cut : cut + 1] == " " else line[cut:]
        out.append(line)
    return "\n".join(out)


@pytest.mark.parametrize("text", [
    "新的生命的意义在于不断地探索未知的世界并且坚持下去直到最后，这是一个很长的句子，它会被排版成好几行然后再被连接起来才对" * 2,
    "The quick brown fox jumps over the lazy dog and it keeps running through the field until the sun sets behind "
    "the hills, where the night begins and nobody sees it any more at all.",
])
def test_a_wrapped_text_joins_back_to_itself(text: str) -> None:
    wrapped = wrap(text)
    assert wrapped.count("\n") >= 2
    assert join_lines(wrapped) == text


@given(st.text(alphabet=" \n\ta\u3000\x85\u2028b", max_size=12))
def test_a_line_break_inside_the_ink_is_found_without_stripping(text: str) -> None:
    assert _inner_line_break(text) == ("\n" in text.strip())
