"""simdup-es: near-duplicate documents in Elasticsearch, Chinese text first.

Three lines to a distance::

    import simdup_es
    a, b = simdup_es.fingerprint("第一篇文档……"), simdup_es.fingerprint("第二篇文档……")
    simdup_es.distance(a, b), a.blocks()

For other parameters build a :class:`Fingerprinter` from :class:`FingerprintParams`.
What ``simdup search`` does is :func:`find_copies` over a store from
:func:`open_store` (near-duplicates and partial copies; with ``matrix=False``
the document level alone), with thresholds in :class:`MultiParams`. A
:class:`Service` holds a store and the parameters for many searches, comparisons
and reports of a :class:`Query` (what ``simdup search``, ``compare``, ``report``
and ``serve`` run on), and keeps what they share between them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import FingerprintParams
from .errors import SimdupError
from .fingerprint import Doc, Fingerprint, Fingerprinter, default_fingerprinter
from .simhash import blocks, similarity
from .text import unify

if TYPE_CHECKING:  # loaded on first use (__getattr__ below); type checkers see them here
    from .multilevel import MultiParams
    from .search import find_copies
    from .service import Query, Service
    from .store import open_store

__all__ = [
    "Doc",
    "Fingerprint",
    "FingerprintParams",
    "Fingerprinter",
    "SimdupError",
    "MultiParams",
    "Query",
    "Service",
    "blocks",
    "default_fingerprinter",
    "distance",
    "find_copies",
    "fingerprint",
    "open_store",
    "similarity",
    "unify",
]
__version__ = "0.1.0"


def fingerprint(text: str, title: str | None = None) -> Fingerprint:
    """Fingerprint one document with the default parameters."""
    return default_fingerprinter().fingerprint(text, title)


def distance(a: Fingerprint, b: Fingerprint) -> int:
    """Hamming distance between two fingerprints of the same version."""
    return a.distance(b)


_LAZY = {"open_store": "store", "find_copies": "search", "MultiParams": "multilevel", "Query": "service",
         "Service": "service"}


def __getattr__(name: str) -> Any:
    # The store and search modules load on first use: `import simdup_es` stays light.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
