"""simdup dedup: the deduplicated dataset, one record of each set kept by a stated rule, every record accounted for."""

from __future__ import annotations

import csv
import importlib.resources
import io
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.cli import main
from simdup_es.dedup import DedupParams, Entry, KeepRule, choose, copy_check, neighbours, priority
from simdup_es.errors import ConfigError
from simdup_es.reference import choose_reference
from simdup_es.search import comparer
from simdup_es.text import unify

SAMPLE = importlib.resources.files("simdup_es.data").joinpath("sample.jsonl")
LINES = SAMPLE.read_text(encoding="utf-8").splitlines()
DOCS = [json.loads(line) for line in LINES]
BY_ID = {d["id"]: d for d in DOCS}
#: What the sample holds copies of (tests/fixtures/SOURCES.md): each copy after its source, so "first" removes it.
COPIES = {"zh-man-page-tw:man3/flockfile.3": "zh-man-page:man3/flockfile.3",
          "zh-man-page-tw:man1/systemd-delta.1": "zh-man-page:man1/systemd-delta.1",
          "zh-man-page-tw:man3/gets.3tcl": "zh-man-page:man3/gets.3tcl",
          "zh-man:man7/perlnumber.7#0~edited": "zh-man:man7/perlnumber.7#0",
          "zh-man:man8/nmbd.8#3~paragraph-deleted": "zh-man:man8/nmbd.8#3",
          "zh-man:man1/minicom.1#8~ascii-punctuation": "zh-man:man1/minicom.1#8",
          "zh-classic:songci#10402~exact-copy": "zh-classic:songci#10402"}


def _dedup(*args: str) -> object:
    return CliRunner().invoke(main, ["dedup", *args])


def _removed(path: Path) -> dict[str, str]:
    return {r["id"]: r["kept_id"] for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def test_one_record_of_each_set_is_kept_and_every_record_accounted_for(here: Path) -> None:
    src = here / "in.jsonl"
    bad = ['{"id": "broken"', '{"id": "number", "text": 123456}']
    src.write_text("\n".join(LINES + bad) + "\n", encoding="utf-8")
    result = _dedup(str(src), "-o", "out.jsonl", "--json")
    assert result.exit_code == 1, result.output  # type: ignore[attr-defined]  (two rejects)
    summary = json.loads(result.stdout.splitlines()[0])  # type: ignore[attr-defined]
    assert (summary["read"], summary["kept"], summary["removed"], summary["rejected"]) == (44, 35, 7, 2)
    assert "read 44, kept 35, removed 7, rejected 2" in result.stderr  # type: ignore[attr-defined]
    assert _removed(here / "out.removed.jsonl") == COPIES
    kept = (here / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert kept == [line for line, d in zip(LINES, DOCS) if d["id"] not in COPIES]  # the lines as they were
    rejects = [json.loads(line) for line in (here / "dedup-rejects.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r.get("id") for r in rejects[1:]] == [None, "number"]


def test_every_removed_record_is_a_confirmed_copy_of_its_kept_twin(here: Path) -> None:
    assert _dedup(str(SAMPLE), "-o", "out.jsonl").exit_code == 0  # type: ignore[attr-defined]
    check = copy_check(comparer(), DedupParams())
    for line in (here / "out.removed.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        assert check(unify(BY_ID[row["kept_id"]]["text"]), unify(BY_ID[row["id"]]["text"])) is not None
        assert min(row["copied"]) >= 0.8 and 0 <= row["distance"] <= 6


def test_keep_longest_and_latest_by_a_field(here: Path) -> None:
    assert _dedup(str(SAMPLE), "-o", "long.jsonl", "--keep", "longest").exit_code == 0  # type: ignore[attr-defined]
    for removed, kept in _removed(here / "long.removed.jsonl").items():
        assert len(BY_ID[kept]["text"]) >= len(BY_ID[removed]["text"])
    dated = here / "dated.jsonl"
    text = BY_ID["zh-classic:songci#10402"]["text"]
    dated.write_text("".join(json.dumps({"id": i, "text": text, "date": d}) + "\n" for i, d in
                             [("a", "2024-03-01"), ("b", "2025-01-15"), ("c", None), ("d", "2023-12-31")]),
                     encoding="utf-8")
    for keep, expected in [("latest", "b"), ("earliest", "d"), ("first", "a")]:
        args = ["--by", "date"] if keep != "first" else []
        assert _dedup(str(dated), "-o", f"{keep}.jsonl", "--keep", keep, *args).exit_code == 0  # type: ignore[attr-defined]
        assert [json.loads(line)["id"] for line in (here / f"{keep}.jsonl").read_text().splitlines()] == [expected]
        assert set(_removed(here / f"{keep}.removed.jsonl").values()) == {expected}


def test_csv_in_csv_out(here: Path) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["id", "title", "text", "extra"])
    writer.writerows([d["id"], d["title"], d["text"], n] for n, d in enumerate(DOCS))
    (here / "in.csv").write_text(buffer.getvalue(), encoding="utf-8")
    assert _dedup("in.csv", "-o", "out.csv").exit_code == 0  # type: ignore[attr-defined]
    rows = list(csv.reader(io.StringIO((here / "out.csv").read_text(encoding="utf-8"))))
    assert rows[0] == ["id", "title", "text", "extra"]
    assert [r[0] for r in rows[1:]] == [d["id"] for d in DOCS if d["id"] not in COPIES]
    assert rows[1] == [DOCS[0]["id"], DOCS[0]["title"], DOCS[0]["text"], "0"]


def test_a_folder_becomes_a_folder_of_the_kept_files(here: Path) -> None:
    assert CliRunner().invoke(main, ["sample", "corpus"]).exit_code == 0
    (here / "corpus" / "more").mkdir()
    (here / "corpus" / "more" / "records.jsonl").write_text(LINES[26] + "\n" + LINES[41] + "\n" + LINES[0] + "\n",
                                                           encoding="utf-8")
    result = _dedup("corpus", "-o", "clean", "--json")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    summary = json.loads(result.stdout.splitlines()[0])  # type: ignore[attr-defined]
    kept = {p.relative_to(here / "clean").as_posix(): p for p in (here / "clean").rglob("*") if p.is_file()}
    files = [name for name in kept if name.endswith(".txt")]
    assert all(kept[name].read_bytes() == (here / "corpus" / name).read_bytes() for name in files)
    lines = kept["more/records.jsonl"].read_text(encoding="utf-8").splitlines()
    assert 0 < len(lines) < 3 and set(lines) <= {LINES[26], LINES[41], LINES[0]}
    assert summary["read"] == 45 and summary["kept"] == len(files) + len(lines) and summary["rejected"] == 0
    removed = _removed(here / "clean.removed.jsonl")
    assert len(removed) == summary["removed"] == 45 - summary["kept"]
    assert not any((here / "clean" / name.removeprefix("corpus/")).exists() for name in removed)


def test_from_a_store_to_json_lines(here: Path) -> None:
    assert CliRunner().invoke(main, ["index", str(SAMPLE), "--store", "st"]).exit_code == 0
    result = _dedup("--store", "st", "-o", "out.jsonl")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    out = [json.loads(line) for line in (here / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(out) == len(DOCS) - len(COPIES) and all(d["text"] == BY_ID[d["id"]]["text"] for d in out)
    assert len(_removed(here / "out.removed.jsonl")) == len(COPIES)


@pytest.mark.parametrize(("args", "message"), [
    (["-", "-o", "x.jsonl"], "give files, not -"),
    (["in.jsonl", "in.csv", "-o", "x.jsonl"], "mix JSON Lines and CSV"),
    (["in.jsonl", "-o", "in.jsonl"], "is an input too"),
    (["in.jsonl", "-o", "x.jsonl", "--keep", "earliest"], "needs --by FIELD"),
    (["-o", "x.jsonl"], "give INPUTS, or a store"),
    (["nope.jsonl", "-o", "x.jsonl"], "no such file or folder: nope.jsonl"),
    (["in.jsonl", "-o", "x.jsonl", "-k", "8"], "0<=x<=7"),  # the range every lookup answers, as search's -k
])
def test_mistakes_are_named(here: Path, args: list[str], message: str) -> None:
    (here / "in.jsonl").write_text(LINES[0] + "\n", encoding="utf-8")
    (here / "in.csv").write_text("id,text\na,b\n", encoding="utf-8")
    result = _dedup(*args)
    assert result.exit_code != 0 and message in result.output, result.output  # type: ignore[attr-defined]


def test_keep_rules_order() -> None:
    entries = [Entry("a", "s:1", 5, "2024"), Entry("b", "s:2", 9, None), Entry("c", "s:3", 9, 3), Entry("d", "s:4", 1, "2023")]
    assert priority(entries, KeepRule()) == [0, 1, 2, 3]
    assert priority(entries, KeepRule("longest")) == [1, 2, 0, 3]
    assert priority(entries, KeepRule("earliest", "t")) == [2, 3, 0, 1]  # numbers, then texts; missing last
    assert priority(entries, KeepRule("latest", "t")) == [0, 3, 2, 1]
    with pytest.raises(ConfigError):
        KeepRule("first", "t")
    with pytest.raises(ConfigError, match="from 0 to 7"):
        DedupParams(k=8)


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 12).flatmap(lambda n: st.tuples(
    st.permutations(range(n)),
    st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(0, 6)), max_size=25),
    st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30))))
def test_choose_is_its_reference_and_every_twin_is_kept_and_a_copy(case: tuple[list[int], list, set]) -> None:
    order, raw, copies = case
    pairs = {(min(a, b), max(a, b)): d for a, b, d in raw if a != b}
    listed = [(a, b, d) for (a, b), d in pairs.items()]

    def is_copy(kept: int, other: int) -> tuple[float, float] | None:
        return (1.0, 1.0) if (kept, other) in copies or (other, kept) in copies else None

    near = neighbours(*(np.array(x, dtype=np.int64) for x in zip(*listed))) if listed else {}
    fast, slow = choose(order, near, is_copy), choose_reference(order, listed, is_copy)
    assert fast == slow
    kept = set(order) - set(fast)
    for p, removed in fast.items():
        assert removed.twin in kept and is_copy(removed.twin, p) and order.index(removed.twin) < order.index(p)
    for (a, b) in pairs:  # no two kept candidates are copies: one of them would have gone
        assert not (a in kept and b in kept and is_copy(a, b))
