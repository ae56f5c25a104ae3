"""Helpers shared by the terminal and HTML reports."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, Literal

import numpy as np
from rapidfuzz.distance import LCSseq

from ..commontext import Held
from ..compare import Comparison, SentencePair, pair_dict, sentence_dict
from ..lcs import UnitCodec
from ..multilevel import Copies, copied_units, held_spans, passages
from ..offsets import Unified, unify_mapped
from ..search import Verdict
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


def pair_how(pair: SentencePair) -> str:
    """What happened to a copied sentence, as the reports label it (:data:`HOW`)."""
    if pair.rule == "synonyms":
        return "words replaced"
    return "same" if pair.p >= 1.0 else "edited"


HOW = {
    "same": "the same words in the same order (punctuation, spacing and script aside)",
    "edited": "most of the words in the same order, some added, dropped or changed",
    "words replaced": "the same sentence with words replaced by synonyms",
}
"""The labels of :func:`pair_how`, each in words."""

COLUMNS = (
    ("p", "the share of the longer sentence found in the other, in order (characters, or words of Latin "
          "script): the longest common subsequence over the length of each, the smaller of the two"),
    ("w", "for a pair decided on its words: the share of words the two sentences share or replace by a synonym, "
          "the smaller of the two; empty when p alone decided"),
    ("how", "what happened to the sentence: " + "; ".join(f"{k}: {v}" for k, v in HOW.items())),
)
"""The columns of a table of sentence pairs (``simdup compare`` and its HTML page), each in words."""


def percent(x: float) -> str:
    return f"{100 * x:.1f}%"


def as_unified(text: str | Unified) -> Unified:
    """A text to show: a :class:`Unified` as it is, a plain string as its own original (what was compared)."""
    if isinstance(text, Unified):
        return text
    starts = np.arange(len(text), dtype=np.int64)
    return Unified(text, text, starts, starts + 1)


def copied_spans(comparison: Comparison, side: Literal["a", "b"]) -> list[Span]:
    """Character spans in the compared (unified) text of ``side`` of its copied passages: each run of units in a
    sentence the matrix marked or in a run both texts share (:func:`simdup_es.multilevel.copied_units`)."""
    found = [(start, stop) for start, stop, _ in passages(copied_units(comparison, side)[0], 0)]
    spans = _stretch_spans(comparison, side, found)
    if spans is None:  # not the units the comparison counted: whole marked sentences, then
        marked = comparison.marked_a if side == "a" else comparison.marked_b
        sentences = comparison.sentences_a if side == "a" else comparison.sentences_b
        return [(s.start, s.end) for s in sentences if s.index in marked]
    return spans


def common_spans(comparison: Comparison, side: Literal["a", "b"], held: Sequence[Held]) -> list[tuple[int, int, int]]:
    """``(start, end, documents)`` of each stretch of common text of a side (in its unified text), the marks around
    its units taken as :func:`copied_spans` takes them, so that no mark of common text is left as a copied passage."""
    spans = _stretch_spans(comparison, side, [(h.start, h.stop) for h in held])
    if spans is None:
        return held_spans(comparison, side, held)
    return [(a, b, h.documents) for (a, b), h in zip(spans, held, strict=True)]


def _stretch_spans(comparison: Comparison, side: Literal["a", "b"], found: Sequence[Span]) -> list[Span] | None:
    """Character spans of stretches ``(start, stop)`` of a side's units, with the marks that belong to them;
    ``None`` when the side's sentences do not hold the units the comparison counted."""
    sentences = comparison.sentences_a if side == "a" else comparison.sentences_b
    counts = comparison.unit_counts(side)
    # Only the sentences where a passage starts or ends are looked into (a 5 MB text has 100,000 of them).
    ends = np.cumsum(counts)
    units: dict[int, list[Span]] = {}

    def unit(k: int) -> tuple[Span, int, bool] | None:
        """Unit ``k``'s span, its sentence, and whether it is the sentence's last unit."""
        i = int(np.searchsorted(ends, k, side="right"))
        if i not in units:
            units[i] = [(sentences[i].start + a, sentences[i].start + b) for a, b in unit_spans(sentences[i].text)]
        spans = units[i]
        if len(spans) != counts[i]:
            return None
        at = k - int(ends[i]) + len(spans)
        return spans[at], i, at == len(spans) - 1

    out = []
    for start, stop in found:
        first, last = unit(start), unit(stop - 1)
        if first is None or last is None:
            return None
        end = _trail(sentences[last[1]], last[0][1], last[2])
        start = _lead(sentences[first[1]], first[0][0], end)
        out.append((start, _closed(sentences[last[1]], start, end)))
    return out


def _closed(sentence: Sentence, start: int, end: int) -> int:
    """``end``, or past the closing quotation mark that follows it when the passage holds the opening one."""
    text, origin = sentence.text, sentence.start
    if end - origin < len(text) and (close := text[end - origin]) in _QUOTE_PAIRS.values():
        opening = next(o for o, c in _QUOTE_PAIRS.items() if c == close)
        if text[max(0, start - origin) : end - origin].count(opening) > text[max(0, start - origin) : end - origin].count(close):
            return end + 1
    return end


def _lead(sentence: Sentence, at: int, end: int) -> int:
    """Where a passage whose first unit starts at ``at`` (and that ends at ``end``) starts: with the marks that lead
    a word (the ``/`` of ``/var``, the ``[`` of ``[1]``), which belong to the copied text though they are no unit,
    and an opening quotation mark whose closing one the passage holds (「导航」栏: the copied text quotes a term)."""
    text, origin = sentence.text, sentence.start
    while at > origin and text[at - 1 - origin] in _LEADERS:
        at -= 1
    if at > origin and (close := _QUOTE_PAIRS.get(text[at - 1 - origin])) and close in text[at - origin : end - origin]:
        at -= 1
    return at


def _trail(sentence: Sentence, at: int, last: bool) -> int:
    """Where a passage whose last unit ends at ``at`` ends: with the marks that close a word (``]``, ``)``) and,
    after the sentence's ``last`` unit, the stop that closes the sentence (。 or ")"), copied with it though not a
    unit; not a closing quotation mark, which a quoting text adds."""
    stop = sentence.start + len(sentence.text)
    marks = _TRAILERS | _CLOSERS if last else _TRAILERS
    while at < stop and sentence.text[at - sentence.start] in marks:
        at += 1
    return at


_LEADERS = frozenset("/\\[(（【《〈<{#$@~.-")
_TRAILERS = frozenset("/\\])）】》〉>}%")
_CLOSERS = frozenset("。．.！!？?；;…)）]］")
_QUOTE_PAIRS = {"「": "」", "『": "』", "“": "”", "‘": "’"}


def original_spans(shown: Unified, spans: Sequence[Span]) -> list[Span]:
    """Spans of the compared (unified) text as spans of the original, overlapping ones joined."""
    out: list[Span] = []
    for s, e in sorted(shown.spans(spans)):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def spans_dict(spans: Sequence[Span]) -> list[dict[str, int]]:
    """JSON form of spans: ``[{"start": s, "end": e}, ...]``."""
    return [{"start": s, "end": e} for s, e in spans]


def verdict_json(verdict: Verdict, shown_a: Unified, shown_b: Unified, *, lazy: bool = False) -> dict[str, Any]:
    """``simdup compare --json``: the verdict, its comparison in the texts as given, and the copied spans.

    The matrix compares the unified texts; a reader and a program pointing into the
    texts they sent need the sentences, pairs and cores in those texts' own characters
    and offsets, as :func:`original_spans` gives the copied passages. With ``lazy``, the
    comparison's ``pairs``, ``sentences_a`` and ``sentences_b`` are iterators that make
    each item when it is read (``simdup serve`` writes them out as it goes): as lists of
    dicts, those of a long comparison take tens of times the memory of its texts.
    """
    comparison = verdict.comparison
    out = _verdict_head(verdict)
    d = dict(out["comparison"])
    sides: tuple[tuple[Literal["a", "b"], Unified], ...] = (("a", shown_a), ("b", shown_b))
    for side, shown in sides:
        core = comparison.core_a if side == "a" else comparison.core_b
        if core is not None:
            d[f"core_{side}"] = {"sentences": list(core), "chars": list(shown.span(*comparison.core_offsets(side) or ()))}
    items = {"pairs": (_pair_as_given(p, shown_a, shown_b) for p in comparison.pairs),
             "sentences_a": _sentences_as_given(comparison.sentences_a, shown_a),
             "sentences_b": _sentences_as_given(comparison.sentences_b, shown_b)}
    d.update(items if lazy else {name: list(made) for name, made in items.items()})
    spans = {"a": spans_dict(original_spans(shown_a, copied_spans(comparison, "a"))),
             "b": spans_dict(original_spans(shown_b, copied_spans(comparison, "b")))}
    return {**out, "comparison": d, "spans": spans}


def _verdict_head(verdict: Verdict) -> dict[str, Any]:
    """:meth:`Verdict.to_dict` without the items of the comparison's lists (left empty) and without its cores."""
    light = replace(verdict.comparison, pairs=(), sentences_a=(), sentences_b=(), core_a=None, core_b=None)
    return {**verdict.summary_dict(), "comparison": light.to_dict()}


def _sentences_as_given(sentences: Sequence[Sentence], shown: Unified) -> Iterator[dict[str, Any]]:
    for s in sentences:
        yield {**sentence_dict(s), **_as_given(shown, s.start, s.end)}


def _pair_as_given(p: SentencePair, shown_a: Unified, shown_b: Unified) -> dict[str, Any]:
    return {**pair_dict(p), "a": list(shown_a.span(p.a_start, p.a_end)), "b": list(shown_b.span(p.b_start, p.b_end))}


def _as_given(shown: Unified, start: int, end: int) -> dict[str, Any]:
    s, e = shown.span(start, end)
    return {"start": s, "end": e, "text": shown.original[s:e]}


def matches_json(found: Copies, spans: bool = True, mapped: Callable[[str], Unified] = unify_mapped
                 ) -> list[dict[str, Any]]:
    """The hits of a search as ``simdup search --json`` prints them (and ``simdup serve`` answers them): each
    match's figures, the stored title, the marked sentence pairs, and the copied ``spans`` on both sides in
    original characters. ``mapped`` maps a stored text (from a cache, as a service keeps them)."""
    # Without ``spans`` ("spans": null) nothing is mapped: the maps cost about half of what the search does.
    docs, text = found.docs, found.text
    query = None
    if spans and any(m.comparison is not None for m in found):
        # A stored text searched again (a document's own copies, asked for by id or as a file) is mapped as
        # the stored texts are; any other query is mapped for this search alone.
        if text is not None and any(doc.text == text for doc in docs.values()):
            query = mapped(text)
        else:
            query = unify_mapped(text or "", found.unified)
    out = []
    for m in found:
        doc, c = docs.get(m.id), m.comparison
        both: dict[str, list[dict[str, int]]] | None = None
        if c is not None and query is not None and doc is not None and doc.text:
            shown = query if doc.text == query.original else mapped(doc.text)  # its own stored copy
            both = {"query": spans_dict(original_spans(query, copied_spans(c, "a"))),
                     "match": spans_dict(original_spans(shown, copied_spans(c, "b")))}
        out.append({**m.to_dict(), "title": doc.title if doc else None,
                    "pairs": [[p.i, p.j] for p in c.pairs] if c else None, "spans": both})
    return out
