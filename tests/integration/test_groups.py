"""simdup groups on a real node: planted clusters, merges, leavers, the matrix, the command line."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from simdup_es import default_fingerprinter, keys
from simdup_es.cli import main
from simdup_es.compare import compare
from simdup_es.fingerprint import Fingerprinter
from simdup_es.groups import PartialLinks, group_id, update_groups
from simdup_es.multilevel import MultiParams
from simdup_es.parts import PartPrinter
from simdup_es.search import comparer
from simdup_es.store.base import StoredDoc
from simdup_es.store.elasticsearch import ElasticsearchStore
from simdup_es.text import unify
from tests._data import fixture_text

V = "test.v1"
GROUP, SIZE = keys.GROUP, keys.GROUP_SIZE


def _flip(fp: int, bits: list[int]) -> int:
    for b in bits:
        fp ^= 1 << b
    return fp


def _clusters() -> dict[str, int]:
    """Planted fingerprints: A (4), B (3; its base 6 bits from A's), chain C (3, ends 6 apart), 20 singles."""
    rng = np.random.default_rng(11)
    rand = lambda: int(rng.integers(0, 2**63)) * 2 + int(rng.integers(0, 2))  # noqa: E731
    a = rand()
    b = _flip(a, [1, 2, 3, 40, 41, 42])
    c = rand()
    fps = {"a0": a, "a1": _flip(a, [5]), "a2": _flip(a, [6, 7]), "a3": _flip(a, [8, 9, 10]),
           "b0": b, "b1": _flip(b, [50]), "b2": _flip(b, [51, 52, 53]),
           "c0": c, "c1": _flip(c, [20, 21, 22]), "c2": _flip(c, [20, 21, 22, 30, 31, 32])}
    fps.update({f"s{i:02d}": rand() for i in range(20)})
    return fps


def _state(client: Elasticsearch, index: str) -> dict[str, tuple[Any, Any, int]]:
    client.indices.refresh(index=index)
    hits = client.search(index=index, size=1000, seq_no_primary_term=True)["hits"]["hits"]
    return {h["_id"]: (h["_source"].get(GROUP), h["_source"].get(SIZE), h["_seq_no"]) for h in hits}


def _groups(state: dict[str, tuple[Any, Any, int]]) -> dict[str, tuple[Any, Any]]:
    return {i: (g, s) for i, (g, s, _) in state.items() if g is not None or s is not None}


def test_groups_are_written_updated_and_cleared(es_client: Elasticsearch, es_index: str) -> None:
    store = ElasticsearchStore(es_client, es_index)
    store.setup()
    fps = _clusters()
    store.put([StoredDoc(i, fp, V) for i, fp in fps.items()])
    store.put([StoredDoc("other-version", fps["a0"], "test.v2")])  # same bits, another version: never paired

    summary = update_groups(ElasticsearchStore(es_client, es_index))
    # Ids are read for the 10 grouped documents, and for other-version (a0's bits: found by the terms query).
    assert (summary.fingerprinted, summary.distinct, summary.versions, summary.members) == (31, 31, 2, 11)
    assert (summary.groups, summary.grouped, summary.largest) == (3, 10, 4)
    assert (summary.set, summary.cleared, summary.unchanged) == (10, 0, 0)
    assert summary.pairs == 4 + 2 + 2  # A: a0 with each, a1-a2; B: b0 with each; C: the two links
    ga, gb, gc = (group_id((es_index, x)) for x in ("a0", "b0", "c0"))
    state = _state(es_client, es_index)
    assert _groups(state) == {**{x: (ga, 4) for x in ("a0", "a1", "a2", "a3")},
                              **{x: (gb, 3) for x in ("b0", "b1", "b2")},
                              **{x: (gc, 3) for x in ("c0", "c1", "c2")}}
    singles = es_client.mget(index=es_index, ids=[x for x in fps if x.startswith("s")])["docs"]
    assert len(singles) == 20 and all(GROUP not in d["_source"] for d in singles)  # untouched
    mapping = es_client.indices.get_mapping(index=es_index)[es_index]["mappings"]["properties"]
    assert (mapping[GROUP]["type"], mapping[SIZE]["type"]) == ("keyword", "integer")

    # Nothing changed: nothing is written.
    again = update_groups(ElasticsearchStore(es_client, es_index))
    assert (again.set, again.cleared, again.unchanged) == (0, 0, 10)
    assert _state(es_client, es_index) == state

    # A bridge merges A and B (A's id survives: a0 sorts first); c1 loses its fingerprint, so
    # the chain C falls apart (c0 and c2 are 6 apart) and all three are cleared.
    bridge = _flip(fps["a0"], [1, 2, 3])
    store.put([StoredDoc("bridge", bridge, V), StoredDoc("a4", _flip(fps["a0"], [60]), V)])
    es_client.update(index=es_index, id="c1", doc={keys.ROOT: {"fp": None}})
    third = update_groups(ElasticsearchStore(es_client, es_index))
    assert (third.groups, third.grouped, third.largest) == (1, 9, 9)
    assert (third.set, third.cleared, third.unchanged) == (9, 3, 0)  # sizes changed: every member is rewritten
    after = _state(es_client, es_index)
    members = ("a0", "a1", "a2", "a3", "a4", "b0", "b1", "b2", "bridge")
    assert _groups(after) == {x: (ga, 9) for x in members}
    cleared = es_client.mget(index=es_index, ids=["c0", "c1", "c2"])["docs"]
    assert all(d["_source"][GROUP] is None and d["_source"][SIZE] is None for d in cleared)  # set to null
    assert all(after[x][2] == state[x][2] for x in state if x.startswith("s"))  # singles: never written

    # Cleared documents stay cleared: the next run writes nothing.
    fourth = update_groups(ElasticsearchStore(es_client, es_index))
    assert (fourth.set, fourth.cleared) == (0, 0)


def test_exact_duplicates_are_a_group_and_join_near_ones(es_client: Elasticsearch, es_index: str) -> None:
    store = ElasticsearchStore(es_client, es_index)
    store.setup()
    store.put([StoredDoc("e1", 0xAAAA, V), StoredDoc("e2", 0xAAAA, V), StoredDoc("e3", 0xAAAA, V),
               StoredDoc("f1", 0xF000, V), StoredDoc("f2", 0xF000, V), StoredDoc("f3", 0xF000 ^ 0b111, V),
               StoredDoc("lone", 0xFFFF_FFFF_0000, V)])
    summary = update_groups(ElasticsearchStore(es_client, es_index))
    assert (summary.fingerprinted, summary.distinct, summary.pairs) == (7, 4, 1)
    assert (summary.groups, summary.grouped, summary.members) == (2, 6, 6)
    assert _groups(_state(es_client, es_index)) == {
        **{x: (group_id((es_index, "e1")), 3) for x in ("e1", "e2", "e3")},
        **{x: (group_id((es_index, "f1")), 3) for x in ("f1", "f2", "f3")},
    }


def test_groups_across_indices_of_a_pattern(es_client: Elasticsearch, es_index: str) -> None:
    names = [f"{es_index}-x", f"{es_index}-y"]
    try:
        for name, fp in zip(names, (0xABCDEF, 0xABCDEF ^ 0b101)):
            store = ElasticsearchStore(es_client, name)
            store.setup()
            store.put([StoredDoc("1", fp, V), StoredDoc("2", fp ^ (0xFFFF << 40), V)])
        summary = update_groups(ElasticsearchStore(es_client, f"{es_index}-*"))
        assert (summary.groups, summary.grouped) == (2, 4)
        for name in names:
            es_client.indices.refresh(index=name)
        got = {(h["_index"], h["_id"]): h["_source"][GROUP]
               for h in es_client.search(index=f"{es_index}-*", size=10)["hits"]["hits"]}
        assert got == {(n, i): group_id((names[0], i)) for n in names for i in ("1", "2")}
    finally:
        es_client.options(ignore_status=404).indices.delete(index=",".join(names))


def test_the_matrix_keeps_only_real_copies(es_client: Elasticsearch, es_index: str) -> None:
    article, other = fixture_text("zh_article.txt"), fixture_text("en_article.txt")
    sentences = article.split("。")
    edited = "。".join(sentences[:3] + sentences[4:])  # a sentence left out
    fp = Fingerprinter().fingerprint(article).value
    store = ElasticsearchStore(es_client, es_index)
    store.setup()
    # Fingerprints forced near each other: only the texts tell the unrelated one apart.
    store.put([StoredDoc("orig", fp, V, article), StoredDoc("copy", fp ^ 1, V, edited),
               StoredDoc("unrelated", fp ^ 2, V, other), StoredDoc("no-text", fp ^ 4, V)])
    plain = update_groups(ElasticsearchStore(es_client, es_index), dry_run=True)
    assert (plain.pairs, plain.groups, plain.grouped) == (6, 1, 4)
    assert _groups(_state(es_client, es_index)) == {}  # a dry run writes nothing

    from simdup_es.tokens import Tokenizer

    words = Tokenizer().words

    def similarity(a: str, b: str) -> float:
        c = compare(a, b, segment=words)
        return max(c.similarity_a, c.similarity_b)

    summary = update_groups(ElasticsearchStore(es_client, es_index), similarity=similarity, prepare_text=unify)
    assert (summary.groups, summary.grouped, summary.confirmed) == (1, 2, 1)
    assert summary.no_text == 3 and summary.compared == 3  # orig-copy kept; orig/copy vs unrelated dropped
    assert _groups(_state(es_client, es_index)) == {"orig": (group_id((es_index, "copy")), 2),
                                                     "copy": (group_id((es_index, "copy")), 2)}


def test_cli_groups(es_url: str, es_client: Elasticsearch, es_index: str) -> None:
    store = ElasticsearchStore(es_client, es_index)
    store.setup()
    store.put([StoredDoc("x", 0xF0F0, V), StoredDoc("y", 0xF0F1, V), StoredDoc("z", 0x0F0F_0000_0000, V)])
    base = ["groups", "--es-url", es_url, "--index", es_index]
    result = CliRunner().invoke(main, [*base, "--dry-run", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["groups"] == 1 and "would write 2 group fields" in result.stderr
    result = CliRunner().invoke(main, base)
    assert result.exit_code == 0, result.output
    assert "1 pair within distance 3" in result.stderr and "1 group with 2 documents (largest 2)" in result.stderr
    assert "wrote 2 group fields, cleared 0, 0 unchanged" in result.stderr
    result = CliRunner().invoke(main, [*base, "--k", "0"])
    assert result.exit_code == 0 and "cleared 2" in result.stderr


def test_groups_of_a_missing_index_is_a_clear_error(es_url: str, es_index: str) -> None:
    result = CliRunner().invoke(main, ["groups", "--es-url", es_url, "--index", es_index])
    assert result.exit_code == 1 and "does not exist" in result.output


def test_groups_of_an_index_without_fingerprints_says_so_and_writes_nothing(es_url: str, es_client: Elasticsearch,
                                                                           es_index: str) -> None:
    es_client.index(index=es_index, id="1", document={"body": "第一篇文档的正文。"}, refresh=True)
    before = es_client.indices.get_mapping(index=es_index)
    result = CliRunner().invoke(main, ["groups", "--es-url", es_url, "--index", es_index])
    assert result.exit_code == 1 and "none of the store's 1 documents has a fingerprint" in result.output, result.output
    assert "simdup backfill --field" in result.output and es_client.indices.get_mapping(index=es_index) == before


# --- the kind of duplicate (dup_kind) and groups --partial ---------------------------------------

KIND = keys.GROUP_KIND
SAMPLE = str(resources.files("simdup_es.data") / "sample.jsonl")
SOURCE, CUT = "zh-man:man8/nmbd.8#3", "zh-man:man8/nmbd.8#3~paragraph-deleted"
EDITED = ("zh-man:man7/perlnumber.7#0", "zh-man:man7/perlnumber.7#0~edited")


def _sample() -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in map(json.loads, Path(SAMPLE).read_text(encoding="utf-8").splitlines())}


def _partial_links() -> PartialLinks:
    return PartialLinks(PartPrinter(default_fingerprinter()), comparer(), MultiParams(), workers=1)


def test_cli_groups_partial_writes_the_kind_kibana_filters_on(es_url: str, es_client: Elasticsearch,
                                                              es_index: str) -> None:
    base = ["--es-url", es_url, "--index", es_index]
    assert CliRunner().invoke(main, ["index", SAMPLE, *base, "--workers", "1"]).exit_code == 0
    result = CliRunner().invoke(main, ["groups", *base, "--partial", "--workers", "1", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["partial"] >= 1 and summary["members"] == len(_sample())  # every document, in one walk
    es_client.indices.refresh(index=es_index)
    source = {d["_id"]: d["_source"] for d in es_client.mget(index=es_index, ids=[SOURCE, CUT, *EDITED])["docs"]}
    assert source[SOURCE][GROUP] == source[CUT][GROUP] and source[SOURCE][KIND] == source[CUT][KIND] == "partial"
    assert {source[i][KIND] for i in EDITED} == {"near-duplicate"}
    # What a Kibana filter and a terms aggregation on dup_kind see: the summary's counts.
    answer = es_client.search(index=es_index, size=0, aggs={"kinds": {"terms": {"field": KIND}}})
    counts = {b["key"]: b["doc_count"] for b in answer["aggregations"]["kinds"]["buckets"]}
    assert counts == summary["kinds"] and counts["partial"] >= 2
    # Without --partial the partial-only members leave their groups; dup_kind goes with them.
    result = CliRunner().invoke(main, ["groups", *base, "--json"])
    assert json.loads(result.stdout)["cleared"] == summary["kinds"]["partial"]
    es_client.indices.refresh(index=es_index)
    cut = es_client.get(index=es_index, id=CUT)["_source"]
    assert (cut[GROUP], cut[SIZE], cut[KIND]) == (None, None, None)


def test_partial_copies_across_indices_with_the_same_id(es_client: Elasticsearch, es_index: str) -> None:
    """A pattern over two indices, each with a document "1": a partial copy of the other's.

    Candidates come back by bare _id; the query's own id must not hide the other index's
    document, and the link must join the two keys (index, _id), not one of them twice.
    """
    names = [f"{es_index}-x", f"{es_index}-y"]
    sample, printer = _sample(), PartPrinter(default_fingerprinter())
    try:
        for name, doc_id in zip(names, (SOURCE, CUT)):
            text = sample[doc_id]["text"]
            fp = printer.fingerprinter.fingerprint(text)
            store = ElasticsearchStore(es_client, name)
            store.setup()
            store.put([StoredDoc("1", fp.value, fp.version, text, levels=printer.levels(text))])
        summary = update_groups(ElasticsearchStore(es_client, f"{es_index}-*"), partial=_partial_links())
        assert (summary.partial, summary.groups, summary.grouped) == (1, 1, 2)
        for name in names:
            es_client.indices.refresh(index=name)
        got = {(h["_index"], h["_id"]): (h["_source"][GROUP], h["_source"][KIND])
               for h in es_client.search(index=f"{es_index}-*", size=10)["hits"]["hits"]}
        assert got == {(n, "1"): (group_id((names[0], "1")), "partial") for n in names}
    finally:
        es_client.options(ignore_status=404).indices.delete(index=",".join(names))
