"""The report's figures against counts made apart from it: a mosaic of known lines of three sources and a
quotation of a fourth, each put at a known place; sources excluded, one text stored twice, names and Markdown."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import simdup_es.common as common_module
import simdup_es.report.figures as figures_module

from simdup_es.cli import main
from simdup_es.multilevel import MultiParams
from simdup_es.report import SimilarityReport, find_quoted, render_report_html
from simdup_es.report.quotes import PER_QUOTATION
from simdup_es.search import find_copies
from simdup_es.service import Service
from simdup_es.sources import Fields, Record, read_file
from tests._report_docs import LONG, RECORDS, SOURCES, expected, ink, lines, make_store, mosaic, report_of

MOSAIC = mosaic()
LONG_ONLY = MultiParams(passage_units=200, short_units=200)
# The first source once more, with ASCII punctuation: one text, stored twice.
ASCII_COPY = RECORDS[SOURCES[0]]["text"].translate(str.maketrans("，。：；（）！？", ",.:;()!?"))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    local = make_store(tmp_path_factory.mktemp("figures") / "store", extra={"ascii-copy": ASCII_COPY})
    yield local
    local.close()


def check(report: SimilarityReport, want: dict[str, Any]) -> None:
    f = report.figures
    assert (f.chars, f.copied, f.cited) == (want["total"], want["copied"], want["cited"])
    assert f.copied_without_quotations == want["copied"] - want["cited"]
    assert (f.largest, f.largest_source) == (want["largest"], want["largest_source"])
    assert f.share == pytest.approx(want["copied"] / want["total"]) and report.share == f.share
    assert f.share_without_quotations == pytest.approx((want["copied"] - want["cited"]) / want["total"])
    assert {s.id: s.chars for s in report.sources} == want["by_source"]
    for s in report.sources:
        assert s.share_of_document == pytest.approx(s.chars / want["total"])
        assert s.source_chars == sum(ink(s.text.original[a:b]) for a, b in s.source_spans)
        assert s.source_total == ink(s.text.original)
    assert [(x.chars, x.copied) for x in report.sections] == want["chapters"]
    assert [x.title for x in report.sections] == ["第一章 引言", "第二章 方法"]


def test_every_figure_matches_counts_made_apart(store: Any) -> None:
    report = report_of(store, MOSAIC.text)
    check(report, expected(MOSAIC))
    # The stored copy with ASCII punctuation is the same text: one source, naming the other.
    first = next(s for s in report.sources if s.id in (SOURCES[0], "ascii-copy"))
    assert {first.id, *first.also_in} == {SOURCES[0], "ascii-copy"}
    assert len({s.colour for s in report.sources}) == len(report.sources) == 4
    data = json.loads(json.dumps(report.to_dict()))
    want = expected(MOSAIC)
    assert data["figures"]["copied"] == want["copied"] and data["figures"]["cited"] == want["cited"]
    assert [x["copied"] for x in data["sections"]] == [c for _, c in want["chapters"]]
    assert {s["id"]: s["chars"] for s in data["sources"]} == want["by_source"]


def test_a_quotation_from_a_long_source_is_cited_and_named(store: Any) -> None:
    report = report_of(store, MOSAIC.text)
    [cited] = [s for s in report.sources if s.id == LONG]
    # The quoted sentence is copied text few stored documents hold: the search finds its source, and it is cited.
    assert cited.kind == "partial" and cited.cited == (MOSAIC.quote,)
    assert [(a, b) for a, b, k in report.citations] == [MOSAIC.quote]
    assert all(report.sources[k].id == LONG for _, _, k in report.citations)
    quoted = MOSAIC.text[MOSAIC.quote[0] : MOSAIC.quote[1]]
    assert any(quoted in cited.text.original[a:b] for a, b in cited.source_spans)
    page = render_report_html(report)
    assert f'class="cited" data-source="{report.sources.index(cited)}" data-cite=' in page
    # The whole document's search finds it; with long passages alone it does not (then the quotation's own lookup).
    assert LONG in {m.id for m in find_copies(store, MOSAIC.text)}
    assert LONG not in {m.id for m in find_copies(store, MOSAIC.text, params=LONG_ONLY)}


def test_a_quotation_is_cited_when_the_document_is_stored_too(tmp_path: Path) -> None:
    """Its own stored copy, left out, holds every quotation: they are looked up all the same."""
    local = make_store(tmp_path / "s", extra={"mine": MOSAIC.text})
    try:
        report = report_of(local, MOSAIC.text)
    finally:
        local.close()
    assert ("mine", "the same text as this document: its own stored copy") in report.left_out
    assert [(a, b, report.sources[k].id) for a, b, k in report.citations] == [(*MOSAIC.quote, LONG)]


def test_an_excluded_source_is_gone_from_every_figure(store: Any) -> None:
    gone = SOURCES[1]
    report = report_of(store, MOSAIC.text, exclude_sources=[gone])
    assert gone not in {s.id for s in report.sources} and (gone, "excluded on request") in report.left_out
    check(report, expected(MOSAIC, frozenset({gone})))


def test_a_source_without_a_title_is_named_by_its_file_name_or_first_line(tmp_path: Path) -> None:
    first, second = (RECORDS[i]["text"] for i in SOURCES[:2])
    local = make_store(tmp_path / "s", ids=(), extra={"docs/notes.txt": first, "untitled": "第一行\n" + second})
    try:
        report = report_of(local, MOSAIC.text)
    finally:
        local.close()
    names = {s.id: (s.name, s.name_from) for s in report.sources}
    assert names == {"docs/notes.txt": ("notes.txt", "file name"), "untitled": ("第一行", "first line")}
    page = render_report_html(report)
    assert "no title: its file name" in page


def test_url_author_and_date_of_a_source_are_shown(tmp_path: Path) -> None:
    meta = (("url", "https://example.org/a?b=1&c=2"), ("author", "张三"), ("date", "2023-04-05"))
    local = make_store(tmp_path / "s", ids=SOURCES[:1], meta={SOURCES[0]: meta})
    try:
        report = report_of(local, MOSAIC.text)
    finally:
        local.close()
    [source] = report.sources
    assert source.meta == meta and report.to_dict()["sources"][0]["author"] == "张三"
    page = render_report_html(report, source_link="/report/{id}")
    assert 'href="https://example.org/a?b=1&amp;c=2"' in page and "张三" in page and "2023-04-05" in page
    assert f'href="/report/{SOURCES[0].replace(":", "%3A").replace("/", "%2F").replace("#", "%23")}"' in page


def test_a_markdown_document_points_into_the_file_as_written(store: Any, tmp_path: Path) -> None:
    body = MOSAIC.text.replace("第一章 引言", "# 第一章 引言").replace("第二章 方法", "# 第二章 方法")
    body = body.replace("正如手册所说", "正如**手册**所说")
    path = tmp_path / "mosaic.md"
    path.write_text(body, encoding="utf-8")
    [record] = list(read_file(path, Fields()))
    assert isinstance(record, Record) and record.layout is not None and "#" not in record.text
    report = report_of(store, record.text, layout=record.layout)
    assert [x.title for x in report.sections] == ["第一章 引言", "第二章 方法"]
    data = report.to_dict()
    for p in data["passages"] + data["citations"]:
        a, b = p["in_file"]
        # The file's stretch is the shown stretch with its markup: the same characters, in order, and no others.
        shown = record.text[p["start"] : p["end"]]
        assert re.sub(r"[*#\s]", "", body[a:b]) == re.sub(r"\s", "", shown)
    assert data["figures"]["cited"] == ink(MOSAIC.text[MOSAIC.quote[0] : MOSAIC.quote[1]])


def test_the_side_by_side_marks_what_the_document_view_marks(store: Any) -> None:
    report = report_of(store, MOSAIC.text)
    page = render_report_html(report)
    for k, source in enumerate(report.sources):
        view = page[page.index(f'id="s{k}-text-a"') : page.index(f'id="s{k}-text-b"')]
        marked = "".join(re.findall(r'<span class="copied"[^>]*>(.*?)</span>', view))
        mine = "".join(MOSAIC.text[a:b] for a, b in source.spans)
        assert re.sub(r"<[^>]+>|\s", "", marked) == re.sub(r"\s", "", mine).replace("&", "&amp;")


def test_cli_figures_sections_and_excluded_source(store: Any, tmp_path: Path) -> None:
    doc = tmp_path / "mosaic.txt"
    doc.write_text(MOSAIC.text, encoding="utf-8")
    runner = CliRunner()
    got = runner.invoke(main, ["report", str(doc), "--store", str(store.path), "--json", "--exclude-source", SOURCES[1]])
    assert got.exit_code == 0, got.output
    data = json.loads(got.output[got.output.index("{"):])
    want = expected(MOSAIC, frozenset({SOURCES[1]}))
    assert data["figures"]["copied"] == want["copied"] and SOURCES[1] not in {s["id"] for s in data["sources"]}
    shown = runner.invoke(main, ["report", str(doc), "--store", str(store.path)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert f"{want['total']:,}" in shown.output and "第二章 方法" in shown.output and "cited from" in shown.output
    assert "--exclude-source" in runner.invoke(main, ["report", "--help"]).output
    help_text = runner.invoke(main, ["compare", "--help"]).output
    assert all(re.search(rf"^\s+{c}\s", help_text, re.MULTILINE) for c in ("p", "w", "how"))


class _Counted:
    """A store whose part lookups are counted (everything else as the store answers)."""

    def __init__(self, store: Any) -> None:
        self.store, self.lookups = store, 0

    def part_candidates(self, *args: Any, **kwargs: Any) -> Any:
        self.lookups += 1
        return self.store.part_candidates(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def test_the_quotations_are_looked_up_together_each_cited_from_its_own_source(store: Any) -> None:
    """Two quotations of two long sources: one lookup of the store for both, each found where it is quoted from."""
    second = "zh-debref:pr01#2"
    line = next(x for x in lines(second) if sum("\u4e00" <= c <= "\u9fff" for c in x) > 25)
    quoted = line[: line.index("。") + 1] if "。" in line[:60] else line[:40]
    text = MOSAIC.text + "\n另一本书写道：「" + quoted + "」\n"
    start = text.index(quoted)
    service = Service(store)
    # Searched with long passages alone, so that neither quotation's source is found by the search.
    copies = find_copies(store, text, printer=service.printer, compare=service.comparer, params=LONG_ONLY)
    counted = _Counted(store)
    found = find_quoted(counted, copies, service.comparer, service.printer)
    assert counted.lookups == 1 and found.searched == 2 and set(found.cited) == {LONG, second}
    assert found.cited[second].spans == [(start, start + len(quoted))]
    assert found.cited[LONG].spans == [MOSAIC.quote] and found.compared <= 2 * PER_QUOTATION


def test_runs_ink_and_sections_as_their_plain_forms(monkeypatch: Any) -> None:
    """runs, ink (a piece at a time) and count_sections (read at the bounds) give what plain loops give."""
    import random

    import numpy as np

    from simdup_es.markup import plain_layout, sections
    from simdup_es.report import figures

    rng = random.Random(5)
    monkeypatch.setattr(figures, "_INK_CHARS", 7)  # many pieces
    for _ in range(200):
        text = "".join(rng.choice("的 一\n\t　ab#𠀀") for _ in range(rng.randrange(0, 60)))
        marked = np.array([rng.random() < 0.5 for _ in text], dtype=bool)
        plain, start = [], None
        for i, m in enumerate([*marked.tolist(), False]):
            if m and start is None:
                start = i
            elif not m and start is not None:
                plain.append((start, i))
                start = None
        assert figures.runs(marked) == plain
        inked = figures.ink(text)
        assert inked.tolist() == [not c.isspace() for c in text]
        quoted = np.array([rng.random() < 0.3 for _ in text], dtype=bool)
        layout = plain_layout(text)
        got = figures.count_sections(text, layout, inked, marked, quoted)
        want = [(s, e, int(inked[s:e].sum()), int((marked & inked)[s:e].sum()), int((marked & inked & quoted)[s:e].sum()))
                for s, e, _ in sections(text, layout) if inked[s:e].any()]
        assert [(x.start, x.end, x.chars, x.copied, x.cited) for x in got] == want


@given(st.lists(st.booleans(), max_size=40), st.data(), st.sampled_from([1, 2, 3, 7, 1 << 16]))
def test_counts_before_positions_are_the_sums_before_them(marked: list[bool], data: st.DataObject, block: int) -> None:
    """The running count read at positions in any order (repeated, 0 and the end among them), a block at a time."""
    at = data.draw(st.lists(st.integers(0, len(marked)), max_size=12))
    with mock.patch.object(common_module, "COUNT_BLOCK", block):
        got = common_module.counts_before(np.array(marked, dtype=bool), np.array(at, dtype=np.int64))
    assert got.tolist() == [sum(marked[:p]) for p in at]


@given(st.text(alphabet=" \n\t\u3000ab文字", max_size=400), st.data(), st.sampled_from([1, 5, 40]))
def test_a_sections_first_words_are_those_of_the_whole_section(text: str, data: st.DataObject, room: int) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    words = " ".join(text[start:end].split())
    assert figures_module._first_words(text, start, end, room) == (words if len(words) <= room
                                                                   else words[: room - 1] + "…")
