"""The cache of stored texts' maps (TextCaches.mapped): the same maps as unify_mapped, within its budget."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.offsets import unify_mapped
from simdup_es.caches import TextCaches

TEXTS = ["軟體測試。這是ＵＳＢ隨身碟。", "线上数值存储\r\n\r\n第二行", "A  b\tC", "字串與識別符號", ""]


def same(a, b) -> bool:
    return a.original == b.original and a.text == b.text and np.array_equal(a.starts, b.starts) and np.array_equal(
        a.ends, b.ends)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(TEXTS) | st.text(alphabet="軟體测试線上U盘 ，。\nabAB", max_size=30), max_size=12))
def test_same_maps_as_unify_mapped(texts: list[str]) -> None:
    cache = TextCaches(mapped_chars=40).mapped
    for text in texts:
        assert same(cache(text), unify_mapped(text))
        assert cache.info().bytes <= cache.max_bytes
        assert cache.info().bytes == sum(len(t) for t in cache._items)


def test_kept_up_to_the_budget_most_recent_first() -> None:
    cache = TextCaches(mapped_chars=20).mapped
    first = cache("軟體測試。")  # 5 characters
    assert cache("軟體測試。") is first  # kept
    cache("a" * 10)
    cache("b" * 10)  # 25 characters: the least recently used goes
    assert "軟體測試。" not in cache and cache.info().bytes == 20
    assert cache("c" * 30).text == "c" * 30  # larger than the budget: mapped, not kept
    assert "c" * 30 not in cache


def test_threads_share_one_cache() -> None:
    cache = TextCaches(mapped_chars=10_000).mapped
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(cache, TEXTS * 20))
    for text, mapped in zip(TEXTS * 20, got):
        assert same(mapped, unify_mapped(text))
    assert cache.info().bytes == sum(len(t) for t in set(TEXTS))
