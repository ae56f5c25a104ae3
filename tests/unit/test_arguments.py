"""What a newcomer types: a mistyped file name is an error, not the query; a record's text is text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from simdup_es.cli import main
from simdup_es.serve import ServeSettings, create_app
from simdup_es.service import Service
from simdup_es.sources import Fields, Record, Reject, read_jsonl
from simdup_es.store import open_store

ESSAY = "今天天气很好，我们一起去公园散步，然后在湖边的茶馆里喝茶聊天，一直坐到太阳下山才回家。"


def _run(*args: str, cwd: Path) -> object:
    import os

    here = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args))
    finally:
        os.chdir(here)


@pytest.mark.parametrize("args", [
    ["compare", "essay.tx", "essay.txt"],
    ["compare", "essay.txt", "notes.md5"],
    ["search", "essay.txtt", "--store", "st"],
    ["report", "essay.tx", "--store", "st"],
])
def test_a_name_with_an_extension_that_names_no_file_is_an_error(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "essay.txt").write_text(ESSAY, encoding="utf-8")
    assert _run("index", "essay.txt", "--store", "st", cwd=tmp_path).exit_code == 0  # type: ignore[attr-defined]
    result = _run(*args, cwd=tmp_path)
    missing = next(a for a in args if a.startswith(("essay.tx", "notes")) and a != "essay.txt")
    assert result.exit_code != 0, result.output  # type: ignore[attr-defined]
    assert f"{missing}: no such file (give --text to use it as text)" in result.output  # type: ignore[attr-defined]


def test_text_forces_text_and_text_without_an_extension_stays_text(tmp_path: Path) -> None:
    (tmp_path / "essay.txt").write_text(ESSAY, encoding="utf-8")
    result = _run("compare", "--text", "essay.tx", "essay.txt", "--json", cwd=tmp_path)
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    result = _run("compare", ESSAY, "essay.txt", "--json", cwd=tmp_path)
    assert result.exit_code == 0 and '"distance": 0' in result.output, result.output  # type: ignore[attr-defined]
    for text in ("v1.2", "e.g.", "3.14"):  # no file names: texts
        result = _run("compare", text, "essay.txt", "--json", cwd=tmp_path)
        assert "no such file" not in result.output, result.output  # type: ignore[attr-defined]


@pytest.mark.parametrize(("value", "kind"), [(123456, "a number"), (1.5, "a number"), (["a", "list"], "a list"),
                                              (True, "a boolean"), ({"zh": "正文"}, "an object")])
def test_a_text_that_is_no_string_is_one_reject_with_the_records_id(value: object, kind: str) -> None:
    lines = [json.dumps({"id": "r1", "text": value}).encode(), json.dumps({"id": 7, "text": ESSAY, "title": 2024}).encode()]
    bad, good = read_jsonl(lines, "in.jsonl", Fields())
    assert isinstance(bad, Reject) and bad.id == "r1" and bad.source == "in.jsonl:1"
    assert f"field 'text' should be text, got {kind}" in bad.reason
    assert isinstance(good, Record) and (good.id, good.title) == ("7", "2024")  # ids and titles may be numbers


def test_post_documents_rejects_a_number_as_text_with_its_id(tmp_path: Path) -> None:
    store = open_store(path=tmp_path / "s", create=True)
    try:
        with TestClient(create_app(Service(store), ServeSettings(allow_index=True))) as client:
            body = client.post("/documents", json={"documents": [{"id": "n", "text": 123456},
                                                                 {"id": "ok", "text": ESSAY}]}).json()
        assert body["indexed"] == 1 and body["documents"] == 1
        (rejected,) = body["rejected"]
        assert rejected["id"] == "n" and "should be text, got a number" in rejected["reason"]
    finally:
        store.close()
