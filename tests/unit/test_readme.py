"""The README's Python examples run, and show what they print.

Every ```` ```python ```` block of README.md runs, top to bottom in one namespace
(as a reader would paste them), in a temporary folder. An expression statement
whose line ends in ``# -> EXPECTED`` must have ``repr(value)`` equal to
``EXPECTED``, where ``...`` stands for any text (as in doctest's ELLIPSIS).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
ARROW = "# -> "


def _blocks() -> list[str]:
    return BLOCK.findall(README.read_text(encoding="utf-8"))


def _matches(expected: str, got: str) -> bool:
    pattern = ".*?".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, got, re.S) is not None


class _Checks(ast.NodeTransformer):
    """Wraps each ``expr  # -> expected`` statement in ``_check(expr, expected, line)``."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.count = 0

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        line = self.lines[node.end_lineno - 1]  # type: ignore[operator]
        if ARROW not in line:
            return node
        self.count += 1
        expected = line.split(ARROW, 1)[1].strip()
        call = ast.Call(ast.Name("_check", ast.Load()), [node.value, ast.Constant(expected), ast.Constant(node.lineno)], [])
        return ast.copy_location(ast.Expr(call), node)


def test_matches_is_literal_but_for_the_ellipsis() -> None:
    assert _matches("(2, '...')", "(2, 'abc')") and _matches("[...]", "[]")
    assert not _matches("(2, '...')", "(3, 'abc')") and not _matches("1.5", "1x5")


def test_readme_python_examples_run_and_print_what_they_show(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("SIMDUP_ES_URL", "SIMDUP_STORE", "SIMDUP_INDEX"):
        monkeypatch.delenv(name, raising=False)
    blocks = _blocks()
    assert len(blocks) >= 4, "the README lost its Python examples"
    checked: list[str] = []

    def check(value: Any, expected: str, line: int) -> None:
        got = repr(value)
        assert _matches(expected, got), f"README block {n + 1}, line {line}: shows {expected}, got {got}"
        checked.append(expected)

    namespace: dict[str, Any] = {"_check": check, "__name__": "readme"}
    for n, source in enumerate(blocks):
        checks = _Checks(source.splitlines())
        tree = ast.fix_missing_locations(checks.visit(ast.parse(source)))
        assert checks.count, f"README block {n + 1} shows no output to check (add '# -> ...')"
        exec(compile(tree, f"README.md block {n + 1}", "exec"), namespace)  # noqa: S102 - the README is ours
    assert len(checked) == sum(source.count(ARROW) for source in blocks)


def _first_ten_minutes() -> str:
    """The README's shell block that starts with ``simdup sample``: what a new user types first."""
    section = README.read_text(encoding="utf-8").split("## The first ten minutes", 1)[1].split("\n## ", 1)[0]
    blocks = [b for b in re.findall(r"^```sh\n(.*?)^```", section, re.S | re.M) if b.startswith("simdup sample")]
    assert len(blocks) == 1, "the README lost its first-ten-minutes commands"
    return blocks[0]


def test_readme_first_ten_minutes_commands_run(tmp_path: Path) -> None:
    """Each command as a reader pastes it, in a new folder, on the embedded store."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIMDUP_ES") and k != "SIMDUP_STORE"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    outputs: dict[str, str] = {}
    for line in _first_ten_minutes().splitlines():
        command = line.split("  #", 1)[0].strip()
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"README command failed: {command}\n{done.stdout}\n{done.stderr}"
        outputs[command.split()[1]] = done.stdout
    # What the README says they do.
    assert "zh-man_man8_nmbd.8-3.txt" in outputs["search"] and "near-duplicate" in outputs["search"]
    assert (tmp_path / "compare.html").stat().st_size > 1000
    assert "zh-debref_pr01-2.txt" in outputs["report"] and "near-duplicate" in outputs["report"]
    assert "简单地使用 script(1)" in (tmp_path / "report.html").read_text(encoding="utf-8")
    assert any("songci-10402~exact-copy" in line and "songci-10402.txt" in line
               for line in outputs["groups"].splitlines())


def test_every_command_is_in_the_command_line_docs() -> None:
    from simdup_es.cli import main

    docs = (README.parent / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = [name for name in main.commands if f"| `simdup {name}" not in docs]
    assert not missing, f"docs/cli.md does not describe: {missing}"


def test_links_of_the_readme_and_docs_lead_somewhere() -> None:
    """Every relative link of README.md and docs/*.md names a file of the repository, and its #anchor a heading."""
    def anchors(path: Path) -> set[str]:
        heads = re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.M)
        return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}

    broken = []
    for page in [README, *sorted((README.parent / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # http(s), mailto: not checked here
            file, _, anchor = target.partition("#")
            path = (page.parent / file).resolve() if file else page
            if not path.exists() or anchor and path.suffix == ".md" and anchor not in anchors(path):
                broken.append(f"{page.name}: {target}")
    assert not broken, broken
