"""The pure pair search module (its properties are tested in test_local_store.py, where it used to live)."""

from __future__ import annotations

import numpy as np

from simdup_es import join


def test_join_pairs_on_a_million_random_fingerprints_finds_the_planted_pairs() -> None:
    rng = np.random.default_rng(3)
    fps = rng.integers(0, np.iinfo(np.uint64).max, size=1_000_000, dtype=np.uint64, endpoint=True)
    # Plant 100 pairs at distance 3 (random fingerprints are ~32 apart: no others).
    for n in range(100):
        fps[2 * n + 1] = fps[2 * n] ^ np.uint64((1 << n % 60) | (1 << 61) | (1 << 63))
    i, j, d = join.join_pairs(fps, 3)
    assert sorted(zip(i.tolist(), j.tolist())) == [(2 * n, 2 * n + 1) for n in range(100)]
    assert set(d.tolist()) == {3}
