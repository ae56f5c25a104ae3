"""simdup dedup on a real local Dask cluster (two worker processes): the single-machine run's decisions, in parts."""

from __future__ import annotations

import importlib.resources
import json
import random
from pathlib import Path

from click.testing import CliRunner

from simdup_es.cli import main

LINES = importlib.resources.files("simdup_es.data").joinpath("sample.jsonl").read_text(encoding="utf-8").splitlines()


def test_dedup_on_dask_removes_what_one_machine_removes(here: Path) -> None:
    lines = list(LINES)
    random.Random(3).shuffle(lines)  # a copy and its source in different files, either first
    lines.insert(9, '{"id": "bad", "text": ["not text"]}')
    (here / "parts").mkdir()
    for n in range(3):
        (here / "parts" / f"p{n}.jsonl").write_text("\n".join(lines[n::3]) + "\n", encoding="utf-8")
    for keep in (["--keep", "first"], ["--keep", "longest"]):
        one = CliRunner().invoke(main, ["dedup", "parts", "-o", "one", *keep, "--json"])
        assert one.exit_code == 1, one.output  # (the bad record)
        many = CliRunner().invoke(main, ["dedup", "parts", "-o", "many", *keep, "--dask", "local:2", "--json"])
        assert many.exit_code == 1, many.output
        summary = json.loads(many.stdout.splitlines()[0])
        assert summary == {**json.loads(one.stdout.splitlines()[0]), "seconds": summary["seconds"],
                           "output": "many/part-*.jsonl", "removed_file": "many.removed.jsonl"}
        assert summary["removed"] >= 6 and summary["read"] == 43 and summary["rejected"] == 1
        pairs = [{(r["id"], r["kept_id"]) for r in map(json.loads, Path(f).read_text().splitlines())}
                 for f in ("one.removed.jsonl", "many.removed.jsonl")]
        assert pairs[0] == pairs[1]
        kept_one = sorted(line for f in (here / "one").rglob("*.jsonl") for line in f.read_text().splitlines())
        kept_many = sorted(line for f in (here / "many").glob("part-*.jsonl") for line in f.read_text().splitlines())
        assert kept_one == kept_many and len(kept_many) == summary["kept"]
        for name in ("one", "many"):
            for f in (here / name).rglob("*"):
                f.unlink()
            (here / f"{name}.removed.jsonl").unlink()
