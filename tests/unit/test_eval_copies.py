"""The pure helpers of benchmarks/eval_copies.py keep their promises (no corpus needed)."""

from __future__ import annotations

import random
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import copy_oracle  # noqa: E402
import eval_copies as ec  # noqa: E402
from quality_set import make_source  # noqa: E402

SHORT = "打开文件对话框，选择要插入的图片，然后单击打开按钮。图片会插入到当前光标所在的位置，可以拖动调整大小。"
ALPHABET = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严"


def test_short_cuts_stay_within_bounds_and_are_chinese() -> None:
    text = "\n".join([
        "短",  # too short
        SHORT,  # fits
        SHORT * 4,  # too long: cut at sentence ends
        "This line is plain English text and long enough to be cut into a piece of its own here.",
    ])
    cuts = ec.short_cuts(text)
    assert cuts and SHORT in cuts
    assert all(40 <= len(c) <= 160 for c in cuts)
    assert all(ec.cjk_share(c) >= 0.5 for c in cuts)
    assert len(cuts) >= 3  # the long line gave pieces too


@pytest.mark.parametrize("k", [1, 2])
def test_replace_chars_changes_exactly_k_cjk_characters(k: int) -> None:
    for seed in range(50):
        out = ec.replace_chars(SHORT, k, random.Random(seed), ALPHABET)
        assert len(out) == len(SHORT)
        diff = [i for i, (a, b) in enumerate(zip(SHORT, out)) if a != b]
        assert len(diff) == k
        assert all(re.match(r"[\u4e00-\u9fff]", SHORT[i]) and re.match(r"[\u4e00-\u9fff]", out[i]) for i in diff)


def test_delete_clause_removes_one_clause() -> None:
    parts = ec.clauses(SHORT)
    assert "".join(parts) == SHORT and len(parts) >= 4
    for seed in range(50):
        out = ec.delete_clause(SHORT, random.Random(seed))
        assert out is not None and 0 < len(out) < len(SHORT)
        # the text less one clause (a final comma turned into a full stop when the last one went)
        assert any(out in ("".join(parts[:k] + parts[k + 1:]), "".join(parts[:k] + parts[k + 1:])[:-1] + "。")
                   for k in range(len(parts)))
    assert ec.delete_clause("没有标点的一句话", random.Random(0)) is None


def test_emoji_and_repost_keep_the_text() -> None:
    r = random.Random(1)
    e = ec.emoji_hashtag(SHORT, r)
    assert e.startswith(SHORT) and re.search(r"#[^#]+#$", e)
    p = ec.repost(SHORT, r)
    assert p.startswith("转发微博 //@") and p.endswith(": " + SHORT)


def test_change_one_word_replaces_one_token() -> None:
    segment = lambda s: re.findall(r"\w+|\W", s)  # noqa: E731 - tokens that join back to the text
    is_word = lambda t: t.isalpha()  # noqa: E731
    sentence = "the quick brown fox jumps over 12 dogs."
    vocab = ["slow", "red", "cat", "walks", "quick", "a"]
    for seed in range(30):
        out = ec.change_one_word(sentence, segment, is_word, vocab, random.Random(seed))
        before, after = segment(sentence), segment(out)
        assert len(before) == len(after)
        diff = [i for i, (x, y) in enumerate(zip(before, after)) if x != y]
        assert len(diff) == 1 and is_word(before[diff[0]]) and after[diff[0]] in vocab
        # a word of the same length when there is one
        if any(len(w) == len(before[diff[0]]) and w != before[diff[0]] for w in vocab):
            assert len(after[diff[0]]) == len(before[diff[0]])
    assert ec.change_one_word("123 456", segment, is_word, vocab, random.Random(0)) == "123 456"


def test_paste_passage_keeps_host_and_a_contiguous_run() -> None:
    src = make_source("s", "\n".join(f"第{i}句话的内容在这里，说明一个问题。" for i in range(20)))
    host = make_source("h", "\n".join(f"宿主文档第{i}行，讲别的事情。" for i in range(30)))
    for frac in (0.1, 0.3, 0.6):
        text, run = ec.paste_passage(src, frac, host, random.Random(3))
        assert run == list(range(run[0], run[-1] + 1))
        got = sum(src.sentences[k].n_units for k in run)
        assert got >= frac * src.n_units
        assert got - src.sentences[run[-1]].n_units < frac * src.n_units  # the fewest that get there
        passage = "\n".join(src.sentences[k].text for k in run)
        assert "\n" + passage + "\n" in text  # whole lines, at a line break
        assert all(s.text in text for s in host.sentences)


def test_oracle_shingle_rule() -> None:
    a = ec.shingles("abcdefghijklmnopqrst")  # 13 shingles of 8
    assert len(a) == 13
    assert ec.shingles("abc def\nghijklmnopqrst") == a  # whitespace removed
    half = ec.shingles("abcdefghijkl")  # 5 shingles, all in a
    assert ec.shared_share(half, a) == 1.0 and ec.oracle_copy(half, a)
    other = ec.shingles("abcdefgh0123456789KLMNOPQRSTUV")  # 23 shingles, 1 shared
    assert ec.shared_share(other, a) == pytest.approx(1 / 13)
    assert not ec.oracle_copy(other, a)
    # 20 % of the smaller side exactly is enough
    b = ec.shingles("abcdefghijkZZZZZZZZZZZZZZZZZZZZ")  # shares abcdefgh..defghijk: 4
    share = ec.shared_share(a, b)
    assert ec.oracle_copy(a, b) == (share >= 0.2)
    assert ec.shared_share(set(), a) == 0.0



def test_labelled_shares_are_the_oracles_share_of_each_pair() -> None:
    c = ec.Corpus()
    c.put("whole", "abcdefghijklmnopqrst", {"s"})
    c.put("part", "abcdefghijkl" + "0123456789" * 3, {"s"})
    c.queries.append(ec.Query("q", "abcdefghijklmnopqrst", frozenset({"s"}), {"row": ["whole", "part"]}))
    shares = ec.labelled_shares(c, ec.OracleView(c))
    # the query's 13 shingles are the smaller side; the part holds the 5 of its first 12 characters
    assert shares == {"row": [1.0, pytest.approx(5 / 13)]}

LICENCE = """MIT License

Copyright (c) <year> <copyright holders>

Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction. The above
copyright notice and this permission notice shall be included in all copies. THE SOFTWARE IS PROVIDED "AS IS",
WITHOUT WARRANTY OF ANY KIND. In no event shall the authors be liable for any claim.
"""


def test_licence_edits() -> None:
    r = random.Random(5)
    filled, holder, year = ec.fill_placeholders(LICENCE, r)
    assert "<" not in filled and f"Copyright (c) {year} {holder}" in filled
    wrapped = ec.rewrap(filled, 40)
    assert wrapped.split() == filled.split() and max(map(len, wrapped.splitlines())) <= 40
    sents = ec.en_sentences(filled)
    assert "".join(sents) == filled and len(sents) >= 4
    gone = ec.delete_sentence(filled, r)
    assert len(gone) < len(filled) and any("".join(sents[:k] + sents[k + 1:]) == gone for k in range(len(sents)))
    other = "Nothing here is warranted in any way at all. You may not use the marks of the licensor."
    rep = ec.replace_sentence(filled, other, r)
    assert rep != filled and ("Nothing here is warranted" in rep or "You may not use the marks" in rep)
    words = ec.change_words(filled, 0.1, r)
    assert len(words.split()) == len(filled.split())
    assert 0 < sum(a != b for a, b in zip(words.split(), filled.split())) <= round(0.1 * len(ec._EN_WORD.findall(filled))) + 1
    variant, edits = ec.licence_variant(LICENCE, [other], random.Random(2))
    assert edits[0] == "fill" and 2 <= len(edits) <= 4 and variant != LICENCE


def test_licence_families_join_near_identical_texts() -> None:
    base = " ".join(f"clause {i} of the licence says something about item {i}." for i in range(40))
    texts = {
        "A-only": base,
        "A-or-later": base + " Or, at your option, any later version.",
        "B": " ".join(f"section {i}: an unrelated text with other words, number {i * 7}." for i in range(40)),
    }
    fam = ec.licence_families(texts)
    assert fam["A-only"] == fam["A-or-later"] == "A-only"
    assert fam["B"] == "B"


def test_minhash_tokens_by_language() -> None:
    en = ec.minhash_tokens("Hello   World")
    assert en == {"hello", "ello ", "llo w", "lo wo", "o wor", " worl", "world"}
    zh = ec.minhash_tokens("打开文件对话框，选择图片。")
    assert zh and all(re.search(r"\w", w) for w in zh) and "，" not in zh


# ---- the oracle: common text is never a copy; a copied run of rare text is

def _own(rng: random.Random, n: int) -> str:
    """``n`` CJK characters of a text of its own."""
    return "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(n))


def _oracle_corpus() -> tuple[dict[str, str], str, str]:
    """20 stored texts, 12 of them ending with one 35-character footer (common: above max(10, 1 % of 20)),
    and a 30-character sentence held by two of them (rare)."""
    rng = random.Random(7)
    footer, sentence = _own(rng, 35), _own(rng, 30)
    corpus = {f"d{i}": _own(rng, 200) + (footer if i < 12 else "") for i in range(20)}
    corpus["d1"] = corpus["d1"][:100] + sentence + corpus["d1"][100:]
    corpus["d13"] = corpus["d13"][:50] + sentence + corpus["d13"][50:]
    return corpus, footer, sentence


def test_oracle_takes_a_rare_run_and_never_common_text() -> None:
    corpus, footer, sentence = _oracle_corpus()
    texts = {k: copy_oracle.Text.of(v) for k, v in corpus.items()}
    index = copy_oracle.ShingleIndex(texts.values())
    assert index.documents == 20 and index.common == 10
    # two pages sharing only the footer (held by 12 documents): wrong, and seen to share common text
    v = copy_oracle.verdict(texts["d0"], texts["d2"], index)
    assert v.reason is None and v.common and v.share < 0.2 and v.common_only and v.rare < copy_oracle.SENTENCE
    assert copy_oracle.verdict_reference(corpus["d0"], corpus["d2"], corpus) is None
    # the rare 30-character sentence: right, wherever it sits; 29 characters of it are not enough
    v = copy_oracle.verdict(texts["d1"], texts["d13"], index)
    assert v.reason == "rare run" and v.share < 0.2
    assert copy_oracle.verdict_reference(corpus["d1"], corpus["d13"], corpus) == "rare run"
    short = copy_oracle.Text.of(_own(random.Random(1), 300) + sentence[:29])
    v = copy_oracle.verdict(short, texts["d13"], index)
    assert v.reason is None and v.rare == 29 and not v.common_only  # a rare sentence shared, too short for the oracle
    # a fifth of the smaller side's shingles: right, common or not
    half = copy_oracle.Text.of(corpus["d3"][:120])
    assert copy_oracle.verdict(half, texts["d3"], index).reason == "share"
    assert copy_oracle.verdict_reference(corpus["d3"][:120], corpus["d3"], corpus) == "share"


def test_oracle_counts_a_run_in_one_place_only() -> None:
    corpus, _, sentence = _oracle_corpus()
    index = copy_oracle.ShingleIndex(copy_oracle.Text.of(v) for v in corpus.values())
    rng = random.Random(3)
    a = _own(rng, 200) + sentence + _own(rng, 200)
    # b holds every shingle of the sentence, in two pieces that overlap by 8 characters: no 30-character run
    b = _own(rng, 200) + sentence[:19] + "。" + sentence[11:] + _own(rng, 200)
    ta, tb = copy_oracle.Text.of(a), copy_oracle.Text.of(b)
    assert set(ta.hashes[200:223].tolist()) <= set(tb.distinct.tolist())
    assert copy_oracle.verdict(ta, tb, index).reason is None
    assert copy_oracle.verdict_reference(a, b, corpus) is None
    # a common shingle inside the run breaks it
    common = dict(corpus, **{f"x{i}": sentence[10:18] + _own(rng, 50) for i in range(12)})
    index2 = copy_oracle.ShingleIndex(copy_oracle.Text.of(v) for v in common.values())
    both = sentence + _own(rng, 100)
    assert copy_oracle.rare_run(copy_oracle.Text.of(a), copy_oracle.Text.of(both), index)
    assert not copy_oracle.rare_run(copy_oracle.Text.of(a), copy_oracle.Text.of(both), index2)
    assert copy_oracle.verdict_reference(a, both, common) is None


def test_oracle_whitespace_and_case_and_short_texts() -> None:
    assert copy_oracle.squeeze("ab c\n d\te") == "abcde"
    assert copy_oracle.shingle_hashes("abcdefghij").size == 3
    assert copy_oracle.shingle_hashes("abc").size == 1 and copy_oracle.shingle_hashes("").size == 0
    h = copy_oracle.shingle_hashes("abcdefghabcdefgh")
    assert h[0] == h[8] and len(set(h.tolist())) == 8  # equal shingles hash alike, others not
    index = copy_oracle.ShingleIndex([copy_oracle.Text.of("abcdefghij")])
    assert index.frequency(copy_oracle.shingle_hashes("abcdefghijkl")).tolist() == [1, 1, 1, 0, 0]


def test_oracle_agrees_with_its_reference_on_random_texts() -> None:
    rng = random.Random(11)
    pieces = [_own(rng, rng.randint(8, 40)) for _ in range(12)]  # pieces the texts share, some common
    corpus = {f"d{i}": "".join(rng.choice(pieces) if rng.random() < 0.3 else _own(rng, rng.randint(5, 30))
                               for _ in range(8)) for i in range(30)}
    texts = {k: copy_oracle.Text.of(v) for k, v in corpus.items()}
    index = copy_oracle.ShingleIndex(texts.values())
    reasons = Counter()
    for a in list(corpus)[:12]:
        for b in corpus:
            if a != b:
                got = copy_oracle.verdict(texts[a], texts[b], index).reason
                assert got == copy_oracle.verdict_reference(corpus[a], corpus[b], corpus), (a, b)
                reasons[got] += 1
    assert len(reasons) == 3  # each verdict met


def test_query_all_times_the_comparer_within_each_query_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    from simdup_es import default_fingerprinter
    from simdup_es.indexer import index_items
    from simdup_es.multilevel import MultiParams
    from simdup_es.parts import PartPrinter
    from simdup_es.search import comparer
    from simdup_es.sources import Record
    from simdup_es.store import open_store

    text = "".join(random.Random(3).choice(ALPHABET) + ("。" if k % 17 == 16 else "") for k in range(400))
    rejected: list[object] = []
    with open_store(path=tmp_path / "store", create=True) as store:
        index_items(iter([Record(text, "test", "a"), Record(text[:300], "test", "b")]), store, default_fingerprinter(),
                    on_reject=rejected.append)
        store.refresh()
        compare = comparer()
        out = ec.query_all(store, [("q", text[50:], None, 10), ("none", ALPHABET[:40], None, 10)],
                           PartPrinter(default_fingerprinter()), compare, MultiParams(), lambda _: None)
    assert not rejected and set(out["hits"]["q"]) == {"a", "b"} and out["hits"]["none"] == []
    # each query's own share (the query's unit codes are asked of the comparer too, whether or not it finds any)
    assert all(0 < c <= t for c, t in zip(out["compare_ms"], out["ms"], strict=True))
    assert not {"screened", "unit_codes"} & set(vars(compare))  # the class's methods again
