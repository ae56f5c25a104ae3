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


NEAR = ("zh-man:man7/perlnumber.7#0", "zh-man:man7/perlnumber.7#0~edited")


def _groups(store: Path) -> dict[str, str | None]:
    with LocalStore(store) as opened:
        return {d.id: d.group for d in opened.get([SOURCE, COPY, *NEAR])}


def _kinds(store: Path) -> dict[str, str | None]:
    with LocalStore(store) as opened:
        return {d.id: d.group_kind for d in opened.get([SOURCE, COPY, *NEAR])}


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
    # The kind of link that joined each: the partial copy's pair only by it, the edited copy as a near-duplicate.
    assert _kinds(store) == {SOURCE: "partial", COPY: "partial", NEAR[0]: "near-duplicate", NEAR[1]: "near-duplicate"}
    assert summary["kinds"]["partial"] >= 2 and sum(summary["kinds"].values()) == summary["grouped"]

    # Without --partial the partial links are gone again: the groups go back.
    result = CliRunner().invoke(main, ["groups", "--store", str(store), "--json"])
    assert json.loads(result.stdout)["cleared"] > 0 and _groups(store) == before
    assert _kinds(store) == {SOURCE: None, COPY: None, NEAR[0]: "near-duplicate", NEAR[1]: "near-duplicate"}
    assert json.loads(result.stdout)["kinds"] == {"near-duplicate": near["grouped"]}


def test_groups_tells_its_progress_phase_by_phase(tmp_path: Path) -> None:
    from simdup_es.cli._common import make_comparer
    from simdup_es.groups import PartialLinks, update_groups
    from simdup_es.multilevel import MultiParams
    from simdup_es.parts import PartPrinter
    from simdup_es.fingerprint import Fingerprinter

    store = tmp_path / "store"
    assert CliRunner().invoke(main, ["index", SAMPLE, "--store", str(store)]).exit_code == 0
    compare = make_comparer({"similar_weight": 0.6, "right_weight": 0.8, "synonym_file": None, "no_synonyms": False,
                             "trim_boilerplate": False, "unwrap": False})
    heard: list[tuple[str, int, int | None]] = []
    with LocalStore(store) as opened:
        update_groups(opened, partial=PartialLinks(PartPrinter(Fingerprinter()), compare, MultiParams(), 1),
                      dry_run=True, on_progress=lambda *a: heard.append(a))
    phases = [p for p, done, _ in heard if done == 0]
    assert phases == ["read", "join", "members", "partial", "components", "write"]
    partial = [(done, total) for p, done, total in heard if p == "partial" and done]
    assert [d for d, _ in partial] == list(range(1, 43)) and {t for _, t in partial} == {42}  # each of 42 documents


def test_groups_draws_progress_on_a_terminal_only(tmp_path: Path) -> None:
    """The progress goes to stderr when it is a terminal (a pty here), and not when it is piped."""
    import os
    import pty
    import subprocess
    import sys

    store = tmp_path / "store"
    assert CliRunner().invoke(main, ["index", SAMPLE, "--store", str(store)]).exit_code == 0
    command = [sys.executable, "-c", "from simdup_es.cli import main; main()", "groups", "--store", str(store),
               "--partial", "--workers", "1", "--dry-run"]
    leader, follower = pty.openpty()
    with subprocess.Popen(command, stderr=follower, stdout=subprocess.DEVNULL) as proc:
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    os.close(leader)
    assert proc.returncode == 0, seen.decode(errors="replace")
    drawn = seen.decode(errors="replace")
    assert "looking up partial copies" in drawn and "42/42" in drawn
    piped = subprocess.run(command, capture_output=True, text=True)
    assert piped.returncode == 0 and "looking up partial copies" not in piped.stderr
    assert "would write" in piped.stderr


def test_delete_in_a_store_grouped_with_partial_says_to_regroup_with_partial(tmp_path: Path) -> None:
    """A plain 'simdup groups' would drop the partial links: delete names the run that keeps them."""
    store = tmp_path / "store"
    assert CliRunner().invoke(main, ["index", SAMPLE, "--store", str(store)]).exit_code == 0
    assert CliRunner().invoke(main, ["groups", "--store", str(store), "--partial", "--workers", "1"]).exit_code == 0
    result = CliRunner().invoke(main, ["delete", NEAR[0], "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert "run 'simdup groups --partial' to update the groups they left" in result.stderr


def test_partial_groups_take_the_common_threshold(tmp_path: Path) -> None:
    """``--common 1``: text two stored documents hold is common, so the deleted-paragraph copy shares no rare
    passage with its source and joins no group with it; the near-duplicate groups stay as they are."""
    store = tmp_path / "store"
    assert CliRunner().invoke(main, ["index", SAMPLE, "--store", str(store)]).exit_code == 0
    result = CliRunner().invoke(main, ["groups", "--store", str(store), "--partial", "--workers", "1",
                                       "--common", "1"])
    assert result.exit_code == 0, result.output
    groups = _groups(store)
    assert groups[SOURCE] is None or groups[SOURCE] != groups[COPY]
    assert groups[NEAR[0]] == groups[NEAR[1]] is not None
    bad = CliRunner().invoke(main, ["groups", "--store", str(store), "--partial", "--common", "lots"])
    assert bad.exit_code == 2 and "a share of the store (1%)" in bad.output
