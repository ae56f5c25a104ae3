"""The command line against the real node: setup, index, search, query."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

from click.testing import CliRunner

from simdup_es.cli import main

SAMPLE = str(importlib.resources.files("simdup_es.data") / "sample.jsonl")


def _run(es_url: str, index: str, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, [*args, "--es-url", es_url, "--index", index])


def test_index_search_and_reindex_on_a_real_node(es_url: str, es_index: str, es_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert _run(es_url, es_index, "setup").exit_code == 0
    rejects = str(tmp_path / "rejects.jsonl")
    for _ in range(2):  # the second run must not add documents
        result = _run(es_url, es_index, "index", SAMPLE, "--rejects", rejects)
        assert result.exit_code == 0, result.output
        assert "read 42, indexed 42, rejected 0" in result.stderr and "holds 42 documents" in result.stderr

    result = _run(es_url, es_index, "search", "--id", "zh-man-page:man1/systemd-delta.1", "--json")
    assert result.exit_code == 0, result.output
    hits = [json.loads(line) for line in result.stdout.splitlines()]
    assert [h["id"] for h in hits] == ["zh-man-page-tw:man1/systemd-delta.1"]
    assert hits[0]["similarity_query"] > 0.9 and hits[0]["kind"] == "near-duplicate"

    # The copy with a paragraph deleted is too far for the document level, and a whole copy by its shares.
    result = _run(es_url, es_index, "search", "--id", "zh-man:man8/nmbd.8#3", "--json")
    assert result.exit_code == 0, result.output
    kinds = {h["id"]: (h["kind"], h["distance"]) for h in map(json.loads, result.stdout.splitlines())}
    kind, distance = kinds["zh-man:man8/nmbd.8#3~paragraph-deleted"]
    assert kind == "near-duplicate" and distance > 3

    # Many queries: one line each, the same matches as one search each, the bad one rejected.
    queries = tmp_path / "queries.jsonl"
    wanted = ["zh-man:man8/nmbd.8#3", "zh-man-page:man1/systemd-delta.1"]
    records = {r["id"]: r for r in map(json.loads, Path(SAMPLE).read_text(encoding="utf-8").splitlines())}
    queries.write_text("\n".join([json.dumps(records[i], ensure_ascii=False) for i in wanted] + ['{"id": 1'])
                       + "\n", encoding="utf-8")
    result = _run(es_url, es_index, "search", "--queries", str(queries), "--json", "--rejects", rejects)
    assert result.exit_code == 1 and f"{queries}:3" in Path(rejects).read_text(encoding="utf-8")
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [o["id"] for o in out] == wanted
    assert {m["id"]: (m["kind"], m["distance"]) for m in out[0]["matches"]} == kinds

    # The body query prints is the one that finds the candidates.
    doc = es_client.get(index=es_index, id="zh-man:man7/perlnumber.7#0")["_source"]
    printed = CliRunner().invoke(main, ["query", "--text", doc["text"], "--title", doc["title"],
                                        "--index", es_index])
    assert printed.exit_code == 0, printed.output
    first, second = printed.stdout.split("\n\n")
    body = json.loads(first.partition("\n")[2])
    found = {h["_id"] for h in es_client.search(index=es_index, body=body)["hits"]["hits"]}
    assert {"zh-man:man7/perlnumber.7#0", "zh-man:man7/perlnumber.7#0~edited"} <= found

    # The part-level request finds the partial copy the document-level one misses, by its parts too.
    doc = es_client.get(index=es_index, id="zh-man:man8/nmbd.8#3")["_source"]
    printed = CliRunner().invoke(main, ["query", "--text", doc["text"], "--title", doc["title"], "--index", es_index])
    first, second = printed.stdout.split("\n\n")
    near = {h["_id"] for h in es_client.search(index=es_index, body=json.loads(first.partition("\n")[2]))["hits"]["hits"]}
    hits = es_client.search(index=es_index, body=json.loads(second.partition("\n")[2]))["hits"]["hits"]
    assert "zh-man:man8/nmbd.8#3~paragraph-deleted" in {h["_id"] for h in hits} - near
    assert any(name.startswith("p") for h in hits for name in h.get("matched_queries", []))


def test_fingerprints_written_at_ingest_find_partial_copies(es_url: str, es_index: str, es_client,  # type: ignore[no-untyped-def]
                                                            tmp_path: Path) -> None:
    """A writer puts the object 'simdup fingerprint' prints into each document; without its levels
    (an older writer's), backfill adds them rather than skipping the document as current."""
    assert _run(es_url, es_index, "setup").exit_code == 0
    records = {r["id"]: r for r in map(json.loads, Path(SAMPLE).read_text(encoding="utf-8").splitlines())}
    wanted = ["zh-man:man8/nmbd.8#3", "zh-man:man8/nmbd.8#3~paragraph-deleted"]
    src = tmp_path / "two.jsonl"
    src.write_text("".join(json.dumps(records[i], ensure_ascii=False) + "\n" for i in wanted), encoding="utf-8")

    def ingest(*levels: str) -> None:
        printed = CliRunner().invoke(main, ["fingerprint", str(src), "--workers", "1", *levels])
        assert printed.exit_code == 0, printed.output
        operations: list[dict] = []
        for line in map(json.loads, printed.stdout.splitlines()):
            record = records[line["id"]]
            operations += [{"index": {"_id": line["id"]}}, {"text": record["text"], "title": record["title"],
                                                            "simdup": line["simdup"]}]
        assert not es_client.bulk(index=es_index, operations=operations, refresh=True)["errors"]

    def found() -> list[dict]:
        result = _run(es_url, es_index, "search", "--id", wanted[0], "--json")
        assert result.exit_code == 0, result.output
        return [json.loads(line) for line in result.stdout.splitlines()]

    ingest()
    (hit,) = found()
    assert hit["id"] == wanted[1] and hit["distance"] > 3 and hit["spans"]["match"]
    ingest("--levels", "document")  # the fingerprint alone: the copy is too far for it
    assert found() == []
    result = _run(es_url, es_index, "backfill", "--field", "text")
    assert result.exit_code == 0 and "fingerprinted 2" in result.stderr, result.output
    assert [h["id"] for h in found()] == [wanted[1]]


def test_groups_partial_on_a_real_node(es_url: str, es_index: str, es_client) -> None:  # type: ignore[no-untyped-def]
    assert _run(es_url, es_index, "index", SAMPLE).exit_code == 0
    source, copy = "zh-man:man8/nmbd.8#3", "zh-man:man8/nmbd.8#3~paragraph-deleted"

    def group(doc_id: str) -> str | None:
        return es_client.get(index=es_index, id=doc_id)["_source"].get("dup_group")

    assert _run(es_url, es_index, "groups").exit_code == 0
    assert group(source) is None and group(copy) is None
    result = _run(es_url, es_index, "groups", "--partial", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["partial"] >= 1
    assert group(source) is not None and group(source) == group(copy)


def test_index_levels_document_and_keys(es_url: str, es_index: str, es_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rejects = str(tmp_path / "rejects.jsonl")
    result = _run(es_url, es_index, "index", SAMPLE, "--rejects", rejects, "--levels", "document")
    assert result.exit_code == 0, result.output
    assert "read 42, indexed 42, rejected 0" in result.stderr

    def count(query: dict) -> int:  # type: ignore[type-arg]
        es_client.indices.refresh(index=es_index)
        return int(es_client.count(index=es_index, query=query)["count"])

    assert count({"exists": {"field": "simdup.b0"}}) == 42
    assert count({"exists": {"field": "simdup.sk"}}) == 0
    assert count({"exists": {"field": "simdup.pq"}}) == 0
    # Near-duplicates are found; the copy with a paragraph deleted (partial, d > 3) is not.
    result = _run(es_url, es_index, "search", "--id", "zh-man:man8/nmbd.8#3", "--json")
    assert result.exit_code == 0, result.output
    assert "zh-man:man8/nmbd.8#3~paragraph-deleted" not in result.stdout
    result = _run(es_url, es_index, "search", "--id", "zh-man-page:man1/systemd-delta.1", "--json")
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["zh-man-page-tw:man1/systemd-delta.1"]
    # Indexing again adds the sentence keys (--levels keys), then the parts too, to the same documents.
    result = _run(es_url, es_index, "index", SAMPLE, "--rejects", rejects, "--levels", "keys")
    assert result.exit_code == 0 and "holds 42 documents" in result.stderr
    assert count({"exists": {"field": "simdup.sk"}}) > 30
    assert count({"exists": {"field": "simdup.pq"}}) == 0
    result = _run(es_url, es_index, "index", SAMPLE, "--rejects", rejects)
    assert result.exit_code == 0 and "holds 42 documents" in result.stderr
    assert count({"exists": {"field": "simdup.pq"}}) > 30 and count({"exists": {"field": "simdup.pf"}}) > 30  # quad parts
    result = _run(es_url, es_index, "search", "--id", "zh-man:man8/nmbd.8#3", "--json")
    assert "zh-man:man8/nmbd.8#3~paragraph-deleted" in result.stdout


def test_groups_list_and_delete_on_a_real_node(es_url: str, es_index: str) -> None:
    assert _run(es_url, es_index, "index", SAMPLE).exit_code == 0
    result = _run(es_url, es_index, "groups", "--list")
    assert result.exit_code == 0, result.output
    lines = [line.split("\t") for line in result.stdout.splitlines()]
    assert len(lines) == 6 and ["zh-man-page-tw:man1/systemd-delta.1", "zh-man-page:man1/systemd-delta.1"] in \
        [line[3:] for line in lines]  # bare ids: one index
    result = _run(es_url, es_index, "delete", "zh-man-page-tw:man1/systemd-delta.1", "no-such-id")
    assert result.exit_code == 1, result.output
    assert "deleted 1, not found 1; the store holds 41 documents" in result.stderr
    # The store has groups: the delete updated them (its original is alone now), so a full run finds nothing to do.
    assert "duplicate groups: 1 update looked at 1 document (0 near-duplicate lookups), wrote 0 group fields, " \
        "cleared 1" in result.stderr
    full = _run(es_url, es_index, "groups", "--dry-run", "--json")
    assert (json.loads(full.stdout)["set"], json.loads(full.stdout)["cleared"]) == (0, 0), full.output
    result = _run(es_url, es_index, "search", "--id", "zh-man-page:man1/systemd-delta.1", "--json")
    assert result.exit_code == 0 and result.stdout == ""
    result = _run(es_url, es_index, "groups", "--list", "--json")
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 1 + 5  # the summary, then the 5 groups left


def test_a_write_blocked_index_stops_the_run_and_rejects_nothing(es_url: str, es_index: str, es_client,  # type: ignore[no-untyped-def]
                                                                   tmp_path: Path) -> None:
    """A block on the index is no fault of the documents: the run stops with the advice, and --resume writes them all
    once the block is gone."""
    assert _run(es_url, es_index, "setup").exit_code == 0
    es_client.indices.put_settings(index=es_index, settings={"index.blocks.write": True})
    rejects = tmp_path / "rejects.jsonl"
    try:
        result = _run(es_url, es_index, "index", SAMPLE, "--rejects", str(rejects))
        assert result.exit_code == 1 and "refuses writes to index" in result.output, result.output
        assert "index.blocks.write" in result.output and "--resume" in result.output
        assert not rejects.exists() or rejects.read_text(encoding="utf-8") == ""
    finally:
        es_client.indices.put_settings(index=es_index, settings={"index.blocks.write": None})
    result = _run(es_url, es_index, "index", SAMPLE, "--rejects", str(rejects), "--resume")
    assert result.exit_code == 0 and "holds 42 documents" in result.stderr, result.output


def test_an_alias_over_two_indices_is_searched_and_written_only_with_a_write_index(  # type: ignore[no-untyped-def]
        es_url: str, es_index: str, es_client, tmp_path: Path) -> None:
    one, two, alias = f"{es_index}-a", f"{es_index}-b", es_index
    records = {r["id"]: r for r in map(json.loads, Path(SAMPLE).read_text(encoding="utf-8").splitlines())}
    halves = {one: ["zh-man:man8/nmbd.8#3"], two: ["zh-man:man8/nmbd.8#3~paragraph-deleted", "zh-man:man7/perlnumber.7#0"]}
    try:
        for name, ids in halves.items():
            src = tmp_path / f"{name}.jsonl"
            src.write_text("".join(json.dumps(records[i], ensure_ascii=False) + "\n" for i in ids), encoding="utf-8")
            assert _run(es_url, name, "setup").exit_code == 0
            assert _run(es_url, name, "index", str(src), "--rejects", str(tmp_path / "r.jsonl")).exit_code == 0
        for name in (one, two):
            es_client.indices.put_alias(index=name, name=alias)
        found = _run(es_url, alias, "search", "--id", "zh-man:man8/nmbd.8#3", "--json")  # mget refuses such a name
        assert found.exit_code == 0, found.output
        assert [json.loads(line)["id"] for line in found.stdout.splitlines()] == ["zh-man:man8/nmbd.8#3~paragraph-deleted"]
        report = _run(es_url, alias, "report", "--text", records["zh-man:man8/nmbd.8#3"]["text"], "--json")
        assert report.exit_code == 0 and json.loads(report.stdout)["sources"], report.output
        rejects = tmp_path / "rejects.jsonl"
        refused = _run(es_url, alias, "index", str(tmp_path / f"{one}.jsonl"), "--rejects", str(rejects))
        assert refused.exit_code == 1 and "names none to write to" in refused.output and not rejects.exists()
    finally:
        es_client.options(ignore_status=404).indices.delete(index=[one, two])
