"""The slow, obviously-correct twins of the fast kernels, in one place.

Each function here computes what a fast function of the package computes, the plain way (bit by
bit, window by window, candidate by candidate), as its definition states it. The property tests hold
every fast function to its twin here (``tests/unit``); a compiled core is held to them the same way.
Nothing in the package calls them.

A twin shares its kernel's alphabet, not its algorithm: the character classes, tables and constants
(a hash's multipliers, the terminators of a sentence) are imported from the kernel's module, private
names included, so that a difference found is one in the algorithm, never in a copied constant.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence

import numpy as np
import xxhash

from . import dedup, keys
from .config import FINGERPRINT_BITS
from .levels import Levels
from .multilevel import (LONG_RUN, Candidate, MultiParams, PartCandidate, _judging_order, _passage_arrays, _short_need,
                         _unit_starts, key_cover)
from .sentences import (_CJK_RANGES, _INITIALS, _TERMINATORS, _WORD_BEFORE, ABBREVIATIONS, DEFAULT_MIN_UNITS, WRAP_FULL,
                        WRAP_MIN_SHARE, Sentence, _raw_pieces, units)
from .simhash import _QUANT, blocks
from .text import _LINE_BREAKS, _SPACES, CONTROL, converter
from .winnow import _BASE, _M1, _M2, KEY_K, KEY_W

__all__ = ["abbreviation_before_reference", "b64_term_reference", "block_terms_reference", "choose_reference",
           "five_keys_reference",
           "gram_hashes_reference", "hamming_reference", "hex_terms_reference", "key_terms_reference",
           "lcs_length_reference", "near_pairs_reference", "near_positions_reference", "quad_keys_reference",
           "rank_candidates_reference", "rarity_reference", "replace_tokens_reference", "shared_blocks_reference",
           "shared_runs_reference", "simhash_reference", "split_sentences_reference", "subset_keys_reference",
           "unify_reference", "unit_codes_reference", "unwrap_lines_reference", "winnow_reference"]


# ----------------------------------------------------------------------------------- simhash


def near_positions_reference(query: int, fingerprints: Iterable[int], k: int) -> list[int]:
    """Positions of the fingerprints within distance ``k`` of ``query`` (a table lookup, :mod:`simdup_es.store.tables`)."""
    return [i for i, f in enumerate(fingerprints) if (int(f) ^ query).bit_count() <= k]


def near_pairs_reference(fingerprints: Sequence[int], k: int) -> list[tuple[int, int]]:
    """All ``(i, j)``, ``i < j``, with fingerprints within distance ``k`` (:mod:`simdup_es.join`)."""
    fps = [int(f) for f in fingerprints]
    return [(i, j) for i in range(len(fps)) for j in range(i + 1, len(fps)) if (fps[i] ^ fps[j]).bit_count() <= k]


def simhash_reference(hashes: Sequence[int], weights: Sequence[float]) -> int:
    """:func:`simdup_es.simhash.simhash` (and ``simhash_batch``) straight from its definition, with the same integer
    weights."""
    if not hashes:
        return 0
    peak = max(weights)
    scale = peak if peak > 0 else 1.0
    q = [int(np.rint(w / scale * _QUANT)) for w in weights]
    v = [0] * FINGERPRINT_BITS
    for h, w in zip(hashes, q):
        for i in range(FINGERPRINT_BITS):
            v[i] += w if (h >> i) & 1 else -w
    return sum(1 << i for i in range(FINGERPRINT_BITS) if v[i] > 0)


def hamming_reference(a: int, b: int) -> int:
    """:func:`simdup_es.simhash.hamming` (and ``hamming_many``) bit by bit."""
    return sum(((a >> i) & 1) != ((b >> i) & 1) for i in range(FINGERPRINT_BITS))


def shared_blocks_reference(a: int, b: int) -> int:
    """:func:`simdup_es.simhash.shared_blocks` of one pair, by :func:`simdup_es.simhash.blocks`."""
    return sum(x == y for x, y in zip(blocks(a), blocks(b)))


# --------------------------------------------------------------------------------------- lcs


def lcs_length_reference(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """:func:`simdup_es.lcs.lcs_length` by the textbook dynamic programme, O(len(a) * len(b)).

    Slow on purpose: it is the definition, kept to check the fast one and
    the comparison matrix against. ``c[i][j]`` is the LCS of ``a[:i]`` and
    ``b[:j]``; only the previous row is kept.
    """
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0] * (len(b) + 1)
        for j, y in enumerate(b, 1):
            if x == y:
                cur[j] = prev[j - 1] + 1
            else:
                cur[j] = cur[j - 1] if cur[j - 1] > prev[j] else prev[j]
        prev = cur
    return prev[-1]


# -------------------------------------------------------------------------------------- text


def unify_reference(text: str) -> str:
    """:func:`simdup_es.text.unify` (and ``unify_many``) step by step, as the design states it."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = unicodedata.normalize("NFKC", text)
    text = CONTROL.sub("", text)
    text = converter("tw2sp").convert(converter("s2twp").convert(converter("t2s").convert(text)))
    text = text.casefold()
    text = _SPACES.sub(" ", text)
    return _LINE_BREAKS.sub("\n", text).strip()


# --------------------------------------------------------------------------------- sentences


def abbreviation_before_reference(text: str, dot: int) -> bool:
    """``simdup_es.sentences._abbreviation_before`` with the regular expression searched as written."""
    # Look back a bounded distance only: searching from 0 would make
    # splitting quadratic in the length of the text.
    before = _WORD_BEFORE.search(text, max(0, dot - 40), dot)
    if before is None:
        return False
    word = before.group().casefold()
    return word in ABBREVIATIONS or _INITIALS.match(word) is not None


def split_sentences_reference(text: str, min_units: int = DEFAULT_MIN_UNITS) -> list[Sentence]:
    """:func:`simdup_es.sentences.split_sentences` (and ``split_table``) the plain way: its pieces, counted with
    :func:`simdup_es.sentences.units`."""
    merged: list[tuple[int, int, int]] = []  # (start, end, units)
    pending: tuple[int, int, int] | None = None
    for start, end, line_start in _raw_pieces(text):
        n = len(units(text[start:end]))
        if pending is not None:
            start, n, line_start, pending = pending[0], pending[2] + n, True, None
        if n >= min_units:
            merged.append((start, end, n))
        elif line_start or not merged:
            pending = (start, end, n)
        else:
            merged[-1] = (merged[-1][0], end, merged[-1][2] + n)
    if pending is not None:
        if merged:
            merged[-1] = (merged[-1][0], pending[1], merged[-1][2] + pending[2])
        else:
            merged.append(pending)
    return [Sentence(k, start, end, text[start:end], n) for k, (start, end, n) in enumerate(merged) if n]


def unwrap_lines_reference(text: str) -> str:
    """:func:`simdup_es.sentences.unwrap_lines` character by character, widths counted one character at a time."""
    lines = text.split("\n")
    if len(lines) < 3:
        return text

    def width(line: str) -> int:
        return sum(2 if any(lo <= ord(ch) <= hi for lo, hi in _CJK_RANGES) else 1 for ch in line.rstrip())

    widths = [width(line) for line in lines]
    full = [w >= WRAP_FULL * max(widths) for w in widths]
    if sum(full) < max(2, WRAP_MIN_SHARE * sum(w > 0 for w in widths)):
        return text
    chars = list(text)
    at = 0
    for k, line in enumerate(lines[:-1]):
        at += len(line)
        ends = line.rstrip()[-1:] if line.strip() else ""
        if full[k] and ends and ends not in _TERMINATORS and lines[k + 1].strip():
            chars[at] = " "
        at += 1
    return "".join(chars)


# ------------------------------------------------------------------------------------ winnow


def unit_codes_reference(text: str) -> list[int]:
    """:func:`simdup_es.winnow.unit_codes` one unit at a time."""
    return [ord(u) if len(u) == 1 else max(xxhash.xxh3_64_intdigest(u.encode("utf-8")), 1 << 21) for u in units(text)]


def gram_hashes_reference(codes: list[int], k: int) -> list[int]:
    """:func:`simdup_es.winnow.gram_hashes` one gram at a time, in Python integers."""
    mask = (1 << 64) - 1
    out = []
    for i in range(len(codes) - k + 1):
        h = 0
        for c in codes[i : i + k]:
            h = (h * int(_BASE) + c) & mask
        h ^= h >> 30
        h = (h * int(_M1)) & mask
        h ^= h >> 27
        h = (h * int(_M2)) & mask
        h ^= h >> 31
        out.append(h)
    return out


def winnow_reference(hashes: list[int], w: int) -> tuple[list[int], list[int]]:
    """:func:`simdup_es.winnow.winnow` (and ``winnow_many``) window by window."""
    if not hashes:
        return [], []
    w = min(w, len(hashes))
    positions: set[int] = set()
    for start in range(len(hashes) - w + 1):
        window = hashes[start : start + w]
        low = min(window)
        positions.add(start + max(i for i, h in enumerate(window) if h == low))
    ordered = sorted(positions)
    return [hashes[p] for p in ordered], ordered


def shared_runs_reference(a: list[int], b: list[int], min_units: int) -> tuple[list[bool], list[bool]]:
    """:func:`simdup_es.winnow.shared_runs` by comparing the grams themselves (no hashing)."""

    def grams(s: list[int]) -> list[tuple[int, ...]]:
        return [tuple(s[i : i + min_units]) for i in range(len(s) - min_units + 1)]

    def mask(s: list[int], other: list[int]) -> list[bool]:
        left = Counter(grams(other))
        out = [False] * len(s)
        for gram, i in zip(grams(s), range(len(s)), strict=False):
            if left[gram] > 0:
                left[gram] -= 1
                out[i : i + min_units] = [True] * min_units
        return out

    return mask(a, b), mask(b, a)


# -------------------------------------------------------------------------------- multilevel


def rank_candidates_reference(query: Levels, found: Sequence[PartCandidate],
                              params: MultiParams = MultiParams()) -> list[Candidate]:
    """:func:`simdup_es.multilevel.rank_candidates` candidate by candidate.

    The match side's coverage is estimated by the share of its keys the query has (its
    distinct matched keys against the about ``2 / (w + 1)`` keys a text of its units
    has: a phrase the query repeats counts once), or by the query units its matched parts
    cover. Keys matched one by one here and there (set phrases) cover a little of a
    text; a copied passage, one run: the longest run of the query it covers weighs the match side's share
    by how much of what a short passage needs on both sides it has, squared.
    """
    out = []
    density = 2 / (KEY_W + 1)
    starts = _unit_starts(query)
    for c in found:
        in_parts = part_cover(query, c.parts, starts)
        mask = key_cover(query, c.keys) | in_parts
        units = int(mask.sum())
        cq = units / query.units if query.units else 0.0
        keys_there = max(1.0, (c.units - KEY_K + 1) * density)
        shared = max(len({query.keys[i].key for i in c.keys}) / keys_there, int(in_parts.sum()) / c.units) if c.units else 0.0
        cm = min(1.0, shared)
        longest = max(_passage_arrays(mask, 0)[2].tolist(), default=0)
        need = float(max(_short_need(c.units, params), _short_need(query.units, params)))
        evidence = max(cq, cm * min(1.0, (longest / need) ** 2), LONG_RUN * min(1.0, longest / params.passage_units))
        if evidence >= params.min_coverage:
            out.append(Candidate(c.id, cq, cm, evidence))
    out.sort(key=_judging_order)
    return out


def part_cover(query: Levels, parts: Iterable[int], starts: np.ndarray) -> np.ndarray:
    """One flag per unit of the query: inside one of the matched ``parts`` (``starts``: :func:`_unit_starts`)."""
    mask = np.zeros(query.units, dtype=bool)
    for i in parts:
        p = query.parts[i]
        mask[starts[p.first] : starts[p.stop]] = True
    return mask


# -------------------------------------------------------------------------------- common text


def rarity_reference(codes: list[int], counts: Mapping[int, int], common: int, short_common: int
                     ) -> tuple[list[int], list[bool]]:
    """:func:`simdup_es.commontext.rarity` gram by gram: ``(held, common)`` per unit. A gram of ``KEY_K`` codes
    whose key more than ``short_common`` documents hold joins the chain of the previous such gram when it starts at
    most ``KEY_W`` units after it; each unit from a chain's first gram to its last gram's end is held by the
    chain's largest count. The same with ``common`` for the common units."""
    counted = [counts.get(h, 0) for h in gram_hashes_reference(codes, KEY_K)]

    def cover(threshold: int) -> list[int]:
        out = [0] * len(codes)
        chain: list[int] = []
        for at in [*(i for i, n in enumerate(counted) if n > threshold), None]:
            if chain and (at is None or at - chain[-1] > KEY_W):
                for u in range(chain[0], min(len(codes), chain[-1] + KEY_K)):
                    out[u] = max(counted[i] for i in chain)
                chain = []
            if at is not None:
                chain.append(at)
        return out

    return cover(min(short_common, common)), [n > 0 for n in cover(common)]


# ----------------------------------------------------------------------------------- index keys


def block_terms_reference(fingerprint: int) -> list[str]:
    """The 8 block terms of a fingerprint: each byte, lowest first, as 2 lower-case hex digits."""
    return [f"{b:02x}" for b in blocks(fingerprint)]


def subset_keys_reference(fingerprint: int, subsets: Sequence[tuple[int, ...]]) -> list[int]:
    """For each subset ``n`` of blocks: ``n``, then the bytes of those blocks, as one integer (most significant first)."""
    values = blocks(fingerprint)
    out = []
    for n, subset in enumerate(subsets):
        key = n
        for j in subset:
            key = key << 8 | values[j]
        out.append(key)
    return out


def quad_keys_reference(fingerprint: int) -> list[int]:
    """The 6 quads of a part: for quad ``n`` of :data:`keys.QUAD_BLOCKS`, ``n`` and its 4 bytes."""
    return subset_keys_reference(fingerprint, keys.QUAD_BLOCKS)


def five_keys_reference(fingerprint: int) -> list[int]:
    """The 56 five-block keys of a fingerprint: for choice ``n`` of :data:`keys.FIVE_BLOCKS`, ``n`` and its 5 bytes."""
    return subset_keys_reference(fingerprint, keys.FIVE_BLOCKS)


def b64_term_reference(key: int, digits: int) -> str:
    """A key of ``6 * digits`` bits as URL-safe base64 digits, most significant first."""
    return "".join(chr(keys._B64[key >> shift & 63]) for shift in range(6 * (digits - 1), -1, -6))


def key_terms_reference(values: Iterable[int]) -> list[str]:
    """Winnowed keys as terms: each key's first :data:`keys.KEY_BITS` bits as base64 digits."""
    return [b64_term_reference(value >> (64 - keys.KEY_BITS), keys.KEY_BITS // 6) for value in values]


def hex_terms_reference(values: Iterable[int]) -> list[str]:
    """Part fingerprints as terms: 16 lower-case hex digits each."""
    return [f"{value:016x}" for value in values]


# ----------------------------------------------------------------------------------- tokens


def replace_tokens_reference(tokens: list[str], split: Mapping[str, Sequence[str]]) -> list[str]:
    """Each token that is a key of ``split`` replaced by its pieces (:mod:`simdup_es.tokens`' joined replacement)."""
    return [piece for t in tokens for piece in split.get(t, (t,))]


def choose_reference(order: Sequence[int], pairs: Iterable[tuple[int, int, int]], is_copy: dedup.IsCopy
                     ) -> dict[int, dedup.Removed]:
    """:func:`simdup_es.dedup.choose` the slow, obviously correct way: each position against every kept one it
    pairs with, nearest (then first kept) first."""
    distance = {(min(a, b), max(a, b)): d for a, b, d in pairs}
    kept: list[int] = []
    removed: dict[int, dedup.Removed] = {}
    for p in order:
        twins = sorted((distance[(min(p, q), max(p, q))], q) for q in kept if (min(p, q), max(p, q)) in distance)
        for d, q in twins:
            shares = is_copy(q, p)
            if shares is not None:
                removed[p] = dedup.Removed(q, d, shares)
                break
        else:
            kept.append(p)
    return removed
