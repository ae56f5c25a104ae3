"""ElasticsearchStore on a real node: exact recall, idempotent writes, failed items, errors.

The recall test is the one that matters: for every query, the documents the 5-of-8
block query plus exact re-rank returns (d <= 3) must be exactly the ones a brute-force
scan over everything indexed finds. Zero misses, no extras.
"""

from __future__ import annotations

import json
import logging
import uuid

import numpy as np
import pytest
from elasticsearch import Elasticsearch

from simdup_es import keys
from simdup_es import simhash as sh
from simdup_es.errors import ConfigError, NotFound, StoreError
from simdup_es.fingerprint import Doc, Fingerprint
from simdup_es.search import near_duplicates
from simdup_es.store.base import Store, StoredDoc
from simdup_es.es.connection import ConnectionSettings
from simdup_es.es.mappings import COMPONENT_TEMPLATE, INDEX_TEMPLATE
from simdup_es.store.elasticsearch import ElasticsearchStore

from tests._data import data_dir
from tests.conftest import new_client

VERSION = "test.v1"
OTHER_VERSION = "test.v2"
MAX_REAL_DOCS = 2000  # fingerprinting costs ~3 ms a document here; the rest is synthetic
TOTAL_DOCS = 20_000
K = 3


def _flip(fp: int, rng: np.random.Generator, d: int) -> int:
    for bit in rng.choice(64, size=d, replace=False):
        fp ^= 1 << int(bit)
    return fp


def _flip_in_blocks(fp: int, rng: np.random.Generator, blocks: list[int]) -> int:
    """Flip one bit in each of ``blocks`` (8-bit blocks): the pigeonhole edge cases."""
    for j in blocks:
        fp ^= 1 << (8 * int(j) + int(rng.integers(8)))
    return fp


def _brute_force(query: int, ids: list[str], fps: np.ndarray, k: int = K) -> dict[str, int]:
    d = sh.hamming_many(query, fps)
    return {ids[i]: int(d[i]) for i in np.flatnonzero(d <= k)}


@pytest.fixture(scope="module")
def corpus(request: pytest.FixtureRequest) -> tuple[list[StoredDoc], list[int]]:
    """>= 20,000 documents: real ones when the corpus is there, neighbours at d = 0..6, random fill.

    Returns the documents and the query fingerprints.
    """
    rng = np.random.default_rng(20240601)
    docs: list[StoredDoc] = []
    path = data_dir() / "zh-docs.jsonl"
    if path.exists():
        fingerprinter = request.getfixturevalue("fingerprinter")
        with open(path, encoding="utf-8") as f:
            records = [json.loads(line) for _, line in zip(range(MAX_REAL_DOCS), f)]
        results = fingerprinter.map(Doc(r["text"], r.get("title")) for r in records)
        for r, res in zip(records, results):
            if res.error is None:
                docs.append(StoredDoc(r["id"], res.fingerprint.value, VERSION, r["text"][:200], r.get("title")))
    else:
        fill = rng.integers(0, 2**64 - 1, 2000, dtype=np.uint64, endpoint=True)
        docs += [StoredDoc(f"real-{i}", int(v), VERSION) for i, v in enumerate(fill)]
    bases = [docs[int(i)].fingerprint for i in rng.choice(len(docs), size=300, replace=False)]
    for b, base in enumerate(bases):
        for d in range(7):
            docs.append(StoredDoc(f"near-{b}-d{d}", _flip(base, rng, d), VERSION, f"near {b} {d}"))
        # d = 3 and 4 spread over distinct blocks: exactly 5 and 4 blocks left equal.
        docs.append(StoredDoc(f"edge-{b}-3", _flip_in_blocks(base, rng, list(rng.choice(8, 3, replace=False))), VERSION))
        docs.append(StoredDoc(f"edge-{b}-4", _flip_in_blocks(base, rng, list(rng.choice(8, 4, replace=False))), VERSION))
    # Same fingerprints under another version: never comparable, never returned.
    docs += [StoredDoc(f"other-{b}", base, OTHER_VERSION) for b, base in enumerate(bases[:50])]
    while len(docs) < TOTAL_DOCS:
        docs.append(StoredDoc(f"rand-{len(docs)}", int(rng.integers(0, 2**64 - 1, dtype=np.uint64, endpoint=True)), VERSION))
    queries = bases[:120]
    queries += [_flip(docs[int(i)].fingerprint, rng, int(rng.integers(0, 4))) for i in rng.choice(len(docs), 60, replace=False)]
    queries += [int(v) for v in rng.integers(0, 2**64 - 1, 30, dtype=np.uint64, endpoint=True)]
    queries += [_flip_in_blocks(b, rng, [0, 3, 7]) for b in bases[120:140]]
    return docs, queries


def test_recall_equals_brute_force(es_client: Elasticsearch, es_index: str, corpus) -> None:
    docs, queries = corpus
    assert len(docs) >= 20_000 and len(queries) >= 200
    store = ElasticsearchStore(es_client, es_index)
    assert isinstance(store, Store)
    store.setup()
    report = store.put(docs)
    assert report.failed == [] and report.written == len(docs)
    store.refresh()
    assert store.count() == len(docs)

    mine = [d for d in docs if d.version == VERSION]
    ids = [d.id for d in mine]
    fps = np.array([d.fingerprint for d in mine], dtype=np.uint64)
    found_any = 0
    for q in queries:
        expected = _brute_force(q, ids, fps)
        for k in (K, 5):  # the candidate query of k = 5 asks for 3 of 8 blocks (many more hits to walk)
            got = {m.id: m.distance for m in near_duplicates(store, Fingerprint(q, VERSION), k=k)}
            want = expected if k == K else _brute_force(q, ids, fps, k)
            missed, extra = want.keys() - got.keys(), got.keys() - want.keys()
            assert not missed and not extra, f"k={k} query {sh.to_hex(q)}: missed {sorted(missed)}, extra {sorted(extra)}"
            assert got == want
        found_any += bool(expected)
    assert found_any >= 150  # most queries have near-duplicates: the test is not vacuous

    # exclude_id leaves out the query document itself, nothing else.
    first = mine[0]
    got = {m.id for m in near_duplicates(store, Fingerprint(first.fingerprint, VERSION), exclude_id=first.id)}
    assert got == _brute_force(first.fingerprint, ids, fps).keys() - {first.id}

    # Re-putting the same documents replaces them: the count does not change.
    again = store.put(docs)
    assert again.written == len(docs) and again.failed == []
    store.refresh()
    assert store.count() == len(docs)


def test_more_candidates_than_a_page_are_all_returned(es_client: Elasticsearch, es_index: str) -> None:
    rng = np.random.default_rng(7)
    base = 0x0123456789ABCDEF
    docs = [StoredDoc(f"same-{i}", base, VERSION) for i in range(120)]
    docs += [StoredDoc(f"near-{i}", _flip(base, rng, 1 + i % 6), VERSION) for i in range(180)]
    docs += [StoredDoc(f"rand-{i}", int(v), VERSION) for i, v in enumerate(rng.integers(0, 2**63, 500, dtype=np.uint64))]
    store = ElasticsearchStore(es_client, es_index, page_size=50, pit_page_size=37)
    store.setup()
    assert store.put(docs).written == len(docs)
    store.refresh()
    ids = [d.id for d in docs]
    fps = np.array([d.fingerprint for d in docs], dtype=np.uint64)
    cand_ids, cand_fps = store.candidates(base, VERSION, k=K)
    assert len(cand_ids) == len(set(cand_ids)) > 200  # several pages, nothing twice
    assert dict(zip(cand_ids, cand_fps.tolist())) == {i: int(f) for i, f in zip(ids, fps) if i in set(cand_ids)}
    got = {m.id: m.distance for m in near_duplicates(store, Fingerprint(base, VERSION))}
    assert got == _brute_force(base, ids, fps)


def test_bulk_with_bad_documents_reports_each_and_indexes_the_rest(es_client: Elasticsearch, es_index: str) -> None:
    store = ElasticsearchStore(es_client, es_index, chunk_size=40)
    store.setup()
    good = [StoredDoc(f"good-{i}", i * 7919 + 1, VERSION, f"文本 {i}", f"标题 {i}") for i in range(200)]
    bad = [
        StoredDoc("bad-title-object", 1, VERSION, "text", {"not": "a string"}),  # type: ignore[arg-type]
        StoredDoc("bad-text-object", 2, VERSION, {"nested": {"x": 1}}),  # type: ignore[arg-type]
        StoredDoc("bad-fp-too-big", 1 << 64, VERSION),
        StoredDoc("bad-fp-negative", -1, VERSION),
        StoredDoc("", 3, VERSION),
        StoredDoc("x" * 600, 4, VERSION),  # Elasticsearch would fail the whole request for it
    ]
    docs = good[:60] + bad[:2] + good[60:130] + bad[2:] + good[130:]
    report = store.put(docs)
    assert report.written == len(good)
    assert report.written + len(report.failed) == len(docs)
    reasons = dict(report.failed)
    assert set(reasons) == {d.id for d in bad}
    assert all(reason.strip() for reason in reasons.values())
    assert "title" in reasons["bad-title-object"] and "text" in reasons["bad-text-object"]
    assert "64-bit" in reasons["bad-fp-too-big"] and "512" in reasons["x" * 600]
    store.refresh()
    assert store.count() == len(good)
    assert {d.id for d in store.get([d.id for d in docs if d.id])} == {d.id for d in good}


def test_same_id_twice_in_one_put_keeps_the_last(es_client: Elasticsearch, es_index: str) -> None:
    store = ElasticsearchStore(es_client, es_index, chunk_size=100)
    store.setup()
    docs = [StoredDoc(f"d{i}", i, VERSION) for i in range(500)] + [StoredDoc("d0", 12345, VERSION, "last")]
    assert store.put(docs).written == 501
    store.refresh()
    assert store.count() == 500
    assert store.get(["d0"]) == [docs[-1]]


def test_force_merge_leaves_one_segment_per_shard(es_client: Elasticsearch, es_index: str) -> None:
    store = ElasticsearchStore(es_client, es_index)
    store.setup()
    for batch in range(4):  # each refresh writes a segment of its own
        store.put([StoredDoc(f"d{batch}-{i}", batch * 1000 + i, VERSION) for i in range(50)])
        store.refresh()

    def segments() -> int:
        shards = es_client.indices.segments(index=es_index)["indices"][es_index]["shards"]
        return max(sum(len(copy["segments"]) for copy in copies if copy["routing"]["primary"])
                   for copies in shards.values())

    assert segments() > 1
    store.force_merge()
    assert segments() == 1
    assert store.count() == 200


def test_force_merge_on_a_disk_too_full_to_merge_says_so_instead_of_waiting(es_client: Elasticsearch,
                                                                             es_index: str) -> None:
    from simdup_es.es import io

    store = ElasticsearchStore(es_client, es_index)
    store.setup()
    store.put([StoredDoc(f"d{i}", i, VERSION) for i in range(10)])
    store.refresh()
    settings = es_client.cluster.get_settings(include_defaults=True, flat_settings=True)
    if "indices.merge.disk.check_interval" not in settings["defaults"]:  # OpenSearch, Elasticsearch < 8.19
        assert io.merges_held_back(es_client) == []
        store.force_merge()
        return
    watermark = "indices.merge.disk.watermark.high"
    before = settings["persistent"].get(watermark)
    assert io.merges_held_back(es_client) == []  # the test node merges on any disk (scripts/es-server)
    es_client.cluster.put_settings(persistent={watermark: "1%"})  # 99% of the disk must be free to merge
    try:
        held = io.merges_held_back(es_client)
        assert len(held) == 1 and "GiB free" in held[0]
        with pytest.raises(StoreError, match=r"cannot force-merge .*watermark.*free disk space"):
            store.force_merge()
    finally:
        es_client.cluster.put_settings(persistent={watermark: before})
    assert io.merges_held_back(es_client) == []
    store.force_merge()
    assert store.count() == 10


def test_get_returns_text_title_and_fingerprint(es_client: Elasticsearch, es_index: str) -> None:
    store = ElasticsearchStore(es_client, es_index)
    store.setup()
    docs = [StoredDoc("a", 2**64 - 1, VERSION, "甲文", "甲", unified="甲文"), StoredDoc("b", 0, VERSION, "乙文"),
            StoredDoc("c/#:?", 5, VERSION)]
    store.put(docs)
    store.refresh()
    assert store.get(["b", "missing", "c/#:?", "a", "b"]) == [docs[1], docs[2], docs[0]]
    assert store.get([]) == []


def test_an_index_made_before_the_unified_text_is_written_without_it_until_set_up_again(es_client: Elasticsearch,
                                                                                          es_index: str) -> None:
    from simdup_es.es.mappings import index_mappings

    old = f"old-{es_index}"  # outside the templates' pattern: the mapping is this one alone
    mappings = index_mappings()
    del mappings["properties"][keys.ROOT]["properties"][keys.UNIFIED_NAME]
    es_client.indices.create(index=old, mappings=mappings)
    try:
        store = ElasticsearchStore(es_client, old)
        doc = StoredDoc("a", 5, VERSION, "甲文，乙", unified="甲文,乙")
        assert store.put([doc]).written == 1
        store.refresh()
        # Not written (the dynamic simdup object would have indexed it), and read back as not kept.
        props = es_client.indices.get_mapping(index=old)[old]["mappings"]["properties"][keys.ROOT]["properties"]
        assert keys.UNIFIED_NAME not in props
        assert store.get(["a"]) == [StoredDoc("a", 5, VERSION, "甲文，乙")]
        # Set up again, the index maps it and a store keeps it from then on.
        again = ElasticsearchStore(es_client, old)
        again.setup()
        assert again.put([doc]).written == 1
        again.refresh()
        assert again.get(["a"]) == [doc]
    finally:
        es_client.options(ignore_status=404).indices.delete(index=old)


def test_setup_is_idempotent_and_installs_the_templates(es_client: Elasticsearch, es_index: str) -> None:
    store = ElasticsearchStore(es_client, es_index)
    store.setup()
    store.setup()
    assert es_client.cluster.get_component_template(name=COMPONENT_TEMPLATE)["component_templates"]
    assert es_client.indices.get_index_template(name=INDEX_TEMPLATE)["index_templates"]
    props = es_client.indices.get_mapping(index=es_index)[es_index]["mappings"]["properties"]
    assert props["simdup"]["properties"]["b0"]["type"] == "keyword"
    assert props["text"]["type"] == "text"
    assert store.count() == 0


def test_template_applies_to_indices_created_elsewhere(es_client: Elasticsearch, es_index: str) -> None:
    ElasticsearchStore(es_client, es_index).setup()  # installs the templates
    other = f"simdup-plain-{uuid.uuid4().hex[:8]}"
    try:
        es_client.indices.create(index=other)  # no mappings given: all from the templates
        mapping = es_client.indices.get_mapping(index=other)[other]["mappings"]
        assert mapping["properties"]["simdup"]["properties"]["b7"]["type"] == "keyword"
        assert mapping["_meta"] == keys.index_meta()  # this schema: a store searches and writes it
        store = ElasticsearchStore(es_client, other)
        assert store.put([StoredDoc("1", 9, VERSION)]).written == 1 and store.layout() == "8x8"
    finally:
        es_client.options(ignore_status=404).indices.delete(index=other)


def test_index_outside_the_template_pattern(es_client: Elasticsearch) -> None:
    name = f"plain-{uuid.uuid4().hex[:8]}"
    existing = f"users-own-{uuid.uuid4().hex[:8]}"
    try:
        store = ElasticsearchStore(es_client, name)
        store.setup()
        store.setup()
        props = es_client.indices.get_mapping(index=name)[name]["mappings"]["properties"]
        assert props["simdup"]["properties"]["b3"]["type"] == "keyword" and props["title"]["type"] == "text"

        # An index the user made, strict mapping and all: setup adds the fingerprint fields and records the keys.
        strict = {"dynamic": "strict", "properties": {"title": {"type": "text"}, "text": {"type": "text"}}}
        es_client.indices.create(index=existing, mappings=strict)
        own = ElasticsearchStore(es_client, existing)
        with pytest.raises(StoreError, match="no simdup fields.*'simdup setup'"):
            own.put([StoredDoc("1", 1, VERSION, "t")])
        own = ElasticsearchStore(es_client, existing)
        own.setup()
        assert es_client.indices.get_mapping(index=existing)[existing]["mappings"]["_meta"] == keys.index_meta()
        assert own.put([StoredDoc("1", 1, VERSION, "t")]).written == 1
        own.refresh()
        assert [m.id for m in near_duplicates(own, Fingerprint(1, VERSION))] == ["1"]
    finally:
        es_client.options(ignore_status=404).indices.delete(index=[name, existing])


def test_missing_index_says_run_setup(es_client: Elasticsearch, es_index: str) -> None:
    store = ElasticsearchStore(es_client, es_index)
    calls = (
        store.count,
        lambda: store.candidates(1, VERSION, k=K),
        lambda: store.get(["x"]),
        lambda: store.put([StoredDoc("x", 1, VERSION)]),
    )
    for call in calls:
        with pytest.raises(NotFound, match="simdup setup"):
            call()
    assert not es_client.indices.exists(index=es_index)  # put did not auto-create a wrongly mapped index


def test_conflicting_mapping_is_a_clear_error(es_client: Elasticsearch, es_index: str) -> None:
    es_client.indices.create(index=es_index, mappings={"properties": {"simdup": {"properties": {"b0": {"type": "long"}}}}})
    with pytest.raises(StoreError, match="maps the simdup fields differently.*simdup.b0"):  # the template's schema, not its fields
        ElasticsearchStore(es_client, es_index).setup()
    # Fields of its own where simdup writes its groups: refused, with the fields named.
    other = f"own-{es_index}"  # outside simdup-*: the installed template would map the fields
    es_client.indices.create(index=other, mappings={"properties": {"dup_group": {"type": "long"}}})
    try:
        with pytest.raises(StoreError, match="maps the simdup fields differently.*must be free or mapped as simdup maps"):
            ElasticsearchStore(es_client, other).setup()
    finally:
        es_client.options(ignore_status=404).indices.delete(index=other)


def test_setup_without_template_privileges_still_prepares_the_index(
    es_url: str, es_index: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from elastic_transport import ApiResponseMeta, HttpHeaders, NodeConfig
    from elasticsearch import AuthorizationException

    def refuse(**_: object) -> None:
        meta = ApiResponseMeta(403, "1.1", HttpHeaders(), 0.0, NodeConfig("http", "127.0.0.1", 9200))
        body = {"error": {"type": "security_exception", "reason": "action [cluster:admin/component_template/put] is unauthorized"}}
        raise AuthorizationException("security_exception", meta, body)

    client = new_client(es_url)  # its own client: the patch must not leak into other tests
    try:
        monkeypatch.setattr(client.cluster, "put_component_template", refuse)
        store = ElasticsearchStore(client, es_index)
        store.setup()
        assert "could not install the index templates" in caplog.text and "lacks the privileges" in caplog.text
        assert store.put([StoredDoc("1", 1, VERSION)]).written == 1
    finally:
        client.close()


def test_secrets_stay_out_of_logs_and_errors(es_url: str, es_index: str, caplog: pytest.LogCaptureFixture) -> None:
    # The test node has no security: it ignores the credentials, so every request succeeds.
    caplog.set_level(logging.DEBUG)
    host = es_url.split("://", 1)[1]
    for settings in (
        ConnectionSettings(url=es_url, username="elastic", password="pw-secret-789"),
        ConnectionSettings(url=es_url, api_key="apikey-secret-789"),
        ConnectionSettings(url=f"http://elastic:url-secret-789@{host}"),
    ):
        with ElasticsearchStore(settings, es_index) as store:
            store.setup()
            store.put([StoredDoc("1", 1, VERSION, "t")])
            store.refresh()
            assert [m.id for m in near_duplicates(store, Fingerprint(1, VERSION))] == ["1"]
            # Asked for a layout the index does not have, it refuses, saying nothing secret.
            with ElasticsearchStore(settings, es_index, layout="terms") as other, pytest.raises(ConfigError) as info:
                other.setup()
            assert all("secret-789" not in text for text in (str(info.value), repr(settings), repr(store)))
    assert "secret-789" not in caplog.text


@pytest.fixture
def plain_index(es_client: Elasticsearch):  # type: ignore[no-untyped-def]
    """A fresh index name outside ``simdup-*`` (so no template adds fields to it), deleted afterwards."""
    name = f"plain-levels-{uuid.uuid4().hex[:8]}"
    yield name
    es_client.options(ignore_status=404).indices.delete(index=name)


def test_a_part_candidate_without_simdup_id_is_found_by_its_id(es_client: Elasticsearch, es_index: str) -> None:
    # Part searches read each hit's id from simdup.id's doc values; level fields written by other
    # means, without it, make the search ask for the _ids instead: nothing is lost.
    from simdup_es.parts import PartPrinter
    from simdup_es.text import UnifiedText, unify

    store = ElasticsearchStore(es_client, es_index)
    store.setup()
    text = unify(_fixture("zh_article.txt"))
    levels = PartPrinter(_fingerprinter()).levels(UnifiedText(text))
    assert store.put([StoredDoc("ours", 999, levels.version, text, levels=levels)]).written == 1
    source = es_client.get(index=es_index, id="ours")["_source"]
    del source[keys.ROOT][keys.ID_NAME]
    es_client.index(index=es_index, id="theirs", document=source, refresh=True)
    args = (list(levels.fingerprints), [k.key for k in levels.keys], levels.version)
    assert [c.id for c in store.part_candidates(*args)] == ["ours", "theirs"]  # (no simdup.id sorts last)
    (ids, _), found = store.copy_candidates(999, *args, k=K)
    assert sorted(ids) == ["ours", "theirs"] and found == store.part_candidates(*args)


def c_all(found, levels) -> bool:  # type: ignore[no-untyped-def]
    """Every part (with a fingerprint) and every key a query looks up (at most MAX_QUERY_KEYS) matches itself."""
    from simdup_es.store.base import query_terms

    looked_up = {i for i, _ in query_terms(levels.fingerprints, [k.key for k in levels.keys])[1]}
    return found.parts == {i for i, f in enumerate(levels.fingerprints) if f is not None} and \
        found.keys == looked_up and found.units == levels.units


def _fixture(name: str) -> str:
    from pathlib import Path

    return (Path(__file__).resolve().parent.parent / "fixtures" / name).read_text(encoding="utf-8")


def _fingerprinter():  # type: ignore[no-untyped-def]
    from simdup_es import default_fingerprinter

    return default_fingerprinter()


@pytest.mark.parametrize(("levels", "layout"), [("all", "8x8"), ("keys", "8x8"), ("all", "terms")])
def test_index_through_workers_stores_what_the_levels_made_here_give(
    es_client: Elasticsearch, es_index: str, fingerprinter, tmp_path, monkeypatch: pytest.MonkeyPatch, levels: str,
    layout: str,
) -> None:
    # `simdup index` gets the levels from worker processes as numbers, with the JSON of their keys in
    # the index's layout and the unified text: what it stores is exactly the _source of the document,
    # levels and unified text made in this process.
    from importlib import resources

    from simdup_es.es import bodies
    from simdup_es.indexer import index_items
    from simdup_es.levels import PartParams
    from simdup_es.parts import PartPrinter
    from simdup_es.sources import Fields, read_paths
    from simdup_es.store.base import stored_levels
    from simdup_es.text import unify

    sample = resources.files("simdup_es.data").joinpath("sample.jsonl").read_text(encoding="utf-8")
    path = tmp_path / "docs.jsonl"
    path.write_text(sample, encoding="utf-8")
    records = [json.loads(line) for line in sample.splitlines()]
    monkeypatch.setattr("simdup_es.parts._DOCS_PER_CHUNK", 16)  # 3 chunks: the workers run
    cut_again = []  # the sentences not sent, if indexing read them
    monkeypatch.setattr("simdup_es.parts._resplit", lambda self: cut_again.append(self) or ())
    assert len(records) > 32
    store = ElasticsearchStore(es_client, es_index, layout=layout)
    store.setup()
    rejects: list[object] = []
    summary = index_items(read_paths([path], Fields()), store, fingerprinter, workers=2, on_reject=rejects.append,
                          levels=levels)
    assert rejects == [] and summary.indexed == len(records) and cut_again == []
    store.refresh()
    hits = es_client.search(index=es_index, size=len(records) + 1, query={"match_all": {}})["hits"]["hits"]
    got = {hit["_id"]: hit["_source"] for hit in hits}
    printer = PartPrinter(fingerprinter, PartParams(with_parts=levels == "all"))
    want = {}
    for r in records:
        fp = fingerprinter.fingerprint(r["text"], r.get("title"))
        lv = printer.levels(r["text"])
        parts, key_values, cut = stored_levels(lv)
        want[r["id"]] = bodies.document_source(fp.value, fp.version, r["text"], r.get("title"), layout,
                                               keys.levels_object(r["id"], lv.units, parts, key_values, cut))
        want[r["id"]][keys.ROOT][keys.UNIFIED_NAME] = unify(r["text"])
    assert got == want
    assert any(source[keys.ROOT][keys.PART_QUADS_NAME] for source in got.values()) == (levels == "all")


def test_delete_from_a_missing_index_says_so(es_client: Elasticsearch) -> None:
    store = ElasticsearchStore(es_client, f"simdup-missing-{uuid.uuid4().hex[:8]}")
    with pytest.raises(NotFound, match="does not exist"):
        store.delete(["a"])
    assert not es_client.indices.exists(index=store.index)  # and no index was made by the delete


def test_incremental_groups_through_an_alias_write_first_and_stay_exact(es_client, es_index: str) -> None:  # type: ignore[no-untyped-def]
    # Through an alias a new document's index is not known before it is written: the keeper
    # writes first and regroups from the store, and a full run still finds nothing to change.
    from simdup_es.groups import stored_groups, update_groups
    from simdup_es.live_groups import GroupKeeper

    ElasticsearchStore(es_client, es_index).setup()
    alias = f"{es_index}-alias"
    es_client.indices.put_alias(index=es_index, name=alias)
    store = ElasticsearchStore(es_client, alias)
    assert store.put_keys(["a"]) is None and ElasticsearchStore(es_client, es_index).put_keys(["a"]) == [(es_index, "a")]
    a = 0x0123_4567_89AB_CDEF
    store.put([StoredDoc("a1", a, "v1"), StoredDoc("a2", a ^ 0b11, "v1")])
    store.refresh()
    update_groups(store, k=3)
    keeper = GroupKeeper(store)
    keeper.put([StoredDoc("a3", a ^ 0b111, "v1"), StoredDoc("b1", ~a & (2**64 - 1), "v1")])
    full = update_groups(store, k=3, dry_run=True)
    assert (full.set, full.cleared) == (0, 0), full.to_dict()
    assert [[key[-1] for key in g.members] for g in stored_groups(store)] == [["a1", "a2", "a3"]]
    assert keeper.summary.set == 3  # a1 and a2's size, a3 by a partial update after the put
