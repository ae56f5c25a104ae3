"""A store of sample documents and documents copied from them, for the report's tests and screenshot."""

from __future__ import annotations

import importlib.resources
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simdup_es import default_fingerprinter
from simdup_es.markup import Layout
from simdup_es.parts import PartPrinter
from simdup_es.report import SimilarityReport
from simdup_es.service import Query, Service
from simdup_es.store.base import StoredDoc
from simdup_es.store.local import LocalStore
from simdup_es.text import converter

SAMPLE = importlib.resources.files("simdup_es.data") / "sample.jsonl"
RECORDS = {r["id"]: r for r in map(json.loads, SAMPLE.read_text(encoding="utf-8").splitlines())}

SOURCES = ("zh-man:man7/create_user.7#1", "zh-classic:shijing#125", "zh-lo:shared/main0213#0", "zh-faq:pkg-basics#7",
           "zh-man-page:man1/systemd-delta.1", "zh-lo:simpress/02/10090000#0", "zh-debref:pr01#2")
"""Stored: the sources and a few others, none of which the composed documents' own text comes from."""
OWN = ("zh-man:man1/hostname.1#0", "zh-install:ch02s01#3", "zh-maint:modify#2")
"""Sample documents not stored: the composed documents' own text."""
QUOTED = "zh-faq:pkg-basics#7"
"""The source a composed document quotes (in 「」), when it quotes one."""


def lines(doc_id: str) -> list[str]:
    return [line for line in RECORDS[doc_id]["text"].splitlines() if line.strip()]


def passage(doc_id: str) -> str:
    """What a composed document copies of a source: lines 2 to 4."""
    return "\n".join(lines(doc_id)[1:4])


def composed(sources: tuple[str, ...] = SOURCES[:2], quote: bool = False) -> str:
    """Own lines with, between them, :func:`passage` of each source and, with ``quote``, one line of
    :data:`QUOTED` in 「」."""
    own = [lines(i) for i in OWN]
    parts: list[str] = []
    for k, source in enumerate(sources):
        parts += own[k % len(own)][k * 2 : k * 2 + 2]
        parts.append(passage(source))
    if quote:
        parts.append("书中写道：「" + lines(QUOTED)[1] + "」")
    parts += own[0][-2:]
    return "\n".join(parts)


def traditional(text: str) -> str:
    """``text`` in Traditional characters, Taiwan wording (OpenCC s2twp)."""
    return str(converter("s2twp").convert(text))


def make_store(path: Path, ids: tuple[str, ...] = SOURCES, extra: dict[str, str] | None = None,
               meta: dict[str, tuple[tuple[str, str], ...]] | None = None) -> LocalStore:
    """An embedded store holding these sample documents (text kept), and ``extra`` texts by id; ``meta`` by id."""
    printer = PartPrinter(default_fingerprinter())
    store = LocalStore(path)
    store.setup()
    docs = [(i, RECORDS[i]["text"], RECORDS[i].get("title")) for i in ids]
    docs += [(i, text, None) for i, text in (extra or {}).items()]
    for doc_id, text, title in docs:
        fp = printer.fingerprinter.fingerprint(text, title)
        store.put([StoredDoc(doc_id, fp.value, fp.version, text, title, levels=printer.levels(text),
                             meta=(meta or {}).get(doc_id, ()))])
    store.refresh()
    return store


def report_of(store: LocalStore, text: str | None = None, *, doc_id: str | None = None, label: str | None = None,
              layout: Layout | None = None, **options: Any) -> SimilarityReport:
    """The similarity report of a text or a stored document (with its id: its own stored copy), as ``simdup report``
    makes it (:meth:`Service.report`)."""
    return Service(store).report(Query(doc_id, text, label=label, layout=layout), **options)


LONG = "zh-man-page:man1/systemd-delta.1"
"""A stored source longer than a quotation from it by far: the mosaic quotes one of its sentences."""


@dataclass(frozen=True)
class Mosaic:
    """A document of two chapters: own sentences, whole lines of three sources, and a quotation of :data:`LONG`;
    where each was put, for counts made apart from the report."""

    text: str
    planted: dict[str, list[tuple[int, int]]]
    quote: tuple[int, int]
    chapters: list[tuple[int, int]]


def _own_lines() -> list[str]:
    """Sentences of the documents not stored, found in no stored document."""
    stored = [RECORDS[i]["text"] for i in SOURCES]
    return [line for i in OWN for line in lines(i)
            if len(line) > 20 and line.endswith("。") and not any(line[:12] in t for t in stored)]


def mosaic(sources: tuple[str, ...] = SOURCES[:3]) -> Mosaic:
    """The document: a chapter heading, then for each source an own sentence and two of its lines (the second
    chapter from the third source on), then a sentence quoting :data:`LONG` in 「」, then an own sentence."""
    own = iter(_own_lines())
    out: list[str] = []
    planted: dict[str, list[tuple[int, int]]] = {}

    def add(line: str) -> tuple[int, int]:
        start = sum(len(x) + 1 for x in out)
        out.append(line)
        return start, start + len(line)

    chapters = [add("第一章 引言")[0]]
    for k, source in enumerate(sources):
        if k == 2:
            chapters.append(add("第二章 方法")[0])
        add(next(own))
        for line in lines(source)[1:3]:
            planted.setdefault(source, []).append(add(line))
    quoted = next(line for line in lines(LONG) if sum("\u4e00" <= c <= "\u9fff" for c in line) > 25)
    quoted = quoted[: quoted.index("。") + 1] if "。" in quoted[:60] else quoted[:40]
    start, _ = add("正如手册所说：「" + quoted + "」这一点很重要。")
    add(next(own))
    text = "\n".join(out)
    return Mosaic(text, planted, (start + 8, start + 8 + len(quoted)), list(zip(chapters, [*chapters[1:], len(text)])))


def ink(text: str) -> int:
    """Characters that are not white space: counted here with str.isspace, apart from the report's tables."""
    return sum(not c.isspace() for c in text)


def expected(m: Mosaic, without: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The figures the mosaic must give, from where its lines were put."""
    by_source = {s: sum(ink(m.text[a:b]) for a, b in spans) for s, spans in m.planted.items() if s not in without}
    cited = ink(m.text[m.quote[0] : m.quote[1]])
    by_source[LONG] = cited
    copied = sum(by_source.values())
    total = ink(m.text)
    chapters = []
    for a, b in m.chapters:
        inside = [(max(a, s), min(b, e)) for spans in (sp for k, sp in m.planted.items() if k not in without)
                  for s, e in spans if s < b and e > a] + ([m.quote] if a <= m.quote[0] < b else [])
        chapters.append((ink(m.text[a:b]), sum(ink(m.text[s:e]) for s, e in inside)))
    return {"total": total, "copied": copied, "cited": cited, "by_source": by_source,
            "largest": max(by_source.values()), "largest_source": max(by_source, key=lambda k: by_source[k]),
            "chapters": chapters}
