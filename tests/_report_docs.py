"""A store of sample documents and a document copied from three of them, for the report's tests and benchmark."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

from simdup_es import default_fingerprinter
from simdup_es.parts import PartPrinter
from simdup_es.store.base import StoredDoc
from simdup_es.store.local import LocalStore

SAMPLE = importlib.resources.files("simdup_es.data") / "sample.jsonl"
RECORDS = {r["id"]: r for r in map(json.loads, SAMPLE.read_text(encoding="utf-8").splitlines())}

SOURCES = ("zh-lo:shared/main0213#0", "zh-debref:pr01#2", "zh-faq:pkg-basics#7", "zh-classic:shijing#125",
           "zh-man-page:man1/systemd-delta.1", "zh-lo:simpress/02/10090000#0", "zh-man:man7/create_user.7#1")
"""Stored: the sources and a few others, none of which the composed document's own text comes from."""
OWN = ("zh-man:man1/hostname.1#0", "zh-install:ch02s01#3", "zh-maint:modify#2")
"""Sample documents not stored: the composed document's own text."""


def lines(doc_id: str) -> list[str]:
    return [line for line in RECORDS[doc_id]["text"].splitlines() if line.strip()]


def composed(sources: tuple[str, ...] = SOURCES[:3], quoted: str | None = SOURCES[3]) -> str:
    """Own paragraphs with, between them, three lines of each of ``sources`` and, if given, three lines of
    ``quoted`` in 「」."""
    own = [lines(i) for i in OWN]
    parts: list[str] = []
    for k, source in enumerate(sources):
        parts += own[k % len(own)][k * 2 : k * 2 + 2]
        parts += lines(source)[1:4]
    if quoted is not None:
        parts.append("书中写道：「" + "".join(lines(quoted)[1:4]) + "」")
    parts += own[0][-2:]
    return "\n".join(parts)


def make_store(path: Path, ids: tuple[str, ...] = SOURCES) -> LocalStore:
    """An embedded store holding these sample documents (text kept)."""
    printer = PartPrinter(default_fingerprinter())
    store = LocalStore(path)
    store.setup()
    for doc_id in ids:
        r = RECORDS[doc_id]
        fp = printer.fingerprinter.fingerprint(r["text"], r.get("title"))
        store.put([StoredDoc(doc_id, fp.value, fp.version, r["text"], r.get("title"), levels=printer.levels(r["text"]))])
    store.refresh()
    return store
