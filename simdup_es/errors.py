"""Exceptions raised by simdup-es.

Everything the package raises on purpose derives from :class:`SimdupError`, so a
caller can catch one class. Messages say what happened and what to do about it.
"""

from __future__ import annotations

from .common import BulkReport


class SimdupError(Exception):
    """Root of every error simdup-es raises on purpose."""


class ConfigError(SimdupError, ValueError):
    """A parameter or setting is invalid."""


class InputError(SimdupError):
    """A document or record cannot be read or is unusable.

    ``source`` names the input (file path, ``file:line`` or record id) so the
    message can say where the problem is.
    """

    def __init__(self, message: str, *, source: str | None = None) -> None:
        self.source = source
        self.reason = message
        super().__init__(f"{source}: {message}" if source else message)

    def __reduce__(self):  # type: ignore[no-untyped-def]
        # Keep ``source`` and ``reason`` when errors cross a process boundary.
        return (_restore_input_error, (type(self), self.reason, self.source))


def _restore_input_error(cls: type[InputError], reason: str, source: str | None) -> InputError:
    return cls(reason, source=source)


def reason_of(error: BaseException) -> str:
    """What is wrong with one input, without where: an input problem's reason, else the error's message."""
    return error.reason if isinstance(error, InputError) else str(error)


class EmptyDocumentError(InputError):
    """A document has no usable text after extraction and normalisation."""


class TooManyPairs(SimdupError):
    """Two texts have more sentence pairs that may be copies than a comparison takes (``limit``,
    :data:`simdup_es.matrix.MAX_CANDIDATES`; only within :func:`simdup_es.matrix.bounded_pairs`, as the server
    compares): texts of many repeated or near-identical sentences."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"the texts have more than {limit:,} pairs of similar sentences, more than a comparison "
                         f"of them takes (many repeated or near-identical sentences): compare them without the "
                         f"repeated sentences, or in parts")

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (type(self), (self.limit,))


class TooLarge(SimdupError):
    """What a call is given is larger than its limit (``limit``, in bytes)."""

    def __init__(self, message: str, *, limit: int) -> None:
        self.limit = limit
        super().__init__(message)

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (_restore_too_large, (str(self), self.limit))


def _restore_too_large(message: str, limit: int) -> TooLarge:
    return TooLarge(message, limit=limit)


class FingerprintVersionError(SimdupError):
    """Fingerprints made by different fingerprint versions were mixed."""


class StoreError(SimdupError):
    """A store (Elasticsearch or the embedded one) failed.

    ``report`` is set when a bulk write stopped part way: what was written and
    what failed until then (``None`` otherwise).
    """

    def __init__(self, message: str, *, report: BulkReport | None = None) -> None:
        super().__init__(message)
        self.report: BulkReport | None = report


class ConnectionFailed(StoreError):
    """The Elasticsearch cluster could not be reached or refused the credentials."""


class NotFound(StoreError):
    """An index, store or document does not exist."""


class StoreLocationError(StoreError):
    """The store path cannot hold a store (it is a file, or cannot be created)."""


class StoreSchemaError(StoreError):
    """The store was written by another (newer) release or is not a simdup store."""


class StoreCorrupted(StoreError):
    """The store's database is damaged."""


class StoreBusy(StoreError):
    """Another process held the write lock for longer than the timeout."""


class WorkerError(SimdupError):
    """A worker process ended while it had documents to fingerprint (killed, out of memory, crashed)."""
