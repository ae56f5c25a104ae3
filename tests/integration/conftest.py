"""Fixtures for integration tests against a real Elasticsearch node.

Every test under tests/integration/ is marked ``integration`` automatically. The node
comes from ``SIMDUP_TEST_ES_URL``; ``scripts/test`` starts a local one and sets it.
Without it these tests fail (they never skip), so a missing server cannot pass for a
green run.

Note: the node ``scripts/es-server`` runs is Elasticsearch's minimal "integ-test-zip"
build. It has no ``GET /`` or ``HEAD /`` (so ``client.info()`` and ``client.ping()``
do not work there), no painless scripts, no ``_delete_by_query``/``_reindex``, no
``unsigned_long`` and no analysis-common analyzers. Code under test should not rely
on those. The ``es_url``, ``es_client`` and ``es_index`` fixtures are in
``tests/conftest.py``, shared with the store contract tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # This hook sees every collected item of the session, not only this directory's.
    for item in items:
        if item.path.resolve().is_relative_to(_HERE):
            item.add_marker(pytest.mark.integration)
