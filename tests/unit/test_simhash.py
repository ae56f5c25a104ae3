"""SimHash kernel, Hamming distance and blocks: fast versions against references."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simdup_es import reference as ref
from simdup_es import simhash as sh

u64 = st.integers(min_value=0, max_value=sh.MASK64)


@given(u64, u64, u64)
def test_hamming_is_a_metric(a: int, b: int, c: int) -> None:
    assert sh.hamming(a, a) == 0
    assert sh.hamming(a, b) == sh.hamming(b, a)
    assert (sh.hamming(a, b) == 0) == (a == b)
    assert sh.hamming(a, c) <= sh.hamming(a, b) + sh.hamming(b, c)


@given(u64, u64)
def test_fast_popcount_matches_reference(a: int, b: int) -> None:
    assert sh.hamming(a, b) == ref.hamming_reference(a, b)
    assert int(sh.hamming_many(a, np.array([b], dtype=np.uint64))[0]) == ref.hamming_reference(a, b)


@given(u64)
def test_blocks_round_trip(fp: int) -> None:
    parts = sh.blocks(fp)
    assert len(parts) == sh.BLOCKS == 8
    assert all(0 <= p < 256 for p in parts)
    assert sum(p << (j * 8) for j, p in enumerate(parts)) == fp  # lossless


@given(u64, st.data(), st.integers(0, 7))
def test_pairs_within_k_share_enough_blocks(fp: int, data: st.DataObject, k: int) -> None:
    flips = data.draw(st.sets(st.integers(0, 63), max_size=k))
    other = fp
    for bit in flips:
        other ^= 1 << bit
    assert sh.hamming(fp, other) <= k
    shared = sum(x == y for x, y in zip(sh.blocks(fp), sh.blocks(other)))
    assert shared >= 8 - k


@pytest.mark.parametrize("k", range(8))
def test_pigeonhole_bound_is_tight(k: int) -> None:
    # k + 1 flips spread over k + 1 blocks leave only 8 - k - 1 blocks equal: the
    # bound cannot be relaxed.
    other = sum(1 << (8 * j) for j in range(k + 1))
    assert sum(x == y for x, y in zip(sh.blocks(0), sh.blocks(other))) == 8 - k - 1


token_lists = st.lists(st.tuples(u64, st.floats(min_value=0.0, max_value=1e6, allow_nan=False)), max_size=60)


@given(token_lists)
def test_fast_simhash_matches_reference(tokens: list[tuple[int, float]]) -> None:
    hashes = [h for h, _ in tokens]
    weights = [w for _, w in tokens]
    fast = sh.simhash(np.array(hashes, dtype=np.uint64), np.array(weights))
    assert fast == ref.simhash_reference(hashes, weights)


@given(st.lists(token_lists, min_size=1, max_size=6))
def test_batch_equals_one_at_a_time(docs: list[list[tuple[int, float]]]) -> None:
    hashes = np.array([h for d in docs for h, _ in d], dtype=np.uint64)
    weights = np.array([w for d in docs for _, w in d])
    offsets = np.array(list(itertools.accumulate([0] + [len(d) for d in docs])))
    batch = sh.simhash_batch(hashes, weights, offsets).tolist()
    assert batch == [ref.simhash_reference([h for h, _ in d], [w for _, w in d]) for d in docs]


def test_single_token_fingerprint_is_its_hash() -> None:
    h = sh.token_hash("指纹")
    assert sh.simhash(np.array([h], dtype=np.uint64), np.array([2.5])) == h


def test_token_hash_is_fixed() -> None:
    # XXH3-64 of the UTF-8 bytes: a published, platform-independent function.
    import xxhash

    assert sh.token_hash("相似") == xxhash.xxh3_64_intdigest("相似".encode())
    assert sh.token_hash("a") != sh.token_hash("b")


def test_similarity_percent() -> None:
    assert sh.similarity(0) == 100.0
    assert sh.similarity(32) == 50.0
    assert sh.similarity(64) == 0.0


def test_hex_round_trip() -> None:
    assert sh.from_hex(sh.to_hex(2**64 - 1)) == 2**64 - 1
    assert sh.to_hex(255) == "00000000000000ff"
    with pytest.raises(ValueError):
        sh.from_hex("1" * 17)


def test_large_batches_are_cut_into_passes_without_changing_results() -> None:
    rng = np.random.default_rng(3)
    sizes = rng.integers(0, 60, 1500)  # ~45k tokens: several passes, some empty documents
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    hashes = rng.integers(0, 2**64, offsets[-1], dtype=np.uint64)
    weights = rng.random(offsets[-1])
    batch = sh.simhash_batch(hashes, weights, offsets)
    singles = [sh.simhash(hashes[a:b], weights[a:b]) for a, b in zip(offsets[:-1], offsets[1:])]
    assert batch.tolist() == singles
    reference = [
        ref.simhash_reference(hashes[a:b].tolist(), weights[a:b].tolist()) for a, b in zip(offsets[:300], offsets[1:301])
    ]
    assert batch[:300].tolist() == reference  # across the first passes' edges


@given(st.lists(u64, min_size=1, max_size=6), st.lists(u64, max_size=6), st.data())
def test_shared_blocks_counts_as_the_reference(a: list[int], b: list[int], data: st.DataObject) -> None:
    # Near copies of a's first fingerprint too, so that high counts (candidates) occur.
    b = b + [a[0] ^ (1 << bit) for bit in data.draw(st.lists(st.integers(0, 63), max_size=3))] + [a[0]]
    got = sh.shared_blocks(np.array(a, dtype=np.uint64), np.array(b, dtype=np.uint64))
    assert got.shape == (len(a), len(b))
    assert got.tolist() == [[ref.shared_blocks_reference(x, y) for y in b] for x in a]
    assert got[0, -1] == 8
    pairs = sh.equal_blocks(np.array(a[:1] * len(b), dtype=np.uint64), np.array(b, dtype=np.uint64))
    assert pairs.tolist() == got[0].tolist()  # element by element, as the outer product
