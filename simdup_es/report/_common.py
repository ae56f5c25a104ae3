"""Helpers shared by the terminal and HTML reports."""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz.distance import LCSseq

from ..compare import Comparison, SentencePair
from ..lcs import UnitCodec
from ..sentences import Sentence, unit_spans

Span = tuple[int, int]


def changed_spans(sa: Sentence, sb: Sentence) -> tuple[list[Span], list[Span]]:
    """Character spans (relative to each sentence) of the units one LCS of the pair leaves out.

    A copied sentence is mostly shared text; what a reader wants to see is what
    was changed (a synonym swapped in, a word dropped). Units are located in the
    sentence text once, and aligned as :func:`simdup_es.sentences.units` counts
    them (Latin words case-folded).
    """
    spans_a, spans_b = unit_spans(sa.text), unit_spans(sb.text)
    codec = UnitCodec()
    seq_a = codec.encode(sa.text[i:j].casefold() for i, j in spans_a)
    seq_b = codec.encode(sb.text[i:j].casefold() for i, j in spans_b)
    out_a: list[Span] = []
    out_b: list[Span] = []
    for op in LCSseq.opcodes(seq_a, seq_b):
        if op.tag != "equal":
            out_a.extend(spans_a[op.src_start : op.src_end])
            out_b.extend(spans_b[op.dest_start : op.dest_end])
    return _merge(out_a, sa.text), _merge(out_b, sb.text)


def _merge(spans: Sequence[Span], text: str) -> list[Span]:
    """Join spans separated only by spaces or punctuation, for a calmer display."""
    merged: list[Span] = []
    for start, end in spans:
        if merged and not any(ch.isalnum() for ch in text[merged[-1][1] : start]):
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def counterparts(comparison: Comparison) -> tuple[dict[int, list[SentencePair]], dict[int, list[SentencePair]]]:
    """Sentence index -> its pairs, best first (highest p, then nearest index), both ways."""
    of_a: dict[int, list[SentencePair]] = {}
    of_b: dict[int, list[SentencePair]] = {}
    for p in comparison.pairs:
        of_a.setdefault(p.i, []).append(p)
        of_b.setdefault(p.j, []).append(p)
    for pairs in of_a.values():
        pairs.sort(key=lambda p: (-p.p, abs(p.i - p.j), p.j))
    for pairs in of_b.values():
        pairs.sort(key=lambda p: (-p.p, abs(p.i - p.j), p.i))
    return of_a, of_b


def percent(x: float) -> str:
    return f"{100 * x:.1f}%"
