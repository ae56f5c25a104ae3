"""Tokens and weights: TF * IDF * (1 + POS + LEN + MARK + TITLE)."""

from __future__ import annotations

import math
import os
import re
import statistics
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simdup_es.config import FingerprintParams
from simdup_es.errors import ConfigError
from simdup_es.simhash import token_hash
from simdup_es.sentences import split_sentences
from simdup_es.text import unify
from simdup_es.reference import replace_tokens_reference
from simdup_es.tokens import (
    is_content_word,
    _replace_joined,
    _split_compound_rows,
    IdfTable,
    Lexicon,
    HashTable,
    Tokenizer,
    _jieba_dir,
    _pos_class,
    _rust_jieba,
    build_idf,
    dictionary_pos,
    dictionary_words,
    format_idf,
    stop_words,
    weigh,
    weigh_batch,
)
from tests._data import fixture_text


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer()


@pytest.fixture(scope="module")
def python_jieba(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Python jieba, the slow reference jieba-rs is held to."""
    import jieba

    reference = jieba.Tokenizer()
    reference.tmp_dir = str(tmp_path_factory.mktemp("jieba"))
    reference.initialize()
    return reference


@pytest.fixture(scope="module")
def idf() -> IdfTable:
    return IdfTable.load()


def test_words_drop_punctuation_and_stop_words_and_keep_latin(tokenizer: Tokenizer) -> None:
    words = tokenizer.words("我们使用 elasticsearch 检索重复文档，而且速度很快！")
    assert "elasticsearch" in words and "检索" in words and "文档" in words
    assert not {"，", "！", " ", "我们", "而且"} & set(words)


def test_dictionary_words_are_jiebas_words_without_hmm(tokenizer: Tokenizer, python_jieba) -> None:  # type: ignore[no-untyped-def]
    # jieba-rs must cut exactly as jieba does without its HMM: same dictionary, same route.
    jieba = python_jieba
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
    import rjieba

    assert _rust_jieba() is not rjieba._DEFAULT_JIEBA
    # Someone else's word in the module-level instance does not reach ours.
    rjieba.add_word("甲乙丙丁戊", 10**8, "n")
    assert rjieba.cut("甲乙丙丁戊") == ["甲乙丙丁戊"] and tokenizer.segment("甲乙丙丁戊") != ["甲乙丙丁戊"]


def test_python_jiebas_dictionary_is_not_loaded() -> None:
    code = "import sys, simdup_es; simdup_es.fingerprint('我们检索重复文档'); print('jieba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_segmentation_is_python_jiebas_with_hmm_in_chinese(tokenizer: Tokenizer, python_jieba) -> None:  # type: ignore[no-untyped-def]
    # The same dictionary and HMM: the words are Python jieba's (rare characters
    # outside Python jieba's Han range aside, which these texts do not have).
    sentences = [
        s.text
        for name in ("zh_article.txt", "zh_other.txt", "zh_article_tw.txt")
        for s in split_sentences(unify(fixture_text(name)))
    ]
    assert len(sentences) > 100
    sentences += ["tcl_platform(platform) 的值", "用 c++ 和 c# 写的 a.out 占 3.14% 或 50%", "mh-alias 与 wtmp_file_loc"]
    for sentence in sentences:
        assert tokenizer.segment(sentence) == python_jieba.lcut(sentence), sentence


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


@given(
    st.dictionaries(st.text(min_size=1, max_size=6), st.floats(0, 20), max_size=50),
    st.lists(st.text(max_size=6), max_size=20),
)
@settings(max_examples=200, deadline=None)
def test_hash_table_is_a_dict(table: dict[str, float], others: list[str]) -> None:
    hashed = HashTable.of(table, np.float64)
    words = list(table) + others
    assert [hashed.get(w, -1.0) for w in words] == [table.get(w, -1.0) for w in words]
    looked_up = hashed.lookup(np.array([token_hash(w) for w in words], dtype=np.uint64), -1.0)
    assert looked_up.tolist() == [table.get(w, -1.0) for w in words]
    assert len(hashed) == len(table) and all(w in hashed for w in table)


def test_cached_tables_hold_the_files_values(idf: IdfTable) -> None:
    # The slow reference: the files read into dicts, as the tables were before.
    reference_idf: dict[str, float] = {}
    for line in (_jieba_dir() / "analyse" / "idf.txt").read_text(encoding="utf-8").splitlines():
        word, _, value = line.rpartition(" ")
        reference_idf[word.strip().casefold()] = max(0.0, float(value))
    reference_pos = {
        p[0]: _pos_class(p[2])
        for p in map(str.split, (_jieba_dir() / "dict.txt").read_text(encoding="utf-8").splitlines())
        if len(p) >= 3
    }
    assert len(idf.idf) == len(reference_idf) and len(dictionary_pos()) == len(reference_pos)
    words = list(reference_idf)[::50] + list(reference_pos)[::50] + ["elasticsearch", "不是词的词语", "x"]
    hashes = np.array([token_hash(w) for w in words], dtype=np.uint64)
    assert idf.idf.lookup(hashes, idf.default).tolist() == [reference_idf.get(w, idf.default) for w in words]
    assert dictionary_pos().lookup(hashes, -1).tolist() == [reference_pos.get(w, -1) for w in words]
    assert idf.default == statistics.median(reference_idf.values())


def test_tables_are_cached_memory_mapped_and_reread_when_the_file_changes(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SIMDUP_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "idf.txt"
    path.write_text("文档 2.5\n检索 1.5\n", encoding="utf-8")
    first = IdfTable.load(path)
    assert sorted((tmp_path / "cache").iterdir())  # written to the cache folder the user chose
    again = IdfTable.load(path)
    assert isinstance(again.idf.keys.base, np.memmap) or isinstance(again.idf.keys, np.memmap)
    assert again.idf["文档"] == first.idf["文档"] == 2.5 and again.digest == first.digest
    path.write_text("文档 3.5\n检索 1.5\n", encoding="utf-8")
    os.utime(path, ns=(1, 1))
    changed = IdfTable.load(path)
    assert changed.idf["文档"] == 3.5 and changed.digest != first.digest


def test_stop_words_are_stopwords_isos_and_cached(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import stopwordsiso

    reference = frozenset(w.casefold() for w in stopwordsiso.stopwords(["zh", "en"]))
    monkeypatch.setenv("SIMDUP_CACHE", str(tmp_path))
    stop_words.cache_clear()
    try:
        assert stop_words() == reference and "的" in reference and "the" in reference
        assert [p.suffix for p in tmp_path.iterdir()] == [".txt"]
        stop_words.cache_clear()
        assert stop_words() == reference  # from the cached list
    finally:
        stop_words.cache_clear()


def test_weights_survive_a_full_lexicon_cache(idf: IdfTable, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    tokens = ["文档"] * 3 + ["检索", "elasticsearch", "，"]
    expected = weigh(tokens, Lexicon(FingerprintParams(), idf))
    lexicon = Lexicon(FingerprintParams(), idf)
    monkeypatch.setattr(Lexicon, "MAX_ENTRIES", 3)
    weigh_batch([["文档", "检索", "其他", "词语"]], lexicon)  # fills the cache past the bound
    assert len(lexicon.cache) > 3
    hashes, weights, _ = weigh_batch([tokens], lexicon)
    assert sorted(zip(hashes.tolist(), weights.tolist())) == sorted(zip(*expected))
    assert len(lexicon.cache) <= len(set(tokens))  # cleared, then refilled


_PIECES = st.sampled_from(["a", ".", "out", "-", "3", "x_y", "，", "文档", "\x00", "\x01"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab.-\x00\x01文", min_size=1, max_size=4), max_size=40),
       st.dictionaries(st.text(alphabet="ab.-\x00\x01文", min_size=2, max_size=4),
                       st.lists(_PIECES, min_size=2, max_size=3),
                       max_size=4))
def test_replacing_tokens_in_one_string_is_the_plain_loop(tokens: list[str], split: dict[str, list[str]]) -> None:
    tokens = tokens + list(split)[:2]  # some keys occur, next to each other too
    assert _replace_joined(tokens, split) == replace_tokens_reference(tokens, split)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-1, 6), max_size=40),
       st.dictionaries(st.integers(-12, -2), st.lists(st.integers(-1, 6), min_size=2, max_size=4), max_size=4),
       st.data())
def test_splitting_compound_rows_is_replacing_each_by_its_pieces(tokens: list[int], compounds: dict[int, list[int]],
                                                                 data: st.DataObject) -> None:
    # Rows (-1: no content word) and compounds' codes (-12..-2) anywhere among them, the
    # same piece twice in one compound or in several.
    for c in compounds:
        for _ in range(data.draw(st.integers(0, 3))):
            tokens.insert(data.draw(st.integers(0, len(tokens))), c)
    rows, moved = _split_compound_rows(np.array(tokens, dtype=np.int64), {c: tuple(p) for c, p in compounds.items()})
    assert rows.tolist() == replace_tokens_reference(tokens, compounds)
    if moved is None:
        assert not any(t in compounds for t in tokens)
    else:  # where each token, and the end, went
        assert moved.tolist() == [len(replace_tokens_reference(tokens[:k], compounds)) for k in range(len(tokens) + 1)]


_WORDS = ["文档", "检索", "我们", "elasticsearch", "a.out", "out", "区块链", "张三丰", "x_y", "3.14", "，", "的"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), max_size=12), st.sets(st.sampled_from(_WORDS)),
       st.tuples(*[st.floats(0, 10, allow_subnormal=False)] * 4))
def test_lexicon_values_are_each_words_own(words: list[str], marked: set[str],
                                           boosts: tuple[float, float, float, float]) -> None:
    # Words added together (a batch's new words, a compound's pieces with them) get the
    # values each gets alone: 1 + POS + MARK in the order of the formula, IDF, hash.
    noun, verb, other, mark = boosts
    params = FingerprintParams(noun_boost=noun, verb_boost=verb, other_boost=other, mark_boost=mark,
                               marked_words=frozenset(marked))
    idf = IdfTable.load()
    together = Lexicon(params, idf)
    together.add(words)
    pos = dictionary_pos()
    for w in words:
        alone = Lexicon(params, idf)
        alone.add([w])
        assert together.entry(w) == alone.entry(w)
        if together.entry(w) is not None:
            p = pos.get(w, -1)
            p = p if p >= 0 else (2 if w.isascii() else 0)
            expected = 1.0 + (noun, verb, other, 0.0)[p] + (mark if w in marked else 0.0)
            assert together.entry(w) == (idf.idf.get(w, idf.default), expected, token_hash(w))


def _add_reference(lexicon: Lexicon, tokens: list[str]) -> None:
    """Lexicon.add, the plain loop over every token (and the pieces of compounds)."""
    from simdup_es.tokens import _GLUED_TOKENS, WORDLIKE, _pieces

    glued = re.compile(_GLUED_TOKENS.pattern.strip("^$"))  # for fullmatch on one token
    cache, stop = lexicon.cache, stop_words()
    words: dict[str, None] = {}
    compounds = []
    queue = list(tokens)
    for t in queue:  # which grows by the pieces of compounds
        if t in cache or t in words:
            continue
        if glued.fullmatch(t) and (pieces := _pieces(t)) is not None:
            compounds.append((t, pieces))
            queue += pieces
        if t not in stop and WORDLIKE.search(t):
            words[t] = None
        else:
            cache[t] = -1
    if words:
        lexicon._add_words(list(words))
    for t, pieces in compounds:
        lexicon._compound_rows[t] = cache[t]
        code = cache[t] = -2 - len(lexicon.pieces)
        lexicon.pieces[code] = tuple(cache[p] for p in pieces)


def _values(lexicon: Lexicon, token: str) -> object:
    """What the cache says of a token, whatever the numbers of its rows: a content word's
    values, None, or a compound's own values and those of its pieces."""
    def of(row: int) -> object:
        return None if row == -1 else (lexicon.idf_of[row].item(), lexicon.boost_of[row].item(),
                                       lexicon.len_of[row].item(), lexicon.hash_of[row].item())

    row = lexicon.cache[token]
    if row <= -2:
        return of(lexicon._compound_rows[token]), tuple(map(of, lexicon.pieces[row]))
    return of(row)


_LEXICON_TOKENS = st.lists(st.sampled_from(["文档", "检索", "的", "，", " ", "elasticsearch", "a", "3.14", "a.out", "out",
                                            ".", "mh-alias", "-f", "c++", "x_y", "50%", "\n", "a.b\nc.d", "c.d", ""])
                           | st.text(alphabet="ab.-_%\n文", max_size=5) | st.text(max_size=4), max_size=30)


@settings(max_examples=200, deadline=None)
@given(st.lists(_LEXICON_TOKENS, max_size=4), st.lists(_LEXICON_TOKENS, max_size=3))
@example(docs=[["a.b\nc.d", "c.d", "x_y"]], before=[])  # a line of a token is another token
@example(docs=[["a.b\nc.d", "a.out"]], before=[["c.d", "out"]])
def test_lexicon_rows_are_those_of_adding_one_token_at_a_time(docs: list[list[str]], before: list[list[str]]) -> None:
    # Batches of tokens, some cached before (and compounds among them, some pieces
    # new, some cached), get rows that stand for the values the plain loop gives.
    idf = IdfTable.load()
    fast, plain = Lexicon(FingerprintParams(), idf), Lexicon(FingerprintParams(), idf)
    for tokens in before:
        fast.add(tokens)
        _add_reference(plain, tokens)
    rows = fast.rows(docs)
    for tokens in docs:
        for t in tokens:
            _add_reference(plain, [t])
    assert [list(r) for r in rows] == [[fast.cache[t] for t in doc] for doc in docs]
    assert {t: _values(fast, t) for t in fast.cache} == {t: _values(plain, t) for t in plain.cache}
