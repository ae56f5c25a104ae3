"""What the command line says: the report's exclusions, a mistyped id, an unusable --exclude-file, an empty text."""

from __future__ import annotations

import importlib.resources
import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from simdup_es.cli import main

SAMPLE = str(importlib.resources.files("simdup_es.data") / "sample.jsonl")
DOC = "zh-man:man7/perlnumber.7#0"


def _run(*args: str) -> CliRunner:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("messages") / "store")
    assert _run("index", SAMPLE, "--store", path).exit_code == 0
    return path


def test_the_report_names_each_excluded_file_and_the_common_threshold(store: str, tmp_path: Path) -> None:
    template = tmp_path / "template.txt"
    template.write_text("本文件仅供内部参考，未经许可不得转载。", encoding="utf-8")
    result = _run("report", "--store", store, "--id", DOC, "--exclude-file", str(template), "--common", "50", "--json")
    assert result.exit_code == 0, result.output
    said = json.loads(result.stdout)["exclusions"]
    assert f"The text of {template} does not count." in said
    assert "Text held by more than 50 stored documents is common text, not counted." in said
    assert not any(s.startswith("Nothing is excluded") for s in said)
    shared = json.loads(_run("report", "--store", store, "--id", DOC, "--json").stdout)["exclusions"]
    assert shared == ["Text held by more than 1% of the stored documents (at least 10) is common text, not counted."]
    terminal = _run("report", "--store", store, "--id", DOC, "--exclude-file", str(template))
    assert f"The text of {template} does not count." in " ".join(terminal.stdout.split())


def test_a_mistyped_source_to_leave_out_is_named_as_no_such_document(store: str) -> None:
    result = _run("report", "--store", store, "--id", DOC, "--exclude-source", "nosuch-id", "--json")
    assert result.exit_code == 0, result.output
    assert {"id": "nosuch-id", "reason": "no such stored document"} in json.loads(result.stdout)["left_out"]
    terminal = _run("report", "--store", store, "--id", DOC, "--exclude-source", "nosuch-id")
    assert "Left out: nosuch-id (no such stored document)." in terminal.stdout


def test_an_unknown_id_says_what_to_check(store: str) -> None:
    result = _run("search", "--store", store, "--id", "nosuch")
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert f"no document with id 'nosuch' in the store '{store}': check the id" in said


def test_an_exclude_file_that_is_a_folder_or_has_no_words_is_refused(store: str, tmp_path: Path) -> None:
    (tmp_path / "corpus").mkdir()
    (tmp_path / "empty.txt").write_text("  。\n", encoding="utf-8")
    folder = _run("search", "--store", store, "--id", DOC, "--exclude-file", str(tmp_path / "corpus"))
    assert folder.exit_code != 0 and "a folder, not a file: --exclude-file takes one file" in folder.output
    empty = _run("search", "--store", store, "--id", DOC, "--exclude-file", str(tmp_path / "empty.txt"))
    assert empty.exit_code != 0 and "no words" in empty.output and "give the file of a template" in empty.output


def test_an_empty_text_says_what_to_give(store: str) -> None:
    for command in ("search", "report"):
        result = _run(command, "--store", store, "--text", "")
        assert result.exit_code != 0
        assert "no words to fingerprint (empty, whitespace or punctuation only): give a text with words" in result.output


def test_serve_on_a_busy_port_says_to_choose_another(store: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = _run("serve", "--store", store, "--port", str(port))
    assert result.exit_code != 0 and "(choose another with --port)" in result.output, result.output


def test_the_settings_name_no_share_of_0_percent(store: str) -> None:
    said = json.loads(_run("report", "--store", store, "--id", DOC, "--partial-threshold", "0", "--json").stdout)
    assert not any("at least 0%" in s for s in said["settings"])
    assert any("a partial copy when any passage is copied" in s for s in said["settings"])
