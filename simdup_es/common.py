"""Plain types every layer may use: the result of a bulk write, and a ``with`` helper.

This module imports nothing from the package, so :mod:`simdup_es.errors`, the
Elasticsearch layer (:mod:`simdup_es.es`) and the stores (:mod:`simdup_es.store`)
can all depend on it. :mod:`simdup_es.store.base` re-exports both names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class Closing:
    """``with thing: ...`` calls ``thing.close()`` on the way out."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class BulkReport:
    """What a bulk write did: ids written, and ``(id, reason)`` for each failure.

    ``missing`` counts updates of documents that no longer exist (deleted since
    they were read); they are neither written nor failed.
    """

    written: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    missing: int = 0
    capped: list[tuple[str, str]] = field(default_factory=list)
    """``(id, what)`` of written documents whose levels were cut (:data:`~simdup_es.store.base.MAX_STORED_PARTS`)."""


__all__ = ["BulkReport", "Closing"]
