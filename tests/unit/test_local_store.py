"""The embedded store's internals: tables vs brute force, persistence, errors."""

from __future__ import annotations

import contextlib
import sqlite3
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.errors import ConfigError, NotFound, StoreError
from simdup_es.search import rerank
from simdup_es.store import local, tables
from simdup_es.store.base import Store, StoredDoc
from simdup_es.join import join_blocks, join_pairs
from simdup_es.reference import near_pairs_reference as brute_force_pairs
from simdup_es.store.local import LocalStore, StoreCorrupted, StoreLocationError, StoreSchemaError
from simdup_es.reference import near_positions_reference as brute_force
from simdup_es.store.tables import TableIndex, TableLayout

MAX = (1 << 64) - 1
u64 = st.integers(min_value=0, max_value=MAX)
V = "v1"


def spread(i: int) -> int:
    """A random-looking fingerprint for ``i`` (splitmix64): distinct ``i`` are ~32 bits apart."""
    z = (i * 0x9E3779B97F4A7C15 + 0x9E3779B97F4A7C15) & MAX
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MAX
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MAX
    return z ^ (z >> 31)


def flip_all(fp: int, bits: list[int]) -> int:
    for b in bits:
        fp ^= 1 << b
    return fp


@st.composite
def clustered(draw: st.DrawFn, max_bases: int = 6, max_random: int = 40) -> list[int]:
    """Fingerprints in clusters (neighbours at distances 0..7 of a few bases) plus random ones."""
    fps = draw(st.lists(u64, max_size=max_random))
    for base in draw(st.lists(u64, min_size=1, max_size=max_bases)):
        fps.append(base)
        for _ in range(draw(st.integers(0, 6))):
            fps.append(flip_all(base, draw(st.lists(st.integers(0, 63), max_size=7, unique=True))))
    return draw(st.permutations(fps))


def temp_store(**kwargs) -> tuple[tempfile.TemporaryDirectory, LocalStore]:
    tmp = tempfile.TemporaryDirectory()
    store = LocalStore(Path(tmp.name) / "store", **kwargs)
    store.setup()
    return tmp, store


# --------------------------------------------------------------------------- layout


@pytest.mark.parametrize(
    ("k", "widths"),
    [
        (0, (64,)),
        (1, (32, 32)),
        (2, (22, 21, 21)),
        (3, (16, 16, 16, 16)),  # Manku et al.'s 4 x 16
        (4, (13, 13, 13, 13, 12)),
        (7, (8,) * 8),
        (15, (4,) * 16),
    ],
)
def test_table_layout_has_k_plus_one_even_blocks(k: int, widths: tuple[int, ...]) -> None:
    layout = TableLayout.for_k(k)
    assert layout.widths == widths
    assert layout.tables == k + 1
    assert sum(layout.widths) == 64
    assert layout.starts == tuple(sum(widths[:j]) for j in range(len(widths)))
    assert all(b == min(w, tables.MAX_KEY_BITS) for b, w in zip(layout.key_bits, layout.widths))


@pytest.mark.parametrize("k", [-1, 64])
def test_table_layout_refuses_impossible_k(k: int) -> None:
    with pytest.raises(ConfigError):
        TableLayout.for_k(k)


@given(u64, st.data(), st.integers(0, 10))
def test_pairs_within_k_share_a_bucket_in_some_table(fp: int, data: st.DataObject, k: int) -> None:
    # The pigeonhole guarantee the tables rest on.
    layout = TableLayout.for_k(k)
    other = flip_all(fp, data.draw(st.lists(st.integers(0, 63), max_size=k, unique=True)))
    a, b = np.array([fp], np.uint64), np.array([other], np.uint64)
    assert any(layout.key(a, j)[0] == layout.key(b, j)[0] for j in range(layout.tables))


# --------------------------------------------------------------------------- tables vs brute force


@settings(max_examples=150)
@given(clustered(), st.lists(u64, max_size=5), st.integers(0, 6), st.integers(0, 7), st.data())
def test_table_lookup_equals_brute_force(fps: list[int], extra: list[int], cut_for: int, k: int, data: st.DataObject) -> None:
    # Tables cut for one k answer any: from the tables up to it, from every row beyond.
    table = TableIndex(np.arange(len(fps)) + 100, np.array(fps, np.uint64), TableLayout.for_k(cut_for))
    queries = extra + [flip_all(f, data.draw(st.lists(st.integers(0, 63), max_size=k + 1, unique=True))) for f in fps[:8]]
    for q in queries:
        seqs, found = table.lookup(q, k)
        assert set(seqs.tolist()) == {i + 100 for i in brute_force(q, fps, k)}
        assert all(int(found[i]) == fps[s - 100] for i, s in enumerate(seqs.tolist()))


@settings(max_examples=150)
@given(clustered(), st.integers(0, 5), st.sampled_from([None, 1, 2, 3]))
def test_join_pairs_equal_brute_force(fps: list[int], k: int, extra_blocks: int | None) -> None:
    blocks = None if extra_blocks is None else k + extra_blocks
    i, j, d = join_pairs(np.array(fps, np.uint64), k, blocks=blocks)
    got = sorted(zip(i.tolist(), j.tolist(), d.tolist()))
    assert got == sorted((a, b, (fps[a] ^ fps[b]).bit_count()) for a, b in brute_force_pairs(fps, k))


def test_join_pairs_with_many_equal_fingerprints() -> None:
    # Long runs of equal keys: every pair of the 30 copies, exactly once.
    fps = np.array([7] * 30 + [7 ^ 0b1001] * 5 + [1 << 60], np.uint64)
    i, j, d = join_pairs(fps, 3)
    assert len(i) == (35 * 34) // 2
    assert len(set(zip(i.tolist(), j.tolist()))) == len(i)


@pytest.mark.parametrize(("n", "k", "blocks"), [(1000, 3, 4), (1_000_000, 3, 5), (10_000_000, 3, 5), (1_000_000, 0, 1)])
def test_join_blocks_choice(n: int, k: int, blocks: int) -> None:
    assert join_blocks(n, k) == blocks


def test_join_pairs_refuses_too_few_blocks() -> None:
    with pytest.raises(ConfigError):
        join_pairs(np.array([1, 2], np.uint64), 3, blocks=3)


def test_empty_table() -> None:
    table = TableIndex(np.empty(0, np.int64), np.empty(0, np.uint64), TableLayout.for_k(3))
    assert len(table) == 0
    assert table.lookup(12345, 3)[0].tolist() == []
    assert join_pairs(np.empty(0, np.uint64), 3)[0].tolist() == []


# --------------------------------------------------------------------------- store vs reference


@settings(max_examples=40)
@given(clustered(max_bases=8, max_random=60), st.lists(u64, max_size=6), st.sampled_from([0, 1, 3, 5, 7]), st.data())
def test_store_candidates_equal_reference(fps: list[int], extra: list[int], k: int, data: st.DataObject) -> None:
    tmp, store = temp_store()
    with tmp, store:
        docs = [StoredDoc(f"d{i}", f, V) for i, f in enumerate(fps)]
        # Part of it in bulk, part through put; a few replaced with other fingerprints.
        half = len(docs) // 2
        store.put_fingerprints([d.id for d in docs[:half]], [d.fingerprint for d in docs[:half]], V)
        store.candidates(0, V, k=3)  # build the tables, so the rest goes to the tail
        store.put(docs[half:])
        replaced = data.draw(st.lists(st.sampled_from(docs), max_size=4)) if docs else []
        store.put([StoredDoc(d.id, d.fingerprint ^ 0xFF00FF, V) for d in replaced])
        queries = extra + fps[:10] + [f ^ 0b1011 for f in fps[:5]]
        for q in queries:
            ids, found = store.candidates(q, V, k=k)
            ref_ids, ref_fps = store.candidates_reference(q, V, k=k)
            assert sorted(zip(ids, found.tolist())) == sorted(zip(ref_ids, ref_fps.tolist()))
            assert rerank(q, ids, found, k) == rerank(q, ref_ids, ref_fps, k)


def test_local_store_satisfies_the_protocol(tmp_path: Path) -> None:
    assert isinstance(LocalStore(tmp_path / "s"), Store)


def test_tail_merges_stay_correct(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "TAIL_MAX", 16)
    rng = np.random.default_rng(5)
    fps = [int(x) for x in rng.integers(0, MAX, 300, dtype=np.uint64, endpoint=True)]
    with LocalStore(tmp_path / "s") as store:
        store.setup()
        for i, f in enumerate(fps):  # interleave writes and lookups: many merges
            store.put([StoredDoc(f"d{i}", f, V), StoredDoc(f"n{i}", f ^ 0b111, V)])
            assert sorted(store.candidates(f, V, k=3)[0]) == sorted([f"d{i}", f"n{i}"])
        stats = store.index_stats()
        assert stats["indexed"] + stats["tail"] >= 600
        assert stats["tail"] <= 16 + 2
        for i, f in enumerate(fps):
            assert sorted(store.candidates(f, V, k=3)[0]) == sorted([f"d{i}", f"n{i}"])


def test_replaced_documents_leave_no_stale_candidates(tmp_path: Path) -> None:
    with LocalStore(tmp_path / "s") as store:
        store.setup()
        store.put([StoredDoc(f"d{i}", spread(i), V, "old") for i in range(50)])
        assert store.candidates(spread(5), V, k=3)[0] == ["d5"]
        store.put([StoredDoc("d5", spread(1000), V, "new")])  # now in the tail; the table entry is stale
        assert store.candidates(spread(5), V, k=3)[0] == []
        assert store.candidates(spread(1000), V, k=3)[0] == ["d5"]
        store.refresh()
        store._index.merge()
        assert store.candidates(spread(5), V, k=3)[0] == []
        assert store.candidates(spread(1000), V, k=3)[0] == ["d5"]
        assert store.count() == 50
        assert store.get(["d5"])[0].text == "new"


def test_bulk_load_and_put_agree(tmp_path: Path) -> None:
    with LocalStore(tmp_path / "s") as store:
        store.setup()
        report = store.put_fingerprints(["a", "b", "", "a"], np.array([1, 2, 3, 4], np.uint64), V)
        assert report.written == 3 and report.failed == [("", "id must be a non-empty string")]
        assert store.count() == 2
        assert store.get(["a", "b"]) == [StoredDoc("a", 4, V), StoredDoc("b", 2, V)]
        with pytest.raises(ConfigError):
            store.put_fingerprints(["x"], [1 << 64], V)
        with pytest.raises(ConfigError):
            store.put_fingerprints(["x", "y"], [1], V)


def test_put_reports_each_bad_document(tmp_path: Path) -> None:
    with LocalStore(tmp_path / "s") as store:
        store.setup()
        report = store.put([
            StoredDoc("ok", 1, V),
            StoredDoc("", 1, V),
            StoredDoc("big", 1 << 64, V),
            StoredDoc("noversion", 1, ""),
            StoredDoc("float", 1.5, V),  # type: ignore[arg-type]
            StoredDoc("badtext", 1, V, text=b"bytes"),  # type: ignore[arg-type]
        ])
        assert report.written == 1
        assert [i for i, _ in report.failed] == ["", "big", "noversion", "float", "badtext"]
        assert "outside 0..2**64-1" in dict(report.failed)["big"]


# --------------------------------------------------------------------------- scan (groups)


def test_scan_pairs_equal_brute_force(tmp_path: Path) -> None:
    """The fingerprints a scan reads, joined, are exactly the brute-force pairs (as self_join was)."""
    from simdup_es.groups import near_pairs

    rng = np.random.default_rng(11)
    fps = [int(x) for x in rng.integers(0, MAX, 400, dtype=np.uint64, endpoint=True)]
    for base in fps[:60]:
        fps += [flip_all(base, rng.choice(64, size=d, replace=False).tolist()) for d in range(6)]
    ids = [f"d{i}" for i in range(len(fps))]
    with LocalStore(tmp_path / "s") as store:
        store.setup()
        store.put_fingerprints(ids, fps, V)
        store.put([StoredDoc("other-version", fps[0], "v2")])  # never paired with v1 documents
        with store.scan() as scan:
            got_fps, codes, names = scan.fingerprints()
        assert sorted(names) == sorted([V, "v2"]) and len(got_fps) == len(fps) + 1
        for k in (0, 2, 3, 5):  # 5 > the tables' k: the join does not depend on the query tables
            i, j, d = near_pairs(got_fps, codes, k)
            got = sorted(tuple(sorted((int(got_fps[a]), int(got_fps[b])))) + (int(x),)
                         for a, b, x in zip(i.tolist(), j.tolist(), d.tolist()))
            want = sorted(tuple(sorted((fps[a], fps[b]))) + ((fps[a] ^ fps[b]).bit_count(),)
                          for a, b in brute_force_pairs(fps, k))
            assert got == want


# --------------------------------------------------------------------------- persistence


def test_persists_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "s"
    rng = np.random.default_rng(3)
    fps = [int(x) for x in rng.integers(0, MAX, 200, dtype=np.uint64, endpoint=True)]
    with LocalStore(path) as store:
        store.setup()
        store.put([StoredDoc(f"d{i}", f, V, f"text {i}", "t") for i, f in enumerate(fps)])
        before = [store.candidates(f ^ 1, V, k=3) for f in fps]
    with LocalStore(path) as store:
        assert store.count() == 200
        assert store.get(["d7"]) == [StoredDoc("d7", fps[7], V, "text 7", "t")]
        after = [store.candidates(f ^ 1, V, k=3) for f in fps]
    assert [(i, f.tolist()) for i, f in before] == [(i, f.tolist()) for i, f in after]
    assert not (path / local.SNAPSHOT_NAME).exists()  # small stores do not need the cache


def test_index_cache_is_used_and_caught_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "SNAPSHOT_MIN_ROWS", 50)
    path = tmp_path / "s"
    with LocalStore(path) as store:
        store.setup()
        store.put_fingerprints([f"d{i}" for i in range(100)], [spread(i) for i in range(100)], V)
        assert store.candidates(spread(7), V, k=3)[0] == ["d7"]
    assert (path / local.SNAPSHOT_NAME).exists()
    with LocalStore(path) as store:  # writes after the snapshot: read back by generation
        store.put([StoredDoc("d7", spread(99), V), StoredDoc("new", spread(7), V)])
    loaded: list[int] = []
    real = tables.MemoryIndex.from_rows.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(
        tables.MemoryIndex, "from_rows", classmethod(lambda cls, rows, *a: loaded.append(len(rows)) or real(cls, rows, *a))
    )
    with LocalStore(path) as store:
        assert store.candidates(spread(7), V, k=3)[0] == ["new"]
        assert store.candidates(spread(99), V, k=3)[0] == ["d7", "d99"]
        stats = store.index_stats()
        assert (stats["indexed"], stats["tail"]) == (100, 2)  # the cache, plus the 2 rows written since
    assert loaded == [100]


def test_index_cache_of_another_store_or_damaged_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(local, "SNAPSHOT_MIN_ROWS", 10)
    for name in ("a", "b"):
        with LocalStore(tmp_path / name) as store:
            store.setup()
            store.put_fingerprints([f"{name}{i}" for i in range(20)], [spread(i) for i in range(20)], V)
            store.refresh()
            store.candidates(0, V, k=3)
    # b's cache in a's folder: another store_id, so a reads its own rows.
    (tmp_path / "a" / local.SNAPSHOT_NAME).write_bytes((tmp_path / "b" / local.SNAPSHOT_NAME).read_bytes())
    with LocalStore(tmp_path / "a") as store:
        assert store.candidates(spread(3), V, k=3)[0] == ["a3"]
    # Damaged or cut short: the warning says so, not numpy's advice to load it with allow_pickle.
    whole = (tmp_path / "b" / local.SNAPSHOT_NAME).read_bytes()
    for damaged in (b"not a zip file", whole[: len(whole) // 2]):
        (tmp_path / "a" / local.SNAPSHOT_NAME).write_bytes(damaged)
        caplog.clear()
        with caplog.at_level("WARNING", logger="simdup_es.store.local"), LocalStore(tmp_path / "a") as store:
            assert store.candidates(spread(3), V, k=3)[0] == ["a3"]
        assert "not an index cache simdup wrote" in caplog.text and "pickle" not in caplog.text, caplog.text


def test_writes_of_another_process_show_after_refresh(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with LocalStore(path) as reader, LocalStore(path) as writer:
        writer.setup()
        writer.put([StoredDoc("first", 1, V)])
        assert reader.candidates(1, V, k=3)[0] == ["first"]  # first lookup loads everything
        writer.put([StoredDoc("second", 1, V), StoredDoc("first", 1 << 40 | 0xFF, V)])
        assert reader.count() == 2  # count reads SQLite directly
        # Not refreshed: the reader's index is behind, but never returns stale values.
        assert reader.candidates(1, V, k=3)[0] == []
        reader.refresh()
        assert reader.candidates(1, V, k=3)[0] == ["second"]
        assert reader.candidates(1 << 40 | 0xFF, V, k=3)[0] == ["first"]


def test_threads_may_share_a_store(tmp_path: Path) -> None:
    errors: list[BaseException] = []
    with LocalStore(tmp_path / "s") as store:
        store.setup()

        def work(t: int) -> None:
            try:
                for i in range(40):
                    fp = (t << 32) | i
                    store.put([StoredDoc(f"t{t}-{i}", fp, V)])
                    assert f"t{t}-{i}" in store.candidates(fp, V, k=3)[0]
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert errors == []
        assert store.count() == 160


# --------------------------------------------------------------------------- errors


def test_path_that_is_a_file(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(StoreLocationError, match="is a file.*give a folder path"):
        LocalStore(f)


def test_missing_store_says_to_run_setup(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "nowhere")
    with pytest.raises(NotFound, match="simdup setup --store"):
        store.count()
    with pytest.raises(NotFound):
        store.put([StoredDoc("a", 1, V)])
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("version", [1, 2, 99])
def test_a_store_of_another_schema_says_to_index_again(tmp_path: Path, version: int) -> None:
    with LocalStore(tmp_path / "s") as store:
        store.setup()
    with contextlib.closing(sqlite3.connect(tmp_path / "s" / local.DB_NAME)) as conn, conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
    with pytest.raises(StoreSchemaError, match=f"another build of simdup-es \\(store schema {version}.*into a new folder"):
        LocalStore(tmp_path / "s").count()


def test_foreign_sqlite_database(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    with contextlib.closing(sqlite3.connect(tmp_path / "s" / local.DB_NAME)) as conn, conn:
        conn.execute("CREATE TABLE something (x)")
    with pytest.raises(StoreSchemaError, match="not a simdup store"):
        LocalStore(tmp_path / "s").setup()


def test_garbage_file_is_reported_as_corrupted(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / local.DB_NAME).write_bytes(b"this is not sqlite" * 500)
    with pytest.raises(StoreCorrupted, match="is damaged.*re-index into a fresh store"):
        LocalStore(tmp_path / "s").count()


def test_damaged_pages_are_reported_as_corrupted(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with LocalStore(path) as store:
        store.setup()
        store.put([StoredDoc(f"d{i}", i, V, "x" * 200) for i in range(2000)])
    with contextlib.closing(sqlite3.connect(path / local.DB_NAME)) as conn, conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db = path / local.DB_NAME
    data = bytearray(db.read_bytes())
    page = 4096
    for p in range(2, len(data) // page):  # keep page 1 (header and schema), wreck the rest
        data[p * page : p * page + 64] = b"\xff" * 64
    db.write_bytes(bytes(data))
    with pytest.raises(StoreCorrupted, match="is damaged"):
        with LocalStore(path) as store:
            store.get([f"d{i}" for i in range(2000)])
            store.candidates(5, V, k=3)


def test_closed_store_refuses_work(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "s")
    store.setup()
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.count()


def test_database_older_than_its_cache_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "SNAPSHOT_MIN_ROWS", 10)
    path = tmp_path / "s"
    db = path / local.DB_NAME
    with LocalStore(path) as store:
        store.setup()
        store.put_fingerprints([f"d{i}" for i in range(20)], [spread(i) for i in range(20)], V)
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    backup = db.read_bytes()
    with LocalStore(path) as store:
        store.put_fingerprints([f"d{i}" for i in range(20)], [spread(100 + i) for i in range(20)], V)
        assert store.candidates(spread(103), V, k=3)[0] == ["d3"]  # the cache is written at this generation
    assert (path / local.SNAPSHOT_NAME).exists()
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(backup)  # "restored from a backup": generation 1 < the cache's 2
    with LocalStore(path) as store:
        assert store.candidates(spread(103), V, k=3)[0] == []
        assert store.candidates(spread(3), V, k=3)[0] == ["d3"]


def test_a_failed_write_leaves_no_open_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with LocalStore(tmp_path / "s") as store:
        store.setup()

        def boom(*args, **kwargs):
            raise KeyboardInterrupt

        monkeypatch.setattr(LocalStore, "_seqs", staticmethod(boom))
        with pytest.raises(KeyboardInterrupt):
            store.put([StoredDoc("a", 1, V)])
        monkeypatch.undo()
        assert store.put([StoredDoc("a", 1, V)]).written == 1
        assert store.count() == 1


# --------------------------------------------------------------------------- levels


def _levels(version: str, parts: list[int | None], keys: list[int], units: int = 50):  # type: ignore[no-untyped-def]
    from simdup_es.levels import Key, Levels

    return Levels(version, units, (), (), tuple(parts), tuple(Key(k, i) for i, k in enumerate(keys)))


def _near(fp: int, bits: list[int]) -> int:
    for b in bits:
        fp ^= 1 << b
    return fp


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_docs=st.integers(1, 30),
    limit=st.sampled_from([1, 3, 100]),
    tail_max=st.sampled_from([0, 8192]),
)
def test_part_candidates_equal_the_reference_index(seed: int, n_docs: int, limit: int, tail_max: int) -> None:
    """The numpy level index (quad tables + sorted keys, base + tail) against MemoryPartIndex.

    Documents come in several writes with lookups between them, so the tail, the dead
    entries of replaced documents and (``tail_max=0``) the re-reads are all exercised.
    """
    from simdup_es.multilevel import MemoryPartIndex

    rng = np.random.default_rng(seed)
    base = [int(x) for x in rng.integers(0, 2**64, 6, dtype=np.uint64)]
    key_pool = [int(x) for x in rng.integers(0, 2**64, 12, dtype=np.uint64)]

    def part() -> int | None:  # neighbours of a few bases: some within 6 of 8 blocks, some not
        if rng.random() < 0.1:
            return None
        return _near(base[int(rng.integers(0, 6))], rng.choice(64, int(rng.integers(0, 12)), replace=False).tolist())

    ref = MemoryPartIndex()
    saved, local.TAIL_MAX = local.TAIL_MAX, tail_max
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = LocalStore(Path(tmp) / "s")
            store.setup()
            i = 0
            while i < n_docs:
                docs = []
                for i in range(i, min(n_docs, i + int(rng.integers(1, 10)))):  # noqa: B020 - i is where the next batch starts
                    lv = _levels("v1", [part() for _ in range(int(rng.integers(0, 5)))],
                                 [key_pool[j] for j in rng.choice(12, int(rng.integers(0, 5)), replace=False).tolist()],
                                 int(rng.integers(1, 500)))
                    docs.append(StoredDoc(f"d{i % 25}", i, "v1", levels=lv))  # some ids twice: the last one wins
                    ref.put_levels(f"d{i % 25}", lv)
                i += 1
                assert store.put(docs).written == len(docs)
                for _ in range(3):
                    q_parts = [part() for _ in range(int(rng.integers(0, 6)))]
                    q_keys = [key_pool[int(j)] for j in rng.integers(0, 12, int(rng.integers(0, 6)))]
                    exclude = f"d{int(rng.integers(0, 25))}" if rng.random() < 0.5 else None
                    want = ref.part_candidates(q_parts, q_keys, "v1", exclude_id=exclude, limit=limit)
                    assert store.part_candidates(q_parts, q_keys, "v1", exclude_id=exclude, limit=limit) == want
                    assert store.part_candidates(q_parts, q_keys, "v2") == []
            store.close()
    finally:
        local.TAIL_MAX = saved


def test_level_index_follows_writes_and_other_processes(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "s")
    store.setup()
    assert store.part_candidates([1], [2], "v1") == []
    store.put([StoredDoc("a", 1, "v1", levels=_levels("v1", [5], [7]))])
    assert [c.id for c in store.part_candidates([5], [], "v1")] == ["a"]  # own write: visible at once
    other = LocalStore(tmp_path / "s")
    other.put([StoredDoc("b", 2, "v1", levels=_levels("v1", [5], [7]))])
    assert [c.id for c in store.part_candidates([5], [], "v1")] == ["a"]
    store.refresh()
    found = store.part_candidates([5], [7], "v1")
    assert [(c.id, c.parts, c.keys) for c in found] == [("a", {0}, {0}), ("b", {0}, {0})]
    other.put_fingerprints(["a"], [1], "v1")  # replaced without levels: no longer a part candidate
    store.refresh()
    assert [c.id for c in store.part_candidates([5], [7], "v1")] == ["b"]
    other.close()
    store.close()


_LEVEL_VALUE = st.one_of(st.none(), st.integers(min_value=-3, max_value=2**64 + 3), st.integers(0, 2**64 - 1),
                         st.integers(min_value=-(2**65), max_value=2**65), st.booleans(), st.floats(0, 10),
                         st.floats(allow_nan=False), st.text(max_size=2), st.just("7"),
                         st.integers(0, 2**64 - 1).map(np.uint64), st.integers(-5, 5).map(np.int64))


@settings(max_examples=300, deadline=None)
@given(st.lists(_LEVEL_VALUE, max_size=12) | st.lists(st.integers(0, 2**64 - 1) | st.none(), max_size=12))
def test_not_u64_is_the_reference(values: list[object]) -> None:
    """The quick check of a document's level values finds what the value-by-value one finds."""
    from simdup_es.levels import not_u64, not_u64_reference

    assert not_u64(values) == not_u64_reference(values)
    assert not_u64(tuple(values)) == not_u64_reference(values)



def test_a_read_only_open_reads_and_refuses_to_write(tmp_path: Path) -> None:
    with LocalStore(tmp_path / "store") as store:
        store.setup()
        store.put([StoredDoc("a", spread(1), V, "甲"), StoredDoc("b", spread(2), V)])
    with LocalStore(tmp_path / "store", read_only=True) as store:
        assert store.count() == 2 and store.candidates(spread(1), V, k=3)[0] == ["a"]
        assert [d.text for d in store.get(["a"])] == ["甲"]
        for write in (store.setup, lambda: store.put([StoredDoc("c", spread(3), V)]),
                      lambda: store.write_groups([("a", "g", 2, None)])):
            with pytest.raises(StoreError, match="opened read-only"):
                write()
    assert LocalStore(tmp_path / "store").count() == 2
    with pytest.raises(NotFound):  # nothing made where there is no store
        LocalStore(tmp_path / "none", read_only=True).count()
    assert not (tmp_path / "none").exists()


def test_deletes_of_another_process_show_after_refresh_and_leave_no_rows(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with LocalStore(path) as reader, LocalStore(path) as writer:
        writer.setup()
        writer.put([StoredDoc("a", 1, V, "x", levels=_levels(V, [5], [7])),
                    StoredDoc("b", 3, V, "y", levels=_levels(V, [5], [7]))])
        writer.write_groups([("a", "g", 2, "near-duplicate"), ("b", "g", 2, "near-duplicate")])
        assert reader.candidates(1, V, k=3)[0] == ["a", "b"]  # the reader's indexes are built before the delete
        assert [c.id for c in reader.part_candidates([5], [7], V)] == ["a", "b"]
        assert writer.delete(["a"]).written == 1
        reader.refresh()
        assert reader.candidates(1, V, k=3)[0] == ["b"]
        assert [c.id for c in reader.part_candidates([5], [7], V)] == ["b"]
        with sqlite3.connect(path / local.DB_NAME) as conn:
            for table in ("docs", "bodies", "levels", "parts", "sentence_keys", "groups"):
                assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 1, table
        writer.put([StoredDoc("c", 1, V)])  # a new document never gets the deleted one's seq
        with sqlite3.connect(path / local.DB_NAME) as conn:
            assert conn.execute("SELECT seq FROM docs WHERE id = 'c'").fetchone()[0] == 3
        reader.refresh()
        assert reader.candidates(1, V, k=3)[0] == ["b", "c"]


def test_deletes_survive_tail_merges_and_the_index_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "TAIL_MAX", 4)
    monkeypatch.setattr(local, "SNAPSHOT_MIN_ROWS", 10)
    path = tmp_path / "s"
    with LocalStore(path) as store:
        store.setup()
        store.put_fingerprints([f"d{i}" for i in range(20)], [spread(i) for i in range(20)], V)
        assert store.candidates(spread(3), V, k=3)[0] == ["d3"]  # loaded: the cache is written
        report = store.delete([f"d{i}" for i in range(0, 20, 2)])
        assert report.written == 10
        for i in range(20):  # each lookup may merge the tail, tombstones included
            assert store.candidates(spread(i), V, k=3)[0] == ([] if i % 2 == 0 else [f"d{i}"])
        assert store.index_stats()["indexed"] + store.index_stats()["tail"] == 10
    with LocalStore(path) as store:  # the cache from before the delete, caught up by its tombstones
        for i in range(20):
            assert store.candidates(spread(i), V, k=3)[0] == ([] if i % 2 == 0 else [f"d{i}"])
        assert store.index_stats()["indexed"] + store.index_stats()["tail"] <= 30


def test_delete_refuses_a_read_only_store(tmp_path: Path) -> None:
    with LocalStore(tmp_path / "s") as store:
        store.setup()
        store.put([StoredDoc("a", 1, V)])
    with LocalStore(tmp_path / "s", read_only=True) as store, pytest.raises(StoreError, match="read-only"):
        store.delete(["a"])


def test_open_store_takes_what_is_given_over_the_environment_and_refuses_unknown_options(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from simdup_es.store import open_store

    monkeypatch.setenv("SIMDUP_ES_URL", "http://127.0.0.1:9")  # a cluster configured for the command line
    with open_store(path=tmp_path / "s", create=True) as store:
        assert isinstance(store, LocalStore)
    with pytest.raises(ConfigError, match="unknown options readonly"):  # it opened writable, and wrote
        open_store(path=tmp_path / "s", readonly=True)
    with pytest.raises(ConfigError, match="not both"):
        open_store("http://127.0.0.1:9", path=tmp_path / "s")
    monkeypatch.setenv("SIMDUP_STORE", str(tmp_path / "s"))
    with pytest.raises(ConfigError, match="SIMDUP_ES_URL and SIMDUP_STORE are both set"):
        open_store()


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(st.integers(0, 2**64 - 1), max_size=300), others=st.lists(st.integers(0, 2**64 - 1), max_size=30),
       copies=st.integers(0, 60), seed=st.integers(0, 2**32 - 1))
def test_sorted_keys_find_what_a_binary_search_finds(keys: list[int], others: list[int], copies: int, seed: int) -> None:
    """The bucket table's ranges against ``np.searchsorted``, with keys many documents hold (buckets past the window)."""
    rng = np.random.default_rng(seed)
    held = np.sort(np.array(keys + keys[: len(keys) // 3] * copies, dtype=np.uint64))
    wanted = np.array(others + (rng.choice(held, 20).tolist() if len(held) else []), dtype=np.uint64)
    lo, hi = tables.SortedKeys(held).ranges(wanted)
    assert lo.tolist() == np.searchsorted(held, wanted, "left").tolist()
    assert hi.tolist() == np.searchsorted(held, wanted, "right").tolist()
