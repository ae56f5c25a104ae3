"""The ``store`` fixture: every Store implementation, one contract.

``local`` is the embedded store in a temporary folder. ``elasticsearch`` is an
:class:`~simdup_es.store.elasticsearch.ElasticsearchStore` on a fresh index of the
node named by ``SIMDUP_TEST_ES_URL`` (quad parts, the default), ``elasticsearch-flat`` and
``elasticsearch-nested`` the same with the part layouts of indices made before; those params are marked ``integration`` and
fail (never skip) when no node is configured (fixtures in ``tests/conftest.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from simdup_es.config import BlockLayout
from simdup_es.store.base import Store

STORES = ["local", pytest.param("elasticsearch", marks=pytest.mark.integration),
          pytest.param("elasticsearch-flat", marks=pytest.mark.integration),
          pytest.param("elasticsearch-nested", marks=pytest.mark.integration)]


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

        # "elasticsearch" is a new index (quad parts); "elasticsearch-flat" and "-nested" are made with those parts.
        parts = request.param.partition("-")[2] or None
        made = ElasticsearchStore(
            request.getfixturevalue("es_client"), request.getfixturevalue("es_index"), layout, parts=parts
        )
    made.setup()
    yield made
    made.close()
