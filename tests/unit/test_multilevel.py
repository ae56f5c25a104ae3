"""Multilevel retrieval (simdup_es.multilevel) on small real fixtures."""

from __future__ import annotations

import array
import copy
import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.compare import compare
from simdup_es.errors import ConfigError, FingerprintVersionError
from simdup_es.fingerprint import Doc, Fingerprinter
from simdup_es.commontext import KeyCounts
from simdup_es.multilevel import (
    CommonText,
    MemoryPartIndex,
    MultiParams,
    PartCandidate,
    PartStore,
    StoredText,
    copied_shares,
    find_copies,
    judge,
    passages,
    rank_candidates,
    rare_levels,
)
from simdup_es.reference import rank_candidates_reference
from simdup_es.keys import PART_MATCH
from simdup_es.levels import FlatParts, Key, Levels, Part, U64Keys
from simdup_es.parts import PartPrinter
from simdup_es.simhash import blocks
from simdup_es.sentences import Sentence, split_sentences
from simdup_es.text import UnifiedText, unify
from simdup_es.winnow import KEY_K, KEY_W, winnowed

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture(name: str) -> str:
    return unify((FIXTURES / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def printer() -> PartPrinter:
    return PartPrinter(Fingerprinter())


@pytest.fixture(scope="module")
def corpus(printer: PartPrinter) -> dict[str, str]:
    return {"article": fixture("zh_article.txt"), "other": fixture("zh_other.txt"), "en": fixture("en_article.txt")}


@pytest.fixture(scope="module")
def index(printer: PartPrinter, corpus: dict[str, str]) -> MemoryPartIndex:
    idx = MemoryPartIndex()
    fp = printer.fingerprinter
    for doc_id, text in corpus.items():
        idx.put_levels(doc_id, printer.levels(UnifiedText(text)), fp.fingerprint(UnifiedText(text)).value)
    return idx


def search(printer: PartPrinter, index: MemoryPartIndex, corpus: dict[str, str], query: str, params: MultiParams = MultiParams()):  # type: ignore[no-untyped-def]
    fp = printer.fingerprinter
    levels = printer.levels(UnifiedText(query))
    qfp = fp.fingerprint(UnifiedText(query)).value
    near = index.near_duplicates(qfp, fp.version, k=3)
    found = index.part_candidates(levels.fingerprints, [k.key for k in levels.keys], fp.version, limit=params.store_limit)
    return find_copies(query, levels, near, found, lambda ids: {i: StoredText(corpus[i]) for i in ids if i in corpus}, compare,
                       params=params)


def test_memory_index_is_a_part_store(index: MemoryPartIndex) -> None:
    assert isinstance(index, PartStore)


def test_finds_a_planted_30_percent_passage(printer: PartPrinter, index: MemoryPartIndex, corpus: dict[str, str]) -> None:
    # A long host (the other fixture) with 30 % of the article's sentences, contiguous, in its middle.
    art = split_sentences(corpus["article"])
    n = round(0.3 * len(art))
    passage = "\n".join(s.text for s in art[20 : 20 + n])
    host_lines = corpus["other"].split("\n")
    host = "\n".join(host_lines[: len(host_lines) // 2] + [passage] + host_lines[len(host_lines) // 2 :])
    # the document fingerprint alone cannot see it
    fp = printer.fingerprinter
    assert fp.fingerprint(UnifiedText(host)).distance(fp.fingerprint(UnifiedText(corpus["article"]))) > 3
    got = {m.id: m for m in search(printer, index, corpus, host)}
    assert got["article"].kind == "partial"
    assert got["article"].similarity_match >= 0.25  # a quarter of the article is in the host
    assert got["other"].kind in ("partial", "near-duplicate")  # and the host is mostly the other fixture
    assert "en" not in got


def test_finds_an_edited_copy(printer: PartPrinter, index: MemoryPartIndex, corpus: dict[str, str]) -> None:
    # every fifth sentence deleted, two paragraphs swapped, and the Traditional-script form
    art = split_sentences(corpus["article"])
    edited = "\n".join(s.text for k, s in enumerate(art) if k % 5 != 2)
    tw = fixture("zh_article_tw.txt")
    for query in (edited, tw):
        got = {m.id: m for m in search(printer, index, corpus, query)}
        assert "article" in got
        assert max(got["article"].similarity_query, got["article"].similarity_match) >= 0.5
        assert "en" not in got


def test_unrelated_document_finds_nothing_partial(printer: PartPrinter, index: MemoryPartIndex, corpus: dict[str, str]) -> None:
    query = unify("今天天气很好，我们一起去公园散步，然后在湖边吃了午饭，下午回家看书。晚上朋友来家里做客，聊到很晚才休息。")
    assert search(printer, index, corpus, query) == []


def test_candidates_report_which_query_parts_and_keys_matched(printer: PartPrinter, index: MemoryPartIndex, corpus: dict[str, str]) -> None:
    levels = printer.levels(UnifiedText(corpus["article"]))
    keys = [k.key for k in levels.keys]
    found = index.part_candidates(levels.fingerprints, keys, levels.version, exclude_id="other")
    top = found[0]
    assert top.id == "article"
    assert top.keys == frozenset(range(len(keys)))
    assert top.parts == frozenset(i for i, f in enumerate(levels.fingerprints) if f is not None)
    assert all(c.id != "other" for c in found)
    assert [len(c.parts) + len(c.keys) for c in found] == sorted((len(c.parts) + len(c.keys) for c in found), reverse=True)
    assert index.part_candidates(levels.fingerprints, keys, "other-version") == []


def test_version_mismatch_is_refused(printer: PartPrinter) -> None:
    idx = MemoryPartIndex()
    levels = printer.levels("第一句话在这里写得足够长一些。")
    idx.put_levels("a", levels)
    with pytest.raises(FingerprintVersionError):
        idx.put_levels("b", type(levels)("0.other", levels.units, levels.sentences, levels.parts, levels.fingerprints, levels.keys))


def test_replacing_a_document_forgets_its_old_levels(printer: PartPrinter, corpus: dict[str, str]) -> None:
    idx = MemoryPartIndex()
    a = printer.levels(UnifiedText(corpus["article"]))
    idx.put_levels("x", a)
    idx.put_levels("x", printer.levels(UnifiedText(corpus["en"])))
    assert idx.part_candidates(a.fingerprints, [k.key for k in a.keys], a.version) == []
    assert len(idx) == 1


def test_ranking_by_coverage(printer: PartPrinter, corpus: dict[str, str]) -> None:
    q = printer.levels(UnifiedText(corpus["article"]))
    all_keys = frozenset(range(len(q.keys)))
    found = [
        PartCandidate("small", frozenset(), frozenset([0]), units=5),  # all of itself: one key covers 5 units
        PartCandidate("big", frozenset(), all_keys, units=10 * q.units),
        PartCandidate("noise", frozenset(), frozenset([1]), units=10 * q.units),
        PartCandidate("a-part", frozenset([0]), frozenset(), units=q.units),  # a part alone, no key
    ]
    ranked = rank_candidates(q, found, MultiParams(min_coverage=0.05))
    # "small" is all of itself, but one key's run (5 units) is under what a short passage needs (16 units on the
    # query's side): less than the judge needs of a copy, so it ranks after "big" (a short text sharing a set
    # phrase used to stop the judging early), and after the candidate holding a part.
    assert [c.id for c in ranked][:3] == ["big", "a-part", "small"]
    small = ranked[2]
    assert small.coverage_match == 1.0 and small.evidence == (5 / MultiParams().short_units) ** 2
    assert ranked[0].coverage_query > 0.9


def test_a_run_ranks_by_what_a_short_passage_needs() -> None:
    # A query of 100 units; two candidates of 60 units, each matching 4 keys: "short" in one run of 14 units,
    # "long" in one of 23 (keys further apart, still chained): only the latter has a counted passage's units.
    sentences = (Sentence(0, 0, 100, "a" * 100, 100),)
    keys = tuple(Key(v, at) for v, at in enumerate([4, 7, 10, 13, 20, 26, 32, 38]))
    q = Levels("v", 100, sentences, (), (), keys)
    found = [PartCandidate("short", frozenset(), frozenset(range(4)), units=60),
             PartCandidate("long", frozenset(), frozenset(range(4, 8)), units=60)]
    for rank in (rank_candidates, rank_candidates_reference):
        long, short = rank(q, found, MultiParams(min_coverage=0.0))
        assert (long.id, short.id) == ("long", "short") and long.coverage_match == short.coverage_match
        share = 4 / ((60 - KEY_K + 1) * 2 / (KEY_W + 1))
        assert long.evidence == long.coverage_match == share
        assert short.evidence == share * (14 / 16) ** 2 > short.coverage_query == 14 / 100


def test_an_edited_copy_is_judged_before_a_text_holding_the_whole_query(printer: PartPrinter,
                                                                         corpus: dict[str, str]) -> None:
    # When limit copies are found before every candidate is judged, the query's own edited copy must be
    # among them rather than longer texts that hold the query whole (or short ones it holds whole).
    q = printer.levels(UnifiedText(corpus["article"]))
    most = frozenset(range(len(q.keys) * 4 // 5))
    found = [
        PartCandidate("holds-it", frozenset(), frozenset(range(len(q.keys))), units=10 * q.units),
        PartCandidate("edited-copy", frozenset(), most, units=q.units),
    ]
    ranked = rank_candidates(q, found)
    assert ranked[1].evidence > ranked[0].evidence  # it holds more of the query...
    assert [c.id for c in ranked] == ["edited-copy", "holds-it"]  # ...but the copy covers both sides
    assert rank_candidates_reference(q, found) == ranked


def test_judge_kinds(corpus: dict[str, str]) -> None:
    c = compare(corpus["article"], corpus["article"])
    # a whole copy is a near-duplicate whatever its distance
    assert judge("x", c, 0).kind == judge("x", c, 20).kind == judge("x", c, None).kind == "near-duplicate"
    assert judge("x", compare(corpus["article"], corpus["en"]), 30) is None
    art = split_sentences(corpus["article"])
    half = "\n".join(s.text for s in art[: len(art) // 2])
    m = judge("x", compare(half, corpus["article"]), 20)
    assert m.kind == "partial" and m.copied_query == 1.0 and 0.3 < m.copied_match < 0.7
    assert judge("x", compare(half, corpus["article"]), 2).kind == "near-duplicate"  # by distance
    assert m.to_dict()["kind"] == "partial"


def test_bad_params_are_refused() -> None:
    for bad in (dict(partial_threshold=1.5), dict(max_candidates=0), dict(k=64), dict(min_coverage=-0.1),
                dict(passage_units=0), dict(passage_gap=-1), dict(passage_gap=True), dict(whole_share=2.0)):
        with pytest.raises(ConfigError):
            MultiParams(**bad)  # type: ignore[arg-type]


def test_a_widely_copied_text_is_still_found_however_many_copies(printer: PartPrinter, corpus: dict[str, str]) -> None:
    """A host holding a paragraph of the query, among ever more copies of the query: always found."""
    art = split_sentences(corpus["article"])
    passage = "\n".join(s.text for s in art[20:26])
    lines = corpus["other"].split("\n")
    host = "\n".join(lines[:5] + [passage] + lines[5:])
    stored = {"host": host}
    for n in range(12):
        stored[f"copy{n}"] = "\n".join(s.text for k, s in enumerate(art) if k % 12 != n)
        idx = MemoryPartIndex()
        fp = printer.fingerprinter
        for doc_id, text in stored.items():
            idx.put_levels(doc_id, printer.levels(UnifiedText(text)), fp.fingerprint(UnifiedText(text)).value)
        got = {m.id: m for m in search(printer, idx, stored, corpus["article"])}
        assert set(got) == set(stored), n
        assert got["host"].kind == "partial" and got["host"].copied_query >= 0.04


def test_judging_stops_at_the_limit_and_counts_what_it_left(printer: PartPrinter, corpus: dict[str, str]) -> None:
    art = split_sentences(corpus["article"])
    stored = {f"copy{n:02}": "\n".join(s.text for k, s in enumerate(art) if k % 25 != n) for n in range(25)}
    idx = MemoryPartIndex()
    for doc_id, text in stored.items():
        idx.put_levels(doc_id, printer.levels(UnifiedText(text)))
    q = printer.levels(UnifiedText(corpus["article"]))
    found = idx.part_candidates(q.fingerprints, [k.key for k in q.keys], q.version)
    judged: list[str] = []

    def texts(ids):  # type: ignore[no-untyped-def]
        judged.extend(ids)
        return {i: StoredText(stored[i]) for i in ids}

    every = find_copies(corpus["article"], q, [], found, texts, compare)
    assert len(every) == 25 and every.more == 0  # judging goes on while it confirms copies
    assert every.ran_out  # every candidate judged, copies still coming: a store that cut them is asked for more
    judged.clear()
    some = find_copies(corpus["article"], q, [], found, texts, compare, limit=12)
    assert len(judged) == 20 and len(some) == 12 and some.more == 13  # texts read 10 at a time, judged up to the limit
    assert not some.ran_out
    # The store's last candidate too weak to judge (one shared key): past it, none would be judged either.
    weak = PartCandidate("weak", frozenset(), frozenset({0}), 10_000)
    assert not find_copies(corpus["article"], q, [], [*found, weak], texts, compare).ran_out


def test_levels_on_worker_processes_equal_levels_in_this_one(printer: PartPrinter, corpus: dict[str, str]) -> None:
    texts = [corpus["article"], "", "。。", corpus["other"], corpus["en"]] * 20  # several jobs: the pool runs
    for batch in (texts, [UnifiedText(t) for t in texts]):
        assert list(printer.map(batch, workers=2)) == printer.levels_many(batch)


def test_map_items_on_workers_equals_fingerprint_and_levels_of_raw_text(printer: PartPrinter, corpus: dict[str, str]) -> None:
    # Raw (traditional, full-width) texts and titles, unified once on the workers: the same
    # fingerprint as the raw document's and the same levels as levels(raw text); a document
    # over max_bytes and an empty one get their error and no levels, in input order.
    small = copy.copy(printer.fingerprinter)
    small.params = dataclasses.replace(small.params, max_bytes=20_000)
    sprinter = PartPrinter(small, printer.params)
    raw = corpus["article"].replace("的", "的。").replace("这", "這") + "ＡＢＣ"
    big = corpus["other"] * 20
    docs = [Doc(raw, "臺灣這個"), Doc(""), Doc(big, "大"), Doc(corpus["en"]), Doc("。。", "標題")] * 20
    assert len(big.encode()) > 20_000 >= len(raw.encode())
    for workers in (1, 2):
        got = list(sprinter.map_items_unified(range(len(docs)), lambda i: docs[i], workers=workers))
        assert [i for i, _, _, _ in got] == list(range(len(docs)))
        plain = sprinter.map_items(range(len(docs)), lambda i: docs[i], workers=workers)
        assert [(i, r.fingerprint, v) for i, r, v, _ in got] == [(i, r.fingerprint, v) for i, r, v in plain]
        for i, result, levels, text in got:
            doc = docs[i]
            if doc.text in ("", big, "。。"):
                assert result.error is not None and levels is None and text is None
                assert type(result.error) is type(small.fingerprint_many([doc])[0].error)
                continue
            assert result == small.fingerprint_many([doc])[0]
            assert levels == sprinter.levels(doc.text) and text == unify(doc.text)


_fp = st.integers(min_value=0, max_value=(1 << 64) - 1)


def _near(base: int, flips: list[int]) -> int:
    for b in flips:
        base ^= 1 << b
    return base


@st.composite
def _stored(draw: st.DrawFn) -> tuple[list[tuple[list[int], list[int]]], list[int], list[int]]:
    """Documents (part fingerprints, keys) and a query, drawn around a few base fingerprints so blocks collide."""
    bases = draw(st.lists(_fp, min_size=1, max_size=3))
    part = st.builds(_near, st.sampled_from(bases), st.lists(st.integers(0, 63), max_size=12))
    key = st.integers(0, 20)
    docs = draw(st.lists(st.tuples(st.lists(part, max_size=4), st.lists(key, max_size=5)), max_size=8))
    return docs, draw(st.lists(part, max_size=4)), draw(st.lists(key, max_size=5))


def _levels(fps: list[int], keys: list[int], version: str = "v") -> Levels:
    parts = tuple(Part(0, 1, 0, 1, 1) for _ in fps)
    return Levels(version, 10, (), parts, tuple(fps), tuple(Key(k, 0) for k in keys))


@settings(max_examples=80, deadline=None)
@given(_stored(), st.integers(1, 10))
def test_part_candidates_equal_brute_force(drawn, limit: int) -> None:  # type: ignore[no-untyped-def]
    docs, q_parts, q_keys = drawn
    idx = MemoryPartIndex()
    for n, (fps, keys) in enumerate(docs):
        idx.put_levels(f"d{n}", _levels(fps, keys))
    want = []
    for n, (fps, keys) in enumerate(docs):
        parts = frozenset(i for i, q in enumerate(q_parts) if any(sum(x == y for x, y in zip(blocks(q), blocks(f))) >= PART_MATCH for f in fps))
        got_keys = frozenset(i for i, k in enumerate(q_keys) if k in keys)
        if parts or got_keys:
            want.append(PartCandidate(f"d{n}", parts, got_keys, 10))
    want.sort(key=lambda c: (-(len(c.parts) + len(c.keys)), c.id))
    assert idx.part_candidates(q_parts, q_keys, "v", limit=limit) == want[:limit]


def test_shared_lines_count_unless_many_documents_hold_them(corpus: dict[str, str]) -> None:
    # Pages made from one template share lines between their own: each a copied sentence when few documents
    # hold it, short ones only when fewer still, none when many do (common text, shown apart).
    art = [s.text for s in split_sentences(corpus["article"]) if 16 <= s.n_units < 30]
    own = [s.text for s in split_sentences(corpus["other"])]
    n = min(len(art), len(own) // 3)
    query = "\n".join(x for k, line in enumerate(art[:n]) for x in [line, *own[3 * k : 3 * k + 3]])
    source = "\n".join(art)
    c = compare(query, source)
    assert judge("x", c, None) is not None  # nothing common: every shared line counts
    keys = np.unique(winnowed(source)[0])
    for held in (40, 500):  # too many for a short passage (30); common (above 179 of 17,900)
        common = CommonText.of(KeyCounts(keys, np.full(keys.size, held), 17_900), query)
        assert judge("x", c, None, MultiParams(), (common.rarity(query), common.rarity(source))) is None, held
        shares = copied_shares(c, MultiParams(), (common.rarity(query), common.rarity(source)))
        assert (shares.common_a > 0.1) is (held > common.common), held


def test_one_sentence_pasted_into_another_text_is_a_partial_copy(corpus: dict[str, str]) -> None:
    # A sentence of 20-59 units pasted at a line break counts both ways; a clause of it under short_units does not.
    sentences = split_sentences(corpus["article"])
    at = next(k for k, s in enumerate(sentences) if 25 <= s.n_units < 60 and k >= 3)
    pasted = sentences[at].text
    source = "\n".join(s.text for s in sentences[at - 3 : at + 4])
    lines = corpus["other"].split("\n")
    host = "\n".join(lines[: len(lines) // 2] + [pasted] + lines[len(lines) // 2 :])
    for a, b in ((host, source), (source, host)):
        m = judge("x", compare(a, b), None)
        assert m is not None and m.kind == "partial" and min(m.copied_query, m.copied_match) < 0.05
    clause = unify(pasted)[:12]
    c = compare("\n".join(lines[: len(lines) // 2] + [clause + "，这一点在其他地方也说过很多次了"] + lines[len(lines) // 2 :]),
                source)
    assert judge("x", c, None) is None


def test_a_short_text_copied_whole_counts_though_one_sentence() -> None:
    post = unify("今天在图书馆读完了一本关于宋代城市生活的书，收获很多")
    for edited in ("转发微博 //@小王: " + post, post.replace("图书馆", "资料室"), post + " #读书# 😀"):
        m = judge("x", compare(unify(edited), post), None)
        assert m is not None and max(m.copied_query, m.copied_match) >= 0.8, edited


def test_a_sentence_that_lost_a_clause_still_shows_its_copied_run(corpus: dict[str, str]) -> None:
    long = unify("在每种平台上，tcl 都支持这种平台的标准形式，同时也支持网络上常见的统一资源路径，以及一些历史上留下来的写法。")
    cut = long.replace("同时也支持网络上常见的统一资源路径,", "")
    c = compare(cut, long)
    assert not c.pairs  # the sentence as a whole falls below right_weight
    assert c.runs_a.all() and c.runs_b.sum() == c.units_a  # but every unit left is in a copied run
    m = judge("x", c, None)
    assert m is not None and m.copied_query == 1.0


@settings(max_examples=150, deadline=None)
@given(st.lists(st.booleans(), max_size=60), st.integers(0, 5))
def test_passages_equal_a_plain_scan(flags: list[bool], gap: int) -> None:
    want: list[tuple[int, int, int]] = []
    for i, f in enumerate(flags):
        if not f:
            continue
        if want and i - (want[-1][1] - 1) - 1 <= gap:
            start, _, n = want[-1]
            want[-1] = (start, i + 1, n + 1)
        else:
            want.append((i, i + 1, 1))
    import numpy as np

    assert passages(np.array(flags, dtype=bool), gap) == want


def test_the_store_is_asked_for_rare_keys_and_parts_only(printer: PartPrinter, corpus: dict[str, str]) -> None:
    # The article's head held by 500 of 17,900 documents: its keys and the part mostly of it are not looked up.
    text = corpus["article"]
    q = printer.levels(UnifiedText(text))
    first = q.parts[0]
    head = "".join(s.text for s in q.sentences[first.first : first.stop])
    held = np.unique(winnowed(head)[0])
    common = CommonText.of(KeyCounts(held, np.full(held.size, 500), 17_900), text)
    rare = rare_levels(q, common)
    assert rare.fingerprints[0] is None and rare.fingerprints[-1] == q.fingerprints[-1] and rare.units == q.units
    assert {k.key for k in rare.keys} == {k.key for k in q.keys} - set(held.tolist()) and len(rare.keys) < len(q.keys)
    assert rare_levels(q, CommonText.of(KeyCounts(), text)) is q  # nothing common: the levels as they are
    # Keys held flat (as the printers give them: filtered as an array) or as Key objects: the same keys left.
    assert isinstance(q.keys, U64Keys)
    plain = rare_levels(dataclasses.replace(q, keys=tuple(q.keys)), common)
    assert tuple(rare.keys) == tuple(plain.keys) and rare.fingerprints == plain.fingerprints
    assert list(rare.keys) == [k for k in q.keys if k.key not in set(held.tolist())]
    # Parts held flat (as the compiled core gives them: read in place) or as Part objects: the same parts dropped.
    numbers = array.array("Q", [v for p in q.parts for v in (p.first, p.stop, p.start, p.end, p.units)]).tobytes()
    assert list(FlatParts(numbers)) == list(q.parts)
    flat = FlatParts(numbers)
    assert rare_levels(dataclasses.replace(q, parts=flat), common).fingerprints == rare.fingerprints
    assert flat._built is None  # no Part made
    # The sentences' unit offsets read from their table, no Sentence made: those of the sentences.
    from simdup_es.levels import SentenceRows
    from simdup_es.multilevel import _unit_starts

    q = printer.levels(UnifiedText(text))  # its sentences not read yet
    assert isinstance(q.sentences, SentenceRows) and q.sentences._built is None
    starts = _unit_starts(q)
    assert q.sentences._built is None and starts.dtype == np.int64
    assert starts.tolist() == _unit_starts(dataclasses.replace(q, sentences=tuple(q.sentences))).tolist()
    assert starts.tolist() == np.cumsum([0, *(s.n_units for s in q.sentences)]).tolist()
