"""The tests' own layout: a folder per area under ``tests/``, the helpers they share in
``tests/support/`` (imported as ``support.<module>``), the fixtures they share in the
``conftest.py`` of the nearest folder holding every test that uses them, and no test module
importing another.

The imports are read with ``ast``, without importing anything: every import statement wherever it
is (at the top, or inside a function), absolute or relative, and ``importlib.import_module`` or
``__import__`` of a constant name. A test module, a ``conftest.py`` or a support module that
imports a ``test_*`` module is refused: what one test module needs of another belongs in
``tests/support/`` (or, a fixture, in a ``conftest.py``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
#: The areas, a folder each: tests/<area>/test_*.py.
AREAS = frozenset(
    {
        "abuse",
        "bot",
        "cli",
        "client",
        "edge",
        "engine",
        "k8s",
        "lobby",
        "platform",
        "rules",
        "scoring",
        "table",
        "web",
    }
)
#: Folders under tests/ that are not areas: the shared helpers, the rule scenarios (data).
OTHER_FOLDERS = frozenset({"support", "scenarios"})


def imported_modules(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of everything a module imports: for ``from a import b``, both ``a``
    and ``a.b`` (``b`` may be a module); a relative import's dots are kept (``.test_x``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            if node.module:
                yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}" if node.module else base + alias.name
        elif (
            isinstance(node, ast.Call)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id == "__import__")
            )
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.lineno, node.args[0].value


def imports_of_test_modules(root: Path) -> list[str]:
    """``path:line name`` for every import of a ``test_*`` module by a Python file under
    ``root``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, name in imported_modules(tree):
            if any(part.startswith("test_") for part in name.split(".")):
                found.append(f"{path.relative_to(root)}:{line} {name}")
    return found


def test_no_test_module_imports_another_test_module() -> None:
    assert imports_of_test_modules(TESTS) == []


def test_the_check_finds_a_test_module_imported_every_way(tmp_path: Path) -> None:
    """The check above can fail: each way of importing a test module is found, and imports of
    support modules, conftest's neighbours and third-party modules are not."""
    (tmp_path / "engine").mkdir()
    bad = {
        "test_plain.py": "import test_other\n",
        "test_from.py": "from test_table_service import one_hand_rules\n",
        "test_dotted.py": "import tests.table.test_table_service as t\n",
        "test_package.py": "from tests.table import test_table_service\n",
        "test_relative.py": "from . import test_other\n",
        "test_relative_from.py": "from .test_other import helper\n",
        "test_local.py": "def f():\n    from test_lobby_service import run\n    return run\n",
        "test_dynamic.py": "import importlib\nm = importlib.import_module('test_faults')\n",
        "conftest.py": "from test_web import launched_browser\n",
    }
    for name, text in bad.items():
        (tmp_path / "engine" / name).write_text(text)
    (tmp_path / "support.py").write_text("from test_abuse_harness import World\n")
    (tmp_path / "engine" / "test_good.py").write_text(
        "import pytest\nimport unittest\nfrom support.tables import one_hand_rules\n"
        "from okey101.engine import tests_helper\nfrom hypothesis import strategies as st\n"
    )
    found = imports_of_test_modules(tmp_path)
    files = {entry.split(":")[0] for entry in found}
    assert files == {f"engine/{name}" for name in bad} | {"support.py"}, found
    assert "engine/test_from.py:1 test_table_service" in found


def test_test_modules_are_in_an_area_folder() -> None:
    folders = {path.name for path in TESTS.iterdir() if path.is_dir()}
    folders -= {"__pycache__"}
    assert folders - OTHER_FOLDERS == AREAS
    misplaced = [
        str(path.relative_to(TESTS))
        for path in TESTS.rglob("test_*.py")
        if path.parent.parent != TESTS or path.parent.name not in AREAS
    ]
    assert misplaced == []
    assert sorted(path.name for path in TESTS.glob("*.py")) == ["conftest.py"]


def test_support_holds_helpers_only() -> None:
    """No tests and no fixtures in tests/support/: a fixture two areas share is in a
    ``conftest.py`` (pytest finds fixtures there, never in an imported module)."""
    for path in sorted((TESTS / "support").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            where = f"{path.relative_to(TESTS)}:{node.lineno} {node.name}"
            assert not node.name.startswith(("test_", "Test")), where
            decorators = [ast.unparse(decorator) for decorator in node.decorator_list]
            assert not any("fixture" in decorator for decorator in decorators), where


#: Where the repository names test files (the package's generated SOURCES.txt aside).
REFERRING = (
    "README.md",
    "CHANGELOG.md",
    "CONTRIBUTING.md",
    "Makefile",
    ".ci/run",
    "pyproject.toml",
)
REFERRING_GLOBS = ("docs/**/*.md", "k8s/**/*.yaml", "services/okey101/**/*.py", "tests/**/*.py")
TEST_PATH = re.compile(r"\btests/[\w/*.-]*?\.py\b")


def test_every_test_file_the_repository_names_is_there() -> None:
    """A moved test leaves no stale path behind in the Makefile, CI, the docs, the manifests'
    comments or the package's docstrings (a ``*`` in a path must match a file)."""
    files = [ROOT / name for name in REFERRING if (ROOT / name).exists()]
    for pattern in REFERRING_GLOBS:
        files += sorted(ROOT.glob(pattern))
    stale = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for named in TEST_PATH.findall(line):
                if not any(ROOT.glob(named)):
                    stale.append(f"{path.relative_to(ROOT)}:{number} {named}")
    assert stale == []
