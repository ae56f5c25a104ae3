"""kill -9 of a real node mid-bulk, then a restart and ``index --resume`` (opt-in: SIMDUP_TEST_KILL_NODE=1).

It starts its own node (scripts/es-server, on a free port in 9450-9469) so the
shared node is never touched; starting it twice costs one to two minutes, which
is why the default run leaves it out. The proxy suite
(tests/integration/test_faults_cluster.py) covers the same client path by default:
a node that dies after writing a request and before answering it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

ROOT = Path(__file__).resolve().parents[2]
N = 20_000

pytestmark = pytest.mark.skipif(not os.environ.get("SIMDUP_TEST_KILL_NODE"),
                                reason="opt-in (starts its own node twice): set SIMDUP_TEST_KILL_NODE=1")


def _free_port() -> int:
    for port in range(9450, 9470):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return port
    pytest.fail("no free port in 9450-9469 for the test's own node")


def _es_server(port: int, command: str) -> subprocess.CompletedProcess[str]:
    # An Elasticsearch node the run's client talks to: 9 when the run is Elasticsearch 9's (client 9 refuses 8).
    engine = "es9" if os.environ.get("SIMDUP_TEST_ENGINE") == "es9" else "es8"
    env = {**os.environ, "SIMDUP_ES_PORT": str(port), "SIMDUP_ES_HEAP": "512m", "SIMDUP_ENGINE": engine}
    return subprocess.run([str(ROOT / "scripts/es-server"), command], env=env, capture_output=True, text=True,
                          timeout=300)


def _start(port: int) -> int:
    started = _es_server(port, "start")
    assert started.returncode == 0, started.stderr
    return int(re.findall(r"\(pid (\d+)\)", started.stderr)[-1])


def test_kill_9_mid_bulk_then_resume_writes_every_record_once(tmp_path: Path) -> None:
    data = tmp_path / "in.jsonl"
    with data.open("w", encoding="utf-8") as out:
        for i in range(N):
            out.write(json.dumps({"id": f"d{i}", "text": f"第{i}号通知：明天{i % 24}点在{i % 9}楼开第{i}次会。"},
                                 ensure_ascii=False) + "\n")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    index = "simdup-test-kill-9"
    pid = _start(port)
    try:
        client = Elasticsearch(url, request_timeout=30)
        client.options(ignore_status=404).indices.delete(index=index)
        command = [sys.executable, "-c", "from simdup_es.cli import main; main()", "index", str(data), "--es-url",
                   url, "--index", index, "--rejects", str(tmp_path / "rejects.jsonl"), "--batch-size", "500",
                   "--max-retries", "3", "--initial-backoff", "0.5"]
        run = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:  # kill once a few batches are in
            time.sleep(0.2)
            try:
                if client.options(ignore_status=404).count(index=index).get("count", 0) >= 2000:
                    break
            except Exception:  # noqa: BLE001 - the index may not exist yet
                pass
        os.kill(pid, signal.SIGKILL)
        _, stderr = run.communicate(timeout=300)
        assert run.returncode == 1, stderr
        assert "Traceback" not in stderr and "--resume" in stderr
        settled = json.loads((tmp_path / "rejects.resume.json").read_text())["settled"]
        assert 0 < settled < N

        _start(port)
        resumed = subprocess.run([*command, "--resume"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert resumed.returncode == 0, resumed.stderr
        assert f"read {N - settled} (after {settled} settled by the stopped run)" in resumed.stderr
        client.indices.refresh(index=index)
        assert client.count(index=index)["count"] == N
        assert not (tmp_path / "rejects.resume.json").exists() and not (tmp_path / "rejects.jsonl").exists()
        client.indices.delete(index=index)
        client.close()
    finally:
        _es_server(port, "stop")
