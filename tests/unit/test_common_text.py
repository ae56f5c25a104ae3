"""The pure parts of benchmarks/common_text.py's prototype judge (no corpus, no store)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import common_text as ct  # noqa: E402


def test_common_units_cover_chains_of_common_keys() -> None:
    positions = np.array([0, 3, 7, 12, 20, 40])
    freq = np.array([500, 600, 550, 1, 700, 2])  # the first three chain (at most KEY_W apart); 20 stands alone
    got = ct.common_units(np.zeros(6, dtype=np.uint64), positions, 50, freq, threshold=100)
    want = np.zeros(50, dtype=bool)
    want[0 : 7 + ct.KEY_K] = True
    want[20 : 20 + ct.KEY_K] = True
    assert got.tolist() == want.tolist()
    assert not ct.common_units(np.zeros(6, dtype=np.uint64), positions, 50, freq, threshold=1000).any()


def test_counted_passages_leave_out_common_units_and_take_a_short_side_whole() -> None:
    copied = np.zeros(100, dtype=bool)
    copied[10:30] = True  # a 20-unit passage
    none = np.zeros(100, dtype=bool)
    assert ct.counted(copied, none, none, 16, gap=8) == 20
    assert ct.counted(copied, none, none, 21, gap=8) == 0
    common = none.copy()
    common[10:22] = True  # 12 of its units are common: 8 rare ones left
    assert ct.counted(copied, common, common, 16, gap=8) == 0
    # a short passage must be rarer: held by more than M documents, it counts only from LONG units
    assert ct.counted(copied, none, common, 16, gap=8) == 0
    long = np.zeros(100, dtype=bool)
    long[10:10 + ct.LONG] = True
    assert ct.counted(long, none, long, 16, gap=8) == ct.LONG
    short = np.ones(18, dtype=bool)  # a text of 18 units copied whole: more than half its side
    assert ct.counted(short, np.zeros(18, dtype=bool), np.zeros(18, dtype=bool), 20, gap=8) == 18
    six = np.zeros(6, dtype=bool)
    assert ct.counted(np.ones(6, dtype=bool), six, six, 20, gap=8) == 0  # under the shortest run


def test_key_table_counts_documents_and_thresholds() -> None:
    table = ct.KeyTable.of(["天地玄黄宇宙洪荒日月盈昃", "天地玄黄宇宙洪荒日月盈昃辰宿列张", "寒来暑往秋收冬藏"])
    assert table.documents == 3
    assert table.frequency(table.keys).max() == 2  # keys the first two share
    assert table.threshold(50) == 50 and table.threshold(0.01) == 10
