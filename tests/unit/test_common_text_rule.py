"""Common text (simdup_es.commontext): the key counts, which units are common, and the judge that counts rare text.

The kernels are held to their slow twins (:func:`simdup_es.reference.rarity_reference`); the judge
(:func:`simdup_es.multilevel.judge`) to hand-made texts: a copied sentence counts from ``short_units``
wherever it sits, a footer many documents hold never counts, nor makes a near-duplicate of texts within
distance ``k`` that share nothing else.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.commontext import EXCLUDED, Held, KeyCounts, Rarity, codes_of_scan, common_threshold, held_passages, \
    rarity, template_keys
from simdup_es.compare import compare
from simdup_es.multilevel import CommonText, MultiParams, copied_shares, counted_units, held_spans, judge
from simdup_es.reference import rarity_reference
from simdup_es.sentences import scan
from simdup_es.text import unify
from simdup_es.winnow import KEY_K, gram_hashes, unit_codes, winnowed

FOOTER = "本页面中文版由中文 man 手册页计划提供。中文 man 手册页计划：https://github.com/man-pages-zh/manpages-zh"
SENTENCE = "所有接受文件名作为参数的命令和过程希望文件名是依赖于当前平台的三种形式之一。"  # 36 units
OWN_A = "基于用来指定文件的路径的起点，文件名被组织成三种一般类型。绝对名字是完全限定的。"
OWN_B = "如果您想要更多的安装过程相关信息，请看第六章使用安装程序。每个光盘上都有说明。"
OWN_C = "这是另外一段完全不同的文字，用来让那个句子只占文本的一小部分。它说的是别的事情。"


def counts_for(text: str, documents: int, held: int) -> KeyCounts:
    """Every key of ``text`` held by ``held`` documents of ``documents``."""
    keys = winnowed(unify(text))[0].tolist()
    return KeyCounts.of_pairs(keys, [held] * len(keys), documents)


def test_key_counts_read_keys_and_excluded_texts() -> None:
    kc = KeyCounts.of_pairs([5, 3, 5, 9], [2, 7, 2, 1], 40)
    assert kc.keys.tolist() == [3, 5, 9] and kc.of([9, 4, 3, 5]).tolist() == [1, 0, 7, 2] and len(kc) == 3
    more = kc.excluding([4, 9])
    assert more.of([3, 4, 9]).tolist() == [7, EXCLUDED, EXCLUDED] and more.documents == 40
    assert KeyCounts().of([1]).tolist() == [0] and kc.excluding([]) is kc
    assert template_keys([FOOTER]) == sorted(set(winnowed(unify(FOOTER))[0].tolist()))


@pytest.mark.parametrize(("documents", "count", "share", "want"), [(17_900, None, 0.01, 179), (500, None, 0.01, 10),
                                                                   (17_900, 40, 0.01, 40), (0, None, 0.01, 10)])
def test_the_common_threshold_is_a_share_of_the_store_at_least_ten(documents: int, count: int | None, share: float,
                                                                   want: int) -> None:
    assert common_threshold(documents, count, share) == want
    assert MultiParams(common=count, common_share=share).common_threshold(documents) == want


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=60), st.dictionaries(st.integers(0, 30), st.integers(0, 50), max_size=20),
       st.integers(0, 40), st.integers(0, 40))
def test_rarity_equals_its_reference(codes: list[int], by_gram: dict[int, int], common: int, short: int) -> None:
    # Counts given to grams of the sequence (picked by their place among its distinct grams) and to others.
    grams = sorted(set(gram_hashes(np.array(codes, dtype=np.uint64), KEY_K).tolist()))
    counted = {grams[i % len(grams)]: n for i, n in by_gram.items()} if grams else {}
    kc = KeyCounts.of_pairs([*counted, 12345], [*counted.values(), 99], 100)
    got = rarity(np.array(codes, dtype=np.uint64), kc, common, short)
    held, is_common = rarity_reference(codes, {**counted, 12345: 99}, common, short)
    assert got.held.tolist() == held and got.common.tolist() == is_common
    assert not (got.common & ~got.frequent).any()  # common text is too frequent for a short passage too


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.sampled_from("文件名 ab Cd 12.3 e.g 。,\n-"), max_size=80))
def test_unit_codes_from_a_sentence_scan_are_the_texts_own(text: str) -> None:
    _, points, word_at, words, _ = scan((text, 4))
    assert codes_of_scan(points, word_at, words).tolist() == unit_codes(text).tolist()


def test_held_passages_carry_the_most_documents_of_each_stretch() -> None:
    shared = np.array([0, 1, 1, 0, 0, 1, 1, 1, 0], dtype=bool)
    held = np.array([900, 650, 700, 0, 5000, 300, 320, 310, 0])
    assert held_passages(shared, held) == (Held(1, 3, 700), Held(5, 8, 320))
    assert held_passages(np.zeros(3, bool), np.zeros(3, np.int64)) == ()


def sides(a: str, b: str, counts: KeyCounts, params: MultiParams = MultiParams()) -> tuple[Rarity, Rarity]:
    common = CommonText.of(counts, a, params)
    return common.query, common.rarity(b)


def test_a_copied_sentence_counts_wherever_it_sits_and_common_text_never() -> None:
    a, b = unify(OWN_A + SENTENCE + FOOTER), unify(SENTENCE + OWN_B + FOOTER)
    c = compare(a, b)
    footer = counts_for(FOOTER, 17_900, 650)
    m = judge("b", c, 20, MultiParams(), sides(a, b, footer))
    assert m is not None and m.kind == "partial"
    assert 0 < m.copied_query < 0.5 and m.common_query > 0.25 and m.held_query[0].documents == 650
    spans = held_spans(c, "a", m.held_query)
    assert len(spans) == 1 and a[spans[0][0] : spans[0][1]].startswith("本页面") and spans[0][2] == 650
    # Without the store's counts the footer is copied text like any other.
    plain = judge("b", c, 20)
    assert plain is not None and plain.copied_query > m.copied_query and plain.common_query == 0
    # Only the footer shared: no copy, even within distance k; its share is shown.
    x, y = unify(OWN_A + FOOTER), unify(OWN_B + FOOTER)
    cx = compare(x, y)
    assert judge("b", cx, 2, MultiParams(), sides(x, y, footer)) is None
    assert copied_shares(cx, MultiParams(), sides(x, y, footer)).common_a > 0.25


def test_a_short_passage_counts_only_when_few_documents_hold_it() -> None:
    a, b = unify(OWN_A + SENTENCE + OWN_C), unify(SENTENCE + OWN_B + OWN_C[::-1])
    c = compare(a, b)
    p = MultiParams(passage_units=100)  # the sentence (36 units) counts as a short passage only
    assert judge("b", c, None, p, sides(a, b, counts_for(SENTENCE, 17_900, 20))) is not None
    assert judge("b", c, None, p, sides(a, b, counts_for(SENTENCE, 17_900, 40))) is None  # more than short_common
    assert judge("b", c, None, MultiParams(), sides(a, b, counts_for(SENTENCE, 17_900, 40))) is not None  # 30 units
    assert judge("b", c, None, MultiParams(short_units=40, passage_units=100)) is None  # shorter than short_units
    assert judge("b", c, None, MultiParams(partial_threshold=0.9)) is None  # a share of either side is asked for


def test_a_short_side_counts_its_rare_units_together() -> None:
    copied = np.zeros(30, dtype=bool)
    copied[[*range(0, 9), *range(19, 29)]] = True  # two pieces of 9 and 10 units, 10 apart (a clause deleted)
    assert counted_units(copied, None, MultiParams()).sum() == 19  # half the side: counted together
    long_side = np.zeros(60, dtype=bool)
    long_side[[*range(0, 9), *range(19, 29)]] = True
    assert counted_units(long_side, None, MultiParams()).sum() == 0  # pieces under short_units, a third of the side
    common = Rarity(np.zeros(30, np.int64), np.zeros(30, bool))
    common.common[:9] = True
    assert counted_units(copied, common, MultiParams()).sum() == 10 + 9  # common units count no more...
    frequent = Rarity(np.where(np.arange(30) < 9, 50, 0), np.zeros(30, bool))
    assert counted_units(copied, frequent, MultiParams()).sum() == 0  # ... nor, in a short passage, frequent ones
