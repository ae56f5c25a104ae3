"""Tokens and weights (SPEC §3)."""

from __future__ import annotations

import math

import pytest

from simdup_es.config import FingerprintParams
from simdup_es.errors import ConfigError
from simdup_es.simhash import token_hash
from simdup_es.sentences import split_sentences
from simdup_es.text import unify
from simdup_es.tokens import (
    IdfTable,
    Lexicon,
    Tokenizer,
    build_idf,
    dictionary_pos,
    dictionary_words,
    format_idf,
    is_content_word,
    weigh,
)
from tests._data import fixture_text


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer()


@pytest.fixture(scope="module")
def idf() -> IdfTable:
    return IdfTable.load()


def test_words_drop_punctuation_and_stop_words_and_keep_latin(tokenizer: Tokenizer) -> None:
    words = tokenizer.words("我们使用 elasticsearch 检索重复文档，而且速度很快！")
    assert "elasticsearch" in words and "检索" in words and "文档" in words
    assert not {"，", "！", " ", "我们", "而且"} & set(words)


def test_dictionary_words_are_jiebas_words_without_hmm(tokenizer: Tokenizer) -> None:
    # jieba-rs must cut exactly as jieba does without its HMM: same dictionary, same route.
    jieba = tokenizer._segmenter()
    sentences = [
        s.text
        for name in ("zh_article.txt", "zh_other.txt", "zh_article_tw.txt", "en_article.txt")
        for s in split_sentences(unify(fixture_text(name)))
    ]
    assert len(sentences) > 100
    for sentence in sentences:
        expected = [t for t in jieba.lcut(sentence, HMM=False) if is_content_word(t)]
        assert dictionary_words(sentence) == expected, sentence
    mixed = "我们使用 elasticsearch 检索"
    assert tokenizer.words(mixed, hmm=False) == dictionary_words(mixed) == ["使用", "elasticsearch", "检索"]
    assert dictionary_words("") == [] and dictionary_words("。，！") == []


def test_own_jieba_instance_not_the_singleton(tokenizer: Tokenizer) -> None:
    import jieba

    assert tokenizer._segmenter() is not jieba.dt


def test_pos_comes_from_the_dictionary() -> None:
    pos = dictionary_pos()
    assert pos["文档"] == 0 and pos["检索"] in (0, 1)  # nouns (n, vn) and verbs
    assert pos["我们"] == 3  # pronoun: a function word


def test_weight_formula(idf: IdfTable) -> None:
    lexicon = Lexicon(FingerprintParams(), idf)
    tokens = ["文档"] * 7 + ["，", "的"] + ["检索"] + ["elasticsearch"]
    hashes, weights = weigh(tokens, lexicon, title_words=frozenset({"检索"}))
    w = {h: x for h, x in zip(hashes, weights)}
    assert len(w) == 3  # punctuation and the stop word are gone
    total = 5 + 1 + 1  # 文档 is capped at 5
    len_min, len_max = 2, len("elasticsearch")
    assert w[token_hash("文档")] == pytest.approx(5 / total * idf.idf["文档"] * (1 + 3 + 0))
    # 检索 is a verbal noun in jieba's dictionary (tag vn -> verb class): POS 2, title 5.
    assert w[token_hash("检索")] == pytest.approx(1 / total * idf.idf["检索"] * (1 + 2 + 0 + 5))
    assert w[token_hash("elasticsearch")] == pytest.approx(
        1 / total * idf.default * (1 + 1 + (13 - len_min) / (len_max - len_min)))


def test_marked_words_weigh_more(idf: IdfTable) -> None:
    doc = ["文档", "检索"]
    plain = dict(zip(*weigh(doc, Lexicon(FingerprintParams(), idf))))
    marked = dict(zip(*weigh(doc, Lexicon(FingerprintParams(marked_words=frozenset({"文档"})), idf))))
    assert marked[token_hash("文档")] > plain[token_hash("文档")]
    assert marked[token_hash("检索")] == plain[token_hash("检索")]


def test_build_and_load_idf(tmp_path) -> None:  # type: ignore[no-untyped-def]
    table, n = build_idf([["a", "b"], ["a"], ["a", "c"], ["d"]])
    assert n == 4
    assert table["a"] == pytest.approx(math.log(4 / 4)) and table["d"] == pytest.approx(math.log(4 / 2))
    path = tmp_path / "idf.txt"
    path.write_text(format_idf(table, n), encoding="utf-8")
    loaded = IdfTable.load(path)
    assert loaded.idf["d"] == pytest.approx(table["d"], abs=1e-6)
    assert loaded.digest != IdfTable.load().digest


def test_bad_idf_files_say_where(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="cannot read IDF table"):
        IdfTable.load(tmp_path / "missing.txt")
    bad = tmp_path / "bad.txt"
    bad.write_text("词 1.5\n坏行没有数字\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="bad.txt:2"):
        IdfTable.load(bad)
