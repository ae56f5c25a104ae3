"""Unified text and document extraction."""

from __future__ import annotations

import io

import pytest

from simdup_es.errors import EmptyDocumentError, InputError
from simdup_es.text import decode, extract, kind_of, unify


def test_unify_normalises_width_case_script_and_space() -> None:
    assert unify("  ＡＢＣ　Def\t軟體測試\r\n\r\n\n 第二行 ") == "abc def 软件测试\n第二行"


def test_unify_traditional_to_simplified() -> None:
    assert unify("資訊檢索與重複文檔偵測") == unify("资讯检索与重复文档侦测")


def test_taiwan_and_mainland_vocabulary_meet() -> None:
    # The same sentence as translated in Taiwan and on the mainland.
    assert unify("使用者可以用預設的檔名執行指令碼") == unify("用户可以用默认的文件名执行脚本")


def test_unify_strips_control_and_zero_width() -> None:
    assert unify("a\x00b\u200bc\x07d\ufeff") == "abcd"


def test_html_markup_scripts_and_entities_go() -> None:
    html = "<html><head><title>t</title><style>p{}</style></head><body><p>你好&amp;世界</p><script>x()</script><p>第二段</p></body></html>"
    assert unify(extract(html.encode(), "html")) == "你好&世界\n第二段"


def test_gb18030_text_is_decoded() -> None:
    assert decode("中文文本".encode("gb18030")) == "中文文本"


def test_binary_and_invalid_bytes_are_refused_with_the_source_named() -> None:
    with pytest.raises(InputError, match="x.bin: looks binary"):
        decode(b"\x89PNG\x00\x00", source="x.bin")
    with pytest.raises(InputError, match="neither UTF-8 nor GB18030"):
        decode(b"\xff\xfe\xff\xfe\x80\x80", source="y.txt")


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


def test_broken_pdf_and_docx_are_input_errors() -> None:
    with pytest.raises(InputError, match="cannot read PDF"):
        extract(b"%PDF-1.4 garbage", "pdf", source="a.pdf")
    with pytest.raises(InputError, match="cannot read DOCX"):
        extract(b"not a zip", "docx", source="a.docx")


@pytest.mark.parametrize("name,kind", [("a.TXT", "text"), ("b.md", "text"), ("c.htm", "html"), ("d.pdf", "pdf"), ("e.docx", "docx"), ("f.exe", None), ("noext", None)])
def test_kind_of(name: str, kind: str | None) -> None:
    assert kind_of(name) == kind
