"""Reading records: every bad item becomes a reject that says where and why."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.sources import Fields, Record, Reject, content_id, from_mapping, read_jsonl, read_paths


def _write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.write_bytes if isinstance(data, bytes) else lambda d: path.write_text(d, encoding="utf-8"))(data)
    return path


def test_jsonl_with_malformed_lines_accounts_for_every_line(tmp_path: Path) -> None:
    f = _write(tmp_path / "in.jsonl", '{"id": 1, "text": "甲"}\n{broken\n\n[1, 2]\n{"id": "x", "body": "乙"}\n{"text": ["list"]}\n{"text": "丙", "title": "标题"}\n')
    items = list(read_paths([f]))
    assert [type(i).__name__ for i in items] == ["Record", "Reject", "Reject", "Reject", "Reject", "Record"]
    assert items[0] == Record("甲", f"{f}:1", "1", None)
    assert items[1].source == f"{f}:2" and "malformed JSON" in items[1].reason
    assert "expected a JSON object" in items[2].reason
    assert "no 'text' field" in items[3].reason and items[3].id == "x"
    assert "should be text, got a list" in items[4].reason
    assert items[5].title == "标题" and items[5].key == content_id("丙", "标题")


def test_fields_are_configurable(tmp_path: Path) -> None:
    f = _write(tmp_path / "in.jsonl", '{"doc": "a1", "body": "正文", "headline": "题"}\n')
    (item,) = read_paths([f], Fields(text="body", title="headline", id="doc"))
    assert item == Record("正文", f"{f}:1", "a1", "题")


def test_csv(tmp_path: Path) -> None:
    f = _write(tmp_path / "in.csv", 'id,title,text\n1,标题,"正文，带逗号"\n2,,\n')
    items = list(read_paths([f]))
    assert items[0] == Record("正文，带逗号", f"{f}:2", "1", "标题")
    assert isinstance(items[1], Record) and items[1].text == ""  # empty text is rejected later, by the fingerprinter


def test_folder_walk_uses_paths_relative_to_the_id_base_as_ids(tmp_path: Path) -> None:
    _write(tmp_path / "docs" / "a.txt", "文本甲")
    _write(tmp_path / "docs" / "sub" / "b.html", "<p>文本乙</p>")
    _write(tmp_path / "docs" / ".hidden.txt", "不读")
    _write(tmp_path / "docs" / "c.bin", b"\x00\x01")
    _write(tmp_path / "docs" / "d.txt", b"\x00\x01binary")
    items = list(read_paths([tmp_path / "docs", tmp_path / "missing"], id_base=tmp_path / "docs"))
    records = [i for i in items if isinstance(i, Record)]
    rejects = [i for i in items if isinstance(i, Reject)]
    assert [r.id for r in records] == ["a.txt", "sub/b.html"]
    assert records[1].text == "文本乙"
    reasons = {Path(r.source).name: r.reason for r in rejects}
    assert "unsupported file type" in reasons["c.bin"]
    assert "binary" in reasons["d.txt"]
    assert "no such file" in reasons["missing"]


def test_a_file_has_one_id_however_it_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "docs" / "sub" / "b.txt", "文本乙")
    _write(tmp_path / "other" / "c.txt", "文本丙")
    (tmp_path / "link").symlink_to(tmp_path / "docs")
    monkeypatch.chdir(tmp_path)
    named = [Path("docs"), Path("docs/sub"), Path("docs/sub/b.txt"), Path("./docs/../docs/sub/b.txt"),
             tmp_path / "docs" / "sub" / "b.txt", tmp_path / "docs"]
    ids = {r.id for p in named for r in read_paths([p]) if isinstance(r, Record)}
    assert ids == {"docs/sub/b.txt"}
    # Relative to another base, and from inside the folder: the same rule.
    assert [r.id for r in read_paths([Path("docs")], id_base=Path("docs/sub"))] == ["b.txt"]
    monkeypatch.chdir(tmp_path / "docs")
    assert [r.id for r in read_paths([Path("sub/b.txt"), Path(".")])] == ["sub/b.txt"] * 2
    # Outside the base: the absolute path; through a linked folder: the path as the user sees it.
    assert [r.id for r in read_paths([tmp_path / "other" / "c.txt"])] == [(tmp_path / "other" / "c.txt").as_posix()]
    assert [r.id for r in read_paths([Path("sub/b.txt")], id_base=tmp_path / "link")] == ["sub/b.txt"]
    # A collection's records keep their own ids (or content ids): not the file's path.
    _write(tmp_path / "docs" / "in.jsonl", '{"id": "r1", "text": "甲"}\n{"text": "乙"}\n')
    assert [r.key for r in read_paths([Path("in.jsonl")])] == ["r1", content_id("乙")]


def test_content_ids_are_stable_and_distinct() -> None:
    assert content_id("正文") == content_id("正文") != content_id("正文", "题")
    assert len(content_id("x")) == 20


def test_over_long_jsonl_line_is_skipped_and_the_next_one_read(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import io

    from simdup_es import sources

    monkeypatch.setattr(sources, "MAX_LINE_BYTES", 64)
    monkeypatch.setattr(sources, "_SKIP_CHUNK", 7)  # the rest of the long line in several reads
    long = b'{"text": "' + "长".encode() * 100 + b'"}\n'
    data = b'{"text": "\xe7\x94\xb2"}\n' + long + b'{"text": "\xe4\xb9\x99"}\n' + long.rstrip(b"\n")
    items = list(sources.read_jsonl(io.BytesIO(data), "in", Fields()))
    assert [type(i).__name__ for i in items] == ["Record", "Reject", "Record", "Reject"]
    assert [i.text for i in items if isinstance(i, Record)] == ["甲", "乙"]
    assert items[1].source == "in:2" and "longer than" in items[1].reason and items[3].source == "in:4"


def test_lone_surrogate_escapes_become_replacement_characters(tmp_path: Path) -> None:
    src = tmp_path / "a.jsonl"
    src.write_text('{"id": "x\\udc00", "text": "甲\\ud800乙", "title": "\\ud83d\\ude00"}\n', encoding="utf-8")
    (record,) = read_paths([src])
    assert isinstance(record, Record)
    assert (record.id, record.text, record.title) == ("x\ufffd", "甲\ufffd乙", "\U0001f600")


_JSON_TEXT = st.text(st.characters(codec=None, categories=None), max_size=12) | st.sampled_from(["甲\ud800乙", "\\ud800"])
_LONE = re.compile("[\ud800-\udfff]")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.fixed_dictionaries({"id": _JSON_TEXT, "text": _JSON_TEXT},
                                      optional={"title": _JSON_TEXT | st.none()}), max_size=5),
       st.booleans())
def test_jsonl_records_are_the_lines_each_read_as_a_mapping(records: list[dict], ascii_only: bool) -> None:
    """Lines without a surrogate escape skip the surrogate scan and read the same as with it."""
    # A lone surrogate can only be written escaped (UTF-8 cannot hold it).
    lines = [json.dumps(r, ensure_ascii=ascii_only or bool(_LONE.search(json.dumps(r, ensure_ascii=False))))
             .encode("utf-8") + b"\n" for r in records]
    got = list(read_jsonl(iter(lines), "f", Fields()))
    assert got == [from_mapping(json.loads(line), Fields(), f"f:{n}") for n, line in enumerate(lines, 1)]


def test_a_number_past_the_int_digit_limit_is_one_reject_and_reading_goes_on(tmp_path: Path) -> None:
    huge = "9" * 5000  # Python refuses to convert more than 4,300 digits (sys.get_int_max_str_digits)
    f = _write(tmp_path / "in.jsonl", f'{{"text": "甲"}}\n{{"text": "乙", "n": {huge}}}\n{{"id": {huge}, "text": "丙"}}\n'
                                      '{"text": "丁"}\n')
    items = list(read_paths([f]))
    assert [type(i).__name__ for i in items] == ["Record", "Reject", "Reject", "Record"]
    assert [i.text for i in items if isinstance(i, Record)] == ["甲", "丁"]
    assert items[1].source == f"{f}:2" and "more than 4300 digits" in items[1].reason
    assert "write it as a string" in items[1].reason and "set_int_max_str_digits" not in items[1].reason


def test_malformed_json_names_the_column_where_the_line_went_wrong(tmp_path: Path) -> None:
    f = _write(tmp_path / "in.jsonl", '{"id": "x", "text":\n{"id": "y", "text": "ab\n{"a": 1}}\n')
    reasons = [i.reason for i in read_paths([f]) if isinstance(i, Reject)]
    # The line's own newline must not move the error to "line 2, column 1".
    assert reasons[0] == "malformed JSON: Expecting value at column 20 (the end of the line: the record is cut short)"
    assert reasons[1] == ("malformed JSON: Invalid control character at column 24 (the end of the line: the record "
                          "is cut short)")  # the string runs into the newline
    assert reasons[2] == "malformed JSON: Extra data at column 9"


def test_a_null_text_field_is_called_null_not_missing() -> None:
    item = from_mapping({"id": "n1", "text": None}, Fields(), "in.jsonl:3")
    assert isinstance(item, Reject) and item.id == "n1"
    assert item.reason == "field 'text' is null: give the record a text (or choose another field with --text-field)"
    missing = from_mapping({"id": "n2"}, Fields(), "in.jsonl:4")
    assert isinstance(missing, Reject) and "no 'text' field" in missing.reason


def test_a_document_is_titled_by_its_own_title_never_its_file_name(tmp_path: Path) -> None:
    """An HTML page or a Markdown file names itself; a file name is no title (titles weigh in the fingerprint,
    and a copy saved under another name is still a copy)."""
    body = "<p>第一篇文档的正文内容在这里，讲的是今年的工作安排。</p>"
    _write(tmp_path / "page.html", f"<html><head><title>\n 年度 &amp; 总结 </title></head><body><h1>别的</h1>{body}</body></html>")
    _write(tmp_path / "heading.html", f"<html><body><h1>只有<b>一级</b>标题</h1>{body}</body></html>")
    _write(tmp_path / "bare.html", f"<html><head><title>  </title></head><body>{body}</body></html>")
    _write(tmp_path / "notes.md", "前言\n\n# 工作 安排 #\n\n## 细节\n\n正文。\n")
    _write(tmp_path / "plain.txt", "# 不是标题：纯文本\n正文。\n")
    titles = {Path(r.source).name: r.title for r in read_paths([tmp_path], id_base=tmp_path) if isinstance(r, Record)}
    assert titles == {"page.html": "年度 & 总结", "heading.html": "只有一级标题", "bare.html": None,
                      "notes.md": "工作 安排", "plain.txt": None}
    _write(tmp_path / "主机名.txt", (tmp_path / "plain.txt").read_text(encoding="utf-8"))
    (a, b) = (r for r in read_paths([tmp_path / "plain.txt", tmp_path / "主机名.txt"]) if isinstance(r, Record))
    assert (a.text, a.title) == (b.text, b.title)


def test_csv_with_a_quote_never_closed_or_a_row_of_the_wrong_width_says_so(tmp_path: Path) -> None:
    """An unclosed quote used to swallow every later row into one record, silently."""
    f = _write(tmp_path / "q.csv", 'id,text\nc1,"第一行西红柿。\nc2,第二行养猫和狗。\nc3,第三行红烧肉。\n')
    (item,) = read_paths([f])
    assert isinstance(item, Reject) and item.source == f"{f}:2" and "never closed" in item.reason
    f = _write(tmp_path / "w.csv", 'id,text,title\nc1,第一行西红柿。\nc2\nc3,第三行,红烧肉。,x\n"c4","好的文本内容"\n')
    items = list(read_paths([f]))
    assert [(type(i).__name__, i.source) for i in items] == [("Record", f"{f}:2"), ("Reject", f"{f}:3"),
                                                            ("Reject", f"{f}:4"), ("Record", f"{f}:5")]
    assert isinstance(items[1], Reject) and "has 1 fields, the header 3: the 'text' field is missing" in items[1].reason
    assert isinstance(items[2], Reject) and "has 4 fields, the header 3: quote a field" in items[2].reason
    # A quoted field that goes on after its quote is one reject; blank lines keep the line numbers right.
    f = _write(tmp_path / "b.csv", 'id,text\n\nc1,"引用"的内容很多\n\nc2,第二行\n')
    items = list(read_paths([f]))
    assert [(type(i).__name__, i.source) for i in items] == [("Reject", f"{f}:3"), ("Record", f"{f}:5")]
