"""The embedded store: SQLite for documents, in-memory numpy tables for candidates.

It implements the :class:`~simdup_es.store.base.Store` protocol as the Elasticsearch store
does (``tests/contract`` holds both to identical results). docs/embedded-store.md describes
its files, freshness, locking and the in-memory indexes (:mod:`simdup_es.store.tables`), so
:meth:`LocalStore.candidates` returns exactly the documents within ``k``; writes bump a
generation that the in-memory indexes of every process catch up to by reading only later
rows into a small tail. :meth:`LocalStore.candidates_reference` is the slow twin.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import keys as index_keys
from ..common import BulkReport, Closing
from ..commontext import KeyCounts
from ..errors import ConfigError, NotFound, StoreBusy, StoreCorrupted, StoreError, StoreLocationError, StoreSchemaError
from ..keys import StoredKeys
from ..multilevel import PartCandidate, best_candidates
from .base import META_FIELDS, NOT_FOUND, GroupRow, Key, Members, StoredDoc, capped_note, id_problem, listed, query_terms
from .tables import TABLE_K, LevelIndex, MemoryIndex, TableLayout

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3
"""The tables of a store; a store of another version is refused. 2: every table is made at setup (stores of
version 1, from builds before, made some on first use). 3: ``bodies`` holds a document's url, author and date; and
its unified text (``bodies.unified``, :attr:`StoredDoc.unified`), a column a store of this version made before it
gets when first opened for writing (its documents' texts are unified again at each search until indexed again)."""
DB_NAME = "simdup.sqlite3"
SNAPSHOT_NAME = "index-cache.npz"
#: Tail entries (searched by brute force) before they are merged into the tables.
TAIL_MAX = 8192
#: Rows read back from SQLite at one load that make writing a snapshot worth it.
SNAPSHOT_MIN_ROWS = 100_000
_SQL_CHUNK = 10_000  # parameters per ``IN (...)``
_U64 = 1 << 64
_I64 = 1 << 63


def _signed(fp: int) -> int:
    return fp - _U64 if fp >= _I64 else fp


def _as_signed(flat: list[bytes]) -> list[int]:
    """Unsigned 64-bit numbers (native byte order, in pieces) as :func:`_signed` makes them."""
    return np.frombuffer(b"".join(flat), np.int64).tolist()


def _unsigned(fp: int) -> int:
    return fp + _U64 if fp < 0 else fp


def _select_in(conn: sqlite3.Connection, sql: str, values: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
    """The rows of ``sql`` for ``values``, :data:`_SQL_CHUNK` at a time, each its ``{marks}`` made their placeholders."""
    for i in range(0, len(values), _SQL_CHUNK):
        chunk = tuple(values[i : i + _SQL_CHUNK])
        yield from conn.execute(sql.format(marks=",".join("?" * len(chunk))), chunk)


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    """Each statement of ``script`` (``executescript`` would commit the transaction first)."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value);
CREATE TABLE IF NOT EXISTS versions (vcode INTEGER PRIMARY KEY, version TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS docs (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    fp INTEGER NOT NULL,      -- the 64-bit fingerprint as a signed int64
    vcode INTEGER NOT NULL,   -- versions.vcode
    gen INTEGER NOT NULL      -- generation of the write that last touched the row
);
CREATE INDEX IF NOT EXISTS docs_gen ON docs (gen);
CREATE TABLE IF NOT EXISTS bodies (seq INTEGER PRIMARY KEY, title TEXT, text TEXT, url TEXT, author TEXT, date TEXT,
                                   unified TEXT);
CREATE TABLE IF NOT EXISTS levels (seq INTEGER PRIMARY KEY, units INTEGER NOT NULL, parts_cut INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS parts (seq INTEGER NOT NULL, pos INTEGER NOT NULL, fp INTEGER NOT NULL,
                                  PRIMARY KEY (seq, pos)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sentence_keys (seq INTEGER NOT NULL, key INTEGER NOT NULL, PRIMARY KEY (seq, key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS groups (seq INTEGER PRIMARY KEY, grp TEXT NOT NULL, size INTEGER NOT NULL, kind TEXT);
CREATE TABLE IF NOT EXISTS deleted (seq INTEGER PRIMARY KEY, gen INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS deleted_gen ON deleted (gen);
"""
# bodies: a document's title, text and meta fields (StoredDoc.meta, store.base.META_FIELDS, NULL where it has none), and
# its text unified (StoredDoc.unified, NULL where not kept).
# levels, parts, sentence_keys: the finer levels (parts, winnowed keys). groups: written by `simdup groups`. deleted: written by
# `delete`, the seqs it deleted and the generation of the delete, so that an index read before it (in this or another
# process) drops them when it catches up; a seq is never given again (LocalStore._write numbers new documents past the
# largest deleted one).
_LEVEL_TABLES = ("levels", "parts", "sentence_keys")
_META_COLUMNS = ", ".join(META_FIELDS)


class LocalStore(Closing):
    """An embedded :class:`~simdup_es.store.base.Store` in a folder (SQLite + numpy tables).

    >>> store = LocalStore(Path(".simdup"))   # doctest: +SKIP
    >>> store.setup()                         # creates the folder and tables  # doctest: +SKIP

    Parameters
    ----------
    path:
        The store's folder; :meth:`setup` creates it. Other methods raise
        :class:`~simdup_es.errors.NotFound` when there is no store there yet.
    timeout:
        Seconds to wait for another process's write lock before :class:`StoreBusy`.
    read_only:
        Open the database read-only (SQLite ``mode=ro``): no folder, table or index
        cache is created or changed, so a store the user may read but not write (a
        read-only folder, shared with analysts) can be searched. Writing raises
        :class:`~simdup_es.errors.StoreError`.

    The module docstring says what is safe across threads and processes.
    """

    def __init__(self, path: Path | str, *, timeout: float = 30.0, read_only: bool = False) -> None:
        self.path = Path(path)
        self.table_layout = TableLayout.for_k(TABLE_K)
        self.timeout = timeout
        self.read_only = read_only
        if self.path.exists() and not self.path.is_dir():
            raise StoreLocationError(
                f"{self.path} is a file; the embedded store is a folder: give a folder path (it is created if missing)"
            )
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        self._index: MemoryIndex | None = None
        self._dirty = True  # rows may exist that the index has not read
        self._vcodes: dict[str, int] = {}
        self._store_id: str | None = None
        self._levels: list[LevelIndex] | None = None  # the base, then a tail of later writes
        self._levels_gen = -1  # generation the level indexes reflect
        self._levels_base_gen = -1  # generation the base was read at
        self._levels_dirty = True  # a write since the level index was read
        self._unified_column = True  # bodies.unified exists (a store made before it, opened read-only, has none)

    def __repr__(self) -> str:
        return f"LocalStore({str(self.path)!r})"

    @property
    def db_path(self) -> Path:
        return self.path / DB_NAME

    # ----------------------------------------------------------------- connection

    @contextlib.contextmanager
    def _sql(self) -> Iterator[sqlite3.Connection]:
        """The connection, with SQLite errors turned into :class:`StoreError` subclasses."""
        conn = self._connect()
        try:
            yield conn
        except BaseException as exc:  # also KeyboardInterrupt: never leave a transaction open
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.rollback()
            if isinstance(exc, sqlite3.Error):
                raise self._translate(exc) from exc
            raise

    def _translate(self, exc: sqlite3.Error) -> StoreError:
        text = str(exc)
        if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
            return StoreBusy(
                f"{self.db_path} stayed locked by another process for {self.timeout:g} s: "
                "wait for the other writer to finish, or raise the timeout"
            )
        if isinstance(exc, sqlite3.DatabaseError) and (
            "not a database" in text or "malformed" in text or "corrupt" in text
        ):
            return StoreCorrupted(
                f"{self.db_path} is damaged ({text}): move the folder aside and re-index into a fresh store "
                "(or restore it from a backup)"
            )
        if isinstance(exc, sqlite3.OperationalError) and ("no such table" in text or "no such column" in text):
            return StoreSchemaError(f"{self.db_path} is not a simdup store ({text}): give another folder")
        if isinstance(exc, sqlite3.OperationalError) and "disk I/O error" in text:
            return StoreError(self._io_error())
        if isinstance(exc, sqlite3.OperationalError) and "disk is full" in text:
            return StoreError(f"{self.db_path}: the disk is full ({text}): free space on it (df -h {self.path}) or "
                              "give a store folder on another disk")
        return StoreError(f"{self.db_path}: {text}")

    def _io_error(self) -> str:
        """What SQLite's "disk I/O error" most likely was: the file size limit (``ulimit -f``) when near it."""
        sizes = []
        for suffix in ("", "-wal", "-journal"):
            with contextlib.suppress(OSError):
                sizes.append(os.stat(f"{self.db_path}{suffix}").st_size)
        largest = max(sizes, default=0)
        try:
            import resource

            limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
            unlimited = limit == resource.RLIM_INFINITY
        except (ImportError, OSError, ValueError):  # no such limit on this platform
            limit, unlimited = 0, True
        # SQLite grows its files a page at a time: a write refused past the limit leaves them just under it.
        if not unlimited and largest >= limit - (1 << 20):
            return (f"{self.db_path}: cannot grow the store's files past {limit:,} bytes, this process's file size "
                    f"limit ('ulimit -f' is {limit // 1024} KB here): raise it ('ulimit -f unlimited') and run again")
        return (f"{self.db_path}: disk I/O error (SQLite could not read or write the file): check the disk and its "
                f"free space (df -h {self.path}), the system log (dmesg), and the file size limit ('ulimit -f')")

    def _connect(self, *, create: bool = False) -> sqlite3.Connection:
        if self._closed:
            raise StoreError(f"{self!r} is closed: open a new LocalStore")
        if self._conn is not None:
            return self._conn
        if not self.db_path.exists() and not create:
            raise NotFound(
                f"no simdup store in {self.path}: create it with 'simdup setup --store {self.path}' "
                "(or LocalStore.setup())"
            )
        if self.path.exists() and not self.path.is_dir():
            raise StoreLocationError(f"{self.path} is a file; the embedded store is a folder: give a folder path")
        if not self.read_only:
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreLocationError(f"cannot create the store folder {self.path}: {exc.strerror}") from exc
        try:
            conn = self._open_read_only() if self.read_only else sqlite3.connect(
                self.db_path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise self._translate(exc) from exc
        self._conn = conn
        try:
            if not self.read_only:  # already WAL unless new: nothing to set on a read-only open
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA cache_size=-65536")  # 64 MiB
            self._check_schema(conn, create=create)
        except sqlite3.Error as exc:
            self._conn = None
            conn.close()
            raise self._translate(exc) from exc
        except StoreError:
            self._conn = None
            conn.close()
            raise
        return conn

    def _open_read_only(self) -> sqlite3.Connection:
        """A connection that never writes: ``mode=ro``, or also ``immutable=1`` when SQLite cannot open the
        WAL index (``-shm``) in a folder it may not write in (no writer is at work there: a writer keeps one)."""
        uri = self.db_path.absolute().as_uri() + "?mode=ro"
        conn = sqlite3.connect(uri, uri=True, timeout=self.timeout, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError as exc:
            conn.close()
            if "readonly" not in str(exc) and "unable to open" not in str(exc):
                raise
        log.info("%s: no WAL index and no leave to make one; reading the database as it is on disk", self.db_path)
        return sqlite3.connect(uri + "&immutable=1", uri=True, timeout=self.timeout, isolation_level=None,
                               check_same_thread=False)

    def _writable(self) -> None:
        """Raise :class:`StoreError` if this store was opened read-only."""
        if self.read_only:
            raise StoreError(f"the store {self.path} was opened read-only (for searching): open it without "
                             "read_only to write to it")

    def _check_schema(self, conn: sqlite3.Connection, *, create: bool) -> None:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "meta" not in tables:
            if tables:
                raise StoreSchemaError(
                    f"{self.db_path} is an SQLite database but not a simdup store: give another folder"
                )
            if not create:
                raise NotFound(f"the store in {self.path} is empty: run 'simdup setup --store {self.path}'")
            return
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        found = int(row[0]) if row else None
        if found != SCHEMA_VERSION:
            raise StoreSchemaError(
                f"{self.db_path} was written by another build of simdup-es (store schema {found}; this release reads "
                f"schema {SCHEMA_VERSION}): index the documents again into a new folder ('simdup index --store NEW "
                "...'), or use the simdup-es that wrote it")
        if "unified" not in {row[1] for row in conn.execute("PRAGMA table_info(bodies)")}:
            self._unified_column = not self.read_only
            if self._unified_column:
                conn.execute("ALTER TABLE bodies ADD COLUMN unified TEXT")
        self._read_meta(conn)

    def _read_meta(self, conn: sqlite3.Connection) -> None:
        self._store_id = conn.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()[0]
        self._vcodes = dict(conn.execute("SELECT version, vcode FROM versions"))

    # ----------------------------------------------------------------- protocol

    def setup(self) -> None:
        """Create the folder and the tables; safe to call again."""
        self._writable()
        with self._lock:
            conn = self._connect(create=True)
            with self._sql():
                conn.execute("BEGIN IMMEDIATE")
                _run_script(conn, _SCHEMA)
                conn.executemany(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)",
                    [("schema_version", SCHEMA_VERSION), ("generation", 0), ("store_id", uuid.uuid4().hex)],
                )
                conn.execute("COMMIT")
                self._read_meta(conn)

    def put(self, docs: Sequence[StoredDoc], *, with_groups: bool = False) -> BulkReport:
        """Insert or replace documents by id, in one transaction.

        A document that cannot be stored (:meth:`StoredDoc.problem`) is reported
        in ``failed`` with its reason; the others are written. With ``with_groups``
        their group fields follow (:meth:`write_groups`, a second transaction).
        """
        report = BulkReport()
        rows: dict[str, tuple[int, str, tuple[str | None, ...], StoredKeys | None]] = {}
        groups: dict[str, tuple[str, int | None, str | None] | None] = {}
        for doc in listed(docs, "documents"):
            reason = doc.problem()
            if reason is not None:
                report.failed.append((str(doc.id), reason))
                continue
            meta = dict(doc.meta)
            rows[doc.id] = (_signed(int(doc.fingerprint)), doc.version,
                            (doc.title, doc.text, *(meta.get(f) for f in META_FIELDS), doc.unified), doc.stored_keys(None))
            groups[doc.id] = doc.group_fields
            report.written += 1
        if rows:
            levels = {doc_id: r[3] for doc_id, r in rows.items() if r[3] is not None}
            with self._lock:
                report.capped = self._write(list(rows), [r[0] for r in rows.values()], [r[1] for r in rows.values()],
                                            [r[2] for r in rows.values()], levels)
        grouped = [(doc_id, *fields) for doc_id, fields in groups.items() if fields is not None]
        if with_groups and grouped:
            self.write_groups(grouped)
        return report

    def put_keys(self, ids: Sequence[str]) -> list[Key] | None:
        """``(id,)`` of each id: the key of a document put here."""
        return [(doc_id,) for doc_id in ids]

    def put_fingerprints(self, ids: Sequence[str], fingerprints: Sequence[int] | np.ndarray, version: str) -> BulkReport:
        """Bulk load: insert or replace ids with fingerprints (no title or text), one transaction.

        Much faster than :meth:`put` for millions of rows (no :class:`StoredDoc`
        objects, no bodies); :meth:`get` returns these documents with ``None`` text.
        """
        if isinstance(fingerprints, np.ndarray) and fingerprints.dtype == np.uint64:
            fps = fingerprints
        else:
            values = [int(f) for f in fingerprints]
            if any(not 0 <= v < _U64 for v in values):
                raise ConfigError("fingerprints must be in 0..2**64-1")
            fps = np.array(values, dtype=np.uint64)
        if len(ids) != len(fps):
            raise ConfigError(f"{len(ids)} ids but {len(fps)} fingerprints")
        if not isinstance(version, str) or not version:
            raise ConfigError("version must be a non-empty string")
        report = BulkReport()
        problems = [StoredDoc(x, 0, version).problem() for x in ids]
        if any(problems):
            report.failed = [(str(x), problem) for x, problem in zip(ids, problems) if problem]
            keep = np.array([not problem for problem in problems], dtype=bool)
            ids, fps = [x for x, problem in zip(ids, problems) if not problem], fps[keep]
        # Last occurrence of an id wins, as in put().
        latest = dict(zip(ids, fps.view(np.int64).tolist()))
        report.written = len(ids)
        if latest:
            with self._lock:
                self._write(list(latest), list(latest.values()), [version] * len(latest), None)
        return report

    def _write(self, ids: list[str], fps: list[int], versions: list[str],
               bodies: list[tuple[str | None, ...]] | None,
               levels: Mapping[str, StoredKeys] | None = None) -> list[tuple[str, str]]:
        """Write documents (and the levels of some) in one transaction; ``(id, what)`` of capped levels.

        ``bodies`` are each document's title, text, :data:`~simdup_es.store.base.META_FIELDS` and unified text
        (``None``: none)."""
        capped: list[tuple[str, str]] = []
        self._writable()
        with self._sql() as conn:
            conn.execute("BEGIN IMMEDIATE")
            gen = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0] + 1
            vcode = {v: self._vcode(conn, v) for v in set(versions)}  # cached after COMMIT
            seqs = self._seqs(conn, ids)
            nxt = conn.execute("SELECT MAX(COALESCE((SELECT MAX(seq) FROM docs), 0), COALESCE((SELECT MAX(seq) FROM "
                               "deleted), 0)) + 1").fetchone()[0]  # never a deleted document's seq again
            assigned = []
            for i in ids:
                s = seqs.get(i)
                if s is None:
                    s, nxt = nxt, nxt + 1
                assigned.append(s)
            conn.executemany(
                "INSERT OR REPLACE INTO docs (seq, id, fp, vcode, gen) VALUES (?, ?, ?, ?, ?)",
                zip(assigned, ids, fps, (vcode[v] for v in versions), itertools.repeat(gen)),
            )
            if seqs:  # a replaced document leaves its group, as in Elasticsearch
                conn.executemany("DELETE FROM groups WHERE seq = ?", ((s,) for s in seqs.values()))
            if bodies is None:
                if seqs:  # replaced documents lose their old title and text
                    conn.executemany("DELETE FROM bodies WHERE seq = ?", ((s,) for s in seqs.values()))
            else:
                conn.executemany(
                    f"INSERT OR REPLACE INTO bodies (seq, title, text, {_META_COLUMNS}, unified) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    ((s, *body) for s, body in zip(assigned, bodies)),
                )
            if seqs:  # a replaced document loses its old levels (as in Elasticsearch)
                for table in _LEVEL_TABLES:
                    conn.executemany(f"DELETE FROM {table} WHERE seq = ?", ((s,) for s in seqs.values()))
            if levels:
                capped = self._write_levels(conn, assigned, ids, levels)
            conn.execute("UPDATE meta SET value = ? WHERE key = 'generation'", (gen,))
            conn.execute("COMMIT")
        self._vcodes.update(vcode)
        self._dirty = self._levels_dirty = True
        for doc_id, what in capped:
            log.info("document %r: %s", doc_id, what)
        return capped

    @staticmethod
    def _write_levels(conn: sqlite3.Connection, seqs: Sequence[int], ids: Sequence[str],
                      levels: Mapping[str, StoredKeys]) -> list[tuple[str, str]]:
        """Insert the levels of the documents ``levels`` has (as stored: :meth:`StoredDoc.stored_keys`), each table in
        one ``executemany``; ``(id, what)`` of capped ones.

        The rows of a batch are gathered first, their numbers read as signed from the stored keys'
        bytes in one numpy pass: a statement per document and table, and a call per number, cost
        about 6 us per document (of ~40 us in ``put``, most of the rest SQLite's own).
        """
        capped: list[tuple[str, str]] = []
        level_rows: list[tuple[int, int, int]] = []
        part_seqs: list[int] = []
        part_pos: list[int] = []
        part_fps: list[bytes] = []
        key_seqs: list[int] = []
        key_values: list[bytes] = []
        for seq, doc_id in zip(seqs, ids):
            stored = levels.get(doc_id)
            if stored is None:
                continue
            n_parts, n_keys = len(stored.parts) // 8, len(stored.keys) // 8
            if stored.cut:
                capped.append((doc_id, capped_note(n_parts, stored.cut)))
            level_rows.append((seq, stored.units, stored.cut))
            part_seqs += [seq] * n_parts
            part_pos += range(n_parts)
            part_fps.append(stored.parts)
            key_seqs += [seq] * n_keys
            key_values.append(stored.keys)
        conn.executemany("INSERT INTO levels (seq, units, parts_cut) VALUES (?, ?, ?)", level_rows)
        conn.executemany("INSERT INTO parts (seq, pos, fp) VALUES (?, ?, ?)", zip(part_seqs, part_pos, _as_signed(part_fps)))
        conn.executemany("INSERT INTO sentence_keys (seq, key) VALUES (?, ?)", zip(key_seqs, _as_signed(key_values)))
        return capped

    def delete(self, ids: Sequence[str]) -> BulkReport:
        """Delete documents by id with their text, levels and group, in one transaction.

        Unknown ids (and an id named again) are reported in ``failed`` as ``"not found"``.
        The deletes are visible to this store at once and to other processes after
        :meth:`refresh`: a tombstone (table ``deleted``) tells their indexes what went.
        """
        report = BulkReport()
        self._writable()
        ids = listed(ids, "ids")
        problems = [id_problem(doc_id) for doc_id in ids]
        report.failed += [(str(doc_id), problem) for doc_id, problem in zip(ids, problems) if problem is not None]
        valid = [doc_id for doc_id, problem in zip(ids, problems) if problem is None]
        if not valid:
            return report
        with self._lock, self._sql() as conn:
            conn.execute("BEGIN IMMEDIATE")
            seqs = self._seqs(conn, list(dict.fromkeys(valid)))
            gone: list[int] = []
            for doc_id in valid:
                seq = seqs.pop(doc_id, None)  # popped: the same id again is not found
                if seq is None:
                    report.failed.append((doc_id, NOT_FOUND))
                else:
                    gone.append(seq)
            if gone:
                gen = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0] + 1
                for table in ("docs", "bodies", *_LEVEL_TABLES, "groups"):
                    conn.executemany(f"DELETE FROM {table} WHERE seq = ?", ((s,) for s in gone))
                conn.executemany("INSERT OR REPLACE INTO deleted (seq, gen) VALUES (?, ?)", ((s, gen) for s in gone))
                conn.execute("UPDATE meta SET value = ? WHERE key = 'generation'", (gen,))
            conn.execute("COMMIT")
        report.written = len(gone)
        if gone:
            self._dirty = self._levels_dirty = True
        return report

    def _vcode(self, conn: sqlite3.Connection, version: str) -> int:
        code = self._vcodes.get(version)
        if code is None:
            conn.execute("INSERT OR IGNORE INTO versions (version) VALUES (?)", (version,))
            code = conn.execute("SELECT vcode FROM versions WHERE version = ?", (version,)).fetchone()[0]
        return code

    @staticmethod
    def _seqs(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, int]:
        return dict(_select_in(conn, "SELECT id, seq FROM docs WHERE id IN ({marks})", ids))

    def candidates(self, fingerprint: int, version: str, *, k: int,
                   exclude_id: str | None = None) -> tuple[list[str], np.ndarray]:
        """Ids and fingerprints of the documents with ``version`` within ``k`` of ``fingerprint``.

        Exactly those (never a miss, no extras), ordered by row number.
        """
        index_keys.check_k(k)
        with self._lock:
            index = self._index
            if index is None or self._dirty:
                index = self._current_index()
            code = self._vcodes.get(version)
            if code is None:
                return [], np.empty(0, np.uint64)
            if index.tail_size > TAIL_MAX:
                index.merge()
            seqs = index.lookup(fingerprint, code, k)
            if not seqs:
                return [], np.empty(0, np.uint64)
            # Re-read the candidates: their ids, and their current values (a row may
            # have been replaced since the index last saw it).
            conn = self._conn
            assert conn is not None
            try:
                rows = list(_select_in(conn, "SELECT seq, id, fp, vcode FROM docs WHERE seq IN ({marks})", seqs))
            except sqlite3.Error as exc:
                raise self._translate(exc) from exc
        if len(rows) > 1:
            rows.sort()
        ids: list[str] = []
        fps: list[int] = []
        for _, doc_id, fp, vcode in rows:
            if fp < 0:
                fp += _U64
            if vcode == code and doc_id != exclude_id and (fp ^ fingerprint).bit_count() <= k:
                ids.append(doc_id)
                fps.append(fp)
        return ids, np.array(fps, dtype=np.uint64)

    def candidates_many(self, queries: Sequence[tuple[int, str]], *, k: int) -> list[tuple[list[str], np.ndarray]]:
        """:meth:`candidates` of each ``(fingerprint, version)`` (in memory: one after the other)."""
        return [self.candidates(fp, version, k=k) for fp, version in queries]

    def copy_candidates(
        self, fingerprint: int, parts: Sequence[int | None], keys: Sequence[int], version: str, *, k: int,
        exclude_id: str | None = None, limit: int = 100,
    ) -> tuple[tuple[list[str], np.ndarray], list[PartCandidate]]:
        """:meth:`candidates` and :meth:`part_candidates` of one query (:meth:`Store.copy_candidates`)."""
        return (self.candidates(fingerprint, version, k=k, exclude_id=exclude_id),
                self.part_candidates(parts, keys, version, exclude_id=exclude_id, limit=limit))

    def part_candidates(
        self, parts: Sequence[int | None], keys: Sequence[int], version: str, *, exclude_id: str | None = None, limit: int = 100
    ) -> list[PartCandidate]:
        """Documents sharing a part or a key with a query (:meth:`Store.part_candidates`).

        This store's own writes are visible at once; other processes' after :meth:`refresh`.
        """
        if limit < 1:
            raise ConfigError(f"limit must be at least 1, got {limit}")
        part_terms, key_terms = query_terms(parts, keys)
        out = []
        with self._lock:
            indexes = self._level_index()
            code = self._vcodes.get(version)
            if code is None or not (part_terms or key_terms):
                return []
            for index in indexes:  # a document is alive in at most one of them; one more: it may be exclude_id
                for pos, part_hits, key_hits in index.best_matches(part_terms, key_terms, code, limit + 1):
                    if index.ids[pos] != exclude_id:
                        out.append(PartCandidate(index.ids[pos], part_hits, key_hits, int(index.units[pos])))
        return best_candidates(out, limit)

    def key_frequencies(self, keys: Sequence[int]) -> KeyCounts:
        """How many documents hold each key, and how many hold any (:meth:`Store.key_frequencies`), counted in the
        level indexes: each keeps its keys sorted and the running count of its live documents' entries.

        This store's own writes are visible at once; other processes' after :meth:`refresh`.
        """
        wanted = np.array(list(keys), dtype=np.uint64)
        counts, documents = np.zeros(wanted.size, dtype=np.int64), 0
        with self._lock:
            for index in self._level_index():  # a document is alive in at most one of them
                found, holding = index.key_counts(wanted)
                counts += found
                documents += holding
        return KeyCounts.of_pairs(wanted.tolist(), counts.tolist(), documents)

    def _level_index(self) -> list[LevelIndex]:
        """The level indexes, caught up with SQLite.

        A base read once, and a tail of the documents written since (read again at
        each catch-up, through the index on ``docs.gen``), whose older entries in the
        base are marked dead. When the tail outgrows :data:`TAIL_MAX` documents and a
        tenth of the base, everything is read into a new base.
        """
        if self._levels is not None and not self._levels_dirty:
            return self._levels
        with self._sql() as conn:
            conn.execute("BEGIN")  # one consistent read
            gen = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0]
            if self._levels is None or gen < self._levels_gen:  # none yet, or the database went back
                self._levels, self._levels_base_gen = [self._read_levels(conn)], gen
            elif gen != self._levels_gen:
                base = self._levels[0]
                changed = np.fromiter(itertools.chain.from_iterable(
                    conn.execute("SELECT seq FROM docs WHERE gen > ? UNION SELECT seq FROM deleted WHERE gen > ?",
                                 (self._levels_base_gen,) * 2)), dtype=np.int64)
                if len(changed) > max(TAIL_MAX, len(base) // 10):
                    self._levels, self._levels_base_gen = [self._read_levels(conn)], gen
                else:
                    base.drop(np.sort(changed))
                    self._levels = [base, self._read_levels(conn, since=self._levels_base_gen)]
            self._levels_gen = gen
            self._vcodes = dict(conn.execute("SELECT version, vcode FROM versions"))
            conn.execute("COMMIT")
        self._levels_dirty = False
        return self._levels

    def _read_levels(self, conn: sqlite3.Connection, since: int | None = None) -> LevelIndex:
        """The levels of every document, or of those written after generation ``since``."""
        where, args = ("", ()) if since is None else (" WHERE d.gen > ?", (since,))
        docs = conn.execute(f"SELECT l.seq, d.id, d.vcode, l.units FROM levels l JOIN docs d ON d.seq = l.seq{where} "
                            "ORDER BY l.seq", args).fetchall()
        seqs = np.array([r[0] for r in docs], dtype=np.int64)

        def owned(table: str, column: str) -> tuple[np.ndarray, np.ndarray]:
            sql = (f"SELECT t.seq, t.{column} FROM {table} t" if since is None
                   else f"SELECT t.seq, t.{column} FROM {table} t JOIN docs d ON d.seq = t.seq{where}")
            flat = np.fromiter(itertools.chain.from_iterable(conn.execute(sql, args)), dtype=np.int64).reshape(-1, 2)
            return np.ascontiguousarray(flat[:, 1]).view(np.uint64), np.searchsorted(seqs, flat[:, 0])

        part_fps, part_owner = owned("parts", "fp")
        keys, key_owner = owned("sentence_keys", "key")
        return LevelIndex(seqs, [r[1] for r in docs], np.array([r[2] for r in docs], dtype=np.int64),
                          np.array([r[3] for r in docs], dtype=np.int64), part_fps, part_owner, keys, key_owner)

    def candidates_reference(self, fingerprint: int, version: str, *, k: int,
                             exclude_id: str | None = None) -> tuple[list[str], np.ndarray]:
        """:meth:`candidates` by reading every row of the version and comparing in Python (slow)."""
        with self._lock, self._sql() as conn:
            rows = conn.execute(
                "SELECT d.id, d.fp FROM docs d JOIN versions v ON v.vcode = d.vcode WHERE v.version = ? ORDER BY d.seq",
                (version,),
            ).fetchall()
        hits = [(i, f) for i, f in ((i, _unsigned(f)) for i, f in rows if i != exclude_id) if (f ^ fingerprint).bit_count() <= k]
        return [i for i, _ in hits], np.array([f for _, f in hits], dtype=np.uint64)

    def get(self, ids: Iterable[str]) -> list[StoredDoc]:
        """Documents by id, in the order asked; unknown ids are left out."""
        wanted = listed(ids, "ids")
        found: dict[str, StoredDoc] = {}
        with self._lock, self._sql() as conn:
            unified = "b.unified" if self._unified_column else "NULL"
            for doc_id, fp, version, title, text, group, size, kind, unified_text, *meta in _select_in(
                    conn, f"SELECT d.id, d.fp, v.version, b.title, b.text, g.grp, g.size, g.kind, {unified}, "
                    f"{', '.join('b.' + f for f in META_FIELDS)} FROM docs d JOIN versions v ON v.vcode = d.vcode "
                    "LEFT JOIN bodies b ON b.seq = d.seq LEFT JOIN groups g ON g.seq = d.seq WHERE d.id IN ({marks})",
                    list(dict.fromkeys(wanted))):
                found[doc_id] = StoredDoc(doc_id, _unsigned(fp), version, text, title, group, size, group_kind=kind,
                                          meta=tuple((f, v) for f, v in zip(META_FIELDS, meta) if v is not None),
                                          unified=unified_text)
        return [found[i] for i in wanted if i in found]

    def count(self) -> int:
        """Number of documents (all versions), as committed in SQLite."""
        with self._lock, self._sql() as conn:
            return conn.execute("SELECT COUNT(*) FROM docs").fetchone()[0]

    def count_with_levels(self) -> int:
        """Number of documents stored with their levels, as committed in SQLite."""
        with self._lock, self._sql() as conn:
            return conn.execute("SELECT COUNT(*) FROM levels").fetchone()[0]

    def versions(self) -> dict[str, int]:
        """Number of documents by fingerprint version, as committed in SQLite."""
        with self._lock, self._sql() as conn:
            return dict(conn.execute("SELECT v.version, COUNT(*) FROM docs d JOIN versions v ON v.vcode = d.vcode "
                                     "GROUP BY v.version").fetchall())

    def refresh(self) -> None:
        """Make writes by other processes visible (this store's own writes always are).

        Cheap: it reads only rows written since the index last looked. Before the
        first candidate lookup there is no index yet, and nothing is read.
        """
        with self._lock:
            self._connect()
            self._dirty = self._levels_dirty = True
            if self._index is not None:
                self._catch_up(self._index)  # rebinds self._index if it had to start over

    def force_merge(self) -> None:
        """Nothing here is kept in segments: SQLite's statistics are brought up to date for its query
        planner (``PRAGMA optimize``) and the write-ahead log is folded into the database file."""
        self._writable()
        with self._lock, self._sql() as conn:
            conn.execute("PRAGMA optimize")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        """Close the database and drop the in-memory index; safe to call again."""
        with self._lock:
            self._index = self._levels = None
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._closed = True

    # ----------------------------------------------------------------- index upkeep

    def _current_index(self) -> MemoryIndex:
        """The in-memory index, loaded, or caught up with SQLite if it may be behind."""
        self._connect()
        index = self._index
        if index is None:
            index = self._index = self._load_snapshot() or MemoryIndex(self.table_layout)
            self._dirty = True
        if self._dirty:
            index = self._catch_up(index)
        return index

    def _catch_up(self, index: MemoryIndex) -> MemoryIndex:
        """Read the rows written since ``index.generation`` into the index's tail.

        Returns the index to use from now on (a new one if the database went back).
        """
        with self._sql() as conn:
            conn.execute("BEGIN")  # one consistent read of the generation and the rows
            gen = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0]
            if gen < index.generation:  # the database went back (restored from a backup?)
                log.warning("%s is older than its index cache; rebuilding the index", self.db_path)
                self._drop_snapshot()
                index = self._index = MemoryIndex(self.table_layout)
            if gen == index.generation:
                conn.execute("COMMIT")
                self._dirty = False
                return index
            self._vcodes = dict(conn.execute("SELECT version, vcode FROM versions"))
            if index.generation == 0:  # everything: a plain table scan beats the gen index
                cur = conn.execute("SELECT seq, fp, vcode FROM docs NOT INDEXED")
            else:
                cur = conn.execute("SELECT seq, fp, vcode FROM docs WHERE gen > ?", (index.generation,))
            rows = np.fromiter(itertools.chain.from_iterable(cur), dtype=np.int64).reshape(-1, 3)
            if index.generation:  # tombstones: (seq, 0, 0)
                gone = np.fromiter(itertools.chain.from_iterable(
                    conn.execute("SELECT seq, 0, 0 FROM deleted WHERE gen > ?", (index.generation,))), dtype=np.int64)
                rows = np.concatenate([rows, gone.reshape(-1, 3)])
            conn.execute("COMMIT")
        if index.generation == 0 and not index.base and not index.tail_size:
            index = self._index = MemoryIndex.from_rows(rows, self.table_layout, gen)  # seqs are distinct
        else:
            index.add(rows)
            index.generation = gen
        self._dirty = False
        if len(rows) >= SNAPSHOT_MIN_ROWS and not self.read_only:
            index.merge()
            self._write_snapshot(index)
        return index

    @property
    def _snapshot_path(self) -> Path:
        return self.path / SNAPSHOT_NAME

    def _load_snapshot(self) -> MemoryIndex | None:
        path = self._snapshot_path
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as z:
                stamp = str(z["store_id"][0])
                gen = int(z["generation"][0])
                schema = int(z["schema"][0])
                rows = z["rows"]
        except Exception as exc:  # any unreadable cache is simply ignored
            # numpy reads what is neither .npy nor .npz as a pickle, and refuses it with its own advice
            # ("allow_pickle"), which is no advice for a cache: say what the file is instead.
            why = ("not an index cache simdup wrote (damaged, cut short or replaced)"
                   if isinstance(exc, (ValueError, EOFError, KeyError)) or "zip" in type(exc).__name__.lower()
                   else f"{type(exc).__name__}: {exc}")
            log.warning("ignoring %s: %s; the index is read from the store's database instead (the cache is "
                        "written again when the store is next opened for writing)", path, why)
            return None
        if stamp != self._store_id or schema != SCHEMA_VERSION or rows.ndim != 2 or rows.shape[1] != 3:
            log.info("ignoring %s: it belongs to another store", path)
            return None
        ordered = np.sort(rows[:, 0])
        if len(ordered) and (ordered[0] < 1 or not (ordered[1:] != ordered[:-1]).all() or rows[:, 2].min() < 1):
            log.warning("ignoring the damaged index cache %s", path)
            return None
        return MemoryIndex.from_rows(rows, self.table_layout, gen)

    def _write_snapshot(self, index: MemoryIndex) -> None:
        path = self._snapshot_path
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            with open(tmp, "wb") as f:
                np.savez(
                    f, rows=index.rows(), store_id=np.array([self._store_id]),
                    generation=np.array([index.generation]), schema=np.array([SCHEMA_VERSION]),
                )
            os.replace(tmp, path)
        except OSError as exc:
            log.warning("could not write the index cache %s (%s); the next open reads SQLite again", path, exc)
            with contextlib.suppress(OSError):
                tmp.unlink()

    def _drop_snapshot(self) -> None:
        if self.read_only:
            return
        with contextlib.suppress(OSError):
            self._snapshot_path.unlink()

    # ----------------------------------------------------------------- extras

    def index_stats(self) -> dict[str, int]:
        """Size of the in-memory index: documents in the tables and in the tail, and bytes."""
        with self._lock:
            index = self._current_index()
            return {
                "tables": self.table_layout.tables,
                "indexed": sum(len(t) for t in index.base.values()),
                "tail": index.tail_size,
                "bytes": index.nbytes,
            }

    # ----------------------------------------------------------------- groups

    def scan(self) -> _Scan:
        """Every fingerprint, from one SQLite read transaction (a consistent snapshot); holds the store's lock."""
        return _Scan(self)

    def texts(self, refs: Sequence[Any], field: str | None = None) -> list[str | None]:
        """The text of the documents with ids ``refs``; ``None`` for unknown ids or documents without text."""
        if field not in (None, "text"):
            raise ConfigError(f"the embedded store keeps one text field, 'text'; got {field!r}")
        found = {doc.id: doc.text for doc in self.get(refs)}
        return [found.get(ref) for ref in refs]

    def write_groups(self, writes: Sequence[tuple[Any, str | None, int | None, str | None]]) -> BulkReport:
        """Set or clear ``(group, size, kind)`` of documents by id, in one transaction; unknown ids count as missing."""
        report = BulkReport()
        self._writable()
        with self._lock, self._sql() as conn:
            conn.execute("BEGIN IMMEDIATE")
            seqs = self._seqs(conn, [ref for ref, *_ in writes])
            for ref, group, size, kind in writes:
                seq = seqs.get(ref)
                if seq is None:
                    report.missing += 1
                    continue
                if group is None:
                    conn.execute("DELETE FROM groups WHERE seq = ?", (seq,))
                else:
                    conn.execute("INSERT OR REPLACE INTO groups (seq, grp, size, kind) VALUES (?, ?, ?, ?)",
                                 (seq, group, size, kind))
                report.written += 1
            conn.execute("COMMIT")
        return report


    def group_rows(self, ids: Sequence[str] = (), groups: Sequence[str] = ()) -> list[GroupRow]:
        """The documents with these ids and the members of these groups, in row order (each once)."""
        found: dict[int, GroupRow] = {}
        with self._lock, self._sql() as conn:
            select = ("SELECT d.seq, d.id, d.fp, v.version, g.grp, g.size, g.kind FROM docs d "
                      "JOIN versions v ON v.vcode = d.vcode LEFT JOIN groups g ON g.seq = d.seq WHERE ")
            wanted = [("d.id", list(dict.fromkeys(ids))), ("g.grp", list(dict.fromkeys(groups)))]
            for column, values in wanted:
                for seq, doc_id, fp, version, group, size, kind in _select_in(conn, select + column + " IN ({marks})",
                                                                               values):
                    found[seq] = GroupRow((doc_id,), doc_id, _unsigned(fp), version, group, size, kind)
        return [found[seq] for seq in sorted(found)]

    def group_kinds(self) -> dict[str, int]:
        """Documents in groups by ``dup_kind`` (``None`` for a store's groups from before kinds)."""
        with self._lock, self._sql() as conn:
            return {str(k): n for k, n in conn.execute("SELECT kind, COUNT(*) FROM groups GROUP BY 1")}


class _Scan(Closing):
    """:meth:`LocalStore.scan`: the rows read once, ids looked up only for the members asked for."""

    def __init__(self, store: LocalStore) -> None:
        self.store = store
        store._lock.acquire()
        try:
            self.conn = store._connect()
            self.conn.execute("BEGIN")  # WAL: one snapshot for every read until close
        except BaseException:
            store._lock.release()
            raise
        self._rows: np.ndarray | None = None
        self._names: list[str] = []

    def fingerprints(self) -> tuple[np.ndarray, np.ndarray, list[str]]:
        with self.store._sql() as conn:
            cur = conn.execute("SELECT seq, fp, vcode FROM docs NOT INDEXED")
            rows = np.fromiter(itertools.chain.from_iterable(cur), dtype=np.int64).reshape(-1, 3)
            version_of = {code: version for version, code in conn.execute("SELECT version, vcode FROM versions")}
        vcodes, codes = np.unique(rows[:, 2], return_inverse=True)
        self._rows, self._names = rows, [version_of[c] for c in vcodes.tolist()]
        rows[:, 2] = codes.reshape(-1)
        return np.ascontiguousarray(rows[:, 1]).view(np.uint64), rows[:, 2].copy(), list(self._names)

    def members(self, wanted: Mapping[tuple[int, str], int], *, every: bool = False) -> Members:
        if self._rows is None:
            self.fingerprints()
        rows = self._rows
        assert rows is not None
        fps = np.ascontiguousarray(rows[:, 1]).view(np.uint64)
        keep = (np.ones(len(fps), bool) if every
                else np.isin(fps, np.array(sorted({fp for fp, _ in wanted}), dtype=np.uint64)))
        nodes = {int(seq): wanted.get((int(fp), self._names[code]), -1)
                 for seq, fp, code in zip(rows[keep, 0].tolist(), fps[keep].tolist(), rows[keep, 2].tolist())}
        out = Members()
        with self.store._sql() as conn:
            current = {seq: (grp, size, kind) for seq, grp, size, kind in conn.execute("SELECT seq, grp, size, kind FROM groups")}
            seqs = sorted({seq for seq, node in nodes.items() if node >= 0 or every} | set(current))
            for seq, doc_id in _select_in(conn, "SELECT seq, id FROM docs WHERE seq IN ({marks}) ORDER BY seq", seqs):
                pos = len(out.keys)
                out.keys.append((doc_id,))
                out.refs.append(doc_id)
                out.nodes.append(nodes.get(seq, -1))
                if seq in current:
                    out.current[pos] = current[seq]
        return out

    def close(self) -> None:
        try:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("COMMIT")
        finally:
            self.store._lock.release()
