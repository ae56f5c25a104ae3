"""The Store contract for the finer levels: parts and sentence keys.

Each test runs once per store (``local``, ``elasticsearch``; see conftest.py) on the
real fixture texts (``tests/fixtures``), a 30 % passage of one planted in another, an
edited copy, a document with no sentence and one huge paragraph. Every answer of
:meth:`Store.part_candidates` is held to :class:`simdup_es.multilevel.MemoryPartIndex`
(the reference) fed the same levels: the same candidates, matched parts and keys,
units, and order. So both stores give identical result sets; and the whole
search (:func:`simdup_es.search.find_copies`: candidates, comparison matrix, kinds)
over each store equals the reference pipeline.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path

import pytest

from simdup_es import default_fingerprinter
from simdup_es.multilevel import MemoryPartIndex, MultiParams, PartCandidate
from simdup_es.multilevel import StoredText
from simdup_es.multilevel import find_copies as judge_copies
from simdup_es.search import comparer, find_copies
from simdup_es.sentences import split_sentences
from simdup_es.levels import Levels
from simdup_es.parts import PartPrinter
from simdup_es.store import base
from simdup_es.store.base import Store, StoredDoc, query_terms
from simdup_es.text import UnifiedText, unify

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@cache
def printer() -> PartPrinter:
    return PartPrinter(default_fingerprinter())


def _lines(name: str) -> list[str]:
    return [line for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines() if line.strip()]


@cache
def texts() -> dict[str, str]:
    """Unified texts by id: the fixtures, pieces of them, a planted passage, an edited copy, edge cases."""
    article, other = _lines("zh_article.txt"), _lines("zh_other.txt")
    out = {name: "\n".join(_lines(f"{name}.txt")) for name in ("zh_article", "zh_article_tw", "zh_other", "en_article")}
    third = len(article) // 3
    for i in range(3):  # overlapping pieces: many shared parts and keys, so ties and cuts are exercised
        out[f"piece-{i}"] = "\n".join(article[i * third // 2 : i * third // 2 + third + 10])
    start = len(article) // 3
    passage = article[start : start + int(0.3 * len(article))]
    out["planted"] = "\n".join(other[: len(other) // 2] + passage + other[len(other) // 2 :])
    out["edited"] = "\n".join(
        line.replace("文件", "档案") if i % 5 == 0 else line for i, line in enumerate(article) if i % 7 != 3
    )
    out["no-sentence"] = "  \n\n ..."
    out["one-paragraph"] = "".join(article * 3)  # no line break: one run cut into windows
    return {doc_id: unify(text) for doc_id, text in out.items()}


@cache
def levels() -> dict[str, Levels]:
    return {doc_id: printer().levels(UnifiedText(text)) for doc_id, text in texts().items()}


@cache
def queries() -> tuple[tuple[str, Levels], ...]:
    """The stored texts, the planted passage alone and a fresh edit, as queries."""
    article = _lines("zh_article.txt")
    extra = {
        "passage": "\n".join(article[10:40]),
        "fresh-edit": "\n".join(line + "。另加一句" if i % 4 == 0 else line for i, line in enumerate(article[5:])),
    }
    return tuple(levels().items()) + tuple((q, printer().levels(unify(t))) for q, t in extra.items())


def stored(doc_id: str, lv: Levels) -> StoredDoc:
    return StoredDoc(doc_id, 0x0123456789ABCDEF, lv.version, texts().get(doc_id), None,
                     levels=lv)


def load_levels(store: Store, docs: dict[str, Levels]) -> None:
    report = store.put([stored(doc_id, lv) for doc_id, lv in docs.items()])
    assert report.failed == [] and report.written == len(docs) and report.capped == []
    store.refresh()


def reference(docs: dict[str, Levels]) -> MemoryPartIndex:
    ref = MemoryPartIndex()
    for doc_id, lv in docs.items():
        ref.put_levels(doc_id, lv)
    return ref


def ask(store: Store, lv: Levels, **kw: object) -> list[PartCandidate]:
    return store.part_candidates(list(lv.fingerprints), [k.key for k in lv.keys], lv.version, **kw)  # type: ignore[arg-type]


def expected(ref: MemoryPartIndex, lv: Levels, **kw: object) -> list[PartCandidate]:
    """The reference's answer for what a store looks up of ``lv`` (all of it, or the spread of a long query)."""
    parts, keys = query_terms(list(lv.fingerprints), [k.key for k in lv.keys])
    return [
        dataclasses.replace(c, parts=frozenset(parts[i][0] for i in c.parts), keys=frozenset(keys[i][0] for i in c.keys))
        for c in ref.part_candidates([f for _, f in parts], [k for _, k in keys], lv.version, **kw)  # type: ignore[arg-type]
    ]


# --------------------------------------------------------------------------- tests


def test_the_fixture_set_covers_the_cases() -> None:
    lv = levels()
    assert lv["no-sentence"].parts == () and lv["no-sentence"].keys == ()
    # The huge paragraph became windows, more than a query looks up.
    assert len(lv["one-paragraph"].parts) > base.MAX_QUERY_PARTS


@pytest.mark.parametrize("limit", [100, 3])
def test_part_candidates_equal_the_reference(store: Store, limit: int) -> None:
    docs = levels()
    load_levels(store, docs)
    ref = reference(docs)
    found_any = 0
    for name, lv in queries():
        for exclude in (None, name):
            want = expected(ref, lv, exclude_id=exclude, limit=limit)
            assert ask(store, lv, exclude_id=exclude, limit=limit) == want, (name, exclude)
            found_any += len(want)
    assert found_any > 2 * len(queries())  # the queries find more than themselves


def test_copy_candidates_are_both_lookups_of_a_query(store: Store) -> None:
    # One call for the document level and the levels (one search request to a cluster):
    # the same answers as the two lookups asked one by one.
    base = 0x0123456789ABCDEF
    docs = levels()
    store.put([dataclasses.replace(stored(doc_id, lv), fingerprint=base ^ ((1 << n) - 1))  # n bits from base
               for n, (doc_id, lv) in enumerate(docs.items())])
    store.refresh()
    requests = []
    client = getattr(store, "client", None)
    if client is not None:  # count the cluster's search requests (real ones)
        for name in ("search", "msearch"):
            real = getattr(client, name)
            setattr(client, name, lambda *a, _real=real, _name=name, **k: requests.append(_name) or _real(*a, **k))
    found = single = 0
    for name, lv in queries():
        for exclude, k in ((None, 3), (name, 0), (name, 7)):  # the parts match by 6 of 8 blocks whatever k
            fps, keys = list(lv.fingerprints), [k.key for k in lv.keys]
            requests.clear()
            (ids, values), parts = store.copy_candidates(base, fps, keys, lv.version, k=k, exclude_id=exclude, limit=5)
            if client is not None and keys:
                # Both lookups in one _msearch; after it only the part search asked again for more, when a hit
                # lost a part to the 6-of-8 check and the engine's cut may have left out one that now ranks.
                assert requests[:1] == ["msearch"] and set(requests[1:]) <= {"search"}, (name, exclude, requests)
                single += requests == ["msearch"]
            want_ids, want_values = store.candidates(base, lv.version, k=k, exclude_id=exclude)
            assert sorted(zip(ids, values.tolist())) == sorted(zip(want_ids, want_values.tolist()))
            assert parts == store.part_candidates(fps, keys, lv.version, exclude_id=exclude, limit=5), (name, exclude)
            found += len(ids) + len(parts)
    assert found > 2 * len(queries())
    assert client is None or single > len(queries())  # most queries: one request


@pytest.mark.parametrize("with_texts", [True, False])
def test_levels_sent_by_workers_are_stored_as_levels_made_here(store: Store, with_texts: bool) -> None:
    # Fingerprint workers send levels as flat numbers (parts._Batch), made objects only
    # when read, and for indexing without the unified texts and sentences: stored, they
    # answer exactly what the levels made here do.
    import pickle

    from simdup_es.fingerprint import Doc, Fingerprint, Result
    from simdup_es.parts import _Batch

    docs = levels()
    version = next(iter(docs.values())).version
    batch = _Batch(((Result(Fingerprint(n, version), None), lv, texts()[doc_id], None) for n, (doc_id, lv) in enumerate(docs.items())),
                   version, texts=with_texts)
    raw = [Doc(texts()[doc_id]) for doc_id in docs]
    sent = {doc_id: lv for doc_id, (_, lv, _, _) in zip(docs, pickle.loads(pickle.dumps(batch)).items(raw), strict=True)}
    assert all(type(lv.keys) is not tuple and type(lv.sentences) is not tuple for lv in sent.values())
    load_levels(store, sent)  # type: ignore[arg-type]
    assert all(lv.sentences._built is None for lv in sent.values())  # type: ignore[attr-defined]  # storing read none
    assert sent == docs
    ref = reference(docs)
    for name, lv in queries():
        assert ask(store, lv, exclude_id=name) == expected(ref, lv, exclude_id=name), name


def test_planted_passage_and_edited_copy_are_found(store: Store) -> None:
    load_levels(store, levels())
    found = {c.id: c for c in ask(store, levels()["zh_article"], exclude_id="zh_article")}
    assert {"planted", "edited", "one-paragraph", "piece-0"} <= set(found)
    assert "zh_other" not in found and "en_article" not in found
    assert found["planted"].keys and found["edited"].parts and found["edited"].units == levels()["edited"].units
    assert ask(store, levels()["no-sentence"]) == []


def test_other_versions_and_documents_without_levels_are_no_part_candidates(store: Store) -> None:
    lv = levels()["zh_article"]
    other = dataclasses.replace(lv, version="other-recipe")
    report = store.put([stored("mine", lv), StoredDoc("other", 7, "other-recipe", "x", levels=other),
                        StoredDoc("plain", 0xF0F0F0F0F0F0F0F0, lv.version, "no levels")])
    assert report.failed == [] and report.written == 3
    store.refresh()
    assert [c.id for c in ask(store, lv)] == ["mine"]
    assert [c.id for c in ask(store, other)] == ["other"]
    # Replaced without levels: its old levels go with the old document.
    assert store.put([StoredDoc("mine", 5, lv.version, "now plain")]).written == 1
    store.refresh()
    assert ask(store, lv) == []
    assert store.candidates(5, lv.version, k=3)[0] == ["mine"]  # the document level is untouched


def test_levels_of_another_version_are_refused(store: Store) -> None:
    lv = dataclasses.replace(levels()["zh_other"], version="not-the-document's")
    report = store.put([StoredDoc("bad", 1, "v1", "t", levels=lv), stored("good", levels()["zh_other"])])
    assert report.written == 1 and [doc_id for doc_id, _ in report.failed] == ["bad"]
    assert "version" in report.failed[0][1]


def test_levels_holding_other_than_64_bit_unsigned_values_are_refused(store: Store) -> None:
    from simdup_es.levels import Key

    lv = levels()["zh_other"]
    bad = {
        "key-negative": dataclasses.replace(lv, keys=(*lv.keys, Key(-1, 0))),
        "key-too-big": dataclasses.replace(lv, keys=(Key(1 << 64, 0),)),
        "part-float": dataclasses.replace(lv, fingerprints=(*lv.fingerprints[:-1], 1.5)),
        "part-bool": dataclasses.replace(lv, fingerprints=(True,)),
    }
    report = store.put([*(stored(doc_id, x) for doc_id, x in bad.items()), stored("good", lv)])
    assert report.written == 1 and [doc_id for doc_id, _ in report.failed] == list(bad)
    assert all("not a 64-bit unsigned integer" in reason for _, reason in report.failed)


def test_a_long_query_is_looked_up_by_an_even_spread(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "MAX_QUERY_PARTS", 4)
    monkeypatch.setattr(base, "MAX_QUERY_KEYS", 7)
    docs = levels()
    load_levels(store, docs)
    lv = docs["one-paragraph"]
    parts, keys = query_terms(list(lv.fingerprints), [k.key for k in lv.keys])
    assert [i for i, _ in parts] == [0, 20, 40, 60] and len(keys) == 7  # spread over the whole query
    want = expected(reference(docs), lv)
    assert want and ask(store, lv) == want
    assert all(c.parts <= {0, 20, 40, 60} for c in want)


def test_parts_beyond_the_cap_are_left_out_and_reported(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "MAX_STORED_PARTS", 20)
    lv = levels()["one-paragraph"]
    report = store.put([stored("long", lv), stored("short", levels()["piece-0"])])
    assert report.written == 2 and [doc_id for doc_id, _ in report.capped] == ["long"]
    n = len([f for f in lv.fingerprints if f is not None])
    assert report.capped[0][1].startswith(f"{n - 20} of {n} parts")
    store.refresh()
    kept, _, cut = base.stored_levels(lv)
    assert len(kept) == 20 and cut == n - 20
    ref = reference({"long": dataclasses.replace(lv, fingerprints=tuple(kept)), "short": levels()["piece-0"]})
    for q in (lv, levels()["zh_article"], levels()["piece-0"]):
        assert ask(store, q) == expected(ref, q)


def test_find_copies_over_the_store_equals_the_reference_pipeline(store: Store) -> None:
    # Real fingerprints (near-duplicates by distance too), and a page sharing every
    # fourth sentence of the article between three of its own: copied sentences, which
    # few stored documents hold, so a copy from one sentence up.
    article, other = ([s.text for s in split_sentences(texts()[name])] for name in ("zh_article", "zh_other"))
    docs = {**texts(), "template": "\n".join(x for k, line in enumerate(article[::4][: len(other) // 3])
                                              for x in [line, *other[3 * k : 3 * k + 3]])}
    fp = printer().fingerprinter
    prints = {doc_id: fp.fingerprint(unify(t)) for doc_id, t in docs.items() if t.strip(" \n.")}
    lv = {doc_id: printer().levels(unify(docs[doc_id])) for doc_id in prints}
    report = store.put([StoredDoc(doc_id, f.value, f.version, docs[doc_id], levels=lv[doc_id]) for doc_id, f in prints.items()])
    assert report.failed == [] and report.written == len(prints)
    store.refresh()
    ref = MemoryPartIndex()
    for doc_id, f in prints.items():
        ref.put_levels(doc_id, lv[doc_id], f.value)
    compare = comparer()
    kinds = {}
    # A rare copied sentence counts from short_units; with long passages only, no single sentence does.
    long_only = MultiParams(passage_units=200, short_units=200)
    for params in (MultiParams(), long_only):
        for query, exclude in (("zh_article", "zh_article"), ("template", "template"), ("planted", None), ("edited", "edited")):
            u = unify(docs[query])
            q_lv, q_fp = printer().levels(UnifiedText(u)), fp.fingerprint(UnifiedText(u))
            near = [(i, d) for i, d in ref.near_duplicates(q_fp.value, q_fp.version, k=params.k, exclude_id=exclude)]
            found = expected(ref, q_lv, exclude_id=exclude, limit=params.store_limit)
            want = judge_copies(u, q_lv, near, found, lambda ids: {i: StoredText(unify(docs[i]), prints[i].value)
                                                                   for i in ids if i in docs}, compare,
                                query_fingerprint=q_fp.value, params=params, limit=100)
            got = find_copies(store, docs[query], printer=printer(), exclude_id=exclude, params=params, limit=100)
            assert [(m.id, m.kind, m.distance, m.copied_query, m.copied_match) for m in got] == \
                   [(m.id, m.kind, m.distance, m.copied_query, m.copied_match) for m in want], (query, params)
            kinds[query, params] = {m.id: m.kind for m in got}
    passages = MultiParams()
    assert kinds["zh_article", passages]["planted"] == "partial" and kinds["planted", passages]["zh_article"] == "partial"
    # The page shares a quarter of its sentences with the article, one by one: each is a
    # copied sentence that two stored documents hold, a copy; by long passages alone, none.
    assert kinds["zh_article", passages]["template"] == "partial" and "template" not in kinds["zh_article", long_only]
    assert kinds["template", passages]["zh_article"] == "partial" and "zh_article" not in kinds["template", long_only]


def test_indexing_without_levels_writes_document_fingerprints_alone(store: Store) -> None:
    # index --levels document: near-duplicates of whole documents are found, partial
    # copies are not (their documents have no parts or keys); indexing again with the
    # levels adds them, under the same ids.
    from simdup_es.indexer import index_items
    from simdup_es.sources import Record

    docs = {doc_id: texts()[doc_id] for doc_id in ("zh_article", "planted", "zh_other")}
    records = [Record(text, f"in:{i + 1}", doc_id) for i, (doc_id, text) in enumerate(docs.items())]
    fp = printer().fingerprinter
    rejected: list[object] = []
    summary = index_items(iter(records), store, fp, on_reject=rejected.append, workers=1, levels="document")
    assert (summary.indexed, rejected) == (3, [])
    store.refresh()
    assert (store.count(), store.count_with_levels()) == (3, 0)
    article = fp.fingerprint(docs["zh_article"])
    assert "zh_article" in store.candidates(article.value, article.version, k=3)[0]
    query = levels()["zh_article"]
    keys = [k.key for k in query.keys]
    assert store.part_candidates(query.fingerprints, keys, query.version, exclude_id="zh_article") == []
    assert [m.id for m in find_copies(store, docs["zh_article"], printer=printer(), exclude_id="zh_article")] == []

    index_items(iter(records), store, fp, on_reject=rejected.append, workers=1)
    store.refresh()
    assert store.count_with_levels() == 3
    assert [c.id for c in store.part_candidates(query.fingerprints, keys, query.version, exclude_id="zh_article")] == \
           ["planted"]
    assert {m.id: m.kind for m in find_copies(store, docs["zh_article"], printer=printer(),
                                               exclude_id="zh_article")} == {"planted": "partial"}


def test_indexing_sentence_keys_alone_finds_partial_copies_by_keys(store: Store) -> None:
    # index --levels keys: no part is stored, the sentence keys find the planted passage.
    from simdup_es.indexer import index_items
    from simdup_es.sources import Record

    docs = {doc_id: texts()[doc_id] for doc_id in ("zh_article", "planted", "zh_other")}
    records = [Record(text, f"in:{i + 1}", doc_id) for i, (doc_id, text) in enumerate(docs.items())]
    rejected: list[object] = []
    summary = index_items(iter(records), store, printer().fingerprinter, on_reject=rejected.append, workers=1,
                          levels="keys")
    assert (summary.indexed, rejected) == (3, [])
    store.refresh()
    query = levels()["zh_article"]
    found = store.part_candidates(query.fingerprints, [k.key for k in query.keys], query.version, exclude_id="zh_article")
    assert [c.id for c in found] == ["planted"]
    assert not found[0].parts and len(found[0].keys) > 5
    assert {m.id: m.kind for m in find_copies(store, docs["zh_article"], printer=printer(),
                                               exclude_id="zh_article")} == {"planted": "partial"}


def test_a_store_cut_below_the_copies_is_asked_again(store: Store) -> None:
    # Asked for 2 candidates where the article has more copies (its pieces, the edited copy, the
    # planted host...), find_copies asks the store for more while the judge keeps confirming.
    fp = printer().fingerprinter
    docs = {doc_id: t for doc_id, t in texts().items() if t.strip(" \n.")}
    prints = {doc_id: fp.fingerprint(UnifiedText(t)) for doc_id, t in docs.items()}
    report = store.put([StoredDoc(doc_id, f.value, f.version, docs[doc_id], levels=levels()[doc_id])
                        for doc_id, f in prints.items()])
    assert report.failed == []
    store.refresh()
    got = find_copies(store, docs["zh_article"], printer=printer(), exclude_id="zh_article",
                      params=MultiParams(store_limit=2), limit=100)
    whole = find_copies(store, docs["zh_article"], printer=printer(), exclude_id="zh_article",
                        params=MultiParams(store_limit=1000), limit=100)
    assert [m.to_dict() for m in got] == [m.to_dict() for m in whole]
    assert sum(m.kind == "partial" for m in got) > 2 and got.more == 0
