"""Raw documents to text: the bytes of a ``.txt``/``.md``, ``.html``, ``.pdf`` or ``.docx``
document in, its plain text out, before :func:`simdup_es.text.unify`.

:func:`extract` takes bytes, not paths, so reading files stays with the caller. Caps keep one hostile
document from exhausting memory or time. HTML, PDF and DOCX need the ``files`` extra (selectolax,
pypdf, python-docx); without it such a document is refused with the install that reads it.
"""

from __future__ import annotations

import codecs
import importlib
import io
import re
import zipfile
from collections.abc import Callable
from html import unescape
from typing import Any, Literal

from .charsets import EncodingError, decode_text
from .errors import EmptyDocumentError, InputError
from .markup import Layout, markdown_text
from .sentences import unwrap_lines

Kind = Literal["text", "markdown", "html", "pdf", "docx"]

_SUFFIX_KIND: dict[str, Kind] = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".pdf": "pdf",
    ".docx": "docx",
}

def kind_of(name: str) -> Kind | None:
    """The document kind a file name implies, or ``None`` when it is not one we read."""
    dot = name.rfind(".")
    return _SUFFIX_KIND.get(name[dot:].lower()) if dot >= 0 else None


# Caps that keep one hostile document from exhausting memory or time; a document
# over a cap is refused with the cap named (docs/reliability.md lists them all).
MAX_FILE_BYTES: dict[Kind, int] = {
    "text": 100_000_000,  # the fingerprinter refuses text over 10 MB by default (--max-bytes)
    "markdown": 100_000_000,
    "html": 100_000_000,
    "pdf": 200_000_000,  # streams are decompressed one at a time, each capped by pypdf
    "docx": 200_000_000,
}
#: Declared unpacked size of all parts of a DOCX, and of its XML parts (which
#: become an lxml tree several times their size). zipfile never inflates a part
#: past its declared size, so checking the declared sizes is enough.
MAX_DOCX_UNPACKED_BYTES = 500_000_000
MAX_DOCX_XML_BYTES = 50_000_000
#: Elements left open at once in an HTML document. Lexbor's tree building slows
#: down with the square of the depth (10,000 nested <div>: 0.4 s; 100,000: 84 s).
MAX_HTML_OPEN_ELEMENTS = 10_000

# Elements that need no end tag (void) or whose end tag is implied by the next
# sibling, so leaving them open does not nest.
_SELF_CLOSING = frozenset(
    b"area base br col embed hr img input link meta source track wbr "
    b"p li dt dd tr td th option optgroup rb rt rp tbody thead tfoot colgroup html head body".split()
)
_TAG = re.compile(rb"<(/?)([A-Za-z][^\s/>]*)")


def decode(data: bytes, *, source: str | None = None, declared: str | None = None) -> str:
    """Decode a text document's bytes: UTF-8, else the encoding :func:`simdup_es.charsets.decode_text` finds
    (Big5, GB18030, UTF-16, Shift_JIS, ...), or refuse them naming the encodings they might be in.

    ``declared`` is the encoding the document names itself (an HTML ``<meta charset>``):
    taken when the bytes decode in it. Bytes with NUL in them that are not UTF-16 are
    binary, not text, and refused rather than decoded into garbage.
    """
    if declared is not None:
        try:
            return data.decode(declared)
        except UnicodeDecodeError:
            pass  # the page's declaration is wrong: what the bytes are is found as for any text
    try:
        return decode_text(data)[0]
    except EncodingError as exc:
        raise InputError(exc.reason, source=source) from None


#: An HTML page's own charset, in a ``<meta charset>`` or ``<meta http-equiv="Content-Type" content="...">`` tag.
_META_CHARSET = re.compile(rb"<meta\b[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9._:-]+)", re.IGNORECASE)
#: Labels that name another codec than Python's of that name, as browsers read them (the WHATWG Encoding standard).
_CHARSET_ALIASES = {"iso-8859-1": "cp1252", "latin1": "cp1252", "ascii": "cp1252", "us-ascii": "cp1252",
                    "gb2312": "gb18030", "gbk": "gb18030", "big5": "cp950", "x-sjis": "cp932", "shift_jis": "cp932"}


def declared_charset(data: bytes) -> str | None:
    """The codec an HTML page declares in its first 1,024 bytes, as browsers read the label; ``None`` without one."""
    match = _META_CHARSET.search(data[:1024])
    if match is None:
        return None
    label = match.group(1).decode("ascii").lower()
    try:
        codec = codecs.lookup(_CHARSET_ALIASES.get(label, label)).name
    except LookupError:
        return None
    return None if codec.startswith("utf-16") else codec  # a page read as bytes is never UTF-16 by its own tag


_PACKAGES = {"selectolax": "selectolax", "pypdf": "pypdf", "docx": "python-docx"}  # module: what pip installs


def _library(module: str, kind: str, source: str | None = None) -> Any:
    """``module``, which reading ``kind`` documents needs; an :class:`InputError` naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise InputError(f"reading {kind} needs {_PACKAGES[module.partition('.')[0]]}, not installed here: pip install "
                         "'simdup-es[files]' (in a checkout of simdup-es: pip install '.[files]')", source=source) from None


def html_to_text(html: str, source: str | None = None) -> str:
    """Visible text of an HTML document, one line per block element."""
    tree = _library("selectolax.lexbor", "HTML", source).LexborHTMLParser(html)
    for node in tree.css("script, style, noscript, template, head"):
        node.decompose()
    root = tree.body or tree.root
    return root.text(separator="\n", strip=True) if root is not None else ""


def _open_elements(data: bytes) -> int:
    """How deep the elements of an HTML document nest, from its tags alone (one regex pass).

    Elements whose end tag may be left out are not counted, so long pages of
    unclosed ``<p>`` or ``<li>`` stay shallow; misnested tags can only add depth.
    """
    depth = deepest = 0
    for slash, name in _TAG.findall(data):
        if name.lower() in _SELF_CLOSING:
            continue
        if slash:
            depth = max(depth - 1, 0)
        else:
            depth += 1
            deepest = max(deepest, depth)
    return deepest


def _html_to_text(data: bytes, source: str | None) -> str:
    html = decode(data, source=source, declared=declared_charset(data))
    depth = _open_elements(data)
    if depth > MAX_HTML_OPEN_ELEMENTS:
        raise InputError(
            f"HTML nests {depth:,} elements deep, over the cap of {MAX_HTML_OPEN_ELEMENTS:,} "
            "(parsing it would take hours); fix or convert the file",
            source=source,
        )
    return html_to_text(html, source)


def _pdf_to_text(data: bytes, source: str | None) -> str:
    pypdf = _library("pypdf", "PDF", source)
    LimitReachedError = _library("pypdf.errors", "PDF", source).LimitReachedError

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        pages = [(page.extract_text() or "").rstrip("\n") for page in reader.pages]
    except LimitReachedError as exc:
        # pypdf's own caps (75 MB per decompressed stream by default): a decompression bomb.
        raise InputError(f"PDF stream over pypdf's size limits (a decompression bomb?): {exc}", source=source) from None
    except Exception as exc:  # pypdf raises many types (and RecursionError) on malformed files
        raise InputError(f"cannot read PDF: {type(exc).__name__}: {exc}", source=source) from None
    text = "\n".join(pages)
    if not text.strip():
        raise EmptyDocumentError(
            f"PDF has no text layer ({len(pages)} page(s), probably scanned images); run OCR on it first",
            source=source,
        )
    return join_lines(text)


def join_lines(text: str) -> str:
    """A PDF's text with the line breaks of its layout joined the way the text reads.

    A PDF's lines are its layout's, not its sentences': a line break after a full line
    that ends no sentence (across a page break too) joins the two lines
    (:func:`simdup_es.sentences.unwrap_lines` finds them): with a space between words, with
    nothing between two CJK characters (新的生 and 命 read 新的生命), whose script puts no
    space between words.
    """
    unwrapped = unwrap_lines(text)
    if unwrapped == text:
        return text
    out: list[str] = []
    pos = 0
    for m in _LINE_BREAK_SPACED.finditer(text):
        at = text.index("\n", m.start())
        if unwrapped[at] != " ":
            continue
        s, e = m.start(), m.end()
        if 0 < s and e < len(text) and _CLOSE_UP.match(text[s - 1]) and _CLOSE_UP.match(text[e]):
            out.append(text[pos:s])  # the spaces around the break go with it
            pos = e
        else:
            out.append(text[pos:at] + " ")
            pos = at + 1
    out.append(text[pos:])
    return "".join(out)


_LINE_BREAK_SPACED = re.compile("[ \t]*\n[ \t]*")
# Scripts written without spaces between words (Han, kana, their punctuation and full-width forms); not Hangul.
_CLOSE_UP = re.compile("[\u3000-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
                       "\U00020000-\U0003134f]")


def _check_docx_sizes(data: bytes, source: str | None) -> None:
    """Refuse a DOCX whose parts would unpack past the caps (a zip bomb) before python-docx reads them."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        parts = archive.infolist()
    total = sum(p.file_size for p in parts)
    xml = sum(p.file_size for p in parts if p.filename.endswith((".xml", ".rels")))
    for size, cap, what in ((total, MAX_DOCX_UNPACKED_BYTES, "parts"), (xml, MAX_DOCX_XML_BYTES, "XML parts")):
        if size > cap:
            raise InputError(
                f"DOCX of {len(data) / 1e6:.1f} MB whose {what} would unpack to {size / 1e6:,.0f} MB, "
                f"over the cap of {cap / 1e6:,.0f} MB (a zip bomb?)",
                source=source,
            )


def _docx_to_text(data: bytes, source: str | None) -> str:
    docx = _library("docx", "DOCX", source)
    try:
        _check_docx_sizes(data, source)
        document = docx.Document(io.BytesIO(data))
        lines = [p.text for p in document.paragraphs]
        lines += [" ".join(cell.text for cell in row.cells) for table in document.tables for row in table.rows]
    except InputError:
        raise
    except Exception as exc:  # zipfile, lxml and python-docx raise many types on malformed files
        raise InputError(f"cannot read DOCX: {type(exc).__name__}: {exc}", source=source) from None
    return "\n".join(lines)


def _markdown_to_text(data: bytes, source: str | None) -> str:
    return markdown_text(decode(data, source=source))[0]


_READERS: dict[str, Callable[[bytes, str | None], str]] = {"markdown": _markdown_to_text, "html": _html_to_text,
                                                          "pdf": _pdf_to_text, "docx": _docx_to_text}
_HTML_TITLE = re.compile(rb"<title\b[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)
_HTML_H1 = re.compile(rb"<h1\b[^>]*>(.*?)</h1", re.IGNORECASE | re.DOTALL)
_ANY_TAG = re.compile(r"<[^>]*>")


def document_title(data: bytes, text: str, kind: Kind, layout: Layout | None = None,
                   fields: dict[str, str] | None = None) -> str | None:
    """The title a document gives itself: an HTML ``<title>`` (else its first ``<h1>``), a
    Markdown file's front matter ``title`` (else its first ``# heading``, from ``layout``);
    ``None`` for other documents or without one.

    Read from the first 64 kB only (a title is near the top), with entities decoded
    and whitespace collapsed.
    """
    found: str | None = None
    if kind == "html":
        head = data[: 1 << 16]
        for pattern in (_HTML_TITLE, _HTML_H1):
            if match := pattern.search(head):
                raw = _title_text(match.group(1), data)
                found = unescape(_ANY_TAG.sub("", raw))  # inline markup: 只有<b>一级</b> is one phrase
                if found.strip():
                    break
    elif kind == "markdown":
        found = (fields or {}).get("title")
        if not found and layout is not None:
            found = next((text[h.start : h.end] for h in layout.headings if h.level == 1), None)
    if found is None:
        return None
    return " ".join(found.split())[:500] or None


def _title_text(raw: bytes, page: bytes) -> str:
    """An HTML title's bytes as text, in the encoding of the page they are from."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    codec = declared_charset(page)
    if codec is None:
        try:
            codec = decode_text(page)[1]
        except EncodingError:
            codec = "utf-8"
    return raw.decode(codec, "replace")


def extract(data: bytes, kind: Kind, *, source: str | None = None) -> str:
    """Plain text of a document's bytes, before :func:`unify`.

    Raises
    ------
    InputError
        The bytes are not a readable document of that kind, or are over one of
        the caps above (:data:`MAX_FILE_BYTES` and the rest); the message names
        ``source`` and says what to do.
    """
    cap = MAX_FILE_BYTES.get(kind)
    if cap is not None and len(data) > cap:
        raise InputError(too_large(len(data), cap), source=source)
    if kind == "text":
        return decode(data, source=source)
    if kind not in _READERS:
        raise InputError(f"unknown document kind {kind!r}", source=source)
    return _READERS[kind](data, source)


def extract_layout(data: bytes, kind: Kind, *, source: str | None = None) -> tuple[str, Layout | None, dict[str, str]]:
    """:func:`extract`, with what the parser knows beyond the text: for Markdown its :class:`~simdup_es.markup.Layout`
    (headings, block quotes, the file as written) and its front matter fields; ``None`` and no fields otherwise."""
    if kind != "markdown":
        return extract(data, kind, source=source), None, {}
    cap = MAX_FILE_BYTES[kind]
    if len(data) > cap:
        raise InputError(too_large(len(data), cap), source=source)
    return markdown_text(decode(data, source=source))


def too_large(size: int, cap: int) -> str:
    """The reason given for an input over a size cap."""
    return f"is {size / 1e6:,.1f} MB, over the cap of {cap / 1e6:,.0f} MB for one document; split it first"
