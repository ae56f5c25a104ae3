"""Where fingerprinted documents are kept: Elasticsearch, or an embedded local store.

Both implement :class:`Store`; one contract test suite holds them to the same
behaviour. :func:`open_store` opens the one the settings name.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from ..errors import ConfigError, NotFound
from ..common import BulkReport
from .base import Store, StoredDoc

log = logging.getLogger(__name__)

DEFAULT_PATH = Path(".simdup")
"""The embedded store's folder when none is given."""
DEFAULT_INDEX = "simdup-docs"
"""The Elasticsearch index when none is given."""


def open_store(
    url: str | None = None,
    *,
    path: Path | str | None = None,
    index: str | None = None,
    create: bool = False,
    read_only: bool = False,
    layout: str | None = None,
    **connection: Any,
) -> Store:
    """The configured store: the cluster's index when there is a URL, else the embedded one.

    The cluster may run Elasticsearch 8 or 9 or OpenSearch (with opensearch-py
    installed, ``pip install 'simdup-es[opensearch]'``): the engine is asked, or
    named with ``engine="elasticsearch"`` / ``"opensearch"`` (``SIMDUP_ES_ENGINE``).

    When neither ``url`` nor ``path`` is given, they come from ``SIMDUP_ES_URL`` and
    ``SIMDUP_STORE`` (then ``.simdup``); ``index`` falls back to ``SIMDUP_INDEX`` (then
    ``simdup-docs``). Giving both a URL and a folder is an error, as is an unknown keyword. ``connection`` holds further
    :class:`~simdup_es.es.connection.ConnectionSettings` (``api_key``,
    ``username``, ``password``, ``ca_certs``, ``verify_certs``, ``engine``, ...; the
    ``SIMDUP_ES_*`` variables fill the rest). ``create`` sets the store up
    (creates the index or folder); without it a missing embedded store is
    :class:`NotFound`. ``read_only`` opens the embedded store for reading alone
    (nothing created or changed on disk: a store in a folder the user may not write
    can be searched); it does not change an Elasticsearch store. ``layout`` is the document
    layout of a new Elasticsearch index (``"8x8"``, the default, or ``"terms"``: docs/scale.md);
    an existing index keeps its own, and the embedded store has one. Close the store when done
    (it is a context manager).
    """
    if url and path:
        raise ConfigError("give an Elasticsearch URL or an embedded store folder, not both (url= or path=; --es-url or "
                          "--store, which SIMDUP_ES_URL and SIMDUP_STORE set when not given)")
    if not url and not path:  # what is given wins over the environment
        url, path = os.environ.get("SIMDUP_ES_URL") or None, os.environ.get("SIMDUP_STORE") or None
        if url and path:
            raise ConfigError("SIMDUP_ES_URL and SIMDUP_STORE are both set: unset one, or give url= or path= "
                              "(--es-url or --store)")
    if any(value is not None for value in connection.values()):
        _check_connection_names(connection)
    store: Any
    if url:
        from ..es.connection import ConnectionSettings
        from .elasticsearch import ElasticsearchStore

        settings = ConnectionSettings.from_env(url=url, **connection)
        store = ElasticsearchStore(settings, index or os.environ.get("SIMDUP_INDEX") or DEFAULT_INDEX, layout=layout)
    else:
        from .local import LocalStore

        folder = Path(path) if path else DEFAULT_PATH
        if not create and not folder.exists():
            above = _store_above(folder)
            hint = f"; the store at {above} was made in another folder: give --store {above}" if above else ""
            raise NotFound(f"no embedded store at {folder}: index documents first ('simdup index --store {folder} "
                           f"FILES'; from Python, open_store(path=..., create=True) makes one), or give --es-url for a "
                           f"cluster{hint}")
        store = LocalStore(folder, read_only=read_only)
    if create:
        try:
            store.setup()
        except BaseException:
            store.close()
            raise
    return store


__all__ = ["DEFAULT_INDEX", "DEFAULT_PATH", "BulkReport", "Store", "StoredDoc", "open_store"]


def _check_connection_names(connection: dict[str, Any]) -> None:
    """Refuse a keyword that is no connection setting (a misspelt ``readonly=True`` was ignored, and the store
    opened for writing)."""
    from dataclasses import fields

    from ..es.connection import ConnectionSettings

    unknown = sorted(set(connection) - {f.name for f in fields(ConnectionSettings)})
    if unknown:
        raise ConfigError(f"open_store() got unknown options {', '.join(unknown)}: it takes url, path, index, create, "
                          "read_only, layout and the connection settings of ConnectionSettings")


def _store_above(folder: Path) -> str | None:
    """The default store of a folder above the current one (as a relative path), when ``folder`` is the default."""
    from .local import DB_NAME

    if folder != DEFAULT_PATH:
        return None
    here = Path.cwd()
    for up, parent in enumerate(here.parents, start=1):
        if (parent / DEFAULT_PATH / DB_NAME).exists():
            return str(Path(*[".."] * up) / DEFAULT_PATH)
    return None
