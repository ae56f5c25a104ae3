"""Whether two versions of the code print the same search, compare and report, byte for byte.

Writes the sample corpus (``simdup sample``), indexes it into an embedded store, and runs
``simdup search``, ``compare`` and ``report`` on it in the ways a user does (a file, a stored
id, literal text, many queries; JSON, the terminal's text and the HTML pages; other ``-k``,
thresholds and exclusions), keeping every command's stdout, stderr, exit status and the
files it wrote. Run it once with the code to compare against, then with yours, ``--against``
the first file: any difference is printed and the exit status is 1::

    python benchmarks/check_cli_identical.py --code /tmp/base --out before.json
    python benchmarks/check_cli_identical.py --out after.json --against before.json

``--code DIR`` runs the commands with ``simdup_es`` imported from the checkout ``DIR``.
The store and the files live in a temporary folder, the commands run in it (ids are
paths relative to it), and the terminal is 160 columns wide.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TIMES = re.compile(r"[\d,.]+ (s|docs/s)\b")  # what a run takes is no output to compare

EDITED = "corpus/zh-man_man7_perlnumber.7-0~edited.txt"
ORIGINAL = "corpus/zh-man_man7_perlnumber.7-0.txt"
DELETED = "corpus/zh-man_man8_nmbd.8-3~paragraph-deleted.txt"
APPENDED = "corpus/zh-debref_pr01-2~paragraph-appended.txt"
POEM = "corpus/zh-classic_songci-10402.txt"
HEAD = "@head:"  # an argument HEAD + FILE stands for the first 400 characters of FILE
LITERAL = "區塊鏈是一種分散式資料庫。它把交易記錄在許多電腦上，任何人都無法單獨修改。"

# (name, arguments): each runs as `simdup ARGS` in the folder; names ending in .html read that file too.
COMMANDS: list[tuple[str, list[str]]] = [
    ("search-file", ["search", DELETED]),
    ("search-file-json", ["search", DELETED, "--json"]),
    ("search-id", ["search", "--id", EDITED]),
    ("search-id-json", ["search", "--id", EDITED, "--json", "--limit", "3"]),
    ("search-id-other-path", ["search", "--id", "./" + ORIGINAL, "--json"]),
    ("search-text", ["search", "--text", LITERAL]),
    ("search-text-part", ["search", "--text", HEAD + ORIGINAL, "--json"]),
    ("search-no-matrix", ["search", "corpus/zh-man-page_man1_systemd-delta.1.txt", "--no-matrix"]),
    ("search-no-matrix-json", ["search", "corpus/zh-man-page_man3_flockfile.3.txt", "--no-matrix", "--json"]),
    ("search-k5", ["search", DELETED, "-k", "5", "--json"]),
    ("search-k0", ["search", ORIGINAL, "-k", "0", "--details", "2"]),
    ("search-threshold", ["search", APPENDED, "--partial-threshold", "0.6", "--json"]),
    ("search-compare-options", ["search", EDITED, "--no-synonyms", "--similar-weight", "0.5", "--json"]),
    ("search-html.html", ["search", APPENDED, "--html", "search-html.html"]),
    ("search-missing-id", ["search", "--id", "no/such/id"]),
    ("search-queries", ["search", "--queries", "corpus", "--workers", "1", "--limit", "5"]),
    ("search-queries-json", ["search", "--queries", "corpus", "--workers", "1", "--json"]),
    ("compare", ["compare", ORIGINAL, EDITED]),
    ("compare-json", ["compare", ORIGINAL, EDITED, "--json"]),
    ("compare-k", ["compare", "corpus/zh-man_man8_nmbd.8-3.txt", DELETED, "-k", "6", "--json"]),
    ("compare-text", ["compare", "--text", LITERAL, LITERAL[:30] + "另外一句话。"]),
    ("compare-html.html", ["compare", ORIGINAL, EDITED, "--html", "compare-html.html"]),
    ("compare-trim", ["compare", APPENDED, "corpus/zh-debref_pr01-2.txt", "--trim-boilerplate", "--json"]),
    ("report", ["report", APPENDED]),
    ("report-json", ["report", APPENDED, "--json"]),
    ("report-html.html", ["report", APPENDED, "--html", "report-html.html"]),
    ("report-id", ["report", "--id", DELETED, "--json"]),
    ("report-id-other-path", ["report", "--id", "./" + DELETED, "--json"]),
    ("report-include-self", ["report", EDITED, "--include-self", "--json"]),
    ("report-exclusions", ["report", APPENDED, "--exclude-quotations", "--exclude-references", "--min-chars", "20",
                           "--json"]),
    ("report-text", ["report", "--text", HEAD + APPENDED, "--json"]),
    ("report-k-limit", ["report", POEM, "-k", "1", "--limit", "1", "--partial-threshold", "0.5"]),
    ("report-missing", ["report", "--id", "no/such/id"]),
]


def run_all(code: Path | None, folder: Path) -> dict[str, dict[str, object]]:
    """Every command's output in ``folder`` (made fresh: the sample, then the index)."""
    prelude = f"import sys; sys.path.insert(0, {str(code.resolve())!r}); " if code else ""
    cli = [sys.executable, "-c", prelude + "from simdup_es.cli import main; main()"]
    env = {**os.environ, "COLUMNS": "160", "SIMDUP_STORE": str(folder / "store"), "PYTHONHASHSEED": "0"}
    for name in ("SIMDUP_ES_URL", "SIMDUP_INDEX", "SIMDUP_ID_BASE"):
        env.pop(name, None)
    out: dict[str, dict[str, object]] = {}
    setup = [["sample", "corpus"], ["index", "corpus", "--workers", "1", "--rejects", "rejects.jsonl"]]
    for name, args in [(" ".join(a), a) for a in setup] + COMMANDS:
        args = [(folder / a[len(HEAD):]).read_text(encoding="utf-8")[:400] if a.startswith(HEAD) else a for a in args]
        done = subprocess.run(cli + args, cwd=folder, env=env, capture_output=True, text=True)
        got: dict[str, object] = {"status": done.returncode, "stdout": done.stdout.replace(str(folder), "<tmp>"),
                                  "stderr": TIMES.sub("T s", done.stderr.replace(str(folder), "<tmp>"))}
        if name.endswith(".html"):
            page = folder / name
            got["file"] = page.read_text(encoding="utf-8") if page.exists() else None
        out[name] = got
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--against", type=Path, help="an earlier --out to compare with")
    ap.add_argument("--code", type=Path, help="a checkout to import simdup_es from (default: this one)")
    args = ap.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="simdup-cli-check-") as tmp:
        out = run_all(args.code, Path(tmp))
    print(f"{len(out)} commands in {time.perf_counter() - started:.0f} s "
          f"(simdup_es from {args.code or HERE.parent})", file=sys.stderr)
    args.out.write_text(json.dumps(out, ensure_ascii=False, indent=1, sort_keys=True), encoding="utf-8")
    if args.against:
        before = json.loads(args.against.read_text(encoding="utf-8"))
        differ = sorted(k for k in before.keys() | out.keys() if before.get(k) != out.get(k))
        for k in differ:
            fields = [f for f in ("status", "stdout", "stderr", "file")
                      if (before.get(k) or {}).get(f) != (out.get(k) or {}).get(f)]
            print(f"DIFFERENT: {k} ({', '.join(fields)})", file=sys.stderr)
        print(f"{len(out)} commands: {len(differ)} different from {args.against}")
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
