"""Shared fixtures and the hypothesis profile.

The cluster fixtures read the node's URL from ``SIMDUP_TEST_ES_URL``
(``scripts/test`` starts a local node and sets it) and fail, never skip, without
it. The node may run Elasticsearch 8 or 9 or OpenSearch: ``es_client`` is the client
simdup itself picks for it (elasticsearch-py, or opensearch-py behind the same calls),
so every test runs unchanged on each engine. ``SIMDUP_TEST_ENGINE`` (``es8``, ``es9``,
``opensearch``; set by ``scripts/test-engines``) makes the session fail when the node
runs another engine than expected. The connection is checked with ``cluster.health()``:
the integ-test node has no ``GET /``, so ``client.info()`` would fail there.
"""

from __future__ import annotations

import os
import re
import uuid

import pytest
from hypothesis import settings

ES_URL_ENV = "SIMDUP_TEST_ES_URL"
ENGINE_ENV = "SIMDUP_TEST_ENGINE"

settings.register_profile("ci", max_examples=200, deadline=None)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(scope="session")
def fingerprinter():
    from simdup_es import default_fingerprinter

    return default_fingerprinter()


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


def new_client(url: str):  # type: ignore[no-untyped-def]
    """A client for the test node, chosen as simdup chooses (the engine is asked once per process)."""
    from simdup_es.es.connection import ConnectionSettings

    return ConnectionSettings(url=url, request_timeout=30).client()


@pytest.fixture(scope="session")
def es_client(es_url: str):
    from elasticsearch import ApiError, TransportError

    from simdup_es.errors import SimdupError

    client = None
    try:
        client = new_client(es_url)
        health = client.cluster.health(wait_for_status="yellow")
    except (TransportError, ApiError, SimdupError) as exc:
        if client is not None:
            client.close()
        pytest.fail(
            f"cannot use the cluster at {es_url} ({ES_URL_ENV}): {exc!r}. "
            "Is the node running? scripts/es-server status tells.",
            pytrace=False,
        )
    if health.get("timed_out") or health.get("status") == "red":
        client.close()
        pytest.fail(
            f"the cluster at {es_url} is not healthy: status {health.get('status')}",
            pytrace=False,
        )
    expected = os.environ.get(ENGINE_ENV, "").strip()
    if expected:
        from simdup_es.es.engine import ELASTICSEARCH, detect, engine_of

        engine = engine_of(client)
        if engine.name == ELASTICSEARCH:
            engine = detect(client)  # the version too
        got = f"es{engine.version[0]}" if engine.name == ELASTICSEARCH and engine.version else engine.name
        if got != expected:
            client.close()
            pytest.fail(f"{ES_URL_ENV}={es_url} runs {engine}, but {ENGINE_ENV}={expected}", pytrace=False)
    yield client
    client.close()


def _slug(name: str, limit: int = 40) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug[:limit].rstrip("-") or "test"


@pytest.fixture
def es_index(request: pytest.FixtureRequest, es_client):  # type: ignore[no-untyped-def]
    """A fresh index name for this test (not created), deleted afterwards."""
    name = f"simdup-test-{_slug(request.node.name)}-{uuid.uuid4().hex[:8]}"
    yield name
    es_client.options(ignore_status=404).indices.delete(index=name)
