"""The ``store`` fixture: every Store implementation, one contract.

``local`` is the embedded store in a temporary folder. ``elasticsearch`` is an
:class:`~simdup_es.store.elasticsearch.ElasticsearchStore` on a fresh index of the
node named by ``SIMDUP_TEST_ES_URL``; that param is marked ``integration`` and fails
(never skips) when no node is configured (fixtures in ``tests/conftest.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from simdup_es.store.base import Store

STORES = ["local", pytest.param("elasticsearch", marks=pytest.mark.integration)]


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path) -> Iterator[Store]:
    """A set-up, empty store."""
    if request.param == "local":
        from simdup_es.store.local import LocalStore

        made: Store = LocalStore(tmp_path / "store")
    else:
        # Imported here so the local half runs before the Elasticsearch store exists.
        from simdup_es.store.elasticsearch import ElasticsearchStore

        made = ElasticsearchStore(request.getfixturevalue("es_client"), request.getfixturevalue("es_index"))
    made.setup()
    yield made
    made.close()
