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

In the quad part layout (the default of new indices, :data:`QUADS`) the parts are not nested
documents but keyword terms of the same document, with their fingerprints as doc values::

    {"simdup": {..., "pq": ["DvzauJ", "HvzWdF", ...], "pf": ["0123456789abcdef", ...]}}

14 terms per part, one for each of the 14 quads of its 8 blocks (:func:`quad_part_terms`):
every 5 blocks hold a quad, so two parts with at least 5 equal blocks share a term, and a
search checks each shared term against the stored fingerprints. In the flat part layout
(:data:`FLAT`, indices made before quads) a part is 56 terms, one for each choice of 5 of
its 8 blocks (:func:`flat_part_terms`), which two parts share exactly when at least 5 of
their blocks are equal::

    {"simdup": {..., "pk": ["ANoUhS4m", "AdoUhS5k", ...]}}

Neither makes a hidden Lucene document per part. The index records its layout in its
mapping's ``_meta`` (:func:`index_meta`); an index without it holds nested parts
(:data:`NESTED`), as indices made before the flat layout do.

``sk`` are the distinct winnowed keys (16 hex digits, :mod:`simdup_es.winnow`), ``parts`` nested objects with the
blocks of one part fingerprint each (so 5 of 8 blocks are matched within one part),
``units`` the text's units (for coverage), ``parts_cut`` how many parts were left out
(:data:`simdup_es.store.base.MAX_STORED_PARTS`), and ``id`` the document id again, as a
sortable keyword (Elasticsearch 8 cannot sort on ``_id``) for the candidates' tie order.
"""

from __future__ import annotations

import base64
import functools
import itertools
import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

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
PART_TERMS_NAME = "pk"
PART_TERMS = f"{ROOT}.{PART_TERMS_NAME}"
"""The flat part layout's keyword field: :func:`flat_part_terms` of every stored part."""

PART_QUADS_NAME, PART_FPS_NAME = "pq", "pf"
PART_QUADS = f"{ROOT}.{PART_QUADS_NAME}"
"""The quads part layout's keyword field: :func:`quad_part_terms` of every stored part."""
PART_FPS = f"{ROOT}.{PART_FPS_NAME}"
"""The quads part layout's part fingerprints (16 hex digits, doc values only): what a search checks a quad against."""

QUADS, FLAT, NESTED = "quads", "flat", "nested"
PART_LAYOUTS = (QUADS, FLAT, NESTED)
"""How parts are kept: 14 quad terms of the document and the part fingerprints (``quads``, the default of new
indices), 56 five-block terms of the document (``flat``), or one nested document each (``nested``); an index
moves only to a later one of these, in place (``nested`` to ``flat`` or ``quads``, ``flat`` to ``quads``)."""
PART_FIELDS = {QUADS: (PART_QUADS_NAME, PART_FPS_NAME), FLAT: (PART_TERMS_NAME,), NESTED: (PARTS_NAME,)}
"""The fields of the ``simdup`` object each part layout keeps parts in."""
FLAT_BLOCKS, FLAT_MATCH = 8, 5
"""The flat terms are keyed for 8 blocks of 8 bits with at least 5 equal (``k = 3``, the default layout)."""
DOC_LAYOUTS = {"8x8": DEFAULT_LAYOUT.blocks, "4x16": 4, "terms": DEFAULT_LAYOUT.blocks}
"""Document-level layouts ``simdup setup --layout`` offers: name -> blocks of the fingerprint. ``terms``
adds the fingerprint's 56 flat terms (``simdup.dk``, as a part's) and asks for them instead of the blocks."""
DOC_TERMS_NAME = "dk"
DOC_TERMS = f"{ROOT}.{DOC_TERMS_NAME}"


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
                  layouts: tuple[BlockLayout, ...] = (DEFAULT_LAYOUT,), part_layout: str = NESTED) -> dict[str, object]:
    """The level fields added to the ``simdup`` object (what :func:`simdup_es.store.base.stored_levels` kept),
    the parts as ``part_layout`` keeps them (:func:`parts_object`)."""
    return {ID_NAME: doc_id, UNITS_NAME: units, CUT_NAME: cut, KEYS_NAME: key_terms(keys),
            **parts_object(parts, part_layout, layouts)}


def parts_object(parts: Sequence[int], part_layout: str,
                 layouts: tuple[BlockLayout, ...] = (DEFAULT_LAYOUT,)) -> dict[str, object]:
    """The fields of the ``simdup`` object that keep ``parts`` in ``part_layout``: :func:`quad_part_terms` and
    the fingerprints (``quads``), :func:`flat_part_terms` (``flat``), or nested objects of blocks (``nested``)."""
    if part_layout == QUADS:
        return {PART_QUADS_NAME: [t for f in parts for t in quad_part_terms(f)], PART_FPS_NAME: [sh.to_hex(f) for f in parts]}
    if part_layout == FLAT:
        return {PART_TERMS_NAME: [t for f in parts for t in flat_part_terms(f)]}
    return {PARTS_NAME: [block_terms(f, layouts) for f in parts]}  # a nested part: its blocks


_SUBSETS = tuple(itertools.combinations(range(FLAT_BLOCKS), FLAT_MATCH))
# Each term's 6 bytes: the choice's number, then the 5 chosen bytes of the fingerprint (lowest first).
_TERM_BYTES = np.array([[8 + n, *subset] for n, subset in enumerate(_SUBSETS)], dtype=np.intp)


def flat_part_terms_reference(fingerprint: int) -> list[str]:
    """The 56 flat terms of one part: for each choice ``n`` of 5 of its 8 byte blocks (in
    ``itertools.combinations`` order), the 6 bytes ``n`` and those blocks' values, in URL-safe
    base64 (8 characters: a third shorter than hex, in the index and in ``_source``)."""
    values = sh.blocks(fingerprint, DEFAULT_LAYOUT)
    return [base64.urlsafe_b64encode(bytes([n, *(values[j] for j in subset)])).decode("ascii")
            for n, subset in enumerate(_SUBSETS)]


_CHOICES = np.arange(len(_SUBSETS), dtype=np.uint8)


def _flat_terms(parts: Sequence[int]) -> np.ndarray:
    """Every part's 56 terms as an ``(n * 56, 8)`` array of ASCII: 6 bytes a term encode to 8
    characters of their own, so one ``b64encode`` of all their bytes is their terms end to end."""
    n = len(parts)
    table = np.empty((n, 8 + len(_SUBSETS)), np.uint8)  # a part's 8 bytes, then the 56 choice numbers
    table[:, :8] = np.frombuffer(struct.pack(f"<{n}Q", *parts), np.uint8).reshape(n, 8)
    table[:, 8:] = _CHOICES
    encoded = base64.urlsafe_b64encode(table[:, _TERM_BYTES.ravel()].tobytes())
    return np.frombuffer(encoded, np.uint8).reshape(-1, 8)


# The 14 planes of the affine space of 8 points (the blocks of the Steiner quadruple system S(3, 4, 8)):
# any 3 blocks lie in exactly one of them and its complement is one too, so any 5 blocks (the complement
# of 3) hold a whole quad. Two parts that agree on 5 blocks therefore agree on a quad.
_QUADS = tuple(q for q in itertools.combinations(range(FLAT_BLOCKS), 4) if q[0] ^ q[1] ^ q[2] ^ q[3] == 0)
_B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"  # URL-safe base64's digits


def quad_part_terms_reference(fingerprint: int) -> list[str]:
    """The 14 quad terms of one part: for quad ``n`` (:data:`_QUADS`), the 36 bits ``n`` (4 bits) and the
    values of its 4 byte blocks, as 6 URL-safe base64 digits, most significant first."""
    values = sh.blocks(fingerprint, DEFAULT_LAYOUT)
    out = []
    for n, quad in enumerate(_QUADS):
        bits = n
        for j in quad:
            bits = bits << 8 | values[j]
        out.append("".join(chr(_B64[bits >> shift & 63]) for shift in range(30, -1, -6)))
    return out


_QUAD_BYTES = np.array(_QUADS, dtype=np.intp)
_QUAD_NUMBERS = np.arange(len(_QUADS), dtype=np.uint64) << np.uint64(32)
_SHIFTS = np.arange(30, -1, -6, dtype=np.uint64)
_DIGITS = np.frombuffer(_B64, np.uint8)


def _quad_terms(parts: Sequence[int]) -> np.ndarray:
    """Every part's 14 quad terms as an ``(n * 14, 6)`` array of ASCII."""
    n = len(parts)
    table = np.frombuffer(struct.pack(f"<{n}Q", *parts), np.uint8).reshape(n, 8)[:, _QUAD_BYTES].astype(np.uint64)
    bits = _QUAD_NUMBERS | table[..., 0] << np.uint64(24) | table[..., 1] << np.uint64(16) \
        | table[..., 2] << np.uint64(8) | table[..., 3]
    return _DIGITS[(bits.reshape(-1, 1) >> _SHIFTS) & np.uint64(63)]


def quad_part_terms(fingerprint: int) -> list[str]:
    """:func:`quad_part_terms_reference`, with numpy (every part of every document indexed goes through it)."""
    joined = _quad_terms([fingerprint]).tobytes().decode("ascii")
    return [joined[i : i + 6] for i in range(0, len(joined), 6)]


def quad_terms_json(parts: Sequence[int]) -> str:
    """:func:`quad_part_terms` of every part, as comma-separated JSON strings, made in one piece."""
    return _json_strings(_quad_terms(parts)) if parts else ""


def _json_strings(terms: np.ndarray) -> str:
    """Rows of ASCII (terms of one width) as comma-separated JSON strings, made in one piece."""
    out = np.full((len(terms), terms.shape[1] + 3), ord('"'), np.uint8)
    out[:, 1:-2], out[:, -1] = terms, ord(",")
    return out.tobytes()[:-1].decode("ascii")


def part_fps_json(parts: Sequence[int]) -> str:
    """The part fingerprints of the quads layout (:data:`PART_FPS`) as comma-separated JSON strings."""
    return ",".join(f'"{sh.to_hex(p)}"' for p in parts)


def flat_part_fingerprints(terms: Sequence[str]) -> list[int]:
    """The part fingerprints that :func:`flat_part_terms` made ``terms`` of (56 a part, in order): a part's
    first term holds its blocks 0 to 4, its last its blocks 3 to 7."""
    out = []
    for i in range(0, len(terms) - len(_SUBSETS) + 1, len(_SUBSETS)):
        low, high = (base64.urlsafe_b64decode(terms[i + k]) for k in (0, len(_SUBSETS) - 1))
        out.append(int.from_bytes(low[1:] + high[3:], "little"))
    return out


def flat_part_terms(fingerprint: int) -> list[str]:
    """:func:`flat_part_terms_reference`, from one ``b64encode`` (every part of every document indexed
    goes through it)."""
    joined = _flat_terms([fingerprint]).tobytes().decode("ascii")
    return [joined[i : i + 8] for i in range(0, len(joined), 8)]


def flat_terms_json(parts: Sequence[int]) -> str:
    """:func:`flat_part_terms` of every part, as comma-separated JSON strings, made in one piece (a
    term two parts share is written twice, which indexes the same)."""
    return _json_strings(_flat_terms(parts)) if parts else ""


def index_meta(parts: str = QUADS, blocks: int = DEFAULT_LAYOUT.blocks, doc_terms: bool = False) -> dict[str, Any]:
    """What an index's mapping ``_meta`` records of its layout: ``{"simdup": {"parts": ..., "blocks": ...}}``
    (and ``"doc_terms": true`` for the ``terms`` document layout)."""
    return {ROOT: {"parts": parts, "blocks": blocks, **({"doc_terms": True} if doc_terms else {})}}


TEXT_FIELD_KEY, TITLE_FIELD_KEY = "text_field", "title_field"
"""Keys of an index's ``_meta.simdup``: the ``_source`` fields that hold its documents' text and title, when
they are not ``text`` and ``title`` (recorded by ``simdup backfill --field``)."""


def source_fields_of(meta: Mapping[str, Any] | None) -> tuple[str, str]:
    """``(text field, title field)`` an index's mapping ``_meta`` records (``text`` and ``title`` by default)."""
    got = (meta or {}).get(ROOT) or {}
    return str(got.get(TEXT_FIELD_KEY) or "text"), str(got.get(TITLE_FIELD_KEY) or "title")


def doc_terms_of(meta: Mapping[str, Any] | None) -> bool:
    """Whether an index's mapping ``_meta`` records the ``terms`` document layout."""
    return bool(((meta or {}).get(ROOT) or {}).get("doc_terms"))


def layout_of(meta: Mapping[str, Any] | None) -> tuple[str, int | None]:
    """``(part layout, document blocks)`` an index's mapping ``_meta`` records; an index without
    them holds nested parts (as indices made before they were recorded) and blocks ``None``: the
    block fields it has tell (a store checks them)."""
    got = (meta or {}).get(ROOT) or {}
    blocks = got.get("blocks")
    return str(got.get("parts", NESTED)), None if blocks is None else int(blocks)


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
