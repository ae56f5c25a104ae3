"""Raw documents to unified text (SPEC §2).

:func:`unify` is pure: str in, str out. :func:`extract` turns the bytes of a
``.txt``/``.md``, ``.html``, ``.pdf`` or ``.docx`` document into text; it takes bytes,
not paths, so reading files stays with the caller.

Unified text is NFKC-normalised (full-width ASCII becomes half-width), converted
from Traditional to Simplified Chinese (OpenCC's tables, shipped in the
``opencc`` wheel: see :func:`to_simplified`), case-folded, stripped of control characters, with runs of
spaces collapsed to one and runs of blank lines to one line break. Line breaks are
kept because they end sentences for the comparison matrix.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re
import subprocess
import unicodedata
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache, cache
from itertools import accumulate
from pathlib import Path
from typing import Any, Literal

import numpy as np

from .errors import EmptyDocumentError, InputError, SimdupError

log = logging.getLogger(__name__)

Kind = Literal["text", "html", "pdf", "docx"]

_SUFFIX_KIND: dict[str, Kind] = {
    ".txt": "text",
    ".text": "text",
    ".md": "text",
    ".markdown": "text",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".pdf": "pdf",
    ".docx": "docx",
}

# Control and format characters except tab and line breaks (which become spaces and
# line breaks below). Zero-width spaces and BOMs are format characters (Cf).
# Lone surrogates (from JSON "\\ud800" escapes) cannot be encoded and go too.
_CONTROL = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\ufeff\ud800-\udfff]"
)
_SPACES = re.compile(r"[^\S\n]+")
_LINE_BREAKS = re.compile(r"\s*\n\s*")


@cache
def _opencc(config: str):  # type: ignore[no-untyped-def]
    import opencc  # deferred: loading the tables costs ~50 ms and not every caller needs it

    return opencc.OpenCC(config)


# Every key of OpenCC's tables (t2s, s2twp, tw2sp) holds a character of these CJK
# blocks (a few phrase keys add Latin letters, '-' or '·' to them: U盘, B超), so text
# without one is left as it is by all three conversions (checked character by
# character in the tests).
_CJK_RANGES = ((0x2E80, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))
_CJK = re.compile("[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in _CJK_RANGES) + "]")

_CONFIGS = ("t2s", "s2twp", "tw2sp")


@dataclass(frozen=True, eq=False)  # hashed by identity: _flag_table keeps a table for each
class _Shortcuts:
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
        """The highest mark of the characters of ``text`` (0 if none); :func:`_flags` finds it for a batch at once."""
        return int(_lookup(self.marks, text).max()) if text else 0


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


_JOIN = "\x01"  # what _convert joins a batch's texts with for one OpenCC call
_UNWRITABLE = re.compile(f"[\t\n\r{_JOIN}]")  # the text form's separators, and _JOIN


def _changing(entries: dict[str, list[str]]) -> list[str]:
    return [key for key, values in entries.items() if any(v != key for v in values)]


def _build_shortcuts(share: Path, tool: Path, folder: Path) -> dict[str, object]:
    """Read the tables of the three configs; write the configs without normalization, each table flat, into ``folder``.

    The flat tables are text tables (OpenCC holds them in its own hash tries,
    which it searches faster than the compiled marisa tries); each file's name holds
    the start of its SHA-1, as each config's does.
    """
    from .tokens import write_atomically

    # Each table read once (a subprocess each), whichever configs and steps name it.
    read = lru_cache(maxsize=None)(lambda name: _read_table(tool, share / name))
    configs = {name: json.loads((share / f"{name}.json").read_text(encoding="utf-8")) for name in _CONFIGS}
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
            if _JOIN.encode() in _checked(Path(table)):  # made before _build_shortcuts checked it
                raise ValueError(f"{table} holds {_JOIN!r}")
    return data


def _checked(path: Path) -> bytes:
    """The bytes of a file whose name ends in the start of their SHA-1; ``ValueError`` if they do not match it."""
    data = path.read_bytes()
    if hashlib.sha1(data).hexdigest()[:16] != path.stem.rsplit("-", 1)[1]:
        raise ValueError(f"{path} does not match the checksum in its name")
    return data


@lru_cache(maxsize=1)
def _shortcuts() -> _Shortcuts | None:
    """The shortcuts for the installed OpenCC, built once into the cache folder; ``None`` when they cannot be.

    Without them :func:`to_simplified` runs every pass, which gives the same text.
    """
    from .tokens import _package_dir, cache_dir, write_atomically

    try:
        share = _package_dir("opencc") / "clib" / "share" / "opencc"
        folder = cache_dir()
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
        main = {name: str(data["main"][name]) for name in _CONFIGS}
        for path in main.values():
            _opencc(path)  # loaded now, so a config that cannot be read means no shortcuts rather than an error later
    except (OSError, ValueError, KeyError, TypeError, RuntimeError, subprocess.SubprocessError, SimdupError) as exc:
        log.info("OpenCC runs every pass of its three configs (no shortcuts: %s: %s)", type(exc).__name__, exc)
        return None
    marks = np.zeros(max(t2s + normalization, default=0) + 2, dtype=np.uint8)  # the last one 0, for all above
    marks[t2s] = 1
    marks[normalization] = 2
    return _Shortcuts(marks, main)


# The characters of Chinese text that are not in NFKC form, nearly all full-width
# punctuation. Replacing a character by its NFKC form leaves the NFKC form of the
# whole text unchanged (it is a compatibility-equivalent string), and once these
# are gone the text is usually found normalised at the quick check, not
# decomposed and recomposed.
_NFKC_COMMON = tuple((c, unicodedata.normalize("NFKC", c)) for c in "，：？（）；！")


def _nfkc(text: str) -> str:
    for wide, narrow in _NFKC_COMMON:
        if wide in text:
            text = text.replace(wide, narrow)
    if unicodedata.is_normalized("NFKC", text):
        return text
    # A line break is a starter that composes with nothing: normalising line by line
    # gives the same text, and only the lines that need it are decomposed and recomposed.
    return "\n".join([unicodedata.normalize("NFKC", line) for line in text.split("\n")])


def to_simplified(text: str) -> str:
    """One script and one vocabulary for Chinese text, whichever it was written in.

    Traditional and Simplified texts differ in characters, and translations made
    in Taiwan also in words (檔名/文件名, 預設/默认, 使用者/用户). Character
    conversion alone (``t2s``) left the zh_TW and zh_CN man pages 13.8 bits apart
    on average; converting every text to Simplified characters, then to Taiwan
    phrasing (``s2twp``) and back to mainland phrasing (``tw2sp``) maps both onto
    the same form: 1.9 bits on average, and a pure script conversion to 0
    (benchmarks/eval_script.py). The round trip can replace a word with its
    regional synonym (执行 -> 运行); it does so the same way for every text.
    Text without CJK characters is returned as it is (the conversions would not
    change it), and passes that cannot change a text are skipped (see
    :class:`_Shortcuts`): the result is always that of the three conversions.
    """
    return to_simplified_many([text])[0]


def to_simplified_many(texts: Sequence[str]) -> list[str]:
    """:func:`to_simplified` of each text, one conversion pass at a time over them all.

    Running each of OpenCC's tables over all the texts before the next one keeps
    the table in the CPU caches: about an eighth faster than text by text.
    """
    out = list(texts)
    shortcuts = _shortcuts()
    _convert(out, _flags(out, shortcuts), shortcuts)
    return out


# What _flags finds in a text, a bit each; _MARKS are the bits of _Shortcuts.marks.
_MARKS, _HAS_CONTROL, _HAS_CJK = 3, 4, 8


@lru_cache(maxsize=2)
def _flag_table(shortcuts: _Shortcuts | None) -> np.ndarray:
    """uint8 by code point: the shortcuts' mark, _HAS_CONTROL and _HAS_CJK; the last one 0, for every code point above."""
    marks = shortcuts.marks if shortcuts is not None else np.zeros(1, dtype=np.uint8)
    table = np.zeros(max(len(marks), _CJK_RANGES[-1][1] + 2), dtype=np.uint8)
    table[: len(marks)] = marks
    for lo, hi in _CJK_RANGES:
        table[lo : hi + 1] |= _HAS_CJK
    table[[m.start() for m in _CONTROL.finditer("".join(map(chr, range(0x10000))))]] |= _HAS_CONTROL
    return table


@lru_cache(maxsize=1)
def _space_table() -> np.ndarray:
    """uint8 by code point: 1 for space and line break, 3 for any other white space (str.split's); the last one 0."""
    table = np.array([3 if chr(c).isspace() else 0 for c in range(0x3002)], dtype=np.uint8)  # U+3000 is the highest
    table[[ord(" "), ord("\n"), len(table) - 1]] = 1, 1, 0
    return table


def _lookup(table: np.ndarray, text: str) -> np.ndarray:
    """``table`` at each code point of ``text`` (its last value for every code point past its end).

    Called once for a batch of texts joined: one numpy call per text costs as
    much as the lookup itself for texts of a few hundred characters.
    """
    return table.take(np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32), mode="clip")


def _or_pieces(values: np.ndarray, lengths: list[int]) -> np.ndarray:
    """The OR of ``values`` over each of the consecutive pieces of these lengths (0 for an empty one)."""
    starts = list(accumulate(lengths[:-1], initial=0))
    if lengths and all(lengths):
        return np.bitwise_or.reduceat(values, starts)
    out = np.zeros(len(lengths), dtype=values.dtype)
    full = np.flatnonzero(lengths)  # reduceat would take one value for an empty piece
    if len(full):
        out[full] = np.bitwise_or.reduceat(values, np.take(starts, full))
    return out


def _flags(texts: Sequence[str], shortcuts: _Shortcuts | None) -> np.ndarray:
    """What :func:`_flag_table` holds for the characters of each text, ORed."""
    return _or_pieces(_lookup(_flag_table(shortcuts), "".join(texts)), [len(t) for t in texts])


def _convert(out: list[str], flags: np.ndarray, shortcuts: _Shortcuts | None) -> None:
    """:func:`to_simplified` of each text of ``out`` in place, given its :func:`_flags` with the same ``shortcuts``."""
    # Text without a CJK character is left alone; the others take the passes their mark needs.
    # (Marks are ORed here, not the highest: 3 is a text with both, which takes every pass.)
    todo = [(i, min(f & _MARKS, 2) if shortcuts is not None else 2) for i, f in enumerate(flags.tolist()) if f & _HAS_CJK]
    # (configs, texts, whether they may be joined): every pass of the three configs, then the shortcuts'.
    passes: list[tuple[Sequence[str], list[int], bool]] = [(_CONFIGS, [i for i, mark in todo if mark == 2], False)]
    if shortcuts is not None:
        passes += [
            ([shortcuts.main["t2s"]], [i for i, mark in todo if mark == 1], True),
            ([shortcuts.main["s2twp"], shortcuts.main["tw2sp"]], [i for i, mark in todo if mark < 2], True),
        ]
    for configs, which, joinable in passes:
        # The shortcut passes convert the batch's texts joined by _JOIN, in one call: no
        # key of their tables holds it (checked when they are built and read), so no
        # match spans it and each text comes out as alone. Two thirds less time on
        # titles, 5 % on texts. (The texts that hold it, or a NUL, go one by one.)
        joined = [i for i in which if _JOIN not in out[i] and "\0" not in out[i]] if joinable else []
        if len(joined) > 1:
            text = _JOIN.join([out[i] for i in joined])
            for config in configs:
                text = _opencc(config).convert(text)
            for i, converted in zip(joined, text.split(_JOIN), strict=True):
                out[i] = converted
            done = set(joined)
            which = [i for i in which if i not in done]
        for config in configs if which else ():
            convert = _opencc(config).convert
            for i in which:
                out[i] = _convert_one(convert, out[i])


def _convert_one(convert: Callable[[str], str], text: str) -> str:
    """``convert(text)``, but OpenCC ends a text at a NUL: each piece between them converted (no key holds one)."""
    return "\0".join(map(convert, text.split("\0"))) if "\0" in text else convert(text)


def unify(text: str) -> str:
    """Return the unified form of ``text``: the form fingerprints and comparisons see.

    The same result as :func:`unify_reference`; :func:`unify_many` of batches of 64 takes
    about 0.42 of its time on the project corpus (it skips the OpenCC passes that cannot
    change a text and runs the others on flat tables, see :class:`_Shortcuts`;
    ``benchmarks/bench_fingerprint.py`` measures both).

    >>> unify("  ＡＢＣ　軟體\\r\\n\\r\\n測試  ")
    'abc 软件\\n测试'
    """
    return unify_many([text])[0]


def unify_many(texts: Sequence[str]) -> list[str]:
    """:func:`unify` of each text, each step over them all (see :func:`to_simplified_many`).

    Steps that would not change a text are skipped, found for the whole batch at
    once by :func:`_flags` and :func:`_needs_spacing`.
    """
    out = [_nfkc(text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text) for text in texts]
    shortcuts = _shortcuts()
    flags = _flags(out, shortcuts)
    # The other flags stay right once the control characters are gone: they are
    # those of the characters that stay.
    for i in np.flatnonzero(flags & _HAS_CONTROL).tolist():
        out[i] = _CONTROL.sub("", out[i])
    _convert(out, flags, shortcuts)
    out = [text.casefold() for text in out]
    # (For one text alone, the check costs about what the split and join do.)
    for i in np.flatnonzero(_needs_spacing(out)).tolist() if len(out) > 1 else range(len(out)):
        # str.split() and the regular expressions' \s are the same white space, so
        # this does what _SPACES, _LINE_BREAKS and strip do, three times faster.
        out[i] = "\n".join([line for line in map(" ".join, map(str.split, out[i].split("\n"))) if line])
    return out


def _needs_spacing(texts: Sequence[str]) -> np.ndarray:
    """Whether each text holds white space other than single spaces and line breaks between other characters.

    Text without is left alone by the white-space steps of :func:`unify_reference`.
    """
    # Joined by line breaks, a text's leading or trailing white space is next to one.
    space = _lookup(_space_table(), "\n" + "\n".join(texts) + "\n")
    one = space & 1
    values = space >> 1
    paired = one[1:] & one[:-1]
    values[1:] |= paired
    values[:-1] |= paired
    return _or_pieces(values, [n for t in texts for n in (1, len(t))] + [1])[1::2] > 0


def unify_reference(text: str) -> str:
    """:func:`unify` step by step, as the specification states it (SPEC §2)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = unicodedata.normalize("NFKC", text)
    text = _CONTROL.sub("", text)
    text = _opencc("tw2sp").convert(_opencc("s2twp").convert(_opencc("t2s").convert(text)))
    text = text.casefold()
    text = _SPACES.sub(" ", text)
    return _LINE_BREAKS.sub("\n", text).strip()


def kind_of(name: str) -> Kind | None:
    """The document kind a file name implies, or ``None`` when it is not one we read."""
    dot = name.rfind(".")
    return _SUFFIX_KIND.get(name[dot:].lower()) if dot >= 0 else None


# Caps that keep one hostile document from exhausting memory or time; a document
# over a cap is refused with the cap named (docs/reliability.md lists them all).
MAX_FILE_BYTES: dict[Kind, int] = {
    "text": 100_000_000,  # the fingerprinter refuses text over 10 MB by default (--max-bytes)
    "html": 100_000_000,
    "pdf": 200_000_000,  # streams are decompressed one at a time, each capped by pypdf
    "docx": 200_000_000,
}
#: Declared unpacked size of all parts of a DOCX, and of its XML parts (which
#: become an lxml tree several times their size). zipfile never inflates a part
#: past its declared size, so checking the declared sizes is enough.
MAX_DOCX_UNPACKED_BYTES = 500_000_000
MAX_DOCX_XML_BYTES = 50_000_000
#: Elements left open at once in an HTML document. Lexbor's tree building slows
#: down with the square of the depth (10,000 nested <div>: 0.4 s; 100,000: 84 s).
MAX_HTML_OPEN_ELEMENTS = 10_000

# Elements that need no end tag (void) or whose end tag is implied by the next
# sibling, so leaving them open does not nest.
_SELF_CLOSING = frozenset(
    b"area base br col embed hr img input link meta source track wbr "
    b"p li dt dd tr td th option optgroup rb rt rp tbody thead tfoot colgroup html head body".split()
)
_TAG = re.compile(rb"<(/?)([A-Za-z][^\s/>]*)")


def decode(data: bytes, *, source: str | None = None) -> str:
    """Decode text bytes: UTF-8 (with or without BOM), else GB18030.

    Chinese files are often GBK/GB18030. Bytes with NUL in them are binary, not
    text, and are refused rather than decoded into garbage.
    """
    if b"\x00" in data[:8192]:
        raise InputError("looks binary (contains NUL bytes), not a text document", source=source)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as utf8_error:
        try:
            return data.decode("gb18030")
        except UnicodeDecodeError:
            raise InputError(
                f"is neither UTF-8 nor GB18030 text (invalid byte at offset {utf8_error.start}); "
                "convert it to UTF-8 first",
                source=source,
            ) from None


def html_to_text(html: str) -> str:
    """Visible text of an HTML document, one line per block element."""
    from selectolax.lexbor import LexborHTMLParser as HTMLParser

    tree = HTMLParser(html)
    for node in tree.css("script, style, noscript, template, head"):
        node.decompose()
    root = tree.body or tree.root
    return root.text(separator="\n", strip=True) if root is not None else ""


def _open_elements(data: bytes) -> int:
    """How deep the elements of an HTML document nest, from its tags alone (one regex pass).

    Elements whose end tag may be left out are not counted, so long pages of
    unclosed ``<p>`` or ``<li>`` stay shallow; misnested tags can only add depth.
    """
    depth = deepest = 0
    for slash, name in _TAG.findall(data):
        if name.lower() in _SELF_CLOSING:
            continue
        if slash:
            depth = max(depth - 1, 0)
        else:
            depth += 1
            deepest = max(deepest, depth)
    return deepest


def _html_to_text(data: bytes, source: str | None) -> str:
    html = decode(data, source=source)
    depth = _open_elements(data)
    if depth > MAX_HTML_OPEN_ELEMENTS:
        raise InputError(
            f"HTML nests {depth:,} elements deep, over the cap of {MAX_HTML_OPEN_ELEMENTS:,} "
            "(parsing it would take hours); fix or convert the file",
            source=source,
        )
    return html_to_text(html)


def _pdf_to_text(data: bytes, source: str | None) -> str:
    from pypdf import PdfReader
    from pypdf.errors import LimitReachedError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
    except LimitReachedError as exc:
        # pypdf's own caps (75 MB per decompressed stream by default): a decompression bomb.
        raise InputError(f"PDF stream over pypdf's size limits (a decompression bomb?): {exc}", source=source) from None
    except Exception as exc:  # pypdf raises many types (and RecursionError) on malformed files
        raise InputError(f"cannot read PDF: {type(exc).__name__}: {exc}", source=source) from None
    text = "\n".join(pages)
    if not text.strip():
        raise EmptyDocumentError(
            f"PDF has no text layer ({len(pages)} page(s), probably scanned images); run OCR on it first",
            source=source,
        )
    return text


def _check_docx_sizes(data: bytes, source: str | None) -> None:
    """Refuse a DOCX whose parts would unpack past the caps (a zip bomb) before python-docx reads them."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        parts = archive.infolist()
    total = sum(p.file_size for p in parts)
    xml = sum(p.file_size for p in parts if p.filename.endswith((".xml", ".rels")))
    for size, cap, what in ((total, MAX_DOCX_UNPACKED_BYTES, "parts"), (xml, MAX_DOCX_XML_BYTES, "XML parts")):
        if size > cap:
            raise InputError(
                f"DOCX of {len(data) / 1e6:.1f} MB whose {what} would unpack to {size / 1e6:,.0f} MB, "
                f"over the cap of {cap / 1e6:,.0f} MB (a zip bomb?)",
                source=source,
            )


def _docx_to_text(data: bytes, source: str | None) -> str:
    from docx import Document

    try:
        _check_docx_sizes(data, source)
        document = Document(io.BytesIO(data))
        lines = [p.text for p in document.paragraphs]
        for table in document.tables:
            for row in table.rows:
                lines.append(" ".join(cell.text for cell in row.cells))
    except InputError:
        raise
    except Exception as exc:  # zipfile, lxml and python-docx raise many types on malformed files
        raise InputError(f"cannot read DOCX: {type(exc).__name__}: {exc}", source=source) from None
    return "\n".join(lines)


def extract(data: bytes, kind: Kind, *, source: str | None = None) -> str:
    """Plain text of a document's bytes, before :func:`unify`.

    Raises
    ------
    InputError
        The bytes are not a readable document of that kind, or are over one of
        the caps above (:data:`MAX_FILE_BYTES` and the rest); the message names
        ``source`` and says what to do.
    """
    cap = MAX_FILE_BYTES.get(kind)
    if cap is not None and len(data) > cap:
        raise InputError(too_large(len(data), cap), source=source)
    if kind == "text":
        return decode(data, source=source)
    if kind == "html":
        return _html_to_text(data, source)
    if kind == "pdf":
        return _pdf_to_text(data, source)
    if kind == "docx":
        return _docx_to_text(data, source)
    raise InputError(f"unknown document kind {kind!r}", source=source)


def too_large(size: int, cap: int) -> str:
    """The reason given for an input over a size cap."""
    return f"is {size / 1e6:,.1f} MB, over the cap of {cap / 1e6:,.0f} MB for one document; split it first"
