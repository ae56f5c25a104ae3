"""The simdup command line: output, summaries and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import simdup_es.matrix as matrix_module
from simdup_es.cli import main
from simdup_es.text import unify
from tests._data import FIXTURES, reject_rows


def test_every_command_has_help() -> None:
    runner = CliRunner()
    stack = [((), main)]
    while stack:
        path, cmd = stack.pop()
        result = runner.invoke(main, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Usage:" in result.output
        for name, sub in getattr(cmd, "commands", {}).items():
            stack.append(((*path, name), sub))


def test_every_command_taking_k_accepts_the_range_every_store_answers_in_the_same_words() -> None:
    import click

    options = [next(p for p in main.commands[name].params if p.name == "k")
               for name in ("search", "report", "serve", "compare", "groups")]
    assert all(isinstance(o.type, click.IntRange) and (o.type.min, o.type.max) == (0, 7) and o.default == 3
               for o in options)
    assert len({o.help for o in options}) == 1 and "0 to 7" in str(options[0].help)
    result = CliRunner().invoke(main, ["compare", "--text", "a", "b", "-k", "8"])
    assert result.exit_code == 2 and "0<=x<=7" in result.output


def test_fingerprint_jsonl_counts_every_record(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    good = (FIXTURES / "zh_article.txt").read_text(encoding="utf-8")
    src.write_text(json.dumps({"id": "g", "text": good}, ensure_ascii=False) + '\n{oops\n{"id": "e", "text": "  "}\n', encoding="utf-8")
    rejects = tmp_path / "rejects.jsonl"
    result = CliRunner().invoke(main, ["fingerprint", str(src), "--rejects", str(rejects)])
    assert result.exit_code == 1
    (line,) = [json.loads(x) for x in result.stdout.splitlines()]
    assert line["id"] == "g" and len(line["fingerprint"]) == 16 and len(line["blocks"]) == 8
    # what a writer puts in a document: the index's fields, blocks as the same hex terms
    simdup = line["simdup"]
    assert simdup["fp"] == line["fingerprint"] and simdup["version"] == line["version"]
    assert [simdup[f"b{j}"] for j in range(8)] == line["blocks"] and all(len(b) == 2 for b in line["blocks"])
    assert simdup["unified"] == unify(good)  # what a search's judge reads instead of unifying the text again
    assert "fingerprinted 1, rejected 2, total 3" in result.stderr
    reasons = reject_rows(rejects)
    assert [r["source"] for r in reasons] == [f"{src}:2", f"{src}:3"]


def test_compare_files_and_text() -> None:
    a, b = str(FIXTURES / "zh_article.txt"), str(FIXTURES / "zh_article_tw.txt")
    result = CliRunner().invoke(main, ["compare", a, b, "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["near_duplicate"] is True and out["distance"] <= 3
    result = CliRunner().invoke(main, ["compare", "，。", "正文"])
    assert result.exit_code == 1 and "no words" in result.output and "Traceback" not in result.output


def test_compare_by_hand_takes_more_similar_sentence_pairs_than_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's limit on similar sentence pairs (matrix.bounded_pairs) is not the command's: compared whole."""
    monkeypatch.setattr(matrix_module, "MAX_CANDIDATES", 2_500)
    repeated = "这是一个被重复很多次的句子。" * 51
    result = CliRunner().invoke(main, ["compare", "--json", "--text", repeated, repeated])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["comparison"]["pairs"]) == 51 * 51


def test_compare_json_gives_sentences_and_pairs_in_the_texts_as_given() -> None:
    """Full-width letters and digits, Traditional script: the JSON points into the texts the user gave, not
    into their unified forms (which the matrix compares)."""
    a = "ＡＢＣ公司發佈了新產品，價格為１００元。\n這款產品的軟體由我們自己開發，支援多種語言。"
    b = "ABC公司发布了新产品，价格为100元。\n这款产品的软件由我们自己开发，支持多种语言。"
    result = CliRunner().invoke(main, ["compare", "--text", a, b, "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    comparison = out["comparison"]
    for text, sentences in ((a, comparison["sentences_a"]), (b, comparison["sentences_b"])):
        assert [s["text"] for s in sentences] == [text[s["start"] : s["end"]] for s in sentences]
        assert "".join(s["text"] for s in sentences).replace("\n", "") == text.replace("\n", "")
    assert comparison["sentences_a"][0]["text"].startswith("ＡＢＣ公司發佈")
    assert comparison["pairs"] and all(a[p["a"][0] : p["a"][1]] and b[p["b"][0] : p["b"][1]] for p in comparison["pairs"])
    first = next(p for p in comparison["pairs"] if p["i"] == 0)
    assert a[first["a"][0] : first["a"][1]] == comparison["sentences_a"][0]["text"]
    assert out["spans"]["a"] and a[out["spans"]["a"][0]["start"]] == "Ａ"


def test_compare_says_why_marked_sentences_are_not_a_copy() -> None:
    """A 10-character sentence, 8 characters alike, in two longer texts: the matrix marks the pair, the judge counts
    no passage (it is shorter than a short passage needs)."""
    a = "你好世界今天天气很好。所有接受文件名作为参数的命令希望文件名是三种形式之一。"
    b = "你好世界今天天气不错。如果您想要更多的安装过程相关信息请看第六章的内容说明。"
    result = CliRunner().invoke(main, ["compare", "--text", a, b])
    assert result.exit_code == 0 and "-> not copies" in result.stdout, result.output
    assert "share too little rare text to count as copied: a passage counts from 30 copied units" in result.stderr
    copied = CliRunner().invoke(main, ["compare", str(FIXTURES / "zh_article.txt"), str(FIXTURES / "zh_article_tw.txt")])
    assert copied.exit_code == 0 and "share too little" not in copied.output
    # One sentence of the article, all of A: a copied sentence on both sides.
    article = (FIXTURES / "zh_article.txt").read_text(encoding="utf-8")
    sentence = next(s for line in article.splitlines() for s in line.split("。")
                    if 25 <= sum("\u4e00" <= ch <= "\u9fff" for ch in s) <= 50) + "。"
    one = CliRunner().invoke(main, ["compare", "--text", sentence, article, "--json"])
    got = json.loads(one.stdout)
    assert got["kind"] == "partial" and got["copied_a"] == 1.0 and 0 < got["copied_b"] < 0.1 and got["spans"]["b"]
    assert got["common_a"] == got["common_b"] == 0 and got["common"] == {"a": [], "b": []}  # no store: nothing common
    one = CliRunner().invoke(main, ["compare", "--text", sentence, article])
    assert "-> a partial copy (A: 100% copied; B: " in one.stdout, one.output


def test_copied_spans_take_the_stop_or_bracket_that_closes_a_sentence(tmp_path: Path) -> None:
    """A whole copy (Traditional against Simplified) is copied to its last character: the ')' after the last
    unit, and every 。 of a sentence copied to its end."""
    import importlib.resources

    sample = importlib.resources.files("simdup_es.data").joinpath("sample.jsonl").read_text(encoding="utf-8")
    docs = {d["id"]: d["text"] for d in map(json.loads, sample.splitlines())}
    a, b = docs["zh-man-page-tw:man3/flockfile.3"], docs["zh-man-page:man3/flockfile.3"]
    result = CliRunner().invoke(main, ["compare", "--text", a, b, "--json"])
    assert result.exit_code == 0, result.output
    spans = json.loads(result.stdout)["spans"]
    assert a.rstrip().endswith(")") and spans["a"][-1]["end"] == len(a.rstrip())
    covered = {i for span in spans["a"] for i in range(span["start"], span["end"])}
    assert all(i in covered for i, c in enumerate(a) if c == "。" and i - 1 in covered)


def test_compare_judges_as_search_does(tmp_path: Path) -> None:
    """A whole copy is a near-duplicate whatever its distance, a pasted third a partial copy: compare says what
    search would (it used to call the first "not near-duplicates", distance 8 > k)."""
    text = (FIXTURES / "zh_article.txt").read_text(encoding="utf-8")
    lines = text.split("\n")
    cases = {"whole.txt": ("\n".join(line for i, line in enumerate(lines) if i % 6), "near-duplicate"),
             "third.txt": ((FIXTURES / "zh_other.txt").read_text(encoding="utf-8") + "\n"
                           + "\n".join(lines[: len(lines) // 3]), "partial"),
             "other.txt": ((FIXTURES / "zh_other.txt").read_text(encoding="utf-8"), None)}
    for name, (copy, kind) in cases.items():
        (tmp_path / name).write_text(copy, encoding="utf-8")
        result = CliRunner().invoke(main, ["compare", str(FIXTURES / "zh_article.txt"), str(tmp_path / name), "--json"])
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
        assert out["kind"] == kind and out["near_duplicate"] == (kind == "near-duplicate"), (name, out["distance"])
        assert (out["copied_a"] > 0) == (kind is not None)
    assert json.loads(CliRunner().invoke(main, ["compare", str(FIXTURES / "zh_article.txt"), str(tmp_path / "whole.txt"),
                                                "--json"]).stdout)["distance"] > 3
    shown = CliRunner().invoke(main, ["compare", str(FIXTURES / "zh_article.txt"), str(tmp_path / "third.txt")])
    assert "-> a partial copy (" in shown.stdout


def test_compare_unwrap_reads_a_hard_wrapped_copy_as_its_sentences(tmp_path: Path) -> None:
    """A PDF's text breaks lines inside sentences: the copy is whole either way, but its sentences (and the
    similarity, which compares sentences) are the original's only with --unwrap, which compare suggests."""
    text = (FIXTURES / "zh_article.txt").read_text(encoding="utf-8")
    wrapped = tmp_path / "wrapped.txt"
    wrapped.write_text("\n".join(line[i : i + 30] for line in text.split("\n") for i in range(0, max(len(line), 1), 30)),
                       encoding="utf-8")
    args = ["compare", str(FIXTURES / "zh_article.txt"), str(wrapped)]
    plain, unwrapped = (CliRunner().invoke(main, [*args, *extra, "--json"]) for extra in ([], ["--unwrap"]))
    assert plain.exit_code == unwrapped.exit_code == 0, plain.output
    before, after = (json.loads(r.stdout) for r in (plain, unwrapped))
    assert before["kind"] == after["kind"] == "near-duplicate"
    assert before["comparison"]["scores"]["similarity_b"] < 0.7 < 0.9 < after["comparison"]["scores"]["similarity_b"]
    shown = CliRunner().invoke(main, args)
    assert "wrapped.txt looks hard-wrapped" in shown.stderr and "--unwrap" in shown.stderr
    assert "hard-wrapped" not in CliRunner().invoke(main, [*args, "--unwrap"]).stderr


def test_compare_missing_file_is_a_clear_error() -> None:
    result = CliRunner().invoke(main, ["compare", "nope/a.txt", "b"])
    assert result.exit_code == 1 and "nope/a.txt: no such file" in result.output


def test_idf_build(tmp_path: Path) -> None:
    out = tmp_path / "idf.txt"
    result = CliRunner().invoke(main, ["idf", "build", str(FIXTURES), "-o", str(out)])
    assert result.exit_code == 0, result.output
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# simdup-es idf table: N=") and len(lines) > 50
    fp = CliRunner().invoke(main, ["fingerprint", "--idf", str(out), "--text", "相似文档检测"])
    assert fp.exit_code == 0 and json.loads(fp.stdout)["version"] != json.loads(
        CliRunner().invoke(main, ["fingerprint", "--text", "相似文档检测"]).stdout)["version"]


def test_oversized_file_is_rejected_by_name_and_the_run_goes_on(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes("大文件的内容。".encode() * 2_500_000)  # 52 MB
    small = tmp_path / "small.txt"
    small.write_text((FIXTURES / "zh_other.txt").read_text(encoding="utf-8"), encoding="utf-8")
    result = CliRunner().invoke(main, ["fingerprint", str(big), str(small)])
    assert result.exit_code == 1
    assert f"rejected {big}: document is 52.5 MB, over the 10.0 MB limit" in result.stderr
    assert len(result.stdout.splitlines()) == 1 and "fingerprinted 1, rejected 1, total 2" in result.stderr


def test_compare_tells_a_mistyped_path_from_text(tmp_path: Path) -> None:
    """Text with a slash is text; a path in an existing folder, or with a document's suffix, is a missing file."""
    a, b = "会议时间改为2024/05/06下午三点，请大家准时参加。", "会议时间改为2024/05/07下午三点，请大家准时参加。"
    result = CliRunner().invoke(main, ["compare", a, b, "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["kind"] == "near-duplicate", result.output
    (tmp_path / "资料").mkdir()
    for missing in (str(tmp_path / "资料" / "甲"), "nope/a.txt"):
        result = CliRunner().invoke(main, ["compare", missing, a])
        assert result.exit_code == 1 and f"{missing}: no such file (give --text" in result.output
    result = CliRunner().invoke(main, ["compare", "--text", "nope/a.txt 的文本", "nope/a.txt 的文本", "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["distance"] == 0
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "资料"), a])
    assert result.exit_code == 1 and "资料: a folder, not a document" in result.output
