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
from .simhash import token_hash
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
            text = raw.decode("utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read IDF table {path}: {exc.strerror}; build one with 'simdup idf build'") from None
        except UnicodeDecodeError:
            raise ConfigError(f"IDF table {path} is not UTF-8 text; build one with 'simdup idf build'") from None
        idf: dict[str, float] = {}
        for n, line in enumerate(text.splitlines(), 1):
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

    def words(self, text: str, *, hmm: bool = True) -> list[str]:
        """Content words of unified ``text``: no punctuation, spaces or stop words.

        ``hmm=False`` is :func:`dictionary_words`.
        """
        if not hmm:
            return dictionary_words(text)
        return _content_words(self._segmenter().lcut(text))


def is_content_word(token: str) -> bool:
    """Not punctuation, whitespace or a stop word."""
    return token not in stop_words() and _WORDLIKE.search(token) is not None


def _content_words(tokens: Iterable[str]) -> list[str]:
    # is_content_word over many tokens, with the stop-word set looked up once.
    stop = stop_words()
    return [t for t in tokens if t not in stop and _WORDLIKE.search(t)]


_rust_lock = threading.Lock()
_rust = None


def _rust_jieba():  # type: ignore[no-untyped-def]
    global _rust
    if _rust is None:
        with _rust_lock:
            if _rust is None:
                import rjieba

                _rust = rjieba.Jieba()
    return _rust


def dictionary_words(text: str) -> list[str]:
    """Content words of unified ``text`` cut by jieba's dictionary alone, without its HMM.

    This is the segmenter of the comparison matrix's word check
    (:func:`simdup_es.compare.compare`). Without the HMM, words missing from the
    dictionary stay single characters rather than being guessed, which is steadier
    for short sentences: the HMM may cut the same unknown name differently in two
    places. It runs in jieba-rs (the ``rjieba`` binding), which cuts exactly as
    jieba does without its HMM (same dictionary and route; checked in the tests)
    and about 9 times faster; its dictionary loads on first use (about 0.3 s).
    """
    try:
        return _content_words(_rust_jieba().cut(text, False))
    except UnicodeEncodeError:
        # jieba-rs takes UTF-8, which has no lone surrogates ("\\ud800" escapes in
        # JSON that was never unified); they are not words either.
        return _content_words(_rust_jieba().cut(re.sub("[\ud800-\udfff]", " ", text), False))


_MISS = object()


class Lexicon:
    """What a document does not change about a word's weight, cached per word.

    For each token: whether it counts at all, ``IDF(w)``, ``1 + POS(w) + MARK(w)``
    and its 64-bit hash. Looking this up once per distinct token keeps the
    per-document work beyond segmentation small (the goal: at most 15 % on top
    of jieba).
    """

    _MAX_ENTRIES = 2_000_000  # a bound on memory for endless streams of new tokens

    def __init__(self, params: FingerprintParams, idf: IdfTable) -> None:
        self.params = params
        self.idf = idf
        self._pos = dictionary_pos()
        self._pos_boost = (params.noun_boost, params.verb_boost, params.other_boost, 0.0)
        self.cache: dict[str, tuple[float, float, int] | None] = {}

    def entry(self, token: str) -> tuple[float, float, int] | None:
        """``(IDF, 1 + POS + MARK, hash)`` of a token, or ``None`` if it is not a content word."""
        found = self.cache.get(token, _MISS)
        if found is not _MISS:
            return found  # type: ignore[return-value]
        value: tuple[float, float, int] | None = None
        if is_content_word(token):
            pos = self._pos.get(token)
            if pos is None:
                # Words jieba does not know are mostly names and terms its HMM found
                # (nouns) or Latin-script words (other content words).
                pos = _OTHER if token.isascii() else _NOUN
            boost = 1.0 + self._pos_boost[pos] + (self.params.mark_boost if token in self.params.marked_words else 0.0)
            value = (self.idf.idf.get(token, self.idf.default), boost, token_hash(token))
        if len(self.cache) >= self._MAX_ENTRIES:
            self.cache.clear()
        self.cache[token] = value
        return value


def weigh(
    tokens: Iterable[str], lexicon: Lexicon, *, title_words: frozenset[str] = frozenset()
) -> tuple[list[int], list[float]]:
    """Hashes and weights of a document's distinct content words (SPEC §3).

    ``weight(w) = TF(w) * IDF(w) * (1 + POS(w) + LEN(w) + MARK(w) + TITLE(w))``,
    with each word counted at most ``max_count`` times; ``tokens`` may include
    punctuation and stop words, which are dropped.
    """
    counts: dict[str, int] = {}
    entries: dict[str, tuple[float, float, int]] = {}
    cache, miss = lexicon.cache, _MISS
    for t in tokens:
        c = counts.get(t)
        if c is not None:
            counts[t] = c + 1
            continue
        e = cache.get(t, miss)
        if e is miss:
            e = lexicon.entry(t)
        if e is not None:
            counts[t] = 1
            entries[t] = e  # type: ignore[assignment]
    if not counts:
        return [], []
    params = lexicon.params
    cap = params.max_count
    total = sum(c if c < cap else cap for c in counts.values())
    lengths = [len(w) for w in counts]
    len_min = min(lengths)
    len_span = max(lengths) - len_min
    len_scale = params.length_boost / len_span if len_span else 0.0
    title = params.title_boost
    hashes: list[int] = []
    weights: list[float] = []
    for w, c in counts.items():
        idf, boost, h = entries[w]
        boost += (len(w) - len_min) * len_scale
        if w in title_words:
            boost += title
        hashes.append(h)
        weights.append((c if c < cap else cap) / total * idf * boost)
    return hashes, weights
