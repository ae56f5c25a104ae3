"""The similarity report: one document against the store, in the user's own characters."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from simdup_es.cli import main
from simdup_es.errors import ConfigError, NotFound
from simdup_es.report import Exclusions, SimilarityReport, render_report_html
from simdup_es.store.local import LocalStore
from tests._report_docs import QUOTED, RECORDS, SOURCES, composed, lines, make_store, report_of, passage, traditional

DOC3 = composed(SOURCES[:3], quote=True)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    # "self" is DOC3 itself, stored: its own copy, to be left out.
    local = make_store(tmp_path_factory.mktemp("report") / "store", extra={"self": DOC3})
    yield local
    local.close()


def _ink(text: str) -> int:
    return sum(not c.isspace() for c in text)


def _check_passages(report: SimilarityReport, text: str) -> None:
    """Passages in order, apart, inside the text; each is text its source holds; the headline share is theirs."""
    assert report.document.original == text
    ends = 0
    for start, end, k in sorted(report.passages + report.citations):
        assert ends <= start < end <= len(text)
        ends = end
        source = report.sources[k]
        assert any(s <= start and end <= e for s, e in source.spans)
    copied = sum(_ink(text[s:e]) for s, e, _ in report.passages + report.citations)
    assert report.share == pytest.approx(copied / _ink(text))


def test_three_sources_each_with_its_colour_and_shares(store: LocalStore) -> None:
    report = report_of(store, DOC3)
    assert {s.id for s in report.sources} == {*SOURCES[:3], QUOTED}
    assert len({s.colour for s in report.sources}) == len(report.sources)
    assert [s.share_of_document for s in report.sources] == sorted((s.share_of_document for s in report.sources),
                                                                    reverse=True)
    _check_passages(report, DOC3)
    for source in report.sources:
        stored = RECORDS[source.id]["text"]
        # What is marked copied in the document is text of that source, character for character.
        for start, end in source.spans:
            assert DOC3[start:end] in stored
        # On the source's side, the lines the document copied are marked (with any short heading the
        # comparison joined to them as one sentence).
        if source.id != QUOTED:
            at = stored.index(passage(source.id))
            assert any(s <= at + 2 and at + len(passage(source.id)) - 2 <= e for s, e in source.source_spans)
        assert 0 < source.share_of_document < 1 and 0 < source.share_of_source <= 1
        assert source.kind in ("partial", "near-duplicate")
    # Every copied line is marked, nearly whole (at most a few characters of punctuation at its ends unmarked).
    marked = "".join(DOC3[s:e] for s, e, _ in report.passages)
    for source in SOURCES[:3]:
        for line in passage(source).splitlines():
            assert _ink(line) - sum(_ink(x) for x in re.findall(r"[^\s]", line) if x in marked) <= 3
    assert report.headline == f"{100 * report.share:.0f}% of this document is copied, from 4 sources"
    # The document's own stored copy (the same text) is left out, and said to be.
    assert "self" not in {s.id for s in report.sources}
    assert [i for i, _ in report.left_out] == ["self"]


def test_a_text_leaves_out_one_stored_copy_of_itself_and_reports_the_others_within_the_limit(tmp_path: Path) -> None:
    """Two stored documents hold the very text: one is its own stored copy, the other an exact copy; the limit
    counts sources, not the copy left out."""
    with make_store(tmp_path / "store", extra={"self": DOC3, "twin": DOC3}) as twins:
        report = report_of(twins, DOC3)
        assert [i for i, _ in report.left_out] == ["self"] and "twin" in {s.id for s in report.sources}
        one = report_of(twins, DOC3, limit=1)
        assert len(one.sources) == 1 and one.more >= 4 and [i for i, _ in one.left_out] == ["self"]
        by_id = report_of(twins, doc_id="twin", limit=1)
        assert [s.id for s in by_id.sources] == ["self"] and [i for i, _ in by_id.left_out] == ["twin"]


def test_quotations_excluded_are_not_marked(store: LocalStore) -> None:
    report = report_of(store, DOC3, exclusions=Exclusions(quotations=True))
    quote_start = DOC3.index("书中写道：「") + 5
    quote_end = DOC3.index("」", quote_start) + 1
    assert (quote_start, quote_end, "quotation") in report.excluded
    assert all(e <= quote_start or s >= quote_end for s, e, _ in report.passages)
    assert QUOTED not in {s.id for s in report.sources}
    assert (QUOTED, "all it shares with this document is excluded") in report.left_out
    assert any("Quotations" in line for line in report.exclusions.in_words())
    _check_passages(report, DOC3)


def test_references_section_and_short_matches_excluded(store: LocalStore) -> None:
    text = composed(SOURCES[:1]) + "\n\n## 参考文献\n" + passage(SOURCES[1])
    with_refs = report_of(store, text)
    assert SOURCES[1] in {s.id for s in with_refs.sources}
    report = report_of(store, text, exclusions=Exclusions(references=True))
    heading = text.index("## 参考文献")
    assert report.excluded == ((heading, len(text), "references"),)
    ids = {s.id for s in report.sources}
    assert SOURCES[0] in ids and SOURCES[1] not in ids  # ("self" shares the own lines and the first source's)
    assert all(e <= heading for _, e, _ in report.passages)
    # Passages shorter than the minimum do not count: the shorter ones go, the longer stay.
    lengths = sorted(_ink(text[s:e]) for src in with_refs.sources for s, e in src.spans)
    assert lengths[0] < lengths[-1]
    cut = report_of(store, text, exclusions=Exclusions(min_chars=lengths[0] + 1))
    kept = sorted(_ink(text[s:e]) for src in cut.sources for s, e in src.spans)
    assert kept and all(n > lengths[0] for n in kept) and cut.share < with_refs.share
    none = report_of(store, text, exclusions=Exclusions(min_chars=lengths[-1] + 1))
    excluded = [i for i, why in none.left_out if why == "all it shares with this document is excluded"]
    assert not none.sources and none.share == 0 and {SOURCES[0], SOURCES[1]} <= set(excluded)
    assert none.headline == f"No copied text counts: {len(excluded)} sources share only excluded text."
    with pytest.raises(ConfigError, match="min_chars"):
        Exclusions(min_chars=-1)


def test_own_copy_by_id_left_out_unless_asked(store: LocalStore) -> None:
    by_id = report_of(store, doc_id="self")
    assert by_id.document.original == DOC3 and "self" not in {s.id for s in by_id.sources}
    assert ("self", "this document's own stored copy") in by_id.left_out
    with_self = report_of(store, DOC3, include_self=True)
    self_source = next(s for s in with_self.sources if s.id == "self")
    assert self_source.kind == "near-duplicate" and self_source.share_of_document > 0.9
    with pytest.raises(NotFound, match="no document with id 'no such id'"):
        report_of(store, doc_id="no such id")
    with pytest.raises(ConfigError):
        report_of(store)


def test_a_traditional_document_is_shown_in_traditional(store: LocalStore) -> None:
    text = traditional(composed(SOURCES[:2]))
    assert text != composed(SOURCES[:2])
    report = report_of(store, text)
    assert {s.id for s in report.sources} == {*SOURCES[:2], "self"}  # "self" holds the same lines
    _check_passages(report, text)
    for source in [s for s in report.sources if s.id != "self"]:
        for start, end in source.spans:
            assert text[start:end] in traditional(RECORDS[source.id]["text"])  # the Traditional characters


def test_to_dict_is_json_with_offsets_into_the_document(store: LocalStore) -> None:
    report = report_of(store, DOC3, exclusions=Exclusions(quotations=True, min_chars=5))
    data = json.loads(json.dumps(report.to_dict(), ensure_ascii=False))
    assert data["share"] == round(report.share, 4) and data["headline"] == report.headline
    assert [s["id"] for s in data["sources"]] == [s.id for s in report.sources]
    for p in data["passages"]:
        assert DOC3[p["start"] : p["end"]] and p["source"] in {s.id for s in report.sources}
    assert data["excluded"][0]["reason"] == "quotation"
    assert any("shorter than 5 characters" in e for e in data["exclusions"])
    assert all("weight" not in line and "_" not in line for line in data["settings"])  # in words, not code names


class _Page(HTMLParser):
    """The text of the document block, the passages (text, source) and the excluded spans' text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.document: list[str] = []
        self.passages: list[list[Any]] = []
        self.excluded: list[str] = []
        self.inside: list[str] = []
        self.external = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if tag in ("script", "img", "link", "iframe") or (attr.get("src")):
            self.external = True
        if attr.get("id") == "document":
            self.depth = 1
            return
        if self.depth:
            self.depth += 1
            assert tag in ("a", "span"), tag
            if tag == "a":
                self.passages.append(["", attr["data-source"]])
            self.inside.append(tag if tag == "a" else "x")

    def handle_endtag(self, tag: str) -> None:
        if self.depth:
            self.depth -= 1
            if self.inside and self.depth:
                self.inside.pop()

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.document.append(data)
            if self.inside and self.inside[-1] == "a":
                self.passages[-1][0] += data
            elif self.inside:
                self.excluded.append(data)


def test_page_shows_the_original_characters_escaped_and_self_contained(store: LocalStore) -> None:
    text = "<b>粗体</b> & " + traditional(composed(SOURCES[:2], quote=True))
    report = report_of(store, text, label="<i>x</i>", exclusions=Exclusions(quotations=True))
    html = render_report_html(report)
    page = _Page()
    page.feed(html)
    assert "".join(page.document) == text  # 0 characters differ
    assert [p[0] for p in page.passages] == [text[s:e] for s, e, _ in report.passages]
    assert [int(p[1]) for p in page.passages] == [k for _, _, k in report.passages]
    assert page.excluded == [text[s:e] for s, e, _ in report.excluded]
    assert "<b>粗体" not in html and "&lt;b&gt;" in html and "&lt;i&gt;x&lt;/i&gt;" in html
    assert not page.external and not re.search(r"""(?:src|href)\s*=\s*["'](?!#)""", html) and "url(" not in html
    assert report.headline in html
    for k, source in enumerate(report.sources):
        assert f'id="source-{k}"' in html and source.colour in html


def test_cli_report_terminal_json_and_html(store: LocalStore, tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(DOC3, encoding="utf-8")
    runner = CliRunner()
    out = runner.invoke(main, ["report", "--store", str(store.path), "--file", str(doc), "--exclude-quotations", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert {s["id"] for s in data["sources"]} == set(SOURCES[:3])
    assert {"id": "self", "reason": "the same text as this document: its own stored copy"} in data["left_out"]
    html = tmp_path / "r.html"
    out = runner.invoke(main, ["report", "--store", str(store.path), "--id", "self", "--html", str(html),
                               "--min-chars", "3"])
    assert out.exit_code == 0, out.output
    assert "of this document is copied, from 4 sources" in out.stdout
    assert lines(SOURCES[0])[1][:10] in out.stdout
    assert html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    out = runner.invoke(main, ["report", "--store", str(store.path)])
    assert out.exit_code == 2 and "exactly one of QUERY, --text, --file or --id" in out.output


def test_search_and_compare_json_point_into_the_original_text(store: LocalStore, tmp_path: Path) -> None:
    text = traditional(composed(SOURCES[:2]))
    doc = tmp_path / "doc.txt"
    doc.write_text(text, encoding="utf-8")
    runner = CliRunner()
    out = runner.invoke(main, ["search", "--store", str(store.path), "--file", str(doc), "--json"])
    assert out.exit_code == 0, out.output
    hits = {h["id"]: h for h in map(json.loads, out.stdout.splitlines())}
    for source in SOURCES[:2]:
        spans = hits[source]["spans"]
        stored = RECORDS[source]["text"]
        assert spans["query"] and spans["match"]
        for span in spans["query"]:  # Traditional characters of the query, copied from the source
            assert text[span["start"] : span["end"]] in traditional(stored)
        for span in spans["match"]:
            assert stored[span["start"] : span["end"]].strip()
        assert passage(source).splitlines()[0][:20] in "".join(stored[s["start"] : s["end"]] for s in spans["match"])
    other = tmp_path / "source.txt"
    other.write_text(RECORDS[SOURCES[1]]["text"], encoding="utf-8")
    out = runner.invoke(main, ["compare", str(doc), str(other), "--json"])
    assert out.exit_code == 0, out.output
    spans = json.loads(out.stdout)["spans"]
    assert spans["a"] and all(text[s["start"] : s["end"]] in traditional(RECORDS[SOURCES[1]]["text"]) for s in spans["a"])
    out = runner.invoke(main, ["compare", str(doc), str(other)])
    assert "車鄰鄰" in out.stdout and "车邻邻" in out.stdout  # each side as given: Traditional and Simplified
