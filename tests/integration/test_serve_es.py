"""simdup serve over the Elasticsearch store on a real node, behind a proxy that can fail.

The node is reached with a password in the URL (the proxy proves it was sent):
the answers are the library's, the same as the embedded store's, and no response
(success, error or page) carries the password, also with the cluster down.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from simdup_es import default_fingerprinter
from simdup_es.cli.serve_cmd import secrets_of
from simdup_es.indexer import index_items
from simdup_es.serve import ServeSettings, create_app, retry_within
from simdup_es.service import Service
from simdup_es.sources import Record
from simdup_es.store import open_store
from tests.integration.fault_proxy import FaultProxy
from tests.unit.test_serve import EDITED, RECORDS, SOURCE, _library, _planted

USER, PASSWORD = "elastic", "pw-S3CRET-serve-4d7"
SECRETS = [PASSWORD, base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()]
DOCS = [*RECORDS, _planted()]


def _items(records: list[dict[str, Any]]) -> list[Record]:
    return [Record(r["text"], r["id"], r["id"], r.get("title")) for r in records]


@pytest.fixture
def proxy(es_url: str) -> Iterator[FaultProxy]:
    with FaultProxy(es_url) as p:
        yield p


@pytest.fixture
def served(proxy: FaultProxy, es_index: str) -> Iterator[tuple[Any, TestClient]]:
    url = proxy.url.replace("://", f"://{USER}:{PASSWORD}@", 1)
    store = open_store(url, index=es_index, create=True, max_retries=0, request_timeout=5)
    summary = index_items(_items(DOCS), store, default_fingerprinter(), workers=1, on_reject=lambda r: None)
    assert summary.indexed == len(DOCS)
    store.refresh()
    store.retry = retry_within(4.0)  # as simdup serve sets it for its --timeout
    settings = ServeSettings(allow_index=True, timeout=4.0, secrets=secrets_of({"es_url": url, "user": None, "password": None,
                                                                   "api_key": None}))
    try:
        with TestClient(create_app(Service(store), settings)) as client:
            yield store, client
    finally:
        store.close()


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("serve-es") / "store"
    local = open_store(path=folder, create=True)
    index_items(_items(DOCS), local, default_fingerprinter(), workers=1, on_reject=lambda r: None)
    with TestClient(create_app(Service(local))) as client:
        yield client
    local.close()


def _no_secret(responses: list[Any]) -> None:
    for r in responses:
        whole = r.text + json.dumps(dict(r.headers))
        for secret in SECRETS:
            assert secret not in whole, (r.request.url, r.text[:300])


def test_the_api_over_a_cluster_answers_as_the_library_and_the_embedded_store(
        served: tuple[Any, TestClient], embedded: TestClient, proxy: FaultProxy) -> None:
    store, client = served
    responses = [client.get("/health")]
    assert responses[0].json()["store"] == "cluster" and responses[0].json()["documents"] == len(DOCS)
    for doc_id in (EDITED, SOURCE, "planted"):
        r = client.get("/search", params={"id": doc_id})
        responses.append(r)
        expected = _library(store, doc_id)
        assert expected and [{k: m[k] for k in expected[0]} for m in r.json()["matches"]] == expected
        assert r.json() == embedded.get("/search", params={"id": doc_id}).json()  # one behaviour, both stores
    posted = client.post("/search", json={"text": _planted()["text"]})
    assert posted.json() == embedded.post("/search", json={"text": _planted()["text"]}).json()
    page = client.get(f"/report/{quote(SOURCE, safe='')}")
    assert page.status_code == 200 and "planted" in page.text and 'class="copied' in page.text
    compared = client.get("/compare", params={"a": EDITED, "b": EDITED + "~edited"})
    assert compared.json()["near_duplicate"] is True
    missing = client.get("/search", params={"id": "nope"})
    assert missing.status_code == 404
    responses += [posted, page, compared, missing, client.get("/report/nope"), client.get(f"/report/{PASSWORD}")]
    assert f"Basic {SECRETS[1]}" in proxy.authorization  # the password was sent: there was one to leak
    _no_secret(responses)


def test_indexing_through_the_api_reaches_the_cluster(served: tuple[Any, TestClient]) -> None:
    _, client = served
    body = client.post("/documents", json={"documents": [{"id": "new", "text": DOCS[-1]["text"]},
                                                         {"id": "bad", "text": ""}]}).json()
    assert body["indexed"] == 1 and [r["id"] for r in body["rejected"]] == ["bad"]
    found = {m["id"] for m in client.get("/search", params={"id": "new"}).json()["matches"]}
    assert "planted" in found


@pytest.mark.parametrize("mode", ["down", "401", "500"])
def test_a_failing_cluster_is_503_without_the_password(served: tuple[Any, TestClient], proxy: FaultProxy,
                                                       mode: str) -> None:
    _, client = served
    proxy.down = mode == "down"
    proxy.refuse = None if mode == "down" else int(mode)
    responses = [client.get("/health"), client.get("/search", params={"id": SOURCE}),
                 client.post("/search", json={"text": "一段文字。"}), client.get(f"/report/{quote(SOURCE, safe='')}"),
                 client.get("/compare", params={"a": SOURCE, "b": "planted"}),
                 client.post("/documents", json=[{"id": "x", "text": "又一段文字。"}])]
    for r in responses:
        assert r.status_code == 503, r.text
        assert r.json()["error"]["type"] == "store_unavailable"
    _no_secret(responses)
    proxy.down, proxy.refuse = False, None
    assert client.get("/search", params={"id": SOURCE}).status_code == 200
