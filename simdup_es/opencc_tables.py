"""OpenCC's tables for :func:`simdup_es.text.to_simplified`: loading its configs, and building and caching
the shortcuts (flat tables, and the marks of the characters that a conversion can change).

The shortcuts are built once into :func:`simdup_es.paths.cache_dir` from the tables shipped in the
``opencc`` wheel; a damaged cache is rebuilt, and without shortcuts every pass runs, which gives the
same text. On the native implementation the compiled core converts with the flat tables
(:func:`native_script`), as OpenCC does with them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .errors import SimdupError
from .paths import cache_dir, package_dir, write_atomically

log = logging.getLogger(__name__)


@cache
def converter(config: str):  # type: ignore[no-untyped-def]
    import opencc  # deferred: loading the tables costs ~50 ms and not every caller needs it

    return opencc.OpenCC(config)

CONFIGS = ("t2s", "s2twp", "tw2sp")

@dataclass(frozen=True, eq=False)  # hashed by identity: _flag_table keeps a table for each
class Shortcuts:
    """What lets :func:`to_simplified` skip the conversion passes that cannot change a text.

    OpenCC converts by forward maximum matching over a table's keys, so a table
    changes a text only where one of its *changing* keys (a value differs from
    the key) occurs in it. Each config first runs its ``normalization`` table
    (CJK compatibility ideographs, one character each), then its main conversion:

    * ``marks[c]`` is 2 for the normalization keys: text without one is left
      alone by the first normalization, and the values of the main conversions
      hold none (checked when the shortcuts are built), so the other two
      normalizations leave it alone as well. Text with one takes the three
      configs as they are.
    * ``marks[c]`` is 1 for one character of each changing key of t2s's main
      conversion (its single-character keys, Traditional characters, and the
      first character of any phrase key that holds none of them): text without
      one is left alone by t2s.
    * ``main`` holds each config without its normalization, each of its
      (group) tables made one flat table (:func:`_flatten`): the same text in
      about half the time.
    """

    marks: np.ndarray  # uint8 by code point; the last one stands for every code point above
    main: dict[str, str]  # config -> path of the config file without its normalization, with flat tables

    def mark(self, text: str) -> int:
        """The highest mark of the characters of ``text`` (0 if none); :func:`char_flags` finds it for a batch at once."""
        return int(lookup(self.marks, text).max()) if text else 0


def _dict_files(node: object) -> list[str]:
    """The dictionary files a piece of OpenCC config names, groups included."""
    if isinstance(node, dict):
        files = [node["file"]] if "file" in node else []
        return files + [f for v in node.values() for f in _dict_files(v)]
    if isinstance(node, list):
        return [f for v in node for f in _dict_files(v)]
    return []


def _read_table(tool: Path, path: Path) -> dict[str, str]:
    """The entries of a compiled (.ocd2) table, key -> its values as the table's text form writes them (the first is
    the one OpenCC puts in), read through the wheel's own opencc_dict."""
    out = subprocess.run(
        [str(tool), "-i", str(path), "-o", "/dev/stdout", "-f", "ocd2", "-t", "text"],
        check=True, capture_output=True, timeout=60,
    ).stdout.decode("utf-8")
    return dict(line.split("\t", 1) for line in out.split("\n") if line)  # not splitlines: it cuts at more than line breaks


def _read_dicts(read: Callable[[str], dict[str, str]], chain: object) -> dict[str, list[str]]:
    """The entries of the tables a config part names (``read`` of each file name), the values of a key
    in several merged.

    That does for the questions asked of them here (which keys change, which values).
    """
    entries: dict[str, list[str]] = {}
    for name in _dict_files(chain):
        for key, values in read(name).items():
            entries.setdefault(key, []).extend(values.split(" "))
    return entries


def _flatten(node: dict[str, Any], read: Callable[[str], dict[str, str]]) -> dict[str, str]:
    """One table that converts as the (group) dictionary ``node`` of an OpenCC config does.

    At each place OpenCC takes the longest key of a table that starts there. A
    ``union`` group takes the longest key of any of its tables (the first table's
    entry for a key in several); a ``short_circuit`` group (the default) takes the
    first table with any key there, so a later table's key that begins with an
    earlier table's key is never used, and is left out. OpenCC (1.4) searches a
    short_circuit group table by table, a flat table once. The tables marked
    ``may_output_tofu`` are in, as in the configs the ``opencc`` package loads by
    default.
    """
    if node.get("type") != "group":
        return read(node["file"])
    out: dict[str, str] = {}
    for child in (_flatten(d, read) for d in node["dicts"]):
        if node.get("match_policy") == "union":
            for key, values in child.items():
                out.setdefault(key, values)
        else:
            earlier = set(out)
            out.update((k, v) for k, v in child.items() if not any(k[:n] in earlier for n in range(1, len(k) + 1)))
    return out


JOIN = "\x01"  # what _convert joins a batch's texts with for one OpenCC call
_UNWRITABLE = re.compile(f"[\t\n\r{JOIN}]")  # the text form's separators, and JOIN


def _changing(entries: dict[str, list[str]]) -> list[str]:
    return [key for key, values in entries.items() if any(v != key for v in values)]

def _build_shortcuts(share: Path, tool: Path, folder: Path) -> dict[str, object]:
    """Read the tables of the three configs; write the configs without normalization, each table flat, into ``folder``.

    The flat tables are text tables (OpenCC holds them in its own hash tries,
    which it searches faster than the compiled marisa tries); each file's name holds
    the start of its SHA-1, as each config's does.
    """

    # Each table read once (a subprocess each), whichever configs and steps name it.
    read = lru_cache(maxsize=None)(lambda name: _read_table(tool, share / name))
    configs = {name: json.loads((share / f"{name}.json").read_text(encoding="utf-8")) for name in CONFIGS}
    normalization = {k for c in configs.values() for k in _changing(_read_dicts(read, c.get("normalization", [])))}
    if any(len(k) != 1 for k in normalization):
        raise ValueError("a normalization key of more than one character")
    chains = {name: _read_dicts(read, config["conversion_chain"]) for name, config in configs.items()}
    for entries in chains.values():
        for values in entries.values():
            if any(normalization.intersection(v) for v in values):
                raise ValueError("a conversion gives a character that normalization changes")
    t2s_keys = _changing(chains["t2s"])
    t2s = {k for k in t2s_keys if len(k) == 1}
    t2s.update(k[0] for k in t2s_keys if not t2s.intersection(k))

    def written(name: str, suffix: str, text: str) -> str:
        data = text.encode("utf-8")
        path = folder / f"opencc-{name}-{hashlib.sha1(data).hexdigest()[:16]}{suffix}"
        write_atomically(path, lambda f: f.write(data))
        return str(path)

    def flat(part: dict[str, Any]) -> dict[str, Any]:
        table = _flatten(part["dict"], read)
        if any(not k or _UNWRITABLE.search(k + v) for k, v in table.items()):
            raise ValueError("a table entry that the text form cannot hold")
        lines = "".join(f"{k}\t{v}\n" for k, v in sorted(table.items()))
        return {**part, "dict": {"type": "text", "file": written("table", ".txt", lines)}}

    main = {}
    for name, config in configs.items():
        stripped = {k: v for k, v in config.items() if k != "normalization"}
        stripped["conversion_chain"] = [flat(part) for part in config["conversion_chain"]]
        if "segmentation" in config:
            stripped["segmentation"] = flat(config["segmentation"])
        main[name] = written(name, ".json", json.dumps(stripped, ensure_ascii=False))
    return {"normalization": "".join(sorted(normalization)), "t2s": "".join(sorted(t2s)), "main": main}


def _read_shortcuts(cached: Path) -> dict[str, Any]:
    """The shortcuts file as :func:`_build_shortcuts` made it; ``ValueError`` if it or a file it names was changed since.

    The file's first line is the SHA-1 of the rest, and the name of each config
    and each table it names holds the start of its own SHA-1, so a damaged cache
    is rebuilt, never used.
    """
    digest, _, body = cached.read_text(encoding="utf-8").partition("\n")
    if hashlib.sha1(body.encode()).hexdigest() != digest:
        raise ValueError(f"{cached} does not match its checksum")
    data: dict[str, Any] = json.loads(body)
    for config in data["main"].values():
        for table in _dict_files(json.loads(_checked(Path(config)))):
            if JOIN.encode() in _checked(Path(table)):  # made before _build_shortcuts checked it
                raise ValueError(f"{table} holds {JOIN!r}")
    return data


def _checked(path: Path) -> bytes:
    """The bytes of a file whose name ends in the start of their SHA-1; ``ValueError`` if they do not match it."""
    data = path.read_bytes()
    if hashlib.sha1(data).hexdigest()[:16] != path.stem.rsplit("-", 1)[1]:
        raise ValueError(f"{path} does not match the checksum in its name")
    return data


@lru_cache(maxsize=1)
def load_shortcuts() -> Shortcuts | None:
    """The shortcuts for the installed OpenCC, built once into the cache folder; ``None`` when they cannot be.

    Without them :func:`to_simplified` runs every pass, which gives the same text.
    """
    try:
        share = package_dir("opencc") / "clib" / "share" / "opencc"
        folder = cache_dir()
        if folder is None:
            raise ValueError("no cache folder can be written")
        stamp = ["flat tables", str(share)] + [f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}"
                                               for p in sorted(share.iterdir())]
        cached = folder / f"opencc-shortcuts-{hashlib.sha1(json.dumps(stamp).encode()).hexdigest()[:16]}.json"
        try:
            data = _read_shortcuts(cached)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
            data = _build_shortcuts(share, share.parent.parent / "bin" / "opencc_dict", folder)
            body = json.dumps(data, ensure_ascii=False)
            checked = f"{hashlib.sha1(body.encode()).hexdigest()}\n{body}".encode()
            write_atomically(cached, lambda f: f.write(checked))
        t2s, normalization = [ord(c) for c in data["t2s"]], [ord(c) for c in data["normalization"]]
        main = {name: str(data["main"][name]) for name in CONFIGS}
        for path in main.values():
            converter(path)  # loaded now, so a config that cannot be read means no shortcuts rather than an error later
    except (OSError, ValueError, KeyError, TypeError, RuntimeError, subprocess.SubprocessError, SimdupError) as exc:
        log.info("OpenCC runs every pass of its three configs (no shortcuts: %s: %s)", type(exc).__name__, exc)
        return None
    marks = np.zeros(max(t2s + normalization, default=0) + 2, dtype=np.uint8)  # the last one 0, for all above
    marks[t2s] = 1
    marks[normalization] = 2
    return Shortcuts(marks, main)


def lookup(table: np.ndarray, text: str) -> np.ndarray:
    """``table`` at each code point of ``text`` (its last value for every code point past its end).

    Called once for a batch of texts joined: one numpy call per text costs as
    much as the lookup itself for texts of a few hundred characters.
    """
    return table.take(np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32), mode="clip")


def native_script(shortcuts: Shortcuts | None) -> Any | None:
    """The compiled core's conversions on the flat tables of ``shortcuts`` (``simdup_es._native.Script``),
    when the native implementation is chosen (:func:`simdup_es.native.module`) and they can be read; else ``None``.

    Its ``to_simplified(texts, t2s)`` gives what OpenCC's ``shortcuts.main`` configs give, t2s (where
    asked), s2twp then tw2sp, each piece between NULs on its own (see :func:`simdup_es.text._convert`):
    OpenCC's forward maximum matching, segmentation and chain, ideographic description sequences kept
    whole (``native/src/script.rs``; the tests hold it to OpenCC on the corpus and on random text).
    About a third of OpenCC's time on the corpus, where a text goes through the three configs once:
    OpenCC's calls on texts joined by :data:`JOIN` did not help it.
    """
    from . import native  # deferred: native imports the fingerprinting modules, which import this one

    compiled = native.module()
    return None if compiled is None or shortcuts is None else _script(compiled, shortcuts)


@lru_cache(maxsize=2)
def _script(compiled: Any, shortcuts: Shortcuts) -> Any | None:
    """``compiled.Script`` over the flat tables of ``shortcuts`` (each read once, checked against the
    SHA-1 in its name); ``None`` if a table or config cannot be read or is not one it knows."""
    try:
        files: list[str] = []

        def index(step: dict[str, Any]) -> int:
            if step["dict"]["type"] != "text":
                raise ValueError(f"a table of type {step['dict']['type']!r}")
            if step["dict"]["file"] not in files:
                files.append(step["dict"]["file"])
            return files.index(step["dict"]["file"])

        configs = []
        for name in CONFIGS:
            spec = json.loads(_checked(Path(shortcuts.main[name])))
            segmentation = spec.get("segmentation")
            if segmentation is not None and segmentation.get("type") != "mmseg":
                raise ValueError(f"{name}: a segmentation of type {segmentation.get('type')!r}")
            configs.append((None if segmentation is None else index(segmentation),
                            [index(step) for step in spec["conversion_chain"]]))
        return compiled.Script([_checked(Path(file)).decode("utf-8") for file in files], configs)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("the compiled core cannot convert with OpenCC's flat tables (%s: %s); OpenCC converts",
                    type(exc).__name__, exc)
        return None


@dataclass(frozen=True, eq=False)
class FlatTable:
    """One table of a conversion chain, converting as OpenCC does: forward maximum matching, first value.

    Slower than OpenCC; what it adds is the words, so that a converted text can be
    mapped back to the words it came from (:mod:`simdup_es.offsets`, which checks its
    result against OpenCC's).
    """

    values: dict[str, str]
    lengths: dict[str, tuple[int, ...]]  # first character -> lengths of its keys, longest first

    def words(self, text: str) -> list[tuple[str, str]]:
        """``(word, converted word)`` for each word of ``text`` in turn."""
        out: list[tuple[str, str]] = []
        i, n = 0, len(text)
        values, lengths = self.values, self.lengths
        while i < n:
            for length in lengths.get(text[i], (1,)):
                word = text[i : i + length]
                got = values.get(word) if i + length <= n else None
                if got is not None:
                    break
            else:
                word = got = text[i]
            out.append((word, got))
            i += len(word)
        return out


def _flat_table(path: str, strings: dict[str, str] | None = None, keys_only: bool = False) -> FlatTable:
    """The table of a flat dictionary file. ``strings``: the words read so far, so that a word several tables hold is
    one object; with ``keys_only`` each key is its own value (a segmentation's table, of which only the keys are read).
    A table of 50,000 words took 12 MB as two strings a word."""
    strings = {} if strings is None else strings
    values: dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if "\t" in line:
                key, value = line.rstrip("\n").split("\t", 1)
                key = strings.setdefault(key, key)
                value = value.split(" ", 1)[0]
                values[key] = key if keys_only else strings.setdefault(value, value)
    by_first: dict[str, set[int]] = {}
    for key in values:
        by_first.setdefault(key[0], set()).add(len(key))
    return FlatTable(values, {c: tuple(sorted(ls, reverse=True)) for c, ls in by_first.items()})


@cache
def chain_tables(config: str) -> tuple[FlatTable, ...] | None:
    """The segmentation and conversion chain of one of the three configs (without its normalization) as
    :class:`FlatTable` objects, from the shortcuts' flat tables: the segmentation's first (OpenCC cuts a
    text into its words, then converts each word through the chain on its own); ``None`` without them."""
    shortcuts = load_shortcuts()
    if shortcuts is None:
        return None
    try:
        spec = json.loads(Path(shortcuts.main[config]).read_text(encoding="utf-8"))
        segmentation = spec["segmentation"]["dict"]["file"]
        chain = [part["dict"]["file"] for part in spec["conversion_chain"]]
        strings: dict[str, str] = {}
        return (_flat_table(segmentation, strings, keys_only=True), *(_flat_table(file, strings) for file in chain))
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        log.info("no flat OpenCC chain for %s (%s: %s)", config, type(exc).__name__, exc)
        return None
