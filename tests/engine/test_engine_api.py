"""``okey101.engine``'s face: what its ``__init__`` exports, the example in its docstring, and an
import graph without circles or function-local imports."""

from __future__ import annotations

import ast
import graphlib
import textwrap
from pathlib import Path

from okey101 import engine

ENGINE = Path(engine.__file__).parent


def test_every_exported_name_is_there_once() -> None:
    assert len(set(engine.__all__)) == len(engine.__all__)
    assert [name for name in engine.__all__ if not hasattr(engine, name)] == []
    for name in ("RuleSet", "apply", "view", "legal_actions", "best_opening", "decide"):
        assert name in engine.__all__


def test_the_docstring_example_plays_a_move() -> None:
    doc = engine.__doc__ or ""
    block = doc.split("::\n\n", 1)[1].splitlines()
    end = next(i for i, line in enumerate(block) if line and not line.startswith("    "))
    example = textwrap.dedent("\n".join(block[:end]))
    namespace: dict[str, object] = {}
    exec(compile(example, "okey101.engine docstring", "exec"), namespace)
    assert namespace["events"] and namespace["seen"]


def _module(path: Path) -> str:
    parts = path.relative_to(ENGINE.parent).with_suffix("").parts
    return ".".join(("okey101", *(parts[:-1] if parts[-1] == "__init__" else parts)))


def test_the_engine_imports_without_circles_or_local_imports() -> None:
    """Every import of an engine module by another, wherever it is written, read from the
    source: the graph sorts (no circle), and none is inside a function (none hides one)."""
    modules = {_module(path): path for path in ENGINE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    local: list[str] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            found = {target for target in targets if target in modules and target != name}
            if found and any(f.lineno <= node.lineno <= (f.end_lineno or 0) for f in functions):
                local.append(f"{name}:{node.lineno}")
            # The package's __init__ imports every module: a module importing the package
            # itself would close a circle, so it counts.
            graph[name] |= found
    assert local == []
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError on a circle
