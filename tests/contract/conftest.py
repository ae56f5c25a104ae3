"""The ``store`` fixture: every Store implementation, one contract.

``local`` is the embedded store in a temporary folder. ``elasticsearch`` is an
:class:`~simdup_es.store.elasticsearch.ElasticsearchStore` on a fresh index of the
node named by ``SIMDUP_TEST_ES_URL``; those params are marked ``integration`` and
fail (never skip) when no node is configured. The Elasticsearch fixtures repeat
``tests/integration/conftest.py`` on purpose: importing fixtures across test
directories is fragile.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator

import pytest

from simdup_es.config import BlockLayout
from simdup_es.store.base import Store

ES_URL_ENV = "SIMDUP_TEST_ES_URL"

STORES = ["local", pytest.param("elasticsearch", marks=pytest.mark.integration)]


@pytest.fixture(scope="session")
def es_url() -> str:
    url = os.environ.get(ES_URL_ENV, "").strip()
    if not url:
        pytest.fail(
            f"{ES_URL_ENV} is not set. The elasticsearch contract tests need a running node: run "
            "scripts/test (it starts one), or start one (scripts/es-server start) and set "
            f"{ES_URL_ENV}=http://127.0.0.1:9200. Run only the embedded store with -k local.",
            pytrace=False,
        )
    return url.rstrip("/")


@pytest.fixture(scope="session")
def es_client(es_url: str):
    from elasticsearch import ApiError, Elasticsearch, TransportError

    client = Elasticsearch(es_url, request_timeout=30)
    try:
        # cluster.health, not info(): the integ-test node has no GET / (tests/integration/conftest.py).
        health = client.cluster.health(wait_for_status="yellow", timeout="30s")
    except (TransportError, ApiError) as exc:
        client.close()
        pytest.fail(f"cannot use Elasticsearch at {es_url} ({ES_URL_ENV}): {exc!r}", pytrace=False)
    if health.get("timed_out") or health.get("status") == "red":
        client.close()
        pytest.fail(f"Elasticsearch at {es_url} is not healthy: status {health.get('status')}", pytrace=False)
    yield client
    client.close()


@pytest.fixture
def es_index(request: pytest.FixtureRequest, es_client) -> Iterator[str]:
    """A fresh index name for this test (not created), deleted afterwards."""
    slug = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:40].rstrip("-") or "test"
    name = f"simdup-contract-{slug}-{uuid.uuid4().hex[:8]}"
    yield name
    es_client.options(ignore_status=404).indices.delete(index=name)


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path) -> Iterator[Store]:
    """A set-up, empty store with the default layout (8 blocks, k = 3)."""
    layout = BlockLayout()
    if request.param == "local":
        from simdup_es.store.local import LocalStore

        made: Store = LocalStore(tmp_path / "store", layout)
    else:
        # Imported here so the local half runs before the Elasticsearch store exists.
        from simdup_es.store.elasticsearch import ElasticsearchStore

        made = ElasticsearchStore(
            request.getfixturevalue("es_client"), request.getfixturevalue("es_index"), layout
        )
    made.setup()
    yield made
    made.close()
