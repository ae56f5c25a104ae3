"""The Store contract for common text: how many stored documents hold each winnowed key.

Each test runs once per store (``local``, ``elasticsearch``; see conftest.py). Every answer of
:meth:`Store.key_frequencies` is held to :class:`simdup_es.multilevel.MemoryPartIndex` (the reference)
fed the same documents, after writes, replacements and deletes; and a search over each store, which
asks the store what its texts hold in common, equals the reference pipeline: pages that share only a
footer many of them carry are no copies of each other, a page that shares a sentence and the footer is
one, with the footer shown as common text.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np

from simdup_es import default_fingerprinter
from simdup_es.commontext import KeyCounts
from simdup_es.multilevel import CommonText, MemoryPartIndex, MultiParams, StoredText, rare_levels
from simdup_es.multilevel import find_copies as judge_copies
from simdup_es.parts import PartPrinter
from simdup_es.search import comparer, counted_keys, find_copies
from simdup_es.store.base import Store, StoredDoc, query_terms
from simdup_es.text import unify

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FOOTER = "本页面中文版由中文 man 手册页计划提供。\n中文 man 手册页计划：https://github.com/man-pages-zh/manpages-zh"
PAGES = 14  # pages carrying the footer: more than the common threshold of a small store (10 documents)


@cache
def printer() -> PartPrinter:
    return PartPrinter(default_fingerprinter())


@cache
def pages() -> dict[str, str]:
    """Pages of two or three lines of the fixtures each (no line shared), all with the footer; the last one also
    holds a sentence of the first page, and one page is the first without its footer."""
    lines = [line for name in ("zh_article.txt", "zh_other.txt")
             for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines() if len(line.strip()) > 20]
    out = {f"page-{n:02d}": "\n".join(lines[3 * n : 3 * n + 3] + [FOOTER]) for n in range(PAGES)}
    out["quoting"] = "\n".join([lines[-1], lines[1], FOOTER])
    out["bare"] = "\n".join(lines[:3])
    return out


def put(store: Store, texts: dict[str, str]) -> MemoryPartIndex:
    """``texts`` fingerprinted and stored in ``store`` and in a reference."""
    fp, ref = printer().fingerprinter, MemoryPartIndex()
    docs = []
    for doc_id, text in texts.items():
        u = unify(text)
        f, lv = fp.fingerprint(u), printer().levels(u)
        docs.append(StoredDoc(doc_id, f.value, f.version, text, levels=lv))
        ref.put_levels(doc_id, lv, f.value)
    report = store.put(docs)
    assert report.failed == [] and report.written == len(docs)
    store.refresh()
    return ref


def keys_of(*texts: str) -> list[int]:
    return [k.key for text in texts for k in printer().levels(unify(text)).keys]


def same(got: KeyCounts, want: KeyCounts) -> bool:
    return got.documents == want.documents and np.array_equal(got.keys, want.keys) and np.array_equal(got.counts, want.counts)


def test_key_frequencies_equal_the_reference_after_writes_and_deletes(store: Store) -> None:
    texts = pages()
    ref = put(store, texts)
    asked = keys_of(FOOTER, texts["page-00"], texts["quoting"]) + [1, 2, 1]  # absent keys, and one asked twice
    got = store.key_frequencies(asked)
    assert same(got, ref.key_frequencies(asked))
    footer = got.of(keys_of(FOOTER))
    assert footer.min() == PAGES + 1 and got.documents == len(texts)  # every page with the footer holds its keys
    assert got.of([1, 2]).tolist() == [0, 0] and store.key_frequencies([]).documents == len(texts)
    # Replaced without the footer, deleted: counted no more.
    replaced = {"page-00": "\n".join(texts["page-00"].splitlines()[:-2]), "page-01": texts["page-01"]}
    for doc_id, text in replaced.items():
        ref.put_levels(doc_id, printer().levels(unify(text)))
    store.put([StoredDoc(doc_id, 1, printer().version, text, levels=printer().levels(unify(text)))
               for doc_id, text in replaced.items()])
    assert store.delete(["page-02", "bare"]).written == 2
    store.refresh()
    for gone in ("page-02", "bare"):
        ref._alive[ref._row[gone]] = False  # the reference has no delete: its rows stop answering
    got = store.key_frequencies(asked)
    assert same(got, ref.key_frequencies(asked))
    assert got.of(keys_of(FOOTER)).min() == PAGES - 1 and got.documents == len(texts) - 2


def test_search_over_the_store_counts_common_text_as_the_reference_does(store: Store) -> None:
    texts = pages()
    ref = put(store, texts)
    compare, params = comparer(), MultiParams()
    fp = printer().fingerprinter
    for query in ("page-00", "quoting", "bare"):
        u = unify(texts[query])
        lv, f = printer().levels(u), fp.fingerprint(u)
        near = ref.near_duplicates(f.value, f.version, k=params.k, exclude_id=query)
        common = CommonText.of(ref.key_frequencies(counted_keys(lv.key_values())), u, params)
        lv = rare_levels(lv, common)  # the candidates are asked for by the query's rare keys and parts
        parts, keys = query_terms(list(lv.fingerprints), [k.key for k in lv.keys])
        found = ref.part_candidates([p for _, p in parts], [k for _, k in keys], lv.version, exclude_id=query)
        found = [c.__class__(c.id, frozenset(parts[i][0] for i in c.parts), frozenset(keys[i][0] for i in c.keys), c.units)
                 for c in found]
        want = judge_copies(u, lv, near, found, lambda ids: {i: StoredText(unify(texts[i])) for i in ids if i in texts},
                            compare, common=common, query_fingerprint=f.value, params=params, limit=100)
        got = find_copies(store, texts[query], printer=printer(), exclude_id=query, params=params, limit=100)
        assert [(m.id, m.kind, m.copied_query, m.copied_match, m.common_query, m.common_match) for m in got] == \
               [(m.id, m.kind, m.copied_query, m.copied_match, m.common_query, m.common_match) for m in want], query
        hits = {m.id: m for m in got}
        if query == "page-00":  # the footer alone is no copy; the page quoting its sentence is one
            assert set(hits) == {"quoting", "bare"}
            assert hits["quoting"].common_query > 0 and hits["quoting"].held_query[0].documents == PAGES + 1
            assert hits["bare"].common_query == 0 and hits["bare"].kind == "near-duplicate"
    # Named as a template (MOSS's -b), a text's lines never count: the page without the footer is then all common.
    got = find_copies(store, texts["page-00"], printer=printer(), exclude_id="page-00", exclude_texts=[texts["bare"]])
    assert [m.id for m in got] == []


def test_the_report_shows_common_text_apart_and_never_counts_it(store: Store) -> None:
    from simdup_es.report import render_report_html
    from simdup_es.service import Query, Service

    texts = pages()
    put(store, texts)
    report = Service(store).report(Query(text=texts["quoting"]))
    text = report.document.original
    footer = text.index("本页面")
    # The footer is common text shared with the sources, held by every page that carries it, and copied nowhere.
    assert report.common and all(n == PAGES + 1 for _, _, n in report.common)
    assert any(a <= footer < b for a, b, _ in report.common)
    assert not any(a <= footer < b for a, b, _ in report.passages)
    assert 0 < report.figures.common and report.figures.copied + report.figures.common <= report.figures.chars
    assert report.headline.endswith(f"; {100 * report.figures.common_share:.0f}% common text")
    assert report.to_dict()["common"][0]["documents"] == PAGES + 1
    assert f"held by {PAGES + 1:,} stored documents" in render_report_html(report)
