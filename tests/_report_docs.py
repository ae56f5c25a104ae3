"""A store of sample documents and documents copied from them, for the report's tests and screenshot."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

from typing import Any

from simdup_es import default_fingerprinter
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


def make_store(path: Path, ids: tuple[str, ...] = SOURCES, extra: dict[str, str] | None = None) -> LocalStore:
    """An embedded store holding these sample documents (text kept), and ``extra`` texts by id."""
    printer = PartPrinter(default_fingerprinter())
    store = LocalStore(path)
    store.setup()
    docs = [(i, RECORDS[i]["text"], RECORDS[i].get("title")) for i in ids]
    docs += [(i, text, None) for i, text in (extra or {}).items()]
    for doc_id, text, title in docs:
        fp = printer.fingerprinter.fingerprint(text, title)
        store.put([StoredDoc(doc_id, fp.value, fp.version, text, title, levels=printer.levels(text))])
    store.refresh()
    return store


def report_of(store: LocalStore, text: str | None = None, *, doc_id: str | None = None, label: str | None = None,
              **options: Any) -> SimilarityReport:
    """The similarity report of a text or a stored document (with its id: its own stored copy), as ``simdup report``
    makes it (:meth:`Service.report`)."""
    return Service(store).report(Query(doc_id, text, label=label), **options)
