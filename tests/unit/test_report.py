"""Terminal and HTML reports (simdup_es.report)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from html.parser import HTMLParser

import pytest
from rich.console import Console

from simdup_es.compare import CompareParams, Comparison, compare
from simdup_es.report import pair_how, render_html, render_terminal, terminal_report
from simdup_es.sentences import UNIT_PATTERN
from simdup_es.thesaurus import cilin_thesaurus
from tests.unit.test_compare import ARTICLE, REWRITTEN, UNRELATED

Segment = Callable[[str], Sequence[str]]
_WORDLIKE = re.compile(r"[^\W_]")



# Markup in the texts must come out as text, not as markup.
HOSTILE_HEAD = '注意:<script>alert("x")</script> & 其他 "引号" 内容都要转义才行。\n'
A = HOSTILE_HEAD + ARTICLE
B = UNRELATED.splitlines()[0] + "\n" + REWRITTEN + "\n" + ARTICLE.splitlines()[2]


@pytest.fixture(scope="module")
def result(segment: Segment) -> Comparison:
    return compare(A, B, segment=segment, thesaurus=cilin_thesaurus())


class Collector(HTMLParser):
    """Elements by id, every link, and the text inside each side's text block."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: dict[str, dict[str, str | None]] = {}
        self.hrefs_after: dict[str, list[str]] = {}  # id of a marked sentence -> links in it or right after it
        self.texts: dict[str, list[str]] = {"text-a": [], "text-b": []}
        self.stack: list[str] = []
        self.last_id: str | None = None
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        self.tags.append(tag)
        if attr.get("id"):
            self.ids[attr["id"]] = attr  # type: ignore[index]
            if attr["id"] in ("text-a", "text-b"):
                self.stack.append(attr["id"])  # type: ignore[arg-type]
            elif re.fullmatch(r"[ab]-\d+", attr["id"] or ""):
                self.last_id = attr["id"]
                self.hrefs_after[attr["id"]] = []  # type: ignore[index]
        elif self.stack and tag not in ("a", "mark", "sup", "span", "h2"):
            raise AssertionError(f"unexpected <{tag}> inside a text")
        if tag == "a" and attr.get("href") and self.last_id is not None:
            self.hrefs_after[self.last_id].append(attr["href"])  # type: ignore[arg-type]
        if tag in ("h2", "sup"):  # headings and "more links" are not part of the text
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if (tag in ("h2", "sup") and self.stack and self.stack[-1] == tag) or (tag == "div" and self.stack):
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1] in self.texts:
            self.texts[self.stack[-1]].append(data)


def parse(html: str) -> Collector:
    collector = Collector()
    collector.feed(html)
    collector.close()
    return collector


def test_html_parses_and_links_every_marked_sentence_both_ways(result: Comparison) -> None:
    assert result.pairs, "the fixture must produce similar sentences"
    assert {p.rule for p in result.pairs} == {"lcs", "synonyms"}
    page = parse(render_html(A, B, result, label_a="a.txt", label_b="b.txt"))
    for p in result.pairs:
        a_id, b_id = f"a-{p.i}", f"b-{p.j}"
        assert "pair" in (page.ids[a_id].get("class") or "")
        assert "pair" in (page.ids[b_id].get("class") or "")
        assert f"#{b_id}" in page.hrefs_after[a_id]
        assert f"#{a_id}" in page.hrefs_after[b_id]
    synonym_pairs = [p for p in result.pairs if p.rule == "synonyms"]
    assert all("synonyms" in (page.ids[f"a-{p.i}"].get("class") or "") for p in synonym_pairs)
    # Unmarked sentences are there too, without a link.
    marked = {f"a-{i}" for i in result.marked_a}
    for s in result.sentences_a:
        if f"a-{s.index}" not in marked:
            assert page.hrefs_after[f"a-{s.index}"] == []


def test_html_contains_both_texts_verbatim_and_escaped(result: Comparison) -> None:
    html = render_html(A, B, result)
    page = parse(html)
    assert "".join(page.texts["text-a"]) == A
    assert "".join(page.texts["text-b"]) == B
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "script" not in page.tags


def test_html_is_self_contained(result: Comparison) -> None:
    html = render_html(A, B, result)
    assert not re.search(r"""(?:src|href)\s*=\s*["'](?!#)""", html)  # only in-page links
    assert "@import" not in html and "url(" not in html
    assert html.startswith("<!DOCTYPE html>")
    assert '<meta charset="utf-8">' in html


def test_html_shows_the_scores(result: Comparison) -> None:
    html = render_html(A, B, result, label_a="<a>", label_b="b")
    assert f"{100 * result.similarity_a:.1f}%" in html
    assert f"{100 * result.resemblance:.1f}%" in html
    assert "similarity of &lt;a&gt; against b" in html


def test_html_without_pairs_and_with_trimming(segment: Segment) -> None:
    none = compare(
        ARTICLE, UNRELATED, CompareParams(trim_boilerplate=True), segment=segment, thesaurus=cilin_thesaurus()
    )
    page = parse(render_html(ARTICLE, UNRELATED, none))
    assert "".join(page.texts["text-a"]) == ARTICLE
    assert all(not links for links in page.hrefs_after.values())


def test_terminal_report_runs_and_shows_pairs(result: Comparison) -> None:
    console = Console(record=True, width=160, color_system=None)
    render_terminal(A, B, result, console=console, label_a="a.txt", label_b="b.txt")
    out = console.export_text()
    assert "similarity of a.txt against b.txt" in out
    hows = {pair_how(p) for p in result.pairs}
    assert "words replaced" in hows and hows & {"same", "edited"}
    assert all(how in out for how in hows)  # what happened to each, in words
    for p in result.pairs:  # same: the same units; edited: not all of them
        units_a = UNIT_PATTERN.findall(result.sentences_a[p.i].text)
        units_b = UNIT_PATTERN.findall(result.sentences_b[p.j].text)
        assert (pair_how(p) == "same") == (p.rule == "lcs" and [u.casefold() for u in units_a] == [u.casefold() for u in units_b])
    assert f"{100 * result.similarity_b:.1f}%" in out
    for p in result.pairs:  # long sentences wrap inside their cell: look for their start
        assert A[p.a_start : p.a_end][:12] in out
        assert B[p.b_start : p.b_end][:12] in out


def test_terminal_report_limits_pairs_and_handles_no_pairs(result: Comparison, segment: Segment) -> None:
    console = Console(record=True, width=120, color_system=None)
    console.print(terminal_report(A, B, result, max_pairs=1))
    assert f"{len(result.pairs) - 1} more pairs" in console.export_text()
    empty = compare(ARTICLE, UNRELATED, segment=segment, thesaurus=cilin_thesaurus())
    console = Console(record=True, width=120, color_system=None)
    render_terminal(ARTICLE, UNRELATED, empty, console=console)
    assert "No similar sentences" in console.export_text()
