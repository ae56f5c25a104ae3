"""64-bit SimHash, Hamming distance and blocks: pure functions over numpy.

Bit ``i`` of a fingerprint is bit ``i`` of the unsigned 64-bit integer (bit 0 is
the least significant). Block ``j`` of its :data:`BLOCKS` blocks is byte ``j``: bits
``8*j .. 8*j+7``.

Token weights are quantised to integers before they are summed: float sums
depend on summation order, which numpy may change between versions and CPUs, and
a sum near zero could then flip a bit. Integer sums are exact, so a fingerprint is
the same on every machine.

Each fast function has a slow, obviously-correct ``*_reference`` twin in
:mod:`simdup_es.reference` that the property tests hold it to.
"""

from __future__ import annotations


import numpy as np
import xxhash

from .config import FINGERPRINT_BITS
from .errors import ConfigError

MASK64 = (1 << 64) - 1
BLOCKS = 8
"""Blocks of a fingerprint, 8 bits each: two fingerprints within Hamming distance ``k`` share at least
``BLOCKS - k`` of them (pigeonhole), what the candidate lookups ask for."""
_BLOCK_BITS = FINGERPRINT_BITS // BLOCKS
_QUANT = float(1 << 24)  # the heaviest token of a document weighs 2**24 units


def token_hash(token: str) -> int:
    """Fixed, fast, platform-independent 64-bit hash of a token (XXH3-64 of UTF-8)."""
    return xxhash.xxh3_64_intdigest(token.encode("utf-8"))


def quantize(weights: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Integer weights: each document's weights scaled so its largest is 2**24."""
    weights = np.asarray(weights, dtype=np.float64)
    counts = np.diff(offsets)
    nonempty = counts > 0
    peak = np.zeros(len(counts))
    peak[nonempty] = np.maximum.reduceat(weights, offsets[:-1][nonempty])
    peak[peak <= 0] = 1.0
    return np.rint(weights / np.repeat(peak, counts) * _QUANT).astype(np.int64)


# Tokens and documents per pass: keeps the temporaries (tokens x 16, and 16 x 16
# sums per document) in the CPU caches.
_CHUNK_TOKENS = 8192
_CHUNK_DOCS = 128


def simhash_batch(hashes: np.ndarray, weights: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """SimHash of many documents at once, in passes of about 8k tokens.

    Parameters
    ----------
    hashes, weights:
        Token hashes (``uint64``) and weights of all documents, concatenated.
    offsets:
        ``len(docs) + 1`` ascending indices: document ``i`` owns tokens
        ``offsets[i]:offsets[i+1]``.

    Returns
    -------
    numpy.ndarray
        One ``uint64`` fingerprint per document; a document without tokens gets 0.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    hashes, weights = np.asarray(hashes), np.asarray(weights)
    n = len(offsets) - 1
    out = np.zeros(n, dtype=np.uint64)
    i = 0
    while i < n:
        # Whole documents up to ~_CHUNK_TOKENS tokens and _CHUNK_DOCS documents (at least one).
        j = int(np.searchsorted(offsets, offsets[i] + _CHUNK_TOKENS, side="right")) - 1
        j = min(max(j, i + 1), i + _CHUNK_DOCS, n)
        a, b = offsets[i], offsets[j]
        out[i:j] = _simhash_pass(hashes[a:b], weights[a:b], offsets[i : j + 1] - a)
        i = j
    return out


# Row v: the sign (+1 / -1) that each of the 4 bits of the nibble value v gives a token.
_NIBBLE_SIGNS = np.unpackbits(np.arange(16, dtype=np.uint8)[:, None], axis=1, bitorder="little")[:, :4] * 2.0 - 1.0
_NIBBLE_BINS = np.arange(16, dtype=np.int64) * 16  # the first bin of each of a document's 16 nibbles


def _simhash_pass(hashes: np.ndarray, weights: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    # Rather than a (tokens x 64) matrix of signed weights, sum each document's
    # weights per value of each of the 16 nibbles (4 bits) of the hash (a weighted
    # bincount, tokens x 16 entries), then turn those (16 x 16) sums into 64 bit sums
    # with a small matrix product per document (16 x 16 @ 16 x 4: a fraction of the
    # work of bytes' 8 x 256 @ 256 x 8). The weights are integers below 2**24 and the
    # sums stay far below 2**53, so float64 holds them exactly: the same bits as the plain sum.
    n = len(offsets) - 1
    if offsets[-1] == offsets[0]:
        return np.zeros(n, dtype=np.uint64)
    q = quantize(weights, offsets).astype(np.float64)
    first = np.repeat(np.arange(0, n * 256, 256, dtype=np.int64), np.diff(offsets))  # each token's document's bins
    # Little-endian bytes: byte j of a hash holds bits 8j .. 8j+7 on any platform,
    # nibble 2j its bits 8j .. 8j+3 and nibble 2j+1 bits 8j+4 .. 8j+7.
    by = np.ascontiguousarray(hashes, dtype="<u8").view(np.uint8).reshape(-1, 8)
    nibbles = np.empty((len(by), 16), dtype=np.int64)
    nibbles[:, 0::2] = by & 15
    nibbles[:, 1::2] = by >> 4
    nibbles += _NIBBLE_BINS  # each nibble's bins, in place: no more temporaries of tokens x 16
    nibbles += first[:, None]
    per_nibble = np.bincount(nibbles.ravel(), weights=np.repeat(q, 16), minlength=n * 256).reshape(n, 16, 16)
    sums = (per_nibble @ _NIBBLE_SIGNS).reshape(n, FINGERPRINT_BITS)
    return np.packbits(sums > 0, axis=1, bitorder="little").view("<u8").ravel()


def simhash(hashes: np.ndarray, weights: np.ndarray) -> int:
    """SimHash of one document's token hashes and weights."""
    return int(simhash_batch(hashes, weights, np.array([0, len(hashes)]))[0])


def hamming(a: int, b: int) -> int:
    """Hamming distance of two 64-bit fingerprints: popcount(a XOR b)."""
    return (a ^ b).bit_count()


def hamming_many(query: int, fingerprints: np.ndarray) -> np.ndarray:
    """Distance from ``query`` to each of ``fingerprints`` (``uint64`` array)."""
    return np.bitwise_count(np.asarray(fingerprints, dtype=np.uint64) ^ np.uint64(query)).astype(np.uint8)


def similarity(distance: int) -> float:
    """Similarity in percent, ``(1 - d/64) * 100``."""
    if not 0 <= distance <= FINGERPRINT_BITS:
        raise ConfigError(f"a distance between two fingerprints is 0 to {FINGERPRINT_BITS}, got {distance}")
    return (1.0 - distance / FINGERPRINT_BITS) * 100.0


def blocks(fingerprint: int) -> tuple[int, ...]:
    """Cut a fingerprint into its :data:`BLOCKS` byte blocks, lowest bits first."""
    if not 0 <= fingerprint < 1 << FINGERPRINT_BITS:
        raise ConfigError(f"a fingerprint is a {FINGERPRINT_BITS}-bit unsigned integer, got {fingerprint}")
    return tuple((fingerprint >> (j * _BLOCK_BITS)) & 0xFF for j in range(BLOCKS))


def equal_blocks(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many blocks ``a`` and ``b`` (``uint64`` arrays, broadcast against each other) share, element by element."""
    x = np.asarray(np.asarray(a, dtype=np.uint64) ^ np.asarray(b, dtype=np.uint64), dtype="<u8")
    return (x.reshape(*x.shape, 1).view(np.uint8) == 0).sum(axis=-1)  # byte j of the little-endian bytes: block j


def shared_blocks(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many blocks each of ``a`` shares with each of ``b``: an ``(len(a), len(b))`` array.

    A stored fingerprint is a candidate of a query within ``k`` exactly when they share
    ``BLOCKS - k`` blocks (what the candidate query asks of the engine), so the hits of
    one search for many queries can be told apart client-side.
    """
    return equal_blocks(np.asarray(a, dtype=np.uint64)[:, None], np.asarray(b, dtype=np.uint64)[None, :])


def to_hex(fingerprint: int) -> str:
    """16 lower-case hex digits."""
    return f"{fingerprint:016x}"


def from_hex(text: str) -> int:
    """Parse a fingerprint written by :func:`to_hex` (a ``0x`` prefix is allowed)."""
    value = int(text, 16)
    if not 0 <= value <= MASK64:
        raise ValueError(f"{text!r} is not a 64-bit fingerprint")
    return value
