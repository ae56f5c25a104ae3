"""groups --partial groups by complete link: every two members copy from each other; no chains."""

from __future__ import annotations

import importlib.resources
import itertools
import json
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.cli import main
from simdup_es.partial_groups import Link, complete_link
from simdup_es.store.local import LocalStore

SAMPLE = [json.loads(line) for line in importlib.resources.files("simdup_es.data").joinpath("sample.jsonl")
          .read_text(encoding="utf-8").splitlines()]
BY_ID = {d["id"]: d for d in SAMPLE}
A, B = "zh-man:man1/hostname.1#0", "zh-lo:shared/main0213#0"  # a man page and a help page: nothing in common
NEAR = ("zh-man:man7/perlnumber.7#0", "zh-man:man7/perlnumber.7#0~edited")


def _halves(text: str) -> tuple[str, str]:
    lines = text.splitlines()
    return "\n".join(lines[: len(lines) // 2]), "\n".join(lines[len(lines) // 2 :])


def test_two_pages_that_share_nothing_are_not_one_group_through_a_third_that_copies_both(tmp_path: Path) -> None:
    mosaic = {"id": "mosaic", "text": _halves(BY_ID[A]["text"])[0] + "\n" + _halves(BY_ID[B]["text"])[1]}
    mosaic2 = {"id": "mosaic-2", "text": _halves(BY_ID[A]["text"])[1] + "\n" + _halves(BY_ID[B]["text"])[0]}
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in [*SAMPLE, mosaic, mosaic2]),
                   encoding="utf-8")
    store = tmp_path / "store"
    assert CliRunner().invoke(main, ["index", str(src), "--store", str(store)]).exit_code == 0
    result = CliRunner().invoke(main, ["groups", "--store", str(store), "--partial", "--workers", "1", "--json"])
    assert result.exit_code == 0, result.output
    with LocalStore(store) as opened:
        group = {d.id: d.group for d in opened.get([A, B, "mosaic", "mosaic-2", *NEAR])}
    # Single link made A, B and both mosaics one group; now each mosaic is grouped with one of its sources.
    assert group[A] is not None and group[B] is not None and group[A] != group[B], group
    assert group["mosaic"] in (group[A], group[B]) and group["mosaic-2"] in (group[A], group[B])
    assert group[NEAR[0]] == group[NEAR[1]] is not None  # near-duplicate groups stay as they are


_LINKS = st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9), st.sampled_from([0.2, 0.5, 0.9])), max_size=30)


@settings(max_examples=300, deadline=None)
@given(_LINKS, st.sets(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=20))
def test_complete_link_groups_are_cliques_none_of_which_could_merge(links: list[tuple[int, int, float]],
                                                                    also: set[tuple[int, int]]) -> None:
    """Each group: every two units linked (by a link, or ``verify``); no two groups that a link joins all linked
    across; a unit in one group at most; ``verify`` asked once a pair, only about pairs no link joins."""
    found = [Link(a, b, s) for a, b, s in links if a != b]
    known = {frozenset((a, b)) for a, b, _ in found}
    hidden = {frozenset(p) for p in also if p[0] != p[1]}
    asked: list[tuple[int, int]] = []

    def verify(a: int, b: int) -> bool:
        asked.append((a, b))
        return frozenset((a, b)) in hidden

    def linked(a: int, b: int) -> bool:
        return frozenset((a, b)) in known | hidden

    groups = complete_link(10, found, verify)
    flat = [u for g in groups for u in g]
    assert len(flat) == len(set(flat)) and all(len(g) >= 2 for g in groups)
    assert all(linked(a, b) for g in groups for a, b in itertools.combinations(g, 2))
    singles = [[u] for u in range(10) if u not in flat]
    for one, other in itertools.combinations(groups + singles, 2):
        if any(frozenset((a, b)) in known for a in one for b in other):  # (groups no link joins are not compared)
            assert not all(linked(a, b) for a in one for b in other), (one, other)
    assert len(asked) == len(set(asked)) and not {frozenset(p) for p in asked} & known


def test_the_strongest_copy_decides_where_a_mosaic_goes() -> None:
    # Unit 2 copies from 0 (strongly) and from 1; 0 and 1 share nothing.
    assert complete_link(3, [Link(2, 1, 0.3), Link(0, 2, 0.7)], lambda a, b: False) == [[0, 2]]
    assert complete_link(3, [Link(2, 1, 0.3), Link(0, 2, 0.7)], lambda a, b: True) == [[0, 1, 2]]
