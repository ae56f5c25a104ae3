"""The corpus builder's parsers (benchmarks/fetch_corpus.py) on small inline samples.

The builder reads roff man pages and HTML help pages out of Debian packages;
these tests pin what it makes of each construct, without any download.
"""

from __future__ import annotations

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
<h1>标题一</h1><p>第一段<b>正文</b>。</p><div class="toc">目录</div>
<h2>小节</h2><ul><li>项一</li><li>项二</li></ul><p>末段</p></body></html>"""


def test_roff_sections_join_lines_drop_fonts_and_map_glyphs() -> None:
    page = fc.roff_to_sections(MAN_PAGE)
    assert page.name == "LS"
    assert [(s.title, s.paras) for s in page.sections] == [
        ("NAME", ["ls - 列出目录内容"]),
        ("DESCRIPTION 描述", ["列出 FILE 的信息。默认为当前目录。", "第二段：“引号” 与 \\ 反斜杠。"]),
        ("SEE ALSO", ["dir(1)"]),
    ]
    assert [s.title for s in page.section_texts(lambda t: t != "NAME")] == ["DESCRIPTION 描述", "SEE ALSO"]


def test_roff_escapes_and_arguments() -> None:
    assert fc.unescape_roff(r"x\fBbold\fR \(em y \" comment", {}) == "xbold — y "
    assert fc.unescape_roff(r"\*(Tm and \*[name]", {"Tm": "™", "name": "N"}) == "™ and N"
    assert fc.unescape_roff("plain", {}) == "plain"
    assert fc.split_args(r'a "b c" "" d\ e "say ""hi"""') == ["a", "b c", "", r"d\ e", 'say "hi"']


def test_html_keeps_headings_and_text_blocks_and_drops_navigation() -> None:
    blocks = fc.html_blocks(HELP_PAGE)
    assert blocks == [(1, "标题一"), (0, "第一段正文。"), (2, "小节"), (0, "项一"), (0, "项二"), (0, "末段")]
    sections = fc.blocks_to_sections(blocks)
    assert [(s.title, s.paras) for s in sections] == [("标题一", ["第一段正文。"]), ("小节", ["项一", "项二", "末段"])]
    assert [s.title for s in fc.blocks_to_sections(blocks, max_level=1)] == ["标题一"]


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


def test_cjk_ratio_counts_han_characters_among_non_space() -> None:
    assert fc.cjk_count("中文 abc") == 2
    assert fc.cjk_ratio("中文 ab") == 0.5
    assert fc.cjk_ratio("") == 0.0
