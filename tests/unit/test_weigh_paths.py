"""weigh_batch (what fingerprints use) gives weigh's floats: cold or warm cache, with and without title words,
from segmented tokens or from jieba-rs's cut (whose Latin compounds weigh_batch splits in its counts), for
documents and for their parts given as slices of their tokens. (In another order within a document, on
which no SimHash depends: each document's (hash, weight) pairs are compared sorted.)"""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.config import FingerprintParams
from simdup_es.fingerprint import Fingerprinter
from simdup_es.text import unify
import simdup_es.tokens as tokens_module
from simdup_es.tokens import IdfTable, Lexicon, Tokenizer, _split_compounds, weigh, weigh_batch
from tests._data import load_corpus


def _per_doc(docs: list[list[str]], lexicon: Lexicon, titles: list[frozenset[str]], parts: list | None = None  # type: ignore[type-arg]
             ) -> list[list[tuple[int, float]]]:
    hashes, weights, offsets = weigh_batch(docs, lexicon, titles, parts)
    bounds = offsets.tolist()
    return [sorted(zip(hashes[a:b].tolist(), weights[a:b].tolist())) for a, b in zip(bounds, bounds[1:])]


def _weigh(tokens: list[str], lexicon: Lexicon, title_words: frozenset[str] = frozenset()) -> list[tuple[int, float]]:
    """weigh's (hash, weight) pairs, sorted."""
    return sorted(zip(*weigh(tokens, lexicon, title_words=title_words)))


def test_weigh_batch_gives_the_floats_of_weigh_on_the_corpus() -> None:
    params = FingerprintParams()
    tokenizer = Tokenizer()
    records = load_corpus("zh-docs.jsonl")[::10]
    docs = [tokenizer.segment(unify(d["text"])) for d in records]
    titles = [frozenset(tokenizer.words(unify(d["title"]))) if d.get("title") else frozenset() for d in records]
    assert len(docs) > 300 and sum(map(bool, titles)) > 100
    idf = IdfTable.load()
    expected = [_weigh(tokens, Lexicon(params, idf), title_words=t) for tokens, t in zip(docs, titles)]
    lexicon = Lexicon(params, idf)
    cold = _per_doc(docs, lexicon, titles)  # every token new to the cache
    warm = _per_doc(docs, lexicon, titles)  # every token cached
    assert cold == warm == expected
    assert sum(map(len, expected)) > 10_000
    # Without titles: the same as weigh without title words, and title words do weigh.
    untitled = _per_doc(docs, lexicon, [frozenset()] * len(docs))
    assert untitled == [_weigh(tokens, lexicon) for tokens in docs] != expected


def test_weigh_batch_of_cut_tokens_is_weigh_of_segmented_ones_on_the_corpus() -> None:
    tokenizer = Tokenizer()
    texts = [unify(d["text"]) for name in ("zh-docs.jsonl", "en-docs.jsonl") for d in load_corpus(name)[::7]]
    cut, segmented = [tokenizer.cut(u) for u in texts], [tokenizer.segment(u) for u in texts]
    assert sum(c != s for c, s in zip(cut, segmented)) > 200  # compounds to split in many documents
    lexicon = Lexicon(FingerprintParams(), IdfTable.load())
    cold = _per_doc(cut, lexicon, [frozenset()] * len(cut))  # every token new to the cache
    assert cold == _per_doc(cut, lexicon, [frozenset()] * len(cut)) == [_weigh(s, lexicon) for s in segmented]


_TOKENS = st.lists(st.sampled_from(["文档", "检索", "的", "，", " ", "elasticsearch", "a", "近似", "重复", "3.14", "了",
                                    "a.out", "out", ".", "mh-alias", "-f", "c++", "x_y", "50%", "\n"])
                   | st.text(alphabet="ab.-_%\n文", max_size=5) | st.text(max_size=4), max_size=30)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_TOKENS, st.sets(st.sampled_from(["文档", "近似", "a", "x"]))), max_size=6))
def test_weigh_batch_agrees_with_weigh(batch: list[tuple[list[str], set[str]]]) -> None:
    lexicon = Lexicon(FingerprintParams(), IdfTable.load())
    docs, titles = [d for d, _ in batch], [frozenset(t) for _, t in batch]
    # The Latin compounds among the tokens are split as segment splits them.
    expected = [_weigh(_split_compounds("".join(d), d), lexicon, title_words=t) for d, t in zip(docs, titles)]
    assert _per_doc(docs, lexicon, titles) == expected


def _flattened(docs: list[list[str]], titles: list[frozenset[str]], parts: list[list]  # type: ignore[type-arg]
               ) -> tuple[list[list[str]], list[frozenset[str]]]:
    """The documents of weigh_batch(docs, titles, parts) one by one: each document, then its parts without title."""
    items, item_titles = [], []
    for tokens, title, spans in zip(docs, titles, parts):
        items.append(tokens)
        item_titles.append(title)
        for span in spans:
            items.append(tokens[span[0] : span[1]] if isinstance(span, tuple) else span)
            item_titles.append(frozenset())
    return items, item_titles


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_TOKENS, st.sets(st.sampled_from(["文档", "近似", "a", "out", "x"]))), max_size=5), st.data())
def test_weigh_batch_of_parts_is_weigh_of_each_part(batch: list[tuple[list[str], set[str]]], data: st.DataObject) -> None:
    # Parts as slices of their document's tokens (a Latin compound inside, at either
    # end or cut off, empty, the whole document) and as tokens of their own.
    lexicon = Lexicon(FingerprintParams(), IdfTable.load())
    docs, titles = [d for d, _ in batch], [frozenset(t) for _, t in batch]
    # Bounds as a slice takes them: negative, reversed, past the end.
    bound = st.integers(-2 - max((len(d) for d in docs), default=0), 2 + max((len(d) for d in docs), default=0))
    parts = [data.draw(st.lists(st.tuples(bound, bound) | _TOKENS, max_size=4)) for _ in docs]
    items, item_titles = _flattened(docs, titles, parts)
    expected = [_weigh(_split_compounds("".join(d), d), lexicon, title_words=t) for d, t in zip(items, item_titles)]
    assert _per_doc(docs, lexicon, titles, parts) == expected  # the cache warm now
    assert _per_doc(docs, Lexicon(FingerprintParams(), IdfTable.load()), titles, parts) == expected  # and cold
    with mock.patch.object(tokens_module, "_DENSE_KEYS", 0):  # counted by sorting, as for a long document with many parts
        assert _per_doc(docs, lexicon, titles, parts) == expected


def test_weigh_batch_of_parts_on_the_corpus_is_weigh_batch_of_each_part() -> None:
    from simdup_es.parts import PartPrinter, part_spans

    printer = PartPrinter(Fingerprinter())
    tokenizer = printer.fingerprinter.tokenizer
    splits = printer._split_many([unify(d["text"]) for d in load_corpus("zh-docs.jsonl")[::13]])
    docs = [tokenizer.cut(s.text) for s in splits]
    parts = [part_spans(s.text, d, s.parts, tokenizer.cut) for s, d in zip(splits, docs)]
    assert sum(isinstance(p, tuple) for ps in parts for p in ps) > 1000
    titles = [frozenset(d[:3]) for d in docs]
    lexicon = Lexicon(FingerprintParams(), IdfTable.load())
    items, item_titles = _flattened(docs, titles, parts)
    expected = _per_doc(items, Lexicon(FingerprintParams(), IdfTable.load()), item_titles)
    assert _per_doc(docs, lexicon, titles, parts) == expected
    assert _per_doc(docs, lexicon, titles, parts) == expected


def test_weigh_batch_wants_titles_and_parts_for_every_document() -> None:
    lexicon = Lexicon(FingerprintParams(), IdfTable.load())
    with pytest.raises(ValueError, match="2 documents"):
        weigh_batch([["文档"], ["检索"]], lexicon, parts=[[(0, 1)]])
    with pytest.raises(ValueError, match="2 documents"):
        weigh_batch([["文档"], ["检索"]], lexicon, titles=[frozenset()])
