"""Tokens and their weights.

Segmentation is jieba-rs (the ``rjieba`` binding): jieba's dictionary and its HMM,
one instance per process of our own (never rjieba's module-level one, which other
code in the process may change with ``add_word``). It cuts Chinese text as Python
jieba does (see :class:`Tokenizer`) over 20 times faster; Python jieba is not
loaded at all.
Punctuation, whitespace and stop words (stopwords-iso, Chinese and English) are
dropped.

Part of speech comes from the tag column of jieba's dictionary (the one jieba-rs
embeds), not from a POS tagger: ``rjieba.tag`` costs twice the segmentation and
tags words it does not know ``x``, as it tags 367 dictionary words.

The IDF table and the dictionary's tags are built once into arrays keyed by the
64-bit token hash (:func:`~simdup_es.simhash.token_hash`), saved as ``.npy`` files in
:func:`cache_dir` and memory-mapped from there at every later start: no dictionary of
Python strings is built at start-up. A word missing from a table whose hash equals
that of a word in it (odds about 1 in 5e13 per word) would get that word's values.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import math
import operator
import re
import statistics
import sys
import threading
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import IO
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import native
from .config import FingerprintParams
from .errors import ConfigError
from .paths import cache_dir, package_dir, write_atomically
from .simhash import token_hash

log = logging.getLogger(__name__)

WORDLIKE = re.compile(r"[^\W_]")  # a letter, digit or CJK character somewhere in the token
_NOUN, _VERB, _OTHER, _FUNCTION = 0, 1, 2, 3
# jieba tags of function words: pronouns, prepositions, conjunctions, particles,
# interjections, onomatopoeia, modal particles, punctuation, affixes.
_FUNCTION_TAGS = frozenset("r rr rz rg p c u uj ul uz uv ud ug e o y x w k h".split())
_TABLE_FORMAT = 1  # bump when the layout of the cached tables changes


def _jieba_dir() -> Path:
    return package_dir("jieba")


def _pos_class(tag: str) -> int:
    if tag.startswith("n"):
        return _NOUN
    if tag.startswith("v"):
        return _VERB
    if tag in _FUNCTION_TAGS:
        return _FUNCTION
    return _OTHER


@dataclass(frozen=True)
class HashTable:
    """Values of words keyed by their 64-bit hash: ``keys`` sorted, ``values`` beside them."""

    keys: np.ndarray
    values: np.ndarray

    @classmethod
    def of(cls, table: Mapping[str, float | int], dtype: type) -> HashTable:
        keys = np.fromiter((token_hash(w) for w in table), dtype=np.uint64, count=len(table))
        values: np.ndarray = np.fromiter(table.values(), dtype=dtype, count=len(table))
        order = np.argsort(keys, kind="stable")
        return cls(keys[order], values[order])

    def lookup(self, hashes: np.ndarray, missing: float | int, order: np.ndarray | None = None) -> np.ndarray:
        """The value of each hash, ``missing`` where a hash is not in the table
        (``order``: ``np.argsort(hashes)``, if the caller has it)."""
        if not len(self.keys):
            return np.full(len(hashes), missing, dtype=self.values.dtype)
        # In ascending order each binary search starts where the last one ended: a
        # third less time on a batch's 1,000 new words in a table of 300,000.
        order = np.argsort(hashes) if order is None else order
        ascending = hashes[order]
        i = np.searchsorted(self.keys, ascending)
        i[i == len(self.keys)] = 0
        found = np.where(self.keys[i] == ascending, self.values[i], missing)
        out = np.empty_like(found)
        out[order] = found
        return out

    def get(self, word: str, default: float | int | None = None) -> float | int | None:
        h = np.uint64(token_hash(word))
        i = int(np.searchsorted(self.keys, h))
        return self.values[i].item() if i < len(self.keys) and self.keys[i] == h else default

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self.get(word, _MISS) is not _MISS  # type: ignore[arg-type]

    def __getitem__(self, word: str) -> float | int:
        value = self.get(word, _MISS)  # type: ignore[arg-type]
        if value is _MISS:
            raise KeyError(word)
        return value  # type: ignore[return-value]  # get() answers None only as the default, and the default is _MISS

    def __len__(self) -> int:
        return len(self.keys)


def _cache_base(name: str, source: Path) -> Path | None:
    """The cache entry (without suffix) for data derived from ``source``; ``None`` without a cache folder.

    It is named after the file's path, size and modification time, so an edited
    file is read again. Raises OSError when ``source`` cannot be read.
    """
    st = source.stat()
    folder = cache_dir()
    if folder is None:
        return None
    stamp = f"{_TABLE_FORMAT}\0{source.resolve()}\0{st.st_size}\0{st.st_mtime_ns}"
    return folder / f"{name}-{hashlib.sha1(stamp.encode()).hexdigest()[:16]}"


def _write_cache(files: dict[Path, Callable[[IO[bytes]], object]]) -> None:
    """Write cache files whole (:func:`write_atomically`); a cache folder we cannot
    write to costs a rebuild at every start, nothing more."""
    try:
        for path, write in files.items():
            write_atomically(path, write)
    except OSError as exc:
        log.warning("cannot write the cache %s (%s); it is rebuilt at every start", path, exc)


def _cached(
    name: str, source: Path, build: Callable[[bytes], tuple[HashTable, dict[str, object]]]
) -> tuple[HashTable, dict[str, object]]:
    """A table built from ``source`` by ``build``, cached in :func:`cache_dir` and memory-mapped.

    ``build`` gets the file's bytes and returns the table and a little JSON
    metadata kept beside it. Raises OSError when ``source`` cannot be read.
    """
    base = _cache_base(name, source)
    if base is not None:
        npy, meta_json = base.with_suffix(".npy"), base.with_suffix(".json")
        try:
            meta = json.loads(meta_json.read_text(encoding="utf-8"))
            arrays = np.load(npy, mmap_mode="r")
            return HashTable(arrays[0], arrays[1].view(meta["dtype"])), meta
        except (OSError, ValueError, KeyError, TypeError):
            pass  # not cached yet (or a broken entry): build it
    table, meta = build(source.read_bytes())
    meta["dtype"] = table.values.dtype.str
    if base is None:
        return table, meta
    _write_cache(
        {
            npy: lambda f: np.save(f, np.stack([table.keys, table.values.view(np.uint64)])),
            meta_json: lambda f: f.write(json.dumps(meta).encode()),
        }
    )
    return table, meta


def _build_pos(raw: bytes) -> tuple[HashTable, dict[str, object]]:
    pos: dict[str, int] = {}
    for line in raw.decode("utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 3:
            pos[parts[0]] = _pos_class(parts[2])
    return HashTable.of(pos, np.int64), {}


@lru_cache(maxsize=1)
def dictionary_pos() -> HashTable:
    """Word -> part-of-speech class, from the tag column of jieba's ``dict.txt``."""
    path = _jieba_dir() / "dict.txt"
    try:
        return _cached("pos", path, _build_pos)[0]
    except OSError as exc:
        raise ConfigError(f"cannot read jieba's dictionary {path}: {exc.strerror}; reinstall jieba") from None


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """Chinese and English stop words from stopwords-iso (MIT), case-folded.

    Read from the package's JSON (every language, 4 MB once parsed) once, then
    from a word list in :func:`cache_dir`.
    """
    source = package_dir("stopwordsiso") / "stopwords-iso.json"
    base = _cache_base("stopwords", source)
    cached = base.with_suffix(".txt") if base is not None else None
    if cached is not None:
        try:
            return frozenset(cached.read_text(encoding="utf-8").split("\n"))
        except OSError:
            pass
    data = json.loads(source.read_text(encoding="utf-8"))
    words = frozenset(w.casefold() for lang in ("zh", "en") for w in data[lang])
    if cached is not None:
        _write_cache({cached: lambda f: f.write("\n".join(sorted(words)).encode())})
    return words


def parse_idf(raw: bytes, path: Path | str) -> dict[str, float]:
    """Word -> IDF of a table in jieba's format (see :class:`IdfTable`)."""
    try:
        text = raw.decode("utf-8")
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
    return idf


@dataclass(frozen=True)
class IdfTable:
    """Inverse document frequencies, with the median for words not in the table.

    The file format is jieba's: one ``word idf`` pair per line; lines starting with
    ``#`` are comments. Negative values (words in nearly every document) count as 0.
    ``digest`` is the SHA-1 of the file.
    """

    idf: HashTable
    default: float
    digest: str

    @classmethod
    def load(cls, path: Path | None = None) -> IdfTable:
        path = Path(path) if path is not None else _jieba_dir() / "analyse" / "idf.txt"

        def build(raw: bytes) -> tuple[HashTable, dict[str, object]]:
            idf = parse_idf(raw, path)
            meta = {"default": statistics.median(idf.values()), "digest": hashlib.sha1(raw).hexdigest()}
            return HashTable.of(idf, np.float64), meta

        try:
            table, meta = _cached("idf", path, build)
        except OSError as exc:
            raise ConfigError(f"cannot read IDF table {path}: {exc.strerror}; build one with 'simdup idf build'") from None
        return cls(table, float(meta["default"]), str(meta["digest"]))  # type: ignore[arg-type]


def build_idf(documents: Iterable[list[str]]) -> tuple[dict[str, float], int]:
    """IDF of every word over tokenised documents: ``log(N / (df + 1))``.

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


_rust_lock = threading.Lock()
_rust = None


def _rjieba_class() -> type:
    """rjieba's ``Jieba`` class, without the instance its package builds at import.

    ``import rjieba`` builds a module-level ``Jieba`` (a second copy of the
    dictionary, 33 MiB and 0.1 s) that we never use, so the compiled module is
    loaded from the package's folder on its own, as ``rjieba.rjieba`` (where the
    package would put it).
    """
    import importlib.machinery
    import importlib.util

    loaded = sys.modules.get("rjieba.rjieba")
    if loaded is not None:
        return loaded.Jieba  # type: ignore[no-any-return]
    folder = package_dir("rjieba")
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"rjieba{suffix}"
        if path.is_file():
            spec = importlib.util.spec_from_file_location("rjieba.rjieba", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules["rjieba.rjieba"] = module
            return module.Jieba  # type: ignore[no-any-return]
    import rjieba  # a layout we do not know: the package's way, with its extra instance

    return rjieba.Jieba  # type: ignore[no-any-return]


def _rust_jieba():  # type: ignore[no-untyped-def]
    """This process's jieba-rs, its dictionary loaded on first use (about 0.1 s, 33 MiB): the compiled
    core's where it computes (:mod:`simdup_es.native`: the same jieba-rs, one dictionary), else rjieba's."""
    global _rust
    if _rust is None:
        with _rust_lock:
            if _rust is None:
                compiled = native.module()
                _rust = compiled.Jieba() if compiled is not None else _rjieba_class()()
    return _rust


# Letters or digits next to one of the characters jieba-rs keeps inside a Latin
# token (a.out, mh-alias, tcl_platform) where Python jieba cuts the token there.
_GLUE = "[a-zA-Z0-9][_+#&.%-]|[_+#&.%-][a-zA-Z0-9]"
_GLUED_TEXT = re.compile(_GLUE)
_GLUED_TOKENS = re.compile(f"^[a-zA-Z0-9_+#&.%-]*(?:{_GLUE})[a-zA-Z0-9_+#&.%-]*$", re.MULTILINE)
_SKIP = re.compile(r"([a-zA-Z0-9]+(?:\.\d+)?%?)")  # Python jieba's re_skip


def _split_compounds(text: str, tokens: list[str]) -> list[str]:
    """Latin compounds that are not dictionary words cut as Python jieba cuts them: a.out -> a . out."""
    if _GLUED_TEXT.search(text) is None:
        return tokens
    # A regex over the distinct tokens at once.
    split = {t: pieces for t in _GLUED_TOKENS.findall("\n".join(set(tokens))) if (pieces := _pieces(t)) is not None}
    if not split:
        return tokens
    return _replace_joined(tokens, split)


@lru_cache(maxsize=1 << 16)
def _pieces(token: str) -> tuple[str, ...] | None:
    """Python jieba's cut of a glued Latin token; ``None`` where it keeps it whole (a dictionary word, one piece)."""
    pieces = tuple(x for x in _SKIP.split(token) if x)
    return pieces if len(pieces) > 1 and not _rust_jieba().has_word(token) else None


def _replace_joined(tokens: list[str], split: Mapping[str, Sequence[str]]) -> list[str]:
    """:func:`_replace_tokens`, 3 times faster on the corpus, where few tokens change.

    ``list.index`` finds the tokens to split (a scan in C) and the runs between them
    are copied as slices, rather than looping over every token in Python.
    """
    found = []
    for t in split:
        i = -1
        try:
            while True:
                found.append(i := tokens.index(t, i + 1))
        except ValueError:
            pass
    out: list[str] = []
    start = 0
    for i in sorted(found):
        out += tokens[start:i]
        out += split[tokens[i]]
        start = i + 1
    out += tokens[start:]
    return out


class Tokenizer:
    """Segments unified text into words with jieba-rs, jieba's dictionary and HMM.

    Latin compounds are split as Python jieba splits them (``a.out`` -> ``a . out``,
    ``c++`` and ``3.14`` stay), so the words are Python jieba's but for a few rare
    Chinese words: 7,949 of the project corpus's 8,019 documents (99.1 %) get the
    very same tokens (73.7 % without the split).
    """

    def segment(self, text: str) -> list[str]:
        """All tokens of ``text``, punctuation and spaces included."""
        return _split_compounds(text, self.cut(text))

    def cut(self, text: str) -> list[str]:
        """:meth:`segment` with the Latin compounds still whole; :func:`weigh_batch` splits them in its counts."""
        return _rust_jieba().cut(text, True)  # type: ignore[no-any-return]

    def words(self, text: str, *, hmm: bool = True) -> list[str]:
        """Content words of unified ``text``: no punctuation, spaces or stop words.

        ``hmm=False`` is :func:`dictionary_words`.
        """
        return _content_words(self.segment(text)) if hmm else dictionary_words(text)


def is_content_word(token: str) -> bool:
    """Not punctuation, whitespace or a stop word."""
    return token not in stop_words() and WORDLIKE.search(token) is not None


def _content_words(tokens: Iterable[str]) -> list[str]:
    # is_content_word over many tokens, with the stop-word set looked up once.
    stop = stop_words()
    return [t for t in tokens if t not in stop and WORDLIKE.search(t)]


def dictionary_words(text: str) -> list[str]:
    """Content words of unified ``text`` cut by jieba's dictionary alone, without its HMM.

    This is the segmenter of the comparison matrix's word check
    (:func:`simdup_es.compare.compare`). Without the HMM, words missing from the
    dictionary stay single characters rather than being guessed, which is steadier
    for short sentences: the HMM may cut the same unknown name differently in two
    places. jieba-rs cuts exactly as Python jieba does without its HMM (same
    dictionary and route; checked in the tests).
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

    For each token: whether it counts at all, ``IDF(w)``, ``1 + POS(w) + MARK(w)``,
    its length and its 64-bit hash. Tokens not seen before are looked up a
    batch at a time in the hashed tables; a token seen before costs one dict
    lookup. ``cache`` maps a token to its row of the arrays (``-1`` if it is not a
    content word), so :func:`weigh_batch` gathers a batch's values with numpy; a
    Latin compound that :meth:`Tokenizer.segment` splits maps to a code ``c <= -2``
    instead, and ``pieces[c]`` are the rows of its pieces.

    One lexicon may serve threads (``simdup serve`` shares one fingerprinter): ``lock``
    is held while rows are added and while :func:`weigh_batch` reads them, else two
    threads adding words at once would give rows twice.
    """

    MAX_ENTRIES = 200_000  # the cache is cleared beyond this many tokens: some 190 bytes each (38 MB)

    def __init__(self, params: FingerprintParams, idf: IdfTable) -> None:
        self.params = params
        self.idf = idf
        self._pos = dictionary_pos()
        self._pos_boost = (params.noun_boost, params.verb_boost, params.other_boost, 0.0)
        self.lock = threading.RLock()
        self.cache: dict[str, int] = {}
        self.pieces: dict[int, tuple[int, ...]] = {}
        self._compound_rows: dict[str, int] = {}  # a compound's own row, for entry
        self._rows = 0
        self.idf_of = np.empty(0, dtype=np.float64)
        self.boost_of = np.empty(0, dtype=np.float64)
        self.len_of = np.empty(0, dtype=np.int64)
        self.hash_of = np.empty(0, dtype=np.uint64)

    def clear(self) -> None:
        with self.lock:
            self.cache.clear()
            self.pieces.clear()
            self._compound_rows.clear()
            self._rows = 0

    def add(self, tokens: Iterable[str]) -> None:
        """Put the tokens not cached yet into the cache, and the pieces of those that are compounds.

        The same values as adding one token at a time (the tests' plain loop), but
        for the order of the rows, on which no value depends.
        """
        with self.lock:
            cache = self.cache
            self._add_new({t: None for t in tokens if t not in cache})

    def _add_new(self, new: Collection[str]) -> None:
        """:meth:`add` of distinct tokens none of which is cached (a set or a dict: ``in`` is a lookup)."""
        stop = stop_words()
        cache = self.cache
        compounds: list[tuple[str, tuple[str, ...]]] = []
        while new:  # the new tokens, then the new pieces of their compounds (never compounds themselves)
            words = [t for t in new if t not in stop and WORDLIKE.search(t)]
            if len(words) < len(new):
                cache.update(dict.fromkeys(set(new).difference(words), -1))
            if words:
                self._add_words(words)
            # One regex over the tokens at once: a line that matches is a whole token if it
            # is one of them (a token with a line break never matches, but its lines may).
            glued = dict.fromkeys(_GLUED_TOKENS.findall("\n".join(new)))
            found = [(t, p) for t in glued if t in new and (p := _pieces(t)) is not None]
            compounds += found
            new = {p for _, pieces in found for p in pieces if p not in cache}
        for t, pieces in compounds:
            self._compound_rows[t] = cache[t]
            code = cache[t] = -2 - len(self.pieces)
            self.pieces[code] = tuple(cache[p] for p in pieces)

    def _add_words(self, words: list[str]) -> None:
        hashes = np.fromiter(map(token_hash, words), dtype=np.uint64, count=len(words))
        order = np.argsort(hashes)  # for both table lookups
        pos = self._pos.lookup(hashes, -1, order)
        # Words jieba does not know are mostly names and terms its HMM found (nouns)
        # or Latin-script words (other content words).
        latin = np.fromiter(map(str.isascii, words), dtype=bool, count=len(words))
        pos = np.where(pos >= 0, pos, np.where(latin, _OTHER, _NOUN))
        marked = np.fromiter(map(self.params.marked_words.__contains__, words), dtype=bool, count=len(words))
        # (1 + POS) + MARK, each an IEEE double operation as for one word in Python.
        boosts = (1.0 + np.array(self._pos_boost)[pos]) + np.where(marked, self.params.mark_boost, 0.0)
        start, stop_row = self._rows, self._rows + len(words)
        if stop_row > len(self.hash_of):  # grow by doubling
            size = max(stop_row, 2 * len(self.hash_of), 1024)
            self.idf_of = np.resize(self.idf_of, size)
            self.boost_of = np.resize(self.boost_of, size)
            self.len_of = np.resize(self.len_of, size)
            self.hash_of = np.resize(self.hash_of, size)
        self.idf_of[start:stop_row] = self.idf.idf.lookup(hashes, self.idf.default, order)
        self.boost_of[start:stop_row] = boosts
        self.len_of[start:stop_row] = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        self.hash_of[start:stop_row] = hashes
        self.cache.update(zip(words, range(start, stop_row)))
        self._rows = stop_row

    def entry(self, token: str) -> tuple[float, float, int] | None:
        """``(IDF, 1 + POS + MARK, hash)`` of a token, or ``None`` if it is not a content word."""
        with self.lock:
            if token not in self.cache:
                self.add([token])
            row = self.cache[token]
            if row <= -2:
                row = self._compound_rows[token]
            if row < 0:
                return None
            return float(self.idf_of[row]), float(self.boost_of[row]), int(self.hash_of[row])

    def rows(self, docs: Sequence[Collection[str]]) -> list[tuple[int, ...]]:
        """The row (the cache's value) of each token of each document; the new tokens put there at once (as by :meth:`add`)."""
        with self.lock:
            cache = self.cache
            # The batch's distinct tokens in C: the new ones are found without looking up each token twice.
            self._add_new(set().union(*docs).difference(cache))
            # itemgetter looks up all of a document's tokens in one call: a fifth less time than map.
            return [operator.itemgetter(*tokens)(cache) if len(tokens) > 1 else tuple(map(cache.__getitem__, tokens))
                    for tokens in docs]


def weigh(
    tokens: Iterable[str], lexicon: Lexicon, *, title_words: frozenset[str] = frozenset()
) -> tuple[list[int], list[float]]:
    """Hashes and weights of a document's distinct content words.

    ``weight(w) = TF(w) * IDF(w) * (1 + POS(w) + LEN(w) + MARK(w) + TITLE(w))``,
    with each word counted at most ``max_count`` times; ``tokens`` may include
    punctuation and stop words, which are dropped. The plain reference of
    :func:`weigh_batch`, which fingerprints use.
    """
    params = lexicon.params
    cap = params.max_count
    entries = [(w, min(c, cap), e) for w, c in Counter(tokens).items() if (e := lexicon.entry(w)) is not None]
    if not entries:
        return [], []
    total = sum(c for _, c, _ in entries)
    len_min = min(len(w) for w, _, _ in entries)
    len_span = max(len(w) for w, _, _ in entries) - len_min
    len_scale = params.length_boost / len_span if len_span else 0.0
    # (c / total) * IDF * boost, with boost = (1 + POS + MARK) + LEN + TITLE, in this
    # order: the same floats on every machine (and in weigh_batch).
    return [h for _, _, (_, _, h) in entries], [
        c / total * idf * (boost + (len(w) - len_min) * len_scale + (params.title_boost if w in title_words else 0.0))
        for w, c, (idf, boost, _) in entries
    ]


def weigh_batch(
    docs: Sequence[Sequence[str]],
    lexicon: Lexicon,
    titles: Sequence[frozenset[str]] | None = None,
    parts: Sequence[Sequence[tuple[int, int] | Sequence[str]]] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`weigh` of many documents at once: the same floats, in another order within a document.

    The tokens may come from :meth:`Tokenizer.cut`: the Latin compounds that
    :meth:`Tokenizer.segment` splits count here as their pieces.

    Returns flat ``hashes`` (uint64) and ``weights`` (float64) of every document's
    content words, document ``i``'s at ``offsets[i]:offsets[i + 1]`` (none for a
    document without content words). ``titles[i]`` are document ``i``'s title words.
    No SimHash depends on the order of a document's words (its weights are made
    integers before they are summed), so the batch is counted in numpy as a whole,
    rather than a :class:`~collections.Counter` for each document and part: a third
    less time for a document with its parts. The formula runs once over the batch,
    with the same operations in the same order as :func:`weigh`.

    ``parts[i]`` are more documents, without title, each weighed right after document
    ``i`` (and counted in ``offsets``): a pair ``(start, stop)`` stands for the tokens
    ``docs[i][start:stop]``; anything else is the part's own tokens.
    """
    if parts is not None and len(parts) != len(docs) or titles is not None and len(titles) != len(docs):
        raise ValueError(f"{len(docs)} documents, but titles or parts for another number of them")
    with lexicon.lock:  # the rows read below stay those the batch was given (Lexicon: threads)
        return _weigh_batch(docs, lexicon, titles, parts)


def _weigh_batch(
    docs: Sequence[Sequence[str]],
    lexicon: Lexicon,
    titles: Sequence[frozenset[str]] | None,
    parts: Sequence[Sequence[tuple[int, int] | Sequence[str]]] | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`weigh_batch`, its arguments checked and the lexicon's lock held."""
    if len(lexicon.cache) > lexicon.MAX_ENTRIES:
        lexicon.clear()  # a bound on memory for endless streams of new tokens
    each = parts if parts is not None else [()] * len(docs)
    own = [span for spans in each for span in spans if not isinstance(span, tuple)]
    # Segments: the documents, then the parts with tokens of their own; the row of each token.
    listed = lexicon.rows([*docs, *own])
    raw = np.concatenate(([0], np.cumsum([len(r) for r in listed], dtype=np.int64)))
    rows = np.fromiter(itertools.chain.from_iterable(listed), dtype=np.int64, count=int(raw[-1]))
    rows, moved = _split_compound_rows(rows, lexicon.pieces)
    bounds = (moved[raw] if moved is not None else raw).tolist()
    none = lexicon._rows  # the row of every token that is no content word, dropped below
    rows[rows < 0] = none
    canon, title_at = _canonical(rows, bounds, none + 1, lexicon.cache, titles or ())
    # A segment's distinct rows are its canonical positions, numbered 0, 1, ... within it.
    first = np.flatnonzero(np.bincount(canon, minlength=len(rows)))
    distinct = np.bincount(np.searchsorted(bounds, first, side="right") - 1, minlength=len(bounds) - 1)
    before = np.concatenate(([0], np.cumsum(distinct, dtype=np.int64)))
    number = np.empty(len(rows), dtype=np.int64)
    number[first] = np.arange(len(first)) - np.repeat(before[:-1], distinct)
    # Groups, in output order: document i, then its parts. Each counts tokens
    # start..stop of a segment's, by that segment's numbers (keys key0[g] on).
    starts, stops, segment, is_doc = _group_spans(docs, each, bounds, raw, moved)
    start, seg = np.array(starts, dtype=np.int64), np.array(segment, dtype=np.int64)
    size = np.array(stops, dtype=np.int64) - start
    n_groups = len(starts)
    taken = np.concatenate(([0], np.cumsum(size, dtype=np.int64)))
    token = np.repeat(start - taken[:-1], size) + np.arange(int(taken[-1]), dtype=np.int64)
    key0 = np.concatenate(([0], np.cumsum(distinct[seg], dtype=np.int64)))
    keys = np.repeat(key0[:-1], size) + number[canon[token]]
    if key0[-1] <= _DENSE_KEYS * (len(keys) + 128):  # a count for every key: one array, no sort
        counts = np.bincount(keys, minlength=int(key0[-1]))
        key = np.flatnonzero(counts)
        count = counts[key]
    else:  # a long document with many parts: as many keys as its distinct words times its parts
        key, count = np.unique(keys, return_counts=True)
    group = np.searchsorted(key0, key, side="right") - 1
    at = first[before[seg[group]] + key - key0[group]]  # the canonical position of each (group, row)
    row = rows[at]
    content = row != none
    count, group, row, at = count[content], group[content], row[content], at[content]
    sizes = np.bincount(group, minlength=n_groups)
    offsets = np.concatenate(([0], np.cumsum(sizes, dtype=np.int64)))
    weights = _weights(lexicon, count, group, row, title_at[at] if title_at.any() else None, is_doc, sizes, offsets)
    return lexicon.hash_of[row], weights, offsets


def _group_spans(
    docs: Sequence[Sequence[str]], each: Sequence[Sequence[tuple[int, int] | Sequence[str]]], bounds: list[int],
    raw: np.ndarray, moved: np.ndarray | None,
) -> tuple[list[int], list[int], list[int], list[bool]]:
    """:func:`weigh_batch`'s groups, in output order: document i, then its parts.

    Each counts tokens ``starts[g]..stops[g]`` of segment ``segment[g]``; ``is_doc[g]``
    tells a document from a part.
    """
    starts: list[int] = []
    stops: list[int] = []
    segment: list[int] = []
    is_doc: list[bool] = []
    k = len(docs)
    for i, spans in enumerate(each):
        starts.append(bounds[i])
        stops.append(bounds[i + 1])
        segment.append(i)
        is_doc.append(True)
        for span in spans:
            if isinstance(span, tuple):
                a, b, _ = slice(span[0], span[1]).indices(len(docs[i]))  # as docs[i][start:stop] takes them
                a, b = raw[i] + a, raw[i] + max(a, b)
                if moved is not None:
                    a, b = moved[a], moved[b]
                starts.append(int(a))
                stops.append(int(b))
                segment.append(i)
            else:
                starts.append(bounds[k])
                stops.append(bounds[k + 1])
                segment.append(k)
                k += 1
            is_doc.append(False)
    return starts, stops, segment, is_doc


def _weights(lexicon: Lexicon, count: np.ndarray, group: np.ndarray, row: np.ndarray, title_words: np.ndarray | None,
             is_doc: list[bool], sizes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """:func:`weigh`'s formula over :func:`weigh_batch`'s content words (``title_words``: which are title words)."""
    n_groups = len(sizes)
    params = lexicon.params
    capped = np.minimum(count, params.max_count)
    length = lexicon.len_of[row]
    # Per-group sums and extremes; a group without words gets none.
    nonempty = sizes > 0
    total = np.bincount(group, weights=capped, minlength=n_groups)  # integers, exact in float64
    firsts = offsets[:-1][nonempty]
    len_min = np.zeros(n_groups, dtype=np.int64)
    len_span = np.zeros(n_groups, dtype=np.int64)
    if len(firsts):
        len_min[nonempty] = np.minimum.reduceat(length, firsts)
        len_span[nonempty] = np.maximum.reduceat(length, firsts) - len_min[nonempty]
    len_scale = np.divide(params.length_boost, len_span, out=np.zeros(n_groups), where=len_span > 0)
    boost = lexicon.boost_of[row] + (length - len_min[group]) * len_scale[group]
    if title_words is not None:  # a title word weighs more in its document, not in the document's parts
        title = title_words & np.array(is_doc)[group]
        boost = boost + np.where(title, params.title_boost, 0.0)  # + 0.0 changes no bit of a boost >= 1
    weights = capped / total[group] * lexicon.idf_of[row] * boost
    return weights


# weigh_batch counts a batch's (group, word) pairs in an array of one count per possible
# pair while there are at most this many per token counted; beyond, it sorts them.
_DENSE_KEYS = 8


def _split_compound_rows(rows: np.ndarray, pieces: Mapping[int, tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray | None]:
    """``rows`` with each Latin compound's code (``<= -2``) replaced by its pieces' rows, and where each
    position moved to (``None`` if none did: no compound)."""
    found = np.flatnonzero(rows <= -2)
    if not found.size:
        return rows, None
    split = [pieces[c] for c in rows[found].tolist()]
    lengths = np.ones(len(rows), dtype=np.int64)
    lengths[found] = [len(p) for p in split]
    moved = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    out = np.repeat(rows, lengths)
    for at, p in zip(moved[found].tolist(), split):
        out[at : at + len(p)] = p
    return out, moved


def _canonical(rows: np.ndarray, bounds: list[int], n_rows: int, cache: Mapping[str, int],
               titles: Sequence[frozenset[str]]) -> tuple[np.ndarray, np.ndarray]:
    """Each token's canonical position, one position of its row in its segment (``bounds``), the same for
    every token of that row there; and where the rows of segment ``i``'s ``titles[i]`` are canonical.

    Which position stands for a row is no matter: no weight depends on the order.
    """
    scratch = np.empty(n_rows, dtype=np.int64)  # by row: the position written last (garbage for other rows)
    canon = np.empty(len(rows), dtype=np.int64)
    positions = np.arange(len(rows), dtype=np.int64)
    title_at = np.zeros(len(rows), dtype=bool)
    for i, (a, b) in enumerate(itertools.pairwise(bounds)):
        r = rows[a:b]
        scratch[r] = positions[a:b]
        canon[a:b] = scratch[r]
        for word in titles[i] if i < len(titles) else ():  # the documents' titles (parts have none)
            t = cache.get(word, -1)
            p = int(scratch[t]) if t >= 0 else -1
            if a <= p < b and rows[p] == t:  # the word is a content word of this segment
                title_at[p] = True
    return canon, title_at
