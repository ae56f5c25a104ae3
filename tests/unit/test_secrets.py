"""Secrets never reach the output: URLs the client refuses, for every command that connects."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from simdup_es.cli import main
from simdup_es.errors import ConfigError
from simdup_es.es.connection import ConnectionSettings

PASSWORD = "pw-SECRET-7f3a"
REFUSED = [
    f"http://elastic:{PASSWORD}@127.0.0.1:99999",  # port out of range
    f"http://elastic:{PASSWORD}@127.0.0.1:port",  # port not a number
    f"http://elastic:{PASSWORD}@[::1:9200",  # unclosed IPv6 bracket
    f"http://elastic:{PASSWORD}@127.0.0.1:-1",
    f"http://elastic:{PASSWORD}\uff03x@127.0.0.1:9200",  # NFKC check: Python's message quotes the netloc
]
COMMANDS = [
    ["search", "--no-matrix", "--text", "你好"],
    ["search", "--no-matrix", "--id", "x"],
    ["index", "-"],
    ["setup"],
    ["groups"],
    ["backfill", "--field", "text"],
]


@pytest.mark.parametrize("url", REFUSED)
def test_settings_refuse_the_url_without_quoting_the_password(url: str) -> None:
    with pytest.raises(ConfigError, match="cluster URL") as info:  # engine auto: not known yet
        ConnectionSettings(url=url).client()
    assert PASSWORD not in str(info.value) and info.value.__cause__ is None and info.value.__suppress_context__


@pytest.mark.parametrize(("command", "url"), [(c, REFUSED[n % len(REFUSED)]) for n, c in enumerate(COMMANDS)],
                         ids=[c[0] for c in COMMANDS])
def test_every_command_gives_one_line_without_the_password(command: list[str], url: str, tmp_path) -> None:
    result = CliRunner().invoke(main, ["-vv", *command, "--es-url", url, "--index", "x"], input="",
                                env={"SIMDUP_ES_URL": None, "SIMDUP_STORE": None})
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, ValueError) and "Traceback" not in result.output
    assert PASSWORD not in result.output
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and "cluster URL" in error[0]
    assert "***@" in error[0] or "unparseable" in error[0]


def test_the_whole_output_of_a_real_process_holds_no_password(tmp_path) -> None:
    """Logging as the command sets it up (-vv: DEBUG, the client's loggers too), through a real stderr."""
    code = "from simdup_es.cli import main; main()"
    run = subprocess.run([sys.executable, "-c", code, "-vv", "setup", "--es-url", REFUSED[0]],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 1
    assert PASSWORD not in run.stdout + run.stderr and "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines()[-1].startswith("Error: cluster URL 'http://***@127.0.0.1:99999'")


@pytest.mark.parametrize(("env", "said"), [
    ({"SIMDUP_ES_API_KEY": "c2VjcmV0a2V5OnNlY3JldA==\r"}, "the API key holds a control character"),
    ({"SIMDUP_ES_API_KEY": "密钥c2VjcmV0"}, "the API key holds characters that are not ASCII"),
    ({"SIMDUP_ES_USER": "elastic", "SIMDUP_ES_PASSWORD": "pässwörd密"}, "the password holds characters that HTTP basic"),
    ({"SIMDUP_ES_USER": "elastic", "SIMDUP_ES_PASSWORD": "secret\n"}, "the password holds a control character"),
])
def test_a_credential_no_header_can_carry_is_named_not_quoted(env: dict[str, str], said: str) -> None:
    """A CRLF env file left a '\\r' on the key: the client's error quoted the whole header, key and all."""
    result = CliRunner().invoke(main, ["search", "--text", "今天天气很好，我们去公园散步吧。", "--es-url",
                                       "http://127.0.0.1:9"], env={"SIMDUP_STORE": None, **env})
    assert result.exit_code == 1 and said in result.output and "Traceback" not in result.output, result.output
    secret = next(v for k, v in env.items() if k != "SIMDUP_ES_USER").strip()
    assert secret not in result.output and "cluster URL" not in result.output

