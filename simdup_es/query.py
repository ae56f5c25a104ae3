"""Fingerprint to Elasticsearch request body: pure, no client, no I/O (SPEC §5).

By the pigeonhole principle, two fingerprints within Hamming distance ``k`` agree
on at least ``blocks - k`` of ``blocks`` blocks, so a ``bool`` query with one
``term`` clause per block and ``minimum_should_match: blocks - k`` misses none of
them. It also returns some documents further away: candidates must be re-ranked
by exact distance.
"""

from __future__ import annotations

from typing import Any

from . import schema
from . import simhash as sh
from .config import BlockLayout


def candidate_query(fingerprint: int, version: str, layout: BlockLayout = BlockLayout()) -> dict[str, Any]:
    """The ``bool`` query for documents sharing at least ``layout.min_match`` blocks.

    The fingerprint version is a filter: fingerprints made by another recipe are
    not comparable.
    """
    should = [
        {"term": {schema.block_field(layout, j): schema.block_term(layout, value)}}
        for j, value in enumerate(sh.blocks(fingerprint, layout))
    ]
    return {
        "bool": {
            "should": should,
            "minimum_should_match": layout.min_match,
            "filter": [{"term": {schema.VERSION: version}}],
        }
    }


def candidate_search(
    fingerprint: int, version: str, layout: BlockLayout = BlockLayout(), *, size: int = 1000, exclude_id: str | None = None
) -> dict[str, Any]:
    """A complete ``_search`` body: the candidate query, only the field the re-rank needs.

    Sorted by ``_doc`` (no scoring): candidates are ranked by exact Hamming
    distance afterwards, not by relevance.
    """
    query = candidate_query(fingerprint, version, layout)
    if exclude_id is not None:
        query["bool"]["must_not"] = [{"ids": {"values": [exclude_id]}}]
    return {
        "query": query,
        "_source": False,
        "docvalue_fields": [schema.FP],  # the re-rank needs only the fingerprint
        "size": size,
        "sort": ["_doc"],
        "track_total_hits": True,
    }
