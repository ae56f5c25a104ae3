"""Index layouts on a real node: quad and flat parts (one Lucene document per stored document), the move
of nested and flat parts in place, and the 4 x 16-bit document layout chosen at setup and recorded in the index."""

from __future__ import annotations

import dataclasses

import pytest
from click.testing import CliRunner

from simdup_es.cli import main
from simdup_es import reference, schema
from simdup_es import simhash as sh
from simdup_es.config import BlockLayout
from simdup_es.errors import ConfigError
from simdup_es.store.elasticsearch import ElasticsearchStore
from tests.contract import test_levels_contract as levels_contract
from tests.contract import test_store_contract as store_contract

pytestmark = pytest.mark.integration


def _meta(client, index: str) -> dict:  # type: ignore[no-untyped-def]
    return client.indices.get_mapping(index=index)[index]["mappings"].get("_meta", {})


def _lucene_docs(client, index: str) -> int:  # type: ignore[no-untyped-def]
    return int(client.indices.stats(index=index, metric="docs")["indices"][index]["primaries"]["docs"]["count"])


def _answers(store: ElasticsearchStore) -> dict[str, list]:
    return {q: levels_contract.ask(store, lv, limit=50) for q, lv in levels_contract.queries()}


def test_quad_and_flat_parts_are_one_lucene_document_per_stored_document(es_client, es_index) -> None:  # type: ignore[no-untyped-def]
    store = ElasticsearchStore(es_client, es_index)
    store.setup()
    assert _meta(es_client, es_index) == {"simdup": {"parts": "quads", "blocks": 8}}
    docs = levels_contract.levels()
    levels_contract.load_levels(store, docs)
    assert sum(len(lv.stored()[0]) for lv in docs.values()) > 2 * len(docs)  # the documents do have parts
    assert _lucene_docs(es_client, es_index) == store.count() == len(docs)
    try:
        for parts in ("flat", "nested"):
            other = ElasticsearchStore(es_client, f"{es_index}-{parts}", parts=parts)
            other.setup()
            levels_contract.load_levels(other, docs)
            hidden = _lucene_docs(es_client, f"{es_index}-{parts}") - other.count()
            assert hidden > len(docs) if parts == "nested" else hidden == 0  # nested: a hidden document per part
            assert _answers(store) == _answers(other)
    finally:
        es_client.indices.delete(index=f"{es_index}-flat,{es_index}-nested", ignore_unavailable=True)


def test_a_part_sharing_only_a_quad_is_no_candidate(es_client, es_index) -> None:  # type: ignore[no-untyped-def]
    from simdup_es.store.base import StoredDoc

    store = ElasticsearchStore(es_client, es_index)
    store.setup()
    query = 0x0123456789ABCDEF
    others = sorted(set(range(8)) - set(schema._QUADS[0]))
    four = query ^ sum(0x5A << (8 * j) for j in others)  # equal on the first quad's 4 blocks only
    five = query ^ sum(0x5A << (8 * j) for j in others[1:])
    assert reference.shared_blocks_reference(query, four) == 4 and reference.shared_blocks_reference(query, five) == 5
    assert set(schema.quad_part_terms(query)) & set(schema.quad_part_terms(four))  # the quad term is shared
    levels = levels_contract.levels()
    template = next(lv for lv in levels.values() if len(lv.stored()[0]) >= 2)
    for doc_id, fp in [("four", four), ("five", five)]:
        stored = dataclasses.replace(template, fingerprints=(fp,) * len(template.fingerprints))
        store.put([StoredDoc(doc_id, fp, template.version, "text", None, levels=stored)])
    store.refresh()
    found = store.part_candidates([None, query], [], template.version)
    assert [(c.id, c.parts) for c in found] == [("five", frozenset({1}))]


def test_setup_parts_moves_a_nested_index_to_flat_then_quads_in_place(es_client, es_index, es_url) -> None:  # type: ignore[no-untyped-def]
    old = ElasticsearchStore(es_client, es_index, parts="nested")
    old.setup()
    docs = levels_contract.levels()
    levels_contract.load_levels(old, docs)
    # An index made before layouts were recorded has no _meta: it is read as nested.
    es_client.indices.put_mapping(index=es_index, body={"_meta": {"owner": "someone"}})
    before = _answers(ElasticsearchStore(es_client, es_index))
    assert any(before.values())

    upgraded = ElasticsearchStore(es_client, es_index, parts="flat")
    upgraded.setup()
    assert _meta(es_client, es_index) == {"owner": "someone", "simdup": {"parts": "flat", "blocks": 8}}
    assert _lucene_docs(es_client, es_index) == len(docs)
    source = es_client.get(index=es_index, id=next(iter(docs)))["_source"][schema.ROOT]
    assert schema.PARTS_NAME not in source or source[schema.PARTS_NAME] is None
    assert source[schema.PART_TERMS_NAME]
    assert _answers(ElasticsearchStore(es_client, es_index)) == before  # a new process reads the layout
    assert _answers(upgraded) == before
    with pytest.raises(ConfigError, match="cannot go back"):
        ElasticsearchStore(es_client, es_index, parts="nested").setup()

    # The command says what it moved (a walk over the whole index, which the log alone told before).
    with_parts = es_client.count(index=es_index, query={"exists": {"field": schema.PART_TERMS}})["count"]
    moved = CliRunner().invoke(main, ["setup", "--es-url", es_url, "--index", es_index, "--parts", "quads"])
    assert moved.exit_code == 0, moved.output
    assert f"moved the parts of {with_parts} documents from the flat to the quads layout" in moved.stderr
    assert with_parts >= 2
    quads = ElasticsearchStore(es_client, es_index, parts="quads")
    quads.setup()
    assert quads.moved is None  # nothing left to move
    assert _meta(es_client, es_index) == {"owner": "someone", "simdup": {"parts": "quads", "blocks": 8}}
    source = es_client.get(index=es_index, id=next(iter(docs)))["_source"][schema.ROOT]
    assert source.get(schema.PART_TERMS_NAME) is None and source[schema.PART_QUADS_NAME] and source[schema.PART_FPS_NAME]
    assert _answers(ElasticsearchStore(es_client, es_index)) == before
    assert _answers(quads) == before
    with pytest.raises(ConfigError, match="cannot go back"):
        ElasticsearchStore(es_client, es_index, parts="flat").setup()


def test_the_4x16_layout_is_recorded_and_exact_against_brute_force(es_client, es_index) -> None:  # type: ignore[no-untyped-def]
    store = ElasticsearchStore(es_client, es_index, BlockLayout(4, 3))
    store.setup()
    assert _meta(es_client, es_index)["simdup"]["blocks"] == 4
    store_contract.test_candidates_cover_brute_force_and_rerank_equals_it(store)
    source = es_client.get(index=es_index, id="base-0")["_source"][schema.ROOT]
    assert "b4_0" in source and "b0" not in source  # only the layout asked for: 4 terms per document, not 8
    # A store opened with the default layout (a new `simdup search`) answers in the recorded one.
    reader = ElasticsearchStore(es_client, es_index)
    data = store_contract.corpus()
    for q in data.queries[:60]:
        assert sorted(reader.candidates(q, store_contract.VERSION)[0]) == sorted(store.candidates(q, store_contract.VERSION)[0])
    assert reader.layout == BlockLayout(4, 3)
    with pytest.raises(ConfigError, match="chosen when an index is created"):
        ElasticsearchStore(es_client, es_index, BlockLayout(16, 3)).setup()


def test_the_terms_layout_is_recorded_and_exact_against_brute_force(es_client, es_index) -> None:  # type: ignore[no-untyped-def]
    store = ElasticsearchStore(es_client, es_index, doc_terms=True)
    store.setup()
    assert _meta(es_client, es_index)["simdup"] == {"parts": "quads", "blocks": 8, "doc_terms": True}
    store_contract.test_candidates_cover_brute_force_and_rerank_equals_it(store)
    source = es_client.get(index=es_index, id="base-0")["_source"][schema.ROOT]
    assert source[schema.DOC_TERMS_NAME] == schema.flat_part_terms(int(source["fp"], 16))
    assert "b0" not in source  # no blocks: 56 terms instead
    # A store opened without asking (a new `simdup search`) answers in the recorded layout, with only
    # the fingerprints that share 5 of 8 blocks as candidates (no false ones to fetch).
    reader = ElasticsearchStore(es_client, es_index)
    data = store_contract.corpus()
    for q in data.queries[:60]:
        ids, fps = reader.candidates(q, store_contract.VERSION)
        assert sorted(ids) == sorted(store.candidates(q, store_contract.VERSION)[0])
        assert all(sum(x == y for x, y in zip(sh.blocks(q), sh.blocks(int(f)))) >= 5 for f in fps.tolist())
    assert reader.doc_terms
    ElasticsearchStore(es_client, es_index + "-other").setup()
    try:
        with pytest.raises(ConfigError, match="'terms' document layout"):
            ElasticsearchStore(es_client, es_index + "-other", doc_terms=True).setup()
    finally:
        es_client.indices.delete(index=es_index + "-other")
