"""The Store contract for ``groups --partial``: every store writes the same groups and the same kinds.

Runs once per store (``local``, ``elasticsearch``; see conftest.py) on the sample corpus
shipped in the package (42 real Chinese documents and copies of some of them), stored with
their levels. The groups and ``dup_kind`` written are held to those of a reference embedded
store fed the same documents, and to what the kinds mean: ``near-duplicate`` exactly for
the documents in a document-level pair (distance <= 3, checked by brute force), ``partial``
for the other members.
"""

from __future__ import annotations

import itertools
import json
from functools import cache
from importlib import resources
from pathlib import Path

from simdup_es import default_fingerprinter
from simdup_es.groups import PartialLinks, stored_groups, update_groups
from simdup_es.multilevel import MultiParams
from simdup_es.parts import PartPrinter
from simdup_es.search import comparer
from simdup_es.store.base import Store, StoredDoc
from simdup_es.store.local import LocalStore

SOURCE, CUT = "zh-man:man8/nmbd.8#3", "zh-man:man8/nmbd.8#3~paragraph-deleted"
EDITED = ("zh-man:man7/perlnumber.7#0", "zh-man:man7/perlnumber.7#0~edited")


@cache
def sample() -> tuple[StoredDoc, ...]:
    printer = PartPrinter(default_fingerprinter())
    text = resources.files("simdup_es.data").joinpath("sample.jsonl").read_text(encoding="utf-8")
    out = []
    for record in map(json.loads, text.splitlines()):
        fp = printer.fingerprinter.fingerprint(record["text"], title=record.get("title"))
        out.append(StoredDoc(record["id"], fp.value, fp.version, record["text"], record.get("title"),
                             levels=printer.levels(record["text"])))
    return tuple(out)


def _links() -> PartialLinks:
    return PartialLinks(PartPrinter(default_fingerprinter()), comparer(), MultiParams(), workers=1)


def _written(store: Store) -> dict[str, tuple[frozenset[str], str]]:
    """``{id: (the ids of its group, its kind)}`` for every document in a group."""
    docs = [d for d in store.get(d.id for d in sample()) if d.group is not None]
    members: dict[str, set[str]] = {}
    for d in docs:
        members.setdefault(d.group, set()).add(d.id)
    assert all(d.group_size == len(members[d.group]) and d.group_kind is not None for d in docs)
    return {d.id: (frozenset(members[d.group]), d.group_kind) for d in docs}


def test_partial_groups_and_kinds_are_the_same_in_every_store(store: Store, tmp_path: Path) -> None:
    docs = list(sample())
    assert store.put(docs).written == len(docs)
    store.refresh()
    summary = update_groups(store, partial=_links())
    got = _written(store)
    listed = stored_groups(store)  # what `simdup groups --list` prints: the same groups and kinds
    assert {key[-1]: (frozenset(k[-1] for k in g.members), kind)
            for g in listed for key, kind in zip(g.members, g.kinds)} == got
    assert [len(g.members) for g in listed] == sorted((len(g.members) for g in listed), reverse=True)

    with LocalStore(tmp_path / "reference") as reference:
        reference.setup()
        reference.put(docs)
        update_groups(reference, partial=_links())
        assert got == _written(reference)

    near = {d.id for a, b in itertools.combinations(docs, 2) if (a.fingerprint ^ b.fingerprint).bit_count() <= 3
            for d in (a, b)}
    assert {i for i, (_, kind) in got.items() if kind == "near-duplicate"} == near
    assert got[SOURCE] == got[CUT] == (frozenset({SOURCE, CUT}), "partial")
    assert {got[i][1] for i in EDITED} == {"near-duplicate"}
    assert summary.kinds == {"near-duplicate": len(near), "partial": len(got) - len(near)} and summary.partial >= 1

    # Nothing changed: nothing is written. Without --partial the partial members leave their groups.
    again = update_groups(store, partial=_links())
    assert (again.set, again.cleared, again.unchanged) == (0, 0, len(got))
    plain = update_groups(store)
    assert plain.cleared == len(got) - len(near) and set(_written(store)) == near
