"""index / search / query on the embedded store, through the command line."""

from __future__ import annotations

import importlib.resources
import json
import os
import shutil
import subprocess
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from simdup_es.cli import main
from tests._data import reject_rows

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


def test_force_merge_after_indexing_keeps_the_answers(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    result = _run("index", SAMPLE, "--store", store, "--force-merge", "--rejects", str(tmp_path / "rejects.jsonl"))
    assert result.exit_code == 0, result.output
    assert "indexed 42; merging the index's segments" in result.stderr and "merged in" in result.stderr
    result = _run("search", "--store", store, "--id", "zh-man:man7/perlnumber.7#0", "--json")
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["zh-man:man7/perlnumber.7#0~edited"]


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
    rows = reject_rows(rejects, last_run=True)
    reasons = {row["source"].rsplit(":", 1)[1]: row["reason"] for row in rows}
    assert len(rows) == 2 and "no words" in reasons["2"] and "malformed JSON" in reasons["3"]
    assert len(reject_rows(rejects)) == 4  # each run's, after its header


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
    result = _run("query", "--text", "近似重复文档检测的查询文本", "--index", "docs")
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


def test_search_file_leaves_itself_out_and_finds_its_copies(tmp_path: Path) -> None:
    doc = tmp_path / "docs" / "文件名转换.txt"  # the file name becomes the title, on both sides
    doc.parent.mkdir()
    doc.write_text((Path(__file__).parent.parent / "fixtures" / "zh_article.txt").read_text(encoding="utf-8"),
                   encoding="utf-8")
    store = str(tmp_path / "store")
    assert _run("index", str(doc.parent), "--store", store).exit_code == 0
    result = _run("search", "--store", store, "--file", str(doc), "--json")
    assert result.exit_code == 0, result.output
    assert result.stdout == "" and "left out" in result.stderr  # the file itself, as stored
    result = _run("report", "--store", store, "--file", str(doc), "--include-self", "--json")
    assert "left out" not in result.stderr and [s["id"] for s in json.loads(result.stdout)["sources"]] == [str(doc)]
    copy = tmp_path / "elsewhere" / doc.name  # the same text and title under another id: found at distance 0
    copy.parent.mkdir()
    shutil.copy(doc, copy)
    result = _run("search", "--store", store, "--file", str(copy), "--json")
    assert [json.loads(line)["distance"] for line in result.stdout.splitlines()] == [0]
    doc.write_text(doc.read_text(encoding="utf-8") + "\n又加了一句新的话。", encoding="utf-8")  # edited since indexed
    result = _run("search", "--store", store, "--file", str(doc), "--json")
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == [str(doc)]


def test_search_and_report_take_the_query_as_an_argument_a_file_or_text(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    assert _run("index", SAMPLE, "--store", store).exit_code == 0
    text = next(json.loads(line)["text"] for line in open(SAMPLE, encoding="utf-8")
                if json.loads(line)["id"] == "zh-man:man7/perlnumber.7#0")
    doc = tmp_path / "query.txt"
    doc.write_text(text, encoding="utf-8")
    for command in ("search", "report"):
        as_file = _run(command, "--store", store, "--file", str(doc), "--json")
        as_text = _run(command, "--store", store, "--text", text, "--json")
        assert as_file.exit_code == as_text.exit_code == 0, (as_file.output, as_text.output)
        assert "perlnumber.7#0~edited" in as_file.stdout and "perlnumber.7#0~edited" in as_text.stdout
        assert _run(command, "--store", store, str(doc), "--json").stdout == as_file.stdout
        assert _run(command, "--store", store, text, "--json").stdout == as_text.stdout
        mistyped = _run(command, "--store", store, str(tmp_path / "quer.txt"))
        assert mistyped.exit_code == 1 and "quer.txt: no such file (give --text" in mistyped.output
        both = _run(command, "--store", store, str(doc), "--text", text)
        assert both.exit_code == 2 and "not both" in both.output
        folder = _run(command, "--store", store, str(tmp_path))
        assert folder.exit_code == 2 and "is a folder, not a document" in folder.output
    assert _run("query", str(doc)).stdout == _run("query", "--file", str(doc)).stdout != ""
    nothing = _run("search", "--store", store)  # said before the store is opened
    assert nothing.exit_code == 2 and "give exactly one of QUERY" in nothing.output
    assert "embedded store" not in nothing.output


def test_bad_options_and_paths_are_one_line_errors(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    cases = [
        (["index", SAMPLE, "--store", store, "--batch-size", "0"], "--batch-size"),
        (["index", SAMPLE, "--store", store, "--rejects", str(tmp_path / "a-file" / "r.jsonl")], "cannot write"),
        (["search", "--text", "文档", "--store", store, "--es-url", "http://127.0.0.1:9"], "not both"),
        (["compare", "一段文字。", "另一段文字。", "--html", str(tmp_path / "a-file" / "r.html")], "cannot write"),
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
    assert "no groups" not in result.stderr
    lone = tmp_path / "lone.jsonl"  # a store without copies: groups are not kept until one is asked for
    lone.write_text('{"id": "a", "text": "第一篇文档的正文内容在这里。"}\n', encoding="utf-8")
    assert _run("index", str(lone), "--store", str(tmp_path / "lone")).exit_code == 0
    result = _run("groups", "--store", str(tmp_path / "lone"))
    assert result.exit_code == 0 and "no groups, so 'index' and 'delete' do not keep groups current yet" in result.stderr


def test_search_says_the_kind_and_finds_the_deleted_paragraph_copy(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    assert _run("index", SAMPLE, "--store", store).exit_code == 0
    result = _run("search", "--store", store, "--id", "zh-man:man8/nmbd.8#3", "--json")
    assert result.exit_code == 0, result.output
    hits = {h["id"]: h for h in map(json.loads, result.stdout.splitlines())}
    copy = hits["zh-man:man8/nmbd.8#3~paragraph-deleted"]
    # most of both sides copied: a whole copy, a near-duplicate whatever its distance
    assert copy["kind"] == "near-duplicate" and copy["distance"] > 3 and copy["similarity_match"] > 0.8
    # The document level alone (what -k 3 found before) misses it.
    result = _run("search", "--store", store, "--id", "zh-man:man8/nmbd.8#3", "--json", "--no-matrix")
    assert "paragraph-deleted" not in result.stdout
    result = _run("search", "--store", store, "--id", "zh-man:man8/nmbd.8#3", "--details", "0")
    assert "near-duplicate" in result.stdout and "nmbd.8#3~paragraph-deleted" in result.stdout  # not cut at 80 columns


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
    fields = {"id", "kind", "distance", "copied_query", "copied_match", "common_query", "common_match",
              "common_documents", "similarity_query", "similarity_match", "containment_query_in_match",
              "containment_match_in_query"}
    assert all(set(m) == fields for o in out for m in o["matches"]) and any(o["matches"] for o in out)
    assert all(o["more"] == 0 for o in out)
    by_id = {o["id"]: o["matches"] for o in out}
    single = _run("search", "--store", store, "--id", "zh-man:man7/perlnumber.7#0", "--json")
    assert [m["id"] for m in by_id["zh-man:man7/perlnumber.7#0"]] == [json.loads(x)["id"] for x in single.stdout.splitlines()]
    rows = reject_rows(rejects)
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


def test_a_number_of_5000_digits_is_a_counted_reject_of_index_and_search_queries(tmp_path: Path) -> None:
    store, rejects = str(tmp_path / "store"), tmp_path / "rejects.jsonl"
    src = tmp_path / "in.jsonl"
    src.write_text('{"id": "a", "text": "第一篇文档的正文内容在这里。"}\n'
                   f'{{"id": "b", "text": "不读这一篇。", "n": {"7" * 5000}}}\n'
                   '{"id": "c", "text": "第二篇文档讲的是别的事情。"}\n', encoding="utf-8")
    result = _run("index", str(src), "--store", store, "--rejects", str(rejects))
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output and "read 3, indexed 2, rejected 1" in result.stderr
    (row,) = reject_rows(rejects)
    assert row["source"] == f"{src}:2" and "more than 4300 digits" in row["reason"]
    search_rejects = tmp_path / "search-rejects.jsonl"
    result = _run("search", "--store", store, "--queries", str(src), "--json", "--rejects", str(search_rejects))
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert "searched 2 queries" in result.stderr and "rejected 1" in result.stderr
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["a", "c"]
    assert "more than 4300 digits" in search_rejects.read_text(encoding="utf-8")


def test_one_document_is_counted_in_the_singular(tmp_path: Path) -> None:
    store, src = str(tmp_path / "store"), tmp_path / "one.jsonl"
    src.write_text('{"id": "a", "text": "第一篇文档的正文内容在这里。"}\n', encoding="utf-8")
    result = _run("index", str(src), "--store", store)
    assert result.exit_code == 0, result.output
    assert "the store holds 1 document\n" in result.stderr and "1 documents" not in result.stderr
    result = _run("setup", "--store", store)
    assert result.exit_code == 0 and "ready: 1 document\n" in result.stderr, result.output
    result = _run("setup", "--store", store, "--layout", "terms")  # a cluster's option
    assert result.exit_code == 2 and "--layout: for an Elasticsearch or OpenSearch index" in result.output
    assert _run("setup", "--store", store, "--layout", "4x16").exit_code == 2  # gone: 8x8 or terms


def test_outputs_go_into_folders_that_do_not_exist_yet(tmp_path: Path) -> None:
    store, src = str(tmp_path / "store"), tmp_path / "in.jsonl"
    src.write_text('{"id": "a", "text": "第一篇文档的正文内容在这里。"}\nnot json\n', encoding="utf-8")
    rejects = tmp_path / "st" / "rejects.jsonl"
    result = _run("index", str(src), "--store", store, "--rejects", str(rejects))
    assert result.exit_code == 1 and "cannot write" not in result.output, result.output
    assert "malformed JSON" in rejects.read_text(encoding="utf-8")
    html = tmp_path / "reports" / "2024" / "a.html"
    result = _run("search", "--store", store, "--text", "第一篇文档的正文内容在这里。", "--html", str(html))
    assert result.exit_code == 0 and html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>"), result.output
    html = tmp_path / "compare" / "b.html"
    result = _run("compare", "第一篇文档的正文内容在这里。", "第一篇文档的正文内容在那里。", "--html", str(html))
    assert result.exit_code == 0 and html.exists(), result.output
    idf = tmp_path / "tables" / "idf.txt"
    result = _run("idf", "build", str(src), "-o", str(idf))
    assert result.exit_code == 0 and idf.exists(), result.output


def _without_write_access(work: Callable[[], str]) -> str:
    """``work()`` in a forked child that cannot write what root's chmod made read-only: as ``nobody`` when
    this is root (root writes through any mode bits). Its result, or its traceback."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read)
        try:
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
            out = work()
        except BaseException:  # noqa: BLE001 - anything, reported to the parent
            out = "FAILED\n" + traceback.format_exc()
        with os.fdopen(write, "w", encoding="utf-8") as f:
            f.write(out)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, encoding="utf-8") as f:
        out = f.read()
    os.waitpid(pid, 0)
    return out


def test_a_store_that_may_be_read_but_not_written_can_be_searched(monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() == 0 and not hasattr(os, "fork"):
        pytest.skip("needs fork to drop root")
    top = Path(tempfile.mkdtemp(prefix="simdup-ro-"))
    try:
        top.chmod(0o755)  # anyone may look inside
        store, cache, scratch = top / "store", top / "cache", top / "scratch"
        monkeypatch.setenv("SIMDUP_CACHE", str(cache))
        src = top / "in.jsonl"
        src.write_text('{"id": "a", "text": "第一篇文档的正文内容在这里，讲的是今年的工作安排。"}\n'
                       '{"id": "b", "text": "第二篇文档讲的是别的事情，和天气有关。"}\n', encoding="utf-8")
        result = _run("index", str(src), "--store", str(store))
        assert result.exit_code == 0, result.output

        def search() -> str:
            outs = []
            for args in (["--text", "第一篇文档的正文内容在这里，讲的是今年的工作安排。"], ["--id", "b"],
                         ["--queries", str(src), "--rejects", str(scratch / "rejects.jsonl")]):
                r = _run("search", "--store", str(store), "--json", "--workers", "1", *args)
                outs.append(f"{r.exit_code}\t{r.stdout}\t{r.stderr} {r.exception!r}")
            r = _run("groups", "--store", str(store), "--dry-run", "--json")
            outs.append(f"{r.exit_code}\t{r.stdout}\t{r.stderr} {r.exception!r}")
            return "\n---\n".join(outs)

        search()  # once writable: every module the child needs is imported (nobody cannot read root's Python)
        before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in store.iterdir()}
        subprocess.run(["chmod", "-R", "a-w,a+rX", str(top)], check=True)  # shared read-only with analysts
        scratch.mkdir(exist_ok=True)  # the analyst's own folder, for the rejects of --queries
        scratch.chmod(0o777)
        out = _without_write_access(search)
        assert not out.startswith("FAILED"), out
        by_text, by_id, many, groups = out.split("\n---\n")
        assert by_text.startswith("0\t") and json.loads(by_text.split("\t")[1])["id"] == "a", by_text
        assert by_id.startswith("0\t") and "readonly" not in by_id and "unable to open" not in by_id, by_id
        assert many.startswith("0\t") and "searched 2 queries" in many, many
        assert groups.startswith("0\t") and "would write" in groups, groups
        # Nothing was written, created or left behind in the store.
        assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in store.iterdir()} == before
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(top)], check=True)
        shutil.rmtree(top)


def test_indexing_the_working_folder_again_skips_the_outputs_simdup_wrote_there(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("第一篇文档的正文内容在这里，讲的是今年的工作安排。", encoding="utf-8")
    (docs / "b.txt").write_text("第二篇文档讲的是别的事情，和天气有关。", encoding="utf-8")
    (docs / "empty.txt").write_text("，。", encoding="utf-8")  # one reject, so rejects.jsonl stays
    (docs / "mine.html").write_text("<html><head><title>页</title></head><body><p>用户自己的网页，讲的是旅行见闻。</p>"
                                    "</body></html>", encoding="utf-8")
    monkeypatch.chdir(docs)
    store = str(tmp_path / "store")
    first = _run("index", ".", "--store", store)
    assert first.exit_code == 1 and "read 4, indexed 3, rejected 1" in first.stderr, first.output
    assert (docs / "rejects.jsonl").exists()  # the defaults land in the working folder, here the indexed one
    report = _run("search", "--store", store, "--text", "第一篇文档的正文内容在这里，讲的是今年的工作安排。",
                  "--html", "report.html")
    assert report.exit_code == 0 and (docs / "report.html").exists(), report.output
    (docs / "search-rejects.jsonl").write_text('{"source": "q.jsonl:1", "id": null, "reason": "malformed JSON"}\n',
                                              encoding="utf-8")
    (docs / "sub").mkdir()
    (docs / "sub" / "rejects.resume.json").write_text('{"version": 1}', encoding="utf-8")
    # This run's own rejects file, named by the user inside the folder, is not read either.
    again = _run("index", ".", "--store", store, "--rejects", "bad/records.jsonl")
    assert again.exit_code == 1 and "read 4, indexed 3, rejected 1" in again.stderr, again.output
    assert "the store holds 3 documents" in again.stderr  # a.txt b.txt mine.html, and nothing simdup wrote
    assert [Path(r["source"]).name for r in reject_rows(docs / "bad" / "records.jsonl")] == ["empty.txt"]
    assert "simdup's own outputs" in _run("index", "--help").output


def test_search_says_how_many_documents_another_fingerprint_version_hides(tmp_path: Path) -> None:
    import simdup_es
    from simdup_es.store.base import StoredDoc

    store = str(tmp_path / "store")
    text = "今天在图书馆读完了一本关于宋代城市生活的书，收获很多，推荐给大家。"
    with simdup_es.open_store(path=store, create=True) as s:
        s.put([StoredDoc("old", 1, "0.older", text), StoredDoc("older", 2, "0.older", text)])
    result = _run("search", "--store", store, "--text", text)
    assert result.exit_code == 0, result.output
    assert "note: 2 stored documents of fingerprint version 0.older" in result.stderr and "simdup index" in result.stderr
    assert _run("index", SAMPLE, "--store", store).exit_code == 0
    assert "0.older" in _run("search", "--store", store, "--text", text, "--json").stderr


def test_index_and_delete_keep_the_groups_current(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from simdup_es.store.local import LocalStore

    store = str(tmp_path / "store")
    assert _run("index", SAMPLE, "--store", store).exit_code == 0
    assert "wrote 12 group fields" in _run("groups", "--store", store).stderr
    original = "zh-man:man7/perlnumber.7#0"
    with LocalStore(tmp_path / "store") as opened:
        (doc,) = opened.get([original])
    copies = tmp_path / "copies.jsonl"
    copies.write_text(json.dumps({"id": "new-copy", "text": doc.text, "title": doc.title}, ensure_ascii=False) + "\n",
                      encoding="utf-8")
    result = _run("index", str(copies), "--store", store, "--rejects", str(tmp_path / "rejects.jsonl"))
    assert result.exit_code == 0, result.output
    assert "duplicate groups: 1 update looked at 3 documents (1 near-duplicate lookup), wrote 3 group fields" \
        in result.stderr
    with LocalStore(tmp_path / "store") as opened:
        a, b, c = opened.get([original, original + "~edited", "new-copy"])
        assert a.group == b.group == c.group is not None and a.group_size == c.group_size == 3
    full = _run("groups", "--store", store, "--dry-run", "--json")  # a repair finds nothing to do
    assert json.loads(full.stdout)["set"] == 0 and json.loads(full.stdout)["cleared"] == 0
    (tmp_path / "empty").mkdir()  # nothing read: a warning, and no line on group updates that did not happen
    result = _run("index", str(tmp_path / "empty"), "--store", store, "--rejects", str(tmp_path / "rejects.jsonl"))
    assert result.exit_code == 0 and "read 0, indexed 0, rejected 0" in result.stderr
    assert "empty: no files in this folder" in caplog.text and "duplicate groups:" not in result.stderr

    result = _run("delete", original, original + "~edited", "--store", store)
    assert result.exit_code == 0 and "cleared 1" in result.stderr, result.output
    with LocalStore(tmp_path / "store") as opened:
        assert opened.get(["new-copy"])[0].group is None
    full = json.loads(_run("groups", "--store", store, "--dry-run", "--json").stdout)
    assert (full["set"], full["cleared"], full["grouped"]) == (0, 0, 10)
    # Without groups in the store nothing is updated unless asked.
    result = _run("index", str(copies), "--store", str(tmp_path / "other"), "--rejects", str(tmp_path / "r2.jsonl"))
    assert result.exit_code == 0 and "duplicate groups" not in result.stderr


def test_delete_on_the_embedded_store(tmp_path: Path) -> None:
    from simdup_es.store.local import LocalStore

    store = str(tmp_path / "store")
    assert _run("index", SAMPLE, "--store", store).exit_code == 0
    assert _run("groups", "--store", store).exit_code == 0
    copy = "zh-man-page-tw:man1/systemd-delta.1"  # in a group with its original
    ids_file = tmp_path / "ids.txt"
    ids_file.write_text("zh-man:man7/perlnumber.7#0~edited\n\nno-such-id\n", encoding="utf-8")
    result = _run("delete", copy, "--ids-from", str(ids_file), "--store", store, "--no-groups")
    assert result.exit_code == 1, result.output
    assert "deleted 2, not found 1; the store holds 40 documents" in result.stderr
    assert "not found: no-such-id" in result.stderr and "2 deleted documents were in duplicate groups: run 'simdup groups'" in result.stderr
    with LocalStore(tmp_path / "store") as opened:
        assert opened.get([copy, "zh-man:man7/perlnumber.7#0~edited"]) == [] and opened.count() == 40
    result = _run("search", "--store", store, "--id", "zh-man-page:man1/systemd-delta.1", "--json")
    assert result.exit_code == 0 and copy not in result.stdout

    result = _run("delete", "zh-man:man7/perlnumber.7#0", "--store", store)  # all found: exit 0
    assert result.exit_code == 0 and "deleted 1, not found 0" in result.stderr, result.output
    result = _run("delete", "--store", store)
    assert result.exit_code == 2 and "give the ids to delete" in result.output


def test_groups_list_on_the_embedded_store(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    assert _run("index", SAMPLE, "--store", store).exit_code == 0
    result = _run("groups", "--store", store, "--list")
    assert result.exit_code == 0, result.output
    lines = [line.split("\t") for line in result.stdout.splitlines()]
    assert len(lines) == 6 and all(kind == "near-duplicate" and size == "2" and len(ids) == 2
                                   for _, kind, size, *ids in lines)
    assert ["zh-man-page-tw:man1/systemd-delta.1", "zh-man-page:man1/systemd-delta.1"] in [r[3:] for r in lines]
    assert "listed 6 groups with 12 documents" in result.stderr
    # Only 1 pair within distance 3 but 6 groups: the summary says where the others come from.
    assert "1 pair within distance 3; 10 documents have the same fingerprint as another (distance 0: grouped " \
        "without a pair); 6 groups with 12 documents" in result.stderr

    result = _run("groups", "--store", store, "--list", "--json", "--dry-run")
    assert result.exit_code == 0, result.output
    summary, *groups = map(json.loads, result.stdout.splitlines())
    assert summary["grouped"] == 12 and len(groups) == 6
    assert {g["group"] for g in groups} == {line[0] for line in lines}
    assert all(g["kind"] == "near-duplicate" and g["size"] == len(g["members"]) == 2 for g in groups)
    assert "a dry run changed none" in result.stderr


def test_indexing_an_edited_file_again_replaces_it_however_it_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from simdup_es.store.local import LocalStore

    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.txt").write_text("第一篇文档的正文内容在这里，讲的是今年的工作安排。", encoding="utf-8")
    (docs / "sub" / "b.txt").write_text("第二篇文档讲的是别的事情，和天气有关。", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert _run("index", "docs", "--store", "store").exit_code == 0
    edited = "第二篇文档改过了，讲的是明天的天气和出行安排。"
    for name in ("docs/sub/b.txt", str(docs / "sub" / "b.txt"), "./docs/sub/../sub/b.txt"):
        (docs / "sub" / "b.txt").write_text(edited + name, encoding="utf-8")
        result = _run("index", name, "--store", "store")
        assert result.exit_code == 0 and "the store holds 2 documents" in result.stderr, result.output
    with LocalStore(tmp_path / "store") as store:
        (b,) = store.get(["docs/sub/b.txt"])
        assert b.text == edited + "./docs/sub/../sub/b.txt"
    assert "relative to the current folder" in _run("index", "--help").output


def test_a_file_named_another_way_is_its_stored_id_for_search_report_and_delete(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``./docs/a.txt`` or the absolute path name the document ``index`` stored as ``docs/a.txt``."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("第一篇文档的正文内容在这里，讲的是今年的工作安排。", encoding="utf-8")
    (docs / "b.txt").write_text("第一篇文档的正文内容在这里，讲的是今年的工作安排和出行。", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert _run("index", "docs", "--store", "store").exit_code == 0
    for name in ("./docs/a.txt", str(docs / "a.txt")):
        found = _run("search", "--id", name, "--store", "store", "--json")
        assert found.exit_code == 0 and "docs/b.txt" in found.stdout and "docs/a.txt" not in found.stdout, found.output
        reported = _run("report", "--id", name, "--store", "store", "--json")
        assert reported.exit_code == 0 and json.loads(reported.stdout)["sources"], reported.output
    assert "no document with id './docs/c.txt'" in _run("search", "--id", "./docs/c.txt", "--store", "store").output
    deleted = _run("delete", "./docs/a.txt", str(docs / "a.txt"), "docs/b.txt", "--store", "store")
    assert deleted.exit_code == 0 and "deleted 2, not found 0; the store holds 0 documents" in deleted.stderr, deleted.output
    # Indexed with --id-base docs (ids a.txt, b.txt): the same option names the files the same way.
    assert _run("index", "docs", "--store", "based", "--id-base", "docs").exit_code == 0
    found = _run("search", "--id", "docs/a.txt", "--id-base", "docs", "--store", "based", "--json")
    assert found.exit_code == 0 and [json.loads(line)["id"] for line in found.stdout.splitlines()] == ["b.txt"]
    reported = _run("report", "--id", "docs/a.txt", "--id-base", "docs", "--store", "based", "--json")
    assert reported.exit_code == 0 and [s["id"] for s in json.loads(reported.stdout)["sources"]] == ["b.txt"]
    reported = _run("report", "docs/a.txt", "--id-base", "docs", "--store", "based", "--json")
    assert "left out a.txt" in reported.stderr and [s["id"] for s in json.loads(reported.stdout)["sources"]] == ["b.txt"]
    deleted = _run("delete", "docs/a.txt", "--store", "based", "--id-base", "docs")
    assert deleted.exit_code == 0 and "deleted 1, not found 0" in deleted.stderr, deleted.output


def test_index_of_only_missing_paths_makes_no_store_and_many_rejects_say_where_the_rest_are(tmp_path: Path) -> None:
    result = _run("index", str(tmp_path / "nope"), "--store", str(tmp_path / "store"))
    assert result.exit_code == 1 and "no such file or folder: " in result.output and "nothing was indexed" in result.output
    assert not (tmp_path / "store").exists() and not (tmp_path / "rejects.jsonl").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(f"{{oops {i}\n" for i in range(7)), encoding="utf-8")
    rejects = tmp_path / "rejects.jsonl"
    result = _run("index", str(bad), str(tmp_path / "nope"), "--store", str(tmp_path / "store"), "--rejects", str(rejects))
    assert result.exit_code == 1 and "read 8, indexed 0, rejected 8" in result.stderr, result.output
    assert f"rejected records and reasons: {rejects} (this run's after the line {{\"run\": " in result.stderr
    assert "; the first 5 of 8 are above)" in result.stderr
    assert len(reject_rows(rejects)) == 8


def test_a_search_in_a_subfolder_names_the_store_above(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("第一篇文档的正文内容在这里，讲的是今年的工作安排。", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert _run("index", "docs").exit_code == 0
    monkeypatch.chdir(tmp_path / "docs")
    result = _run("search", "a.txt")
    assert result.exit_code == 1 and "no embedded store at .simdup" in result.output
    assert "the store at ../.simdup was made in another folder: give --store ../.simdup" in result.output
    assert _run("search", "a.txt", "--store", "../.simdup").exit_code == 0


def test_the_file_size_limit_is_named_not_a_disk_io_error(tmp_path: Path) -> None:
    """Under 'ulimit -f' SQLite reported "disk I/O error", which sent users to check their disks."""
    import resource
    import sys

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (200 * 1024, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    run = subprocess.run([sys.executable, "-c", "from simdup_es.cli import main; main()", "index", SAMPLE, "--store",
                          str(tmp_path / "store"), "--rejects", str(tmp_path / "rejects.jsonl")],
                         capture_output=True, text=True, preexec_fn=limited, timeout=300)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert "file size limit ('ulimit -f' is 200 KB here)" in last and "disk I/O error" not in last, last
    assert "--resume" in run.stderr  # the run can go on once the limit is raised


def test_ids_the_store_refuses_are_rejects_named_by_file_and_line(tmp_path: Path) -> None:
    """They were named "store:<id>", the only rejects not pointing at their input line."""
    src = tmp_path / "ids.jsonl"
    text = "第一篇文档的正文内容在这里，讲的是今年的工作安排。"
    src.write_text("".join(json.dumps({"id": i, "text": text + str(n)}, ensure_ascii=False) + "\n"
                           for n, i in enumerate(["ok-1", "", "ok-2", "a" * 600, "ok-3"])), encoding="utf-8")
    rejects = tmp_path / "rejects.jsonl"
    result = _run("index", str(src), "--store", str(tmp_path / "store"), "--rejects", str(rejects))
    assert result.exit_code == 1 and "read 5, indexed 3, rejected 2" in result.stderr, result.output
    rows = reject_rows(rejects)
    assert [r["source"] for r in rows] == [f"{src}:2", f"{src}:4"]
    assert [r["id"] for r in rows] == ["", "a" * 600]
    assert rows[0]["reason"].startswith("the store refused it: ") and "512 bytes" in rows[1]["reason"]


def test_first_use_papercuts(tmp_path: Path) -> None:
    """What a new user met: rejects shown where they happen, a chosen id field required, repeated ids and
    ids named twice accounted for, ids shown as written, an empty query file named."""
    store, rejects = str(tmp_path / "store"), tmp_path / "rejects.jsonl"
    records = tmp_path / "in.jsonl"
    records.write_text('{"id": "[bold]a[red]", "text": "第一版的内容，讲的是如何在家里种植西红柿和黄瓜。"}\n'
                       '{"id": "b", "text": "第二版的内容，讲的是怎样在阳台上养花和草。"}\n'
                       '{"id": "b", "text": "第三版的内容，讲的是怎样在阳台上养花和草。"}\n{broken\n', encoding="utf-8")
    result = _run("index", str(records), "--store", store, "--rejects", str(rejects))
    assert result.exit_code == 1 and f"rejected {records}:4: malformed JSON" in result.stderr
    assert "read 4, indexed 3, rejected 1" in result.stderr and "the store holds 2 documents" in result.stderr
    assert "1 of the indexed records replaced a document of the same id" in result.stderr
    # A run that cannot start leaves the last run's rejects alone.
    assert _run("index", str(records), "--es-url", "http://127.0.0.1:9", "--rejects", str(rejects)).exit_code == 1
    assert len(reject_rows(rejects)) == 1
    # A mistyped id field rejects every record instead of giving each a new content id.
    result = _run("index", str(records), "--store", store, "--id-field", "docid", "--rejects", str(rejects))
    assert "indexed 0, rejected 4" in result.stderr and "no id in field 'docid'" in result.stderr
    assert "the store holds 2 documents" in result.stderr
    result = _run("index", str(records), "--store", store, "--title-field", "headline", "--rejects", str(rejects))
    assert "no record had a title in field 'headline': check --title-field" in result.stderr
    assert "no record had" not in _run("index", str(records), "--store", store, "--rejects", str(rejects)).stderr
    result = _run("search", "--store", store, "--text", "第一版的内容，讲的是如何在家里种植西红柿和黄瓜。")
    assert result.exit_code == 0 and "[bold]a[red]" in result.stdout
    empty = tmp_path / "empty.txt"
    empty.write_text("，。\n", encoding="utf-8")
    result = _run("search", "--store", store, "--file", str(empty))
    assert result.exit_code == 1 and f"{empty}: no words to fingerprint" in result.output
    result = _run("delete", "b", "b", "--store", store)
    assert result.exit_code == 0 and "deleted 1, not found 0" in result.stderr
    result = _run("sample", str(records / "x"))
    assert result.exit_code == 1 and "cannot write the sample into" in result.output and "Traceback" not in result.output


def test_the_first_five_rejects_are_shown_the_rest_only_written(tmp_path: Path) -> None:
    records = tmp_path / "bad.jsonl"
    records.write_text("".join(f"{{broken {i}\n" for i in range(7)), encoding="utf-8")
    result = _run("index", str(records), "--store", str(tmp_path / "store"), "--rejects", str(tmp_path / "r.jsonl"))
    shown = [line for line in result.stderr.splitlines() if line.startswith("rejected ") and "malformed JSON" in line]
    assert result.exit_code == 1 and [line.split(":")[1] for line in shown] == ["1", "2", "3", "4", "5"]
    assert len(reject_rows(tmp_path / "r.jsonl")) == 7


def test_a_search_of_a_store_without_levels_says_why_it_finds_no_partial_copy(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    assert _run("index", SAMPLE, "--store", store, "--levels", "document").exit_code == 0
    text = next(json.loads(line)["text"] for line in open(SAMPLE, encoding="utf-8")
                if json.loads(line)["id"] == "zh-man:man8/nmbd.8#3~paragraph-deleted")
    result = _run("search", "--store", store, "--text", text)
    assert result.exit_code == 0 and "none of the store's 42 documents was stored with its levels" in result.stderr
    assert _run("index", SAMPLE, "--store", store).exit_code == 0  # with levels: found, and nothing to say
    result = _run("search", "--store", store, "--text", text, "--json")
    assert result.stdout and "stored with its levels" not in result.stderr
