"""The compiled core (``simdup_es._native``, the Rust crate in ``native/``) and the switch that picks it.

What the core computes is what the Python modules compute after unification, bit for bit:
tokens (jieba-rs, the version inside the rjieba wheel), their weights, the 64-bit SimHash,
the sentences, the winnowed keys and the parts with their fingerprints; and of each candidate's
comparison, its units coded as the query's, the runs both texts share, the word-level check, its
common text and the shares a judgement reads (called from :mod:`simdup_es.matrix`, :mod:`simdup_es.compare`,
:mod:`simdup_es.commontext` and :mod:`simdup_es.multilevel`); and in unification, OpenCC's script
conversions on the package's flat tables (:func:`simdup_es.opencc_tables.native_script`; the rest of
unification stays Python, whose Unicode tables NFKC and case folding follow). The Python modules (and
OpenCC's C++ library) stay as the reference the tests hold it to, and as the path where no Rust toolchain built it
(it is an optional extension: ``pip install .`` without cargo installs pure Python).

``SIMDUP_IMPLEMENTATION`` picks one, once, when this module is imported:

- ``native``: the compiled core; an error (:class:`~simdup_es.errors.ConfigError`, at first use)
  if it is missing or does not match this package: built from other sources (a stale
  ``build/`` folder), or for another rjieba than the one installed;
- ``python``: the Python modules;
- unset (or empty): the compiled core when it is there and matches, else the Python modules
  (with a warning when a module is there but does not match).

The module carries a hash of the crate's sources it was built from (:data:`REVISION`, made by
``native/build.rs``); the package holds the hash of the sources it was written with.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import re
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np
import xxhash

from .errors import ConfigError
from .keys import TERMS
from .levels import PartParams
from .paths import cache_dir, write_atomically
from . import sentences
from .sentences import DEFAULT_MIN_UNITS, Scan, SentenceTable

log = logging.getLogger(__name__)

ENV = "SIMDUP_IMPLEMENTATION"
REVISION = "6517a2e6afe5cb8c"
""":func:`source_revision` of the crate's sources this package goes with: a module built from
other sources is refused. ``tests/unit/test_native.py`` checks it against ``native/``."""

_CRATE_FILES = ("Cargo.toml", "Cargo.lock", "build.rs")


def source_revision(crate: Path) -> str:
    """The revision of the crate in folder ``crate``: XXH3-64 over the path and bytes of each of its sources
    (``src/*.rs``, ``data/*`` and the three files of :data:`_CRATE_FILES`), in path order, as ``native/build.rs``
    gives it to the module."""
    files = sorted([*_CRATE_FILES, *(f"src/{p.name}" for p in (crate / "src").glob("*.rs")),
                    *(f"data/{p.name}" for p in (crate / "data").iterdir())])
    digest = xxhash.xxh3_64()
    for name in files:
        for part in (name.encode(), b"\0", (crate / name).read_bytes(), b"\0"):
            digest.update(part)
    return f"{digest.intdigest():016x}"


def _rjieba_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rjieba")
    except PackageNotFoundError:
        return None


def _mismatch(module: Any) -> str:
    """Why the compiled ``module`` does not go with this package (``""`` when it does)."""
    where = getattr(module, "__file__", "?")
    if module.REVISION != REVISION:
        return (f"the compiled core {where} was built from other sources (revision {module.REVISION}, this "
                f"package's is {REVISION}): a stale build? Reinstall (pip install .), after removing build/")
    if module.RJIEBA != _rjieba_version():
        return (f"the compiled core segments as rjieba {module.RJIEBA}, but rjieba {_rjieba_version()} is "
                f"installed, whose tokens may differ: pip install 'rjieba=={module.RJIEBA}', or set {ENV}=python")
    return ""


def _choose() -> tuple[str, ModuleType | None, str]:
    """The value of :data:`ENV`, the compiled module if it is to compute, and why the native implementation
    asked for cannot (``""`` when it can, or when it was not asked for)."""
    choice = os.environ.get(ENV, "").strip().lower()
    if choice not in ("", "native", "python"):
        return choice, None, f"{ENV} is 'native' or 'python' (or unset), got {os.environ[ENV]!r}"
    if choice == "python":
        return choice, None, ""
    try:
        module = importlib.import_module(f"{__package__}._native")
    except ImportError as exc:  # a pure-Python install: the Python modules, quietly, unless native was asked for
        return choice, None, (f"the compiled core is not installed ({exc}): install the package with cargo (a Rust "
                              f"toolchain) on PATH, or set {ENV}=python") if choice else ""
    why = _mismatch(module)
    if why and not choice:
        log.warning("%s; using the Python implementation", why)
    return choice, None if why else module, why if choice else ""


_, _MODULE, _WHY = _choose()


def module() -> Any | None:
    """The compiled module when the native implementation is chosen, ``None`` for the Python one.

    Raises
    ------
    ConfigError
        ``SIMDUP_IMPLEMENTATION`` asks for the native implementation and the module is missing or
        does not match, or holds something else.
    """
    if _WHY:
        raise ConfigError(_WHY)
    return _MODULE


def implementation() -> str:
    """``"native"`` or ``"python"``: which one computes fingerprints and levels here (see :func:`module`)."""
    return "python" if module() is None else "native"


# ---------------------------------------------------------------------------------- tables

_CHARS_FORMAT = 1  # bump when the layout of the cached table changes
_ALNUM, _DIGIT, _SPACE, _FOLDS = 1, 2, 4, 8  # native/src/chars.rs


def _build_chars() -> tuple[np.ndarray, dict[int, str]]:
    """The flag byte of every code point by this interpreter's regular expressions and ``str.casefold``."""
    every = np.arange(sys.maxunicode + 1, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")
    flags = np.zeros(len(every), dtype=np.uint8)
    for bit, pattern in ((_ALNUM, r"[^\W_]+"), (_DIGIT, r"\d+"), (_SPACE, r"\s+")):
        for m in re.finditer(pattern, every):
            flags[m.start() : m.end()] |= bit
    folds: dict[int, str] = {}
    step = 4096
    for at in range(0, len(every), step):  # most blocks fold to themselves: each character only in the others
        block = every[at : at + step]
        if block.casefold() != block:
            folds.update((at + k, c.casefold()) for k, c in enumerate(block) if c.casefold() != c)
    flags[list(folds)] |= _FOLDS
    return flags, folds


def char_table() -> tuple[bytes, list[tuple[int, str]]]:
    """What the compiled core knows of characters, as this interpreter's Unicode tables have them: a
    flag byte per code point and the characters ``str.casefold`` changes, with what they become.

    Built once per Unicode version (about 0.1 s) and kept in the cache folder.
    """
    name = f"chars-{_CHARS_FORMAT}-{sys.implementation.name}-{unicodedata.unidata_version}"
    folder = cache_dir()
    npy, folds_json = (folder / f"{name}.npy", folder / f"{name}.json") if folder is not None else (None, None)
    try:
        if npy is not None and folds_json is not None:
            flags = np.load(npy)
            folds = {int(k): v for k, v in json.loads(folds_json.read_text(encoding="utf-8")).items()}
            if len(flags) == sys.maxunicode + 1:
                return flags.tobytes(), sorted(folds.items())
    except (OSError, ValueError, TypeError):
        pass  # not cached yet (or a broken entry): build it
    flags, folds = _build_chars()
    if npy is not None and folds_json is not None:
        try:
            write_atomically(npy, lambda f: np.save(f, flags))
            write_atomically(folds_json, lambda f: f.write(json.dumps(folds).encode()))
        except OSError as exc:
            log.warning("cannot write the cache %s (%s); it is rebuilt at every start", npy, exc)
    return flags.tobytes(), sorted(folds.items())


def _u64_bytes(values: np.ndarray) -> bytes:
    """An array's values as native unsigned 64-bit numbers (a float's bits, an int's two's complement)."""
    values = np.ascontiguousarray(values)
    return values.view(np.uint64).tobytes() if values.dtype.itemsize == 8 else values.astype(np.uint64).tobytes()


def scan(key: tuple[str, int]) -> Scan:
    """:func:`simdup_es.sentences.scan` of ``key = (text, min_units)``, by the compiled core where it is chosen (a text's
    characters in 4 bytes each, where numpy's scan held some 40 a character at once; a third of its time on a stored
    text of 800 characters); by the Python modules elsewhere, and for a text with a lone surrogate (which the core's
    characters cannot hold)."""
    core = module()
    if core is None:
        return sentences.scan(key)
    text, min_units = key
    sentences.check_min_units(min_units)
    try:
        columns, points, word_at, words = _scanner(core).scan(text, min_units)
    except UnicodeEncodeError:
        return sentences.scan(key)
    return sentences.scanned(text, np.frombuffer(columns, dtype=np.int64).reshape(-1, 3),
                             np.frombuffer(points, dtype=np.uint32), np.frombuffer(word_at, dtype=np.int64), words)


@lru_cache(maxsize=1)
def _scanner(core: ModuleType) -> Any:
    """The compiled sentence scan (``simdup_es._native.Scanner``) with this interpreter's :func:`char_table`."""
    flags, folds = char_table()
    return core.Scanner(char_flags=flags, folds=folds)


def pipeline(params: Any, idf: Any, pos: Any, stop_words: Iterable[str]) -> Any:
    """The compiled pipeline of a fingerprinter: its :class:`~simdup_es.config.FingerprintParams`, its
    :class:`~simdup_es.tokens.IdfTable`, the part-of-speech :class:`~simdup_es.tokens.HashTable` and the
    stop words (:func:`~simdup_es.tokens.stop_words`). Requires :func:`module`."""
    native = module()
    assert native is not None
    flags, folds = char_table()
    return native.Pipeline(
        char_flags=flags, folds=folds, stop_words=list(stop_words), marked_words=sorted(params.marked_words),
        pos_keys=_u64_bytes(pos.keys), pos_values=_u64_bytes(np.asarray(pos.values, dtype=np.int64)),
        idf_keys=_u64_bytes(idf.idf.keys), idf_values=_u64_bytes(np.asarray(idf.idf.values, dtype=np.float64)),
        idf_default=float(idf.default), max_count=int(params.max_count),
        pos_boosts=[float(params.noun_boost), float(params.verb_boost), float(params.other_boost), 0.0],
        length_boost=float(params.length_boost), mark_boost=float(params.mark_boost), title_boost=float(params.title_boost),
    )


class StoredBatch(NamedTuple):
    """What the stores write of each document of a batch, from the compiled core (:func:`levels` with ``store_parts``;
    :class:`~simdup_es.keys.StoredKeys` has one document's). Document ``i``'s are ``members[i]`` (``None`` where it has
    no fingerprint or no members were asked for), ``cuts[i]``, rows ``part_first[i] .. part_first[i + 1]`` of
    ``parts`` and ``key_first[i] .. key_first[i + 1]`` of ``keys`` (uint64)."""

    members: list[str | None]
    cuts: list[int]
    parts: bytes
    part_first: list[int]
    keys: bytes
    key_first: list[int]


class BatchLevels(NamedTuple):
    """The levels of a batch of unified texts from the compiled core (:func:`levels`).

    Text ``i``'s parts are rows ``part_first[i] .. part_first[i + 1]`` of ``parts`` (uint64, 5 a
    row: first, stop, start, end, units) and of ``part_fingerprints``; its keys rows
    ``key_first[i] .. key_first[i + 1]`` of ``keys`` (uint64, 2 a row: hash, unit position).
    """

    fingerprints: list[int | None]
    table: SentenceTable
    units: list[int]
    parts: bytes
    part_first: list[int]
    part_fingerprints: list[int | None]
    keys: bytes
    key_first: list[int]
    stored: StoredBatch | None = None


def levels(pipeline: Any, texts: Sequence[str], titles: Sequence[str], params: PartParams, *, with_document: bool,
           part_max_bytes: int | None, store_parts: int | None = None, members: tuple[str, str] | None = None
           ) -> BatchLevels:
    """Every level of each unified text (its unified title beside it, ``""`` for none): sentences, units, keys,
    parts and their fingerprints, and the text's fingerprint (``None`` unless ``with_document``; also where it
    has no content word). A part over ``part_max_bytes`` gets no fingerprint.

    With ``store_parts`` (the most part fingerprints a store keeps) also what the stores write of each document
    (:class:`StoredBatch`), with ``members = (version, layout)`` its ``simdup`` members as JSON text
    (:func:`simdup_es.keys.members_json`)."""
    version_json, five_terms = (None, False) if members is None else (json.dumps(members[0], ensure_ascii=False),
                                                                      members[1] == TERMS)
    (fps, columns, first, units, parts, part_first, part_fps, keys, key_first, *stored) = pipeline.levels(
        list(texts), list(titles), min_units=params.min_units, window_units=params.window_units,
        max_units=params.max_units, overlap=float(params.overlap), key_units=params.key_units,
        key_window=params.key_window, with_parts=params.with_parts, sentence_units=DEFAULT_MIN_UNITS,
        with_document=with_document, part_max_bytes=part_max_bytes, store_parts=store_parts,
        version_json=version_json, five_terms=five_terms)
    table = SentenceTable(tuple(texts), np.frombuffer(first, dtype=np.int64),
                          np.frombuffer(columns, dtype=np.int64).reshape(-1, 3))
    return BatchLevels(fps, table, units, parts, part_first, part_fps, keys, key_first,
                       StoredBatch(*stored) if stored else None)
