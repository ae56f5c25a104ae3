"""The report page in a real browser: Chromium from Debian, driven by Selenium.

No Chromium, no pass: the test fails (it does not skip) and says how to install it
(``apt-get install chromium chromium-driver``; .ci/run does). What is checked is what a
reader sees: the colours the browser computes for the copied passages, the characters
inside them, the excluded quotation left unmarked, a Traditional document in Traditional.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simdup_es.report import Exclusions, SimilarityReport, render_report_html, similarity_report
from tests._report_docs import QUOTED, RECORDS, SOURCES, composed, lines, make_store, traditional

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
    report = similarity_report(store, text, exclusions=Exclusions(quotations=True))
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
    counted = _open(browser, similarity_report(store, text), tmp_path, "counted.html")
    assert any(p["text"] in quotation and len(p["text"]) > 20 for p in counted["passages"])  # marked when it counts
    report = similarity_report(store, text, exclusions=Exclusions(quotations=True))
    shown = _open(browser, report, tmp_path, "excluded.html")
    assert quotation in [e["text"] for e in shown["excluded"]]  # (with a short one of the document's own)
    assert not {e["colour"] for e in shown["excluded"]} & {_rgb(s.colour) for s in report.sources}
    assert all(p["text"] not in quotation for p in shown["passages"])
    assert QUOTED not in {s.id for s in report.sources}


def test_a_traditional_document_is_shown_in_traditional(browser: Any, store: Any, tmp_path: Path) -> None:
    text = traditional(composed(SOURCES[:2]))
    report = similarity_report(store, text)
    shown = _open(browser, report, tmp_path, "traditional.html")
    assert shown["text"] == text
    marked = "".join(p["text"] for p in shown["passages"])
    assert "車鄰鄰" in marked and "车邻邻" not in shown["text"]  # the Traditional characters, as given
    for p, (start, end, _) in zip(shown["passages"], report.passages, strict=True):
        assert p["text"] == text[start:end]
