"""Unified text and document extraction."""

from __future__ import annotations

import io
import random
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.errors import EmptyDocumentError, InputError
from simdup_es.reference import unify_reference
from simdup_es.text import _CJK, CONTROL, NFKC_COMMON, converter, decode, extract, kind_of, unify, unify_many
from tests._data import fixture_text, load_corpus


def test_unify_normalises_width_case_script_and_space() -> None:
    assert unify("  ＡＢＣ　Def\t軟體測試\r\n\r\n\n 第二行 ") == "abc def 软件测试\n第二行"


def test_unify_traditional_to_simplified() -> None:
    assert unify("資訊檢索與重複文檔偵測") == unify("资讯检索与重复文档侦测")


def test_taiwan_and_mainland_vocabulary_meet() -> None:
    # The same sentence as translated in Taiwan and on the mainland.
    assert unify("使用者可以用預設的檔名執行指令碼") == unify("用户可以用默认的文件名执行脚本")


def test_unify_strips_control_and_zero_width() -> None:
    assert unify("a\x00b\u200bc\x07d\ufeff") == "abcd"


# Pieces of the text unify sees: Simplified and Traditional words (some with
# regional vocabulary), Latin letters of both cases, full-width forms, every kind of
# white space and line break, control and format characters, combining marks.
_PIECES = st.sampled_from(
    ["软件", "軟體", "使用者", "預設", "檔名", "執行", "乾隆", "U盘", "B超", "程序", "后来", "後來", "〇"]
    + ["Abc", "ÄÖÜß", "ﬁ", "Ⅻ", "e\u0301", "\u0301", "가", "ｶ", "²", "…", "①"]
    + [c for c, _ in NFKC_COMMON] + ["，。", "ＡＢＣ", "１２３", "［", "］"]
    + [" ", "\t", "\n", "\r", "\r\n", "\u3000", "\u00a0", "\u1680", "\u2028", "\x0b", "\x0c", "\x1c", "\x85"]
    + ["\x00", "\x07", "\u200b", "\ufeff", "\ud800"]
)


@given(st.lists(st.one_of(_PIECES, st.text(max_size=4)), max_size=30).map("".join))
@settings(max_examples=400, deadline=None)
def test_unify_is_the_reference_unify(text: str) -> None:
    assert unify(text) == unify_reference(text)


@given(st.lists(st.lists(_PIECES, max_size=8).map("".join), max_size=6))
@settings(max_examples=200, deadline=None)
def test_unify_many_is_unify_of_each(texts: list[str]) -> None:
    assert unify_many(texts) == [unify_reference(t) for t in texts]


def test_unify_is_the_reference_unify_on_the_corpus() -> None:
    texts = [fixture_text(n) for n in ("zh_article.txt", "zh_other.txt", "zh_article_tw.txt", "en_article.txt")]
    texts += [d["text"] for d in load_corpus("zh-docs.jsonl")[::8]]
    assert len(texts) > 1000
    expected = [unify_reference(t) for t in texts]
    assert [unify(t) for t in texts] == expected
    assert unify_many(texts) == expected


def test_script_conversion_leaves_text_without_cjk_alone() -> None:
    # unify skips OpenCC for text without a _CJK character: no single character
    # outside those blocks (nor any run of them here) is a key of the three tables.
    # Control characters never reach OpenCC (and NUL would end its input).
    others = CONTROL.sub("", "".join(chr(c) for c in range(sys.maxunicode + 1) if _CJK.match(chr(c)) is None))
    assert len(others) > 900_000
    for config in ("t2s", "s2twp", "tw2sp"):
        assert converter(config).convert(others) == others, config
    assert converter("s2twp").convert("U盘") != "U盘"  # the check can fail


def test_html_markup_scripts_and_entities_go() -> None:
    html = "<html><head><title>t</title><style>p{}</style></head><body><p>你好&amp;世界</p><script>x()</script><p>第二段</p></body></html>"
    assert unify(extract(html.encode(), "html")) == "你好&世界\n第二段"


def test_gb18030_text_is_decoded() -> None:
    assert decode("中文文本".encode("gb18030")) == "中文文本"


def test_binary_and_invalid_bytes_are_refused_with_the_source_named() -> None:
    with pytest.raises(InputError, match="x.bin: looks binary"):
        decode(b"\x89PNG\x00\x00", source="x.bin")
    noise = bytes(random.Random(3).choices(range(0x80, 0x100), k=4000))
    with pytest.raises(InputError, match="y.txt: is not UTF-8, and no encoding reads it as text"):
        decode(noise, source="y.txt")


def test_utf16_text_is_read_with_a_bom_or_without_one() -> None:
    """UTF-16 was called binary (its NUL bytes); then read with a byte-order mark only; now by its byte order."""
    text = "第一篇文档的正文内容 with English words\n第二行"
    for codec in ("utf-16", "utf-16-be", "utf-32", "utf-16-le"):
        data = text.encode(codec)
        if codec == "utf-16-be":
            data = b"\xfe\xff" + data
        assert decode(data, source="w.txt") == text
    assert decode("plain English".encode("utf-16-be"), source="w.txt") == "plain English"
    with pytest.raises(InputError, match="looks binary"):
        decode(bytes(range(256)), source="w.bin")


def test_docx_paragraphs_and_tables() -> None:
    from docx import Document

    doc = Document()
    doc.add_paragraph("第一段文字。")
    table = doc.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = "甲"
    table.rows[0].cells[1].text = "乙"
    buf = io.BytesIO()
    doc.save(buf)
    assert extract(buf.getvalue(), "docx").split("\n") == ["第一段文字。", "甲 乙"]


def test_pdf_without_text_layer_is_an_empty_document() -> None:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    buf = io.BytesIO()
    writer.write(buf)
    with pytest.raises(EmptyDocumentError, match="scan.pdf: PDF has no text layer"):
        extract(buf.getvalue(), "pdf", source="scan.pdf")



def _text_pdf(*pages: list[str]) -> bytes:
    """A PDF showing each page's lines in Helvetica, one under the other, as a PDF's layout breaks them."""
    from pypdf import PdfWriter
    from pypdf.generic import DictionaryObject, NameObject, StreamObject

    writer = PdfWriter()
    font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                             NameObject("/BaseFont"): NameObject("/Helvetica")})
    fonts = DictionaryObject({NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})})
    for lines in pages:
        page = writer.add_blank_page(width=612, height=792)
        page[NameObject("/Resources")] = fonts
        content = StreamObject()
        content.set_data("\n".join(["BT /F1 11 Tf 72 720 Td 14 TL", *(f"({line}) Tj T*" for line in lines), "ET"]).encode())
        page[NameObject("/Contents")] = writer._add_object(content)
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def test_pdf_lines_broken_inside_a_sentence_are_joined() -> None:
    """Joined across a page break too; a line that ends a sentence, or is short (a heading), still ends there."""
    first = ["The quick brown fox jumps over the lazy dog and keeps", "running through the field until the sun sets.",
             "Another sentence starts here and goes on for a while", "before it ends on this short line.", "Heading",
             "A sentence that runs over the end of the page and so"]
    second = ["goes on at the top of the next one, where it ends.", "A last line."]
    assert extract(_text_pdf(first, second), "pdf").split("\n") == [
        f"{first[0]} {first[1]}", f"{first[2]} {first[3]}", "Heading", f"{first[5]} {second[0]}", "A last line."]

def test_broken_pdf_and_docx_are_input_errors() -> None:
    with pytest.raises(InputError, match="cannot read PDF"):
        extract(b"%PDF-1.4 garbage", "pdf", source="a.pdf")
    with pytest.raises(InputError, match="cannot read DOCX"):
        extract(b"not a zip", "docx", source="a.docx")


@pytest.mark.parametrize("name,kind", [("a.TXT", "text"), ("b.md", "markdown"), ("c.htm", "html"), ("d.pdf", "pdf"), ("e.docx", "docx"), ("f.exe", None), ("noext", None)])
def test_kind_of(name: str, kind: str | None) -> None:
    assert kind_of(name) == kind
