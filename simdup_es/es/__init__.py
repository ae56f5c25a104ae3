"""The Elasticsearch layer, in parts that depend only downwards (each on those above it here).

:mod:`~simdup_es.es.bodies`
    Pure request bodies and document parsing: the candidate query, a walk's
    page, bulk actions, partial updates, the text of a ``_source``.
:mod:`~simdup_es.es.mappings`
    The mappings and templates simdup installs (from the shipped JSON).
:mod:`~simdup_es.es.engine`
    Which engine a cluster runs (Elasticsearch or OpenSearch), the few calls that
    differ between them, and URLs without credentials for messages.
:mod:`~simdup_es.es.io`
    The only module that sends requests: error translation, the point-in-time
    walk, bulk with retry, split and per-item results.
:mod:`~simdup_es.es.connection`
    URL, credentials, TLS: the client.

None of them imports :mod:`simdup_es.store` (the bulk result type comes from
:mod:`simdup_es.common`). :class:`~simdup_es.store.elasticsearch.ElasticsearchStore`
and the in-place jobs (:mod:`simdup_es.backfill`, :mod:`simdup_es.groups` through the
store) sit on top.
"""
