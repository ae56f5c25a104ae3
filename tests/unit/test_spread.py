"""Fingerprints of real, unrelated documents must not bunch.

Bunching breaks both precision (unrelated documents within distance 3) and the
candidate query's speed (huge block buckets). Measured on the zh corpus from
scripts/fetch-corpus, next to random 64-bit codes.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from simdup_es import simhash as sh
from simdup_es.fingerprint import Doc, Fingerprinter

from tests._data import load_corpus


def pairs_within(fps: np.ndarray, k: int) -> int:
    return sum(int((sh.hamming_many(int(fps[i]), fps[i + 1 :]) <= k).sum()) for i in range(len(fps) - 1))


def largest_bucket(fps: np.ndarray, bits: int = 16) -> int:
    """Most fingerprints sharing one block value in one block position (64/bits blocks of ``bits`` bits)."""
    shifts = np.arange(0, 64, bits, dtype=np.uint64)
    table = (fps[:, None] >> shifts) & np.uint64((1 << bits) - 1)
    return max(Counter(table[:, j].tolist()).most_common(1)[0][1] for j in range(table.shape[1]))


def test_real_fingerprints_do_not_bunch(fingerprinter: Fingerprinter) -> None:
    docs = load_corpus("zh-docs.jsonl")
    assert len(docs) >= 5000
    results = list(fingerprinter.map(Doc(d["text"], d.get("title")) for d in docs))
    fps = np.array(sorted({r.fingerprint.value for r in results if r.fingerprint}), dtype=np.uint64)
    rng = np.random.default_rng(1)
    random_fps = rng.integers(0, 2**64, size=len(fps), dtype=np.uint64, endpoint=False)

    real_pairs, random_pairs = pairs_within(fps, 3), pairs_within(random_fps, 3)
    real_bucket, random_bucket = largest_bucket(fps), largest_bucket(random_fps)
    print(f"\n{len(fps)} distinct fingerprints: pairs within d<=3 {real_pairs} (random {random_pairs}); "
          f"largest 16-bit bucket {real_bucket} (random {random_bucket})")
    # Raw term-frequency weighting put 1.44 million pairs within distance 3 among
    # 20k documents; IDF weighting about 600, which is real near-duplicates
    # (translations and revisions of the same page). Bound: 0.1 pairs per document.
    assert real_pairs <= 0.1 * len(fps)
    assert real_bucket <= 10 * max(random_bucket, 5)
