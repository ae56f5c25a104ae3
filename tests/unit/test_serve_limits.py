"""simdup serve bounds what a request can cost and whom it answers: every client error a 4xx JSON answer,
a call's thread slot held until it ends, writes only as JSON from a program (or the server's own pages)
with the token when one is set, and the command's connection limits over real sockets."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from simdup_es.cli.serve_cmd import secrets_of
from simdup_es.serve import MAX_DEPTH, ServeSettings, create_app
from simdup_es.service import Service
from simdup_es.store import open_store
from simdup_es.store.local import LocalStore
from tests.unit.test_serve import BY_ID, JSON, RECORDS, SOURCE, _closed_port, _error, _index

TEXT = BY_ID[SOURCE]["text"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("limits") / "store"
    _index(path, RECORDS[:40] if SOURCE in {r["id"] for r in RECORDS[:40]} else [*RECORDS[:39], BY_ID[SOURCE]])
    return path


@pytest.fixture(scope="module")
def client(folder: Path) -> Iterator[TestClient]:
    store = open_store(path=folder, read_only=True)
    with TestClient(create_app(Service(store))) as c:
        yield c
    store.close()


def _post(client: TestClient, path: str, body: bytes, **headers: str) -> Any:
    return client.post(path, content=body, headers={**JSON, **headers})


# --------------------------------------------------------------------------- 4xx, never 500


@pytest.mark.parametrize("path, body", [
    ("/search", b"[" * 980 + b"]" * 980),  # past Python's recursion limit: was 500
    ("/search", b'{"text": "x", "k": ' + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1) + b"}"),
    ("/search", b'{"id": "\\ud800"}'),  # a lone surrogate reached SQLite: was 500
    ("/report", b'{"id": "\\udfff"}'),
    ("/compare", b'{"a": "\\ud800\\u4e00", "b": "x"}'),
    ("/search", b'{"text": "x", "\\ud800": 1}'),  # in a field name: was a plain-text 500
    ("/search", b'{"text": "x", "limit": ' + b"9" * 5000 + b"}"),
    ("/search", '{"id": "\udcff"}'.encode("utf-8", "surrogatepass")),  # an encoded surrogate: not UTF-8
])
def test_malformed_bodies_are_400_json(client: TestClient, path: str, body: bytes) -> None:
    message = _error(_post(client, path, body), 400, "bad_json")
    message.encode("utf-8")  # the answer itself is UTF-8


def test_a_surrogate_pair_is_a_character_and_accepted(client: TestClient) -> None:
    body = json.dumps({"text": TEXT + " \U0001F600"}).encode()  # ensure_ascii: the pair as two escapes
    assert b"\\ud83d\\ude00" in body
    assert _post(client, "/search", body).status_code == 200


@pytest.mark.parametrize("params", [{"text": "x", "limit": "9" * 5000}, {"id": SOURCE, "k": "-" + "9" * 5000},
                                    {"text": "x", "partial_threshold": "9" * 5000}])
def test_a_5000_digit_query_parameter_is_400(client: TestClient, params: dict[str, str]) -> None:
    message = _error(client.get("/search", params=params), 400, "bad_input")
    assert len(message) <= 2001  # the value quoted in it is cut


def test_a_flag_in_a_body_is_a_json_boolean(client: TestClient) -> None:
    """In a query string a flag is text (``spans=false``); in JSON it is ``true`` or ``false``, not a string."""
    for spans in ("", "false", 0):
        assert "spans must be true or false" in _error(client.post("/search", json={"id": SOURCE, "spans": spans}), 400,
                                                       "bad_input")
    found = client.get("/search", params={"id": SOURCE, "spans": "false"}).json()["matches"]
    assert found and all(m["spans"] is None for m in found)
    for word in ("maybe", "", "FALSE"):  # the six words of the OpenAPI description, no others
        _error(client.get("/search", params={"id": SOURCE, "spans": word}), 400, "bad_input")


# --------------------------------------------------------------------------- smaller: 405, unknown fields, 504


def test_405_says_which_methods_are_allowed(client: TestClient) -> None:
    response = client.delete("/search")
    assert "POST" in _error(response, 405, "method_not_allowed")
    assert set(response.headers["allow"].replace(" ", "").split(",")) == {"GET", "HEAD", "POST"}
    assert client.put("/documents").headers["allow"] == "POST"


def test_posted_documents_with_unknown_fields_are_refused_naming_them(tmp_path: Path) -> None:
    _index(tmp_path / "s", RECORDS[:3])
    local = LocalStore(tmp_path / "s")
    try:
        with TestClient(create_app(Service(local), ServeSettings(allow_index=True))) as c:
            assert "unknown field level;" in _error(c.post("/documents", json={"documents": [], "level": "all"}), 400,
                                                         "bad_input")
            body = c.post("/documents", json=[{"id": "ok", "text": TEXT, "url": "https://example.org/a"},
                                              {"id": "typo", "text": TEXT, "titel": "A"}]).json()
            assert body["indexed"] == 1
            [reject] = body["rejected"]
            assert reject["id"] == "typo" and reject["source"] == "documents[1]" and "'titel'" in reject["reason"]
            assert local.get(["typo"]) == []
    finally:
        local.close()


class _SlowStore(LocalStore):
    """Writes take 0.6 s, and count their calls."""

    calls: list[int] = []

    def put(self, docs: Any, **kw: Any) -> Any:
        self.calls.append(len(docs))
        time.sleep(0.6)
        return super().put(docs, **kw)


def test_a_504_on_a_write_says_it_may_still_land_and_the_embedded_store_writes_all_or_none(tmp_path: Path) -> None:
    _index(tmp_path / "s", RECORDS[:3])
    local = _SlowStore(tmp_path / "s")
    docs = [{"id": f"n{i}", "text": f"{TEXT}\n第{i}篇。"} for i in range(1200)]
    try:
        with TestClient(create_app(Service(local), ServeSettings(allow_index=True, timeout=0.3))) as c:
            message = _error(c.post("/documents", json=docs), 504, "timeout")
            assert "may still be written" in message and "all of them or none" in message
            deadline = time.monotonic() + 60
            while len(local.get(["n0", "n1199"])) < 2:  # it lands after the answer
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert _SlowStore.calls == [1200]  # one batch: one transaction (LocalStore.put)
    finally:
        local.close()


# --------------------------------------------------------------------------- slots


class _Slow(Service):
    """Each search takes 0.5 s more; how many run at once, and how many started."""

    def __init__(self, store: Any) -> None:
        super().__init__(store)
        self.lock = threading.Lock()
        self.running = self.most = self.started = 0

    def search(self, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            self.started += 1
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            time.sleep(0.5)
            return super().search(*args, **kwargs)
        finally:
            with self.lock:
                self.running -= 1


def test_a_timed_out_call_keeps_its_slot_and_a_waiting_one_never_starts(folder: Path) -> None:
    store = open_store(path=folder, read_only=True)
    gate = _Slow(store)
    try:
        app = create_app(gate, ServeSettings(threads=1, timeout=0.2))
        with TestClient(app) as c, ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda _: c.get("/search", params={"id": SOURCE}).status_code, range(4)))
            assert answers == [504] * 4
            deadline = time.monotonic() + 30
            while gate.running:  # the one call that started ends in its own time
                assert time.monotonic() < deadline
                time.sleep(0.05)
            assert c.get("/health").status_code == 200
        assert gate.most == 1  # --threads 1: never two calls at once, 504 or not
        assert gate.started == 1  # the three that waited for the slot past their time never started
    finally:
        store.close()


def test_a_request_whose_client_leaves_never_starts_its_call(folder: Path) -> None:
    """Over a real socket: a search waiting for the one slot, its client gone, is given up, not run later."""
    from tests.unit.test_serve import uvicorn_serving

    store = open_store(path=folder, read_only=True)
    gate = _Slow(store)
    request = f"GET /search?id={SOURCE} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    try:
        app = create_app(gate, ServeSettings(threads=1, timeout=30))
        with uvicorn_serving(app) as base:
            port = int(base.rsplit(":", 1)[1])
            with socket.create_connection(("127.0.0.1", port)) as first:
                first.sendall(request)
                _wait_for(lambda: gate.running == 1)  # the first search holds the slot
                with socket.create_connection(("127.0.0.1", port)) as second:
                    second.sendall(request)
                    time.sleep(0.2)  # waiting for the slot
                assert first.recv(12) == b"HTTP/1.1 200"
            time.sleep(1.0)  # the slot is free again: the second search would start now, had it not been given up
            assert gate.started == 1
    finally:
        store.close()


def _wait_for(condition: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


# --------------------------------------------------------------------------- who may write


@pytest.fixture
def writable(tmp_path: Path) -> Iterator[LocalStore]:
    _index(tmp_path / "s", RECORDS[:3])
    local = LocalStore(tmp_path / "s")
    yield local
    local.close()


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                                          None, "application/jsonx"])
def test_bodies_not_declared_json_are_415(writable: LocalStore, content_type: str | None) -> None:
    body = json.dumps([{"id": "x", "text": TEXT}]).encode()
    with TestClient(create_app(Service(writable), ServeSettings(allow_index=True))) as c:
        headers = {"content-type": content_type} if content_type else {}
        for path in ("/documents", "/search", "/report", "/compare"):
            response = c.post(path, content=body, headers=headers)
            assert "Content-Type: application/json" in _error(response, 415, "unsupported_media_type")
        assert writable.get(["x"]) == []
        assert c.post("/documents", content=body, headers={"content-type": "application/json; charset=utf-8"}).json()[
            "indexed"] == 1


def test_a_foreign_origin_cannot_write(writable: LocalStore) -> None:
    with TestClient(create_app(Service(writable), ServeSettings(allow_index=True)), base_url="http://127.0.0.1:8000") as c:
        for origin in ("http://evil.example", "null", "http://127.0.0.1:9999"):
            message = _error(c.post("/documents", json=[{"id": "x", "text": TEXT}], headers={"origin": origin}), 403,
                             "forbidden_origin")
            assert origin in message
        assert writable.get(["x"]) == []
        same = c.post("/documents", json=[{"id": "x", "text": TEXT}], headers={"origin": "http://127.0.0.1:8000"})
        assert same.json()["indexed"] == 1


def test_a_loopback_server_answers_only_its_own_host_names(writable: LocalStore) -> None:
    settings = ServeSettings(allowed_hosts=("localhost", "127.0.0.1", "::1"))
    with TestClient(create_app(Service(writable), settings), base_url="http://127.0.0.1:8000") as c:
        for host in ("127.0.0.1:8000", "localhost", "[::1]:8000", "LOCALHOST:1"):
            assert c.get("/health", headers={"host": host}).status_code == 200, host
        for host in ("rebound.example:8000", "127.0.0.2", ""):
            _error(c.get("/health", headers={"host": host}), 403, "forbidden_host")


def test_a_token_is_required_for_writes_when_set(writable: LocalStore) -> None:
    token = "tok-S3CRET-41"
    with TestClient(create_app(Service(writable), ServeSettings(allow_index=True, token=token))) as c:
        docs = [{"id": "x", "text": TEXT}]
        for given in ({}, {"authorization": "Bearer wrong"}, {"authorization": token}):
            response = c.post("/documents", json=docs, headers=given)
            assert token not in _error(response, 401, "unauthorized")
            assert response.headers["www-authenticate"].startswith("Bearer")
        assert c.get("/search", params={"id": SOURCE}).status_code in (200, 404)  # reads need none
        assert c.post("/documents", json=docs, headers={"authorization": f"Bearer {token}"}).json()["indexed"] == 1


# --------------------------------------------------------------------------- credentials


def test_a_password_in_the_url_is_masked_as_written_sent_and_base64() -> None:
    import base64

    found = secrets_of({"es_url": "https://elastic:p%40ss-S3CRET@es:9200", "password": None, "api_key": None,
                        "user": None})
    assert {"p%40ss-S3CRET", "p@ss-S3CRET", base64.b64encode(b"elastic:p@ss-S3CRET").decode()} <= set(found)


def test_the_startup_warning_masks_what_the_cluster_echoes(tmp_path: Path) -> None:
    """A cluster that is down when serve starts: the warning names the URL without its password."""
    password = "pw-S3CRET-echo"
    port = _closed_port()
    server = subprocess.Popen([sys.executable, "-c", "from simdup_es.cli import main; main()", "serve", "--es-url",
                               f"http://elastic:{password}@127.0.0.1:{_closed_port()}", "--port", str(port),
                               "--log-level", "warning"], stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        assert server.stderr is not None
        for line in server.stderr:
            lines.append(line)
            if "serving" in line:
                break
    finally:
        server.terminate()
        server.wait(30)
    text = "".join(lines)
    assert "does not answer" in text and password not in text, text


# --------------------------------------------------------------------------- the command's connection limits


@pytest.fixture(scope="module")
def served(folder: Path) -> Iterator[int]:
    port = _closed_port()
    server = subprocess.Popen([sys.executable, "-c", "from simdup_es.cli import main; main()", "serve", "--store",
                               str(folder), "--port", str(port), "--log-level", "warning", "--max-header", "8k",
                               "--idle-timeout", "1"], stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        for line in server.stderr:
            if "serving" in line:
                break
        yield port
    finally:
        server.terminate()
        server.wait(30)


def _exchange(port: int, *parts: bytes, pause: float = 0.0) -> bytes:
    """What the server answers to ``parts`` sent in turn; ``b"closed early"`` if it closed before all were sent."""
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        try:
            for part in parts:
                s.sendall(part)
                time.sleep(pause)
        except (BrokenPipeError, ConnectionResetError):
            return b"closed early"
        with contextlib.suppress(ConnectionResetError):
            while chunk := s.recv(65536):
                answer += chunk
    return answer


def test_a_head_over_the_limit_is_431(served: int) -> None:
    big = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 20_000 + b"\r\nConnection: close\r\n\r\n"
    assert _exchange(served, big).startswith(b"HTTP/1.1 431 ")
    in_pieces = [big[i:i + 4000] for i in range(0, len(big), 4000)]  # over many reads
    assert _exchange(served, *in_pieces, pause=0.05)[:13] in (b"HTTP/1.1 431 ", b"closed early")
    small = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Small: " + b"a" * 4000 + b"\r\nConnection: close\r\n\r\n"
    assert _exchange(served, small).startswith(b"HTTP/1.1 200 ")


def test_idle_and_slow_connections_are_closed(served: int) -> None:
    started = time.monotonic()
    assert _exchange(served) == b""  # nothing sent: closed after --idle-timeout
    assert _exchange(served, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n") == b""  # a head never finished
    assert time.monotonic() - started < 8


class _Echo(threading.Thread):
    """An HTTP server that answers every request 401 with the request's Authorization header in its body, as a
    misconfigured proxy in front of a cluster may."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._echo()

            def do_POST(self) -> None:
                self._echo()

            def do_HEAD(self) -> None:
                self._echo()

            def _echo(self) -> None:
                body = json.dumps({"error": f"refused: Authorization was {self.headers.get('authorization')}"}).encode()
                self.send_response(401)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(daemon=True)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]

    def run(self) -> None:
        self.server.serve_forever()


def test_what_a_proxy_echoes_is_masked_in_answers_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    import base64
    import logging

    echo = _Echo()
    echo.start()
    written, password = "p%40ss-S3CRET-echo", "p@ss-S3CRET-echo"
    url = f"http://elastic:{written}@127.0.0.1:{echo.port}"
    secrets = secrets_of({"es_url": url, "password": None, "api_key": None, "user": None})
    store = open_store(url, index="simdup-docs", engine="elasticsearch", max_retries=0, request_timeout=5)
    hidden = [written, password, base64.b64encode(f"elastic:{password}".encode()).decode()]
    try:
        with caplog.at_level(logging.DEBUG), TestClient(create_app(Service(store), ServeSettings(secrets=secrets))) as c:
            answers = [c.get("/health"), c.get("/search", params={"id": "a"}), c.get("/report/a.json")]
    finally:
        store.close()
        echo.server.shutdown()
    assert [a.status_code for a in answers] == [503] * 3, [a.text for a in answers]
    assert any("***" in a.text for a in answers)  # the echo reached the message, masked
    shown = " ".join(a.text for a in answers) + caplog.text
    assert not [h for h in hidden if h in shown], shown


_FREED = """
import sys
from simdup_es.serve_http import give_back_freed_memory
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096
print(give_back_freed_memory(), end=" ")
a = bytearray(30 << 20); del a  # by default glibc now takes buffers under 30 MiB from heaps that keep them
before = rss()
b = bytearray(20 << 20); del b
print((rss() - before) >> 20)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt, and /proc")
def test_the_server_gives_a_large_buffer_back_to_the_system_once_freed(monkeypatch: pytest.MonkeyPatch) -> None:
    # A request's buffers of tens of MB: freed, they leave the process (without it, 20 MB stay: the next request's
    # peak starts above them).
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    done = subprocess.run([sys.executable, "-c", _FREED], capture_output=True, text=True, check=True)
    applied, kept = done.stdout.split()
    assert applied == "True" and int(kept) < 4
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")  # the user's setting stands
    assert subprocess.run([sys.executable, "-c", _FREED], capture_output=True, text=True, check=True).stdout.startswith("False")
