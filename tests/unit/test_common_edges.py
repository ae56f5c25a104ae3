"""Common text at the edges: a footer every stored document ends with is common from its first character to its
last, in the judge's shares, in compare's stretches and in the report (both sides), never a stray copied passage.

The reviewer's case: 14 stored documents that all end with the same 54-character footer, and the query one of them
with a new first sentence (default ``--common``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from simdup_es.commontext import Rarity, to_sentence_edges

from simdup_es.report._common import common_spans
from simdup_es.service import Query, Service
from simdup_es.text import unify
from simdup_es.winnow import KEY_W
from tests._report_docs import RECORDS, make_store, report_of

FOOTER = "本文档由某某开源社区的志愿者翻译整理，如有错误请联系文档维护团队，我们会尽快修正并更新到网站上。感谢各位读者的支持与帮助团队。"
IDS = sorted(i for i, r in RECORDS.items() if "~" not in i and len(unify(r["text"])) > 400)[:14]


def body(doc_id: str) -> str:
    return "\n".join(line for line in RECORDS[doc_id]["text"].splitlines() if line.strip())[:500]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    assert len(IDS) == 14
    local = make_store(tmp_path_factory.mktemp("edges") / "store", ids=(),
                       extra={f"d{k}": body(i) + "\n\n" + FOOTER for k, i in enumerate(IDS)})
    yield local
    local.close()


def query() -> str:
    return "这是一个全新的开头句子，谁也没有写过它。\n" + body(IDS[0]) + "\n\n" + FOOTER


def test_the_whole_footer_is_common_in_search(store: Any) -> None:
    hit = next(h for h in Service(store).search(Query(None, query())) if h.id == "d0")
    text = unify(query())
    start = text.index(unify(FOOTER))
    assert hit.comparison is not None
    spans = common_spans(hit.comparison, "a", hit.held_query)
    assert any(a <= start and start + len(unify(FOOTER)) <= b for a, b, _ in spans), (start, spans)


def test_the_report_counts_none_of_the_footer(store: Any) -> None:
    text = query()
    report = report_of(store, text)
    source = next(s for s in report.sources if s.id == "d0")
    start = text.index(FOOTER)
    copied = [(a, b) for a, b, _ in report.passages]
    assert all(b <= start or a >= start + len(FOOTER) for a, b in copied), copied
    assert any(a <= start and start + len(FOOTER) <= b for a, b, _ in report.common), report.common
    # The source's share counts no common text: its footer is out of source_chars and of the share.
    own = sum(not c.isspace() for c in body(IDS[0]))
    assert source.source_chars == own and source.source_total == own + len(FOOTER)
    assert source.share_of_source == pytest.approx(own / (own + len(FOOTER)))


def test_a_chain_reaches_its_sentence_edges_only_within_a_window() -> None:
    sentence = np.repeat([0, 1, 2], [10, 12, 10])
    held = np.zeros(32, np.int64)
    held[12:19] = 14  # sentence 1 is units 10-21: 2 units before, 3 after, under no counted key
    held[25:27] = 3  # sentence 2 is units 22-31: 3 before (reached), 5 after (reached: fewer than KEY_W)
    side = to_sentence_edges(Rarity(held, held > 10), sentence)
    assert side.held.tolist() == [0] * 10 + [14] * 12 + [3] * 10
    assert side.common.tolist() == [False] * 10 + [True] * 12 + [False] * 10
    far = np.zeros(32, np.int64)
    far[16:18] = 14  # KEY_W units from sentence 1's start: not carried there
    assert to_sentence_edges(Rarity(far, far > 10), sentence).held[10:16].tolist() == [0] * KEY_W
    assert KEY_W == 6
