"""Files that are not UTF-8: read in the encoding they are in, or refused with the encodings named; never mojibake."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.charsets import EncodingError, decode_text
from simdup_es.cli import main
from simdup_es.sources import Fields, Record, read_paths
from tests._data import fixture_text

TW = fixture_text("zh_article_tw.txt")  # Traditional: Big5 can hold it, and so can GBK
# cp950 (Big5 as Windows writes it) maps two punctuation bytes to other code points than Python's big5 does.
_CP950 = str.maketrans({"\u2022": "\u2027", "\uff0f": "\u2215"})


def _encoded(folder: Path) -> dict[str, Path]:
    files = {}
    for name, codec in [("utf8", "utf-8"), ("big5", "cp950"), ("gbk", "gbk"), ("utf16", "utf-16"),
                        ("utf16le", "utf-16-le")]:
        files[name] = folder / f"{name}.txt"
        files[name].write_bytes(TW.encode(codec))
    return files


def test_big5_gbk_and_utf16_files_of_one_text_read_as_it_with_one_fingerprint(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    files = _encoded(docs)
    records = list(read_paths([docs], Fields(), id_base=docs))
    assert all(isinstance(r, Record) for r in records), records
    assert {r.text for r in records} == {TW} and sorted(r.id for r in records) == sorted(f"{n}.txt" for n in files)
    result = CliRunner().invoke(main, ["fingerprint", *map(str, files.values()), "--levels", "document"])
    assert result.exit_code == 0, result.output
    prints = {json.loads(line)["fingerprint"] for line in result.stdout.splitlines()}
    assert len(prints) == 1  # one document as far as the store can tell, read from five files
    # Indexed, they are five files with their own ids (their paths), and exact copies of each other.
    store = str(tmp_path / "st")
    indexed = CliRunner().invoke(main, ["index", str(docs), "--store", store, "--id-base", str(docs),
                                        "--rejects", str(tmp_path / "r.jsonl"), "--levels", "document"])
    assert indexed.exit_code == 0, indexed.output
    found = CliRunner().invoke(main, ["search", "--text", TW, "--store", store, "--json", "--no-matrix"])
    assert sorted((h["id"], h["distance"]) for h in map(json.loads, found.stdout.splitlines())) == \
        sorted((f"{n}.txt", 0) for n in files)


def test_a_big5_csv_is_read_in_big5(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    quoted = TW.replace('"', '""')
    path.write_bytes(f'id,text\na,"{quoted}"\n'.encode("cp950"))
    (record,) = read_paths([path])
    assert isinstance(record, Record) and record.id == "a" and record.text == TW


def test_html_reads_its_declared_charset_and_its_title_in_it(tmp_path: Path) -> None:
    page = f"<html><head><meta http-equiv='Content-Type' content='text/html; charset=big5'><title>網頁標題</title>" \
           f"</head><body><p>{TW}</p></body></html>"
    path = tmp_path / "p.html"
    path.write_bytes(page.encode("cp950"))
    (record,) = read_paths([path])
    assert isinstance(record, Record) and record.title == "網頁標題" and record.text.strip() == TW.strip()


@pytest.mark.parametrize(("data", "named"), [
    ("环境 (ENVIRONMENT)".encode("gbk"), "(GB18030 or Big5"),  # two Chinese words: both encodings read them
    (bytes(random.Random(1).choices(range(0x80, 0x100), k=3000)), "no encoding reads it as text"),
])
def test_a_file_whose_encoding_is_unclear_is_a_reject_naming_it(tmp_path: Path, data: bytes, named: str) -> None:
    path = tmp_path / "x.txt"
    path.write_bytes(data)
    (reject,) = read_paths([path])
    assert not isinstance(reject, Record) and named in reject.reason and "convert it to UTF-8" in reject.reason


def test_japanese_and_korean_legacy_encodings_are_not_read_as_chinese() -> None:
    ja = "日本語のテキストです。これはシフトJISで書かれたファイルの例で、漢字とひらがなとカタカナが混ざっています。"
    ko = "한국어 텍스트입니다. 이것은 EUC-KR로 인코딩된 파일의 예입니다. 서울의 날씨는 맑습니다."
    assert decode_text(ja.encode("shift_jis")) == (ja, "cp932")
    assert decode_text(ko.encode("euc_kr"))[0] == ko


_SENTENCES = [s for s in TW.replace("\n", "。").split("。") if len(s) >= 8]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_SENTENCES), min_size=1, max_size=4), st.sampled_from(["cp950", "gb18030", "gbk"]),
       st.sampled_from(["", "see RFC 2119 and ", "版本 2.4："]))
def test_legacy_chinese_is_read_right_or_refused_never_misread(sentences: list[str], codec: str, head: str) -> None:
    text = head + "。".join(sentences)
    try:
        got, _ = decode_text(text.encode(codec))
    except EncodingError:
        return
    assert got.translate(_CP950) == text.translate(_CP950)
