"""groups --partial: documents linked by a partial copy join one group (embedded store)."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

from click.testing import CliRunner

from simdup_es.cli import main
from simdup_es.store.local import LocalStore

SAMPLE = str(importlib.resources.files("simdup_es.data") / "sample.jsonl")
SOURCE, COPY = "zh-man:man8/nmbd.8#3", "zh-man:man8/nmbd.8#3~paragraph-deleted"


def _groups(store: Path) -> dict[str, str | None]:
    with LocalStore(store) as opened:
        return {d.id: d.group for d in opened.get([SOURCE, COPY, "zh-man:man7/perlnumber.7#0",
                                                   "zh-man:man7/perlnumber.7#0~edited"])}


def test_partial_joins_the_deleted_paragraph_copy_and_keeps_the_near_duplicate_groups(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert CliRunner().invoke(main, ["index", SAMPLE, "--store", str(store)]).exit_code == 0
    result = CliRunner().invoke(main, ["groups", "--store", str(store), "--json"])
    assert result.exit_code == 0, result.output
    before = _groups(store)
    assert before[SOURCE] is None and before[COPY] is None  # too far apart for the document level
    near = json.loads(result.stdout)

    result = CliRunner().invoke(main, ["groups", "--store", str(store), "--json", "--partial", "--workers", "1"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    after = _groups(store)
    assert after[SOURCE] is not None and after[SOURCE] == after[COPY]
    assert after["zh-man:man7/perlnumber.7#0"] == after["zh-man:man7/perlnumber.7#0~edited"] is not None
    assert summary["partial"] >= 1 and summary["grouped"] > near["grouped"]

    # Without --partial the partial links are gone again: the groups go back.
    result = CliRunner().invoke(main, ["groups", "--store", str(store), "--json"])
    assert json.loads(result.stdout)["cleared"] > 0 and _groups(store) == before
