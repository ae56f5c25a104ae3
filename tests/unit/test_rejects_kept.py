"""A scheduled job's rejects: each run appends its own under a header, and a clean run leaves them alone."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from simdup_es.cli import main
from tests._data import reject_rows

GOOD = '{"id": "g%d", "text": "第%d份通知：明天上午在三楼会议室开会，请各部门负责人准时参加。"}\n'


def _index(src: Path, tmp_path: Path, rejects: Path) -> object:
    return CliRunner().invoke(main, ["index", str(src), "--store", str(tmp_path / "store"), "--rejects", str(rejects)])


def test_each_run_appends_its_rejects_and_a_clean_run_keeps_the_earlier_ones(tmp_path: Path) -> None:
    rejects = tmp_path / "rejects.jsonl"
    monday, tuesday, wednesday = (tmp_path / f"{day}.jsonl" for day in ("mon", "tue", "wed"))
    monday.write_text(GOOD % (1, 1) + "{broken\n", encoding="utf-8")
    tuesday.write_text(GOOD % (2, 2), encoding="utf-8")
    wednesday.write_text(GOOD % (3, 3) + '{"id": "w", "text": 42}\n', encoding="utf-8")
    first = _index(monday, tmp_path, rejects)
    assert first.exit_code == 1 and "rejected records and reasons: " in first.stderr  # type: ignore[attr-defined]
    clean = _index(tuesday, tmp_path, rejects)
    assert clean.exit_code == 0 and "rejected records" not in clean.stderr  # type: ignore[attr-defined]
    assert [r["source"] for r in reject_rows(rejects)] == [f"{monday}:2"]  # Monday's reject is still there
    _index(wednesday, tmp_path, rejects)
    lines = [json.loads(line) for line in rejects.read_text(encoding="utf-8").splitlines()]
    assert [("run" if "run" in line else line["source"]) for line in lines] == ["run", f"{monday}:2", "run",
                                                                                 f"{wednesday}:2"]
    assert lines[3]["id"] == "w" and lines[2]["command"] == "simdup index" and lines[0]["run"] <= lines[2]["run"]
    assert [r["id"] for r in reject_rows(rejects, last_run=True)] == ["w"]


def test_a_clean_first_run_leaves_no_rejects_file(tmp_path: Path) -> None:
    src, rejects = tmp_path / "in.jsonl", tmp_path / "rejects.jsonl"
    src.write_text(GOOD % (1, 1), encoding="utf-8")
    assert _index(src, tmp_path, rejects).exit_code == 0 and not rejects.exists()  # type: ignore[attr-defined]
