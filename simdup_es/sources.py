"""Reading documents from files, folders, JSON Lines and CSV (the I/O edge).

Every input item comes out as either a :class:`Record` or a :class:`Reject` that
says where it was and what was wrong with it, so a batch can go on past bad items
and still account for each one.
"""

from __future__ import annotations

import csv
import errno
import gc
import hashlib
import json
import logging
import os
import re
import stat
import sys
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from .charsets import EncodingError, decode_text
from .errors import InputError
from .fingerprint import Doc
from .extract import MAX_FILE_BYTES, document_title, extract_layout, kind_of, too_large
from .markup import Layout

log = logging.getLogger(__name__)

#: Files simdup writes by default (rejects, resume points: also any ``*.resume.json``). A folder
#: walk skips them, and the HTML reports simdup wrote, so running in the indexed folder does not
#: index them next time.
OUTPUT_NAMES = frozenset({"rejects.jsonl", "search-rejects.jsonl", "dedup-rejects.jsonl", "simdup-index.resume.json"})
_REPORT_MARK = b'<meta name="generator" content="simdup-es">'  # in the head of every HTML report

#: Longest JSON Lines line read; a longer one is one reject, skipped without
#: holding it in memory (the fingerprinter refuses texts over 10 MB anyway).
MAX_LINE_BYTES = 100_000_000
_SKIP_CHUNK = 1 << 20
_CSV_HEAD = 1 << 20  # bytes of a CSV file its encoding is judged on
_SURROGATE = re.compile("[\ud800-\udfff]")
# A JSON text without this has no escaped surrogate, so no value of it holds one (UTF-8 cannot).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD]")


@dataclass(frozen=True)
class Fields:
    """Which fields of a JSON or CSV record hold the id, title and text, and ``meta``: ``(name, field)`` of the
    other fields a store keeps (:data:`~simdup_es.store.base.META_FIELDS`: a source's url, author and date)."""

    text: str = "text"
    title: str | None = "title"
    id: str | None = "id"
    require_id: bool = False  # a record without an id is rejected (the id field was chosen), not given a content id
    extra: str | None = None  # a field whose value the record carries as it is (``simdup dedup --by``)
    meta: tuple[tuple[str, str], ...] = (("url", "url"), ("author", "author"), ("date", "date"))


@dataclass(frozen=True)
class Record:
    """A document read from the input. ``id`` is ``None`` when the input has none.

    ``layout``: what the file's parser knows beyond the text (a Markdown file's headings, block
    quotes and the file as written: :class:`~simdup_es.markup.Layout`), or ``None``. ``meta``: its
    url, author and date when the input has them (:attr:`Fields.meta`, a Markdown front matter).
    """

    text: str
    source: str
    id: str | None = None
    title: str | None = None
    extra: object = None  # the value of ``Fields.extra``, when asked for
    layout: Layout | None = field(default=None, compare=False, repr=False)
    meta: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        """The record's id, or one derived from its content so re-runs give the same id."""
        return self.id if self.id is not None else content_id(self.text, self.title)


@dataclass(frozen=True)
class Reject:
    """An input item that could not become a record, and why."""

    source: str
    reason: str
    id: str | None = None


Item = Record | Reject


def record_doc(record: Record) -> Doc:
    """The fingerprinter's view of a record."""
    return Doc(record.text, record.title, record.source)


def content_id(text: str, title: str | None = None) -> str:
    """A stable id from a document's content: 20 hex digits of SHA-1."""
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass"))
    if title:
        digest.update(b"\x00" + title.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:20]


def path_id(path: Path, base: Path | None = None) -> str:
    """The id of a document file: its path relative to ``base`` (default: the current folder).

    The same file gets the same id whether it is named on the command line or
    found in a folder, by a relative or an absolute path, so indexing it again
    replaces its document. A file outside ``base`` gets its absolute path.
    Paths are compared as written (``..`` and ``.`` removed), then with their
    folders' symbolic links resolved, so a base reached through a link still holds
    its files.
    """
    here = Path(os.path.abspath(path))
    root = Path(os.path.abspath(base if base is not None else os.getcwd()))
    try:
        pairs = [(here, root), (here.parent.resolve() / here.name, root.resolve())]  # the file may be a link: its name
    except (OSError, RuntimeError):  # a symbolic link loop (RuntimeError before Python 3.13)
        pairs = [(here, root)]
    for p, b in pairs:
        if p != b and p.is_relative_to(b):
            return p.relative_to(b).as_posix()
    return here.as_posix()


def _field(record: dict, name: str | None, source: str, surrogates: bool = True, *, text: bool = False
           ) -> str | None:
    """The string in field ``name``; a number is spelled as one (an id, a title), except in the ``text`` field."""
    if name is None or record.get(name) is None:
        return None
    value = record[name]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not text:
        return str(value)
    if not isinstance(value, str):
        kind = {bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "an object"}.get(
            type(value), type(value).__name__)
        what = "text" if text else "a string"
        raise InputError(f"field {name!r} should be {what}, got {kind}" + (" (quote it, if it is the document's text)"
                                                                          if kind == "a number" else ""), source=source)
    # JSON can escape a lone surrogate ("\\ud800"), which no UTF-8 store or output can
    # hold: it becomes U+FFFD, as an undecodable byte would.
    return _SURROGATE.sub("\ufffd", value) if surrogates else value


def from_mapping(record: object, fields: Fields, source: str, *, surrogates: bool = True) -> Item:
    """A record from a parsed JSON object or CSV row.

    ``surrogates=False`` says no string in ``record`` can hold a lone surrogate (JSON
    text without a ``\\uD...`` escape), so none is looked for.
    """
    if not isinstance(record, dict):
        return Reject(source, f"expected a JSON object, got {type(record).__name__}")
    rid: str | None = None
    try:
        rid = _field(record, fields.id, source, surrogates)
        text = _field(record, fields.text, source, surrogates, text=True)
        title = _field(record, fields.title, source, surrogates)
    except InputError as exc:
        return Reject(source, exc.reason, id=rid)
    if text is None:
        if fields.text in record:
            return Reject(source, f"field {fields.text!r} is null: give the record a text (or choose another field "
                                  "with --text-field)", id=rid)
        return Reject(source, f"no {fields.text!r} field (choose the text field with --text-field)", id=rid)
    if rid is None and fields.require_id:
        return Reject(source, f"no id in field {fields.id!r} (the id field chosen with --id-field)")
    return Record(text, source, rid, title, record.get(fields.extra) if fields.extra else None,
                  meta=_meta(record, fields.meta))


def _meta(record: dict, names: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The record's url, author and date (:attr:`Fields.meta`): strings, and numbers as written (a year);
    a value of another type is no such field (it is not what a report could show)."""
    out = []
    for name, key in names:
        value = record.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if isinstance(value, str) and value.strip():
            out.append((name, _SURROGATE.sub("\ufffd", value.strip())))
    return tuple(out)


def bounded_lines(lines: Iterable[bytes] | BinaryIO) -> Iterator[bytes | None]:
    """The lines of a binary stream, ``None`` for each line over :data:`MAX_LINE_BYTES` (skipped unread)."""
    readline = getattr(lines, "readline", None)
    if readline is None:  # a list or generator of lines: already in memory
        yield from lines
        return
    while raw := readline(MAX_LINE_BYTES + 1):
        if len(raw) <= MAX_LINE_BYTES or raw.endswith(b"\n"):
            yield raw
            continue
        while (rest := readline(_SKIP_CHUNK)) and not rest.endswith(b"\n"):
            pass
        yield None


def _loads(line: str) -> object:
    """``json.loads``, with the garbage collector off while it runs.

    A line nested thousands of levels deep takes the parser to the recursion limit
    before it gives up; a collection at that depth runs other objects' finalizers,
    which fail there too and print "Exception ignored" tracebacks of their own.
    """
    if not gc.isenabled():
        return json.loads(line)
    gc.disable()
    try:
        return json.loads(line)
    finally:
        gc.enable()


def _malformed(line: str, exc: json.JSONDecodeError) -> str:
    """The reason for a line that is not JSON, with the column (of the line, not of the parser's line count)."""
    # The line ends with its newline, so an error at its end is, to the parser, at "line 2, column 1".
    end = len(line.rstrip())
    at = f"at column {exc.pos + 1}" if exc.pos < end else f"at column {end + 1} (the end of the line: the record is cut short)"
    # Some of the parser's messages end in "at" already ("Invalid control character at").
    return f"malformed JSON: {exc.msg.removesuffix(' at')} {at}"


def read_jsonl(lines: Iterable[bytes] | BinaryIO, name: str, fields: Fields) -> Iterator[Item]:
    """Records of JSON Lines given as raw lines or a binary stream.

    A line that is not UTF-8, not JSON, nested too deeply for the parser, or over
    :data:`MAX_LINE_BYTES` (checked when reading a stream) is one reject named
    ``name:line``; the lines after it are read as usual.
    """
    for n, raw in enumerate(bounded_lines(lines), 1):
        source = f"{name}:{n}"
        if raw is None:
            yield Reject(source, f"line longer than {MAX_LINE_BYTES / 1e6:g} MB, not read; split the record")
            continue
        try:
            line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            yield Reject(source, f"is not UTF-8 (invalid byte at column {exc.start + 1})")
            continue
        if not line or line.isspace():  # as `not line.strip()`, without copying the line
            continue
        try:
            obj = _loads(line)
        except json.JSONDecodeError as exc:
            yield Reject(source, _malformed(line, exc))
            continue
        except RecursionError:
            yield Reject(source, "JSON nested too deeply to parse (thousands of levels); not a document record")
            continue
        except ValueError:  # not JSONDecodeError: an integer past Python's int-string conversion limit
            yield Reject(source, f"holds a number of more than {sys.get_int_max_str_digits()} digits, which cannot "
                                 "be read: write it as a string (in quotes), or leave the field out")
            continue
        yield from_mapping(obj, fields, source, surrogates=_SURROGATE_ESCAPE.search(line) is not None)


def csv_rows(lines: Iterable[str]) -> Iterator[tuple[int, list[str] | csv.Error]]:
    """The rows of a CSV file (its header first) with the line each starts on, or the error that row raises; blank
    lines skipped. After an unclosed quote (``unexpected end of data``) nothing follows."""
    csv.field_size_limit(sys.maxsize)
    # strict: a quote never closed is an error at the end, not one record swallowing the rest of the file
    reader = csv.reader(lines, strict=True)
    start = 1  # the line the next row starts on
    while True:
        try:
            row: list[str] | csv.Error = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            row = exc
        where, start = start, reader.line_num + 1
        if row:  # (not a blank line)
            yield where, row
        if isinstance(row, csv.Error) and "unexpected end of data" in str(row):
            return


def read_csv(lines: Iterable[str], name: str, fields: Fields) -> Iterator[Item]:
    """Records of a CSV file with a header line; a row that cannot be read is one reject, at the line it starts on."""
    header: list[str] | None = None
    for start, row in csv_rows(lines):
        where = f"{name}:{start}"
        if isinstance(row, csv.Error):
            if "unexpected end of data" in str(row):
                yield Reject(where, "a quote opened in this row is never closed; the rest of the file was not read")
            else:
                yield Reject(where, f"malformed CSV ({row}): a quoted field must be quoted whole, its quotes doubled (\"\")")
            continue
        if header is None:
            header = row
            continue
        if len(row) > len(header):
            yield Reject(where, f"has {len(row)} fields, the header {len(header)}: quote a field that holds a comma")
        elif fields.text in header[len(row):]:
            yield Reject(where, f"has {len(row)} fields, the header {len(header)}: the {fields.text!r} field is missing")
        else:  # optional fields missing at the end are only missing
            yield from_mapping(dict(zip(header, row)), fields, where)


def csv_encoding(path: Path, name: str) -> str:
    """The codec of a CSV file, from its first megabyte: UTF-8 (a byte-order mark skipped), else what
    :func:`simdup_es.charsets.decode_text` finds; ``InputError`` when that is unclear."""
    with open(path, "rb") as f:
        head = f.read(_CSV_HEAD)
    if len(head) == _CSV_HEAD:  # whole lines: a character cut at the end would not decode
        head = head[: head.rfind(b"\n") + 1] or head
    try:
        head.decode("utf-8")
        return "utf-8-sig"
    except UnicodeDecodeError:
        pass
    try:
        codec = decode_text(head)[1]
    except EncodingError as exc:
        raise InputError(exc.reason, source=name) from None
    log.info("%s: read as %s", name, codec)
    return codec


def _codec_name(codec: str) -> str:
    return "UTF-8" if codec == "utf-8-sig" else codec.upper().replace("_", "-")


def _read_document(path: Path, cap: int, name: str) -> bytes:
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > cap:  # a regular file: refused before reading it
            raise InputError(too_large(size, cap), source=name)
        return f.read(cap + 1)  # a pipe has no size: read one byte past the cap, extract() refuses it


def read_file(path: Path, fields: Fields, *, source: str | None = None, id_base: Path | None = None) -> Iterator[Item]:
    """Records of one file: a document (.txt .md .html .pdf .docx) or a collection (.jsonl .csv).

    A document's id is :func:`path_id` of ``path`` and ``id_base``; the records of a
    collection keep their id field (or, without one, get a content id). Documents
    over :data:`simdup_es.extract.MAX_FILE_BYTES` are rejected without being read.
    """
    name = source or str(path)
    suffix = path.suffix.lower()
    try:
        if suffix in (".jsonl", ".ndjson"):
            with open(path, "rb", buffering=1 << 20) as f:  # most lines fit: fewer partial reads to join
                yield from read_jsonl(f, name, fields)
            return
        if suffix == ".csv":
            codec = csv_encoding(path, name)
            with open(path, encoding=codec, errors="strict", newline="") as f:
                try:
                    yield from read_csv(f, name, fields)
                except UnicodeDecodeError as exc:
                    yield Reject(name, f"is not {_codec_name(codec)} text throughout (invalid byte at offset "
                                       f"{exc.start} of a block read; the lines before it were read): convert it to "
                                       "UTF-8 first")
            return
        kind = kind_of(path.name)
        if kind is None:
            yield Reject(name, f"unsupported file type {suffix or '(none)'!r}: use .txt .md .html .pdf .docx .jsonl or .csv")
            return
        data = _read_document(path, MAX_FILE_BYTES[kind], name)
        text, layout, front = extract_layout(data, kind, source=name)
    except InputError as exc:
        yield Reject(name, exc.reason)
        return
    except OSError as exc:
        yield Reject(name, f"cannot read: {exc.strerror or exc}")
        return
    # The document's own title when it has one (HTML <title>, a Markdown # heading), never the file
    # name: titles weigh in the fingerprint, and a copy saved under another name is still a copy.
    yield Record(text, name, path_id(path, id_base), document_title(data, text, kind, layout, front), layout=layout,
                 meta=_meta(front, Fields.meta))


def _unreadable(path: Path) -> str | None:
    """Why a folder entry that is not a folder cannot be read as a file, or ``None`` if it can."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop, not read"
        if path.is_symlink():
            return "broken symbolic link, not read"
        if exc.errno == errno.ENOENT:
            return "no such file or folder"
        return f"cannot read: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        return None
    kind = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    return f"{kind}, not a regular file: not read (name it on the command line to read it)"


def _own_output(path: Path) -> bool:
    """Whether simdup wrote this file: a default rejects file or resume point, or an HTML report."""
    if path.name in OUTPUT_NAMES or path.name.endswith(".resume.json"):
        return True
    if path.suffix.lower() not in (".html", ".htm"):
        return False
    try:
        with open(path, "rb") as f:
            return _REPORT_MARK in f.read(1024)
    except OSError:
        return False  # read_file says why


def _walk(folder: Path, skip: Collection[Path] = ()) -> Iterator[tuple[Path, str | None]]:
    """Every non-folder entry under ``folder`` (symlinked folders not followed), with why it cannot be read;
    simdup's own outputs (:func:`_own_output`) and the files in ``skip`` (absolute paths) left out."""
    entries: list[tuple[Path, str | None]] = []

    def unreadable_folder(exc: OSError) -> None:
        entries.append((Path(exc.filename), f"folder cannot be read: {exc.strerror or exc}"))

    for top, dirs, files in os.walk(folder, onerror=unreadable_folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for f in files:
            if not f.startswith("."):
                child = Path(top, f)
                if child.absolute() in skip or _own_output(child):
                    log.info("%s: not read, simdup wrote it", child)
                    continue
                entries.append((child, _unreadable(child)))
    return iter(sorted(entries, key=lambda e: e[0].parts))


def read_paths(paths: Iterable[Path], fields: Fields = Fields(), *, skip: Collection[Path] = (),
               id_base: Path | None = None) -> Iterator[Item]:
    """Records from files and folders (folders are walked, hidden files skipped, in sorted order).

    A folder walk also skips what simdup wrote: files named like its default outputs
    (:data:`OUTPUT_NAMES`, ``*.resume.json``), its HTML reports, and the files in
    ``skip`` (the run's own outputs). A file named in ``paths`` is always read.

    A document file's id is its path relative to ``id_base`` (default: the current
    folder; :func:`path_id`), whether it is named or found in a folder, so
    re-indexing a file or a folder replaces rather than duplicates. Folder entries
    that are not regular files (FIFOs, sockets, devices, broken or looping
    symbolic links) and subfolders that cannot be read are rejects; symbolic
    links to folders are not followed.
    """
    for path in paths:
        try:
            is_dir = path.is_dir()
        except OSError as exc:  # is_dir() passes on errors other than "not there" (too long a name, no access)
            yield Reject(str(path), f"cannot read: {exc.strerror or exc}")
            continue
        if is_dir:
            empty = True
            for child, unreadable in _walk(path, {p.absolute() for p in skip}):
                empty = False
                if unreadable is not None:
                    yield Reject(str(child), unreadable)
                    continue
                yield from read_file(child, fields, id_base=id_base)
            if empty:  # not a record to reject, but most likely not what was meant
                log.warning("%s: no files in this folder (hidden files and simdup's own outputs are skipped)", path)
        elif path.exists():
            yield from read_file(path, fields, id_base=id_base)
        else:
            yield Reject(str(path), _unreadable(path) or "no such file or folder")
