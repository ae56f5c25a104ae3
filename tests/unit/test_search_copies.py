"""find_copies over a store: near-duplicates unchanged, partial copies found, batches in order."""

from __future__ import annotations

import importlib
import importlib.resources
import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es import default_fingerprinter, find_copies
from simdup_es.errors import EmptyDocumentError
from simdup_es.fingerprint import Doc
from simdup_es.multilevel import MemoryPartIndex, MultiParams
from simdup_es.parts import PartPrinter
from simdup_es.search import counted_keys, counted_keys_reference, find_copies_many
from simdup_es.store.base import StoredDoc
from simdup_es.store.local import LocalStore

SAMPLE = importlib.resources.files("simdup_es.data") / "sample.jsonl"
RECORDS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
BY_ID = {r["id"]: r for r in RECORDS}


def _host_with_passage() -> dict[str, str]:
    """Half of a man page's lines pasted into the middle of an unrelated LibreOffice page."""
    source = BY_ID["zh-man-page:man1/systemd-delta.1"]["text"].splitlines()
    host = BY_ID["zh-lo:shared/main0213#0"]["text"].splitlines()
    half = len(host) // 2
    return {"id": "planted", "text": "\n".join(host[:half] + source[: len(source) // 2] + host[half:])}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    printer = PartPrinter(default_fingerprinter())
    local = LocalStore(tmp_path_factory.mktemp("copies") / "store")
    local.setup()
    docs = [*RECORDS, _host_with_passage()]
    for r in docs:
        fp = printer.fingerprinter.fingerprint(r["text"], r.get("title"))
        local.put([StoredDoc(r["id"], fp.value, fp.version, r["text"], r.get("title"), levels=printer.levels(r["text"]))])
    # The fingerprint of a stored document, without its text (a store that keeps no text).
    perl = BY_ID["zh-man:man7/perlnumber.7#0"]
    fp = printer.fingerprinter.fingerprint(perl["text"], perl["title"])
    local.put([StoredDoc("no-text", fp.value, fp.version)])
    local.refresh()
    yield local
    local.close()


def test_the_store_answers_as_the_reference_index(store: LocalStore) -> None:
    printer = PartPrinter(default_fingerprinter())
    index = MemoryPartIndex()
    for r in [*RECORDS, _host_with_passage()]:
        index.put_levels(r["id"], printer.levels(r["text"]))
    found = 0
    for r in RECORDS:
        q = printer.levels(r["text"])
        args = (q.fingerprints, [k.key for k in q.keys], q.version)
        got = store.part_candidates(*args, exclude_id=r["id"])
        assert got == index.part_candidates(*args, exclude_id=r["id"]), r["id"]
        found += len(got)
    assert found > 0


def test_near_duplicates_are_exactly_the_document_level_results(store: Any) -> None:
    stored = {r["id"]: default_fingerprinter().fingerprint(r["text"], r.get("title"))
              for r in [*RECORDS, _host_with_passage(), {**BY_ID["zh-man:man7/perlnumber.7#0"], "id": "no-text"}]}
    for r in RECORDS:
        fp = default_fingerprinter().fingerprint(r["text"], r.get("title"))
        # Every stored document within distance 3, by brute force.
        near = {i: d for i, f in stored.items() if i != r["id"] and (d := fp.distance(f)) <= 3}
        copies = find_copies(store, r["text"], fingerprint=fp, exclude_id=r["id"])
        by_distance = {c.id: c.distance for c in copies if c.distance is not None and c.distance <= 3}
        assert by_distance == near and all(copies_kind == "near-duplicate" for copies_kind in
                                           (c.kind for c in copies if c.id in near)), r["id"]
        document_only = find_copies(store, r["text"], fingerprint=fp, exclude_id=r["id"], matrix=False)
        assert {c.id: c.distance for c in document_only} == near and all(c.comparison is None for c in document_only)
        # Past distance 3 a copy is a near-duplicate only when most of both sides is copied (a whole copy).
        for c in copies:
            if c.id not in near:
                whole = min(c.copied_query, c.copied_match) >= MultiParams().whole_share
                assert c.kind == ("near-duplicate" if whole else "partial"), (r["id"], c.id)


def test_a_passage_copied_into_another_document_is_a_partial_copy_both_ways(store: Any) -> None:
    source = BY_ID["zh-man-page:man1/systemd-delta.1"]
    got = {c.id: c for c in find_copies(store, source["text"], title=source["title"], exclude_id=source["id"])}
    planted = got["planted"]
    assert planted.kind == "partial" and planted.distance is not None and planted.distance > 3
    assert planted.similarity_query >= 0.3 and planted.containment_query_in_match >= 0.3
    assert got["zh-man-page-tw:man1/systemd-delta.1"].kind == "near-duplicate"
    host = _host_with_passage()
    back = {c.id: c for c in find_copies(store, host["text"], exclude_id="planted")}
    assert back[source["id"]].kind == "partial" and back[source["id"]].similarity_match >= 0.3


def test_the_deleted_paragraph_copy_is_found(store: Any) -> None:
    r = BY_ID["zh-man:man8/nmbd.8#3"]
    got = {c.id: c.kind for c in find_copies(store, r["text"], title=r.get("title"), exclude_id=r["id"])}
    assert "zh-man:man8/nmbd.8#3~paragraph-deleted" in got


def test_a_stricter_threshold_drops_partial_copies(store: Any) -> None:
    source = BY_ID["zh-man-page:man1/systemd-delta.1"]
    strict = find_copies(store, source["text"], title=source["title"], exclude_id=source["id"],
                         params=MultiParams(partial_threshold=0.9))
    assert "planted" not in {c.id for c in strict}


def test_batch_gives_each_query_its_results_in_order_and_keeps_bad_queries(store: Any) -> None:
    queries = [BY_ID["zh-man:man7/perlnumber.7#0"], {"id": "empty", "text": "。。。"}, BY_ID["zh-man:man8/nmbd.8#3"]]
    out = list(find_copies_many(store, queries, lambda q: Doc(q["text"], q.get("title")), workers=2,
                                exclude=lambda q: q["id"]))
    assert [q["id"] for q, _ in out] == ["zh-man:man7/perlnumber.7#0", "empty", "zh-man:man8/nmbd.8#3"]
    assert isinstance(out[1][1], EmptyDocumentError)
    for q, matches in (out[0], out[2]):
        one = find_copies(store, q["text"], title=q.get("title"), exclude_id=q["id"])
        assert [m.to_dict() for m in matches] == [m.to_dict() for m in one]  # type: ignore[union-attr]


def test_a_near_duplicate_without_text_is_kept_unscored(store: Any) -> None:
    perl = BY_ID["zh-man:man7/perlnumber.7#0"]
    got = {c.id: c for c in find_copies(store, perl["text"], title=perl["title"], exclude_id=perl["id"])}
    assert got["no-text"].kind == "near-duplicate" and got["no-text"].distance == 0
    assert got["no-text"].to_dict()["similarity_query"] is None
    assert got["zh-man:man7/perlnumber.7#0~edited"].to_dict()["similarity_query"] > 0.8


def test_a_near_duplicate_whose_text_shares_nothing_is_no_copy(tmp_path: Any) -> None:
    # The query's fingerprint over a text that shares nothing with it (a SimHash collision): within distance 0,
    # but the matrix finds nothing copied, so it is no copy (nor an unscored near-duplicate).
    printer = PartPrinter(default_fingerprinter())
    perl, other = BY_ID["zh-man:man7/perlnumber.7#0"], BY_ID["zh-man:man8/nmbd.8#3"]["text"]
    fp = printer.fingerprinter.fingerprint(perl["text"], perl["title"])
    with LocalStore(tmp_path / "store") as local:
        local.setup()
        local.put([StoredDoc("collision", fp.value, fp.version, other, levels=printer.levels(other)),
                   StoredDoc("no-text", fp.value, fp.version)])
        local.refresh()
        got = {c.id: c for c in find_copies(local, perl["text"], title=perl["title"])}
    assert "collision" not in got and got["no-text"].kind == "near-duplicate"


def test_the_query_text_is_unified_once(store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # unify is not idempotent and costs about a third of a fingerprint: find_copies and
    # find_copies_many unify the query once, for the fingerprint, the levels and the matrix.
    from simdup_es.text import unify, unify_many

    q = BY_ID["zh-man:man7/perlnumber.7#0"]
    expected = [m.to_dict() for m in find_copies(store, q["text"], title=q["title"], exclude_id=q["id"])]
    calls: list[str] = []

    def counting(text: str) -> str:
        calls.append(text)
        return unify(text)

    def counting_many(texts: list[str]) -> list[str]:
        calls.extend(texts)
        return unify_many(texts)

    for module in ("fingerprint", "parts", "search"):  # the modules that unify a query
        for name, fake in (("unify", counting), ("unify_many", counting_many)):
            if hasattr(loaded := importlib.import_module(f"simdup_es.{module}"), name):
                monkeypatch.setattr(loaded, name, fake)
    got = find_copies(store, q["text"], title=q["title"], exclude_id=q["id"])
    assert calls.count(q["text"]) == 1
    assert [m.to_dict() for m in got] == expected
    calls.clear()
    [(_, many)] = find_copies_many(store, [q], lambda r: Doc(r["text"], r["title"]), workers=1, exclude=lambda r: r["id"])
    assert calls.count(q["text"]) == 1
    assert [m.to_dict() for m in many] == expected  # type: ignore[union-attr]


def test_a_text_copied_more_often_than_the_store_cut_gets_every_copy(tmp_path: Any) -> None:
    # Half of a man page pasted into twelve unrelated pages; the store is asked for 3 candidates
    # at first, and asked for more while the judge keeps confirming copies.
    printer = PartPrinter(default_fingerprinter())
    source = BY_ID["zh-man-page:man1/systemd-delta.1"]
    lines = source["text"].splitlines()
    hosts = [r for r in RECORDS if "systemd-delta" not in r["id"] and len(r["text"]) > 500][:12]
    local = LocalStore(tmp_path / "store")
    local.setup()
    for h in hosts:
        host = h["text"].splitlines()
        text = "\n".join(host[: len(host) // 2] + lines[: len(lines) // 2] + host[len(host) // 2 :])
        fp = printer.fingerprinter.fingerprint(text)
        local.put([StoredDoc("in-" + h["id"], fp.value, fp.version, text, levels=printer.levels(text))])
    local.refresh()
    try:
        # Held by all twelve, more than 10 of them: common text by default (MOSS's -m 10 in a small store).
        assert not find_copies(local, source["text"], limit=100)
        cut = find_copies(local, source["text"], params=MultiParams(store_limit=3, common=100), limit=100)
        whole = find_copies(local, source["text"], params=MultiParams(store_limit=1000, common=100), limit=100)
    finally:
        local.close()
    assert len(hosts) == 12
    assert {c.id for c in cut} == {c.id for c in whole} == {"in-" + h["id"] for h in hosts}
    assert cut.more == 0


def test_the_library_refuses_what_is_no_text_or_no_parameter_with_its_own_errors(store: Any) -> None:
    import simdup_es
    from simdup_es.compare import CompareParams
    from simdup_es.errors import ConfigError, InputError
    from simdup_es.service import Query, Service

    text = "第一篇文档的正文内容在这里，讲的是今年的工作安排。"
    cases = [(lambda: simdup_es.fingerprint(b"\x00\xff"), InputError, "text must be a str, got bytes: decode it"),  # type: ignore[arg-type]
             (lambda: simdup_es.fingerprint(text, title=5), InputError, "title must be a str or None"),  # type: ignore[arg-type]
             (lambda: simdup_es.distance(simdup_es.fingerprint(text), None), ConfigError, "two Fingerprints"),  # type: ignore[arg-type]
             (lambda: find_copies(store, None), ConfigError, "give the text"),
             (lambda: find_copies(store, b"abc"), InputError, "must be a str"),  # type: ignore[arg-type]
             (lambda: find_copies(store, text, limit=-1), ConfigError, "limit must be a whole number, 0 or more"),
             (lambda: Service(store).search(Query(text=text), limit=-1), ConfigError, "limit must be a whole number"),
             (lambda: find_copies(store, text, params=CompareParams()), ConfigError, "params must be MultiParams"),  # type: ignore[arg-type]
             (lambda: Service(store, params=CompareParams()), ConfigError, "params must be MultiParams"),  # type: ignore[arg-type]
             (lambda: Query(title="a title alone"), ConfigError, "give the id of a stored document, or a text"),
             (lambda: MultiParams(k=8), ConfigError, "k must be a whole number from 0 to 7"),
             (lambda: simdup_es.similarity(99), ConfigError, "0 to 64"),
             (lambda: simdup_es.blocks(-1), ConfigError, "64-bit unsigned"),
             (lambda: simdup_es.FingerprintParams(marked_words="区块链"), ConfigError, "not one string"),
             (lambda: simdup_es.FingerprintParams(title_boost="x"), ConfigError, "must be a number")]  # type: ignore[arg-type]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()
    # The levels' path refuses them as the fingerprint's does: an error result, not an exception.
    (_, result, levels), = PartPrinter(default_fingerprinter()).map_items([b"\xe6\x96\x87"], Doc, workers=1)
    assert levels is None and isinstance(result.error, InputError) and "decode it first" in str(result.error)
    assert find_copies(store, text, limit=0) == []  # 0: only how many there are, in more


def test_a_search_of_another_fingerprint_version_says_so_once_per_service(store: Any, caplog: pytest.LogCaptureFixture) -> None:
    from simdup_es import Fingerprinter, FingerprintParams

    from simdup_es.service import Query, Service

    other = Service(store, fingerprinter=Fingerprinter(FingerprintParams(title_boost=5)))
    query = Query(text="第一篇文档的正文内容在这里，讲的是今年的工作安排。")
    for _ in range(3):
        assert other.search(query) == []
    said = [r.getMessage() for r in caplog.records if "no document of fingerprint version" in r.getMessage()]
    assert len(said) == 1 and other.fingerprinter.version in said[0]
    assert Service(store).search(query) == [] and len(caplog.records) == len(said)  # its own version: nothing
    told = Service(store, fingerprinter=other.fingerprinter)
    assert told.other_versions() == store.versions()  # the caller says so: the searches do not
    assert told.search(query) == [] and len(caplog.records) == len(said)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 40) | st.integers(0, 2**64 - 1), max_size=2500), st.sampled_from(["list", "array", "iter"]))
def test_counted_keys_are_the_references(keys: list[int], given_as: str) -> None:
    """The keys a search asks the store to count, found with numpy: the distinct ones in text order, an even spread of
    MAX_COUNTED_KEYS when more (many repeats, and past the cap)."""
    arg = {"list": keys, "array": np.array(keys, dtype=np.uint64), "iter": iter(keys)}[given_as]
    assert counted_keys(arg) == counted_keys_reference(keys)


def test_counted_keys_that_are_not_u64_are_counted_plainly() -> None:
    assert counted_keys([-1, 2**64, -1, 3]) == [-1, 2**64, 3]


def test_counted_keys_of_a_long_query_are_a_spread_of_the_distinct_ones_in_text_order() -> None:
    keys = np.random.default_rng(5).integers(0, 3000, size=20_000, dtype=np.uint64) * np.uint64(2**50)
    got = counted_keys(keys)
    assert len(got) == 1000 and got == counted_keys_reference(keys.tolist())


def test_the_key_values_a_store_reads_are_ints_as_the_list_gave_them() -> None:
    from simdup_es.search import _KeyValues

    values = [3, 2**64 - 1, 7, 3]
    for held in (np.array(values, dtype=np.uint64), values):
        seen = _KeyValues(held)
        assert len(seen) == 4 and list(seen) == values and seen[1] == 2**64 - 1 and type(seen[1]) is int
        assert seen[1:3] == values[1:3] and seen[-1] == 3 and type(list(seen)[0]) is int
