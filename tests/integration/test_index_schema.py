"""The index's schema on a real node: quad parts (one Lucene document per stored document), the ``terms``
document layout chosen at setup and recorded, and an index of another schema refused with the way to replace it."""

from __future__ import annotations

import dataclasses

import pytest
from click.testing import CliRunner

from simdup_es import keys, reference
from simdup_es.cli import main
from simdup_es.errors import ConfigError, StoreError
from simdup_es.es.mappings import fingerprint_mapping
from simdup_es.store.base import StoredDoc
from simdup_es.store.elasticsearch import ElasticsearchStore
from tests.contract import test_levels_contract as levels_contract
from tests.contract import test_store_contract as store_contract

pytestmark = pytest.mark.integration


def _meta(client, index: str) -> dict:  # type: ignore[no-untyped-def]
    return client.indices.get_mapping(index=index)[index]["mappings"].get("_meta", {})


def test_quad_parts_are_one_lucene_document_and_a_part_sharing_only_a_quad_is_no_candidate(es_client, es_index) -> None:  # type: ignore[no-untyped-def]
    store = ElasticsearchStore(es_client, es_index)
    store.setup()
    assert _meta(es_client, es_index) == {"simdup": {"schema": keys.SCHEMA, "layout": "8x8"}}
    docs = levels_contract.levels()
    levels_contract.load_levels(store, docs)
    assert sum(len(lv.stored()[0]) for lv in docs.values()) > 2 * len(docs)  # the documents do have parts
    stats = es_client.indices.stats(index=es_index, metric="docs")["indices"][es_index]["primaries"]["docs"]["count"]
    assert stats == store.count() == len(docs)

    query = 0x0123456789ABCDEF
    others = sorted(set(range(8)) - set(keys.QUAD_BLOCKS[0]))
    four = query ^ sum(0x5A << (8 * j) for j in others)  # equal on the first quad's 4 blocks only
    five = query ^ sum(0x5A << (8 * j) for j in others[1:])
    six = query ^ sum(0x5A << (8 * j) for j in others[2:])
    assert [reference.shared_blocks_reference(query, fp) for fp in (four, five, six)] == [4, 5, keys.PART_MATCH]
    assert set(keys.quad_terms(query)) & set(keys.quad_terms(four))  # the quad term is shared
    template = next(lv for lv in docs.values() if len(lv.stored()[0]) >= 2)
    for doc_id, fp in [("four", four), ("five", five), ("six", six)]:
        stored = dataclasses.replace(template, fingerprints=(fp,) * len(template.fingerprints))
        store.put([StoredDoc(doc_id, fp, template.version, "text", None, levels=stored)])
    store.refresh()
    found = store.part_candidates([None, query], [], template.version)
    assert [(c.id, c.parts) for c in found] == [("six", frozenset({1}))]


def test_the_terms_layout_is_recorded_and_exact_for_every_k(es_client, es_index, es_url) -> None:  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(main, ["setup", "--es-url", es_url, "--index", es_index, "--layout", "terms"])
    assert result.exit_code == 0 and "(terms document layout, index schema 2)" in result.stderr, result.output
    assert _meta(es_client, es_index)["simdup"] == {"schema": keys.SCHEMA, "layout": "terms"}
    store = ElasticsearchStore(es_client, es_index)  # a store that does not ask: the index's layout
    store_contract.test_candidates_cover_brute_force_and_rerank_equals_it(store)
    assert store.layout() == "terms"
    source = es_client.get(index=es_index, id="base-0")["_source"][keys.ROOT]
    assert source[keys.DOC_TERMS_NAME] == keys.doc_terms(int(source["fp"], 16)) and "b0" in source
    # Within k <= 3 the terms are asked for: only fingerprints sharing 8 - k blocks come back (none to drop).
    for q in store_contract.corpus().queries[:60]:
        _, fps = store.candidates(q, store_contract.VERSION, k=3)
        assert all(reference.shared_blocks_reference(q, int(f)) >= 5 for f in fps.tolist())
    with pytest.raises(ConfigError, match="has the terms document layout, not 8x8.*make a new index"):
        ElasticsearchStore(es_client, es_index, layout="8x8").setup()


def test_an_index_of_another_schema_is_refused_and_left_as_it_is(es_client, es_index, es_url) -> None:  # type: ignore[no-untyped-def]
    name = f"old-{es_index}"  # outside simdup-*: the installed template would record this schema in it
    made_before = {"properties": {"text": {"type": "text"}, keys.ROOT: fingerprint_mapping()},
                   "_meta": {"simdup": {"parts": "nested", "blocks": 8}}}  # as an earlier build recorded it
    es_client.indices.create(index=name, mappings=made_before)
    try:
        es_client.index(index=name, id="old", document={"text": "t", keys.ROOT: keys.fingerprint_object(7, "v")},
                        refresh=True)
        store = ElasticsearchStore(es_client, name)
        for call in (lambda: store.candidates(7, "v", k=3), lambda: store.part_candidates([7], [], "v"),
                     lambda: store.put([StoredDoc("new", 7, "v")]), store.setup):
            with pytest.raises(StoreError, match="records no index schema \\(an index made by an earlier build.*alias"):
                call()
        result = CliRunner().invoke(main, ["search", "--es-url", es_url, "--index", name, "--text", "今天的天气很好。"])
        assert result.exit_code == 1 and "POST _reindex" in result.output
        assert _meta(es_client, name) == made_before["_meta"] and store.count() == 1  # nothing moved in place
    finally:
        es_client.options(ignore_status=404).indices.delete(index=name)
