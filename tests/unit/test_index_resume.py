"""A run the store stops part way: every item written, rejected, or after the resume point."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from simdup_es.cli._common import Checkpoint, RejectLog
from simdup_es.errors import ConfigError, StoreError
from simdup_es.indexer import IndexStopped, index_items
from simdup_es.sources import Fields, Item, Record, Reject
from simdup_es.common import BulkReport
from simdup_es.store.base import StoredDoc
from simdup_es.store.local import LocalStore
from tests._stuck import PYTHON_FLAGS, ended


class Failing:
    """A real embedded store whose ``put`` fails for good from the ``fail_at``-th call on."""

    def __init__(self, store: LocalStore, fail_at: int) -> None:
        self.store, self.fail_at, self.calls = store, fail_at, 0

    def put(self, docs: Sequence[StoredDoc]) -> BulkReport:
        self.calls += 1
        if self.calls >= self.fail_at:
            raise StoreError("the store refuses for good", report=BulkReport())
        return self.store.put(docs)

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self.store, name)


def items(n: int) -> list[Item]:
    """Records, with a reject on reading every 7th item and an empty (rejected on fingerprinting) every 11th."""
    out: list[Item] = []
    for i in range(n):
        if i % 7 == 3:
            out.append(Reject(f"in:{i + 1}", "malformed JSON"))
        elif i % 11 == 5:
            out.append(Record("，。", f"in:{i + 1}", f"e{i}"))
        else:
            out.append(Record(f"第{i}号通知：明天{i}点在{i % 9}楼开会。", f"in:{i + 1}", f"d{i}"))
    return out


@pytest.mark.parametrize("fail_at", [1, 3])
def test_a_stopped_run_and_its_resumption_account_for_every_item_once(fail_at: int, tmp_path: Path,
                                                                     fingerprinter) -> None:  # type: ignore[no-untyped-def]
    data = items(300)
    rejected: list[Reject] = []
    points: list[int] = []
    with LocalStore(tmp_path / "store") as store:
        store.setup()
        with pytest.raises(IndexStopped) as info:
            index_items(iter(data), Failing(store, fail_at), fingerprinter, on_reject=rejected.append, workers=1,
                        batch_size=40, on_settled=points.append)
        settled = info.value.summary.settled
        assert settled == (points[-1] if points else 0) and info.value.next_source == f"in:{settled + 1}"
        # Settled items are written or rejected; no reject past the resume point was handed out yet.
        assert all(int(r.source.split(":")[1]) <= settled for r in rejected)
        store.refresh()
        written = store.count()
        assert written + len(rejected) == settled
        before = len(rejected)
        summary = index_items(iter(data), store, fingerprinter, on_reject=rejected.append, workers=1, batch_size=40,
                              skip=settled)
        store.refresh()
        good = {i for i in range(300) if i % 7 != 3 and i % 11 != 5}
        assert store.count() == len(good) == written + summary.indexed
        # Each reject exactly once over both runs.
        assert sorted(r.source for r in rejected) == sorted(f"in:{i + 1}" for i in range(300) if i not in good)
        assert summary.read == 300 - settled and summary.rejected == len(rejected) - before


def test_checkpoint_round_trip_and_refusals(tmp_path: Path) -> None:
    rejects = tmp_path / "rejects.jsonl"
    point = Checkpoint(rejects, ("a.jsonl",), Fields())
    assert point.path == tmp_path / "rejects.resume.json" and point.load() is None
    point.save(120, 64)
    assert point.load()["settled"] == 120  # type: ignore[index]
    with pytest.raises(ConfigError, match="other inputs or fields"):
        Checkpoint(rejects, ("b.jsonl",), Fields()).load()
    with pytest.raises(ConfigError, match="other inputs or fields"):
        Checkpoint(rejects, ("a.jsonl",), Fields(text="body")).load()
    point.path.write_text("{")
    with pytest.raises(ConfigError, match="delete it to start over"):
        point.load()
    point.path.write_text(json.dumps({"version": 99}))
    with pytest.raises(ConfigError, match="not a resume point"):
        point.load()
    point.remove()
    assert not point.path.exists()


def test_reject_log_keeps_what_the_resume_point_covers(tmp_path: Path) -> None:
    path = tmp_path / "rejects.jsonl"
    path.write_text('{"run": "earlier", "command": "simdup index"}\n{"source": "old:1", "id": null, "reason": "r"}\n')
    log = RejectLog(path)
    start, started = log.start, log.started
    log.add("in:1", "bad")
    kept = log.size()
    log.add("in:9", "written after the resume point")
    log.close()
    log = RejectLog(path, keep=kept, start=start)
    log.add("in:9", "again")
    log.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line.get("source", "header") for line in lines] == ["header", "old:1", "header", "in:1", "in:9"]
    assert lines[2]["run"] == started  # one header for the stopped run and the run that resumed it
    with pytest.raises(ConfigError, match="shorter than the resume point"):
        RejectLog(path, keep=10_000)


def test_a_long_run_of_bad_items_is_settled_as_it_goes(tmp_path: Path, fingerprinter) -> None:  # type: ignore[no-untyped-def]
    """Rejects with nothing open before them are not held back (memory stays flat on a file of bad lines)."""
    data: list[Item] = [Reject(f"in:{i + 1}", "malformed JSON") for i in range(1000)]
    data += [Record(f"第{i}号通知：明天{i}点开会。", f"in:{i + 1}", f"d{i}") for i in range(1000, 1100)]
    rejected: list[Reject] = []
    points: list[int] = []
    with LocalStore(tmp_path / "store") as store:
        store.setup()
        with pytest.raises(IndexStopped) as info:
            index_items(iter(data), Failing(store, 1), fingerprinter, on_reject=rejected.append, workers=1,
                        batch_size=40, on_settled=points.append)
    assert len(rejected) == 1000 and info.value.summary.settled == 1000
    assert points == list(range(40, 1001, 40))  # saved every batch_size bad items


def test_an_empty_reject_log_removes_only_a_regular_file_it_wrote(tmp_path: Path) -> None:
    # ``--rejects /dev/null`` as root once removed /dev/null: a FIFO and a symlink stand in
    # for the device here (same rule: only a regular file, named directly, is removed).
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so opening it for writing does not block
    try:
        RejectLog(fifo).close()
    finally:
        os.close(reader)
    target = tmp_path / "target.jsonl"
    target.write_text("")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    RejectLog(link).close()
    plain = tmp_path / "plain.jsonl"
    RejectLog(plain).close()
    there = tmp_path / "there.jsonl"  # a file that was there stays, empty or not
    there.write_text("")
    RejectLog(there, keep=0).close()
    assert fifo.exists() and link.is_symlink() and target.exists() and not plain.exists() and there.exists()


def test_the_resume_point_of_a_non_file_rejects_path_stays_out_of_its_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    monkeypatch.chdir(tmp_path)
    checkpoint = Checkpoint(fifo, ("in.jsonl",), Fields())
    assert checkpoint.path == tmp_path / "simdup-index.resume.json"
    assert Checkpoint(tmp_path / "r.jsonl", ("in.jsonl",), Fields()).path == tmp_path / "r.resume.json"
    unwritable = Checkpoint(tmp_path / "no-such-dir" / "r.jsonl", ("in.jsonl",), Fields())
    with pytest.raises(ConfigError, match="cannot write the resume point"):
        unwritable.save(1, 0)


def test_a_batch_is_written_while_the_next_is_fingerprinted(tmp_path: Path, fingerprinter) -> None:  # type: ignore[no-untyped-def]
    # The first put waits until the fingerprinter has read an input item that only the
    # second batch needs: written one after the other, it would wait in vain.
    from simdup_es.parts import _DOCS_PER_CHUNK as chunk

    read = threading.Event()
    data = [Record(f"第{i}号通知：明天{i}点在{i % 9}楼开会。", f"in:{i + 1}", f"d{i}") for i in range(4 * chunk)]

    def reading() -> Iterator[Item]:
        for i, item in enumerate(data):
            if i == 2 * chunk:  # in the third fingerprinting chunk: needed by the second batch only
                read.set()
            yield item

    seen: list[bool] = []
    with LocalStore(tmp_path / "store") as store:
        store.setup()

        class Waiting:
            def put(self, docs: Sequence[StoredDoc]) -> BulkReport:
                if not seen:
                    seen.append(read.wait(timeout=60))
                return store.put(docs)

        summary = index_items(reading(), Waiting(), fingerprinter, on_reject=lambda r: None, workers=1,  # type: ignore[arg-type]
                              batch_size=chunk + 1)
        assert seen == [True]
        assert summary.indexed == len(data) == store.count()


def writer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("simdup-index")]


def test_an_error_of_the_writing_thread_reaches_the_caller(tmp_path: Path, fingerprinter) -> None:  # type: ignore[no-untyped-def]
    # Not a StoreError (a bug, say): raised as it is, and nothing past the last counted batch is settled.
    points: list[int] = []
    with LocalStore(tmp_path / "store") as store:
        store.setup()

        class Broken:
            calls = 0

            def put(self, docs: Sequence[StoredDoc]) -> BulkReport:
                Broken.calls += 1
                if Broken.calls == 2:
                    raise RuntimeError("broken store")
                return store.put(docs)

        with pytest.raises(RuntimeError, match="broken store"):
            index_items(iter(items(300)), Broken(), fingerprinter, on_reject=lambda r: None, workers=1,  # type: ignore[arg-type]
                        batch_size=40, on_settled=points.append)
        assert writer_threads() == []
        store.refresh()
        written, settled = store.count(), points[-1]
        good_settled = sum(1 for i in range(settled) if i % 7 != 3 and i % 11 != 5)
        assert written == good_settled > 0  # the first batch, settled; the second, not written and not settled


def test_an_interrupt_while_a_batch_is_written_waits_for_it_and_does_not_settle_it(
        tmp_path: Path, fingerprinter) -> None:  # type: ignore[no-untyped-def]
    in_flight = threading.Event()
    calls = {"started": 0, "finished": 0}
    points: list[int] = []
    data = items(300)

    def interrupted() -> Iterator[Item]:
        for i, item in enumerate(data):
            if i == 200:
                assert in_flight.wait(timeout=60)  # a put is under way
                raise KeyboardInterrupt
            yield item

    with LocalStore(tmp_path / "store") as store:
        store.setup()

        class Slow:
            def put(self, docs: Sequence[StoredDoc]) -> BulkReport:
                calls["started"] += 1
                in_flight.set()
                threading.Event().wait(0.3)  # still writing when the interrupt comes
                report = store.put(docs)
                calls["finished"] += 1
                in_flight.clear()
                return report

        with pytest.raises(KeyboardInterrupt):
            index_items(interrupted(), Slow(), fingerprinter, on_reject=lambda r: None, workers=1,  # type: ignore[arg-type]
                        batch_size=40, on_settled=points.append)
        # The batch under way was finished, not abandoned half written.
        assert calls["started"] == calls["finished"] >= 1 and writer_threads() == []
        store.refresh()
        settled = points[-1] if points else 0
        # Written but not counted: the resume point stays before that batch (writing it again is harmless).
        assert sum(1 for i in range(settled) if i % 7 != 3 and i % 11 != 5) < store.count()


def test_an_unknown_levels_choice_is_refused_before_any_work(tmp_path: Path) -> None:
    from simdup_es import default_fingerprinter

    store = LocalStore(tmp_path / "store")
    store.setup()
    with pytest.raises(ConfigError, match="levels must be one of all, keys, document, got 'parts'"):
        index_items(iter(items(3)), store, default_fingerprinter(), on_reject=print, levels="parts")  # type: ignore[arg-type]
    assert store.count() == 0


@pytest.mark.parametrize("levels", ["all", "keys"])
def test_indexing_never_reads_the_sentences_the_workers_did_not_send(
    tmp_path: Path, fingerprinter, monkeypatch: pytest.MonkeyPatch, levels: str  # type: ignore[no-untyped-def]
) -> None:
    # The workers send neither the unified texts nor the sentences back to index: cutting
    # them again here (parts._resplit) would be wasted work, so indexing must not read them.
    from importlib import resources

    from simdup_es.sources import read_jsonl

    def refused(self: object) -> None:
        raise AssertionError("indexing read the sentences")

    monkeypatch.setattr("simdup_es.parts._resplit", refused)
    monkeypatch.setattr("simdup_es.parts._DOCS_PER_CHUNK", 8)  # several chunks: the workers run
    sample = resources.files("simdup_es.data").joinpath("sample.jsonl").read_bytes().splitlines()
    records = list(read_jsonl(sample, "sample.jsonl", Fields()))
    with LocalStore(tmp_path / "store") as store:
        store.setup()
        summary = index_items(records, store, fingerprinter, on_reject=lambda r: None, workers=2, levels=levels)
        assert summary.indexed == len(records) == store.count() > 16 and summary.rejected == 0


@pytest.mark.parametrize(("signum", "group"), [(signal.SIGINT, True), (signal.SIGTERM, False), (signal.SIGTERM, True)],
                         ids=["ctrl-c", "kill", "kill-group"])
def test_a_run_stopped_by_a_signal_says_where_and_resumes_there(signum: int, group: bool, tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the process group, workers included), ``kill`` (SIGTERM to simdup) and a service manager
    (SIGTERM to every process) stop ``simdup index`` alike: the first record not written is said (the resume
    point's, as the file has it), the worker pool ends, and ``--resume`` writes the rest; the rejects of the
    stopped run stay, and the run that resumes it ends in exit status 1 for them."""
    src, store, rejects = tmp_path / "in.jsonl", tmp_path / "store", tmp_path / "rejects.jsonl"
    # Several seconds of indexing on the compiled core too (12,000 records took 3 s there): the signal must come
    # while it runs, even when a busy machine wakes this test late.
    n, bad = 36_000, range(0, 36_000, 4500)
    src.write_text("".join(json.dumps({"id": f"d{i}", "text": i if i in bad else
                                       f"第{i}号通知：明天{i % 24}点在{i % 9}楼开会，请带上第{i}份材料。"},
                                      ensure_ascii=False) + "\n" for i in range(n)), encoding="utf-8")
    args = [sys.executable, *PYTHON_FLAGS, "-c", "from simdup_es.cli import main; main()", "index", str(src), "--store", str(store),
            "--rejects", str(rejects), "--workers", "2", "--batch-size", "20"]
    run = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, start_new_session=True)
    resume = rejects.with_name("rejects.resume.json")
    deadline = time.monotonic() + 120
    while not resume.exists():
        assert run.poll() is None and time.monotonic() < deadline, "no batch was written"
        time.sleep(0.05)
    (os.killpg if group else os.kill)(run.pid, signum)
    _, err = ended(run, 60, f"simdup index, sent {signal.Signals(signum).name},")
    assert run.returncode == 128 + signum and "Traceback" not in err, err
    said = "SIGTERM" if signum == signal.SIGTERM else "Ctrl-C"
    settled = json.loads(resume.read_text(encoding="utf-8"))["settled"]
    assert 0 < settled < n and f"interrupted ({said}): not written: input records from number {settled + 1} on" in err
    assert "--resume" in err, err
    again = subprocess.run([*args, "--resume"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 1 and "rejected records and reasons" in again.stderr, again.stderr  # (d0, stopped run)
    assert f"the store holds {n - len(bad)} documents" in again.stderr and not resume.exists()
    lines = [json.loads(line) for line in rejects.read_text(encoding="utf-8").splitlines()]
    assert ["run" in line for line in lines].count(True) == 1 and sorted(line["id"] for line in lines[1:]) == \
        sorted(f"d{i}" for i in bad)
