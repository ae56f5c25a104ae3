"""What differs between the engines, on the node of this run (Elasticsearch 8 or 9, or OpenSearch).

The rest of tests/contract and tests/integration runs unchanged on each engine
(``scripts/test-engines``); these tests cover the engine seam itself: detection, and
the scroll walk that replaces the point in time on OpenSearch, forced here on
whatever engine runs too.
"""

from __future__ import annotations

from typing import Any

import pytest

from simdup_es.es import engine as eng
from simdup_es.es import io
from simdup_es.es.connection import ConnectionSettings


def test_detection_picks_the_client_of_the_engine(es_url: str, es_client: Any) -> None:
    client = ConnectionSettings(url=es_url).client()
    try:
        asked = eng.detect(ConnectionSettings(url=es_url, engine="elasticsearch").client())
        assert asked.name in (eng.ELASTICSEARCH, eng.OPENSEARCH) and asked.version >= (2, 4)
        assert isinstance(client, eng.OpenSearchClient) == (asked.name == eng.OPENSEARCH)
        assert type(client) is type(es_client)
        if asked.name == eng.OPENSEARCH:
            assert client.engine == asked  # the version detection found
    finally:
        client.close()


@pytest.mark.parametrize("forced_scroll", [False, True], ids=["engine's choice", "scroll"])
def test_walks_return_every_document_once(es_client: Any, es_index: str, monkeypatch: pytest.MonkeyPatch,
                                          forced_scroll: bool) -> None:
    es_client.indices.create(index=es_index, settings={"number_of_shards": 3, "number_of_replicas": 0},
                             mappings={"properties": {"n": {"type": "long"}}})
    operations: list[dict[str, Any]] = []
    for n in range(2345):
        operations += [{"index": {"_id": f"d{n}"}}, {"n": n}]
    assert not es_client.bulk(index=es_index, operations=operations, refresh=True)["errors"]
    point_in_time = eng.uses_point_in_time(es_client) and not forced_scroll
    if forced_scroll:
        monkeypatch.setattr(io, "uses_point_in_time", lambda client: False)
    pit = io.PointInTime(es_client, es_index, "1m")
    try:
        assert (pit.id is not None) == point_in_time
        ids = [hit["_id"] for hit in io.walk(es_client, es_index, {"range": {"n": {"gte": 100}}}, pit=pit,
                                             page_size=500)]
        pages = list(io.walk(es_client, es_index, {"match_all": {}}, pit=pit, page_size=1000, pages=True,
                             ids=False, docvalue_fields=["n"]))
    finally:
        pit.close()
    assert sorted(ids) == sorted(f"d{n}" for n in range(100, 2345))  # none missed, none twice
    assert [len(page) for page in pages] == [1000, 1000, 345]
    assert sorted(hit["fields"]["n"][0] for page in pages for hit in page) == list(range(2345))


def test_cli_with_the_engine_named(es_url: str, es_index: str, es_client: Any) -> None:
    from click.testing import CliRunner

    from simdup_es.cli import main

    def setup(engine: str) -> Any:
        return CliRunner().invoke(main, ["setup", "--es-url", es_url, "--index", es_index, "--engine", engine])

    engine = eng.engine_of(es_client).name
    result = setup(engine)
    assert result.exit_code == 0, result.output
    assert es_client.indices.exists(index=es_index)
    if engine == eng.OPENSEARCH:  # Elasticsearch's client named for OpenSearch: told what to do, not a 406
        wrong = setup(eng.ELASTICSEARCH)
        assert wrong.exit_code != 0 and "set it to opensearch" in wrong.output, wrong.output
