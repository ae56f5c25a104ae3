"""Elasticsearch mappings shipped with simdup-es (component and index templates)."""
