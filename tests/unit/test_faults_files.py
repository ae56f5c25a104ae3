"""Fault suite, file half: hostile and broken input files through the command line.

Each file goes through ``simdup index`` into an embedded store and through
``simdup fingerprint``: every record is indexed or rejected (``read == indexed +
rejected``; the rejects file has one line per reject with ``source`` and
``reason``), and no traceback. The bombs run in a child process whose peak
memory is measured. See docs/reliability.md.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import random
import time
import zipfile
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from simdup_es.cli import main
from tests._data import reject_rows

GOOD = "第一篇文档的正文内容在这里，讲的是相似文档检测。"
MB = 1_000_000
# Peak memory allowed to a run over a bomb; 'simdup index' of one good record peaks at about 250 MB.
MEMORY_CAP_MB = 600
SIMDUP = str(Path(sys.executable).with_name("simdup"))


def _good_line(n: int) -> str:
    return json.dumps({"id": f"good-{n}", "text": f"{GOOD}第{n}篇。"}, ensure_ascii=False)


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _no_traceback(result: Result) -> None:
    # CliRunner catches what escapes the command; only click's own exit is allowed.
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output


def _rejects(path: Path) -> list[dict]:  # type: ignore[type-arg]
    rows = reject_rows(path) if path.exists() else []
    for row in rows:
        assert row["source"] and row["reason"], row
    return rows


def _index(tmp_path: Path, *inputs: Path) -> tuple[Result, list[dict], tuple[int, int, int]]:  # type: ignore[type-arg]
    rejects = tmp_path / "rejects.jsonl"
    result = _cli("index", *map(str, inputs), "--store", str(tmp_path / "store"), "--rejects", str(rejects),
                  "--workers", "1")
    _no_traceback(result)
    summary = next(line for line in result.stderr.splitlines() if line.startswith("read "))
    read, indexed, rejected = (int(summary.split(word)[0].split()[-1].rstrip(",")) for word in
                               (", indexed", ", rejected", " in "))
    rows = _rejects(rejects)
    assert read == indexed + rejected and rejected == len(rows)
    return result, rows, (read, indexed, rejected)


def _fingerprint(tmp_path: Path, *inputs: Path) -> tuple[list[dict], list[dict]]:  # type: ignore[type-arg]
    rejects = tmp_path / "fp-rejects.jsonl"
    result = _cli("fingerprint", *map(str, inputs), "--rejects", str(rejects), "--workers", "1")
    _no_traceback(result)
    out = [json.loads(line) for line in result.stdout.splitlines()]
    rows = _rejects(rejects)
    assert f"fingerprinted {len(out)}, rejected {len(rows)}" in result.stderr
    return out, rows


# --- JSON Lines ------------------------------------------------------------------


def test_deeply_nested_jsonl_line_is_a_reject_and_the_run_goes_on(tmp_path: Path) -> None:
    src = tmp_path / "deep.jsonl"
    deep = '{"text": ' + "[" * 100_000 + "]" * 100_000 + "}"
    src.write_text("\n".join([_good_line(1), deep, _good_line(3)]) + "\n", encoding="utf-8")
    _, rows, counts = _index(tmp_path, src)
    assert counts == (3, 2, 1)
    assert rows[0]["source"] == f"{src}:2" and "nested too deeply" in rows[0]["reason"]
    out, rows = _fingerprint(tmp_path, src)
    assert [r["id"] for r in out] == ["good-1", "good-3"] and rows[0]["source"] == f"{src}:2"


def _run_measured(args: list[str], cwd: Path, timeout: float = 120) -> tuple[subprocess.CompletedProcess, int]:  # type: ignore[type-arg]
    """Run ``simdup ARGS`` in a child and return it with its peak resident memory in MB."""
    probe = ("import resource, subprocess, sys; "
             "r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
             "sys.stdout.write(r.stdout); sys.stderr.write(r.stderr); "
             "print('maxrss', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, file=sys.stderr); "
             "sys.exit(r.returncode)")
    command = [sys.executable, "-c", probe, SIMDUP, *args]
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    peak = int(proc.stderr.rsplit("maxrss ", 1)[1])
    return proc, peak


def _index_measured(tmp_path: Path, src: Path) -> tuple[list[dict], int]:  # type: ignore[type-arg]
    rejects = tmp_path / "rejects.jsonl"
    proc, peak = _run_measured(["index", str(src), "--store", str(tmp_path / "store"), "--rejects", str(rejects),
                                "--workers", "1"], tmp_path)
    rows = _rejects(rejects)
    assert f"rejected {len(rows)} in" in proc.stderr, proc.stderr[-2000:]
    return rows, peak


def _sparse(path: Path, head: bytes, size: int, tail: bytes = b"") -> Path:
    """A file of ``size`` bytes that takes no disk: ``head``, a hole of NULs, ``tail``."""
    with open(path, "wb") as f:
        f.write(head)
        f.seek(size - len(tail))
        f.write(tail)
    return path


def test_huge_jsonl_line_is_a_reject_read_within_the_memory_cap(tmp_path: Path) -> None:
    src = tmp_path / "huge.jsonl"
    _sparse(src, (_good_line(1) + '\n{"text": "').encode(), 300 * MB, ('"}\n' + _good_line(3) + "\n").encode())
    rows, peak = _index_measured(tmp_path, src)
    assert [r["source"] for r in rows] == [f"{src}:2"] and "longer than" in rows[0]["reason"]
    assert peak < MEMORY_CAP_MB, f"peak {peak} MB"


# --- Bombs -----------------------------------------------------------------------


def _flate_bomb(size: int) -> bytes:
    """zlib data that inflates to ``size`` bytes of spaces (about 1,000:1)."""
    z = zlib.compressobj(9)
    chunk = b" " * MB
    return b"".join([*(z.compress(chunk) for _ in range(size // MB)), z.flush()])


def _pdf_with_stream(stream: bytes) -> bytes:
    """A well-formed one-page PDF whose content stream is ``stream`` (FlateDecode)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % n + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def test_pdf_with_a_1_gb_flate_stream_is_a_reject(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    pdf = folder / "bomb.pdf"
    pdf.write_bytes(_pdf_with_stream(_flate_bomb(1000 * MB)))
    assert pdf.stat().st_size < 2 * MB
    (folder / "good.txt").write_text(GOOD, encoding="utf-8")
    rows, peak = _index_measured(tmp_path, folder)
    assert [r["source"] for r in rows] == [str(pdf)] and "bomb" in rows[0]["reason"], rows
    assert peak < MEMORY_CAP_MB, f"peak {peak} MB"


def _docx(document_xml_chunks: int, chunk: bytes) -> bytes:
    """A DOCX whose word/document.xml is ``chunk`` repeated, streamed into the zip."""
    ns = b'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml",
                   '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                   '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                   '<Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" '
                   'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
                   "</Types>")
        z.writestr("_rels/.rels",
                   '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
                   'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
                   '2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>')
        with z.open("word/document.xml", "w", force_zip64=True) as part:
            part.write(b'<?xml version="1.0"?><w:document ' + ns + b"><w:body><w:p><w:r><w:t>")
            for _ in range(document_xml_chunks):
                part.write(chunk)
            part.write(b"</w:t></w:r></w:p></w:body></w:document>")
    return buf.getvalue()


def test_docx_zip_bomb_is_a_reject_within_the_memory_cap(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.docx"
    bomb.write_bytes(_docx(1000, b" " * MB))  # 1 GB of XML in about 1 MB
    assert bomb.stat().st_size < 3 * MB
    rows, peak = _index_measured(tmp_path, bomb)
    assert len(rows) == 1 and "zip bomb" in rows[0]["reason"], rows
    assert peak < MEMORY_CAP_MB, f"peak {peak} MB"


def test_huge_html_is_a_reject_without_reading_it(tmp_path: Path) -> None:
    html = _sparse(tmp_path / "huge.html", b"<html><body><p>", 1000 * MB, b"</p></body></html>")
    rows, peak = _index_measured(tmp_path, html)
    assert len(rows) == 1 and "over the cap" in rows[0]["reason"], rows
    assert peak < MEMORY_CAP_MB, f"peak {peak} MB"


def test_deeply_nested_html_is_a_reject_not_an_hour_of_parsing(tmp_path: Path) -> None:
    # 100,000 nested <div> (600 kB) took lexbor 84 s; the command must be done in seconds.
    html = tmp_path / "nested.html"
    html.write_text("<html><body>" + "<div>" * 100_000 + "正文" + "</div>" * 100_000 + "</body></html>")
    proc, _ = _run_measured(["fingerprint", str(html)], tmp_path, timeout=60)
    assert proc.returncode == 1 and "nests 100,000 elements deep" in proc.stderr


# --- Odd files and folders -------------------------------------------------------


def test_a_folder_of_bad_files_is_all_accounted_for(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.txt").write_text(GOOD, encoding="utf-8")
    # A lone surrogate escaped in JSON is valid JSON and a valid record.
    (folder / "records.jsonl").write_text(
        "\n".join([_good_line(1), "not json", '{"text": "\\ud800 第二篇文档的正文内容"}', _good_line(4)]) + "\n",
        encoding="utf-8")
    (folder / "gbk.jsonl").write_bytes(json.dumps({"text": GOOD}, ensure_ascii=False).encode("gbk") + b"\n")
    (folder / "latin1.csv").write_bytes("text\nd\xe9j\xe0 vu\n".encode("latin-1"))
    (folder / "utf16.txt").write_bytes(GOOD.encode("utf-16"))
    noise = random.Random(13).randbytes(4096)
    (folder / "binary.pdf").write_bytes(b"%PDF-1.4\n" + noise)
    (folder / "binary.docx").write_bytes(b"PK\x03\x04" + noise)
    (folder / "binary.txt").write_bytes(bytes(range(256)) + noise)
    (folder / "program.exe").write_bytes(b"MZ")
    os.mkfifo(folder / "pipe.txt")  # opening it would block for ever
    (folder / "loop.txt").symlink_to(folder / "loop.txt")
    (folder / "dangling.txt").symlink_to(folder / "missing.txt")
    (folder / "self").symlink_to(folder)  # a symlinked folder is not followed
    result, rows, (read, indexed, rejected) = _index(tmp_path, folder)
    reasons = {Path(r["source"].split(":")[0]).name: r["reason"] for r in rows}
    assert "FIFO" in reasons["pipe.txt"] and "loop" in reasons["loop.txt"] and "broken" in reasons["dangling.txt"]
    assert {"binary.pdf", "binary.docx", "binary.txt", "program.exe", "gbk.jsonl", "records.jsonl"} <= set(reasons)
    assert "utf16.txt" not in reasons  # UTF-16 with a byte-order mark is text
    assert "latin1.csv" not in reasons  # read as windows-1252, which reads it as it reads in Latin-1
    # good.txt, utf16.txt, latin1.csv's record and three records of records.jsonl; one reject per bad file and one
    # for the bad line
    assert (read, indexed, rejected) == (15, 6, 9), (read, indexed, rejected, reasons)
    out, fp_rows = _fingerprint(tmp_path, folder)
    assert len(out) == indexed and len(fp_rows) == rejected


def test_symlink_loop_named_on_the_command_line_says_so(tmp_path: Path) -> None:
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(loop)
    _, rows, counts = _index(tmp_path, loop)
    assert counts == (1, 0, 1) and "symbolic link loop" in rows[0]["reason"]


@pytest.mark.parametrize("suffix", [".txt", ".jsonl"])
def test_fifo_named_on_the_command_line_is_read_like_a_pipe(tmp_path: Path, suffix: str) -> None:
    pipe = tmp_path / f"pipe{suffix}"
    os.mkfifo(pipe)
    body = (_good_line(1) if suffix == ".jsonl" else GOOD).encode()
    # The child opens the FIFO for reading; this side writes once it is there.
    probe = subprocess.Popen([SIMDUP, "fingerprint", str(pipe)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    deadline = time.monotonic() + 60
    while True:  # non-blocking open: fails (ENXIO) until the child has the FIFO open for reading
        try:
            fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:
            assert time.monotonic() < deadline and probe.poll() is None, probe.communicate()
            time.sleep(0.05)
    os.set_blocking(fd, True)
    with os.fdopen(fd, "wb") as w:
        w.write(body)
    stdout, stderr = probe.communicate(timeout=60)
    assert probe.returncode == 0 and len(stdout.splitlines()) == 1, stderr


def test_long_pages_with_implied_end_tags_are_not_taken_for_deep_nesting() -> None:
    from simdup_es.text import MAX_HTML_OPEN_ELEMENTS, extract

    n = 2 * MAX_HTML_OPEN_ELEMENTS
    page = "<html><head><title>t</title></head><body><ul>" + "<li>项<br>目" * n + "</ul>" + "<p>段落" * n
    text = extract(page.encode(), "html")
    assert text.count("项") == n and text.count("段落") == n


def test_a_name_too_long_for_the_file_system_is_a_reject(tmp_path: Path) -> None:
    name = tmp_path / ("长" * 200 + ".txt")  # 600 bytes: over the 255 of one name
    _, rows, counts = _index(tmp_path, name)
    assert counts == (1, 0, 1) and "too long" in rows[0]["reason"]


def test_compare_takes_literal_text_longer_than_a_file_name(tmp_path: Path) -> None:
    text = "这是一个很长的句子，比文件名还长。" * 20
    result = _cli("compare", text, text, "--json")
    _no_traceback(result)
    assert result.exit_code == 0 and json.loads(result.stdout)["comparison"]["scores"]["similarity_a"] == 1.0


def test_without_the_files_extra_html_pdf_and_docx_are_rejects_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installation without selectolax, pypdf and python-docx (``pip install simdup-es`` alone) reads text files,
    and rejects the others with the install that reads them."""
    for module in ("selectolax", "selectolax.lexbor", "pypdf", "pypdf.errors", "docx"):
        monkeypatch.setitem(sys.modules, module, None)  # as if not installed: importing it fails
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.txt").write_text(GOOD, encoding="utf-8")
    (folder / "page.html").write_text(f"<html><body><p>{GOOD}</p></body></html>", encoding="utf-8")
    (folder / "paper.pdf").write_bytes(b"%PDF-1.4\n")
    (folder / "letter.docx").write_bytes(b"PK\x03\x04")
    result, rows, counts = _index(tmp_path, folder)
    assert counts == (4, 1, 3), (counts, rows)
    reasons = {Path(r["source"]).name: r["reason"] for r in rows}
    for name, package in (("page.html", "selectolax"), ("paper.pdf", "pypdf"), ("letter.docx", "python-docx")):
        assert f"needs {package}" in reasons[name] and "pip install 'simdup-es[files]'" in reasons[name], reasons
