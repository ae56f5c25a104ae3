"""The report page in a real browser: Chromium from Debian, driven by Selenium.

No Chromium, no pass: the test fails (it does not skip) and says how to install it
(``apt-get install chromium chromium-driver``; .ci/run does). What is checked is what a
reader sees: the colours the browser computes for the copied passages, the characters
inside them, the excluded quotation left unmarked, a Traditional document in Traditional;
every figure of a mosaic against counts made apart from the report, a quotation cited with
its source, an excluded source gone; the page printed to PDF by Chromium, read back.
"""

from __future__ import annotations

import re
import shutil
import unicodedata
from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any

import pytest

from simdup_es.report import Exclusions, SimilarityReport, render_report_html
from tests._report_docs import (LONG, QUOTED, RECORDS, SOURCES, composed, expected, lines, make_store, mosaic, report_of,
                                traditional)

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--window-size=1300,1600")


def chromium_driver() -> Any:
    """A headless Chromium under Selenium; the test fails when either is missing."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not Path(path).exists() and not shutil.which(Path(path).name):
            pytest.fail(f"{path} is missing: the report page is tested in Chromium; install it with "
                        "'apt-get install chromium chromium-driver' (as .ci/run does)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    driver = chromium_driver()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    local = make_store(tmp_path_factory.mktemp("browser") / "store")
    yield local
    local.close()


# What the page shows, read in the browser: the document's text, and each passage's text,
# source and computed background colour.
_READ = """
const doc = document.getElementById('document');
return {
  text: doc.textContent,
  passages: Array.from(doc.querySelectorAll('a.passage')).map(a => ({
    text: a.textContent, source: a.dataset.source, colour: getComputedStyle(a).backgroundColor})),
  excluded: Array.from(doc.querySelectorAll('span.excluded')).map(s => ({
    text: s.textContent, colour: getComputedStyle(s).backgroundColor})),
  swatches: Array.from(document.querySelectorAll('table.sources .swatch')).map(s => getComputedStyle(s).backgroundColor),
};
"""


def _open(browser: Any, report: SimilarityReport, tmp_path: Path, name: str) -> dict[str, Any]:
    page = tmp_path / name
    page.write_text(render_report_html(report), encoding="utf-8")
    browser.get(page.as_uri())
    shown: dict[str, Any] = browser.execute_script(_READ)
    return shown


def _rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def test_two_sources_two_colours_at_the_right_characters(browser: Any, store: Any, tmp_path: Path) -> None:
    text = composed(SOURCES[:2], quote=True)
    report = report_of(store, text, exclusions=Exclusions(quotations=True))
    assert [s.id for s in report.sources] and {s.id for s in report.sources} == set(SOURCES[:2])
    shown = _open(browser, report, tmp_path, "two.html")
    assert shown["text"] == text  # the document as given, character for character
    colours = {p["colour"] for p in shown["passages"]}
    assert colours == {_rgb(s.colour) for s in report.sources} and len(colours) == 2
    assert shown["swatches"] == [_rgb(s.colour) for s in report.sources]
    for p, (start, end, k) in zip(shown["passages"], report.passages, strict=True):
        assert p["text"] == text[start:end] and int(p["source"]) == k
        assert p["colour"] == _rgb(report.sources[k].colour)
        assert p["text"] in RECORDS[report.sources[k].id]["text"]  # the source holds those very characters
    # Every copied line shows in its source's colour, nearly whole.
    for k, source in enumerate(report.sources):
        marked = "".join(p["text"] for p in shown["passages"] if int(p["source"]) == k)
        for line in lines(source.id)[1:4]:
            assert sum(ch in marked for ch in line) >= len(line) - 3


def test_an_excluded_quotation_is_not_marked(browser: Any, store: Any, tmp_path: Path) -> None:
    text = composed(SOURCES[:2], quote=True)
    quotation = text[text.index("书中写道：「") + 5 : text.index("」", text.index("书中写道：「")) + 1]
    _open(browser, report_of(store, text), tmp_path, "counted.html")
    cited = browser.execute_script("return Array.from(document.querySelectorAll('#document a.cited'))"
                                   ".map(a => a.textContent)")
    assert any(c in quotation and len(c) > 20 for c in cited)  # marked as cited when it counts
    report = report_of(store, text, exclusions=Exclusions(quotations=True))
    shown = _open(browser, report, tmp_path, "excluded.html")
    assert quotation in [e["text"] for e in shown["excluded"]]  # (with a short one of the document's own)
    assert not {e["colour"] for e in shown["excluded"]} & {_rgb(s.colour) for s in report.sources}
    assert all(p["text"] not in quotation for p in shown["passages"])
    assert QUOTED not in {s.id for s in report.sources}


def test_a_traditional_document_is_shown_in_traditional(browser: Any, store: Any, tmp_path: Path) -> None:
    text = traditional(composed(SOURCES[:2]))
    report = report_of(store, text)
    shown = _open(browser, report, tmp_path, "traditional.html")
    assert shown["text"] == text
    marked = "".join(p["text"] for p in shown["passages"])
    assert "車鄰鄰" in marked and "车邻邻" not in shown["text"]  # the Traditional characters, as given
    for p, (start, end, _) in zip(shown["passages"], report.passages, strict=True):
        assert p["text"] == text[start:end]


# ----------------------------------------------------------------------------------- the mosaic and its figures

# The figures as the page shows them: each figure's share and characters, each source's row, each section's row.
_READ_FIGURES = """
const cells = (row) => Array.from(row.querySelectorAll('td.n')).map(td => td.textContent.trim());
return {
  figures: Object.fromEntries(Array.from(document.querySelectorAll('#figures tr[id]')).map(r => [r.id, cells(r)])),
  sources: Array.from(document.querySelectorAll('#sources tr[id]')).map(r => ({id: r.dataset.source, cells: cells(r)})),
  sections: Array.from(document.querySelectorAll('#sections tr[id]')).map(r => ({
    title: r.querySelector('td').textContent, cells: cells(r)})),
  cited: Array.from(document.querySelectorAll('#document a.cited')).map(a => ({
    text: a.textContent, source: a.dataset.source, border: getComputedStyle(a).borderBottomColor,
    style: getComputedStyle(a).borderBottomStyle, label: getComputedStyle(a, '::after').content,
    background: getComputedStyle(a).backgroundColor})),
};
"""


def _pct(n: int, total: int) -> str:
    return f"{100 * n / total:.1f}%"


def test_a_mosaic_of_three_sources_shows_three_colours_and_every_figure_counted_apart(
        browser: Any, store: Any, tmp_path: Path) -> None:
    m = mosaic()
    report = report_of(store, m.text)
    shown = _open(browser, report, tmp_path, "mosaic.html")
    assert shown["text"] == m.text
    colour_of = {s.id: _rgb(s.colour) for s in report.sources}
    assert len(set(colour_of.values())) == len(colour_of)
    # Each planted line is in its source's colour, every character of it, and nothing else is coloured.
    coloured: dict[str, set[int]] = {}
    at = 0
    for p in shown["passages"]:
        start = m.text.index(p["text"], at)
        at = start + len(p["text"])
        source = report.sources[int(p["source"])].id
        assert p["colour"] == colour_of[source]
        coloured.setdefault(source, set()).update(k for k in range(start, at) if not m.text[k].isspace())
    planted = {s: {k for a, b in spans for k in range(a, b) if not m.text[k].isspace()} for s, spans in m.planted.items()}
    assert coloured == planted and len(planted) == 3
    # Every figure on the page, against counts made apart from the report.
    want = expected(m)
    read = browser.execute_script(_READ_FIGURES)
    total = want["total"]
    figures = read["figures"]
    assert figures["figure-share"] == [_pct(want["copied"], total), f"{want['copied']:,}"]
    assert figures["figure-share_without_quotations"] == [_pct(want["copied"] - want["cited"], total),
                                                          f"{want['copied'] - want['cited']:,}"]
    assert figures["figure-largest_share"] == [_pct(want["largest"], total), f"{want['largest']:,}"]
    assert figures["figure-cited"] == [_pct(want["cited"], total), f"{want['cited']:,}"]
    assert figures["figure-chars"] == [f"{total:,}"]
    rows = {r["id"]: r["cells"] for r in read["sources"]}
    assert {i: c[:2] for i, c in rows.items()} == {i: [_pct(n, total), f"{n:,}"] for i, n in want["by_source"].items()}
    assert [(r["title"], r["cells"][1]) for r in read["sections"]] == [
        (t, f"{c:,} of {n:,}") for t, (n, c) in zip(["第一章 引言", "第二章 方法"], want["chapters"])]


def test_a_quotation_shows_as_cited_with_its_source(browser: Any, store: Any, tmp_path: Path) -> None:
    m = mosaic()
    report = report_of(store, m.text)
    shown = _open(browser, report, tmp_path, "cited.html")
    read = browser.execute_script(_READ_FIGURES)
    [cited] = read["cited"]
    source = report.sources[int(cited["source"])]
    assert source.id == LONG and cited["text"] == m.text[m.quote[0] : m.quote[1]]
    assert cited["style"] == "double" and cited["border"] == _rgb(source.colour)  # its own style, its source's colour
    assert cited["background"] == "rgba(0, 0, 0, 0)" and cited["label"] == f'"[{int(cited["source"]) + 1}]"'
    assert all(p["text"] not in cited["text"] for p in shown["passages"])  # not also shown as copied
    summary = browser.execute_script(f"return document.querySelector('#source-{cited['source']} summary').textContent")
    assert f"[{int(cited['source']) + 1}] {LONG}" in summary


def test_an_excluded_source_is_gone_from_the_figures(browser: Any, store: Any, tmp_path: Path) -> None:
    m = mosaic()
    gone = SOURCES[1]
    report = report_of(store, m.text, exclude_sources=[gone])
    shown = _open(browser, report, tmp_path, "excluded-source.html")
    read = browser.execute_script(_READ_FIGURES)
    want = expected(m, frozenset({gone}))
    assert gone not in {r["id"] for r in read["sources"]} and len(read["sources"]) == 3
    assert read["figures"]["figure-share"] == [_pct(want["copied"], want["total"]), f"{want['copied']:,}"]
    assert all(report.sources[int(p["source"])].id != gone for p in shown["passages"])
    assert f"Left out: {gone} (excluded on request)." in browser.execute_script(
        "return document.getElementById('notes').textContent")


# ----------------------------------------------------------------------------------- printing

def _pdf_text(pdf: bytes) -> tuple[str, int]:
    import io

    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    return "\n".join(page.extract_text() or "" for page in reader.pages), len(reader.pages)


def _print(browser: Any) -> bytes:
    """The page printed to PDF by Chromium (backgrounds kept, as the page's print styles ask). Chinese text needs
    a CJK font: without one the PDF holds no Chinese characters, and the test fails saying what to install."""
    import base64
    import subprocess

    found = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True, check=False).stdout
    if not found.strip():
        pytest.fail("no CJK font: the page printed to PDF would hold no Chinese text; install one with "
                    "'apt-get install fonts-wqy-microhei' (as scripts/test does)")

    from selenium.webdriver.common.print_page_options import PrintOptions

    options = PrintOptions()
    options.background = True
    return base64.b64decode(browser.print_page(options))


def test_the_printed_pdf_holds_the_document_and_its_figures(browser: Any, store: Any, tmp_path: Path) -> None:
    m = mosaic()
    # Long enough to take several pages: the mosaic, then paragraphs of a document no source holds.
    own = "\n".join(RECORDS[i]["text"] for i in ("zh-man:man1/hostname.1#0", "zh-install:ch02s01#3")) * 3
    text = m.text + "\n" + own
    report = report_of(store, text)
    _open(browser, report, tmp_path, "print.html")
    text_pdf, pages = _pdf_text(_print(browser))
    # The document's text, whole and in order (pypdf reads the page's lines; white space aside), each cited
    # quotation followed by its source's number, as the page shows it.
    shown, at = [], 0
    for _start, end, k in report.citations:
        shown += [text[at:end], f"[{k + 1}]"]
        at = end
    # (NFKC on both sides: the PDF's text layer writes the ligature ﬁ for fi.)
    ink = unicodedata.normalize("NFKC", "".join(("".join(shown) + text[at:]).split()))
    printed = unicodedata.normalize("NFKC", "".join(text_pdf.split()))
    assert report.citations and ink in printed
    assert report.headline.replace(" ", "") in printed
    assert f"{report.figures.copied:,}" in text_pdf and f"{report.figures.chars:,}" in text_pdf
    # As many pages as the browser lays the page out on: the document's height over the printed page's.
    height = browser.execute_script("return document.documentElement.scrollHeight")
    assert pages >= 2 and pages >= height // 1600


def test_a_chinese_pdf_reads_back_without_spaces_at_its_line_breaks(browser: Any, tmp_path: Path) -> None:
    """A real PDF (Chromium prints a narrow column of Chinese paragraphs): extracted, its lines join as they read."""
    from simdup_es.extract import extract

    paragraphs = [line for line in RECORDS["zh-install:ch02s01#3"]["text"].splitlines() if len(line) > 60][:3]
    assert paragraphs
    page = tmp_path / "column.html"
    page.write_text('<!DOCTYPE html><html lang="zh"><meta charset="utf-8"><body style="width:20em;font-size:14px">'
                    + "".join(f"<p>{escape(p)}</p>" for p in paragraphs) + "</body></html>", encoding="utf-8")
    browser.get(page.as_uri())
    pdf = _print(browser)
    raw, _ = _pdf_text(pdf)
    assert raw.count("\n") > 3 * len(paragraphs)  # the column broke each paragraph into lines
    joined = extract(pdf, "pdf")
    for p in paragraphs:
        assert p.replace(" ", "") in joined.replace(" ", "")
        assert not re.search(r"[\u4e00-\u9fff] +[\u4e00-\u9fff]", joined)  # no space where a line broke
