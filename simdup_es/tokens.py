"""Tokens and their weights (SPEC §3).

Segmentation uses a :class:`jieba.Tokenizer` of our own (never jieba's module-level
singleton, which other code in the process may reconfigure), with its dictionary
cache in simdup's cache folder rather than the system temp dir. Latin-script words
come out of jieba whole. Punctuation, whitespace and stop words (stopwords-iso,
Chinese and English) are dropped.

Part of speech comes from the tag column of jieba's dictionary, not from
``jieba.posseg``: posseg runs a second HMM and is about 7x slower than plain
segmentation, while the dictionary tag of a word is one dict lookup.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import statistics
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .config import FingerprintParams
from .errors import ConfigError

log = logging.getLogger(__name__)

_WORDLIKE = re.compile(r"[^\W_]")  # a letter, digit or CJK character somewhere in the token
_NOUN, _VERB, _OTHER, _FUNCTION = 0, 1, 2, 3
# jieba tags of function words: pronouns, prepositions, conjunctions, particles,
# interjections, onomatopoeia, modal particles, punctuation, affixes.
_FUNCTION_TAGS = frozenset("r rr rz rg p c u uj ul uz uv ud ug e o y x w k h".split())


def cache_dir() -> Path:
    """Where simdup keeps caches: ``$SIMDUP_CACHE``, else ``~/.cache/simdup-es``."""
    path = Path(os.environ.get("SIMDUP_CACHE") or Path.home() / ".cache" / "simdup-es")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _jieba_dir() -> Path:
    import jieba

    return Path(jieba.__file__).parent


def _pos_class(tag: str) -> int:
    if tag.startswith("n"):
        return _NOUN
    if tag.startswith("v"):
        return _VERB
    if tag in _FUNCTION_TAGS:
        return _FUNCTION
    return _OTHER


@lru_cache(maxsize=1)
def dictionary_pos() -> Mapping[str, int]:
    """Word -> part-of-speech class, from the tag column of jieba's ``dict.txt``."""
    pos: dict[str, int] = {}
    with open(_jieba_dir() / "dict.txt", encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3:
                pos[parts[0]] = _pos_class(parts[2])
    return pos


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """Chinese and English stop words from stopwords-iso (MIT), case-folded."""
    import stopwordsiso

    return frozenset(w.casefold() for w in stopwordsiso.stopwords(["zh", "en"]))


@dataclass(frozen=True)
class IdfTable:
    """Inverse document frequencies, with the median for words not in the table.

    The file format is jieba's: one ``word idf`` pair per line; lines starting with
    ``#`` are comments. Negative values (words in nearly every document) count as 0.
    """

    idf: Mapping[str, float]
    default: float
    digest: str

    @classmethod
    def load(cls, path: Path | None = None) -> IdfTable:
        if path is None:
            path = _jieba_dir() / "analyse" / "idf.txt"
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read IDF table {path}: {exc.strerror}; build one with 'simdup idf build'") from None
        idf: dict[str, float] = {}
        for n, line in enumerate(raw.decode("utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            word, _, value = line.rpartition(" ")
            try:
                idf[word.strip().casefold()] = max(0.0, float(value))
            except ValueError:
                raise ConfigError(f"{path}:{n}: expected 'word idf', got {line[:60]!r}") from None
        if not idf:
            raise ConfigError(f"IDF table {path} has no entries")
        return cls(idf, statistics.median(idf.values()), hashlib.sha1(raw).hexdigest())


def build_idf(documents: Iterable[list[str]]) -> tuple[dict[str, float], int]:
    """IDF of every word over tokenised documents: ``log(N / (df + 1))`` (SPEC §3).

    Returns the table and ``N``, the number of documents.
    """
    df: Counter[str] = Counter()
    n = 0
    for words in documents:
        n += 1
        df.update(set(words))
    return {w: math.log(n / (d + 1)) for w, d in df.items()}, n


def format_idf(idf: Mapping[str, float], n_docs: int) -> str:
    """Serialise an IDF table in jieba's format, most informative words first."""
    lines = [f"# simdup-es idf table: N={n_docs} documents, idf = log(N / (df + 1))"]
    lines += [f"{w} {v:.6f}" for w, v in sorted(idf.items(), key=lambda kv: (-kv[1], kv[0])) if " " not in w]
    return "\n".join(lines) + "\n"


class Tokenizer:
    """Segments unified text into content words, with jieba under the hood.

    jieba loads its dictionary on first use (about a second from cache); the lock
    makes that safe from several threads.
    """

    def __init__(self) -> None:
        self._jieba = None
        self._lock = threading.Lock()

    def _segmenter(self):  # type: ignore[no-untyped-def]
        if self._jieba is None:
            with self._lock:
                if self._jieba is None:
                    import jieba

                    tokenizer = jieba.Tokenizer()
                    tokenizer.tmp_dir = str(cache_dir())
                    tokenizer.initialize()
                    self._jieba = tokenizer
        return self._jieba

    def segment(self, text: str) -> list[str]:
        """All jieba tokens of ``text``, punctuation and spaces included."""
        return self._segmenter().lcut(text)

    def words(self, text: str) -> list[str]:
        """Content words of unified ``text``: no punctuation, spaces or stop words."""
        stop = stop_words()
        return [t for t in self._segmenter().lcut(text) if t not in stop and _WORDLIKE.search(t)]


def weigh(
    words: list[str],
    params: FingerprintParams,
    idf: IdfTable,
    *,
    title_words: frozenset[str] = frozenset(),
) -> tuple[list[str], list[float]]:
    """Distinct words of a document and their weights (SPEC §3).

    ``weight(w) = TF(w) * IDF(w) * (1 + POS(w) + LEN(w) + MARK(w) + TITLE(w))``,
    with each word counted at most ``params.max_count`` times.
    """
    if not words:
        return [], []
    counts = Counter(words)
    cap = params.max_count
    capped = {w: (c if c < cap else cap) for w, c in counts.items()}
    total = sum(capped.values())
    lengths = [len(w) for w in capped]
    len_min = min(lengths)
    len_span = max(lengths) - len_min
    len_scale = params.length_boost / len_span if len_span else 0.0
    pos = dictionary_pos()
    pos_boost = (params.noun_boost, params.verb_boost, params.other_boost, 0.0)
    # Words jieba does not know are Chinese names and terms it found with its HMM
    # (mostly nouns) or Latin-script words (counted as other content words).
    marked, mark, title = params.marked_words, params.mark_boost, params.title_boost
    table, default_idf = idf.idf, idf.default
    weights: list[float] = []
    for w, c in capped.items():
        p = pos.get(w)
        if p is None:
            p = _OTHER if w.isascii() else _NOUN
        boost = 1.0 + pos_boost[p] + (len(w) - len_min) * len_scale
        if w in marked:
            boost += mark
        if w in title_words:
            boost += title
        weights.append(c / total * table.get(w, default_idf) * boost)
    return list(capped), weights

