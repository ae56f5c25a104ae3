"""The README's Python examples run, and show what they print.

Every ```` ```python ```` block of README.md runs, top to bottom in one namespace
(as a reader would paste them), in a temporary folder. An expression statement
whose line ends in ``# -> EXPECTED`` must have ``repr(value)`` equal to
``EXPECTED``, where ``...`` stands for any text (as in doctest's ELLIPSIS).
"""

from __future__ import annotations

import ast
import re
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
