"""Where fingerprinted documents are kept: Elasticsearch, or an embedded local store.

Both implement :class:`Store`; one contract test suite holds them to the same
behaviour.
"""

from __future__ import annotations

from .base import BulkReport, Store, StoredDoc

__all__ = ["BulkReport", "Store", "StoredDoc"]
