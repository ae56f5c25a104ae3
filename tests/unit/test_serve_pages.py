"""The pages simdup serve gives people: GET / (report a text), GET /docs (the API), and served reports that
link each source to its own report, ids ending in .json included."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, unquote

import pytest
from starlette.testclient import TestClient

from simdup_es.serve import create_app
from simdup_es.service import Service
from simdup_es.store import open_store
from tests.unit.test_serve import BY_ID, RECORDS, SOURCE, _index, _planted

TRAILING = "notes/trailing.json"  # an id that ends in .json: a copy of SOURCE


class _Tags(HTMLParser):
    """Every tag's attributes, and the text of each script."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


def _tags(html: str) -> _Tags:
    parser = _Tags()
    parser.feed(html)
    return parser


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("pages") / "store"
    _index(folder, [*RECORDS[:30], BY_ID[SOURCE], _planted(), {"id": TRAILING, "text": BY_ID[SOURCE]["text"]}])
    store = open_store(path=folder, read_only=True)
    with TestClient(create_app(Service(store))) as c:
        yield c
    store.close()


def _nothing_from_elsewhere(html: str) -> None:
    for tag, attrs in _tags(html).tags:
        for name in ("src", "href", "action"):
            value = attrs.get(name) or ""
            assert not re.match(r"(?i)[a-z]+:|//", value), f"<{tag} {name}={value!r}> loads from elsewhere"


def test_the_start_page_runs_its_own_script_only(client: TestClient) -> None:
    response = client.get("/")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    page = _tags(response.text)
    ids = {attrs.get("id") for _, attrs in page.tags}
    assert {"by-text", "text", "file", "by-id", "id", "result"} <= ids
    [script] = page.scripts
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    policy = response.headers["content-security-policy"]
    assert f"script-src 'sha256-{digest}'" in policy and "connect-src 'self'" in policy
    assert 'fetch("report"' in script and '"Content-Type": "application/json"' in script
    [frame] = [attrs for tag, attrs in page.tags if tag == "iframe"]
    assert "sandbox" in frame and not frame["sandbox"]  # the report shown runs nothing
    _nothing_from_elsewhere(response.text)


def test_the_start_pages_request_is_answered_with_the_report_page(client: TestClient) -> None:
    """What the page's script posts (a text as JSON, format html) gives the report of that text."""
    text = _planted()["text"]
    response = client.post("/report", json={"text": text, "exclude_quotations": False, "exclude_references": False,
                                            "format": "html"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    assert f"/report/{quote(SOURCE, safe='')}?format=html" in response.text


def test_the_api_page_shows_every_route_and_field(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    response = client.get("/docs")
    assert response.status_code == 200 and "script-src" not in response.headers["content-security-policy"]
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            assert f"{method}-{path}".replace("/", "-").replace("{", "").replace("}", "") in response.text
            for parameter in operation.get("parameters", []):
                assert f"<code>{parameter['name']}</code>" in response.text
    assert "<code>exclude_quotations</code>" in response.text and "<code>partial_threshold</code>" in response.text
    _nothing_from_elsewhere(response.text)
    assert not _tags(response.text).scripts


def test_a_served_report_links_each_source_to_its_own_report(client: TestClient) -> None:
    page = client.get(f"/report/{quote('planted', safe='')}")
    links = [attrs["href"] for tag, attrs in _tags(page.text).tags if tag == "a" and attrs.get("class") == "report-link"]
    assert links and all(link.startswith("/report/") and link.endswith("?format=html") for link in links)
    sources = {unquote(link.removeprefix("/report/").removesuffix("?format=html")) for link in links}
    assert SOURCE in sources
    for link in links:  # each one opens that source's own page
        followed = client.get(link)
        assert followed.status_code == 200 and followed.headers["content-type"].startswith("text/html")


def test_an_id_ending_in_json_has_its_page_through_the_dashboards_link(client: TestClient) -> None:
    page = client.get(f"/report/{quote(TRAILING, safe='')}?format=html")  # as the dashboards link it
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "trailing.json" in page.text
    as_json = client.get(f"/report/{quote(TRAILING, safe='')}.json")
    assert as_json.status_code == 200 and as_json.json()["document"]["label"] == TRAILING


def test_the_pages_refuse_a_foreign_host_when_loopback(tmp_path: Path) -> None:
    from simdup_es.serve import ServeSettings

    _index(tmp_path / "s", RECORDS[:3])
    store = open_store(path=tmp_path / "s", read_only=True)
    try:
        settings = ServeSettings(allowed_hosts=("localhost", "127.0.0.1", "::1"))
        with TestClient(create_app(Service(store), settings), base_url="http://localhost:8000") as c:
            assert c.get("/").status_code == 200
            assert c.get("/", headers={"host": "rebound.example"}).status_code == 403
    finally:
        store.close()


def test_an_id_ending_in_a_newline_is_not_another_document(client: TestClient) -> None:
    """``/report/X%0A`` is the id ``X\\n`` (unknown here), not ``X``: the route's pattern would drop the newline."""
    assert client.get(f"/report/{quote(SOURCE, safe='')}").status_code == 200
    answer = client.get(f"/report/{quote(SOURCE + chr(10), safe='')}")
    assert answer.status_code == 404 and repr(SOURCE + "\n") in answer.json()["error"]["message"]
    assert client.get("/report/%0A").status_code == 404
