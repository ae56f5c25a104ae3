"""The Store contract for :meth:`Store.delete`: deleted documents are gone from every read.

Runs once per store (``local``, ``elasticsearch``; see conftest.py) on ten documents of
the sample corpus shipped in the package, stored with their levels (parts and sentence
keys), so candidates and part candidates both have something to lose.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from simdup_es import default_fingerprinter
from simdup_es.levels import Levels
from simdup_es.parts import PartPrinter
from simdup_es.store.base import NOT_FOUND, Store, StoredDoc


@cache
def ten() -> tuple[StoredDoc, ...]:
    printer = PartPrinter(default_fingerprinter())
    text = resources.files("simdup_es.data").joinpath("sample.jsonl").read_text(encoding="utf-8")
    out = []
    for record in map(json.loads, text.splitlines()[:10]):
        fp = printer.fingerprinter.fingerprint(record["text"], title=record.get("title"))
        out.append(StoredDoc(record["id"], fp.value, fp.version, record["text"], record.get("title"),
                             levels=printer.levels(record["text"])))
    return tuple(out)


def _part_candidates(store: Store, levels: Levels) -> set[str]:
    return {c.id for c in store.part_candidates(levels.fingerprints, [k.key for k in levels.keys], levels.version,
                                                limit=100)}


def test_deleted_documents_are_gone_from_every_read(store: Store) -> None:
    docs = list(ten())
    assert store.put(docs).written == 10
    store.refresh()
    gone, kept = docs[:3], docs[3:]
    for d in docs:  # before: every document finds itself
        assert d.id in store.candidates(d.fingerprint, d.version, k=3)[0]
        assert d.levels is not None and d.id in _part_candidates(store, d.levels)

    report = store.delete([d.id for d in gone] + ["no-such-document"])
    assert report.written == 3
    assert report.failed == [("no-such-document", NOT_FOUND)]
    store.refresh()

    gone_ids = {d.id for d in gone}
    assert store.get(d.id for d in gone) == []
    assert [d.id for d in store.get(d.id for d in kept)] == [d.id for d in kept]
    assert store.count() == 7
    assert store.versions() == {kept[0].version: 7}
    for d in docs:
        assert d.levels is not None
        found = set(store.candidates(d.fingerprint, d.version, k=3)[0])
        parts = _part_candidates(store, d.levels)
        assert not found & gone_ids and not parts & gone_ids
        if d in kept:
            assert d.id in found and d.id in parts
    with store.scan() as scan:
        fps, _, _ = scan.fingerprints()
        assert sorted(fps.tolist()) == sorted(d.fingerprint for d in kept)
        assert not {key[-1] for key in scan.members({}, every=True).keys} & gone_ids

    again = store.delete([d.id for d in gone])  # a no-op, reported as not found
    assert again.written == 0 and again.failed == [(d.id, NOT_FOUND) for d in gone]
    store.refresh()
    assert store.count() == 7


def test_delete_reports_bad_and_repeated_ids_and_nothing_is_a_no_op(store: Store) -> None:
    docs = list(ten())[:2]
    store.put(docs)
    store.refresh()
    assert store.delete([]).written == 0
    report = store.delete(["", docs[0].id, docs[0].id])
    assert report.written == 1
    assert [reason for _, reason in report.failed] == ["id must be a non-empty string", NOT_FOUND]
    store.refresh()
    assert [d.id for d in store.get(d.id for d in docs)] == [docs[1].id]


def test_a_deleted_id_can_be_written_again(store: Store) -> None:
    doc = ten()[0]
    store.put([doc])
    store.refresh()
    store.delete([doc.id])
    store.refresh()
    assert store.put([doc]).written == 1
    store.refresh()
    assert [d.id for d in store.get([doc.id])] == [doc.id]
    assert store.candidates(doc.fingerprint, doc.version, k=3)[0] == [doc.id]
    assert doc.levels is not None and _part_candidates(store, doc.levels) == {doc.id}
