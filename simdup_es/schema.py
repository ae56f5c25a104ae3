"""Where fingerprints live in a document: field names and block encoding, in one place.

The mappings in ``mappings/`` are written from these names (a test holds them to
it). A document carries::

    {"simdup": {"fp": "e28764262e8514da", "version": "3.2b61da8f",
                "b0": "da", "b1": "14", ..., "b7": "e2"}}

Blocks are lower-case hex of the block's bits, zero-padded (two digits for 8-bit
blocks), as ``keyword`` terms. Layouts other than the default 8 blocks use
``b{blocks}_{j}`` so several layouts can sit side by side in one index.

A document written with its finer levels (:class:`simdup_es.parts.Levels`, issue 11)
also carries, in the same object::

    {"simdup": {..., "id": "<_id>", "units": 812, "parts_cut": 0,
                "sk": ["00a3f1c2d4e5f607", ...],
                "parts": [{"b0": "3c", ..., "b7": "91"}, ...]}}

``sk`` are the distinct winnowed keys (16 hex digits, :mod:`simdup_es.winnow`), ``parts`` nested objects with the
blocks of one part fingerprint each (so 5 of 8 blocks are matched within one part),
``units`` the text's units (for coverage), ``parts_cut`` how many parts were left out
(:data:`simdup_es.store.base.MAX_STORED_PARTS`), and ``id`` the document id again, as a
sortable keyword (Elasticsearch 8 cannot sort on ``_id``) for the candidates' tie order.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Sequence

from . import simhash as sh
from .config import BlockLayout

ROOT = "simdup"
FP = f"{ROOT}.fp"
VERSION = f"{ROOT}.version"
# Why a document has a version but no fingerprint (set by `simdup backfill`).
ERROR = f"{ROOT}.error"
DEFAULT_LAYOUT = BlockLayout()
# Levels (issue 11): names inside the ``simdup`` object, and their full paths.
ID_NAME, UNITS_NAME, CUT_NAME, KEYS_NAME, PARTS_NAME = "id", "units", "parts_cut", "sk", "parts"
ID = f"{ROOT}.{ID_NAME}"
UNITS = f"{ROOT}.{UNITS_NAME}"
PARTS_CUT = f"{ROOT}.{CUT_NAME}"
KEYS = f"{ROOT}.{KEYS_NAME}"
PARTS = f"{ROOT}.{PARTS_NAME}"
LEVEL_NAMES = (ID_NAME, UNITS_NAME, CUT_NAME, KEYS_NAME, PARTS_NAME)


def block_name(layout: BlockLayout, j: int) -> str:
    """Name of block ``j`` inside the ``simdup`` object."""
    return f"b{j}" if layout.blocks == DEFAULT_LAYOUT.blocks else f"b{layout.blocks}_{j}"


def block_field(layout: BlockLayout, j: int) -> str:
    """Full dotted path of block ``j``'s keyword field."""
    return f"{ROOT}.{block_name(layout, j)}"


def block_term(layout: BlockLayout, value: int) -> str:
    """The keyword term for one block value."""
    return f"{value:0{(layout.bits_per_block + 3) // 4}x}"


def part_block_field(layout: BlockLayout, j: int) -> str:
    """Full dotted path of block ``j`` of a part (inside the nested ``simdup.parts``)."""
    return f"{PARTS}.{block_name(layout, j)}"


def key_term(key: int) -> str:
    """The keyword term for one key: 16 lower-case hex digits."""
    return f"{key:016x}"


def key_terms(keys: Sequence[int]) -> list[str]:
    """:func:`key_term` of each key: one ``hex`` of them all packed big-endian, cut in 16s
    (a document's ~20 keys in a third of the time of one format each)."""
    return _spaced_hex(keys).split()


def key_terms_json(keys: Sequence[int]) -> str:
    """:func:`key_terms` as JSON strings, comma-separated: the same ``hex``, its separators made
    into ``","`` (half the time of quoting each)."""
    return '"' + _spaced_hex(keys).replace(" ", '","') + '"' if keys else ""


def _spaced_hex(keys: Sequence[int]) -> str:
    """The keys packed big-endian as one ``hex``, a space between keys."""
    return struct.pack(f">{len(keys)}Q", *keys).hex(" ", 8)


def part_object(fingerprint: int, layouts: tuple[BlockLayout, ...] = (DEFAULT_LAYOUT,)) -> dict[str, str]:
    """One nested part: its blocks in every layout of ``layouts``."""
    return block_terms(fingerprint, layouts)


def block_terms_reference(fingerprint: int, layouts: tuple[BlockLayout, ...]) -> dict[str, str]:
    """``{block name: block term}`` of every block of ``layouts``: the plain definition."""
    return {block_name(layout, j): block_term(layout, value)
            for layout in layouts for j, value in enumerate(sh.blocks(fingerprint, layout))}


@functools.cache
def _cuts(layouts: tuple[BlockLayout, ...]) -> tuple[tuple[str, int, int, str], ...]:
    """Each block's name and where its term is: hex digits ``[a, b)`` of the 16 (format ``""``),
    or ``format((fingerprint >> a) & b, fmt)`` for blocks that are not whole hex digits."""
    out = []
    for layout in layouts:
        bits = layout.bits_per_block
        for j in range(layout.blocks):
            if bits % 4 == 0:  # lowest bits first: block j is the j-th group of digits from the right
                digits = bits // 4
                out.append((block_name(layout, j), 16 - (j + 1) * digits, 16 - j * digits, ""))
            else:
                out.append((block_name(layout, j), j * bits, (1 << bits) - 1, f"0{(bits + 3) // 4}x"))
    return tuple(out)


def block_terms(fingerprint: int, layouts: tuple[BlockLayout, ...]) -> dict[str, str]:
    """:func:`block_terms_reference`, cut from the hex digits (every part of every document
    indexed goes through it: 5x faster)."""
    digits = f"{fingerprint:016x}"
    return {name: digits[a:b] if not fmt else format((fingerprint >> a) & b, fmt) for name, a, b, fmt in _cuts(layouts)}


def levels_object(doc_id: str, units: int, parts: list[int], keys: list[int], cut: int,
                  layouts: tuple[BlockLayout, ...] = (DEFAULT_LAYOUT,)) -> dict[str, object]:
    """The level fields added to the ``simdup`` object (what :func:`simdup_es.store.base.stored_levels` kept)."""
    return {ID_NAME: doc_id, UNITS_NAME: units, CUT_NAME: cut, KEYS_NAME: key_terms(keys),
            PARTS_NAME: [part_object(f, layouts) for f in parts]}


def fingerprint_object(fingerprint: int, version: str, layouts: tuple[BlockLayout, ...] = (DEFAULT_LAYOUT,)) -> dict[str, str]:
    """The ``simdup`` object stored with a document."""
    return {"fp": sh.to_hex(fingerprint), "version": version, **block_terms(fingerprint, layouts)}

# Written by `simdup groups`: connected components of near-duplicate pairs, so
# Kibana can filter and aggregate on them. Top level, where analysts look first.
GROUP = "dup_group"
GROUP_SIZE = "dup_group_size"
# The strongest kind of link that put the document in its group: "near-duplicate"
# (a document-level pair within k) or "partial" (only partial copies, `groups --partial`).
GROUP_KIND = "dup_kind"
