"""Every document of the project's corpus is shown in its own characters: 0 characters differ.

For each document (the package's sample corpus, and every record of data/*.jsonl when
scripts/fetch-corpus has fetched it: zh and en documents, licences, the zh_CN/zh_TW man
page pairs) the offset map of :func:`simdup_es.offsets.unify_mapped` is checked: the
steps give unify's text; every sentence the comparison matrix sees maps to the stretch
of the original whose unified form holds it (whole, where no phrase conversion spans
the sentence's edge: counted, and nearly all); and what a report shows for it is that
stretch of the original. The sample corpus is also run through the similarity report
itself: its page's text is each document, character for character.

Markdown and PDF too: each document written as a Markdown file (a title heading, its lines as
paragraphs) is read through the parser, and every character of the text it gives is the file's
own character at the offset it maps to (entities, escapes and the line breaks between blocks are
counted apart), and that text maps back as any other; each document hard-wrapped as a PDF's layout
wraps it joins back with no character lost or added and no space between two CJK characters
(the line breaks themselves are joined where unwrap_lines finds the text hard-wrapped).
"""

from __future__ import annotations

import importlib.resources
import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from simdup_es.extract import join_lines
from simdup_es.markup import markdown_text
from simdup_es.offsets import Unified, _stepwise, unify_mapped
from simdup_es.report import render_report_html
from simdup_es.report.html import ELIDE_FROM, pair_view
from simdup_es.search import comparer
from simdup_es.service import Query, Service
from simdup_es.sentences import split_sentences
from simdup_es.text import unify, unify_many
from tests._data import data_dir
from tests._report_docs import make_store
from tests.unit.test_markup import faithful, wrap

SAMPLE = importlib.resources.files("simdup_es.data") / "sample.jsonl"
_FIELDS = ("text", "zh_cn", "zh_tw")


def _texts(lines: Iterator[str]) -> Iterator[str]:
    for line in lines:
        record = json.loads(line)
        yield from (record[f] for f in _FIELDS if isinstance(record.get(f), str))


def corpus() -> list[tuple[str, list[str]]]:
    """(name, texts) of the sample corpus and of every corpus file present."""
    out = [("sample.jsonl", list(_texts(iter(SAMPLE.read_text(encoding="utf-8").splitlines()))))]
    for path in sorted(data_dir().glob("*.jsonl")):
        with open(path, encoding="utf-8") as f:
            out.append((path.name, list(_texts(f))))
    return out


def _check(texts: list[str]) -> tuple[int, int]:
    """Checks the maps of a batch of texts; returns (sentences, sentences only held in a longer stretch)."""
    unified = unify_many(texts)
    sentences = near = 0
    shown_texts: list[str] = []
    expected: list[str] = []
    for text, target in zip(texts, unified):
        got, starts, ends = _stepwise(text)
        assert got == target  # the steps give unify's text: no coarse fallback
        u = Unified(text, got, starts, ends)
        if len(got):
            assert (np.diff(starts) >= 0).all() and (np.diff(ends) >= 0).all() and (starts < ends).all()
        for s in split_sentences(got):
            a, b = u.span(s.start, s.end)
            shown = u.shown(s.start, s.end)
            assert shown == text[a:b]  # what a view shows is the original, character for character
            shown_texts.append(shown)
            expected.append(s.text)
    for shown, sentence in zip(unify_many(shown_texts), expected):
        sentences += 1
        if shown != sentence:
            # A phrase that changed length spans the sentence's edge (…… -> ......): the stretch holds it.
            assert sentence in shown
            near += 1
    return sentences, near


@pytest.mark.parametrize("name,texts", corpus(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_document_maps_back_to_its_own_characters(name: str, texts: list[str]) -> None:
    sentences = near = 0
    for at in range(0, len(texts), 64):
        n, m = _check(texts[at : at + 64])
        sentences += n
        near += m
    assert sentences > 0
    assert near <= max(2, sentences // 1000), f"{near} of {sentences} sentences only inside a longer stretch"


def as_markdown(text: str) -> str:
    """A document as an author would write it in Markdown: a title heading, each line a paragraph."""
    return "# 标题\n\n" + "\n\n".join(text.split("\n"))


@pytest.mark.parametrize("name,texts", corpus(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_document_as_markdown_shows_the_files_own_characters(name: str, texts: list[str]) -> None:
    own = other = 0
    extracted = []
    for text in texts:
        written = as_markdown(text)
        shown, layout, _ = markdown_text(written)
        a, b = faithful(shown, layout)  # 0 characters differ from the file where they are its own
        own, other = own + a, other + b
        extracted.append(shown)
    for at in range(0, len(extracted), 64):
        _check(extracted[at : at + 64])  # and the text maps back from its unified form as any other
    # What stands for markup (entities, escapes, line breaks between blocks) is a sliver of the text.
    assert own > 0 and other <= own // 20, (own, other)


_CJK_SPACE = re.compile(r"[\u4e00-\u9fff] +[\u4e00-\u9fff]")


@pytest.mark.parametrize("name,texts", corpus(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_document_wrapped_as_a_pdf_joins_back_without_a_character_lost(name: str, texts: list[str]) -> None:
    added = left = 0
    for text in texts:
        wrapped = wrap(text)
        joined = join_lines(wrapped)
        assert "".join(joined.split()) == "".join(text.split())  # 0 characters (white space aside) differ
        assert len(_CJK_SPACE.findall(joined)) <= len(_CJK_SPACE.findall(text))  # no 新的生 命
        added += wrapped.count("\n") - text.count("\n")
        left += max(0, joined.count("\n") - text.count("\n"))
    # Breaks of the layout are joined where the text reads hard-wrapped (sentences.unwrap_lines decides: a
    # document of short lines with a few wrapped ones keeps its breaks), never with a space between CJK characters.
    assert added > len(texts) and left < added, (left, added)


class _Text(HTMLParser):
    """The text inside the element with id ``document`` (or ``text-a``/``text-b``), headings left out."""

    def __init__(self, target: str) -> None:
        super().__init__(convert_charrefs=True)
        self.target, self.depth, self.skip, self.out = target, 0, 0, []  # type: ignore[var-annotated]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth:
            self.depth += 1
            self.skip += tag in ("h2", "sup")
        elif dict(attrs).get("id") == self.target:
            self.depth = 1

    def handle_endtag(self, tag: str) -> None:
        if self.depth:
            self.depth -= 1
            self.skip -= tag in ("h2", "sup")

    def handle_data(self, data: str) -> None:
        if self.depth and not self.skip:
            self.out.append(data)


def _text_of(html: str, element_id: str) -> str:
    parser = _Text(element_id)
    parser.feed(html)
    return "".join(parser.out)


def test_every_sample_document_in_its_report_page(tmp_path: Path) -> None:
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    store = make_store(tmp_path / "store", ids=tuple(r["id"] for r in records))
    service = Service(store)
    sources = 0
    try:
        for r in records:
            report = service.report(Query(id=r["id"]))
            page = render_report_html(report)
            assert _text_of(page, "document") == r["text"]  # 0 characters differ
            for start, end, _ in report.passages:
                assert f">{end - start}" and r["text"][start:end] in _text_of(page, "document")
            for k, source in enumerate(report.sources):
                sources += 1
                assert _text_of(page, f"s{k}-text-a") == r["text"]
                assert _text_of(page, f"s{k}-text-b") == source.text.original
                view = pair_view(report.document, source.text, source.comparison)
                assert _text_of(view, "text-b") == source.text.original
    finally:
        store.close()
    assert sources >= 8  # the sample's known copies (edited, converted, pasted) are among them


def test_a_long_side_shows_its_copied_sentences_in_their_own_characters_and_says_what_it_leaves_out() -> None:
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    source = records[5]["text"]
    others = [r["text"] for r in records if r["text"] != source] * 2
    long = "\n".join(others[: len(others) // 2] + [source] + others[len(others) // 2 :])
    assert len(long) > ELIDE_FROM
    view = pair_view(unify_mapped(long), unify_mapped(source), comparer()(unify(long), unify(source)))
    shown = _text_of(view, "text-a")
    pieces = re.split(r"\[… [\d,]+ sentences? not copied from this source …\]", shown)
    assert len(pieces) >= 2 and len(shown) < len(long) / 4
    at = 0
    for piece in pieces:  # what is shown is the document's own characters, in order
        at = long.index(piece, at) + len(piece)
    assert _text_of(view, "text-b") == source  # the short side whole
