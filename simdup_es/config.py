"""Frozen, validated parameter objects.

Every tunable of the pipeline lives here, with the defaults of the design's sources. Objects are
immutable so that a fingerprinter built from them cannot drift, and they validate
themselves on construction so a bad value fails at the edge with a clear message.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError

FINGERPRINT_BITS = 64


def require_ints(params: object, names: Iterable[str], minimum: int = 1) -> None:
    """Refuse a field of ``params`` that is not an integer of at least ``minimum`` (``True`` is not one)."""
    for name in names:
        value = getattr(params, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            what = {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer of at least {minimum}")
            raise ConfigError(f"{name} must be {what}, got {value!r}")


@dataclass(frozen=True)
class FingerprintParams:
    """How text becomes a 64-bit SimHash.

    ``weight(w) = TF(w) * IDF(w) * (1 + POS(w) + LEN(w) + MARK(w) + TITLE(w))``

    Attributes
    ----------
    max_count:
        A word counts at most this many times in one document (5 in common SimHash practice).
    noun_boost, verb_boost, other_boost:
        ``POS(w)`` for nouns, verbs and other content words (3, 2, 1 in the improved-SimHash weighting).
        Words jieba's dictionary tags as function words (pronouns, particles, ...)
        get 0.
    length_boost:
        Scale of ``LEN(w)``, the word's length min-max normalised within the
        document (1 = the improved-SimHash formula, 0 turns it off).
    mark_boost:
        ``MARK(w)`` for words in ``marked_words``.
    title_boost:
        ``TITLE(w)`` for words that occur in the document's title.
    marked_words:
        User-supplied domain words that weigh more.
    idf_path:
        A ``word idf`` table (jieba's format, e.g. from ``simdup idf build``);
        ``None`` uses the general table jieba ships.
    max_bytes:
        Larger documents are refused (with a message naming them) instead of
        tying up a worker for minutes.
    """

    max_count: int = 5
    noun_boost: float = 3.0
    verb_boost: float = 2.0
    other_boost: float = 1.0
    length_boost: float = 1.0
    mark_boost: float = 5.0
    title_boost: float = 5.0
    marked_words: frozenset[str] = field(default_factory=frozenset)
    idf_path: Path | None = None
    max_bytes: int = 10_000_000

    def __post_init__(self) -> None:
        if self.max_count < 1:
            raise ConfigError(f"max_count must be at least 1, got {self.max_count}")
        for name in ("noun_boost", "verb_boost", "other_boost", "length_boost", "mark_boost", "title_boost"):
            if isinstance(getattr(self, name), bool) or not isinstance(getattr(self, name), (int, float)):
                raise ConfigError(f"{name} must be a number, got {getattr(self, name)!r}")
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must not be negative, got {getattr(self, name)}")
        if self.max_bytes < 1:
            raise ConfigError(f"max_bytes must be positive, got {self.max_bytes}")
        # Accept any iterable of words and str paths, but store the frozen forms.
        if isinstance(self.marked_words, str):  # it would be taken for its characters
            raise ConfigError(f"marked_words must be a collection of words, not one string: {{{self.marked_words!r}}}")
        object.__setattr__(self, "marked_words", frozenset(w.casefold() for w in self.marked_words))
        if self.idf_path is not None:
            object.__setattr__(self, "idf_path", Path(self.idf_path))


@dataclass(frozen=True)
class Retry:
    """Backoff of bulk requests, and of bulk items, rejected as too busy (429) or failing to connect.

    As in ``elasticsearch.helpers``: retry ``n + 1`` waits ``initial_backoff * 2**n``
    seconds, at most ``max_backoff``; after ``max_retries`` retries the request
    (or the items still rejected) fail. :attr:`budget` is the most a request waits.
    """

    max_retries: int = 10
    initial_backoff: float = 1.0
    max_backoff: float = 30.0

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.initial_backoff < 0 or self.max_backoff < 0:
            raise ConfigError("max_retries, initial_backoff and max_backoff must not be negative")

    def wait(self, attempt: int) -> float:
        return min(self.max_backoff, self.initial_backoff * 2**attempt)

    @property
    def budget(self) -> float:
        """Seconds of waiting before a request (or an item) that stays rejected fails."""
        return sum(self.wait(n) for n in range(self.max_retries))
