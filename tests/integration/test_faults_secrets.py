"""Secrets under faults: every command that talks to the cluster, in every failure mode, at -vv.

The output (stdout, stderr and every log record at DEBUG, the client's included)
is searched for the password, the API key and the ``Authorization`` header
values (base64). The proxy proves each secret was really sent first.
"""

from __future__ import annotations

import base64
import itertools
import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from simdup_es.cli import main
from simdup_es.es.engine import product_of
from tests.integration.fault_proxy import FaultProxy

USER, PASSWORD = "elastic", "pw-S3CRET-91ac"
API_KEY_ID, API_KEY = "key-id-5e1f", "apikey-S3CRET-77d0"
SECRETS = [PASSWORD, API_KEY, base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode(),
           base64.b64encode(f"{API_KEY_ID}:{API_KEY}".encode()).decode()]
CREDENTIALS = [["--user", USER, "--password", PASSWORD], ["--api-key", f"{API_KEY_ID}:{API_KEY}"]]
MODES = ["down", "401", "429_everything", "item_429_for_good", "resets_and_delays", "ok"]


def set_mode(proxy: FaultProxy, mode: str) -> None:
    proxy.down = mode == "down"
    proxy.refuse = 401 if mode == "401" else None
    proxy.everything = mode == "429_everything"
    proxy.bulk_429 = 1.0 if mode == "429_everything" else 0.0
    proxy.item_429 = 1.0 if mode == "item_429_for_good" else 0.0
    proxy.reset, proxy.delay = (0.5, 0.05) if mode == "resets_and_delays" else (0.0, 0.0)


@pytest.fixture
def plain_index(es_client, es_index: str) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """An index simdup did not create, for backfill."""
    name = es_index + "-plain"
    for i in range(20):
        es_client.index(index=name, id=f"p{i}", document={"text": f"第{i}份报告：本季度销售额增长了{i}成。"})
    es_client.indices.refresh(index=name)
    yield name
    es_client.options(ignore_status=404).indices.delete(index=name)


def test_no_secret_in_any_output_of_any_command_in_any_mode(es_url: str, es_index: str, plain_index: str,  # type: ignore[no-untyped-def]
                                                            tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps({"id": f"d{i}", "text": f"第{i}号通知：明天{i}点在三楼开会。"}, ensure_ascii=False)
                            + "\n" for i in range(20)), encoding="utf-8")
    bounded = ["--max-retries", "1", "--initial-backoff", "0.01"]
    commands = {
        "setup": ["setup", "--index", es_index],
        "index": ["index", str(data), "--index", es_index, "--workers", "1", "--rejects", str(tmp_path / "r.jsonl"),
                  *bounded],
        "search": ["search", "--text", "第3号通知：明天3点在三楼开会。", "--index", es_index],
        "groups": ["groups", "--index", es_index, *bounded],
        "backfill": ["backfill", "--field", "text", "--index", plain_index, "--workers", "1", "--rejects",
                     str(tmp_path / "b.jsonl"), *bounded],
    }
    outcomes: dict[tuple[str, str], int] = {}
    with FaultProxy(es_url) as proxy:
        for n, (mode, name) in enumerate(itertools.product(MODES, commands)):
            set_mode(proxy, mode)
            caplog.clear()
            result = CliRunner().invoke(main, ["-vv", *commands[name], "--es-url", proxy.url, *CREDENTIALS[n % 2]])
            where = f"{name} in mode {mode}"
            assert result.exception is None or isinstance(result.exception, SystemExit), (where, result.exception)
            assert "Traceback" not in result.output, where  # (the client's DEBUG records may carry one)
            for secret in SECRETS:
                assert secret not in result.output and secret not in caplog.text, (where, secret)
            outcomes[(mode, name)] = result.exit_code
        assert proxy.authorization  # the secrets went out, in the headers
        sent = " ".join(proxy.authorization)
        assert SECRETS[2] in sent and (API_KEY in sent or SECRETS[3] in sent)
    # The faults were felt: every command fails when the cluster is down or refuses, and works without faults.
    assert all(outcomes[("down", name)] == outcomes[("401", name)] == 1 for name in commands), outcomes
    assert all(outcomes[("ok", name)] == 0 for name in commands), outcomes


@pytest.mark.parametrize("credentials", CREDENTIALS, ids=["basic", "api_key"])
def test_no_secret_on_the_real_stderr(credentials: list[str], es_url: str, es_client: Any, es_index: str,
                                      tmp_path: Path) -> None:
    """One real process per credential kind: warnings, handlers and prints as a user sees them."""
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps({"id": "a", "text": "今天下午三点开会。"}, ensure_ascii=False) + "\n", encoding="utf-8")
    with FaultProxy(es_url) as proxy:
        proxy.item_429 = 1.0
        run = subprocess.run(
            [sys.executable, "-c", "from simdup_es.cli import main; main()", "-vv", "index", str(data), "--es-url",
             proxy.url, "--index", es_index, "--workers", "1", "--max-retries", "2", "--initial-backoff", "0.01",
             *credentials], capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert proxy.authorization
    assert run.returncode == 1 and "--resume" in run.stderr
    # The message names the engine of the node (Elasticsearch, or OpenSearch in scripts/test-engines).
    assert run.stderr.strip().splitlines()[-1].startswith(f"Error: {product_of(es_client)} stayed too busy (429)")
    for secret in SECRETS:
        assert secret not in run.stdout + run.stderr


@pytest.mark.parametrize("credentials", [[], *CREDENTIALS], ids=["none", "basic", "api_key"])
def test_a_401_says_whether_credentials_were_given(credentials: list[str], es_url: str, es_index: str) -> None:
    """It said "refused the credentials" also when none had been given."""
    with FaultProxy(es_url) as proxy:
        proxy.refuse = 401
        for engine in ([] if credentials else [["--engine", "elasticsearch"]]) + [[]]:
            result = CliRunner().invoke(main, ["search", "--text", "今天下午三点开会。", "--index", es_index,
                                               "--es-url", proxy.url, *credentials, *engine])
            assert result.exit_code == 1 and "Traceback" not in result.output, result.output
            if credentials:
                assert "refused the credentials" in result.output and "none were given" not in result.output
            else:
                assert "asks for credentials" in result.output and "none were given" in result.output
                assert "refused the credentials" not in result.output and proxy.url in result.output
