"""simdup backfill on a real node, against an index simdup did not create.

The index has its own mapping and data (text, keyword, integer, an object, a
nested field, routed documents on two shards), and documents with the text field
missing, null, empty, binary, or not text. Backfill must leave every other field
as it was, write exactly the fingerprints Fingerprinter gives, go on after an
interruption, skip what is current, and redo everything for a new version.
"""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from simdup_es import keys
from simdup_es.backfill import BackfillSummary, backfill
from simdup_es.cli import main
from simdup_es.config import FingerprintParams
from simdup_es.errors import StoreError
from simdup_es.es.bodies import NO_TEXT_EMPTY, NO_TEXT_MISSING
from simdup_es.fingerprint import Fingerprinter
from simdup_es.parts import PartPrinter
from simdup_es.sources import Reject
from simdup_es.store.base import stored_levels
from simdup_es.es.mappings import fingerprint_mapping
from tests._data import reject_rows

SAMPLE = importlib.resources.files("simdup_es.data") / "sample.jsonl"

OWN_MAPPING = {
    "properties": {
        "body": {"type": "text"},
        "headline": {"type": "text"},
        "category": {"type": "keyword"},
        "n": {"type": "integer"},
        "meta": {"properties": {"author": {"type": "keyword"}, "score": {"type": "float"}}},
        "parts": {"type": "nested", "properties": {"name": {"type": "keyword"}, "weight": {"type": "integer"}}},
    }
}


@pytest.fixture(scope="module")
def fingerprinter() -> Fingerprinter:
    return Fingerprinter()


def _records() -> list[dict[str, Any]]:
    with SAMPLE.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _corpus() -> dict[str, tuple[dict[str, Any], str | None]]:
    """``{_id: (_source, routing)}``: 126 real texts and the awkward cases."""
    docs: dict[str, tuple[dict[str, Any], str | None]] = {}
    for n, rec in enumerate(_records()):
        for copy in range(3):
            body = rec["text"] if copy == 0 else f"{rec['text']}\n附注第{copy}版。"
            source = {"body": body, "headline": rec["title"], "category": f"c{n % 4}", "n": n * 10 + copy,
                      "meta": {"author": f"a{n % 7}", "score": n / 3},
                      "parts": [{"name": "x", "weight": n}, {"name": "y", "weight": copy}]}
            docs[f"{n}-{copy}"] = (source, f"r{n % 6}" if copy == 2 else None)
    docs["missing"] = ({"category": "none", "n": -1, "meta": {"author": "nobody"}}, None)
    docs["null"] = ({"body": None, "category": "none"}, None)
    docs["empty"] = ({"body": "", "category": "none"}, None)
    docs["blank"] = ({"body": "  \n\t ", "category": "none"}, None)
    docs["number"] = ({"body": 12345, "category": "odd"}, None)
    docs["binary"] = ({"body": "PK\x03\x04\x00\x00binary\x00junk", "category": "odd"}, None)
    docs["punctuation"] = ({"body": "。，！？……", "category": "odd"}, None)
    docs["array"] = ({"body": ["第一段文字讲的是天气。", "第二段文字讲的是公园。"], "category": "arr"}, None)
    return docs


NOT_TEXT = {"missing", "null", "empty", "blank"}
REJECTED = {"number", "binary", "punctuation"}


def _create(client: Elasticsearch, index: str, docs: dict[str, tuple[dict[str, Any], str | None]]) -> None:
    client.indices.create(index=index, mappings=OWN_MAPPING,
                          settings={"number_of_shards": 2, "number_of_replicas": 0})
    operations: list[dict[str, Any]] = []
    for doc_id, (source, routing) in docs.items():
        header: dict[str, Any] = {"_id": doc_id}
        if routing:
            header["routing"] = routing
        operations += [{"index": header}, source]
    response = client.bulk(index=index, operations=operations, refresh=True)
    assert not response["errors"]


def _all(client: Elasticsearch, index: str) -> dict[str, dict[str, Any]]:
    """Every hit by id, with _source, _seq_no and _routing."""
    response = client.search(index=index, size=1000, seq_no_primary_term=True, query={"match_all": {}})
    return {hit["_id"]: hit for hit in response["hits"]["hits"]}


def _without_simdup(source: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in source.items() if k != keys.ROOT}


def _title(source: dict[str, Any]) -> str | None:
    return source.get("headline")


class Stop(Exception):
    pass


@pytest.fixture
def own_index(es_client: Elasticsearch, es_index: str):  # type: ignore[no-untyped-def]
    """A fresh index name outside ``simdup-*``, so simdup's index template does not apply to it."""
    name = "own-" + es_index.removeprefix("simdup-")
    yield name
    es_client.options(ignore_status=404).indices.delete(index=name)


def test_backfill_resumes_skips_current_and_leaves_other_fields_alone(
    es_client: Elasticsearch, own_index: str, fingerprinter: Fingerprinter
) -> None:
    docs = _corpus()
    _create(es_client, own_index, docs)
    mapping_before = es_client.indices.get_mapping(index=own_index)[own_index]["mappings"]
    before = _all(es_client, own_index)
    assert len(before) == len(docs)
    rejects: list[Reject] = []
    run = dict(field="body", title_field="headline", on_reject=rejects.append, batch_size=20, page_size=50, workers=2)

    # 1. Interrupted after two bulk requests.
    calls: list[BackfillSummary] = []

    def stop_after_two(summary: BackfillSummary) -> None:
        calls.append(summary)
        if len(calls) == 3:  # the first call comes before any write
            raise Stop

    with pytest.raises(Stop):
        backfill(es_client, own_index, fingerprinter=fingerprinter, on_progress=stop_after_two, **run)
    first = calls[-1]
    assert first.total == first.to_scan == len(docs) and first.current == 0
    assert 40 <= first.done <= 60
    es_client.indices.refresh(index=own_index)
    written = es_client.count(index=own_index, query={"term": {keys.VERSION: fingerprinter.version}})["count"]
    assert written == first.done  # fingerprints and marks (of rejected documents too)
    assert 0 < written < len(docs)

    # 2. The second run does the rest and skips what the first one wrote.
    rejects.clear()
    second = backfill(es_client, own_index, fingerprinter=fingerprinter, **run)
    assert second.current == written
    assert second.scanned == second.to_scan == len(docs) - written
    assert second.scanned == second.fingerprinted + second.without_text + second.rejected
    assert second.changed == 0
    after = _all(es_client, own_index)
    assert all(hit["_source"][keys.ROOT]["version"] == fingerprinter.version for hit in after.values())

    # Every other field, and the mapping of every other field, is as it was.
    assert {i: _without_simdup(h["_source"]) for i, h in after.items()} == \
           {i: h["_source"] for i, h in before.items()}
    mapping_after = es_client.indices.get_mapping(index=own_index)[own_index]["mappings"]
    added = {keys.ROOT, keys.GROUP, keys.GROUP_SIZE, keys.GROUP_KIND}  # the schema's fields, for searches and groups
    assert {k: v for k, v in mapping_after["properties"].items() if k not in added} == mapping_before["properties"]
    assert {name: mapping_after["_meta"]["simdup"][name] for name in ("schema", "layout")} == keys.index_meta()["simdup"]
    assert mapping_after["properties"][keys.ROOT]["properties"]["error"]["type"] == "keyword"

    # Fingerprints are what Fingerprinter gives; the unusable documents are marked.
    for doc_id, hit in after.items():
        source, simdup = hit["_source"], hit["_source"][keys.ROOT]
        if doc_id in NOT_TEXT | REJECTED:
            assert simdup.get("fp") is None and simdup["error"], doc_id
            continue
        text = "\n\n".join(source["body"]) if isinstance(source["body"], list) else source["body"]
        fp = fingerprinter.fingerprint(text, _title(source))
        levels = PartPrinter(fingerprinter).levels(text)
        parts, key_values, cut = stored_levels(levels)
        assert simdup == {**keys.fingerprint_object(fp.value, fp.version),
                          **keys.levels_object(doc_id, levels.units, parts, key_values, cut)}, doc_id
        assert simdup[keys.PART_QUADS_NAME] or not levels.parts  # the levels are written, not only the document level
        assert hit.get("_routing") == docs[doc_id][1]
    assert after["missing"]["_source"][keys.ROOT]["error"] == NO_TEXT_MISSING
    assert after["null"]["_source"][keys.ROOT]["error"] == NO_TEXT_MISSING
    assert after["empty"]["_source"][keys.ROOT]["error"] == NO_TEXT_EMPTY
    assert after["blank"]["_source"][keys.ROOT]["error"] == NO_TEXT_EMPTY

    # Over both runs: each unusable document was counted once, rejects have reasons.
    total = (first.fingerprinted + second.fingerprinted, first.without_text + second.without_text,
             first.rejected + second.rejected)
    assert total == (len(docs) - len(NOT_TEXT | REJECTED), len(NOT_TEXT), len(REJECTED))

    # 3. A third run reads and writes nothing.
    third = backfill(es_client, own_index, fingerprinter=fingerprinter, **run)
    assert (third.current, third.marked, third.scanned, third.fingerprinted) == (len(docs), len(NOT_TEXT | REJECTED), 0, 0)
    again = _all(es_client, own_index)
    assert {i: h["_seq_no"] for i, h in again.items()} == {i: h["_seq_no"] for i, h in after.items()}

    # 4. Other parameters, a new version: everything is fingerprinted again.
    other = Fingerprinter(FingerprintParams(noun_boost=2.5))
    assert other.version != fingerprinter.version
    fourth = backfill(es_client, own_index, fingerprinter=other, **run)
    assert (fourth.current, fourth.scanned) == (0, len(docs))
    assert (fourth.fingerprinted, fourth.without_text, fourth.rejected) == total
    redone = _all(es_client, own_index)
    assert all(h["_source"][keys.ROOT]["version"] == other.version for h in redone.values())
    text = redone["3-1"]["_source"]["body"]
    fp = other.fingerprint(text, _title(redone["3-1"]["_source"]))
    assert redone["3-1"]["_source"][keys.ROOT]["fp"] == fp.hex


def test_retry_errors_fingerprints_documents_whose_text_arrived(
    es_client: Elasticsearch, own_index: str, fingerprinter: Fingerprinter
) -> None:
    _create(es_client, own_index, {"a": ({"body": "今天的天气很好，我们去公园散步吧。"}, None),
                                  "b": ({"category": "later"}, None)})
    backfill(es_client, own_index, "body", fingerprinter, on_reject=pytest.fail)
    es_client.update(index=own_index, id="b", doc={"body": "明天会下雨，我们在家里读书吧。"}, refresh=True)
    plain = backfill(es_client, own_index, "body", fingerprinter, on_reject=pytest.fail)
    assert (plain.current, plain.marked, plain.scanned) == (2, 1, 0)
    retried = backfill(es_client, own_index, "body", fingerprinter, on_reject=pytest.fail, retry_errors=True)
    assert (retried.current, retried.scanned, retried.fingerprinted) == (1, 1, 1)
    simdup = es_client.get(index=own_index, id="b")["_source"][keys.ROOT]
    assert simdup["error"] is None
    assert simdup["fp"] == fingerprinter.fingerprint("明天会下雨，我们在家里读书吧。").hex


def test_a_text_field_backfilled_keeps_the_unified_text_a_search_reads(
    es_client: Elasticsearch, own_index: str, fingerprinter: Fingerprinter
) -> None:
    """From the ``text`` field, as 'simdup index' writes it: a search's judge reads it instead of unifying again."""
    from simdup_es.store.elasticsearch import ElasticsearchStore
    from simdup_es.text import unify

    text = "今天的天氣很好，我們去公園散步吧。\n明天會下雨，我們在家裡讀書吧。"
    es_client.indices.create(index=own_index, mappings={"properties": {"text": {"type": "text"}}})
    es_client.index(index=own_index, id="a", document={"text": text}, refresh=True)
    assert backfill(es_client, own_index, "text", fingerprinter, on_reject=pytest.fail).fingerprinted == 1
    simdup = es_client.get(index=own_index, id="a")["_source"][keys.ROOT]
    assert simdup[keys.UNIFIED_NAME] == unify(text) != text
    (doc,) = ElasticsearchStore(es_client, own_index).get(["a"])
    assert doc.unified == unify(text) and doc.version == fingerprinter.version


def test_stale_keys_of_an_old_fingerprint_are_cleared(
    es_client: Elasticsearch, own_index: str, fingerprinter: Fingerprinter
) -> None:
    old = {**keys.fingerprint_object(0x1234, "0.old"), **keys.levels_object("x", 9, [5], [6], 0), "error": "old reason"}
    es_client.indices.create(index=own_index, mappings={"properties": {"body": {"type": "text"},
                                                                      keys.ROOT: fingerprint_mapping()},
                                                       "_meta": keys.index_meta()})
    es_client.index(index=own_index, id="x", document={"body": "今天的天气很好。", keys.ROOT: old})
    es_client.index(index=own_index, id="y", document={"body": "", keys.ROOT: old}, refresh=True)
    summary = backfill(es_client, own_index, "body", fingerprinter, on_reject=pytest.fail)
    assert (summary.fingerprinted, summary.without_text) == (1, 1)
    x = es_client.get(index=own_index, id="x")["_source"][keys.ROOT]
    assert x["error"] is None and x["version"] == fingerprinter.version and x["fp"] != old["fp"]
    y = es_client.get(index=own_index, id="y")["_source"][keys.ROOT]
    assert y["fp"] is None and y["b0"] is None and y[keys.PART_QUADS_NAME] is None and y["error"] == NO_TEXT_EMPTY


def test_an_index_of_another_schema_is_refused_and_a_terms_index_gets_its_terms(
    es_client: Elasticsearch, own_index: str, fingerprinter: Fingerprinter
) -> None:
    from simdup_es.errors import StoreError
    from simdup_es.es.mappings import index_mappings

    made_before = {"properties": {"body": {"type": "text"}, keys.ROOT: fingerprint_mapping()},
                   "_meta": {"simdup": {"parts": "flat", "blocks": 8}}}  # as an earlier build recorded it
    es_client.indices.create(index=own_index, mappings=made_before)
    with pytest.raises(StoreError, match="records no index schema.*make a new index"):
        backfill(es_client, own_index, "body", fingerprinter, on_reject=pytest.fail)
    es_client.indices.delete(index=own_index)
    es_client.indices.create(index=own_index, mappings=index_mappings("terms"))
    es_client.index(index=own_index, id="t", document={"body": "今天的天气很好，我们去公园散步吧。"}, refresh=True)
    assert backfill(es_client, own_index, "body", fingerprinter, on_reject=pytest.fail).fingerprinted == 1
    simdup = es_client.get(index=own_index, id="t")["_source"][keys.ROOT]
    assert simdup[keys.DOC_TERMS_NAME] == keys.doc_terms(int(simdup["fp"], 16))


def test_a_document_changed_during_the_run_is_left_for_the_next(
    es_client: Elasticsearch, own_index: str, fingerprinter: Fingerprinter
) -> None:
    _create(es_client, own_index, {f"d{i}": ({"body": f"第{i}篇文档的正文讲的是第{i}件事情。"}, None) for i in range(30)})
    state: dict[str, Any] = {"calls": 0}

    def meddle(summary: BackfillSummary) -> None:
        state["calls"] += 1
        if state["calls"] == 2:  # all 30 were read (one fingerprinting chunk), 10 written: change one of the rest
            es_client.indices.refresh(index=own_index)
            hits = es_client.search(index=own_index, size=1, query={"bool": {"must_not": {"exists": {"field": keys.VERSION}}}})
            state["id"] = hits["hits"]["hits"][0]["_id"]
            es_client.update(index=own_index, id=state["id"], doc={"body": "这篇文档在扫描时被改写了。"}, refresh=True)

    summary = backfill(es_client, own_index, "body", fingerprinter, on_reject=pytest.fail, on_progress=meddle,
                       batch_size=10, page_size=10)
    assert (summary.fingerprinted, summary.changed) == (29, 1)
    nxt = backfill(es_client, own_index, "body", fingerprinter, on_reject=pytest.fail)
    assert (nxt.scanned, nxt.fingerprinted) == (1, 1)
    fp = es_client.get(index=own_index, id=state["id"])["_source"][keys.ROOT]["fp"]
    assert fp == fingerprinter.fingerprint("这篇文档在扫描时被改写了。").hex


def test_a_conflicting_mapping_is_refused_clearly(
    es_client: Elasticsearch, own_index: str, fingerprinter: Fingerprinter
) -> None:
    es_client.indices.create(index=own_index, mappings={"properties": {"simdup": {"properties": {"fp": {"type": "long"}}}}})
    with pytest.raises(StoreError, match="has simdup fields but records no index schema"):
        backfill(es_client, own_index, "body", fingerprinter, on_reject=pytest.fail)


def test_an_index_without_source_is_refused(es_client: Elasticsearch, own_index: str, fingerprinter: Fingerprinter) -> None:
    es_client.indices.create(index=own_index, mappings={"_source": {"enabled": False}})
    with pytest.raises(StoreError, match="does not keep _source"):
        backfill(es_client, own_index, "body", fingerprinter, on_reject=pytest.fail)


def test_cli_backfill(es_url: str, es_client: Elasticsearch, own_index: str, tmp_path: Path) -> None:
    _create(es_client, own_index, {"a": ({"body": "今天的天气很好，我们去公园散步吧。", "code": "A-1"}, None),
                                  "b": ({"body": "。。。", "code": "B-2"}, None), "c": ({"other": 1}, None)})
    rejects = tmp_path / "rejects.jsonl"
    args = ["backfill", "--es-url", es_url, "--index", own_index, "--field", "body", "--id-field", "code",
            "--rejects", str(rejects)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert "scanned 3: fingerprinted 1, without text field 1, rejected 1" in result.stderr
    (line,) = reject_rows(rejects)
    assert line["source"] == f"{own_index}/b" and line["id"] == "B-2" and "no words" in line["reason"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "skipped 3 with a current fingerprint (2 of them marked unusable earlier); scanned 0" in result.stderr


def test_an_index_backfilled_from_another_field_is_read_from_it(es_url: str, es_client: Elasticsearch,
                                                                  own_index: str) -> None:
    """The text in ``body`` and the title in ``headline``: searches, reports and groups read them there (they read
    ``text`` and found no copy but the near-duplicates, unscored)."""
    records = {r["id"]: r for r in _records()}
    source, cut = records["zh-man:man8/nmbd.8#3"], records["zh-man:man8/nmbd.8#3~paragraph-deleted"]
    _create(es_client, own_index, {doc_id: ({"body": r["text"], "headline": r["title"]}, None)
                                   for doc_id, r in (("source", source), ("cut", cut))})
    base = ["--es-url", es_url, "--index", own_index]
    result = CliRunner().invoke(main, ["backfill", *base, "--field", "body", "--title-field", "headline"])
    assert result.exit_code == 0, result.output
    from simdup_es.store.elasticsearch import ElasticsearchStore

    (doc,) = ElasticsearchStore(es_client, own_index).get(["source"])
    assert (doc.text, doc.title) == (source["text"], source["title"])
    found = CliRunner().invoke(main, ["search", *base, "--id", "source", "--json"])
    assert found.exit_code == 0, found.output
    (hit,) = [json.loads(line) for line in found.stdout.splitlines()]
    assert hit["id"] == "cut" and hit["copied_match"] > 0.9 and hit["spans"]["match"]
    report = CliRunner().invoke(main, ["report", *base, "--id", "source", "--json"])
    assert report.exit_code == 0 and [s["id"] for s in json.loads(report.stdout)["sources"]] == ["cut"], report.output
    grouped = CliRunner().invoke(main, ["groups", *base, "--partial", "--workers", "1", "--json"])
    assert grouped.exit_code == 0 and json.loads(grouped.stdout.splitlines()[0])["grouped"] == 2, grouped.output


def test_missing_index_is_a_clear_error(es_url: str, own_index: str) -> None:
    result = CliRunner().invoke(main, ["backfill", "--es-url", es_url, "--index", own_index, "--field", "body"])
    assert result.exit_code == 1 and "does not exist" in result.output
    assert "run the same command again" not in result.output  # nothing to go on with
