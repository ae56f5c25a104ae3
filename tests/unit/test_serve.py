"""simdup serve over the embedded store: the JSON API answers as the library and the CLI do.

The app runs in Starlette's TestClient (in process) over a real embedded store,
opened read-only as ``simdup serve`` opens it; one test runs it under uvicorn
and sends concurrent requests over real sockets.
"""

from __future__ import annotations

import importlib.resources
import json
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from starlette.responses import JSONResponse
from starlette.testclient import TestClient

from simdup_es import default_fingerprinter, find_copies
from simdup_es.cli import main
from simdup_es.cli.serve_cmd import parse_size, secrets_of
from simdup_es.indexer import index_items
from simdup_es.parts import PartPrinter
from simdup_es.offsets import unify_mapped
from simdup_es.report import copied_spans, original_spans, verdict_json
from simdup_es.multilevel import MultiParams
import simdup_es.matrix as matrix_module
from simdup_es.errors import ConfigError
from simdup_es.fingerprint import Fingerprint
from simdup_es.compare import CompareParams
from simdup_es.search import MatrixComparer, Verdict, comparer
from simdup_es.sentences import split_sentences
from simdup_es.serve import ServeSettings, create_app, json_chunks, scrub
from simdup_es.service import Query, Service
from simdup_es.sources import Record
from simdup_es.store import open_store
from simdup_es.store.local import LocalStore
from simdup_es.text import unify
from tests._data import FIXTURES

SAMPLE = importlib.resources.files("simdup_es.data") / "sample.jsonl"
RECORDS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
BY_ID = {r["id"]: r for r in RECORDS}
JSON = {"content-type": "application/json"}
SOURCE = "zh-man-page:man1/systemd-delta.1"  # half of it is planted into "planted"
EDITED = "zh-man:man7/perlnumber.7#0"  # has a stored edited copy


def _planted() -> dict[str, str]:
    source = BY_ID[SOURCE]["text"].splitlines()
    host = BY_ID["zh-lo:shared/main0213#0"]["text"].splitlines()
    half = len(host) // 2
    return {"id": "planted", "text": "\n".join(host[:half] + source[: len(source) // 2] + host[half:])}


def _index(folder: Path, records: list[dict[str, Any]]) -> None:
    store = open_store(path=folder, create=True)
    try:
        items = [Record(r["text"], r["id"], r["id"], r.get("title")) for r in records]
        summary = index_items(items, store, default_fingerprinter(), workers=1, on_reject=lambda r: None)
        assert summary.indexed == len(records)
    finally:
        store.close()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("serve") / "store"
    _index(path, [*RECORDS, _planted()])
    return path


@pytest.fixture(scope="module")
def store(folder: Path) -> Iterator[Any]:
    local = open_store(path=folder, read_only=True)  # as simdup serve opens it without --allow-index
    yield local
    local.close()


@pytest.fixture(scope="module")
def service(store: Any) -> Service:
    return Service(store)


@pytest.fixture(scope="module")
def client(service: Service) -> Iterator[TestClient]:
    with TestClient(create_app(service)) as c:
        yield c


def _library(store: Any, doc_id: str | None = None, text: str | None = None, **kw: Any) -> list[dict[str, Any]]:
    """What find_copies gives for a stored id (with its stored fingerprint) or a text, as dicts (the reference the
    API is held to)."""
    fp = None
    if doc_id is not None:
        doc = store.get([doc_id])[0]
        fp, text = Fingerprint(doc.fingerprint, doc.version), doc.text
    found = find_copies(store, text, fingerprint=fp, exclude_id=doc_id, printer=PartPrinter(default_fingerprinter()),
                        compare=comparer(), **kw)
    return [m.to_dict() for m in found]


def _error(response: Any, status: int, kind: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"type", "message"}
    assert body["error"]["type"] == kind
    message: str = body["error"]["message"]
    assert message
    return message


# --------------------------------------------------------------------------- search


def test_health_counts_the_store(client: TestClient) -> None:
    body = client.get("/health").json()
    assert body["status"] == "ok" and body["store"] == "embedded"
    assert body["documents"] == len(RECORDS) + 1
    assert body["fingerprint_version"] == default_fingerprinter().version and body["indexing"] is False


@pytest.mark.parametrize("doc_id", [EDITED, SOURCE, "planted", "zh-man-page:man3/flockfile.3"])
def test_search_by_id_is_the_library_call(client: TestClient, store: Any, doc_id: str) -> None:
    response = client.get("/search", params={"id": doc_id})
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == doc_id and body["more"] == 0
    expected = _library(store, doc_id)
    assert expected, "the sample has a copy of each of these"
    assert [{k: m[k] for k in expected[0]} for m in body["matches"]] == expected
    assert response.headers["server-timing"].startswith("queue;dur=") and ", work;dur=" in response.headers["server-timing"]


def test_search_finds_the_planted_passage_both_ways(client: TestClient) -> None:
    ids = {m["id"]: m["kind"] for m in client.get("/search", params={"id": SOURCE}).json()["matches"]}
    assert ids.get("planted") == "partial"
    ids = {m["id"] for m in client.post("/search", json={"text": _planted()["text"]}).json()["matches"]}
    assert {"planted", SOURCE} <= ids  # a posted text excludes nothing: its own stored copy is found too


def test_search_json_is_what_the_cli_prints(client: TestClient, folder: Path, tmp_path: Path) -> None:
    text = BY_ID[EDITED]["text"]
    run = CliRunner().invoke(main, ["search", "--store", str(folder), "--text", text, "--json"])
    assert run.exit_code == 0, run.output
    cli = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    api = client.post("/search", json={"text": text}).json()["matches"]
    assert cli and api == cli


def test_limit_gives_more_and_levels_document_is_no_matrix(client: TestClient, store: Any) -> None:
    full = client.get("/search", params={"id": SOURCE}).json()
    assert len(full["matches"]) >= 2
    one = client.get("/search", params={"id": SOURCE, "limit": "1"}).json()
    assert one["matches"] == full["matches"][:1] and one["more"] >= len(full["matches"]) - 1
    doc = client.post("/search", json={"id": SOURCE, "levels": "document"}).json()["matches"]
    assert doc == [{**m, "title": doc_title(store, m["id"]), "pairs": None, "spans": None}
                   for m in _library(store, SOURCE, matrix=False)]
    assert all(m["kind"] == "near-duplicate" and m["copied_query"] is None for m in doc)


def test_spans_false_answers_the_same_matches_unmapped(client: TestClient) -> None:
    text = BY_ID[EDITED]["text"]
    full = client.post("/search", json={"text": text}).json()["matches"]
    assert any(m["spans"] for m in full), "the sample's edited copy has copied spans"
    bare = client.post("/search", json={"text": text, "spans": False}).json()["matches"]
    assert bare == [{**m, "spans": None} for m in full]
    by_id = client.get("/search", params={"id": EDITED, "spans": "false"}).json()["matches"]
    assert by_id and all(m["spans"] is None for m in by_id)
    assert client.get("/search", params={"id": EDITED, "spans": "true"}).json()["matches"][0]["spans"]
    bad = client.post("/search", json={"text": text, "spans": "sometimes"})
    assert "spans must be true or false" in _error(bad, 400, "bad_input")


def test_a_stored_text_searched_again_is_mapped_once(client: TestClient, service: Service) -> None:
    text = BY_ID[EDITED]["text"]
    mapped = service.caches.mapped
    mapped.clear()
    first = client.post("/search", json={"text": text}).json()
    assert text in mapped  # the query is a stored text: its map is kept with the stored ones
    assert client.post("/search", json={"text": text}).json() == first
    other = text + "\n补上一行。"  # not stored: mapped for its search alone
    assert client.post("/search", json={"text": other}).json()["matches"] and other not in mapped


def doc_title(store: Any, doc_id: str) -> str | None:
    return store.get([doc_id])[0].title


def test_a_smaller_k_keeps_nearer_duplicates_only(client: TestClient) -> None:
    # The document level alone: with the matrix, a copy mostly copied both ways is a near-duplicate at any distance.
    near = client.get("/search", params={"id": EDITED, "levels": "document"}).json()["matches"]
    assert near and all(m["kind"] == "near-duplicate" for m in near) and min(m["distance"] for m in near) > 0
    d = min(m["distance"] for m in near)
    within = client.get("/search", params={"id": EDITED, "levels": "document", "k": d}).json()["matches"]
    nearer = client.get("/search", params={"id": EDITED, "levels": "document", "k": d - 1}).json()["matches"]
    assert {m["id"] for m in within if m["distance"] == d} and all(m["distance"] <= d - 1 for m in nearer)
    assert len(nearer) < len(within)


# --------------------------------------------------------------------------- compare, report


def test_compare_two_ids_and_two_texts_is_compare_json(client: TestClient) -> None:
    a, b = BY_ID[EDITED], BY_ID[EDITED + "~edited"]
    fp = default_fingerprinter()
    shown_a, shown_b = unify_mapped(a["text"]), unify_mapped(b["text"])
    verdict = verdict_json(Verdict(fp.fingerprint(a["text"], a["title"]), fp.fingerprint(b["text"], b.get("title")),
                                   comparer()(shown_a.text, shown_b.text)), shown_a, shown_b)
    by_id = client.get("/compare", params={"a": a["id"], "b": b["id"]}).json()
    assert {k: by_id[k] for k in verdict} == verdict and by_id["a_label"] == a["id"]
    assert [s["text"] for s in by_id["comparison"]["sentences_b"]] == [
        b["text"][s["start"] : s["end"]] for s in by_id["comparison"]["sentences_b"]]
    by_text = client.post("/compare", json={"a": {"text": a["text"], "title": a["title"]},
                                            "b": {"text": b["text"], "title": b.get("title")}}).json()
    assert {k: by_text[k] for k in verdict} == verdict and by_text["near_duplicate"]
    assert (by_text["a_label"], by_text["b_label"]) == ("a", "b")
    plain = client.post("/compare", json={"a": a["text"], "b": {"id": b["id"]}}).json()
    assert plain["comparison"] == verdict["comparison"]
    k = by_id["distance"] - 1
    strict = client.get("/compare", params={"a": a["id"], "b": b["id"], "k": k}).json()
    within_k = verdict_json(Verdict(fp.fingerprint(a["text"], a["title"]), fp.fingerprint(b["text"], b.get("title")),
                                    comparer()(shown_a.text, shown_b.text), MultiParams(k=k)), shown_a, shown_b)
    assert {key: strict[key] for key in within_k} == within_k and strict["distance"] == by_id["distance"]
    assert "up to k = 3" in _error(client.get("/compare", params={"a": a["id"], "b": b["id"], "k": 10}), 400, "bad_input")
    _error(client.post("/compare", json={"a": a["text"], "b": b["text"], "kk": 1}), 400, "bad_input")

def _verdict_json_whole(verdict: Verdict, shown_a: Any, shown_b: Any) -> dict[str, Any]:
    """``simdup compare --json`` built whole from :meth:`Verdict.to_dict`, every sentence and pair a dict first (the
    reference the streamed answer is held to)."""
    out = verdict.to_dict()
    d = dict(out["comparison"])
    for side, shown in (("a", shown_a), ("b", shown_b)):
        d[f"sentences_{side}"] = [{**s, **dict(zip(("start", "end"), shown.span(s["start"], s["end"]))),
                                   "text": shown.shown(s["start"], s["end"])} for s in d[f"sentences_{side}"]]
        if d[f"core_{side}"] is not None:
            d[f"core_{side}"] = {**d[f"core_{side}"], "chars": list(shown.span(*d[f"core_{side}"]["chars"]))}
    d["pairs"] = [{**p, "a": list(shown_a.span(*p["a"])), "b": list(shown_b.span(*p["b"]))} for p in d["pairs"]]
    spans = {side: [{"start": s, "end": e} for s, e in original_spans(shown, copied_spans(verdict.comparison, side))]
             for side, shown in (("a", shown_a), ("b", shown_b))}
    return {**out, "comparison": d, "spans": spans}


@pytest.mark.parametrize("trim", [False, True])
def test_compare_answer_is_streamed_as_the_same_json(store: Any, trim: bool) -> None:
    """POST /compare writes its sentences and pairs as it makes them: the same bytes as the answer built whole."""
    a, b = BY_ID[SOURCE], BY_ID[EDITED]
    repeated = a["text"] + "\n" + b["text"] * 3  # a sentence in several pairs; more items than a batch of the stream
    service = Service(store, comparer=comparer(CompareParams(trim_boilerplate=trim)))
    compared = service.compare(Query(text=repeated), Query(text=b["text"]))
    whole = {"a_label": "a", "b_label": "b", **_verdict_json_whole(compared.verdict, compared.a, compared.b),
             "common": compared.common_text()}
    assert len(whole["comparison"]["pairs"]) > 0 and (whole["comparison"]["core_a"] is not None) == trim
    with TestClient(create_app(service)) as c:
        response = c.post("/compare", json={"a": repeated, "b": b["text"]})
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    assert response.content == JSONResponse(whole).body
    assert verdict_json(compared.verdict, compared.a, compared.b) == _verdict_json_whole(
        compared.verdict, compared.a, compared.b)


def test_json_chunks_writes_iterators_as_arrays() -> None:
    value = {"x": "\0 a text that looks like a placeholder: \\u0000", "nested": {"items": iter(range(2500)),
             "none": iter([])}, "list": [1, {"y": None}], "last": (str(i) for i in range(3))}
    chunks = list(json_chunks(value))
    assert len(chunks) > 3 and all(isinstance(chunk, bytes) for chunk in chunks)
    expected = {**value, "nested": {"items": list(range(2500)), "none": []}, "last": ["0", "1", "2"]}
    assert b"".join(chunks) == JSONResponse(expected).body


def test_compare_judges_with_the_servers_partial_threshold_or_the_requests(client: TestClient) -> None:
    """Two sentences (22 units) of an article under a sentence of another text: a partial copy by share only."""
    article = (FIXTURES / "zh_article.txt").read_text(encoding="utf-8")
    other = (FIXTURES / "zh_other.txt").read_text(encoding="utf-8")
    sentences = split_sentences(unify(article))
    pair = {"a": article, "b": other.split("。")[0] + "。\n" + sentences[23].text + sentences[24].text}
    got = client.post("/compare", json=pair).json()
    assert got["kind"] == "partial" and 0.2 < got["copied_b"] < 0.5
    assert client.post("/compare", json={**pair, "partial_threshold": 0.9}).json()["kind"] is None


def test_report_page_of_a_stored_document(client: TestClient) -> None:
    """GET /report/{id}: the similarity report of `simdup report --id`, its own stored copy left out."""
    page = client.get(f"/report/{quote(SOURCE, safe='')}")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]  # no script runs on a report
    body = client.get(f"/report/{quote(SOURCE, safe='')}.json").json()
    assert body["headline"] in page.text and "planted" in page.text
    matches = client.get("/search", params={"id": SOURCE}).json()["matches"]
    assert {s["id"] for s in body["sources"]} <= {m["id"] for m in matches} and "planted" in {s["id"] for s in body["sources"]}
    assert {"id": SOURCE, "reason": "this document's own stored copy"} in body["left_out"]


def test_report_json_points_into_the_original_text(client: TestClient) -> None:
    body = client.get(f"/report/{quote(SOURCE, safe='')}.json").json()
    original = BY_ID[SOURCE]["text"]
    planted = next(s for s in body["sources"] if s["id"] == "planted")
    assert 0 < planted["share_of_document"] <= 1 and planted["spans"]
    copied = "".join(original[p["start"]:p["end"]] for p in planted["spans"])
    assert copied and all(line in _planted()["text"] for line in copied.splitlines() if line.strip())
    assert all(original[p["start"]:p["end"]] for p in body["passages"])
    posted = client.post("/report", json={"text": original}).json()
    assert {s["id"] for s in posted["sources"]} >= {s["id"] for s in body["sources"]} - {SOURCE}
    excluded = client.get(f"/report/{quote(SOURCE, safe='')}.json", params={"min_chars": 100000}).json()
    assert excluded["share"] == 0 and body["share"] > 0
    _error(client.get(f"/report/{quote(SOURCE, safe='')}.json", params={"exclude_quotations": "maybe"}), 400, "bad_input")
    # POST takes the options as query parameters too (the body's win); a format or a field it does not know is refused.
    limited = client.post("/report", params={"limit": 1}, json={"text": original}).json()
    assert len(limited["sources"]) == 1 and limited["more"] >= 1
    assert "format must be 'json' or 'html'" in _error(client.post("/report", json={"text": original, "format": "xml"}),
                                                       400, "bad_input")
    _error(client.get(f"/report/{quote(SOURCE, safe='')}", params={"format": "xml"}), 400, "bad_input")
    assert "unknown field sorce" in _error(client.get(f"/report/{quote(SOURCE, safe='')}", params={"sorce": "x"}),
                                           400, "bad_input")


def test_a_report_leaves_out_the_sources_asked(client: TestClient) -> None:
    """exclude_source, as `simdup report --exclude-source`: a query parameter given once or more, or a body field."""
    url = f"/report/{quote(SOURCE, safe='')}.json"
    assert "planted" in {s["id"] for s in client.get(url).json()["sources"]}
    gone = client.get(url, params=[("exclude_source", "planted"), ("exclude_source", "no such id")]).json()
    assert "planted" not in {s["id"] for s in gone["sources"]}
    assert {"id": "planted", "reason": "excluded on request"} in gone["left_out"]
    posted = client.post("/report", json={"id": SOURCE, "exclude_source": ["planted"]}).json()
    assert "planted" not in {s["id"] for s in posted["sources"]} and posted["figures"] == gone["figures"]
    assert "exclude_source must be" in _error(client.post("/report", json={"id": SOURCE, "exclude_source": [1]}),
                                              400, "bad_input")


def test_a_template_given_in_exclude_texts_counts_for_nothing(client: TestClient) -> None:
    """exclude_texts, as `--exclude-file`: the planted passage given as a template is no copy; a query parameter
    once per text, or a list in the body; one text not in a list is refused."""
    template = "\n".join(BY_ID[SOURCE]["text"].splitlines()[: len(BY_ID[SOURCE]["text"].splitlines()) // 2])
    found = {m["id"] for m in client.get("/search", params={"id": SOURCE}).json()["matches"]}
    got = client.get("/search", params=[("id", SOURCE), ("exclude_texts", "其他"), ("exclude_texts", template)])
    posted = client.post("/search", json={"id": SOURCE, "exclude_texts": [template]})
    assert "planted" in found and all("planted" not in {m["id"] for m in r.json()["matches"]} for r in (got, posted))
    assert "exclude_texts must be" in _error(client.post("/search", json={"id": SOURCE, "exclude_texts": template}),
                                             400, "bad_input")


def test_a_document_without_copies_has_a_report_too(client: TestClient) -> None:
    page = client.get(f"/report/{quote('zh-classic:shijing#125', safe='')}")
    assert page.status_code == 200 and "No copied text found in the store." in page.text


def test_openapi_describes_every_route(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.")
    routes = {(route.path, method.lower()) for route in client.app.routes  # type: ignore[attr-defined]
              for method in route.methods - {"HEAD"}}
    described = {(path.replace("{doc_id}", "{doc_id:path}"), method) for path, ops in spec["paths"].items()
                 for method in ops}
    assert described == routes

    # The answers have the fields the description names, and no others.
    def fields(path: str, method: str) -> set[str]:
        return set(spec["paths"][path][method]["responses"]["200"]["content"]["application/json"]["schema"]["properties"])

    found = client.get("/search", params={"id": EDITED}).json()
    assert set(found) == fields("/search", "get") and found["matches"]
    match_fields = set(spec["paths"]["/search"]["get"]["responses"]["200"]["content"]["application/json"]["schema"][
        "properties"]["matches"]["items"]["properties"])
    assert all(set(m) == match_fields for m in found["matches"])
    assert set(client.get("/compare", params={"a": EDITED, "b": EDITED + "~edited"}).json()) == fields("/compare", "get")
    assert set(client.post("/report", json={"id": EDITED}).json()) == fields("/report", "post")
    assert {p["name"] for p in spec["paths"]["/search"]["get"]["parameters"]} >= {"id", "k", "limit"}
    assert {"id", "text"} <= set(spec["paths"]["/search"]["post"]["requestBody"]["content"]["application/json"]["schema"][
        "properties"])


# --------------------------------------------------------------------------- errors


def test_unknown_id_is_404_everywhere(client: TestClient) -> None:
    assert "'nope'" in _error(client.get("/search", params={"id": "nope"}), 404, "not_found")
    _error(client.get("/report/nope"), 404, "not_found")
    _error(client.get("/report/nope.json"), 404, "not_found")
    _error(client.get("/compare", params={"a": "nope", "b": EDITED}), 404, "not_found")
    _error(client.get("/no/such/route"), 404, "not_found")
    _error(client.delete("/search"), 405, "method_not_allowed")


@pytest.mark.parametrize("body, kind", [
    (b"{not json", "bad_json"), (b"", "bad_json"), (b"[1, 2]", "bad_json"), (b"\xff\xfe{}", "bad_json"),
    (b'{"id": "a", "text": "b"}', "bad_input"), (b"{}", "bad_input"), (b'{"text": 5.5, "levels": "x"}', "bad_input"),
    (b'{"text": "x", "k": 9}', "bad_input"), (b'{"text": "x", "limit": -1}', "bad_input"),
    (b'{"text": "x", "limit": true}', "bad_input"), (b'{"text": "x", "partial_threshold": "half"}', "bad_input"),
    (b'{"text": ["x"]}', "bad_input"), (b'{"text": "   "}', "bad_input"), (b'{"text": 123}', "bad_input"),
    (b'{"text": "x", "title": 5}', "bad_input"), (b'{"text": "x", "limt": 5}', "bad_input"),
    (b'{"text": "' + "长".encode() * 30000, "bad_json"), (b'[' + b'"x", ' * 20000 + b'"x"]', "bad_json"),  # decoded on a thread
])
def test_bad_requests_are_400_with_a_message(client: TestClient, body: bytes, kind: str) -> None:
    _error(client.post("/search", content=body, headers={"content-type": "application/json"}), 400, kind)


def test_too_large_is_413_before_and_while_reading(store: Any) -> None:
    with TestClient(create_app(Service(store), ServeSettings(max_body_bytes=1000))) as small:
        big = json.dumps({"text": "很长的文本。" * 200}).encode()
        assert "1,000 bytes" in _error(small.post("/search", content=big, headers=JSON), 413, "too_large")

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
            for i in range(0, len(big), 100):
                yield big[i:i + 100]

        _error(small.post("/search", content=chunks(), headers=JSON), 413, "too_large")
        assert small.post("/search", json={"text": "短文本。"}).status_code == 200


def test_compare_has_its_own_smaller_limit(store: Any) -> None:
    """A comparison's memory grows faster than its texts: POST /compare takes at most --max-compare, and says so."""
    text = "很长的文本。" * 100
    body = json.dumps({"a": text, "b": text}, ensure_ascii=False).encode()
    settings = ServeSettings(max_body_bytes=len(body) * 2, max_compare_bytes=len(body) - 1)
    with TestClient(create_app(Service(store), settings)) as c:
        message = _error(c.post("/compare", content=body, headers=JSON), 413, "too_large")
        assert f"{len(body) - 1:,} bytes of POST /compare" in message and "--max-compare" in message
        assert c.post("/search", content=json.dumps({"text": text + text}).encode(), headers=JSON).status_code == 200
        assert c.post("/compare", json={"a": text, "b": text[:-6]}).status_code == 200
    with TestClient(create_app(Service(store), ServeSettings(max_body_bytes=100, max_compare_bytes=1000))) as c:
        assert "--max-body" in _error(c.post("/compare", content=body, headers=JSON), 413, "too_large")
    assert ServeSettings().max_compare_bytes < ServeSettings().max_body_bytes
    with pytest.raises(ConfigError):
        ServeSettings(max_compare_bytes=0)


def test_compare_of_stored_documents_has_the_same_limit(store: Any) -> None:
    """By id (GET, or POST with ids) the stored texts count against --max-compare: 413 before any comparison."""
    a, b = BY_ID[EDITED], BY_ID[EDITED + "~edited"]
    size = len(a["text"].encode()) + len(b["text"].encode())
    ids = {"a": a["id"], "b": b["id"]}
    with TestClient(create_app(Service(store), ServeSettings(max_compare_bytes=size - 1))) as c:
        message = _error(c.get("/compare", params=ids), 413, "too_large")
        assert f"{size:,} bytes of text, more than the limit of {size - 1:,} bytes" in message
        assert "--max-compare" in message
        _error(c.post("/compare", json={"a": {"id": a["id"]}, "b": {"id": b["id"]}}), 413, "too_large")
    with TestClient(create_app(Service(store), ServeSettings(max_compare_bytes=size))) as c:
        assert c.get("/compare", params=ids).status_code == 200
    with TestClient(create_app(Service(store), ServeSettings(max_body_bytes=size - 1, max_compare_bytes=size))) as c:
        assert "--max-body" in _error(c.get("/compare", params=ids), 413, "too_large")


def test_texts_of_too_many_similar_pairs_are_422(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """One sentence repeated on both sides: every pair is similar; past the matrix's limit, 422 naming it."""
    monkeypatch.setattr(matrix_module, "MAX_CANDIDATES", 2_500)
    repeated = "这是一个被重复很多次的句子。" * 51
    message = _error(client.post("/compare", json={"a": repeated, "b": repeated}), 422, "too_many_pairs")
    assert "more than 2,500 pairs of similar sentences" in message
    assert client.post("/compare", json={"a": repeated[:-14], "b": repeated[:-14]}).status_code == 200


class _Slow(MatrixComparer):
    """Every comparison takes 0.3 s more."""

    def screened(self, a: str, b: str, screen: Any) -> Any:
        time.sleep(0.3)
        return super().screened(a, b, screen)


class _Broken(MatrixComparer):
    def screened(self, a: str, b: str, screen: Any) -> Any:
        raise RuntimeError("secret internals")


def test_a_slow_request_is_504(store: Any) -> None:
    with TestClient(create_app(Service(store, comparer=_Slow()), ServeSettings(timeout=0.1))) as limited:
        started = time.monotonic()
        message = _error(limited.get("/search", params={"id": SOURCE}), 504, "timeout")
        assert "0.1 s" in message and time.monotonic() - started < 0.3 + 1.0
        assert limited.get("/health").status_code == 200  # the server goes on


def test_a_closed_store_is_503(folder: Path) -> None:
    local = open_store(path=folder, read_only=True)
    with TestClient(create_app(Service(local))) as c:
        assert c.get("/health").status_code == 200
        local.close()
        assert "closed" in _error(c.get("/search", params={"id": SOURCE}), 503, "store_unavailable")
        _error(c.get("/health"), 503, "store_unavailable")


def test_an_unexpected_failure_is_500_without_details(store: Any) -> None:
    with TestClient(create_app(Service(store, comparer=_Broken()))) as c:
        message = _error(c.get("/search", params={"id": SOURCE}), 500, "internal")
        assert "secret internals" not in message


# --------------------------------------------------------------------------- indexing


def test_read_only_by_default(client: TestClient) -> None:
    _error(client.post("/documents", json={"documents": [{"id": "x", "text": "新的文档。"}]}), 403, "read_only")


def test_indexing_when_allowed(tmp_path: Path) -> None:
    _index(tmp_path / "s", RECORDS[:5])
    local = LocalStore(tmp_path / "s")
    try:
        with TestClient(create_app(Service(local), ServeSettings(allow_index=True))) as c:
            docs = [{"id": "new", "text": BY_ID[SOURCE]["text"], "title": "copy"}, {"id": "empty", "text": "。"},
                    {"text": ["a list"]}, "not an object"]
            body = c.post("/documents", json={"documents": docs}).json()
            assert body["indexed"] == 1 and body["documents"] == 6
            assert [r["source"] for r in body["rejected"]] == ["documents[1]", "documents[2]", "documents[3]"]
            assert all(r["reason"] for r in body["rejected"])
            assert c.get("/search", params={"id": "new"}).status_code == 200
            found = c.post("/search", json={"text": BY_ID[SOURCE]["text"]}).json()["matches"]
            assert "new" in {m["id"] for m in found}
            _error(c.post("/documents", json={"documents": docs, "levels": "some"}), 400, "bad_input")
            _error(c.post("/documents", json={"docs": []}), 400, "bad_input")
    finally:
        local.close()


def test_other_processes_writes_are_seen(tmp_path: Path) -> None:
    _index(tmp_path / "s", RECORDS[:5])
    local = open_store(path=tmp_path / "s", read_only=True)
    try:
        with TestClient(create_app(Service(local), ServeSettings(refresh_every=0.01))) as c:
            assert c.get("/search", params={"id": SOURCE}).status_code == 404
            _index(tmp_path / "s", [BY_ID[SOURCE], _planted()])  # another writer
            time.sleep(0.02)
            ids = {m["id"] for m in c.get("/search", params={"id": SOURCE}).json()["matches"]}
            assert "planted" in ids
    finally:
        local.close()


# --------------------------------------------------------------------------- credentials


PASSWORD, API_KEY = "pw-S3CRET-5x1", "key-S3CRET-9q2"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_no_credentials_in_any_response() -> None:
    url = f"http://elastic:{PASSWORD}@127.0.0.1:{_closed_port()}"
    secrets = secrets_of({"es_url": url, "password": None, "api_key": None, "user": None})
    assert PASSWORD in secrets
    store = open_store(url, index="simdup-docs", engine="elasticsearch", max_retries=0, request_timeout=2)
    try:
        with TestClient(create_app(Service(store), ServeSettings(secrets=secrets))) as c:
            responses = [c.get("/health"), c.get("/search", params={"id": "a"}), c.post("/search", json={"text": "一段文字。"}),
                         c.get("/report/a"), c.get("/report/a.json"), c.get("/compare", params={"a": "a", "b": "b"}),
                         c.post("/documents", json=[{"text": "x"}]), c.get(f"/report/{PASSWORD}")]
    finally:
        store.close()
    assert [r.status_code for r in responses[:6]] == [503] * 6
    for r in responses:
        whole = r.text + json.dumps(dict(r.headers))
        assert PASSWORD not in whole and "elastic:" not in whole, r.text


def test_scrub_takes_out_url_credentials_and_secrets() -> None:
    assert scrub(f"at http://u:{PASSWORD}@h:9200/x and {API_KEY}", (API_KEY,)) == "at http://***@h:9200/x and ***"
    found = secrets_of({"es_url": None, "password": PASSWORD, "user": "elastic", "api_key": f"id:{API_KEY}"})
    assert PASSWORD in found and API_KEY in found and f"id:{API_KEY}" in found


def test_parse_size() -> None:
    assert [parse_size(s) for s in ("10M", "512k", "1.5MB", "2000", "1G")] == [10 << 20, 512 << 10, 3 << 19, 2000, 1 << 30]
    with pytest.raises(Exception, match="not a size"):
        parse_size("lots")


# --------------------------------------------------------------------------- under uvicorn


@contextmanager
def uvicorn_serving(app: Any) -> Iterator[str]:
    """The app under uvicorn in a thread, on a free port: its base URL."""
    import uvicorn

    port = _closed_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def test_concurrent_requests_over_uvicorn(store: Any) -> None:
    """Real sockets, 16 clients at once on one shared read-only store: every answer is the sequential one."""
    import httpx2

    ids = [EDITED, SOURCE, "planted", "zh-man-page:man3/flockfile.3", "zh-debref:pr01#2"]
    with uvicorn_serving(create_app(Service(store))) as base, httpx2.Client(base_url=base, timeout=60) as http:
        expected = {i: http.get("/search", params={"id": i}).json() for i in ids}

        def ask(n: int) -> tuple[str, int, Any]:
            doc_id = ids[n % len(ids)]
            r = http.get("/search", params={"id": doc_id})
            return doc_id, r.status_code, r.json()

        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(ask, range(80)))
    assert all(status == 200 and body == expected[i] for i, status, body in answers)


def test_indexing_while_searching_over_uvicorn(tmp_path: Path) -> None:
    """Writes and searches at once on one writable embedded store: every request answers, every write lands."""
    import httpx2

    _index(tmp_path / "s", [*RECORDS, _planted()])
    local = LocalStore(tmp_path / "s")
    batches = [[{"id": f"new-{b}-{i}", "text": f"{r['text']}\n第{b}批第{i}篇的补充说明。"} for i, r in enumerate(RECORDS[:10])]
               for b in range(4)]
    try:
        app = create_app(Service(local), ServeSettings(allow_index=True))
        with uvicorn_serving(app) as base, httpx2.Client(base_url=base, timeout=120) as http:
            def work(n: int) -> int:
                if n < len(batches):
                    r = http.post("/documents", json={"documents": batches[n]})
                    assert r.json()["indexed"] == len(batches[n]), r.text
                    return r.status_code
                return http.get("/search", params={"id": [SOURCE, EDITED][n % 2]}).status_code

            with ThreadPoolExecutor(12) as pool:
                statuses = list(pool.map(work, range(4 + 24)))
            assert statuses == [200] * len(statuses)
            assert http.get("/health").json()["documents"] == len(RECORDS) + 1 + 4 * 10
            found = {m["id"] for m in http.get("/search", params={"id": EDITED}).json()["matches"]}
            assert {f"new-{b}-2" for b in range(4)} <= found  # perlnumber.7#0 is RECORDS[2]
    finally:
        local.close()


# --------------------------------------------------------------------------- the command


@pytest.mark.parametrize("workers", [1, 2])
def test_the_serve_command_serves_read_only_and_stops(folder: Path, workers: int) -> None:
    import signal
    import subprocess
    import sys

    import httpx2

    port = _closed_port()
    cmd = [sys.executable, "-c", "from simdup_es.cli import main; main()", "serve", "--store", str(folder),
           "--port", str(port), "--log-level", "warning", "--workers", str(workers)]
    server = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    children: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                health = httpx2.get(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except httpx2.TransportError:
                assert server.poll() is None and time.monotonic() < deadline, "simdup serve did not start"
                time.sleep(0.2)
        assert health.json()["documents"] == len(RECORDS) + 1 and health.json()["indexing"] is False
        denied = httpx2.post(f"http://127.0.0.1:{port}/documents", json=[{"text": "新文档。"}])
        assert denied.status_code == 403
        children = [int(p) for p in Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()]
        assert len(children) == (workers if workers > 1 else 0)
        for _ in range(10):  # every worker answers, whichever gets the connection
            assert httpx2.get(f"http://127.0.0.1:{port}/search", params={"id": SOURCE}).status_code == 200
    finally:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=30)
    assert server.returncode == 0 and "serving read-only" in err and "Traceback" not in err
    assert not [c for c in children if Path(f"/proc/{c}").exists()]  # no worker left behind


def test_the_serve_command_says_what_is_wrong(tmp_path: Path) -> None:
    run = CliRunner().invoke(main, ["serve", "--store", str(tmp_path / "none"), "--port", "0"])  # 8000 may be taken
    assert run.exit_code != 0 and "no embedded store" in run.output
    run = CliRunner().invoke(main, ["serve", "--store", str(tmp_path), "--max-body", "lots"])
    assert run.exit_code != 0 and "not a size" in run.output


def test_serve_does_not_say_it_serves_before_it_fails(folder: Path, tmp_path: Path) -> None:
    run = CliRunner().invoke(main, ["serve", "--store", str(tmp_path / "none"), "--port", "0"])  # 8000 may be taken
    assert run.exit_code != 0 and "no embedded store" in run.output and "serving" not in run.output
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        run = CliRunner().invoke(main, ["serve", "--store", str(folder), "--port", str(taken.getsockname()[1])])
    assert run.exit_code != 0 and "cannot listen on 127.0.0.1" in run.output and "serving" not in run.output


def test_the_workers_socket_gets_nodelay_connections() -> None:
    """asyncio sets TCP_NODELAY only on connections of a socket with proto TCP: without it, 40 ms a small answer."""
    import asyncio

    from simdup_es.cli.serve_cmd import _listen

    sock = _listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    seen: list[int] = []

    async def run() -> None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            seen.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(handle, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            while not seen:
                await asyncio.sleep(0.01)
            writer.close()

    asyncio.run(asyncio.wait_for(run(), 10))
    assert sock.proto == socket.IPPROTO_TCP and seen == [1]


def test_the_command_says_what_searches_cannot_find(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from simdup_es.cli.serve_cmd import _look_at

    from simdup_es import Fingerprinter, FingerprintParams

    local = open_store(path=folder, read_only=True)
    _look_at(Service(local))
    assert capsys.readouterr().err == ""
    # Served with other --idf / --marked-words than the store was indexed with.
    _look_at(Service(local, fingerprinter=Fingerprinter(FingerprintParams(title_boost=5))))
    assert f"{len(RECORDS) + 1} stored documents of fingerprint version" in capsys.readouterr().err
    local.close()
    _look_at(Service(local))
    assert "serving anyway: requests get 503" in capsys.readouterr().err
