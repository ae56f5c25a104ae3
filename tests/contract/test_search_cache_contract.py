"""A search's caches of stored texts never answer for a document as it was (every store).

The unified texts and sentence scans of candidates are kept across the searches that share a
comparer (its :class:`simdup_es.caches.TextCaches`). A document
replaced by ``put`` must be judged on its new text, and one removed by ``delete`` not at all;
the results with warm caches must equal those with empty ones.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from simdup_es import default_fingerprinter
from simdup_es.parts import PartPrinter
from simdup_es.search import MatrixComparer, comparer, find_copies
from simdup_es.sentences import split_sentences
from simdup_es.store.base import Store, StoredDoc
from simdup_es.text import UnifiedText, unify

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@cache
def printer() -> PartPrinter:
    return PartPrinter(default_fingerprinter())


@cache
def compare() -> MatrixComparer:
    """One comparer for every search, as a service keeps one: its caches outlive each search."""
    return comparer()


def _put(store: Store, docs: dict[str, str], *, keep_unified: bool = False) -> None:
    fp = printer().fingerprinter
    stored = []
    for doc_id, text in docs.items():
        u = unify(text)
        f = fp.fingerprint(UnifiedText(u))
        stored.append(StoredDoc(doc_id, f.value, f.version, text, levels=printer().levels(UnifiedText(u)),
                                unified=u if keep_unified else None))
    report = store.put(stored)
    assert report.failed == [] and report.written == len(docs)
    store.refresh()


def _search(store: Store, query: str) -> list[dict[str, Any]]:
    """Everything the search says of each hit, its stored side's sentences included."""
    return [{**m.to_dict(), "sentences_b": [s.text for s in m.comparison.sentences_b] if m.comparison else None,
             "pairs": [(p.i, p.j, p.b_start, p.b_end) for p in m.comparison.pairs] if m.comparison else None}
            for m in find_copies(store, query, printer=printer(), compare=compare())]


def _cold(store: Store, query: str) -> list[dict[str, Any]]:
    compare().caches.clear()
    return _search(store, query)


def test_a_replaced_or_deleted_document_is_not_answered_from_the_caches(store: Store) -> None:
    article = (FIXTURES / "zh_article.txt").read_text(encoding="utf-8")
    other = (FIXTURES / "zh_other.txt").read_text(encoding="utf-8")
    lines = article.splitlines()
    half = "\n".join(lines[: len(lines) // 2])
    _put(store, {"copy": article, "other": other})
    first = _search(store, article)
    assert first == _cold(store, article)
    assert [h["kind"] for h in first if h["id"] == "copy"] == ["near-duplicate"]
    _search(store, article)  # the caches now hold "copy" as it was

    # Replaced: half of it stays, the rest is other text. Judged on the new text, as a cold search judges it.
    _put(store, {"copy": half + "\n" + other})
    warm = _search(store, article)
    assert warm == _cold(store, article)
    hit = next(h for h in warm if h["id"] == "copy")
    assert hit["sentences_b"] == [s.text for s in split_sentences(unify(half + "\n" + other))]
    assert hit["kind"] == "partial" and hit["copied_match"] < 0.9

    _search(store, article)
    report = store.delete(["copy"])
    assert report.failed == []
    store.refresh()
    gone = _search(store, article)
    assert "copy" not in [h["id"] for h in gone] and gone == _cold(store, article)


def test_a_kept_unified_text_is_read_back_and_judged_on_without_unifying_the_text_again(store: Store) -> None:
    article = (FIXTURES / "zh_article.txt").read_text(encoding="utf-8")
    other = (FIXTURES / "zh_other.txt").read_text(encoding="utf-8")
    lines = article.splitlines()
    docs = {"copy": article, "half": "\n".join(lines[: len(lines) // 2]) + "\n" + other, "other": other}
    # Written without it (as an index made before the stores kept it holds them): unified at the search.
    _put(store, docs)
    assert [d.unified for d in store.get(list(docs))] == [None] * 3
    before = _cold(store, article)
    assert {"copy", "half"} <= {h["id"] for h in before}
    assert all(text in compare().caches.unified for text in docs.values() if text != other)

    _put(store, docs, keep_unified=True)
    assert [d.unified for d in store.get(list(docs))] == [unify(text) for text in docs.values()]
    assert _cold(store, article) == before  # the same judgement, every figure
    assert not any(text in compare().caches.unified for text in docs.values())  # none unified again

    # Replaced without it: the old unified text is gone with the old text.
    _put(store, {"copy": other})
    assert store.get(["copy"])[0].unified is None
