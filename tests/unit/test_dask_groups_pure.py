"""The pure steps of the distributed groups job, held to brute force: shuffled in buckets, the block join
finds every pair within ``k`` exactly once, and the components match those of all pairs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simdup_es.dask_groups import bucket_pairs, merge_nodes, node_buckets, node_roots, table_buckets, version_code
from simdup_es.join import components, join_blocks
from simdup_es.reference import near_pairs_reference as brute_force_pairs


def _planted(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    fps = rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64, endpoint=True)
    for pos in range(1, n):  # many near and exact copies of earlier ones
        if rng.random() < 0.5:
            fp = int(fps[rng.integers(0, pos)])
            for b in rng.choice(64, size=int(rng.integers(0, 5)), replace=False).tolist():
                fp ^= 1 << b
            fps[pos] = fp
    codes = np.where(rng.random(n) < 0.8, version_code("v1"), version_code("v2")).astype(np.int64)
    codes[rng.random(n) < 0.05] = -1  # no fingerprint
    return fps, codes


def _distributed(fps: np.ndarray, codes: np.ndarray, k: int, slices: int, buckets: int) -> set[tuple[int, int, int]]:
    cut = np.array_split(np.arange(len(fps)), slices)
    pieces = [node_buckets(fps[c], codes[c], buckets) for c in cut]
    nodes = [merge_nodes([p[b] for p in pieces]) for b in range(buckets)]
    blocks = join_blocks(sum(len(n[0]) for n in nodes), k)
    sent = [table_buckets(n[0], n[1], k, blocks, buckets) for n in nodes]
    found = [bucket_pairs([s[b] for s in sent], k, blocks) for b in range(buckets)]
    out = [(int(a), int(b), int(c)) for fa, fb, fc in found for a, b, c in zip(fa, fb, fc)]
    assert len(out) == len(set(out)), "a pair found twice"
    return set(out)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 300), k=st.integers(0, 4), slices=st.integers(1, 4),
       buckets=st.integers(1, 5))
def test_shuffled_block_join_finds_the_brute_force_pairs_once(seed: int, n: int, k: int, slices: int, buckets: int) -> None:
    fps, codes = _planted(seed, n)
    got = _distributed(fps, codes, k, slices, buckets)
    want = set()
    for code in set(codes[codes >= 0].tolist()):
        nodes = sorted(set(fps[codes == code].tolist()))
        want |= {(min(nodes[i], nodes[j]), max(nodes[i], nodes[j]), code) for i, j in brute_force_pairs(nodes, k)}
    assert {(min(a, b), max(a, b), c) for a, b, c in got} == want


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 200), buckets=st.integers(1, 4))
def test_node_counts_and_components_match_the_documents(seed: int, n: int, buckets: int) -> None:
    fps, codes = _planted(seed, n)
    k = 3
    pieces = [node_buckets(fps[c], codes[c], buckets) for c in np.array_split(np.arange(n), 3)]
    nodes = [merge_nodes([p[b] for p in pieces]) for b in range(buckets)]
    counts = {(int(f), int(c)): int(m) for nf, nc, nm in nodes for f, c, m in zip(nf, nc, nm)}
    want_counts: dict[tuple[int, int], int] = {}
    for f, c in zip(fps.tolist(), codes.tolist()):
        if c >= 0:
            want_counts[(f, c)] = want_counts.get((f, c), 0) + 1
    assert counts == want_counts
    blocks = join_blocks(len(counts), k)
    sent = [table_buckets(nf, nc, k, blocks, buckets) for nf, nc, _ in nodes]
    pairs = [bucket_pairs([s[b] for s in sent], k, blocks) for b in range(buckets)]
    exact = [(nf[nm >= 2], nc[nm >= 2]) for nf, nc, nm in nodes]
    roots = node_roots(pairs, exact)
    # Reference: documents joined by brute force (same version, distance <= k), exact copies included.
    docs = [p for p in range(n) if codes[p] >= 0]
    edges = [(docs[i], docs[j]) for i, j in brute_force_pairs([int(fps[p]) for p in docs], k)
             if codes[docs[i]] == codes[docs[j]]]
    ref = components(edges)
    grouped = {p for p in docs if (int(fps[p]), int(codes[p])) in roots}
    assert grouped == set(ref)
    for a, b in edges:
        assert roots[(int(fps[a]), int(codes[a]))] == roots[(int(fps[b]), int(codes[b]))]
    by_root: dict[int, set[int]] = {}
    for p in grouped:
        by_root.setdefault(roots[(int(fps[p]), int(codes[p]))], set()).add(ref[p])
    assert all(len(r) == 1 for r in by_root.values())  # no two reference components share a root
