"""What a stored document is found by: every index key of a document, computed once. Pure: no client, no I/O.

A document carries its keys in one object, ``simdup`` (the field names below)::

    {"simdup": {"fp": "e28764262e8514da", "version": "3.2b61da8f",
                "b0": "da", "b1": "14", ..., "b7": "e2",           the 8 block terms
                "dk": ["ANoUhS4m", ...],                            the `terms` layout only: 56 five-block terms
                "units": 812, "parts_cut": 0,                       with its levels (simdup_es.levels):
                "sk": ["AKPxwtT", ...],                             its winnowed keys
                "pq": ["DvzauJ", ...], "pf": ["0123456789abcdef", ...],   6 quads a part, the parts' fingerprints
                "id": "<_id>"}}

Four kinds of key, each encoded one way:

- **block terms**: byte ``j`` of the fingerprint (lowest first) as 2 hex digits, in field ``b<j>``.
  Two fingerprints within Hamming distance ``k`` share at least ``8 - k`` of them (pigeonhole).
- **five-block terms** (the ``terms`` document layout, :data:`TERMS`): for each choice ``n`` of 5 of the
  8 blocks (:data:`FIVE_BLOCKS`), ``n`` and those blocks' bytes, 48 bits as 8 URL-safe base64 digits.
  Two fingerprints share one exactly when at least 5 blocks are equal (``C(m, 5)`` of them for ``m``
  equal blocks), and each term holds only fingerprints that agree on 40 bits: its postings do not grow
  with the index as a block term's do.
- **quads** of a part: the 8 blocks paired (0-1, 2-3, 4-5, 6-7), and the 6 unions of two pairs
  (:data:`QUAD_BLOCKS`). Any 6 blocks hold one: the 2 left out lie in at most 2 of the pairs, and the
  other two pairs are a quad. So two parts with at least :data:`PART_MATCH` equal blocks share a quad:
  ``n`` and the quad's 4 bytes, 35 bits as 6 base64 digits. A quad alone is 4 equal blocks; a lookup
  checks the part fingerprint (:func:`part_match`), so both stores keep exactly the parts with 6 of 8
  blocks equal. (Parts with 5 equal blocks would need 14 quads, the planes of the Steiner system
  S(3, 4, 8), and cost the node an eighth more CPU to index for no measured gain in what searches
  find: docs/evaluation.md.)
- **winnowed keys** (:mod:`simdup_es.winnow`): the first :data:`KEY_BITS` of each 64-bit key as 7 base64
  digits (:func:`key_terms`). Two keys that differ but share those bits are one term in Elasticsearch,
  which may then offer a candidate the embedded store does not (at 10 million stored keys, one query in
  about a thousand); the judge compares texts, not keys, so it is no copy. Such terms take the node
  an eighth less CPU to index than 16 hex digits.
- the part fingerprints: 16 hex digits (read back: a lookup checks them).

What a store writes of a document's keys is made once, where its levels are computed (a worker of
``simdup index``), as :class:`StoredKeys`: the members of its ``simdup`` object as JSON text
(:func:`members_json`) and the numbers the embedded store writes. The compiled core makes them for a batch
(:mod:`simdup_es.native`); this module is the reference it is held to.

The part rule is :data:`PART_MATCH` whatever a search's ``k`` (which is the document level's alone, 0 to
:data:`MAX_K`). Which document keys a document holds and a lookup asks for is decided here alone
(:func:`doc_fields`, :func:`doc_query`), by the layout an index records with its schema number
(:func:`index_meta`). Each fast encoder has a ``*_reference`` twin the property tests hold it to.
"""

from __future__ import annotations

import itertools
import json
import math
import struct
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from . import simhash as sh
from .errors import ConfigError

if TYPE_CHECKING:
    from .levels import Levels

SCHEMA = 2
"""What the keys are and how they are encoded. An index records it (:func:`index_meta`); a store refuses an
index of another schema (a new index and a backfill or a reindex into it: docs/elasticsearch.md). Schema 2:
winnowed keys as 7 base64 digits (were 16 hex), parts found by 6 quads and matched with 6 equal blocks (were 14, 5)."""
BLOCKS = sh.BLOCKS
PART_MATCH = 6
"""Blocks of 8 two parts share to match (the part level's rule: a part within 2 bits shares them)."""
FIVE = 5
"""Blocks a five-block term holds: a document within 3 bits shares one."""
KEY_BITS = 42
"""The bits of a winnowed key an Elasticsearch term holds (its first: 7 base64 digits)."""
MAX_K = BLOCKS - 1
"""The largest document distance a lookup finds every candidate within (at least one block equal)."""
EIGHT_BY_EIGHT, TERMS = "8x8", "terms"
LAYOUTS = (EIGHT_BY_EIGHT, TERMS)
"""Document layouts: the 8 block terms (``8x8``, the default), or those and the 56 five-block terms (``terms``),
which a lookup within ``k <= 3`` asks for instead."""

ROOT = "simdup"
ID_NAME, UNITS_NAME, CUT_NAME, KEYS_NAME = "id", "units", "parts_cut", "sk"
PART_QUADS_NAME, PART_FPS_NAME, DOC_TERMS_NAME = "pq", "pf", "dk"
BLOCK_NAMES = tuple(f"b{j}" for j in range(BLOCKS))
LEVEL_NAMES = (ID_NAME, UNITS_NAME, CUT_NAME, KEYS_NAME, PART_QUADS_NAME, PART_FPS_NAME)
FP, VERSION, ERROR = f"{ROOT}.fp", f"{ROOT}.version", f"{ROOT}.error"
"""``error``: why a document has a version but no fingerprint (set by ``simdup backfill``)."""
ID, UNITS, PARTS_CUT, KEYS = (f"{ROOT}.{name}" for name in (ID_NAME, UNITS_NAME, CUT_NAME, KEYS_NAME))
"""``id`` is the document id again, as a sortable keyword (Elasticsearch 8 cannot sort on ``_id``)."""
PART_QUADS, PART_FPS, DOC_TERMS = (f"{ROOT}.{name}" for name in (PART_QUADS_NAME, PART_FPS_NAME, DOC_TERMS_NAME))
UNIFIED_NAME = "unified"
UNIFIED = f"{ROOT}.{UNIFIED_NAME}"
"""The document's text unified (:func:`simdup_es.text.unify`), in ``_source`` only (neither indexed nor a doc value):
what a search's judge reads of a candidate, so that no stored text is unified again at query time."""
GROUP, GROUP_SIZE, GROUP_KIND = "dup_group", "dup_group_size", "dup_kind"
"""Written by ``simdup groups`` at the top level, where analysts look first: the group, its size, and the
strongest kind of link that put the document in it (``near-duplicate`` or ``partial``)."""
TEXT_FIELD_KEY, TITLE_FIELD_KEY = "text_field", "title_field"
"""Keys of an index's ``_meta.simdup``: the ``_source`` fields of its text and title when they are not ``text``
and ``title`` (recorded by ``simdup backfill --field``)."""

QUAD_BLOCKS = tuple(a + b for a, b in itertools.combinations([(j, j + 1) for j in range(0, BLOCKS, 2)], 2))
FIVE_BLOCKS = tuple(itertools.combinations(range(BLOCKS), FIVE))
_B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"  # URL-safe base64's digits


def check_k(k: object) -> int:
    """``k`` if it is a document distance a lookup can answer (0 to :data:`MAX_K`), else :class:`ConfigError`."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= MAX_K:
        raise ConfigError(f"k must be a whole number from 0 to {MAX_K} (a near-duplicate shares at least "
                          f"{BLOCKS} - k of the fingerprint's {BLOCKS} blocks), got {k!r}")
    return int(k)


def block_field(j: int) -> str:
    return f"{ROOT}.{BLOCK_NAMES[j]}"


# --- encoders ---------------------------------------------------------------------------------------


def block_terms(fingerprint: int) -> list[str]:
    """:func:`simdup_es.reference.block_terms_reference`, from one ``hex`` of the fingerprint's bytes."""
    return int(fingerprint).to_bytes(8, "little").hex(" ").split()


def _subset_keys(fingerprints: Sequence[int] | np.ndarray, subsets: Sequence[tuple[int, ...]]) -> np.ndarray:
    """:func:`simdup_es.reference.subset_keys_reference` of each fingerprint: an ``(n, len(subsets))`` ``uint64`` array."""
    fps = np.asarray(fingerprints, dtype=np.uint64).reshape(-1)
    chosen = fps.astype("<u8").view(np.uint8).reshape(-1, 8)[:, np.array(subsets)].astype(np.uint64)  # byte j: block j
    size = len(subsets[0])
    keys = np.arange(len(subsets), dtype=np.uint64) << np.uint64(8 * size)
    for i in range(size):
        keys = keys | chosen[..., i] << np.uint64(8 * (size - 1 - i))
    return keys


def quad_keys(parts: Sequence[int] | np.ndarray) -> np.ndarray:
    """:func:`simdup_es.reference.quad_keys_reference` of each part, with numpy: ``(len(parts), 6)`` ``uint64``."""
    return _subset_keys(parts, QUAD_BLOCKS)


def five_keys(fingerprints: Sequence[int] | np.ndarray) -> np.ndarray:
    """:func:`simdup_es.reference.five_keys_reference` of each fingerprint, with numpy: ``(n, 56)`` ``uint64``."""
    return _subset_keys(fingerprints, FIVE_BLOCKS)


_DIGITS = np.frombuffer(_B64, np.uint8)


def _b64(keys: np.ndarray, digits: int) -> np.ndarray:
    """:func:`simdup_es.reference.b64_term_reference` of each key, as rows of ASCII: ``(keys.size, digits)`` ``uint8``."""
    shifts = np.arange(6 * (digits - 1), -1, -6, dtype=np.uint64)
    return _DIGITS[(keys.reshape(-1, 1) >> shifts) & np.uint64(63)]


def _strings(rows: np.ndarray) -> list[str]:
    """Rows of ASCII (terms of one width) as strings."""
    joined, width = rows.tobytes().decode("ascii"), rows.shape[1]
    return [joined[i : i + width] for i in range(0, len(joined), width)]


def _json(rows: np.ndarray) -> str:
    """Rows of ASCII (terms of one width) as comma-separated JSON strings, made in one piece."""
    if not len(rows):
        return ""
    out = np.full((len(rows), rows.shape[1] + 3), ord('"'), np.uint8)
    out[:, 1:-2], out[:, -1] = rows, ord(",")
    return out.tobytes()[:-1].decode("ascii")


def quad_terms(fingerprint: int) -> list[str]:
    """The 6 quad terms of one part (6 base64 digits each): what a part lookup asks for."""
    return _strings(_b64(quad_keys([fingerprint]), 6))


def quad_terms_json(parts: Sequence[int]) -> str:
    """The quad terms of every part, as comma-separated JSON strings (:data:`PART_QUADS` of a document)."""
    return _json(_b64(quad_keys(parts), 6)) if len(parts) else ""


def doc_terms(fingerprint: int) -> list[str]:
    """The 56 five-block terms of a fingerprint (8 base64 digits each)."""
    return _strings(_b64(five_keys([fingerprint]), 8))


def _spaced_hex(values: Sequence[int]) -> str:
    """The values packed big-endian as one ``hex``, a space between values."""
    return struct.pack(f">{len(values)}Q", *values).hex(" ", 8)


def key_terms(values: Sequence[int] | np.ndarray) -> list[str]:
    """:func:`simdup_es.reference.key_terms_reference`: winnowed keys as Elasticsearch terms."""
    return _strings(_key_rows(values))


def key_terms_json(values: Sequence[int] | np.ndarray) -> str:
    """:func:`key_terms` as comma-separated JSON strings (:data:`KEYS` of a document)."""
    return _json(_key_rows(values))


def _key_rows(values: Sequence[int] | np.ndarray) -> np.ndarray:
    return _b64(np.asarray(values, np.uint64) >> np.uint64(64 - KEY_BITS), KEY_BITS // 6)


def hex_terms(values: Sequence[int]) -> list[str]:
    """:func:`simdup_es.reference.hex_terms_reference`: one ``hex`` of them all, cut (a document's ~20 keys in a
    third of the time)."""
    return _spaced_hex(values).split()


def hex_json(values: Sequence[int]) -> str:
    """:func:`hex_terms` as comma-separated JSON strings: the same ``hex``, its separators made ``","``."""
    return '"' + _spaced_hex(values).replace(" ", '","') + '"' if len(values) else ""


def part_match(a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray) -> np.ndarray:
    """Whether parts ``a`` and ``b`` (arrays broadcast against each other) share at least :data:`PART_MATCH` blocks.

    The check after a quad lookup, in both stores: what makes a part a match."""
    return sh.equal_blocks(np.asarray(a, np.uint64), np.asarray(b, np.uint64)) >= PART_MATCH


# --- the document layouts -----------------------------------------------------------------------------


def _has_terms(layout: str) -> bool:
    """Whether documents of ``layout`` hold five-block terms: the layout choice."""
    if layout not in LAYOUTS:
        raise ConfigError(f"the document layout is one of {', '.join(LAYOUTS)}, got {layout!r}")
    return layout == TERMS


def _asks_terms(k: int, layout: str) -> bool:
    """Whether a lookup within ``k`` asks for five-block terms (which hold 5 equal blocks) rather than block terms."""
    terms = _has_terms(layout)
    return check_k(k) <= BLOCKS - FIVE and terms


def doc_fields(fingerprint: int, layout: str = EIGHT_BY_EIGHT) -> dict[str, Any]:
    """The key fields of a document fingerprint in its ``simdup`` object: its block terms, and in the ``terms``
    layout its five-block terms."""
    fields: dict[str, Any] = dict(zip(BLOCK_NAMES, block_terms(fingerprint)))
    if _has_terms(layout):
        fields[DOC_TERMS_NAME] = doc_terms(fingerprint)
    return fields


_BLOCKS_JSON = ",".join(f'"{name}":"%s"' for name in BLOCK_NAMES)


def doc_fields_json(fingerprint: int, layout: str = EIGHT_BY_EIGHT) -> str:
    """:func:`doc_fields` as the members of a JSON object (``"b0":"da",...``), made in one piece."""
    out = _BLOCKS_JSON % tuple(block_terms(fingerprint))
    if _has_terms(layout):
        out += f',"{DOC_TERMS_NAME}":[{_json(_b64(five_keys([fingerprint]), 8))}]'
    return out


def doc_query(fingerprint: int, k: int, layout: str = EIGHT_BY_EIGHT) -> tuple[list[tuple[str, str]], int]:
    """``(field, term)`` pairs of a document lookup, and how many of them every document within ``k`` shares.

    8 block terms, of which ``8 - k``; in the ``terms`` layout with ``k <= 3``, the 56 five-block terms, of
    which ``C(8 - k, 5)`` (a fingerprint with ``m`` equal blocks shares exactly ``C(m, 5)``). Either finds
    every fingerprint within ``k`` and some further away: candidates are re-ranked by exact distance.
    """
    if _asks_terms(k, layout):
        return [(DOC_TERMS, term) for term in doc_terms(fingerprint)], math.comb(BLOCKS - k, FIVE)
    return [(block_field(j), term) for j, term in enumerate(block_terms(fingerprint))], BLOCKS - k


def doc_union(fingerprints: Sequence[int], k: int, layout: str = EIGHT_BY_EIGHT) -> tuple[dict[str, list[str]], int]:
    """One lookup for a superset of the candidates of every one of ``fingerprints``: ``{field: terms}``, of which
    every candidate of one of them matches at least ``least`` fields (a field holding at most ``t`` of one
    lookup's terms counts once for them: ``least = ceil(shared / t)``). The caller keeps each one's own."""
    union: dict[str, set[str]] = {}
    shared, per_field = 1, 1
    for fp in fingerprints:
        pairs, shared = doc_query(fp, k, layout)
        fields = [field for field, _ in pairs]
        per_field = max(fields.count(field) for field in set(fields))
        for field, term in pairs:
            union.setdefault(field, set()).add(term)
    return {field: sorted(terms) for field, terms in union.items()}, -(-shared // per_field)


def union_size(documents: int, k: int, layout: str = EIGHT_BY_EIGHT, *, most: int = 100) -> int:
    """How many fingerprints one :func:`doc_union` lookup should hold in an index of ``documents``.

    The largest number (at most ``most``, at least 1) whose lookup lets in no more random documents than it
    holds fingerprints, on average: with ``c`` fingerprints a block field matches a random document with
    probability ``p = c / 256``, and it passes when ``8 - k`` do. 100,000 documents, ``k = 3``: 22 (about 20
    random hits); 10 million: 6 (measured at 100,000: 20 to 40 a search were fastest). Five-block terms fix
    40 bits each: ``most``.
    """
    if _asks_terms(k, layout):
        return most

    def random_hits(c: int) -> float:
        p = min(1.0, c / 256)
        return documents * sum(math.comb(BLOCKS, i) * p**i * (1 - p) ** (BLOCKS - i) for i in range(BLOCKS - k, BLOCKS + 1))

    size = 1
    while size < most and random_hits(size + 1) <= size + 1:
        size += 1
    return size


# --- the simdup object and the index's record -------------------------------------------------------


def fingerprint_object(fingerprint: int, version: str, layout: str = EIGHT_BY_EIGHT) -> dict[str, Any]:
    """The ``simdup`` object of a document fingerprint."""
    return {"fp": sh.to_hex(fingerprint), "version": version, **doc_fields(fingerprint, layout)}


def levels_object(doc_id: str, units: int, parts: Sequence[int], keys: Sequence[int], cut: int) -> dict[str, object]:
    """The level fields added to the ``simdup`` object: units, parts left out, winnowed keys, the parts' quads and
    fingerprints, and the id."""
    quads = _strings(_b64(quad_keys(parts), 6)) if len(parts) else []
    return {UNITS_NAME: units, CUT_NAME: cut, KEYS_NAME: key_terms(keys), PART_QUADS_NAME: quads,
            PART_FPS_NAME: hex_terms(parts), ID_NAME: doc_id}


json_string = json.encoder.encode_basestring  # type: ignore[attr-defined]  # what json.dumps uses with ensure_ascii=False


def members_json(fingerprint: int, version: str, layout: str = EIGHT_BY_EIGHT,
                 levels: tuple[int, Sequence[int], Sequence[int], int] | None = None) -> str:
    """The members of a document's ``simdup`` object but its id, as the client's JSON text (``json.dumps`` of
    :func:`fingerprint_object` and :func:`levels_object` without the id, ``ensure_ascii=False``, no spaces),
    written directly. ``levels`` are ``(units, parts, keys, cut)`` as a store keeps them
    (:func:`simdup_es.store.base.stored_levels`). The terms are hex and base64, which need no escaping."""
    out = f'"fp":"{sh.to_hex(fingerprint)}","version":{json_string(version)},{doc_fields_json(fingerprint, layout)}'
    if levels is not None:
        units, parts, key_values, cut = levels
        out += (f',"{UNITS_NAME}":{int(units)},"{CUT_NAME}":{int(cut)},"{KEYS_NAME}":[{key_terms_json(key_values)}],'
                f'"{PART_QUADS_NAME}":[{quad_terms_json(parts)}],"{PART_FPS_NAME}":[{hex_json(parts)}]')
    return out


class StoredKeys(NamedTuple):
    """What the stores write of a document's levels, made once where they are computed.

    ``simdup index``'s workers make them (:meth:`PartPrinter.map_stored <simdup_es.parts.PartPrinter.map_stored>`:
    the compiled core for a batch, or :func:`simdup_es.store.base.stored_keys`), so the process feeding the
    store only joins them to the document. ``members``: :func:`members_json` in ``layout`` (``None``: not made,
    as for the embedded store); ``parts``: the part fingerprints a store keeps and ``keys`` the distinct keys
    ascending, unsigned 64-bit numbers in native byte order; ``cut``: the parts left out. ``levels``,
    ``fingerprint`` and ``version`` are what they were made of: a store takes them for a document of that
    very :class:`~simdup_es.levels.Levels` object and that fingerprint only
    (:meth:`StoredDoc.stored_keys <simdup_es.store.base.StoredDoc.stored_keys>`).
    """

    layout: str | None
    members: str | None
    units: int
    cut: int
    parts: bytes
    keys: bytes
    levels: Levels
    fingerprint: int
    version: str


def index_meta(layout: str = EIGHT_BY_EIGHT) -> dict[str, Any]:
    """What an index's mapping ``_meta`` records: ``{"simdup": {"schema": SCHEMA, "layout": layout}}``."""
    _has_terms(layout)  # a known layout
    return {ROOT: {"schema": SCHEMA, "layout": layout}}


def recorded(meta: Mapping[str, Any] | None) -> tuple[int | None, str]:
    """``(schema, layout)`` an index's mapping ``_meta`` records (schema ``None``: none recorded)."""
    got = (meta or {}).get(ROOT) or {}
    schema = got.get("schema")
    return (None if schema is None else int(schema)), str(got.get("layout", EIGHT_BY_EIGHT))


def source_fields_of(meta: Mapping[str, Any] | None) -> tuple[str, str]:
    """``(text field, title field)`` an index's mapping ``_meta`` records (``text`` and ``title`` by default)."""
    got = (meta or {}).get(ROOT) or {}
    return str(got.get(TEXT_FIELD_KEY) or "text"), str(got.get(TITLE_FIELD_KEY) or "title")
