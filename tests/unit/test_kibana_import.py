"""The saved objects ship in the package, link each document to its report, and import.

No Kibana or OpenSearch Dashboards can be installed here (neither is on PyPI, npm,
Maven Central or in Debian): the import is checked on what it sends, to a local HTTP
server that answers as the import API does and records each request.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import shutil
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from simdup_es import dashboards
from simdup_es.cli import main
from simdup_es.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _objects(data: bytes) -> dict[str, dict[str, Any]]:
    return {o["id"]: o for o in map(json.loads, data.decode("utf-8").splitlines())}


@pytest.mark.parametrize("which", dashboards.DASHBOARDS)
def test_each_document_links_to_its_report_page(which: dashboards.Dashboards) -> None:
    shipped = _objects((ROOT / "kibana" / dashboards.FILES[which]).read_bytes())
    formats = json.loads(shipped[dashboards.DATA_VIEW]["attributes"]["fieldFormatMap"])
    assert formats["_id"] == {"id": "url", "params": {"urlTemplate": "http://127.0.0.1:8000/report/{{value}}?format=html",
                                                      "labelTemplate": "{{value}}"}}
    assert shipped["simdup-duplicate-groups"]["attributes"]["columns"][0] == "_id"
    # The package's copy is the repository's, with the base URL and date field written in.
    data = dashboards.saved_objects(which, base_url="https://reports.example.org/simdup/", date_field="published_at")
    objects = _objects(data)
    assert set(objects) == set(shipped)
    link = json.loads(objects[dashboards.DATA_VIEW]["attributes"]["fieldFormatMap"])["_id"]
    assert link["params"]["urlTemplate"] == "https://reports.example.org/simdup/report/{{value}}?format=html"
    assert b"@timestamp" not in data and b"published_at" in data
    assert _objects(dashboards.saved_objects(which)) == shipped


def test_bad_base_urls_and_date_fields_are_refused() -> None:
    for bad in ("127.0.0.1:8000", "ftp://host", 'http://host/"x', ""):
        with pytest.raises(ConfigError, match="address of simdup serve"):
            dashboards.saved_objects(base_url=bad)
    with pytest.raises(ConfigError, match="field name"):
        dashboards.saved_objects(date_field="a b")
    result = CliRunner().invoke(main, ["kibana", "objects", "--base-url", "localhost:8000"])
    assert result.exit_code == 1 and "address of simdup serve" in result.output and result.exception is not None


def test_the_import_script_rewrites_the_same_link() -> None:
    script = (ROOT / "kibana" / "import.sh").read_text(encoding="utf-8")
    template = dashboards.report_link(dashboards.DEFAULT_BASE_URL)["params"]["urlTemplate"]  # type: ignore[index]
    assert f"s#{template.removesuffix('{{value}}?format=html')}#$BASE_URL/report/#g" in script
    assert "SIMDUP_BASE_URL" in script


class _Recorder(BaseHTTPRequestHandler):
    """Answers as Kibana's (or, with ``osd``, OpenSearch Dashboards') status and import APIs do."""

    requests: list[dict[str, Any]]
    osd = False
    answer: tuple[int, dict[str, Any]] | None = None

    def log_message(self, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        if self.osd:
            self.send_header("osd-name", "opensearch-dashboards")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        self.requests.append({"method": "GET", "path": self.path, "headers": dict(self.headers)})
        self._reply(200, {"status": {"overall": {"level": "available"}}})

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode() + body)
        parts = [(p.get_param("name", header="content-disposition"), p.get_filename(), p.get_content())
                 for p in message.iter_parts()]
        self.requests.append({"method": "POST", "path": self.path, "headers": dict(self.headers), "parts": parts})
        if self.answer:
            self._reply(*self.answer)
            return
        count = len(parts[0][2].splitlines()) if parts else 0
        self._reply(200, {"success": True, "successCount": count})


@pytest.fixture()
def recorder() -> Iterator[tuple[str, type[_Recorder]]]:
    handler = type("Handler", (_Recorder,), {"requests": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", handler
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("osd", [False, True])
def test_import_sends_the_objects_for_the_dashboards_it_finds(recorder: tuple[str, type[_Recorder]],
                                                             osd: bool) -> None:
    url, handler = recorder
    handler.osd = osd
    result = CliRunner().invoke(main, ["kibana", "import", "--kibana-url", url + "/s/team", "--base-url",
                                       "http://reports:8000", "--user", "elastic", "--password", "pw"])
    assert result.exit_code == 0, result.output
    which = "opensearch-dashboards" if osd else "kibana"
    get, post = handler.requests
    assert get["path"] == "/s/team/api/status"
    assert post["path"] == "/s/team/api/saved_objects/_import?overwrite=true"
    xsrf = {"osd-xsrf", "kbn-xsrf"} & {k.lower() for k in post["headers"]}
    assert xsrf == {"osd-xsrf" if osd else "kbn-xsrf"}
    assert post["headers"]["Authorization"] == "Basic ZWxhc3RpYzpwdw=="  # elastic:pw
    ((name, filename, content),) = post["parts"]
    assert name == "file" and filename.endswith(".ndjson")
    assert content == dashboards.saved_objects(which, base_url="http://reports:8000")
    assert f"imported 7 saved objects into {which}" in result.stderr
    assert "http://reports:8000/report/ID" in result.stderr


def test_a_failed_import_says_why_and_exits_1(recorder: tuple[str, type[_Recorder]]) -> None:
    url, handler = recorder
    handler.answer = (200, {"success": False, "successCount": 0,
                            "errors": [{"id": "simdup-largest-groups", "type": "lens",
                                        "error": {"type": "unsupported_type"}}]})
    result = CliRunner().invoke(main, ["kibana", "import", "--kibana-url", url, "--dashboards", "kibana"])
    assert result.exit_code == 1 and result.exception is not None and not handler.requests[0]["method"] == "GET"
    assert "unsupported_type" in result.output and "--dashboards opensearch-dashboards" in result.output
    handler.answer = (401, {"statusCode": 401, "message": "Unauthorized"})
    result = CliRunner().invoke(main, ["kibana", "import", "--kibana-url", url, "--dashboards", "kibana"])
    assert result.exit_code == 1 and "give credentials" in result.output


def test_the_wheel_holds_the_saved_objects(tmp_path: Path) -> None:
    """Build a wheel from a copy of the sources and look inside: no repository checkout needed to import."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    for folder in ("simdup_es", "mappings", "kibana"):
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    # As a user's pip builds it: in an isolated environment with the setuptools pyproject.toml asks for.
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"),
                            str(src)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("simdup_es-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for which in dashboards.DASHBOARDS:
        assert f"simdup_es/kibana/{dashboards.FILES[which]}" in names
    assert "simdup_es/dashboards.py" in names and "simdup_es/cli/kibana_cmds.py" in names
    assert not any(n.endswith((".sh", ".js")) for n in names)  # the shell importer stays in the repository
