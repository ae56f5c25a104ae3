"""The corpus builder's parsers (benchmarks/fetch_corpus.py) on small inline samples.

The builder reads roff man pages and HTML help pages out of Debian packages;
these tests pin what it makes of each construct, without any download.
"""

from __future__ import annotations

import random

from benchmarks import fetch_corpus as fc

MAN_PAGE = r""".TH LS 1 "2020" "GNU"
.SH NAME
ls \- 列出目录内容
.SH "DESCRIPTION 描述"
列出 \fBFILE\fR 的信息。
默认为当前目录。
.PP
第二段：\(lq引号\(rq 与 \e 反斜杠。
.SH "SEE ALSO"
.BR dir (1)
"""

HELP_PAGE = """<html><head><title>t</title><script>var x = 1;</script></head><body><nav>菜单</nav>
<h1>标题一</h1><p>第一段<b>正文</b>。</p><div class="toc">目录</div><span hidden="true">苹果电脑的说法</span>
<h2>小节</h2><ul><li>项一</li><li>项二</li></ul><p>末段</p>
<footer><p>本页面由翻译计划提供。</p><div id="DEBUG"><p>This page is: x.xhp</p></div></footer></body></html>"""


def test_roff_sections_join_lines_drop_fonts_and_map_glyphs() -> None:
    page = fc.roff_to_sections(MAN_PAGE)
    assert page.name == "LS"
    assert [(s.title, s.paras) for s in page.sections] == [
        ("NAME", ["ls - 列出目录内容"]),
        ("DESCRIPTION 描述", ["列出 FILE 的信息。默认为当前目录。", "第二段：“引号” 与 \\ 反斜杠。"]),
        ("SEE ALSO", ["dir(1)"]),
    ]
    assert [s.title for s in page.section_texts(lambda t: t != "NAME")] == ["DESCRIPTION 描述", "SEE ALSO"]
    assert page.section_texts() == page.sections  # every section with text, by default


def test_roff_escapes_and_arguments() -> None:
    assert fc.unescape_roff(r"x\fBbold\fR \(em y \" comment", {}) == "xbold — y "
    assert fc.unescape_roff(r"\*(Tm and \*[name]", {"Tm": "™", "name": "N"}) == "™ and N"
    assert fc.unescape_roff("plain", {}) == "plain"
    assert fc.split_args(r'a "b c" "" d\ e "say ""hi"""') == ["a", "b c", "", r"d\ e", 'say "hi"']


def test_html_keeps_what_a_reader_sees_navigation_and_footer_included() -> None:
    blocks = fc.html_blocks(HELP_PAGE)
    # the head, scripts, what the page hides and the help pages' debug block are not shown
    assert blocks == [(0, "菜单"), (1, "标题一"), (0, "第一段正文。"), (0, "目录"), (2, "小节"), (0, "项一"), (0, "项二"),
                      (0, "末段"), (0, "本页面由翻译计划提供。")]
    sections = fc.blocks_to_sections(blocks)
    assert [(s.title, s.paras) for s in sections] == [
        ("", ["菜单"]), ("标题一", ["第一段正文。", "目录"]), ("小节", ["项一", "项二", "末段", "本页面由翻译计划提供。"])]
    assert [s.title for s in fc.blocks_to_sections(blocks, max_level=1)] == ["", "标题一"]


def test_shingle_filter_drops_near_copies_and_empty_texts_and_keeps_the_first() -> None:
    base = "这是一段用于检验近似重复过滤器的中文文本，内容足够长，可以产生许多字符片段。" * 3
    other = "完全不同的另一篇文章讲述了天气、河流与山川的故事，没有任何相同的句子。" * 3
    docs = [{"id": "a", "text": base}, {"id": "b", "text": base + "稍作修改。"}, {"id": "c", "text": other},
            {"id": "d", "text": "！？"}]
    kept, dropped = fc.drop_near_duplicates(docs)
    assert [d["id"] for d in kept] == ["a", "c"] and dropped == 2
    # Order decides which copy stays; nothing similar, nothing dropped.
    assert [d["id"] for d in fc.drop_near_duplicates([docs[1], docs[0]])[0]] == ["b"]
    assert fc.drop_near_duplicates([docs[0], docs[2]]) == ([docs[0], docs[2]], 0)


def test_shingle_filter_keeps_pages_that_share_only_common_text() -> None:
    footer = "本页面中文版由中文手册页计划提供，中文手册页计划的网址在这里。"
    rng = random.Random(1)
    own = [''.join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(40)) for _ in range(12)]  # each page's own text
    pages = [{"id": str(i), "text": own[i] + "。" + footer * 3} for i in range(12)]
    # the footer is most of each page, but held by more than `common` pages: no page is a copy of another
    assert fc.drop_near_duplicates(pages, common=10) == (pages, 0)
    # counted as it is when fewer pages hold it
    kept, dropped = fc.drop_near_duplicates(pages, common=20)
    assert dropped > 0 and kept[0] is pages[0]
    # a page of common text alone is dropped
    only = [{"id": str(i), "text": footer * 3} for i in range(2)]
    assert fc.drop_near_duplicates(pages + only, common=10) == (pages, 2)


def test_zh_pieces_keep_a_chinese_pages_credits_with_it() -> None:
    body = fc.Section("描述", ["这是一段足够长的中文说明文字，讲述命令的用途与选项。" * 20])
    credits = fc.Section("COPYRIGHT", ["Copyright (c) 2022 Free Software Foundation, Inc. License GPLv3+: GNU GPL "
                                       "version 3 or later <https://gnu.org/licenses/gpl.html>. " * 4])
    pieces = fc._zh_pieces([body, credits])
    assert [t for _, t, _ in pieces] == ["描述", "COPYRIGHT"]
    assert fc.cjk_ratio(pieces[1][2]) < fc.MIN_CJK_RATIO  # kept with its page all the same
    assert fc._zh_pieces([credits]) == []  # a page that is not Chinese is not taken


def test_cjk_ratio_counts_han_characters_among_non_space() -> None:
    assert fc.cjk_count("中文 abc") == 2
    assert fc.cjk_ratio("中文 ab") == 0.5
    assert fc.cjk_ratio("") == 0.0
