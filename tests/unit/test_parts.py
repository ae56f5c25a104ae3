"""Parts and sentence keys (simdup_es.parts): splitting edge cases and properties."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.errors import ConfigError
from simdup_es.fingerprint import Doc, Fingerprinter
from simdup_es.levels import Levels, Part, PartParams, split_parts, text_keys
from simdup_es.parts import PartPrinter, part_spans
from simdup_es.sentences import split_sentences
from simdup_es.text import UnifiedText, unify
from tests._data import batch_by_route, load_corpus

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def part_tokens(text: str, tokens: list[str], parts: Sequence[Part], segment: Callable[[str], list[str]]
                ) -> list[list[str]]:
    """``segment`` of each part of ``text``, given ``tokens = segment(text)`` (:func:`part_spans` as lists)."""
    return [tokens[s[0] : s[1]] if isinstance(s, tuple) else s for s in part_spans(text, tokens, parts, segment)]


@pytest.fixture(scope="module")
def printer() -> PartPrinter:
    return PartPrinter(Fingerprinter())


def parts_of(text: str, params: PartParams = PartParams()):  # type: ignore[no-untyped-def]
    u = unify(text)
    sentences = split_sentences(u)
    return u, sentences, split_parts(u, sentences, params)


def covered(sentences, parts) -> set[int]:  # type: ignore[no-untyped-def]
    return {k for p in parts for k in range(p.first, p.stop)}


def test_empty_and_punctuation_only_have_no_parts(printer: PartPrinter) -> None:
    for text in ("", "   \n\n ", "。，！？……\n——"):
        levels = printer.levels(text)
        assert levels.parts == () and levels.keys == () and levels.units == 0


def test_no_paragraph_breaks_one_long_line_becomes_overlapping_windows() -> None:
    text = "".join(f"第{i}句话讲的是一个完全不同的话题内容{i}。" for i in range(60))
    u, sentences, parts = parts_of(text)
    assert "\n" not in u
    params = PartParams()
    assert len(parts) > 2
    assert covered(sentences, parts) == set(range(len(sentences)))
    assert all(p.units <= params.window_units + max(s.n_units for s in sentences) + params.window_units // 2 for p in parts)
    # consecutive windows overlap, and advance
    for a, b in zip(parts, parts[1:]):
        assert b.first > a.first and b.first < a.stop


def test_one_huge_sentence_is_one_part() -> None:
    text = "很长" * 2000
    u, sentences, parts = parts_of(text)
    assert len(sentences) == 1 and len(parts) == 1
    assert (parts[0].start, parts[0].end) == (0, len(u))


def test_short_paragraphs_are_merged() -> None:
    text = "\n".join(f"第{i}行标题文字" for i in range(30))
    u, sentences, parts = parts_of(text)
    params = PartParams()
    assert len(parts) < len(sentences)
    assert all(p.units >= params.min_units for p in parts[:-1])
    assert covered(sentences, parts) == set(range(len(sentences)))


def test_part_offsets_are_whole_sentences(printer: PartPrinter) -> None:
    text = (FIXTURES / "zh_article.txt").read_text(encoding="utf-8")
    u, sentences, parts = parts_of(text)
    for p in parts:
        assert u[p.start : p.end].startswith(sentences[p.first].text)
        assert u[p.start : p.end].endswith(sentences[p.stop - 1].text)
        assert p.units == sum(s.n_units for s in sentences[p.first : p.stop])


def test_keys_ignore_punctuation_and_script() -> None:
    import opencc

    simplified = "默认情况下，程序会读取配置文件并且输出结果。"
    a = text_keys(unify(simplified))
    b = text_keys(unify(opencc.OpenCC("s2twp").convert(simplified).replace("，", " ").replace("。", "!")))
    c = text_keys(unify("默认情况下，程序会读取配置文件并且输出结论。"))
    assert a == b
    assert {k.key for k in a} & {k.key for k in c}  # the shared run still shares keys


@pytest.mark.parametrize(
    "bad",
    [dict(min_units=0), dict(window_units=200, max_units=100), dict(overlap=1.0), dict(key_units=True), dict(key_window=0)],
)
def test_bad_params_are_refused(bad: dict) -> None:
    with pytest.raises(ConfigError):
        PartParams(**bad)


def test_a_part_is_fingerprinted_like_a_document_of_its_text(printer: PartPrinter) -> None:
    text = unify((FIXTURES / "zh_other.txt").read_text(encoding="utf-8"))
    levels = printer.levels(UnifiedText(text))
    fp = printer.fingerprinter
    for p, f in zip(levels.parts, levels.fingerprints):
        assert f == fp.fingerprint(UnifiedText(text[p.start : p.end])).value
    assert levels.version == fp.version


_chunk = st.text(alphabet="的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严。，！？\n ",
    min_size=0,
    max_size=400,
)


@settings(max_examples=60, deadline=None)
@given(_chunk, st.integers(min_value=4, max_value=60), st.floats(min_value=0.0, max_value=0.9))
def test_every_sentence_is_in_some_part(text: str, window: int, overlap: float) -> None:
    params = PartParams(min_units=max(1, window // 3), window_units=window, max_units=window * 2, overlap=overlap)
    u, sentences, parts = parts_of(text, params)
    assert covered(sentences, parts) == set(range(len(sentences)))
    assert all(0 <= p.first < p.stop <= len(sentences) for p in parts)
    assert [p.first for p in parts] == sorted(p.first for p in parts)


_two: list[PartPrinter] = []


@settings(max_examples=25, deadline=None)
@given(_chunk)
def test_levels_are_deterministic(text: str) -> None:
    if not _two:  # two independent fingerprinters, built once
        _two.extend(PartPrinter(Fingerprinter()) for _ in range(2))
    a, b = (p.levels(text) for p in _two)
    assert a == b
    assert a == _two[0].levels(text)
    assert len(a.fingerprints) == len(a.parts)


def _sliced_tokens_agree(text: str, tokenizer, params: PartParams = PartParams()) -> int:  # type: ignore[no-untyped-def]
    """Assert that each part's tokens are what segmenting the part gives; how many were sliced."""
    u, sentences, parts = parts_of(text, params)
    again: list[str] = []

    def segment(t: str) -> list[str]:
        again.append(t)
        return tokenizer.segment(t)

    assert part_tokens(u, tokenizer.segment(u), parts, segment) == [tokenizer.segment(u[p.start : p.end]) for p in parts]
    return len(parts) - len(again)


def test_part_tokens_are_the_parts_segmented_on_the_sample_corpus(printer: PartPrinter) -> None:
    from importlib import resources

    sample = resources.files("simdup_es.data").joinpath("sample.jsonl").read_text(encoding="utf-8")
    texts = [json.loads(line)["text"] for line in sample.splitlines()]
    sliced = sum(_sliced_tokens_agree(text, printer.fingerprinter.tokenizer) for text in texts)
    assert sliced > 0  # the fast path is taken, not only the fallback


# Where jieba joins characters, or not: Latin compounds (a.out, c++, 3.14%), dots that
# end a sentence or not, \r\n, and Chinese words across a sentence break.
_mixed = st.lists(
    st.sampled_from(["中华人民", "共和国", "的", "数据库", "是", "a.out", "c++", "3.14", "50%", "x_y", "mh-alias", "Python",
                     ".", "。", "，", "！", "? ", " ", "\n", "\r\n", "e.g.", "#", "&", "的确", "Ab", "9"]),
    max_size=120,
).map("".join)


@settings(max_examples=80, deadline=None)
@given(_mixed, st.integers(min_value=2, max_value=40))
def test_part_tokens_are_the_parts_segmented(text: str, window: int) -> None:
    if not _two:
        _two.extend(PartPrinter(Fingerprinter()) for _ in range(2))
    params = PartParams(min_units=max(1, window // 3), window_units=window, max_units=window * 2)
    _sliced_tokens_agree(text, _two[0].fingerprinter.tokenizer, params)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说"
                        "ab9.+_-%# \n\r。，", min_size=2, max_size=40),
       st.data())
def test_part_tokens_of_any_span_are_the_span_segmented(text: str, data: st.DataObject) -> None:
    # Not only sentence-aligned parts: spans that cut between Chinese characters (where
    # the HMM joins characters across the cut), inside a token or between \r and \n
    # must be segmented again. Half the ends are token boundaries of the whole text.
    if not _two:
        _two.extend(PartPrinter(Fingerprinter()) for _ in range(2))
    tokenizer = _two[0].fingerprinter.tokenizer
    tokens = tokenizer.segment(text)
    bounds = list(itertools.accumulate(map(len, tokens), initial=0))
    end = st.one_of(st.sampled_from(bounds), st.integers(0, len(text)))
    spans = data.draw(st.lists(st.tuples(end, end).map(sorted).filter(lambda s: s[0] < s[1]), min_size=1, max_size=12))
    parts = [Part(0, 1, a, b, 1) for a, b in spans]
    assert part_tokens(text, tokens, parts, tokenizer.segment) == [tokenizer.segment(text[a:b]) for a, b in spans]


def test_a_part_starting_inside_a_token_is_segmented_again(printer: PartPrinter) -> None:
    tokenizer = printer.fingerprinter.tokenizer
    text = "中文\r\n数据"  # \r\n is one token; a part may not begin at its \n
    tokens = tokenizer.segment(text)
    assert "\r\n" in tokens
    part = Part(0, 1, text.index("\n"), len(text), 1)
    assert part_tokens(text, tokens, [part], tokenizer.segment) == [tokenizer.segment("\n数据")]


# Chinese and Latin sentences, abbreviations, case that folds to several letters,
# line breaks and blank lines, so that parts, windows and keys all occur.
_levels_text = st.lists(
    st.sampled_from(["中华人民共和国的数据库是", "我们今天讨论这个问题", "。", "！", "？", "；", "……", "\n", "\n\n", "\r\n", " ",
                     "e.g. ", "the file a.out is here. ", "STRASSE Straße ", "3.14", "İstanbul", "“引号。”", "1. ",
                     "\u2028", "𠀀字", "\ue000"]),
    max_size=80,
).map("".join)


@settings(max_examples=60, deadline=None)
@given(_levels_text, st.sampled_from([None, "", "标题 Title"]))
def test_levels_are_the_references_put_together(text: str, title: str | None) -> None:
    # What index computes in one pass (batched unify, sentences with their joined
    # units, keys from those) is the plain functions one by one.
    if not _two:
        _two.extend(PartPrinter(Fingerprinter()) for _ in range(2))
    printer = _two[0]
    fp = printer.fingerprinter
    ((result, levels, unified, _),) = printer._items_many([Doc(text, title)])
    (alone,) = fp.fingerprint_many([Doc(text, title)])
    assert result.fingerprint == alone.fingerprint
    assert repr(result.error) == repr(alone.error)
    if result.error:
        assert levels is None
        return
    u = unify(text)
    assert unified == u
    sentences = split_sentences(u)
    parts = split_parts(u, sentences)
    assert levels == Levels(
        version=fp.version,
        units=sum(s.n_units for s in sentences),
        sentences=tuple(sentences),
        parts=tuple(parts),
        fingerprints=tuple(r.fingerprint.value if r.fingerprint is not None else None
                           for r in fp.fingerprint_many([Doc(UnifiedText(u[p.start : p.end])) for p in parts])),
        keys=tuple(text_keys(u)),
    )
    assert levels == printer.levels(text)


def test_a_batch_gives_each_document_what_it_gets_alone() -> None:
    # Texts and titles are unified in one batch; a document too large for max_bytes,
    # one without a title and an empty one in between must not shift the others.
    from simdup_es.fingerprint import FingerprintParams

    printer = PartPrinter(Fingerprinter(FingerprintParams(max_bytes=3000)))
    docs = [Doc("繁體中文的測試文件。第二句話在這裡出現了。\n第二段落也有內容。", "標題"), Doc("很长" * 1000, "太长"),
            Doc("没有标题的文件，内容足够长了吧。", None), Doc("", "空的"), Doc("最后一个文件的内容。", "")]
    batch = printer._items_many(docs)
    assert len(batch) == len(docs)
    assert batch[1][0].error is not None and batch[3][0].error is not None
    for doc, got in zip(docs, batch):
        (alone,) = printer._items_many([doc])
        assert got[0].fingerprint == alone[0].fingerprint and got[1:] == alone[1:]
        assert repr(got[0].error) == repr(alone[0].error)
    assert batch[0][1] == printer.levels(docs[0].text) and batch[0][2] == unify(docs[0].text)


def test_a_part_ending_at_a_full_stop_before_chinese_is_a_slice(printer: PartPrinter) -> None:
    # A window ends after "。" with Chinese right after it: jieba never joins "。" to
    # anything, so the part's tokens are the document's, without segmenting again.
    # A part cut between two Chinese characters is segmented again.
    tokenizer = printer.fingerprinter.tokenizer
    text = "数据库的设计很重要。中华人民共和国成立了。a.out 是文件\n下一行"
    cuts = [0, text.index("中"), text.index("a.out"), text.index("\n"), len(text)]
    parts = [Part(0, 1, a, b, 1) for a, b in itertools.pairwise(cuts)] + [Part(0, 1, 0, text.index("设"), 1)]
    again: list[str] = []
    got = part_tokens(text, tokenizer.segment(text), parts, lambda t: again.append(t) or tokenizer.segment(t))
    assert got == [tokenizer.segment(text[p.start : p.end]) for p in parts]
    assert again == ["数据库的"]


def test_levels_from_workers_equal_levels_made_here(printer: PartPrinter) -> None:
    # Workers send the sentences packed; the levels built from them are equal to (and
    # hash like) those made in this process, sentence objects built only when read.
    import pickle

    texts = [unify(t) for t in ("第一句话在这里。第二句话在那里。\n新的一段，还有一句。", "这是另一篇文档的内容。", "")]
    here = [printer.levels(UnifiedText(t)) for t in texts]
    from simdup_es.parts import _DOCS_PER_CHUNK

    docs = [Doc(t) for t in texts[:2]] * _DOCS_PER_CHUNK  # two chunks: the pool runs
    sent = [levels for _, _, levels in printer.map_items(docs, lambda d: d, workers=2)]
    assert sent == here[:2] * _DOCS_PER_CHUNK and [hash(x) for x in sent] == [hash(x) for x in sent[:2]] * _DOCS_PER_CHUNK
    assert hash(sent[0]) == hash(here[0])
    lazy = sent[0].sentences
    assert type(lazy) is not tuple and lazy == here[0].sentences and here[0].sentences == lazy
    assert len(lazy) == 3 and lazy[1].text == "第二句话在那里。" and lazy[-2:] == here[0].sentences[-2:]
    assert [s.index for s in lazy] == [0, 1, 2] and lazy != here[1].sentences
    assert pickle.loads(pickle.dumps(sent[0])) == here[0]


def test_index_levels_from_workers_come_without_texts_and_equal_those_with_them(
    printer: PartPrinter, monkeypatch: pytest.MonkeyPatch
) -> None:
    # map_items (index, backfill) gets neither the unified texts nor the sentences back from
    # the workers: the sentences are cut again from the document's text here when first
    # read, equal to those map_items_unified (search, groups) gets with the texts.
    import pickle

    from simdup_es.fingerprint import Result
    from simdup_es.parts import _items_chunk

    docs = [Doc(r["text"], r.get("title")) for r in load_corpus("zh-docs.jsonl")[:80]]
    assert max(len(d.text.encode("utf-8")) for d in docs) < 100_000
    docs += [Doc(""), Doc("。。。"), Doc("x" * 100_001, "too large")]
    fingerprinter = Fingerprinter(dataclasses.replace(printer.fingerprinter.params, max_bytes=100_000))
    printer = PartPrinter(fingerprinter)
    monkeypatch.setattr("simdup_es.parts._DOCS_PER_CHUNK", 32)  # 3 chunks: the pool runs
    plain = list(printer.map_items(docs, lambda d: d, workers=2))
    unified = list(printer.map_items_unified(docs, lambda d: d, workers=2))
    here = [item for i in range(0, len(docs), 32) for item in printer._items_many(docs[i : i + 32])]
    def seen(r: Result) -> tuple[object, ...]:  # exceptions are not equal to their copies
        return type(r), r.fingerprint, type(r.error), str(r.error)

    assert [seen(r) for _, r, _ in plain] == [seen(r) for _, r, _, _ in unified] == [seen(r) for r, _, _, _ in here]
    assert [r.error is not None for _, r, _ in plain] == [False] * 80 + [True] * 3
    assert [u for _, _, _, u in unified] == [u for _, _, u, _ in here] and unified[0][3]
    assert sum(lv is not None for _, _, lv in plain) == 80
    for (_, _, lv), (_, _, lv_unified, _), (_, lv_here, _, _) in zip(plain, unified, here, strict=True):
        assert (lv is None) == (lv_unified is None) == (lv_here is None)
        if lv is None:
            continue
        assert lv.sentences._built is None and lv.stored() == lv_here.stored()  # type: ignore[attr-defined]
        assert lv == lv_unified == lv_here and lv.sentences._built is not None  # type: ignore[attr-defined]
    # Without the texts, a batch leaves out at least their bytes (and the sentences').
    sizes = [len(pickle.dumps(_items_chunk(fingerprinter, docs[:32], params=printer.params, texts=texts)))
             for texts in (True, False)]
    assert sizes[0] - sizes[1] > sum(len(u.encode()) for _, _, u, _ in here[:32] if u)


def test_parts_and_keys_from_workers_are_made_on_first_use(printer: PartPrinter) -> None:
    # Parts and keys come back from a worker as flat numbers: equal to (and hash and
    # pickle like) the tuples made here, key values read without making the objects.
    import pickle

    from simdup_es.fingerprint import Fingerprint, Result
    from simdup_es.parts import _Batch

    def packed(levels: Levels, text: str) -> bytes:
        return pickle.dumps(_Batch([(Result(Fingerprint(7, levels.version), None), levels, text, None)], levels.version))

    def unpacked(data: bytes, raw: str) -> tuple[Levels, str | None]:
        ((_, levels, unified, _),) = pickle.loads(data).items([Doc(raw)])
        return levels, unified

    text = unify((FIXTURES / "zh_article.txt").read_text(encoding="utf-8"))
    here = printer.levels(UnifiedText(text))
    assert len(here.parts) > 1 and len(here.keys) > 1 and any(k.key >= 2**63 for k in here.keys)
    sent, unified = unpacked(packed(here, text), "not read")
    assert unified == text
    assert type(sent.parts) is not tuple and type(sent.keys) is not tuple
    # The sentences made here are rows of a table too, packed as they are: as the tuple of them would be.
    assert type(here.sentences) is not tuple and len(here.sentences) > 1 and sent.sentences == here.sentences
    assert packed(dataclasses.replace(here, sentences=tuple(here.sentences)), text) == packed(here, text)
    assert sent.key_values() == here.key_values() == [k.key for k in here.keys]
    assert sent.stored() == here.stored() and sent.keys._built is None  # type: ignore[attr-defined]  # no key made
    assert len(sent.parts) == len(here.parts) and len(sent.keys) == len(here.keys)
    assert sent.parts == here.parts and here.parts == sent.parts and sent.keys == here.keys
    assert sent.parts[-1] == here.parts[-1] and list(sent.keys) == list(here.keys) and sent.keys[1:3] == here.keys[1:3]
    assert sent == here and hash(sent) == hash(here)
    assert sent.parts != here.keys and sent.keys != here.keys[:-1]
    again = pickle.loads(pickle.dumps(sent))
    assert again == here and type(again.parts) is tuple and type(again.keys) is tuple
    empty, _ = unpacked(packed(printer.levels(""), ""), "")
    assert empty.parts == () and empty.keys == () and empty.key_values() == [] and empty.stored() == ([], [])


@settings(max_examples=60, deadline=None)
@given(st.lists(_chunk, max_size=4), st.integers(min_value=4, max_value=60), st.booleans())
def test_a_batch_is_split_like_each_text_by_the_plain_functions(
    printer: PartPrinter, batch: list[str], window: int, numpy: bool
) -> None:
    # _split_many takes the paragraphs and unit counts from the batch scan; split_parts finds them itself.
    params = PartParams(min_units=max(1, window // 3), window_units=window, max_units=window * 2)
    routed = batch_by_route(batch, numpy)
    got = PartPrinter(printer.fingerprinter, params)._split_many(routed)
    for text, split in zip(routed, got, strict=True):
        sentences = split_sentences(text)
        assert (split.text, tuple(split.sentences), tuple(split.keys)) == (
            text, tuple(sentences), tuple(text_keys(text, params)))
        assert split.parts == split_parts(text, sentences, params)
        assert split.units == sum(s.n_units for s in sentences)


def test_a_batch_of_the_corpus_is_split_like_each_text(printer: PartPrinter) -> None:
    batch = [unify(d["text"]) for d in load_corpus("zh-docs.jsonl")[:200]]
    got = printer._split_many(batch)
    assert [s.parts for s in got] == [split_parts(u, split_sentences(u)) for u in batch]
    assert sum(len(s.parts) for s in got) > 400
