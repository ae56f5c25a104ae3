"""A bounded schemathesis run against ``simdup serve`` (a real server process over real sockets).

Positive and negative cases from the server's own OpenAPI description, read-only and with
``--allow-index``: no 5xx, every answer as described (status, content type, schema), invalid
requests refused with 4xx, valid ones answered (:mod:`tests.fuzz.hooks`). Stored ids
are offered to the fuzzer (a dictionary) so that searches, reports and comparisons reach the
store, not only 404. About a minute; run by ``scripts/test`` and ``.ci/run`` with the unit tests.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.unit.test_serve import RECORDS, _closed_port, _index

pytestmark = pytest.mark.fuzz

ROOT = Path(__file__).resolve().parents[2]
CHECKS = ["--checks", "all", "--exclude-checks", "positive_data_acceptance"]  # replaced by hooks.valid_requests_answered


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fuzz") / "store"
    _index(path, RECORDS[:40])
    return path


def _config(tmp: Path) -> Path:
    """Stored ids for the fuzzer to draw from, half of the time, wherever a query parameter or the path takes one.

    Not in bodies: a binding adds its field to bodies that have the other of ``id`` and ``text``."""
    ids = [r["id"] for r in RECORDS[:12]]
    bindings = {key: {"dictionary": "ids", "probability": 0.5} for key in ("query.id", "query.a", "query.b",
                                                                           "path.doc_id")}
    lines = [f"[dictionaries.ids]\nvalues = {json.dumps(ids, ensure_ascii=False)}", "[parameters]"]
    lines += [f'"{key}" = {{ dictionary = "{b["dictionary"]}", probability = {b["probability"]} }}'
              for key, b in bindings.items()]
    path = tmp / "schemathesis.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@contextmanager
def _serving(folder: Path, *options: str) -> Iterator[str]:
    port = _closed_port()
    server = subprocess.Popen([sys.executable, "-c", "from simdup_es.cli import main; main()", "serve", "--store",
                               str(folder), "--port", str(port), "--log-level", "warning", *options],
                              stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        for line in server.stderr:
            if "serving" in line:
                break
        assert server.poll() is None, "the server did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(30)


def _fuzz(url: str, config: Path, examples: int, *options: str) -> str:
    """Run schemathesis (in the config's folder, where it keeps its cache); its output, after checking it found
    nothing."""
    cmd = [sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "--no-color", "run",
           f"{url}/openapi.json", "--mode", "all", "-n", str(examples), "--seed", "7", "--request-timeout", "60",
           "--max-time", "45", *CHECKS, *options]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.fuzz.hooks", "PYTHONPATH": str(ROOT)}
    run = subprocess.run(cmd, cwd=config.parent, env=env, capture_output=True, text=True, timeout=600)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-6000:]
    generated = re.search(r"(\d+) generated", output)
    assert generated and int(generated.group(1)) >= 300, output[-3000:]  # a run that tried little proves little
    print(f"schemathesis: {generated.group(0)} cases, no failure ({' '.join(options) or 'all routes'})")
    return output


def test_fuzz_read_only(folder: Path, tmp_path: Path) -> None:
    with _serving(folder) as url:
        _fuzz(url, _config(tmp_path), 20, "--exclude-path", "/documents")


def test_fuzz_with_indexing(folder: Path, tmp_path: Path) -> None:
    writable = tmp_path / "store"
    shutil.copytree(folder, writable)
    with _serving(writable, "--allow-index") as url:
        _fuzz(url, _config(tmp_path), 20, "--include-path", "/documents", "--include-path", "/search",
              "--include-path", "/health")
