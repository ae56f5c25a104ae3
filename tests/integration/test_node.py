"""Proves the integration plumbing: a real node, a per-test index, index/refresh/search."""

from elasticsearch import Elasticsearch


def test_index_count_and_term_query(es_client: Elasticsearch, es_index: str) -> None:
    es_client.indices.create(
        index=es_index,
        mappings={"properties": {"tag": {"type": "keyword"}, "body": {"type": "text"}}},
    )
    docs = {
        "1": {"tag": "alpha", "body": "近似重复文档检测"},
        "2": {"tag": "beta", "body": "SimHash 指纹"},
        "3": {"tag": "gamma", "body": "海明距离 hamming distance"},
    }
    for doc_id, doc in docs.items():
        es_client.index(index=es_index, id=doc_id, document=doc)
    es_client.indices.refresh(index=es_index)

    assert es_client.count(index=es_index)["count"] == 3

    hits = es_client.search(index=es_index, query={"term": {"tag": "beta"}})["hits"]["hits"]
    assert [hit["_id"] for hit in hits] == ["2"]
    assert hits[0]["_source"] == docs["2"]
