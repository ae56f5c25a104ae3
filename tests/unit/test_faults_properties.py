"""Fault suite, property half: the text pipeline and the readers never raise
anything but the package's own errors, whatever text or bytes they get.

Inputs mix Chinese, Latin, sentence punctuation, control characters and lone
surrogates (JSON lets ``"\\ud800"`` through), which is where the bugs were
(``compare`` once raised ``UnicodeEncodeError``). See docs/reliability.md.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdup_es.compare import CompareParams, compare
from simdup_es.errors import SimdupError
from simdup_es.fingerprint import Fingerprinter
from simdup_es.sentences import split_sentences
from simdup_es.sources import Fields, Record, Reject, read_csv, read_jsonl
from simdup_es.text import extract, unify

# Few examples each, no deadline (jieba and the thesaurus load on first use):
# the whole file runs in seconds.
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_PIECES = list("你好世界文档测試。！？，；\n\r\t .!?abcXYZ0９") + [
    "\ud800", "\udfff", "\x00", "\x1b", "\u200b", "\ufeff", "\u2028", "\U0001f600", "Ａ", "ﬁ", "\u0301",
]
# Texts built from the risky pieces, and arbitrary text (surrogates included).
texts = st.lists(st.sampled_from(_PIECES), max_size=60).map("".join) | st.text(max_size=60)


def _no_foreign_error(call, *args):  # type: ignore[no-untyped-def]
    """Run ``call``; errors of the package are fine, any other exception fails the test."""
    try:
        return call(*args)
    except SimdupError:
        return None


@pytest.fixture(scope="module")
def fingerprinter() -> Fingerprinter:
    return Fingerprinter()


@FAST
@given(texts)
def test_unify_takes_any_text(text: str) -> None:
    unified = unify(text)
    assert not any("\ud800" <= ch <= "\udfff" for ch in unified)
    unified.encode("utf-8")  # strict: unified text is always encodable


@FAST
@given(texts)
def test_split_sentences_takes_any_text(text: str) -> None:
    for sentence in split_sentences(text):
        assert text[sentence.start : sentence.end] == sentence.text


@FAST
@given(texts, texts)
def test_compare_takes_any_raw_text(a: str, b: str) -> None:
    # Raw (not unified) texts on purpose: '\ud800' here raised UnicodeEncodeError.
    result = compare(a, b, CompareParams(min_units=1))
    assert 0.0 <= result.similarity_a <= 1.0 and 0.0 <= result.similarity_b <= 1.0


def test_compare_with_a_lone_surrogate_in_a_word_checked_pair() -> None:
    # The case fuzzing found: a pair that reaches the word check, a surrogate in one sentence.
    result = compare("你你", "你你你\ud800", CompareParams(min_units=1))
    assert result.stats.word_checks == 1


@FAST
@given(text=texts, title=st.none() | texts)
def test_fingerprint_takes_any_text(fingerprinter: Fingerprinter, text: str, title: str | None) -> None:
    fp = _no_foreign_error(fingerprinter.fingerprint, text, title)
    if fp is not None:
        assert fp == fingerprinter.fingerprint(text, title)


def _json_values() -> st.SearchStrategy[object]:
    scalars = st.none() | st.booleans() | st.integers() | st.floats() | texts
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
                        max_leaves=8)


def _accounted(items: list, lines: int) -> None:  # type: ignore[type-arg]
    assert all(isinstance(i, (Record, Reject)) for i in items)
    assert len(items) <= lines
    for item in items:
        if isinstance(item, Reject):
            assert item.reason and item.source.startswith("in:")
        else:  # whatever the input escaped, a record can be written as UTF-8 (stores, outputs)
            "".join(filter(None, (item.text, item.id, item.title))).encode("utf-8")


@FAST
@given(st.lists(st.binary(max_size=40) | _json_values().map(lambda v: json.dumps({"text": v}).encode())
                | st.tuples(texts, texts).map(lambda t: json.dumps({"id": t[0], "text": t[1]}).encode()), max_size=8))
def test_jsonl_reader_takes_any_bytes(lines: list[bytes]) -> None:
    lines = [line.replace(b"\n", b" ") for line in lines]
    items = list(read_jsonl(io.BytesIO(b"".join(line + b"\n" for line in lines)), "in", Fields()))
    _accounted(items, len(lines))

    def blank(n: int, line: bytes) -> bool:
        try:
            return not line.decode("utf-8-sig" if n == 0 else "utf-8").strip()
        except UnicodeDecodeError:
            return False

    # One item (record or reject) for every line that is not blank.
    assert len(items) == sum(not blank(n, line) for n, line in enumerate(lines))


@FAST
@given(st.lists(st.lists(texts, min_size=1, max_size=3), max_size=6))
def test_csv_reader_takes_any_text(rows: list[list[str]]) -> None:
    buf = io.StringIO()
    csv.writer(buf).writerows([["text", "id", "title"], *rows])
    items = list(read_csv(io.StringIO(buf.getvalue(), newline=""), "in", Fields()))
    _accounted(items, len(rows) + buf.getvalue().count("\n"))


@FAST
@given(data=st.binary(max_size=300), kind=st.sampled_from(["text", "html", "pdf", "docx"]))
def test_extract_takes_any_bytes(data: bytes, kind: str) -> None:
    _no_foreign_error(extract, data, kind)


@FAST
@given(st.binary(max_size=200), st.sampled_from([b"%PDF-1.4\n", b"PK\x03\x04", b"<html><body>", b"\xef\xbb\xbf"]))
def test_extract_takes_corrupted_headers(tail: bytes, head: bytes) -> None:
    kind = {b"%PDF-1.4\n": "pdf", b"PK\x03\x04": "docx", b"<html><body>": "html"}.get(head, "text")
    _no_foreign_error(extract, head + tail, kind)
