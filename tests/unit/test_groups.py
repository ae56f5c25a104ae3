"""Duplicate groups, the pure parts: pairs per version, components, group ids, the plan of writes, the matrix filter."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.groups import (
    UnionFind,
    assign_groups,
    components,
    confirm_pairs,
    distinct,
    doc_pairs,
    group_id,
    grouped_nodes,
    link_kinds,
    near_pairs,
    plan_writes,
)
from simdup_es.reference import near_pairs_reference as brute_force_pairs

MAX = (1 << 64) - 1

edges = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=80)


def components_reference(pairs: list[tuple[int, int]]) -> dict[int, int]:
    """Components by repeated graph search: slow and obvious."""
    neighbours: dict[int, set[int]] = {}
    for a, b in pairs:
        neighbours.setdefault(a, set()).add(b)
        neighbours.setdefault(b, set()).add(a)
    out: dict[int, int] = {}
    for start in neighbours:
        if start in out:
            continue
        seen, todo = {start}, [start]
        while todo:
            for n in neighbours[todo.pop()]:
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        for node in seen:
            out[node] = min(seen)
    return out


@given(edges)
def test_components_equal_the_reference(pairs: list[tuple[int, int]]) -> None:
    assert components(pairs) == components_reference(pairs)


@given(edges, st.randoms(use_true_random=False))
def test_components_do_not_depend_on_edge_order(pairs: list[tuple[int, int]], rnd) -> None:  # type: ignore[no-untyped-def]
    shuffled = [(b, a) if rnd.random() < 0.5 else (a, b) for a, b in pairs]
    rnd.shuffle(shuffled)
    assert components(shuffled) == components(pairs)


def test_union_find_roots_are_smallest_members() -> None:
    uf = UnionFind()
    assert uf.union(5, 3) and uf.union(9, 7) and uf.union(7, 5)
    assert not uf.union(3, 9)
    assert uf.roots() == {5: 3, 3: 3, 9: 3, 7: 3}
    assert uf.connected(9, 3) and not uf.connected(9, 100)


def _keys(n: int, index: str = "idx") -> list[tuple[str, str]]:
    return [(index, f"doc-{p:03d}") for p in range(n)]


def test_assign_groups_sizes_and_ids_from_the_first_member() -> None:
    keys = _keys(10)
    got = assign_groups(keys, [(4, 2), (2, 7), (8, 9)])
    first = group_id(("idx", "doc-002"))
    assert got == {2: (first, 3), 4: (first, 3), 7: (first, 3), 8: (group_id(("idx", "doc-008")), 2),
                   9: (group_id(("idx", "doc-008")), 2)}
    assert first == hashlib.sha1(b"idx/doc-002").hexdigest()[:16]


def test_group_ids_are_stable_when_members_join_and_groups_merge() -> None:
    keys = _keys(20)
    before = assign_groups(keys, [(3, 4), (10, 11)])
    # A later document joins the first group: its id stays.
    joined = assign_groups(keys, [(3, 4), (4, 15), (10, 11)])
    assert joined[3][0] == joined[15][0] == before[3][0]
    # A bridge merges the two groups: the group with the first member keeps its id.
    merged = assign_groups(keys, [(3, 4), (10, 11), (15, 4), (15, 11)])
    assert {m for m in merged.values()} == {(before[3][0], 5)}
    # Keys, not positions, decide: the same groups read in another order get the same ids.
    order = list(range(20))[::-1]
    shuffled_keys = [keys[p] for p in order]
    where = {p: i for i, p in enumerate(order)}
    again = assign_groups(shuffled_keys, [(where[3], where[4]), (where[10], where[11])])
    assert {again[where[p]] for p in (3, 4, 10, 11)} == {before[p] for p in (3, 4, 10, 11)}


def test_group_ids_tell_indices_apart() -> None:
    assert group_id(("a", "1")) != group_id(("b", "1"))
    assert len(group_id(("a", "1"))) == 16


def test_plan_writes_only_differences_and_clears_leavers() -> None:
    desired = {1: ("g1", 2), 2: ("g1", 2), 5: ("g5", 3), 6: ("g5", 3), 7: ("g5", 3)}
    current = {1: ("g1", 2), 2: ("g1", 3), 5: ("gX", 3), 9: ("g9", 2), 10: (None, None), 11: (None, 2)}
    plan = plan_writes(current, desired)
    assert plan.set == [(2, "g1", 2), (5, "g5", 3), (6, "g5", 3), (7, "g5", 3)]
    assert plan.clear == [9, 11]
    assert plan.unchanged == 1


def test_link_kinds_prefers_near_duplicate_links() -> None:
    # 1-2 near; 2-3 and 4-5 partial only: 2 keeps near-duplicate, 3, 4 and 5 are partial.
    assert link_kinds([(1, 2)], [(2, 3), (4, 5)]) == {1: "near-duplicate", 2: "near-duplicate", 3: "partial",
                                                      4: "partial", 5: "partial"}
    assert link_kinds([], []) == {} and link_kinds([(0, 1)]) == {0: "near-duplicate", 1: "near-duplicate"}


def test_plan_writes_rewrites_a_member_whose_kind_changed_or_was_never_written() -> None:
    desired = {1: ("g", 3, "near-duplicate"), 2: ("g", 3, "near-duplicate"), 3: ("g", 3, "partial")}
    # 2: written before dup_kind existed; 3: was near-duplicate, now joined only by a partial copy.
    current = {1: ("g", 3, "near-duplicate"), 2: ("g", 3, None), 3: ("g", 3, "near-duplicate"),
               4: (None, None, "partial")}
    plan = plan_writes(current, desired)
    assert plan.set == [(2, "g", 3, "near-duplicate"), (3, "g", 3, "partial")]
    assert plan.clear == [4] and plan.unchanged == 1


@given(st.dictionaries(st.integers(0, 30), st.tuples(st.sampled_from("abc"), st.integers(2, 4)), max_size=20),
       st.dictionaries(st.integers(0, 30), st.tuples(st.sampled_from([None, "a", "b"]), st.sampled_from([None, 2, 3])),
                       max_size=20))
def test_applying_a_plan_leaves_nothing_to_do(desired: dict, current: dict) -> None:  # type: ignore[type-arg]
    current = {p: v for p, v in current.items() if v != (None, None)}
    plan = plan_writes(current, desired)
    after = dict(current)
    for pos, g, s in plan.set:
        after[pos] = (g, s)
    for pos in plan.clear:
        after[pos] = (None, None)
    assert {p: v for p, v in after.items() if v != (None, None)} == desired
    again = plan_writes({p: v for p, v in after.items() if v != (None, None)}, desired)
    assert again.set == [] and again.clear == [] and again.unchanged == len(desired)


def _flip(fp: int, bits: list[int]) -> int:
    for b in bits:
        fp ^= 1 << b
    return fp


@st.composite
def versioned(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    fps: list[int] = []
    for base in draw(st.lists(st.integers(0, MAX), min_size=1, max_size=5)):
        fps.append(base)
        for _ in range(draw(st.integers(0, 5))):
            fps.append(_flip(base, draw(st.lists(st.integers(0, 63), max_size=5, unique=True))))
    versions = draw(st.lists(st.integers(-1, 2), min_size=len(fps), max_size=len(fps)))
    return fps, versions


@given(versioned(), st.integers(0, 4))
@settings(max_examples=60)
def test_near_pairs_per_version_equal_brute_force(data: tuple[list[int], list[int]], k: int) -> None:
    fps, versions = data
    i, j, d = near_pairs(np.array(fps, np.uint64), np.array(versions), k)
    want = sorted(
        ((fps[a] ^ fps[b]).bit_count(), a, b)
        for a, b in brute_force_pairs(fps, k)
        if versions[a] == versions[b] >= 0
    )
    assert list(zip(d.tolist(), i.tolist(), j.tolist())) == want  # nearest first, then by position


def test_near_pairs_of_nothing() -> None:
    i, j, d = near_pairs(np.empty(0, np.uint64), np.empty(0, np.int64), 3)
    assert len(i) == len(j) == len(d) == 0


@given(st.lists(st.tuples(st.integers(0, 25), st.integers(0, 25)).filter(lambda p: p[0] != p[1]), max_size=60),
       st.sets(st.integers(0, 25), max_size=4), st.integers(0, 25))
def test_confirm_pairs_gives_the_components_of_the_passing_pairs(pairs, no_text, cut) -> None:  # type: ignore[no-untyped-def]
    # A pair "passes" when its two texts are in the same tens: 0-9, 10-19, ...
    texts = {p: (None if p in no_text else str(p)) for p in range(26)}

    def similarity(a: str, b: str) -> float:
        return 1.0 if int(a) // 10 == int(b) // 10 else 0.0

    calls: list[list[int]] = []

    def fetch(positions: list[int]) -> dict[int, str | None]:
        calls.append(positions)
        return {p: texts[p] for p in positions}

    result = confirm_pairs(pairs, fetch, similarity, 0.5, chunk=7)
    passing = [(a, b) for a, b in pairs if texts[a] and texts[b] and similarity(texts[a], texts[b]) >= 0.5]
    assert components(result.pairs) == components(passing)
    assert result.compared + result.already_joined + result.no_text == len(pairs)
    assert result.compared <= len(pairs)
    assert all(len(c) == len(set(c)) for c in calls)


def test_confirm_pairs_skips_pairs_already_joined() -> None:
    # A clique of 6 true copies: 15 pairs, but 5 comparisons join them all.
    pairs = [(a, b) for a in range(6) for b in range(a + 1, 6)]
    compared: list[tuple[str, str]] = []

    def similarity(a: str, b: str) -> float:
        compared.append((a, b))
        return 0.9

    result = confirm_pairs(pairs, lambda ps: {p: "text" for p in ps}, similarity, chunk=1)
    assert result.compared == len(compared) == 5 and result.already_joined == 10
    assert len(set(components(result.pairs).values())) == 1


def test_confirm_pairs_threshold_is_inclusive() -> None:
    result = confirm_pairs([(0, 1), (2, 3)], lambda ps: {p: str(p) for p in ps},
                           lambda a, b: 0.5 if a == "0" else 0.49, 0.5)
    assert result.pairs == [(0, 1)]


@pytest.mark.parametrize("k", [0, 3])
def test_assign_groups_over_near_pairs_finds_planted_clusters(k: int) -> None:
    rng = np.random.default_rng(7)
    bases = rng.integers(0, MAX, size=50, dtype=np.uint64, endpoint=True)
    fps = list(bases.tolist())
    planted = {}
    for g, base in enumerate(bases[:10].tolist()):
        for _ in range(3):
            planted[len(fps)] = g
            fps.append(_flip(base, rng.choice(64, size=k, replace=False).tolist()))
    for g in range(10):
        planted[g] = g
    i, j, _ = near_pairs(np.array(fps, np.uint64), np.zeros(len(fps), np.int64), k)
    got = assign_groups(_keys(len(fps)), zip(i.tolist(), j.tolist()))
    assert set(got) == set(planted)
    assert all(size == 4 for _, size in got.values())
    assert len({gid for gid, _ in got.values()}) == 10


@st.composite
def with_copies(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    """Clustered fingerprints, some repeated exactly (exact duplicates), with versions."""
    fps, versions = draw(versioned())
    for _ in range(draw(st.integers(0, 6))):
        n = draw(st.integers(0, len(fps) - 1))
        fps.append(fps[n])
        versions.append(versions[n] if draw(st.booleans()) else draw(st.integers(-1, 2)))
    return fps, versions


def _doc_level(fps: list[int], versions: list[int], k: int) -> list[tuple[int, int]]:
    return [(a, b) for a, b in brute_force_pairs(fps, k) if versions[a] == versions[b] >= 0]


@given(with_copies(), st.integers(0, 4))
@settings(max_examples=80)
def test_groups_through_distinct_nodes_equal_groups_of_all_document_pairs(data, k: int) -> None:  # type: ignore[no-untyped-def]
    fps, versions = data
    node_fps, node_codes, counts = distinct(np.array(fps, np.uint64), np.array(versions))
    assert counts.sum() == sum(v >= 0 for v in versions)
    assert len(set(zip(node_fps.tolist(), node_codes.tolist()))) == len(node_fps)
    node_of = {(f, c): n for n, (f, c) in enumerate(zip(node_fps.tolist(), node_codes.tolist()))}
    doc_nodes = [node_of.get((f, v), -1) for f, v in zip(fps, versions)]
    i, j, _ = near_pairs(node_fps, node_codes, k)
    grouped = set(grouped_nodes(i, j, counts).tolist())
    want = _doc_level(fps, versions, k)
    # The documents read by id (those of grouped nodes) are exactly the documents in a pair.
    assert {p for p, n in enumerate(doc_nodes) if n in grouped} == {p for pair in want for p in pair}
    spanning = list(doc_pairs(doc_nodes, zip(i.tolist(), j.tolist())))
    assert components(spanning) == components(want)
    placed = [n for n in doc_nodes if n >= 0]
    assert len(spanning) == len(placed) - len(set(placed)) + sum(1 for a, b in zip(i, j) if a in placed and b in placed)
    every = list(doc_pairs(doc_nodes, zip(i.tolist(), j.tolist()), every=True))
    assert sorted(tuple(sorted(p)) for p in every) == sorted(want)


def test_doc_pairs_with_every_come_nearest_first() -> None:
    # Nodes 0 (docs 0, 2) and 1 (doc 1), 2 (doc 3); node pairs sorted by distance: (0, 1) then (1, 2).
    got = list(doc_pairs([0, 1, 0, 2], [(0, 1), (1, 2)], every=True))
    assert got == [(0, 2), (0, 1), (2, 1), (1, 3)]


def test_distinct_of_nothing() -> None:
    fps, codes, counts = distinct(np.array([5], np.uint64), np.array([-1]))
    assert len(fps) == len(codes) == len(counts) == 0
