"""The Store contract for incremental groups: after any mix of puts and deletes through a
:class:`~simdup_es.live_groups.GroupKeeper`, a full ``groups`` run finds nothing to change.

Runs once per store (``local``, ``elasticsearch``; see conftest.py). The fingerprints are
synthetic and built to make every case happen: near copies (1 to 3 bits apart), exact copies,
chains whose ends are further than ``k`` apart (deleting the middle splits a group; a new
middle merges two), two fingerprint versions, and replacements of stored ids.
"""

from __future__ import annotations

import random

import pytest

from simdup_es.groups import stored_groups, update_groups
from simdup_es.live_groups import GroupKeeper
from simdup_es.store.base import Store, StoredDoc

K = 3
VERSIONS = ("v1", "v2")


def _flip(fp: int, bits: list[int]) -> int:
    for b in bits:
        fp ^= 1 << b
    return fp


class Pool:
    """Random fingerprints in families: a family's members are chained 2 bits apart (so its ends are far)."""

    def __init__(self, rng: random.Random, families: int = 12) -> None:
        self.rng = rng
        self.families: list[list[int]] = []
        for _ in range(families):
            fp = rng.getrandbits(64)
            chain = [fp]
            for _ in range(5):
                fp = _flip(fp, rng.sample(range(64), 2))
                chain.append(fp)
            self.families.append(chain)

    def fingerprint(self) -> tuple[int, str]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.15:  # alone
            return rng.getrandbits(64), rng.choice(VERSIONS)
        fp = rng.choice(rng.choice(self.families))
        if roll < 0.35:  # an exact copy
            return fp, "v1"
        version = "v2" if roll > 0.9 else "v1"  # the same family under another version never pairs with v1
        return _flip(fp, rng.sample(range(64), rng.randint(0, 2))), version


def _doc(doc_id: str, fp: int, version: str) -> StoredDoc:
    return StoredDoc(doc_id, fp, version, f"text of {doc_id}")


def _assert_current(store: Store) -> int:
    """A full run (dry) finds nothing to write; returns how many documents are in groups."""
    full = update_groups(store, k=K, dry_run=True)
    assert (full.set, full.cleared) == (0, 0), full.to_dict()
    assert full.unchanged == full.grouped
    return full.grouped


@pytest.mark.parametrize("plan_first", [True, False], ids=["planned", "write-first"])
def test_ten_rounds_of_puts_and_deletes_keep_the_groups_of_a_full_run(store: Store, plan_first: bool) -> None:
    rng = random.Random(29)
    pool = Pool(rng)
    ids: list[str] = []
    counter = 0

    def new_docs(n: int) -> list[StoredDoc]:
        nonlocal counter
        out = []
        for _ in range(n):
            counter += 1
            ids.append(f"d{counter:04d}")
            out.append(_doc(ids[-1], *pool.fingerprint()))
        return out

    store.put(new_docs(40))
    store.refresh()
    update_groups(store, k=K)
    keeper = GroupKeeper.for_store(store, None, plan_first=plan_first)
    assert keeper is not None, "a store with groups gets a keeper by default"
    assert _assert_current(store) > 0
    sizes = []
    for _ in range(10):
        batch = new_docs(rng.randint(5, 15))
        replaced = rng.sample(ids[:-len(batch)], 3)  # stored ids get new fingerprints
        batch += [_doc(doc_id, *pool.fingerprint()) for doc_id in replaced]
        rng.shuffle(batch)
        assert keeper.put(batch).written == len(batch)
        _assert_current(store)
        doomed = rng.sample(ids, rng.randint(2, 8))
        report = keeper.delete(doomed + ["never-stored"])
        assert report.written == len(doomed) and [r for _, r in report.failed] == ["not found"]
        ids = [i for i in ids if i not in doomed]
        sizes.append(_assert_current(store))
    assert store.count() == len(ids)
    summary = keeper.summary
    # The rounds did merge, split and clear (else the test proves little).
    assert summary.set > 0 and summary.cleared > 0 and summary.walked == 0, summary.to_dict()
    assert len(set(sizes)) > 1
    listed = stored_groups(store)
    assert listed and all(g.size == len(g.members) and g.kind == "near-duplicate" for g in listed)


def test_a_new_middle_merges_two_groups_and_deleting_it_splits_them_with_the_first_members_id(store: Store) -> None:
    a = 0x0123456789ABCDEF
    b = _flip(a, [0, 1, 2, 3, 4, 5])  # 6 bits from a: not a pair
    mid = _flip(a, [0, 1, 2])  # 3 from each
    docs = [_doc("a1", a, "v1"), _doc("a2", _flip(a, [60]), "v1"), _doc("b1", b, "v1"), _doc("b2", _flip(b, [61]), "v1")]
    store.put(docs)
    store.refresh()
    update_groups(store, k=K)
    before = {g.members[0][-1]: g.id for g in stored_groups(store)}
    assert set(before) == {"a1", "b1"}
    keeper = GroupKeeper(store)
    keeper.put([_doc("m", mid, "v1")])
    (merged,) = stored_groups(store)
    assert [key[-1] for key in merged.members] == ["a1", "a2", "b1", "b2", "m"] and merged.id == before["a1"]
    _assert_current(store)
    keeper.delete(["m"])
    after = {g.members[0][-1]: g.id for g in stored_groups(store)}
    assert after == before
    _assert_current(store)
    keeper.delete(["a2"])  # a1 is alone now: its fields are cleared
    assert [g.members[0][-1] for g in stored_groups(store)] == ["b1"]
    assert store.get(["a1"])[0].group is None
    _assert_current(store)


def test_half_written_groups_are_found_and_repaired_by_the_next_update(store: Store) -> None:
    a = 0x0F0F0F0F0F0F0F0F
    chain = [a, _flip(a, [1, 2]), _flip(a, [1, 2, 3, 4]), _flip(a, [1, 2, 3, 4, 5, 6])]
    store.put([_doc(f"c{n}", fp, "v1") for n, fp in enumerate(chain)] + [_doc("x", 0xFFFF0000FFFF0000, "v1")])
    store.refresh()
    update_groups(store, k=K)
    # As if a killed run had rewritten two members only: a wrong id and size on c2 and c3.
    refs = {row.id: row.ref for row in store.group_rows(ids=["c2", "c3"])}
    store.write_groups([(refs["c2"], "0000000000000000", 2, "near-duplicate"),
                        (refs["c3"], "0000000000000000", 2, "near-duplicate")])
    store.refresh()
    keeper = GroupKeeper(store)
    keeper.put([_doc("c0-copy", chain[0], "v1")])  # touches the group through c0 alone
    assert keeper.summary.walked == 1
    _assert_current(store)
    (group,) = stored_groups(store)
    assert len(group.members) == 5


def test_a_store_without_groups_gets_no_keeper_unless_asked(store: Store) -> None:
    store.put([_doc("p", 1, "v1"), _doc("q", 3, "v1")])
    store.refresh()
    assert GroupKeeper.for_store(store, None) is None
    keeper = GroupKeeper.for_store(store, True)
    assert keeper is not None
    keeper.put([_doc("r", 7, "v1")])
    (group,) = stored_groups(store)
    assert [key[-1] for key in group.members] == ["p", "q", "r"]
    assert GroupKeeper.for_store(store, False) is None


def test_a_refused_document_in_a_planned_put_is_regrouped_from_the_store(store: Store) -> None:
    a = 0x00FF00FF00FF00FF
    store.put([_doc("a1", a, "v1"), _doc("a2", _flip(a, [3]), "v1")])
    store.refresh()
    update_groups(store, k=K)
    keeper = GroupKeeper(store)
    # "n" is written (the first), and refused (the second): the plan counted one "n" in a1's group.
    refused = StoredDoc("n", -1, "v1")
    report = keeper.put([_doc("n", _flip(a, [9]), "v1"), _doc("m", _flip(a, [20, 21]), "v1"), refused])
    assert report.written == 2 and [doc_id for doc_id, _ in report.failed] == ["n"]
    assert keeper.summary.walked == 1
    _assert_current(store)
    (group,) = stored_groups(store)
    assert [key[-1] for key in group.members] == ["a1", "a2", "m", "n"]


def test_new_documents_get_their_group_fields_in_the_put(store: Store) -> None:
    # A new copy of a grouped document and a pair within the batch itself (no stored neighbour).
    a = 0x1234_5678_9ABC_DEF0
    store.put([_doc("a1", a, "v1"), _doc("a2", _flip(a, [1]), "v1")])
    store.refresh()
    update_groups(store, k=K)
    (before,) = stored_groups(store)
    keeper = GroupKeeper(store)
    b = 0x0FED_CBA9_8765_4321
    keeper.put([_doc("a3", _flip(a, [2]), "v1"), _doc("b1", b, "v1"), _doc("b2", _flip(b, [5, 6]), "v1"),
                _doc("lone", 0xAAAA_AAAA_AAAA_AAAA, "v1")])
    _assert_current(store)
    groups = {g.id: [key[-1] for key in g.members] for g in stored_groups(store)}
    assert groups[before.id] == ["a1", "a2", "a3"] and sorted(groups.values()) == [["a1", "a2", "a3"], ["b1", "b2"]]
    # a1 and a2 changed size (written after the put); a3, b1, b2 went in with the put.
    assert keeper.summary.set == 5 and keeper.summary.walked == 0
