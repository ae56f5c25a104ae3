"""Fingerprint to Elasticsearch request body: kept for imports, the bodies live in :mod:`simdup_es.es.bodies`."""

from __future__ import annotations

from .es.bodies import candidate_query, candidate_search

__all__ = ["candidate_query", "candidate_search"]
