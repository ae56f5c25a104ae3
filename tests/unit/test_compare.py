"""The comparison matrix (simdup_es.compare)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdup_es.common as common_module
import simdup_es.compare as compare_module
from simdup_es.compare import CachedSegmenter, CompareParams, Comparison, Limits, compare, word_score
import simdup_es.matrix as matrix_module
import simdup_es.sentences as sentences_module
from simdup_es.matrix import lcs_matrix
from simdup_es.errors import ConfigError, TooManyPairs
from simdup_es.reference import lcs_length_reference
from simdup_es.text import unify
from simdup_es.thesaurus import Thesaurus, cilin_thesaurus
from simdup_es.tokens import dictionary_words
from tests._data import fixture_text

Segment = Callable[[str], Sequence[str]]

ARTICLE = """近年来,随着互联网的快速发展,网络上的文本数据呈现爆炸式增长。
大量内容被反复转载和修改,给信息检索和版权保护带来了很大的困难。
为了解决这个问题,研究人员提出了许多相似文本检测的方法。
其中,基于指纹的方法因为速度快、占用空间小而被广泛使用。
局部敏感哈希能够把相似的文档映射到相近的指纹上。
然而,指纹只能判断两篇文档整体是否相似,却无法指出具体哪些句子被复制。
我们应该采用更好的方法来提高工作效率。
本文提出一种结合句子比对矩阵的新方法,能够准确标出被抄袭的句子。
实验表明,该方法在真实数据上取得了较高的准确率和召回率。"""

# The same article with the seventh sentence rewritten with Cilin synonyms:
# 我们/咱们, 应该/应当, 采用/采取, 方法/办法 (p = 0.78, w = 1.0).
REWRITTEN = ARTICLE.replace("我们应该采用更好的方法来提高工作效率。", "咱们应当采取更好的办法来提高工作效率。")

UNRELATED = """今天早上下了一场大雨,街道上到处都是积水。
小王骑着自行车去上班,结果在路口摔了一跤。
幸好他只是擦破了一点皮,没有什么大问题。
中午的时候,太阳出来了,天空变得非常晴朗。
下班以后,他和朋友们一起去吃了火锅。"""

ENGLISH = """The quick growth of the web has produced a flood of copied and lightly edited text.
Search engines and archives must find such near-duplicates quickly and reliably.
Fingerprints such as SimHash find candidate pairs among millions of documents.
A sentence-level comparison then shows which passages were actually copied.
This two-stage design keeps both speed and precision high."""

_WORDLIKE = re.compile(r"[^\W_]")


@pytest.fixture(scope="module")
def thesaurus() -> Thesaurus:
    return cilin_thesaurus()


def check_offsets(a: str, b: str, result: Comparison) -> None:
    for s in result.sentences_a:
        assert a[s.start : s.end] == s.text
    for s in result.sentences_b:
        assert b[s.start : s.end] == s.text
    for p in result.pairs:
        assert a[p.a_start : p.a_end] == result.sentences_a[p.i].text
        assert b[p.b_start : p.b_end] == result.sentences_b[p.j].text


# ---------------------------------------------------------------- parameters


def test_default_parameters_follow_the_spec() -> None:
    p = CompareParams()
    assert (p.similar_weight, p.right_weight, p.use_synonyms, p.trim_boilerplate) == (0.6, 0.8, True, False)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"similar_weight": 0.0},
        {"similar_weight": 1.2},
        {"similar_weight": 0.8, "right_weight": 0.8},
        {"similar_weight": 0.7, "right_weight": 0.6},
        {"right_weight": 1.01},
        {"min_units": 0},
        {"min_units": 2.5},
        {"trim_window": 0},
        {"trim_slope": 1.0},
        {"similar_weight": "0.6"},
        {"use_synonyms": "yes"},
    ],
)
def test_invalid_parameters_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        CompareParams(**kwargs)  # type: ignore[arg-type]


# ------------------------------------------------------------------ behaviour


def test_identical_texts_match_every_sentence(segment: Segment, thesaurus: Thesaurus) -> None:
    result = compare(ARTICLE, ARTICLE, segment=segment, thesaurus=thesaurus)
    n = len(result.sentences_a)
    assert n == 9
    assert {(p.i, p.j) for p in result.pairs} >= {(k, k) for k in range(n)}
    assert all(p.p == 1.0 and p.rule == "lcs" and p.w is None for p in result.pairs if p.i == p.j)
    assert result.similarity_a == result.similarity_b == 1.0
    assert result.resemblance == result.containment_a_in_b == result.containment_b_in_a == 1.0
    assert result.lcs == result.units_a == result.units_b
    assert result.lcs_exact
    check_offsets(ARTICLE, ARTICLE, result)


def test_unrelated_texts_score_near_zero(segment: Segment, thesaurus: Thesaurus) -> None:
    result = compare(ARTICLE, UNRELATED, segment=segment, thesaurus=thesaurus)
    assert result.pairs == ()
    assert result.similarity_a == result.similarity_b == 0.0
    assert result.resemblance < 0.2


def test_sentence_rewritten_with_synonyms_is_matched_by_the_synonym_rule(
    segment: Segment, thesaurus: Thesaurus
) -> None:
    result = compare(ARTICLE, REWRITTEN, segment=segment, thesaurus=thesaurus)
    assert len(result.pairs) == 9
    by_rule = {(p.i, p.j): p for p in result.pairs}
    rewritten = by_rule[(6, 6)]
    assert rewritten.rule == "synonyms"
    assert 0.6 <= rewritten.p < 0.8
    assert rewritten.w is not None and rewritten.w >= 0.8
    assert all(p.rule == "lcs" for key, p in by_rule.items() if key != (6, 6))
    assert result.similarity_a == result.similarity_b == 1.0
    assert result.stats.word_checks == 1
    check_offsets(ARTICLE, REWRITTEN, result)

    # Without synonyms the exact word overlap (5 of 9 words) is not enough.
    plain = compare(ARTICLE, REWRITTEN, CompareParams(use_synonyms=False), segment=segment)
    assert (6, 6) not in {(p.i, p.j) for p in plain.pairs}
    assert len(plain.pairs) == 8
    assert plain.similarity_a < 1.0


def test_short_text_inside_a_long_one(segment: Segment, thesaurus: Thesaurus) -> None:
    short = "\n".join(ARTICLE.splitlines()[2:5])
    long = UNRELATED + "\n" + short + "\n" + ENGLISH
    result = compare(short, long, segment=segment, thesaurus=thesaurus)
    assert result.similarity_a == 1.0  # every sentence of the short text was copied
    assert result.similarity_b < 0.4  # most of the long text was not
    assert result.containment_a_in_b == 1.0
    assert result.containment_b_in_a < 0.4
    assert result.resemblance < 0.4
    assert [(p.i, p.j) for p in result.pairs] == [(0, 5), (1, 6), (2, 7)]
    check_offsets(short, long, result)
    # And the other way round, the scores swap sides.
    back = compare(long, short, segment=segment, thesaurus=thesaurus)
    assert (back.similarity_a, back.similarity_b) == (result.similarity_b, result.similarity_a)
    assert back.containment_b_in_a == 1.0


def test_english_text(segment: Segment) -> None:
    edited = ENGLISH.replace("quickly and reliably", "fast and reliably").replace("This two-stage", "The two-stage")
    result = compare(ENGLISH, edited, segment=segment, thesaurus=Thesaurus.from_groups({"g": ["quickly", "fast"]}))
    assert len(result.pairs) == 5
    assert result.similarity_a == 1.0
    assert result.sentences_a[0].n_units == 16  # words, not characters


def test_empty_texts(segment: Segment) -> None:
    result = compare("", "。。。", segment=segment, thesaurus=None, params=CompareParams(use_synonyms=False))
    assert result.sentences_a == () and result.sentences_b == () and result.pairs == ()
    assert result.similarity_a == result.similarity_b == result.resemblance == 0.0
    assert compare("", ARTICLE, segment=segment, thesaurus=cilin_thesaurus()).containment_b_in_a == 0.0


def test_no_thesaurus_means_cilin(segment: Segment) -> None:
    result = compare(ARTICLE, REWRITTEN, segment=segment)
    assert len(result.pairs) == 9


def test_default_segmenter_is_dictionary_words(thesaurus: Thesaurus) -> None:
    result = compare(ARTICLE, REWRITTEN, thesaurus=thesaurus)
    assert [(p.i, p.j, p.rule) for p in result.pairs] == [
        (p.i, p.j, p.rule) for p in compare(ARTICLE, REWRITTEN, segment=dictionary_words, thesaurus=thesaurus).pairs
    ]
    assert {(p.i, p.j) for p in result.pairs if p.rule == "synonyms"} == {(6, 6)}


def test_one_sentence_can_match_several(segment: Segment, thesaurus: Thesaurus) -> None:
    line = ARTICLE.splitlines()[0]
    result = compare(line, line + "\n" + line, segment=segment, thesaurus=thesaurus)
    assert [(p.i, p.j) for p in result.pairs] == [(0, 0), (0, 1)]
    assert result.similarity_a == 1.0 and result.similarity_b == 1.0
    assert result.containment_a_in_b == 1.0 and result.containment_b_in_a == 0.5


def test_workers_do_not_change_the_result(segment: Segment, thesaurus: Thesaurus) -> None:
    one = compare(ARTICLE, REWRITTEN, segment=segment, thesaurus=thesaurus, workers=1)
    many = compare(ARTICLE, REWRITTEN, segment=segment, thesaurus=thesaurus, workers=-1)
    auto = compare(ARTICLE, REWRITTEN, segment=segment, thesaurus=thesaurus, workers=None)
    assert one == many == auto


def test_to_dict_is_json(segment: Segment, thesaurus: Thesaurus) -> None:
    result = compare(ARTICLE, REWRITTEN, CompareParams(trim_boilerplate=True), segment=segment, thesaurus=thesaurus)
    data = json.loads(json.dumps(result.to_dict(), ensure_ascii=False))
    assert data["scores"]["similarity_a"] == 1.0
    assert len(data["pairs"]) == 9
    pair = data["pairs"][6]
    assert pair["rule"] == "synonyms" and pair["w"] >= 0.8
    assert ARTICLE[slice(*pair["a"])] == data["sentences_a"][6]["text"]
    assert data["params"]["similar_weight"] == 0.6
    assert data["core_a"]["sentences"] == [0, 9]


# -------------------------------------------------------------- word level


def test_word_score_definitions(thesaurus: Thesaurus) -> None:
    a = Counter(["我们", "应该", "采用", "更好", "的", "方法"])
    b = Counter(["咱们", "应当", "采取", "更好", "的", "办法", "的"])
    # rightWord = 2 (更好, 的 once); 4 left-over words of a each have a synonym
    # among b's left-overs; of b's left-overs (咱们 应当 采取 办法 的) 4 do.
    assert word_score(a, b, thesaurus) == min((2 + 4) / 6, (2 + 4) / 7)
    assert word_score(a, b, None) == min(2 / 6, 2 / 7)
    assert word_score(Counter(), b, thesaurus) == 0.0


def test_exactly_matched_words_are_not_reused_as_synonyms(thesaurus: Thesaurus) -> None:
    # 计算机 matches exactly; b's 电脑 may not also count as a synonym of a's 计算机.
    a = Counter(["计算机", "很", "好"])
    b = Counter(["计算机", "电脑", "很", "好"])
    assert word_score(a, b, thesaurus) == min(3 / 3, 3 / 4)


def word_score_reference(a: Counter[str], b: Counter[str], thesaurus: Thesaurus | None) -> float:
    """w_ij straight from the definition, with Counter arithmetic."""
    n_a, n_b = sum(a.values()), sum(b.values())
    if not n_a or not n_b:
        return 0.0
    right = sum((a & b).values())
    left_a, left_b = a - b, b - a
    similar_a = similar_b = 0
    if thesaurus is not None:
        similar_a = sum(c for x, c in left_a.items() if any(thesaurus.are_synonyms(x, y) for y in left_b))
        similar_b = sum(c for y, c in left_b.items() if any(thesaurus.are_synonyms(y, x) for x in left_a))
    return min((right + similar_a) / n_a, (right + similar_b) / n_b)


_WORDS = ["我们", "咱们", "应该", "应当", "采用", "采取", "方法", "办法", "计算机", "电脑", "的", "很", "好", "更好"]


@given(
    st.lists(st.sampled_from(_WORDS), max_size=12),
    st.lists(st.sampled_from(_WORDS), max_size=12),
    st.booleans(),
)
def test_word_score_equals_the_definition(a: list[str], b: list[str], synonyms: bool) -> None:
    thesaurus = cilin_thesaurus() if synonyms else None
    expected = word_score_reference(Counter(a), Counter(b), thesaurus)
    assert word_score(Counter(a), Counter(b), thesaurus) == expected
    assert word_score(dict(Counter(a)), dict(Counter(b)), thesaurus) == expected  # any mapping of counts


def test_each_sentence_is_segmented_once_per_call(segment: Segment, thesaurus: Thesaurus) -> None:
    calls: Counter[str] = Counter()

    def counting(text: str) -> Sequence[str]:
        calls[text] += 1
        return segment(text)

    line = "我们应该采用更好的方法来提高工作效率。"
    rewritten = "咱们应当采取更好的办法来提高工作效率。"
    # The rewritten sentence is in b twice and the original in both texts, so
    # without memoising it would be segmented once per pair that needs it.
    a = line + "\n" + rewritten
    b = rewritten + "\n" + line + "\n" + rewritten
    result = compare(a, b, segment=counting, thesaurus=thesaurus)
    assert result.stats.word_checks >= 3
    assert calls and max(calls.values()) == 1


def test_cached_segmenter(segment: Segment, thesaurus: Thesaurus) -> None:
    calls: Counter[str] = Counter()

    def counting(text: str) -> list[str]:
        calls[text] += 1
        return list(segment(text))

    cached = CachedSegmenter(counting, maxsize=64)
    assert cached("我们应该采用更好的方法。") == tuple(segment("我们应该采用更好的方法。"))
    first = compare(ARTICLE, REWRITTEN, segment=cached, thesaurus=thesaurus)
    seen = sum(calls.values())
    again = compare(ARTICLE, REWRITTEN, segment=cached, thesaurus=thesaurus)
    assert sum(calls.values()) == seen  # the second call segments nothing
    assert first == again == compare(ARTICLE, REWRITTEN, segment=segment, thesaurus=thesaurus)
    assert cached.counts_info().hits > 0  # compare asks for the counted words, cached too
    cached.cache_clear()
    assert cached.cache_info().currsize == cached.counts_info().currsize == 0
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ConfigError):
            CachedSegmenter(segment, maxsize=bad)  # type: ignore[arg-type]


# ----------------------------------------------------------------- trimming


def test_trimming_ignores_different_boilerplate(segment: Segment, thesaurus: Thesaurus) -> None:
    ad_a = "本站广告:欢迎访问我们的网上商城,全场商品八折优惠,点击这里立即购买!\n"
    ad_b = "免责声明:本文仅代表作者个人观点,与本网站立场无关,转载请注明出处。\n"
    foot_a = "\n热门推荐:夏季新款连衣裙上市,数量有限,先到先得,快来抢购吧。"
    foot_b = "\n相关阅读:如何在家里种植绿色蔬菜?专家教你五个实用的小技巧。"
    a, b = ad_a + ARTICLE + foot_a, ad_b + ARTICLE + foot_b
    plain = compare(a, b, segment=segment, thesaurus=thesaurus)
    trimmed = compare(a, b, CompareParams(trim_boilerplate=True), segment=segment, thesaurus=thesaurus)
    assert plain.core_a is None
    assert trimmed.core_a == (1, 10) and trimmed.core_b == (1, 10)
    assert trimmed.core_offsets("a") == (len(ad_a), len(ad_a) + len(ARTICLE))
    assert trimmed.similarity_a == trimmed.similarity_b == 1.0
    assert trimmed.resemblance == 1.0
    assert plain.similarity_a < 0.9 and plain.resemblance < 0.9
    # The per-unit marks from the matrix (used for very long texts) agree.
    rough = compare(a, b, CompareParams(trim_boilerplate=True), segment=segment, thesaurus=thesaurus,
                    limits=Limits(alignment_cells=0))
    assert rough.core_a == (1, 10) and rough.core_b == (1, 10)


def test_trimming_unrelated_texts_leaves_nothing(segment: Segment, thesaurus: Thesaurus) -> None:
    result = compare(ARTICLE, UNRELATED, CompareParams(trim_boilerplate=True), segment=segment, thesaurus=thesaurus)
    assert result.core_a == (0, 0) or result.similarity_a == 0.0
    assert result.similarity_a == result.similarity_b == 0.0


# ------------------------------------------------------------ long texts


def test_long_text_lcs_falls_back_to_a_lower_bound(segment: Segment, thesaurus: Thesaurus) -> None:
    exact = compare(ARTICLE, REWRITTEN, segment=segment, thesaurus=thesaurus)
    bound = compare(ARTICLE, REWRITTEN, segment=segment, thesaurus=thesaurus, limits=Limits(exact_lcs_cells=0))
    assert exact.lcs_exact and not bound.lcs_exact
    # Sum of the sentence LCS along the diagonal: a common subsequence.
    assert bound.lcs == sum(p.lcs for p in exact.pairs if p.i == p.j)
    assert bound.lcs <= exact.lcs
    assert bound.pairs == exact.pairs


# ------------------------------------------------- bulk matrix vs reference


def reference_p(units_a: list[list[str]], units_b: list[list[str]]) -> np.ndarray:
    """P by the definition: one textbook LCS per pair."""
    p = np.zeros((len(units_a), len(units_b)))
    for i, x in enumerate(units_a):
        for j, y in enumerate(units_b):
            lcs = lcs_length_reference(x, y)
            p[i, j] = min(lcs / len(x), lcs / len(y))
    return p


_NARROW = [*"的是了在人中文天地", "the", "of"]
_WIDE = [chr(c) for c in range(0x4E00, 0x4E00 + 400)]  # more distinct units than the 8-bit fast path holds
sentence = st.one_of(
    st.lists(st.sampled_from(_NARROW), min_size=1, max_size=30),
    st.lists(st.sampled_from(_WIDE[:12]) | st.sampled_from(_WIDE), min_size=1, max_size=60),
)


@given(st.lists(st.lists(st.booleans(), max_size=6), max_size=10), st.sampled_from([0.3, 0.5, 2 / 3, 1.0]),
       st.sampled_from([1, 2, 3, 7, 1 << 16]))
def test_the_sentences_that_may_match_are_those_with_enough_units_present(present: list[list[bool]],
                                                                          weight: float, block: int) -> None:
    """Each sentence's units present in the other text, counted a block at a time (sentences across blocks,
    empty ones among them)."""
    lengths = np.array([len(s) for s in present], dtype=np.int64)
    flat = np.array([v for s in present for v in s], dtype=bool)
    coded = matrix_module.Coded(np.zeros(flat.size, np.uint32), [], lengths, "")
    want = [i for i, s in enumerate(present) if sum(s) >= (weight - matrix_module._CUTOFF_MARGIN) * len(s)]
    with mock.patch.object(common_module, "COUNT_BLOCK", block):
        assert matrix_module._may_match(coded, flat, weight).tolist() == want


@given(
    st.lists(sentence, min_size=1, max_size=8),
    st.lists(sentence, min_size=1, max_size=8),
    st.sampled_from([0.3, 0.5, 0.6, 2 / 3, 0.75, 1.0]),
)
def test_bulk_matrix_equals_the_naive_reference(
    units_a: list[list[str]], units_b: list[list[str]], similar_weight: float
) -> None:
    # Near-copies so that high p values occur, not only chance matches.
    units_b = [*units_b, list(units_a[0]), units_a[-1][1:] or units_a[-1]]
    L, P = lcs_matrix(units_a, units_b, similar_weight=similar_weight)
    # Large matrices are scored in groups of similar length: that path too.
    L_grouped, P_grouped = lcs_matrix(units_a, units_b, similar_weight=similar_weight, grouped_pairs=0)
    assert np.array_equal(L, L_grouped) and np.array_equal(P, P_grouped)
    # Scored a few pairs at a time (2 MiB of scores by default): the same matrix, on both paths.
    for grouped in (0, 10**12):
        for block in (1, 3):
            L_block, P_block = lcs_matrix(units_a, units_b, similar_weight=similar_weight, grouped_pairs=grouped,
                                          block_pairs=block)
            assert np.array_equal(L, L_block) and np.array_equal(P, P_block)
    expected = reference_p(units_a, units_b)
    candidates = expected >= similar_weight
    assert np.array_equal(P > 0, candidates)
    assert np.array_equal(P[candidates], expected[candidates])  # exact, not approximately
    for i, j in zip(*np.nonzero(candidates), strict=True):
        assert L[i, j] == lcs_length_reference(units_a[i], units_b[j])


def test_matrix_refuses_bad_input() -> None:
    with pytest.raises(ConfigError):
        lcs_matrix([["a"]], [["a"]], similar_weight=0.0)
    with pytest.raises(ConfigError):
        lcs_matrix([["a"], []], [["a"]])


def test_matrix_handles_many_distinct_units() -> None:
    # Thousands of distinct words: most code points are far above 255.
    rng = np.random.default_rng(3)
    vocab = [f"w{k}" for k in range(5000)]
    units_a = [list(rng.choice(vocab, size=int(rng.integers(5, 40)))) for _ in range(30)]
    units_b = [list(s) for s in units_a[::3]] + [list(rng.choice(vocab, size=20)) for _ in range(10)]
    _, P = lcs_matrix(units_a, units_b, similar_weight=0.6)
    expected = reference_p(units_a, units_b)
    assert np.array_equal(P, np.where(expected >= 0.6, expected, 0.0))


@pytest.mark.parametrize(
    "units_a, units_b",
    [
        # Words and characters mixed, a word spelled like a run of characters.
        ([["ab", "c", "d"], ["a", "b", "c", "d"]], [["a", "b", "c"], ["ab", "c", "d", "e"]]),
        # One-character units in the private-use planes, where words get their
        # code points: coded one by one instead.
        ([["\U000f0000", "ab", "x"], ["ab", "\U000f0001"]], [["\U000f0000", "ab"], ["ab", "\U000f0000", "x"]]),
        # Units that are not strings.
        ([[1, 2, 3], [2, 3, 4, 5]], [[1, 2, 3, 4], [5, 4, 3]]),
        # Lone surrogates are characters like any other.
        ([["\ud800", "a", "b"], ["a", "b"]], [["a", "\ud800", "b"], ["b", "a"]]),
    ],
)
def test_matrix_handles_any_units(units_a: list[list[object]], units_b: list[list[object]]) -> None:
    L, P = lcs_matrix(units_a, units_b, similar_weight=0.3)  # type: ignore[arg-type]
    expected = reference_p(units_a, units_b)  # type: ignore[arg-type]
    assert np.array_equal(P, np.where(expected >= 0.3, expected, 0.0))


def test_matrix_refuses_empty_units() -> None:
    # An empty unit next to a two-character one would hide in the joined string.
    with pytest.raises(ConfigError):
        lcs_matrix([["a", "", "b"]], [["x", "ab", ""]])


# ------------------------------------------------------------- real articles


def test_real_articles(segment: Segment, thesaurus: Thesaurus) -> None:
    article, other = unify(fixture_text("zh_article.txt")), unify(fixture_text("zh_other.txt"))
    same = compare(article, article, segment=segment, thesaurus=thesaurus)
    assert same.similarity_a == same.similarity_b == same.resemblance == 1.0
    assert len(same.sentences_a) > 50
    different = compare(article, other, segment=segment, thesaurus=thesaurus)
    assert different.pairs == ()
    assert different.resemblance < 0.1
    check_offsets(article, other, different)
    english = unify(fixture_text("en_article.txt"))
    assert compare(english, english, segment=segment, thesaurus=thesaurus).similarity_a == 1.0


def test_traditional_script_page_with_taiwan_vocabulary(segment: Segment, thesaurus: Thesaurus) -> None:
    # The zh_TW man page is the zh_CN one converted with Taiwan vocabulary
    # (文件名 -> 檔名, 设备 -> 裝置, 文件 -> 檔案 ...). Converting only the characters
    # (OpenCC t2s) leaves the words different: what the word-level check is for.
    import opencc

    cn = unify(fixture_text("zh_article.txt"))
    tw_chars = unify(opencc.OpenCC("t2s").convert(fixture_text("zh_article_tw.txt")))
    result = compare(cn, tw_chars, segment=segment, thesaurus=thesaurus)
    assert result.similarity_a > 0.85 and result.similarity_b > 0.85
    synonym_pairs = [p for p in result.pairs if p.rule == "synonyms"]
    assert synonym_pairs
    assert all(p.w is not None and p.w >= 0.8 > p.p >= 0.6 for p in synonym_pairs)
    check_offsets(cn, tw_chars, result)
    # Unified text converts Traditional script (and, where it can, vocabulary).
    tw = unify(fixture_text("zh_article_tw.txt"))
    assert compare(cn, tw, segment=segment, thesaurus=thesaurus).similarity_a >= result.similarity_a


@given(st.dictionaries(st.tuples(st.integers(0, 7), st.integers(0, 7)), st.integers(1, 30), max_size=30))
def test_sentence_chain_bound_is_the_heaviest_increasing_chain(weights: dict[tuple[int, int], int]) -> None:
    # Reference: the textbook DP over the dense 8 x 8 weight table.
    table = np.zeros((9, 9), dtype=np.int64)
    for i in range(1, 9):
        for j in range(1, 9):
            table[i, j] = max(table[i - 1, j], table[i, j - 1], table[i - 1, j - 1] + weights.get((i - 1, j - 1), 0))
    keys = sorted(weights)
    cand = (
        np.array([k[0] for k in keys], dtype=np.int64),
        np.array([k[1] for k in keys], dtype=np.int64),
        np.array([weights[k] for k in keys], dtype=np.int64),
    )
    assert compare_module._chain_bound(cand, range(8), range(8)) == table[8, 8]


def test_a_comparison_scored_in_small_blocks_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    article = unify(fixture_text("zh_article.txt"))
    copied = "".join(line for k, line in enumerate(article.splitlines(keepends=True)) if k % 3 != 2)
    other = unify(fixture_text("zh_other.txt"))
    for a, b in ((article, copied), (article, other + copied)):
        for limits in (Limits(), Limits(grouped_pairs=0)):
            whole = compare(a, b, limits=limits)
            monkeypatch.setattr(matrix_module, "BLOCK_PAIRS", 5)  # read when a matrix is scored
            blocked = compare(a, b, limits=limits)
            monkeypatch.undo()
            assert blocked.to_dict() == whole.to_dict() and whole.pairs


def test_texts_of_more_similar_pairs_than_the_limit_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """One sentence 100 times against it 100 times: 10,000 similar pairs, the most allowed within bounded_pairs;
    one more is refused there, and compared outside it."""
    sentence = "这是一个被重复很多次的句子。"
    monkeypatch.setattr(matrix_module, "MAX_CANDIDATES", 10_000)
    assert len(compare(sentence * 101, sentence * 100).pairs) == 10_100
    with matrix_module.bounded_pairs():
        assert len(compare(sentence * 100, sentence * 100, limits=Limits(grouped_pairs=0)).pairs) == 10_000
        for grouped in (0, 10**12):
            with pytest.raises(TooManyPairs, match="more than 10,000 pairs of similar sentences") as caught:
                compare(sentence * 101, sentence * 100, limits=Limits(grouped_pairs=grouped))
            assert caught.value.limit == 10_000
        monkeypatch.setattr(matrix_module, "MAX_CANDIDATES", 1)  # then 20 a sentence of the two texts
        assert len(compare(sentence * 40, sentence * 40).pairs) == 1_600
        with pytest.raises(TooManyPairs, match="more than 1,640 pairs"):
            compare(sentence * 41, sentence * 41)
    units = [list("重复的句子")] * 20
    assert lcs_matrix(units, units, max_pairs=400)[0].all()
    with pytest.raises(TooManyPairs):
        lcs_matrix(units, units[:-1] + [list("重复的句")], max_pairs=399, block_pairs=7)


def test_pairs_are_read_as_the_tuple_of_their_pair_objects(thesaurus: Thesaurus) -> None:
    import pickle
    from dataclasses import replace

    got = compare(ARTICLE, REWRITTEN + "\n" + ARTICLE.splitlines()[0], thesaurus=thesaurus)
    pairs = got.pairs
    assert isinstance(pairs, compare_module.SentencePairs) and pairs._made is None  # nothing made by the comparison
    assert got.marked_a == frozenset(range(9)) and got.marked_b == frozenset(range(10)) and pairs._made is None
    made = tuple(pairs)
    assert pairs == made and made == pairs and hash(pairs) == hash(made) and repr(pairs) == repr(made)
    assert len(pairs) == len(made) == 10 and pairs[3] == made[3] and pairs[-2:] == made[-2:] and pairs != made[1:]
    assert [(p.i, p.j) for p in made] == sorted((p.i, p.j) for p in made)
    for p in made:
        sa, sb = got.sentences_a[p.i], got.sentences_b[p.j]
        assert (p.a_start, p.a_end, p.b_start, p.b_end) == (sa.start, sa.end, sb.start, sb.end)
        assert type(p.i) is int and type(p.lcs) is int and type(p.p) is float
        assert (p.rule, p.w is None) == (("lcs", True) if p.p >= 0.8 else ("synonyms", False))
        assert p.w is None or (type(p.w) is float and p.w >= 0.8)
    assert {(p.i, p.j) for p in made if p.rule == "synonyms"} == {(6, 6)}
    assert pickle.loads(pickle.dumps(got)) == got == replace(got, pairs=made) and got.to_dict()["pairs"]
    assert compare(ARTICLE, "完全无关的一句话而已。", thesaurus=thesaurus).pairs == ()


def test_pairs_read_through_are_not_kept_and_read_from_a_view_as_from_sentences(thesaurus: Thesaurus,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    plain = compare(ARTICLE, REWRITTEN, thesaurus=thesaurus)
    monkeypatch.setattr(sentences_module, "VIEW_SENTENCES", 1)  # every text's sentences as rows of a table
    viewed = compare(ARTICLE, REWRITTEN, thesaurus=thesaurus)
    assert isinstance(viewed.sentences_a, sentences_module.SentenceView)
    made = list(viewed.pairs)
    assert viewed.pairs._made is None  # a long comparison written out: none of its pairs kept
    assert made == list(plain.pairs) == list(plain.pairs._pairs()) and len(made) == 9


@given(st.lists(st.sampled_from(ARTICLE.splitlines() + REWRITTEN.splitlines()[6:7] + ["短句。", "另一个完全不同的句子在这里。"]),
                max_size=8),
       st.lists(st.sampled_from(ARTICLE.splitlines() + REWRITTEN.splitlines()[6:7] + ["短句。"]), max_size=8))
def test_pairs_are_those_of_each_candidate_judged_in_turn(a: list[str], b: list[str]) -> None:
    """The marked pairs against the plain loop over the candidates (p alone, else the word-level check)."""
    params, segment, thesaurus = CompareParams(), CachedSegmenter(dictionary_words), cilin_thesaurus()
    got = compare("\n".join(a), "\n".join(b), params, segment=segment, thesaurus=thesaurus)
    query = compare_module.prepare("\n".join(a), params)
    _, sentences_b, coded_b, enc = compare_module._pair_up(query, "\n".join(b), None)
    cand = matrix_module.candidate_pairs(query.coded, query.values.size, coded_b, enc, params.similar_weight, 1)
    expected = []
    for i, j, lcs, p in sorted(zip(cand.i.tolist(), cand.j.tolist(), cand.lcs.tolist(), cand.p.tolist())):
        sa, sb = query.sentences[i], sentences_b[j]
        w = None if p >= params.right_weight else word_score(segment.counts(sa.text), segment.counts(sb.text), thesaurus)
        if w is None or w >= params.right_weight:
            expected.append(compare_module.SentencePair(i, j, sa.start, sa.end, sb.start, sb.end, lcs, p, w,
                                                        "lcs" if w is None else "synonyms"))
    assert tuple(got.pairs) == tuple(expected) and got.pairs == tuple(expected)
    assert got.marked_a == frozenset(p.i for p in expected) and got.marked_b == frozenset(p.j for p in expected)
