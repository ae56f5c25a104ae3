"""simdup serve's start page (GET /) in a real browser: a pasted text's report shows under the form,
with the source it copies from; a stored document's report opens by its id; its sources link to their
own reports. Chromium from Debian under Selenium, the server under uvicorn on a real socket."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simdup_es.serve import ServeSettings, create_app
from simdup_es.service import Service
from simdup_es.store import open_store
from tests.browser.test_report_page import chromium_driver
from tests.unit.test_serve import BY_ID, RECORDS, SOURCE, _index, _planted, uvicorn_serving

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder: Path = tmp_path_factory.mktemp("start") / "store"
    _index(folder, [*RECORDS[:20], BY_ID[SOURCE], _planted()])
    store = open_store(path=folder, read_only=True)
    settings = ServeSettings(allowed_hosts=("localhost", "127.0.0.1", "::1"))  # as a loopback server checks
    try:
        with uvicorn_serving(create_app(Service(store), settings)) as url:
            yield url
    finally:
        store.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    driver = chromium_driver()
    yield driver
    driver.quit()


def _wait(condition: Any, seconds: float = 60) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("the page did not get there in time")


def test_a_pasted_text_gets_its_report_under_the_form(browser: Any, base: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(base + "/")
    browser.execute_script("document.getElementById('text').value = arguments[0];", _planted()["text"])
    browser.find_element(By.ID, "go").click()
    frame = _wait(lambda: browser.find_element(By.ID, "result").is_displayed()
                  and browser.find_element(By.ID, "result"))
    assert browser.find_element(By.ID, "status").text == ""
    browser.switch_to.frame(frame)
    try:
        headline = _wait(lambda: browser.find_elements(By.ID, "headline"))[0].text
        sources = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "table.sources td a[href^='#source-']")]
        passages = browser.find_elements(By.CSS_SELECTOR, "#document a.passage")
    finally:
        browser.switch_to.default_content()
    assert "%" in headline and SOURCE in sources and passages
    assert not browser.get_log("browser") or all("Content Security Policy" not in e["message"]
                                                 for e in browser.get_log("browser"))


def test_an_empty_text_is_refused_on_the_page(browser: Any, base: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(base + "/")
    browser.find_element(By.ID, "go").click()
    assert "Paste a text" in browser.find_element(By.ID, "status").text
    browser.execute_script("document.getElementById('text').value = '。。。';")
    browser.find_element(By.ID, "go").click()
    # The server's message, once its answer has come (the status says "Searching…" until then).
    status = _wait(lambda: (text := browser.find_element(By.ID, "status").text) != "Searching…"
                   and "Paste a text" not in text and text)
    assert "no words" in status


def test_a_stored_documents_report_opens_by_id_and_links_its_sources(browser: Any, base: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(base + "/")
    browser.find_element(By.ID, "id").send_keys("planted")
    browser.find_element(By.ID, "open").click()
    _wait(lambda: "/report/planted" in browser.current_url)
    assert "planted" in browser.find_element(By.TAG_NAME, "h1").text
    [link] = [a for a in browser.find_elements(By.CSS_SELECTOR, "a.report-link")
              if SOURCE in a.find_element(By.XPATH, "..").text]
    link.click()
    _wait(lambda: "systemd-delta" in browser.current_url)
    assert SOURCE in browser.find_element(By.TAG_NAME, "h1").text
