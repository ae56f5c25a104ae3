"""index / search / query on the embedded store, through the command line."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from simdup_es.cli import main

SAMPLE = str(importlib.resources.files("simdup_es.data") / "sample.jsonl")


def _run(*args: str) -> CliRunner:
    return CliRunner().invoke(main, list(args))


def test_index_then_search_finds_the_known_copies(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    result = _run("index", SAMPLE, "--store", store, "--rejects", str(tmp_path / "rejects.jsonl"))
    assert result.exit_code == 0, result.output
    assert "read 42, indexed 42, rejected 0" in result.stderr
    assert not (tmp_path / "rejects.jsonl").exists()

    # The zh_TW conversion of a man page, and an edited copy (SOURCES.md says which).
    for query, copy in [("zh-man-page:man1/systemd-delta.1", "zh-man-page-tw:man1/systemd-delta.1"),
                        ("zh-man:man7/perlnumber.7#0", "zh-man:man7/perlnumber.7#0~edited"),
                        ("zh-classic:songci#10402", "zh-classic:songci#10402~exact-copy")]:
        result = _run("search", "--store", store, "--id", query, "--json")
        assert result.exit_code == 0, result.output
        hits = [json.loads(line) for line in result.stdout.splitlines()]
        assert [h["id"] for h in hits] == [copy]
        assert hits[0]["distance"] <= 3 and hits[0]["similarity_query"] > 0.8 and hits[0]["pairs"]
        assert hits[0]["kind"] == "near-duplicate"

    # An original with no copy in the sample.
    result = _run("search", "--store", store, "--id", "zh-lo:shared/main0213#0", "--json")
    assert result.exit_code == 0 and result.stdout == ""


def test_reindexing_is_idempotent_and_rejects_are_counted(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    src = tmp_path / "in.jsonl"
    src.write_text('{"text": "第一篇文档的正文内容在这里。"}\n{"text": ""}\nnot json\n{"text": "第二篇文档讲的是别的事情。"}\n',
                   encoding="utf-8")
    rejects = tmp_path / "rejects.jsonl"
    for _ in range(2):
        result = _run("index", str(src), "--store", store, "--rejects", str(rejects))
        assert result.exit_code == 1
        assert "read 4, indexed 2, rejected 2" in result.stderr and "holds 2 documents" in result.stderr
    rows = [json.loads(line) for line in rejects.read_text(encoding="utf-8").splitlines()]
    reasons = {row["source"].rsplit(":", 1)[1]: row["reason"] for row in rows}
    assert len(rows) == 2 and "no words" in reasons["2"] and "malformed JSON" in reasons["3"]


def test_search_html_report_and_missing_store(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    assert _run("index", SAMPLE, "--store", store).exit_code == 0
    report = tmp_path / "r.html"
    result = _run("search", "--store", store, "--id", "zh-man:man7/perlnumber.7#0", "--html", str(report))
    assert result.exit_code == 0, result.output
    assert "perlnumber" in report.read_text(encoding="utf-8")
    result = _run("search", "--store", str(tmp_path / "nothing"), "--text", "文档")
    assert result.exit_code == 1 and "no embedded store" in result.output


def test_query_dsl_prints_a_pasteable_body() -> None:
    result = _run("query", "--dsl", "--text", "近似重复文档检测的查询文本", "--index", "docs")
    assert result.exit_code == 0, result.output
    first, second = result.stdout.split("\n\n")
    head, _, body = first.partition("\n")
    assert head == "GET docs/_search"
    query = json.loads(body)["query"]["bool"]
    assert query["minimum_should_match"] == 5 and len(query["should"]) == 8
    # The part-level request: one named clause per part and sentence key.
    head, _, body = second.partition("\n")
    assert head == "GET docs/_search"
    names = [c.get("nested", c.get("constant_score"))["_name"] for c in json.loads(body)["query"]["bool"]["should"]]
    assert names and all(n[0] in "pk" for n in names)


def test_search_file_finds_the_same_file_after_indexing_it(tmp_path: Path) -> None:
    doc = tmp_path / "docs" / "文件名转换.txt"  # the file name becomes the title, on both sides
    doc.parent.mkdir()
    doc.write_text((Path(__file__).parent.parent / "fixtures" / "zh_article.txt").read_text(encoding="utf-8"),
                   encoding="utf-8")
    store = str(tmp_path / "store")
    assert _run("index", str(doc.parent), "--store", store).exit_code == 0
    result = _run("search", "--store", store, "--file", str(doc), "--json")
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["distance"] for line in result.stdout.splitlines()] == [0]


def test_bad_options_and_paths_are_one_line_errors(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    cases = [
        (["index", SAMPLE, "--store", store, "--batch-size", "0"], "--batch-size"),
        (["index", SAMPLE, "--store", store, "--rejects", str(tmp_path / "no" / "r.jsonl")], "cannot write"),
        (["search", "--text", "文档", "--store", store, "--es-url", "http://127.0.0.1:9"], "not both"),
        (["compare", "一段文字。", "另一段文字。", "--html", str(tmp_path / "no" / "r.html")], "cannot write"),
    ]
    for args, message in cases:
        result = _run(*args)
        assert result.exit_code != 0 and message in result.output and "Traceback" not in result.output, args


def test_jsonl_with_a_lone_surrogate_and_invalid_bytes_is_counted(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_bytes(b'{"text": "\\ud800\xe6\x96\x87\xe6\xa1\xa3\xe7\x9a\x84\xe6\xad\xa3\xe6\x96\x87"}\n'
                    b'{"text": "\xff\xfe"}\n{"text": "\xe7\xac\xac\xe4\xba\x8c\xe7\xaf\x87\xe6\x96\x87\xe6\xa1\xa3"}\n')
    result = _run("fingerprint", str(src))
    assert result.exit_code == 1
    assert "fingerprinted 2, rejected 1, total 3" in result.stderr and f"{src}:2: is not UTF-8" in result.stderr


def test_groups_on_the_embedded_store(tmp_path: Path) -> None:
    from simdup_es.store.local import LocalStore

    store = str(tmp_path / "store")
    assert _run("index", SAMPLE, "--store", store).exit_code == 0
    result = _run("groups", "--store", store, "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["grouped"] == 12 and "would write 12 group fields" in result.stderr
    result = _run("groups", "--store", store)
    assert result.exit_code == 0 and "6 groups with 12 documents (largest 2); wrote 12 group fields" in result.stderr
    with LocalStore(tmp_path / "store") as opened:
        for original, copy in [("zh-man-page:man1/systemd-delta.1", "zh-man-page-tw:man1/systemd-delta.1"),
                               ("zh-man:man7/perlnumber.7#0", "zh-man:man7/perlnumber.7#0~edited")]:
            a, b = opened.get([original, copy])
            assert a.group is not None and a.group == b.group and a.group_size == b.group_size == 2
    result = _run("groups", "--store", store, "--matrix")
    assert result.exit_code == 0 and "the matrix compared 6, kept 6" in result.stderr and "12 unchanged" in result.stderr


def test_search_says_the_kind_and_finds_the_deleted_paragraph_copy(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    assert _run("index", SAMPLE, "--store", store).exit_code == 0
    result = _run("search", "--store", store, "--id", "zh-man:man8/nmbd.8#3", "--json")
    assert result.exit_code == 0, result.output
    hits = {h["id"]: h for h in map(json.loads, result.stdout.splitlines())}
    copy = hits["zh-man:man8/nmbd.8#3~paragraph-deleted"]
    assert copy["kind"] == "partial" and copy["distance"] > 3 and copy["similarity_match"] > 0.8
    # The document level alone (what -k 3 found before) misses it.
    result = _run("search", "--store", store, "--id", "zh-man:man8/nmbd.8#3", "--json", "--no-matrix")
    assert "paragraph-deleted" not in result.stdout
    result = _run("search", "--store", store, "--id", "zh-man:man8/nmbd.8#3", "--details", "0")
    assert "partial" in result.stdout and "nmbd.8#3~par" in result.stdout


def test_search_queries_writes_one_json_object_per_query_and_rejects_bad_records(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    assert _run("index", SAMPLE, "--store", store).exit_code == 0
    records = [json.loads(line) for line in Path(SAMPLE).read_text(encoding="utf-8").splitlines()]
    queries = tmp_path / "queries.jsonl"
    lines = [json.dumps({"id": r["id"], "text": r["text"], "title": r.get("title")}, ensure_ascii=False)
             for r in records[:6]]
    lines[2:2] = ["not json", json.dumps({"id": "blank", "text": "。。"})]
    queries.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rejects = tmp_path / "rejects.jsonl"
    result = _run("search", "--store", store, "--queries", str(queries), "--json", "--rejects", str(rejects),
                  "--workers", "2")
    assert result.exit_code == 1, result.output
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [o["id"] for o in out] == [r["id"] for r in records[:6]]
    fields = {"id", "kind", "distance", "similarity_query", "similarity_match", "containment_query_in_match",
              "containment_match_in_query"}
    assert all(set(m) == fields for o in out for m in o["matches"]) and any(o["matches"] for o in out)
    by_id = {o["id"]: o["matches"] for o in out}
    single = _run("search", "--store", store, "--id", "zh-man:man7/perlnumber.7#0", "--json")
    assert [m["id"] for m in by_id["zh-man:man7/perlnumber.7#0"]] == [json.loads(x)["id"] for x in single.stdout.splitlines()]
    rows = [json.loads(line) for line in rejects.read_text(encoding="utf-8").splitlines()]
    assert sorted(row["source"] for row in rows) == [f"{queries}:3", f"{queries}:4"]
    assert "searched 6 queries" in result.stderr and "rejected 2" in result.stderr


def test_search_reads_each_found_document_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The matrix already read the found documents' texts: showing them (titles, details)
    # reads no document again (on Elasticsearch a second mget of full texts).
    from simdup_es.store.local import LocalStore

    store = str(tmp_path / "store")
    assert _run("index", SAMPLE, "--store", store).exit_code == 0
    expected = _run("search", "--store", store, "--id", "zh-man:man8/nmbd.8#3", "--json").stdout
    read: list[str] = []
    get = LocalStore.get
    monkeypatch.setattr(LocalStore, "get", lambda self, ids: (read.extend(ids), get(self, ids))[1])
    for args in (["--json"], ["--details", "3"], ["--json", "--no-matrix"]):
        read.clear()
        result = _run("search", "--store", store, "--id", "zh-man:man8/nmbd.8#3", *args)
        assert result.exit_code == 0, result.output
        assert read and len(read) == len(set(read)), (args, read)
    assert _run("search", "--store", store, "--id", "zh-man:man8/nmbd.8#3", "--json").stdout == expected
    assert "zh-man:man8/nmbd.8#3~paragraph-deleted" in expected


def test_search_queries_without_ids_leaves_out_their_own_stored_copies(tmp_path: Path) -> None:
    """Records without an id are stored under their content id: that is what --queries excludes and prints."""
    from simdup_es.sources import content_id

    records = [json.loads(line) for line in Path(SAMPLE).read_text(encoding="utf-8").splitlines()]
    pair = [r for r in records if r["id"] in ("zh-man:man7/perlnumber.7#0", "zh-man:man7/perlnumber.7#0~edited")]
    nameless = tmp_path / "nameless.jsonl"
    nameless.write_text("".join(json.dumps({"text": r["text"], "title": r["title"]}, ensure_ascii=False) + "\n"
                                for r in pair), encoding="utf-8")
    store = str(tmp_path / "store")
    assert _run("index", str(nameless), "--store", store).exit_code == 0
    result = _run("search", "--store", store, "--queries", str(nameless), "--json", "--workers", "1")
    assert result.exit_code == 0, result.output
    keys = [content_id(r["text"], r["title"]) for r in pair]
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [o["id"] for o in out] == keys
    # Each finds the other, never itself.
    assert [[m["id"] for m in o["matches"]] for o in out] == [[keys[1]], [keys[0]]]
