"""Where fingerprints live in a document: field names and block encoding, in one place.

The mappings in ``mappings/`` are written from these names (a test holds them to
it). A document carries::

    {"simdup": {"fp": "e28764262e8514da", "version": "1.0925f747",
                "b0": "da", "b1": "14", ..., "b7": "e2"}}

Blocks are lower-case hex of the block's bits, zero-padded (two digits for 8-bit
blocks), as ``keyword`` terms. Layouts other than the default 8 blocks use
``b{blocks}_{j}`` so several layouts can sit side by side in one index.
"""

from __future__ import annotations

from . import simhash as sh
from .config import BlockLayout

ROOT = "simdup"
FP = f"{ROOT}.fp"
VERSION = f"{ROOT}.version"
# Why a document has a version but no fingerprint (set by `simdup backfill`).
ERROR = f"{ROOT}.error"
DEFAULT_LAYOUT = BlockLayout()


def block_name(layout: BlockLayout, j: int) -> str:
    """Name of block ``j`` inside the ``simdup`` object."""
    return f"b{j}" if layout.blocks == DEFAULT_LAYOUT.blocks else f"b{layout.blocks}_{j}"


def block_field(layout: BlockLayout, j: int) -> str:
    """Full dotted path of block ``j``'s keyword field."""
    return f"{ROOT}.{block_name(layout, j)}"


def block_term(layout: BlockLayout, value: int) -> str:
    """The keyword term for one block value."""
    return f"{value:0{(layout.bits_per_block + 3) // 4}x}"


def fingerprint_object(fingerprint: int, version: str, layouts: tuple[BlockLayout, ...] = (DEFAULT_LAYOUT,)) -> dict[str, str]:
    """The ``simdup`` object stored with a document."""
    obj = {"fp": sh.to_hex(fingerprint), "version": version}
    for layout in layouts:
        for j, value in enumerate(sh.blocks(fingerprint, layout)):
            obj[block_name(layout, j)] = block_term(layout, value)
    return obj

# Written by `simdup groups`: connected components of near-duplicate pairs, so
# Kibana can filter and aggregate on them. Top level, where analysts look first.
GROUP = "dup_group"
GROUP_SIZE = "dup_group_size"
