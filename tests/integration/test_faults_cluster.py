"""The cluster side of the fault suite: a fault-injecting proxy in front of the real node.

Every run is bounded (small retry budgets, small inputs) and stops by itself. After
each fault, every input record is accounted for: in the index, in the rejects file
with its reason, or after the resume point a stopped run left (and a resumed run
then writes it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from simdup_es.cli import main
from simdup_es.es.connection import ConnectionSettings
from simdup_es.indexer import index_items
from simdup_es.sources import Fields, read_paths
from simdup_es.store.elasticsearch import ElasticsearchStore

from tests._data import reject_rows
from tests.integration.fault_proxy import FaultProxy

BAD = (7, 1301)  # 0-based input lines that are not JSON: rejected on reading


def write_input(path: Path, n: int) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            if i in BAD:
                out.write("{not json\n")
            else:
                text = f"第{i}号通知。今天{i % 97}点开会，讨论第{i * 7 % 1013}项工作，请{i % 31}组准时参加。"
                out.write(json.dumps({"id": f"d{i}", "text": text}, ensure_ascii=False) + "\n")
    return path


@pytest.fixture
def proxy(es_url: str) -> Iterator[FaultProxy]:
    with FaultProxy(es_url) as p:
        yield p


def index_cli(proxy: FaultProxy, index: str, tmp_path: Path, *extra: str) -> Result:
    args = ["-vv", "index", str(tmp_path / "in.jsonl"), "--es-url", proxy.url, "--index", index, "--rejects",
            str(tmp_path / "rejects.jsonl"), "--workers", "1", "--batch-size", "200", "--initial-backoff", "0.01",
            *extra]
    return CliRunner().invoke(main, args)


def assert_all_accounted(es_client, index: str, n: int, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Each good record indexed once, each bad one rejected once with its place, no resume point left."""
    es_client.indices.refresh(index=index)
    good = {f"d{i}" for i in range(n) if i not in BAD}
    assert es_client.count(index=index)["count"] == len(good)
    found = {hit["_id"] for hit in es_client.search(index=index, size=n, source=False)["hits"]["hits"]}
    assert found == good
    rejects = reject_rows(tmp_path / "rejects.jsonl", last_run=True)  # (a resumed run goes on under its header)
    assert sorted(r["source"] for r in rejects) == sorted(f"{tmp_path / 'in.jsonl'}:{i + 1}" for i in BAD if i < n)
    assert all(r["reason"].startswith("malformed JSON") for r in rejects)
    assert not (tmp_path / "rejects.resume.json").exists()


def test_item_429s_are_retried_until_written(proxy: FaultProxy, es_index: str, es_client, tmp_path: Path,  # type: ignore[no-untyped-def]
                                             fingerprinter) -> None:
    """Issue 13 item 6: 30% of bulk items answered 429, default retry count: nothing rejected.

    Before the fix (5 retries, then each item still rejected became a reject) about
    3,000 * 0.3**6 = 2 documents went to the rejects file (4 when this was checked).
    """
    n = 3000
    write_input(tmp_path / "in.jsonl", n)
    proxy.item_429 = 0.3
    rejects: list[object] = []
    store = ElasticsearchStore(ConnectionSettings(proxy.url), es_index, initial_backoff=0.01)
    with store:
        store.setup()
        summary = index_items(read_paths([tmp_path / "in.jsonl"], Fields()), store, fingerprinter,
                              on_reject=rejects.append, workers=1)
    assert proxy.counts["item_429"] > 0.2 * n  # the fault happened
    assert [r.source for r in rejects] == [f"{tmp_path / 'in.jsonl'}:{i + 1}" for i in BAD]  # type: ignore[attr-defined]
    assert (summary.read, summary.indexed, summary.rejected) == (n, n - len(BAD), len(BAD))
    es_client.indices.refresh(index=es_index)
    assert es_client.count(index=es_index)["count"] == n - len(BAD)


@pytest.mark.parametrize("fault", ["bulk_429_for_good", "item_429_for_good", "node_killed_mid_bulk"])
def test_a_run_the_cluster_stops_resumes_without_loss_or_duplicates(
    fault: str, proxy: FaultProxy, es_index: str, es_client, tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    """Issue 13 item 5: the cluster refuses for good part way; --resume writes the rest, each record once.

    Before the fix the run ended with the error alone: the records of the failed
    batch and every record after it were neither indexed nor rejected, and
    nothing said which.
    """
    n = 2000
    write_input(tmp_path / "in.jsonl", n)
    proxy.after = 3  # three bulk requests go through first
    if fault == "bulk_429_for_good":
        proxy.bulk_429 = 1.0
    elif fault == "item_429_for_good":
        proxy.item_429 = 1.0
    else:
        proxy.after, proxy.down_after = 0, 4  # the 4th request is written, then the node dies unanswered
    stopped = index_cli(proxy, es_index, tmp_path, "--max-retries", "2")
    assert stopped.exit_code == 1 and isinstance(stopped.exception, SystemExit), stopped.output
    assert "Traceback" not in stopped.output
    state = json.loads((tmp_path / "rejects.resume.json").read_text())
    settled = state["settled"]
    assert 0 < settled < n
    assert f"not written: input records from number {settled + 1}" in stopped.output
    assert "--resume" in stopped.output
    # What the stopped run settled is in the index or the rejects file; nothing after it in the rejects.
    es_client.indices.refresh(index=es_index)
    kept = {hit["_id"] for hit in es_client.search(index=es_index, size=n, source=False)["hits"]["hits"]}
    assert {f"d{i}" for i in range(settled) if i not in BAD} <= kept
    path = tmp_path / "rejects.jsonl"
    covered = path.read_bytes()[:state["rejects_bytes"]].decode() if path.exists() else ""
    assert [row["source"] for row in map(json.loads, covered.splitlines()) if "source" in row] == [
        f"{tmp_path / 'in.jsonl'}:{i + 1}" for i in BAD if i < settled]

    proxy.bulk_429 = proxy.item_429 = 0.0
    proxy.down, proxy.down_after = False, None
    sent_before = proxy.sent.copy()
    resumed = index_cli(proxy, es_index, tmp_path, "--resume")
    assert resumed.exit_code == 1, resumed.output  # 1: the bad lines are rejected
    assert f"after {settled} settled by the stopped run" in resumed.output
    assert_all_accounted(es_client, es_index, n, tmp_path)
    # The resumed run sends each record after the resume point once, and nothing before it.
    sent_again = proxy.sent - sent_before
    assert sorted(sent_again) == sorted(f"d{i}" for i in range(settled, n) if i not in BAD)
    assert set(sent_again.values()) == {1}
    # Over both runs only what the stopped run sent past its resume point goes twice (at most a batch).
    twice = [doc_id for doc_id, count in proxy.sent.items() if count > 1]
    assert len(twice) <= 200 and all(int(doc_id[1:]) >= settled for doc_id in twice)


def test_resets_and_delays_lose_nothing(proxy: FaultProxy, es_index: str, es_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    n = 1500
    write_input(tmp_path / "in.jsonl", n)
    proxy.reset, proxy.delay = 0.3, 0.02
    result = index_cli(proxy, es_index, tmp_path)
    assert result.exit_code == 1, result.output  # the bad lines
    assert proxy.counts["reset"] > 0 and "Traceback" not in result.output
    assert_all_accounted(es_client, es_index, n, tmp_path)


def test_a_rerun_without_resume_starts_over_and_says_so(proxy: FaultProxy, es_index: str, es_client,  # type: ignore[no-untyped-def]
                                                        tmp_path: Path) -> None:
    n = 1000
    write_input(tmp_path / "in.jsonl", n)
    proxy.after, proxy.bulk_429 = 2, 1.0
    assert index_cli(proxy, es_index, tmp_path, "--max-retries", "1").exit_code == 1
    proxy.bulk_429 = 0.0
    again = index_cli(proxy, es_index, tmp_path)
    assert "holds the resume point of a stopped run; starting from the beginning" in again.output
    assert_all_accounted(es_client, es_index, n, tmp_path)


@pytest.mark.parametrize("fault", ["bulk_429", "reset", "bulk_503"])
def test_a_bulk_request_is_sent_max_retries_plus_one_times_with_the_documented_waits(
        fault: str, proxy: FaultProxy, es_index: str, es_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """One retry layer: ours. The client's own (3 more tries of each of ours) made 429s and resets
    cost 4x the attempts the help promises; before the fix, 12 requests for 3 and 24 for 6."""
    import time

    write_input(tmp_path / "in.jsonl", 50)
    if fault == "bulk_429":
        proxy.bulk_429 = 1.0
    elif fault == "reset":
        proxy.reset = 1.0
    else:
        proxy.refuse_bulk = 503  # a proxy in front of a node that is down
    backoff, retries = 0.2, 3
    started = time.monotonic()
    result = index_cli(proxy, es_index, tmp_path, "--max-retries", str(retries), "--initial-backoff", str(backoff))
    took = time.monotonic() - started
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert proxy.bulk_requests == retries + 1, (proxy.bulk_requests, proxy.counts)
    waits = sum(backoff * 2**n for n in range(retries))  # 0.2 + 0.4 + 0.8, as --max-retries' help says
    assert waits <= took < waits + 15, took  # 15 s: starting the CLI, jieba, the index's creation


def test_a_backfill_the_node_stops_says_what_it_did_and_the_next_run_finishes(
        proxy: FaultProxy, es_client, es_index: str) -> None:  # type: ignore[no-untyped-def]
    """The node dies after the 3rd bulk request: the run says its counts so far, and a run again fingerprints the rest."""
    own = "own-" + es_index.removeprefix("simdup-")
    n = 1000
    operations: list[dict] = []
    for i in range(n):
        operations += [{"index": {"_id": f"d{i}"}}, {"body": f"第{i}号通知。今天{i % 97}点开会，讨论第{i * 7 % 1013}项工作。"}]
    es_client.bulk(index=own, operations=operations, refresh=True)
    args = ["backfill", "--index", own, "--field", "body", "--batch-size", "100", "--workers", "1",
            "--max-retries", "1", "--initial-backoff", "0.01"]
    try:
        proxy.down_after = 3
        stopped = CliRunner().invoke(main, [*args, "--es-url", proxy.url])
        assert stopped.exit_code == 1 and "Traceback" not in stopped.output, stopped.output
        assert f"so far: {n} documents; skipped 0 with a current fingerprint; scanned " in stopped.output
        assert "run the same command again to go on" in stopped.output
        proxy.down, proxy.down_after = False, None
        again = CliRunner().invoke(main, [*args, "--es-url", proxy.url])
        assert again.exit_code == 0, again.output
        es_client.indices.refresh(index=own)
        assert es_client.count(index=own, query={"exists": {"field": "simdup.units"}})["count"] == n
    finally:
        es_client.options(ignore_status=404).indices.delete(index=own)
