"""The web client's words (web/src/i18n.ts) without a browser: every key the page asks for is
in the catalogue, in English and Turkish, and both name the same parameters (as
tests/client/test_client.py checks the terminal client's)."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "web" / "src"
ENTRY = re.compile(
    r'^  (\w+): \{\s*en: "((?:[^"\\]|\\.)*)",\s*tr: "((?:[^"\\]|\\.)*)",?\s*\},', re.MULTILINE
)


def _catalogue() -> dict[str, tuple[str, str]]:
    text = (SRC / "i18n.ts").read_text(encoding="utf-8")
    block = text[text.index("const CATALOGUE") : text.index("\n};\n")]
    return {key: (en, tr) for key, en, tr in ENTRY.findall(block)}


def test_every_entry_has_both_languages_with_the_same_parameters() -> None:
    text = (SRC / "i18n.ts").read_text(encoding="utf-8")
    block = text[text.index("const CATALOGUE") : text.index("\n};\n")]
    keys = re.findall(r"^  (\w+): \{", block, re.MULTILINE)
    catalogue = _catalogue()
    assert sorted(catalogue) == sorted(keys), set(keys) - set(catalogue)
    for key, (en, tr) in catalogue.items():
        assert en and tr, key
        assert set(re.findall(r"\{(\w+)\}", en)) == set(re.findall(r"\{(\w+)\}", tr)), key


def test_every_key_the_page_uses_is_in_the_catalogue() -> None:
    catalogue = _catalogue()
    used: set[str] = set()
    for path in SRC.glob("*.ts"):
        source = path.read_text(encoding="utf-8")
        used |= set(re.findall(r'\bt\("(\w+)"', source))
        # Keys named in tables (the reveal's reasons, the phases) and a seat's own sentences.
        # The wallet's reasons (entry_) and the history's columns (col_) too.
        named = r'"((?:why|reason|phase|line|ev|level|preset|entry|col)_\w+)"'
        used |= set(re.findall(named, source))
        for key in re.findall(r'pick\("(\w+)"', source):
            used |= {key, f"{key}_own"}
    missing = sorted(used - set(catalogue))
    assert not missing, missing
    assert len(used) > 100
