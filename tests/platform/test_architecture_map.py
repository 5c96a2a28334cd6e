"""docs/architecture.md's map of rooms ("Code layout") matches the tree: every package of
``okey101`` has its line, every module in it is named on that line, and every path the map
gives exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "services" / "okey101"


def map_entries() -> dict[str, str]:
    """The map's entries: each path, with the text that describes it (its continuation lines)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Code layout", 1)[1]
    block = section.split("```", 2)[1]
    entries: dict[str, str] = {}
    current = ""
    for line in block.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            current, _, description = line.partition(" ")
            entries[current] = description
        else:
            entries[current] += " " + line.strip()
    return entries


def packages() -> list[Path]:
    return sorted(
        path.parent
        for path in PACKAGE.rglob("__init__.py")
        if "migrations" not in path.parts and "__pycache__" not in path.parts
    )


def test_every_package_and_module_is_on_the_map() -> None:
    entries = map_entries()
    missing: list[str] = []
    for package in packages():
        key = f"{package.relative_to(ROOT).as_posix()}/"
        if package == PACKAGE:
            for module in sorted(PACKAGE.glob("*.py")):
                if (
                    module.name != "__init__.py"
                    and module.relative_to(ROOT).as_posix() not in entries
                ):
                    missing.append(module.relative_to(ROOT).as_posix())
            continue
        if key not in entries:
            missing.append(key)
            continue
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", entries[key]))
        for module in sorted(package.glob("*.py")):
            if module.name != "__init__.py" and module.stem not in words:
                missing.append(module.relative_to(ROOT).as_posix())
    assert missing == [], "not on docs/architecture.md's map: " + ", ".join(missing)


def test_every_path_on_the_map_exists() -> None:
    gone = [
        path for path in map_entries() if "<" not in path and not (ROOT / path.rstrip("/")).exists()
    ]
    assert gone == []


def test_the_map_is_read_as_the_test_expects() -> None:
    """The parser sees the entries it should (a map it cannot read checks nothing)."""
    entries = map_entries()
    assert "services/okey101/table/" in entries and "journal" in entries["services/okey101/table/"]
    assert len([path for path in entries if path.startswith("services/okey101/")]) >= 18
