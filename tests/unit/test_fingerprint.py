"""Fingerprints of real documents: stability, sensitivity, script-independence."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from statistics import mean

import pytest

import simdup_es
from simdup_es.errors import EmptyDocumentError, FingerprintVersionError, InputError
from simdup_es.fingerprint import Doc, Fingerprint, Fingerprinter
from simdup_es.config import FingerprintParams

from tests._data import fixture_text, load_corpus
from tests._stuck import PYTHON_FLAGS, ended

SENTENCE = re.compile(r"[^。！？；\n]+[。！？；]")


def test_three_line_api() -> None:
    a = simdup_es.fingerprint(fixture_text("zh_article.txt"))
    b = simdup_es.fingerprint(fixture_text("zh_other.txt"))
    assert 0 < simdup_es.distance(a, b) <= 64
    assert len(simdup_es.blocks(a.value)) == 8 and a.blocks() == simdup_es.blocks(a.value)


def test_fingerprints_are_identical_in_a_fresh_process(fingerprinter: Fingerprinter) -> None:
    texts = [fixture_text(n) for n in ("zh_article.txt", "zh_other.txt", "en_article.txt")]
    here = [fingerprinter.fingerprint(t) for t in texts]
    code = (
        "import json, sys, simdup_es\n"
        "texts = json.load(sys.stdin)\n"
        "print(json.dumps([[f.value, f.version] for f in map(simdup_es.fingerprint, texts)]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], input=json.dumps(texts), capture_output=True, text=True, check=True)
    there = [Fingerprint(v, ver) for v, ver in json.loads(out.stdout.strip().splitlines()[-1])]
    assert there == here


def test_traditional_and_simplified_forms_get_close_fingerprints(fingerprinter: Fingerprinter) -> None:
    cn = fingerprinter.fingerprint(fixture_text("zh_article.txt"))
    tw = fingerprinter.fingerprint(fixture_text("zh_article_tw.txt"))
    assert cn.distance(tw) <= 3


def test_pure_script_conversion_gives_the_same_fingerprint(fingerprinter: Fingerprinter) -> None:
    import opencc

    text = fixture_text("zh_article.txt")
    traditional = opencc.OpenCC("s2t").convert(text)
    assert traditional != text
    assert fingerprinter.fingerprint(traditional).distance(fingerprinter.fingerprint(text)) <= 1


def _one_sentence_changed(text: str, replacement: str, rng: random.Random) -> str | None:
    sentences = [m for m in SENTENCE.finditer(text) if len(m.group()) >= 8]
    if len(sentences) < 5:
        return None
    m = rng.choice(sentences)
    return text[: m.start()] + replacement + text[m.end() :]


def test_small_edits_move_few_bits_and_unrelated_documents_sit_near_32(fingerprinter: Fingerprinter) -> None:
    docs = [d["text"] for d in load_corpus("zh-docs.jsonl")]
    rng = random.Random(7)
    rng.shuffle(docs)
    # ~1 kB documents: about 340 Chinese characters.
    pieces = [d[:340] for d in docs if len(d) >= 340][:400]
    donors = [s.group() for d in docs[-200:] for s in SENTENCE.finditer(d) if 10 <= len(s.group()) <= 40]
    pairs = [(p, _one_sentence_changed(p, rng.choice(donors), rng)) for p in pieces]
    pairs = [(p, q) for p, q in pairs if q is not None][:200]
    assert len(pairs) >= 100
    originals = [r.unwrap() for r in fingerprinter.fingerprint_many([Doc(p) for p, _ in pairs])]
    edited = [r.unwrap() for r in fingerprinter.fingerprint_many([Doc(q) for _, q in pairs])]
    edit_distances = [a.distance(b) for a, b in zip(originals, edited)]
    unrelated = [a.distance(b) for a, b in zip(originals, originals[1:] + originals[:1])]
    assert mean(edit_distances) <= 8, mean(edit_distances)
    assert 28 <= mean(unrelated) <= 36, mean(unrelated)


def test_title_and_marked_words_change_the_fingerprint_and_its_version(fingerprinter: Fingerprinter) -> None:
    text = fixture_text("zh_article.txt")
    plain = fingerprinter.fingerprint(text)
    marked = Fingerprinter(FingerprintParams(marked_words=frozenset({"文件"})))
    assert marked.version != fingerprinter.version
    with pytest.raises(FingerprintVersionError):
        plain.distance(marked.fingerprint(text))
    assert fingerprinter.fingerprint(text, title=text[:12]).version == plain.version


@pytest.mark.parametrize("text", ["", "   \n\t", "，。！？……", "的 了 和"])
def test_empty_documents_raise_a_clear_error(fingerprinter: Fingerprinter, text: str) -> None:
    with pytest.raises(EmptyDocumentError, match="no words"):
        fingerprinter.fingerprint(text)


@pytest.mark.parametrize("text", ["a", "的", "的 了 和", "the and of"])
def test_a_text_of_stop_words_alone_is_not_called_empty_or_punctuation(fingerprinter: Fingerprinter, text: str) -> None:
    with pytest.raises(EmptyDocumentError) as info:
        fingerprinter.fingerprint(text)
    assert info.value.reason == ("no words to fingerprint: only stop words (such as 的, 了, a, the), which carry no "
                                 "content; give a longer text")


@pytest.mark.parametrize("text", ["", "   \n\t", "，。！？……"])
def test_an_empty_or_punctuation_text_says_so(fingerprinter: Fingerprinter, text: str) -> None:
    with pytest.raises(EmptyDocumentError) as info:
        fingerprinter.fingerprint(text)
    assert info.value.reason == "no words to fingerprint (empty, whitespace or punctuation only): give a text with words"


def test_oversized_documents_are_refused_by_name() -> None:
    small = Fingerprinter(FingerprintParams(max_bytes=1000))
    results = small.fingerprint_many([Doc("文" * 2000, source="big.txt"), Doc("小文档的内容", source="ok.txt")])
    assert isinstance(results[0].error, InputError) and "big.txt" in str(results[0].error)
    assert "limit" in str(results[0].error)
    assert results[1].fingerprint is not None


def test_parallel_map_keeps_order_and_errors(fingerprinter: Fingerprinter) -> None:
    texts = [fixture_text("zh_article.txt")[i : i + 200] for i in range(0, 1200, 40)]
    docs = [Doc(t) for t in texts] + [Doc("")] + [Doc(t) for t in texts]
    serial = [r.fingerprint for r in fingerprinter.map(docs, workers=1)]
    parallel = list(fingerprinter.map(docs, workers=2, chunk_size=4))
    assert [r.fingerprint for r in parallel] == serial
    assert serial[len(texts)] is None and isinstance(parallel[len(texts)].error, EmptyDocumentError)


def test_the_pool_without_the_result_pipe_wakeup_still_finishes_and_replaces_workers() -> None:
    # _Pool's worker handler waits on the workers and the change notifier only: closing
    # after the last result, a worker that exits and terminate must all still reach it.
    import multiprocessing
    import os
    import threading
    import time

    from simdup_es.pool import _Pool

    fork = multiprocessing.get_context("fork")
    with _Pool(2, context=fork) as pool:
        assert pool._outqueue._reader not in pool._get_sentinels()  # type: ignore[attr-defined]
        results = [pool.apply_async(abs, (-k,)) for k in range(200)]
        assert [r.get(timeout=30) for r in results] == list(range(200))
        pool.close()
        joined = threading.Thread(target=pool.join)
        joined.start()
        joined.join(30)
        assert not joined.is_alive()  # the handler woke when the work ran out
    with _Pool(2, context=fork) as pool:  # left by terminate
        first = {p.pid for p in multiprocessing.active_children()}
        pool.apply_async(os._exit, (0,))  # a worker exits under it: the handler starts another
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            now = {p.pid for p in multiprocessing.active_children()}
            if len(now) == 2 and now != first:
                break
            time.sleep(0.05)
        assert len(now) == 2 and now != first
        assert pool.apply_async(abs, (-7,)).get(timeout=30) == 7
    assert multiprocessing.active_children() == []


def _killed_on_seven(fingerprinter: Fingerprinter, chunk: list[int]) -> list[int]:
    import os
    import signal

    if 7 in chunk:
        os.kill(os.getpid(), signal.SIGKILL)  # as the kernel kills a process when memory runs out
    return chunk


def test_a_worker_killed_halfway_stops_the_map_with_a_clear_error(fingerprinter: Fingerprinter) -> None:
    # The pool starts another worker, but the killed one's chunk never comes back:
    # without the check, the map would wait for it for ever.
    import multiprocessing
    import time

    from simdup_es.errors import WorkerError

    started = time.monotonic()
    got: list[list[int]] = []
    with pytest.raises(WorkerError, match=r"exit code -9: killed by signal 9.*after \d+ batches.*fewer workers"):
        for chunk in fingerprinter.map_chunks(range(40), _killed_on_seven, workers=2, chunk_size=2):
            got.append(chunk)
    assert got[:3] == [[0, 1], [2, 3], [4, 5]]  # the chunks before it came back, in order
    assert time.monotonic() - started < 30
    assert multiprocessing.active_children() == []


_STOPPED_EARLY = """
import random, sys, time
from simdup_es.pool import map_chunks

def task(state, chunk):
    started = time.perf_counter()
    while time.perf_counter() - started < 0.005:  # work, then a result larger than a pipe holds
        pass
    return b"r" * 500_000

rng = random.Random(int(sys.argv[1]))
for trial in range(int(sys.argv[2])):
    results = map_chunks(1, (b"c" * 100_000 for _ in range(1000)), task, rebuild=lambda: 1, workers=2, chunk_size=1)
    stop = rng.randint(1, 12)
    for n, _ in enumerate(results):
        if n == stop:
            time.sleep(rng.random() * 0.02)  # the workers somewhere in a chunk, or writing its result
            break
    results.close()  # what stopping a run does: the pool ends here
print("ended", trial + 1)
"""


def test_a_map_stopped_early_ends_its_pool_while_the_workers_write_results() -> None:
    # Killing a worker halfway through writing a result left the result queue's lock held and
    # its message cut short, and the pool's shutdown waited for them for good: Ctrl-C did
    # not end `simdup index`. This script hung within 60 early stops at every seed tried.
    import subprocess
    import sys

    for seed in (1, 2):
        run = subprocess.Popen([sys.executable, *PYTHON_FLAGS, "-c", _STOPPED_EARLY, str(seed), "60"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        out, err = ended(run, 60, f"a script stopping pools early (seed {seed})")
        assert run.returncode == 0 and out.split() == ["ended", "60"], err[-2000:]


def _slow_after_the_first(state: int, chunk: list[int]) -> list[int]:
    import time

    if chunk != [0]:
        time.sleep(5)
    return chunk


def test_a_pool_whose_chunks_outlast_the_wait_is_stopped_and_says_so(caplog: pytest.LogCaptureFixture,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import multiprocessing
    import time

    from simdup_es import pool

    monkeypatch.setattr(pool, "_FINISH_SECONDS", 0.5)
    results = pool.map_chunks(1, range(20), _slow_after_the_first, rebuild=lambda: 1, workers=2, chunk_size=1)
    assert next(results) == [0]
    started = time.monotonic()
    with caplog.at_level("WARNING", logger="simdup_es.pool"):
        results.close()
    assert time.monotonic() - started < 4  # not the 5 s the chunks in flight would take
    assert "did not finish their chunks in flight within 0.5 s" in caplog.text
    assert multiprocessing.active_children() == []


def test_a_pool_whose_shutdown_waits_for_good_is_left_there_and_its_workers_killed(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    import multiprocessing
    import threading
    import time
    from multiprocessing.pool import Pool

    from simdup_es import pool

    # What a worker that ended holding a lock of the pool's queues does to Pool.terminate (cpython#96995):
    # it waits for good; here for 10 s, so that code which waits on it fails rather than hangs.
    held = threading.Event()
    monkeypatch.setattr(Pool, "_help_stuff_finish", staticmethod(lambda *args: held.wait(10)))
    monkeypatch.setattr(pool, "_FINISH_SECONDS", 0.5)
    results = pool.map_chunks(1, range(20), _slow_after_the_first, rebuild=lambda: 1, workers=2, chunk_size=1)
    assert next(results) == [0]
    started = time.monotonic()
    try:
        with caplog.at_level("WARNING", logger="simdup_es.pool"):
            results.close()
        assert time.monotonic() - started < 4
        assert "did not end within 0.5 s of being stopped" in caplog.text
        while multiprocessing.active_children() and time.monotonic() - started < 4:  # killed, not yet reaped
            time.sleep(0.05)
        assert multiprocessing.active_children() == []
    finally:
        held.set()


def test_the_pool_leaves_nothing_frozen_for_the_collector(fingerprinter: Fingerprinter,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    # The pool freezes what is alive while it runs (gc.freeze) and collects seldom, and
    # thaws it and sets the threshold back when it ends, also when the caller stops early.
    # Python 3.12 freezes objects of its own at startup (375 on 3.12.1): those are not the
    # program's, so they do not turn the optimisation off (this test failed on 3.12.1).
    import gc
    import logging

    from simdup_es.pool import _INTERPRETER_FROZEN

    docs = [Doc(fixture_text("zh_article.txt")[i : i + 200]) for i in range(0, 1200, 40)]
    assert gc.get_freeze_count() <= _INTERPRETER_FROZEN
    threshold = gc.get_threshold()
    running = fingerprinter.map(docs, workers=2, chunk_size=4)
    next(running)
    assert gc.get_freeze_count() > _INTERPRETER_FROZEN and gc.get_threshold()[0] > threshold[0]
    running.close()  # stopped early: the chunks under way finish, then the pool ends
    assert gc.get_freeze_count() <= _INTERPRETER_FROZEN and gc.get_threshold() == threshold
    import multiprocessing

    assert multiprocessing.active_children() == []
    assert len(list(fingerprinter.map(docs, workers=2, chunk_size=4))) == len(docs)
    assert gc.get_freeze_count() <= _INTERPRETER_FROZEN
    gc.freeze()  # the program's own: left as it is, and the log says why the pool does not freeze
    try:
        frozen = gc.get_freeze_count()
        with caplog.at_level(logging.INFO, logger="simdup_es.pool"):
            assert len(list(fingerprinter.map(docs, workers=2, chunk_size=4))) == len(docs)
        assert gc.get_freeze_count() == frozen
        assert "not frozen for the worker pool" in caplog.text and "frozen by the program" in caplog.text
    finally:
        gc.unfreeze()


def _echo(fingerprinter: Fingerprinter, chunk: list[str]) -> list[str]:
    return chunk


@pytest.mark.parametrize("workers", [1, 2])
def test_chunks_close_at_their_size_or_their_weight(fingerprinter: Fingerprinter, workers: int) -> None:
    # A chunk of long items holds fewer of them: it closes once their weight reaches the most.
    items = ["a" * n for n in (1, 2, 3, 10, 1, 1, 1, 1, 1, 1, 1, 1, 20, 2)]
    got = list(fingerprinter.map_chunks(items, _echo, workers=workers, chunk_size=4, chunk_weight=(len, 6)))
    assert [[len(x) for x in chunk] for chunk in got] == [[1, 2, 3], [10], [1, 1, 1, 1], [1, 1, 1, 1], [20], [2]]
    assert [len(chunk) for chunk in fingerprinter.map_chunks(items, _echo, workers=workers, chunk_size=4)] == [4, 4, 4, 2]


def _collector(fingerprinter: Fingerprinter, chunk: list[int]) -> list[tuple[int, bool]]:
    import gc

    return [(gc.get_threshold()[0], gc.get_freeze_count() > 0)] * len(chunk)


def test_workers_collect_garbage_seldom_and_never_over_their_tables(fingerprinter: Fingerprinter) -> None:
    # Reference counting frees a worker's garbage; the collector at its default
    # threshold cost 3 % of a worker's CPU, most of it going over long-lived tables.
    import gc

    from simdup_es.pool import _WORKER_GC_THRESHOLD

    before = gc.get_threshold()
    got = [x for chunk in fingerprinter.map_chunks(range(8), _collector, workers=2, chunk_size=2) for x in chunk]
    assert got == [(_WORKER_GC_THRESHOLD, True)] * 8 and _WORKER_GC_THRESHOLD > before[0]
    assert gc.get_threshold() == before  # this process's collector is left as it was


def test_a_collector_turned_off_stays_off_in_the_pool(fingerprinter: Fingerprinter) -> None:
    import gc

    before = gc.get_threshold()
    gc.set_threshold(0, *before[1:])  # the program's choice: no automatic collection
    try:
        seen = []
        chunks = fingerprinter.map_chunks(range(8), _collector, workers=2, chunk_size=2)
        for chunk in chunks:
            seen.append(gc.get_threshold()[0])  # this process's, while the pool runs
            assert [threshold for threshold, _ in chunk] == [0] * len(chunk)  # the workers'
        assert seen == [0] * 4 and gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*before)


def test_one_fingerprinter_shared_by_threads_gives_the_sequential_fingerprints() -> None:
    """simdup serve fingerprints queries on many threads with one Fingerprinter: its word cache
    (the Lexicon, filled as new words come) must not mix up rows between threads."""
    import json as json_
    from concurrent.futures import ThreadPoolExecutor
    from importlib.resources import files

    from simdup_es import FingerprintParams, Fingerprinter
    from simdup_es.parts import PartPrinter

    lines = (files("simdup_es.data") / "sample.jsonl").read_text(encoding="utf-8").splitlines()
    texts = [json_.loads(line)["text"] for line in lines]
    texts += [t[::-1] for t in texts] + [t[: len(t) // 3] for t in texts]  # more distinct words
    reference = PartPrinter(Fingerprinter(FingerprintParams()))
    expected = [(reference.fingerprinter.fingerprint(t).value, reference.levels(t).fingerprints) for t in texts]
    for _ in range(3):
        shared = PartPrinter(Fingerprinter(FingerprintParams()))  # a fresh, empty cache: words are added at once

        def both(text: str, shared: PartPrinter = shared) -> tuple[int, list[int | None]]:
            return shared.fingerprinter.fingerprint(text).value, shared.levels(text).fingerprints

        with ThreadPoolExecutor(8) as pool:
            assert list(pool.map(both, texts)) == expected
