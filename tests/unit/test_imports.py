"""Modules import only downwards: no import cycle among the modules of ``simdup_es``.

The graph is read with :mod:`ast` from every file under ``simdup_es/``, not from
``sys.modules``, so an import that only runs on some path counts as well.

What counts as an edge ``a -> b``:

* every ``import simdup_es.b`` and ``from .b import name`` in ``a``, at module level
  **and inside functions and methods**: an import deferred into a function (to keep
  ``import simdup_es`` light, or to load an optional dependency late) still makes
  ``a`` depend on ``b``, and deferring one to dodge a cycle only hides the cycle.
  ``from . import b`` (and ``from .pkg import b``) is an edge to the submodule ``b``
  when ``b`` is a module, else to the package;
* not the imports under ``if TYPE_CHECKING:``, which never run (annotations only);
* not the package ``__init__`` that Python runs before a submodule: ``simdup_es.store``
  importing its own ``.base`` would otherwise always be a cycle.

The package's own ``__init__`` is the public facade: it loads ``store``, ``search``
and ``multilevel`` lazily by name (``importlib``, invisible to ``ast``), so no module
of the package may import it (:func:`test_no_module_imports_the_package_facade`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "simdup_es"
ROOT = PACKAGE.name


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_files() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of ``tree``, at any depth, but those under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for other in node.orelse:
                yield from imports(ast.Module(body=[other], type_ignores=[]))
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        yield from imports(node)


def targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: Mapping[str, Path]) -> list[str]:
    """The modules of the package that ``node`` (in ``module``) imports."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.split(".")[0] == ROOT]
    if node.level:
        here = module.split(".") if is_package else module.split(".")[:-1]
        base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    if base.split(".")[0] != ROOT:
        return []
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]


def import_graph() -> dict[str, set[str]]:
    """``module -> modules it imports`` for every module of the package."""
    files = package_files()
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in imports(tree):
            graph[name].update(t for t in targets(name, path.name == "__init__.py", node, files) if t != name)
    return graph


def strongly_connected(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    found.append(sorted(component))
    return found


def a_cycle(graph: Mapping[str, set[str]], component: list[str]) -> list[str]:
    """One cycle through the first module of ``component``: ``[a, b, ..., a]`` (breadth first, so a short one)."""
    start, members = component[0], set(component)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node] & members):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if nxt not in came_from:
                    came_from[nxt] = node
                    following.append(nxt)
        frontier = following
    return component


def describe(graph: Mapping[str, set[str]], components: list[list[str]]) -> str:
    lines = []
    for component in components:
        lines.append(f"{len(component)} modules import each other: {', '.join(component)}")
        lines.append("  for example " + " -> ".join(a_cycle(graph, component)))
        for module in component:
            lines.append(f"  {module} imports {', '.join(sorted(graph[module] & set(component)))}")
    return "\n".join(lines)


def test_no_import_cycle_among_the_package_modules() -> None:
    graph = import_graph()
    cycles = [c for c in strongly_connected(graph) if len(c) > 1]
    assert not cycles, "import cycles (modules must import only downwards):\n" + describe(graph, cycles)


def test_no_module_imports_the_package_facade() -> None:
    graph = import_graph()
    upward = sorted(name for name, deps in graph.items() if ROOT in deps)
    assert not upward, (f"{', '.join(upward)} import {ROOT} itself, whose __init__ loads store, search and "
                        "multilevel by name: import the module that defines the name instead")


def test_the_graph_sees_every_kind_of_import() -> None:
    graph = import_graph()
    assert "simdup_es.errors" in graph["simdup_es.config"]  # from .errors import ...
    assert "simdup_es.simhash" in graph["simdup_es.keys"]  # from . import simhash as sh
    assert {"simdup_es.es.bodies", "simdup_es.es.io"} <= graph["simdup_es.store.elasticsearch"]  # from ..es import a, b
    assert "simdup_es.store.local" in graph["simdup_es.store"]  # inside a function
    assert "simdup_es.compare" not in graph["simdup_es.groups"]  # only under TYPE_CHECKING
    assert "simdup_es.store" not in graph["simdup_es.store.base"]  # the parent package is not an edge


def test_a_cycle_is_found_and_named() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    cycles = [c for c in strongly_connected(graph) if len(c) > 1]
    assert cycles == [["a", "b", "c"]]
    assert a_cycle(graph, cycles[0]) == ["a", "b", "c", "a"]
    assert "a -> b -> c -> a" in describe(graph, cycles)
