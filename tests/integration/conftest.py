"""Fixtures for integration tests against a real Elasticsearch node.

Every test under tests/integration/ is marked ``integration`` automatically. The node
comes from ``SIMDUP_TEST_ES_URL``; ``scripts/test`` starts a local one and sets it.
Without it these tests fail (they never skip), so a missing server cannot pass for a
green run.

Note: the node ``scripts/es-server`` runs is Elasticsearch's minimal "integ-test-zip"
build. It has no ``GET /`` or ``HEAD /`` (so ``client.info()`` and ``client.ping()``
do not work there), no painless scripts, no ``_delete_by_query``/``_reindex``, no
``unsigned_long`` and no analysis-common analyzers. Code under test should not rely
on those; this file checks the connection with ``cluster.health()`` for that reason.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

import pytest
from elasticsearch import ApiError, Elasticsearch, TransportError

ES_URL_ENV = "SIMDUP_TEST_ES_URL"
_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # This hook sees every collected item of the session, not only this directory's.
    for item in items:
        if item.path.resolve().is_relative_to(_HERE):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def es_url() -> str:
    url = os.environ.get(ES_URL_ENV, "").strip()
    if not url:
        pytest.fail(
            f"{ES_URL_ENV} is not set. Integration tests need a running Elasticsearch: "
            "run them with scripts/test (it starts a local node), or start one "
            "(e.g. scripts/es-server start) and set "
            f"{ES_URL_ENV}=http://127.0.0.1:9200.",
            pytrace=False,
        )
    return url.rstrip("/")


@pytest.fixture(scope="session")
def es_client(es_url: str):
    client = Elasticsearch(es_url, request_timeout=30)
    try:
        # cluster.health rather than info(): works on every distribution (see above).
        health = client.cluster.health(wait_for_status="yellow", timeout="30s")
    except (TransportError, ApiError) as exc:
        client.close()
        pytest.fail(
            f"cannot use Elasticsearch at {es_url} ({ES_URL_ENV}): {exc!r}. "
            "Is the node running? scripts/es-server status tells.",
            pytrace=False,
        )
    if health.get("timed_out") or health.get("status") == "red":
        client.close()
        pytest.fail(
            f"Elasticsearch at {es_url} is not healthy: status {health.get('status')}",
            pytrace=False,
        )
    yield client
    client.close()


def _slug(name: str, limit: int = 40) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug[:limit].rstrip("-") or "test"


@pytest.fixture
def es_index(request: pytest.FixtureRequest, es_client: Elasticsearch):
    """A fresh index name for this test (not created), deleted afterwards."""
    name = f"simdup-test-{_slug(request.node.name)}-{uuid.uuid4().hex[:8]}"
    yield name
    es_client.options(ignore_status=404).indices.delete(index=name)
