"""No import circle in the package okey101.

The graph is read from the source with ``ast``, without importing anything: an edge from a
module to each okey101 module it imports, wherever the import statement is (at the top, under
``if TYPE_CHECKING``, or inside a function: a circle closed by a function-level import is still
a circle, only hidden until the function runs, and both circles of issue 17 were of that kind).
``from a.b import c`` is an edge to ``a.b.c`` when that is a module, else to ``a.b``. A package's
``__init__`` running before its submodules is not an edge: that is how packages load, and a
package that re-exports its submodules (``okey101.lobby``) would otherwise be a circle with
each of them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import okey101

PACKAGE = Path(okey101.__file__).parent


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package under ``root``, by its dotted name."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module's okey101 imports (module docstring)."""
    known = modules(root)

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets.update(resolve(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parents = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parents, *([node.module] if node.module else [])])
                for alias in node.names:
                    member = f"{base}.{alias.name}"
                    targets.add(member if member in known else resolve(base))
        graph[name] = {target for target in targets if target is not None and target != name}
    return graph


def circles(graph: Mapping[str, set[str]]) -> Iterator[list[str]]:
    """One circle (``a -> b -> ... -> a``) per strongly connected group of modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    for group in groups:
        yield _path_back(graph, min(group), group)


def _path_back(graph: Mapping[str, set[str]], start: str, group: set[str]) -> list[str]:
    """A shortest path from ``start`` back to itself inside ``group`` (breadth first)."""
    parent: dict[str, str | None] = {start: None}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & group):
                if target == start:
                    path = [node]
                    while (step := parent[path[-1]]) is not None:
                        path.append(step)
                    return [*reversed(path), start]
                if target not in parent:
                    parent[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"{start} is not on a circle of {sorted(group)}")


def test_the_graph_is_read_from_the_whole_package() -> None:
    graph = import_graph()
    assert len(graph) > 100
    assert "okey101.services" in graph["okey101.cli.servers"]
    assert "okey101.stack" in graph["okey101.client.simulate"]  # a function-level import
    assert "okey101.platform.config" in graph["okey101.services"]  # under TYPE_CHECKING


def test_a_circle_is_found_and_reported() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e2"}, "e2": {"e"}}
    assert sorted(circles(graph)) == [["a", "b", "c", "a"], ["e", "e2", "e"]]


def test_no_import_circle() -> None:
    graph = import_graph()
    found = [" -> ".join(circle) for circle in circles(graph)]
    assert found == [], "import circles:\n" + "\n".join(found)
