"""The sentence catalogue: every error code the engine raises has an English and a Turkish
sentence, and both name the same parameters."""

from __future__ import annotations

import ast
import pickle
import re
import string
from dataclasses import dataclass
from pathlib import Path

import pytest

from okey101.engine.errors import InvalidInput, OkeyError, RuleViolation
from okey101.engine.sentences import CATALOGUE, LANGUAGES, render

ENGINE = Path(__file__).resolve().parents[2] / "services" / "okey101" / "engine"
ERROR_CLASSES = {"InvalidInput", "RuleViolation", "OkeyError"}
CODE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{3,}")


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


@dataclass(frozen=True)
class Raise:
    path: str
    line: int
    code: str
    params: frozenset[str] | None  # None: passed as **kwargs, not known


def _strings_in(node: ast.AST) -> set[str]:
    return {
        child.value
        for child in ast.walk(node)
        if isinstance(child, ast.Constant) and isinstance(child.value, str)
    }


def _assigned_strings(scope: ast.AST, name: str) -> set[str]:
    """Every string literal assigned to ``name`` in ``scope`` (codes passed in a variable)."""
    found: set[str] = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                found |= _strings_in(node.value)
        elif (
            isinstance(node, ast.AnnAssign | ast.AugAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == name
            and node.value is not None
        ):
            found |= _strings_in(node.value)
    return found


def engine_raises() -> list[Raise]:
    """Each code passed to InvalidInput / RuleViolation / OkeyError in okey101/engine/**/*.py."""
    out: list[Raise] = []
    for path in sorted(ENGINE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        functions = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id not in ERROR_CLASSES or not node.args:
                continue
            first = node.args[0]
            enclosing = [
                fn for fn in functions if fn.lineno <= node.lineno <= (fn.end_lineno or fn.lineno)
            ]
            if isinstance(first, ast.Name) and any(
                first.id == arg.arg
                for fn in enclosing
                for arg in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)
            ):
                continue  # the code comes from the caller (a re-raise helper, say)
            if isinstance(first, ast.Name):
                scope: ast.AST = next(
                    (
                        fn
                        for fn in functions
                        if fn.lineno <= node.lineno <= (fn.end_lineno or fn.lineno)
                        and _assigned_strings(fn, first.id)
                    ),
                    tree,
                )
                codes = _assigned_strings(scope, first.id)
            else:
                codes = _strings_in(first)
            codes = {code for code in codes if CODE.fullmatch(code)}
            assert codes, f"{path.name}:{node.lineno}: cannot tell which code is raised"
            keywords = [kw.arg for kw in node.keywords]
            params = None if None in keywords else frozenset(k for k in keywords if k)
            out.extend(Raise(path.name, node.lineno, code, params) for code in sorted(codes))
    return out


RAISES = engine_raises()


def test_the_source_scan_finds_the_engines_errors() -> None:
    codes = {r.code for r in RAISES}
    # A scan that found nothing would check nothing.
    assert {
        "UNKNOWN_TILE",
        "TOO_MANY_COPIES",
        "INDICATOR_IS_FALSE_JOKER",
        "UNKNOWN_PRESET",
        "UNKNOWN_RULE",
        "BAD_RULE_VALUE",
        "MELD_TOO_SHORT",
        "SET_TOO_LONG",
        "SET_REPEATS_COLOUR",
        "RUN_WRAPS_AROUND",
        "RUN_13_1_2",
        "RUN_OUT_OF_RANGE",
        "NOT_A_MELD",
        "NOT_A_PAIR",
        "BAD_OKEY_AS",
    } <= codes
    assert {r.path for r in RAISES} >= {"tiles.py", "rules.py", "melds.py"}


def test_every_code_raised_in_the_engine_has_a_catalogue_entry() -> None:
    missing = sorted({f"{r.code} ({r.path}:{r.line})" for r in RAISES if r.code not in CATALOGUE})
    assert not missing, f"codes without a sentence: {missing}"


def test_every_code_raised_is_given_the_parameters_its_sentence_names() -> None:
    # Extra parameters are fine (clients may read them); a missing one shows up as "{name}".
    wrong = []
    for r in RAISES:
        if r.code not in CATALOGUE or r.params is None:
            continue
        named = fields(CATALOGUE[r.code]["en"])
        if not named <= r.params:
            wrong.append(f"{r.path}:{r.line} {r.code} lacks {sorted(named - r.params)}")
    assert not wrong, wrong


def test_the_scan_also_reads_plain_regex_matches() -> None:
    # A cruder, independent look: every string literal passed straight to an error class.
    pattern = re.compile(r"\b(?:InvalidInput|RuleViolation|OkeyError)\(\s*\"([A-Z0-9_]+)\"")
    for path in ENGINE.rglob("*.py"):
        for code in pattern.findall(path.read_text(encoding="utf-8")):
            assert code in CATALOGUE, f"{path.name}: {code}"
            assert code in {r.code for r in RAISES}


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_each_entry_has_english_and_turkish_with_the_same_parameters(code: str) -> None:
    entry = CATALOGUE[code]
    assert set(entry) == set(LANGUAGES) == {"en", "tr"}
    assert CODE.fullmatch(code), code
    for language in LANGUAGES:
        sentence = entry[language]
        assert sentence.strip() == sentence and sentence, (code, language)
        assert sentence[-1] in ".!?", (code, language)
    assert fields(entry["en"]) == fields(entry["tr"])
    assert entry["en"] != entry["tr"]


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_each_entry_renders_with_its_parameters(code: str) -> None:
    names = fields(CATALOGUE[code]["en"])
    params = {name: f"<{name}>" for name in names}
    for language in LANGUAGES:
        text = render(code, language, params)
        assert "{" not in text and "}" not in text
        for name in names:
            assert f"<{name}>" in text


def test_render_falls_back_to_english_and_to_the_code() -> None:
    params = {"tile": "R7"}
    assert render("TOO_MANY_COPIES", "de", params) == render("TOO_MANY_COPIES", "en", params)
    assert render("NO_SUCH_CODE", "en", {}) == "NO_SUCH_CODE"


def test_render_leaves_a_missing_parameter_visible() -> None:
    assert render("TOO_MANY_COPIES", "en", {}) == (
        "There are only two {tile} tiles in the set (the indicator counts)."
    )
    # A Turkish sentence stays Turkish.
    assert render("TOO_MANY_COPIES", "tr", {}) == (
        "Takımda yalnızca iki {tile} taşı var (gösterge de sayılır)."
    )
    assert render("BAD_RULE_VALUE", "tr", {"rule": "partners"}) == (
        "'partners' kuralı '{value}' değerini alamaz."
    )


def test_errors_carry_code_params_and_both_sentences() -> None:
    error = RuleViolation("SET_REPEATS_COLOUR", tile="B4")
    assert error.code == "SET_REPEATS_COLOUR"
    assert error.params == {"tile": "B4"}
    assert str(error) == "A set needs a different colour on every tile; B4 is there twice."
    # In Turkish the tile is named by its colour's word (K would read as kırmızı).
    assert error.message("tr") == "Perdeki her taş farklı renkte olmalı; mavi 4 iki kez var."
    assert isinstance(error, OkeyError)
    assert not isinstance(error, InvalidInput)
    assert issubclass(InvalidInput, OkeyError)


@pytest.mark.parametrize("cls", [InvalidInput, RuleViolation])
def test_errors_survive_pickling(cls: type[OkeyError]) -> None:
    error = cls("UNKNOWN_TILE", tile="Q9")
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is cls
    assert (again.code, again.params, str(again)) == (error.code, error.params, str(error))


def test_turkish_sentences_name_tiles_by_their_colour_words() -> None:
    assert render("TILE_NOT_IN_RACK", "tr", {"tile": "K13"}) == "Siyah 13 ıstakanda yok."
    assert render("TILE_NOT_IN_RACK", "tr", {"tile": "R7"}) == "Kırmızı 7 ıstakanda yok."
    assert render("TILE_NOT_IN_RACK", "tr", {"tile": "FJ"}) == "Sahte okey ıstakanda yok."
    assert render("TAKEN_TILE_THROWN_BACK", "tr", {"tile": "Y2"}).startswith("Sarı 2 taşını")
    assert render("TILE_NOT_IN_RACK", "en", {"tile": "K13"}) == "K13 is not on your rack."
    # A mistyped tile is quoted back as typed.
    assert render("UNKNOWN_TILE", "tr", {"tile": "K14"}).startswith("'K14' bir taş değil")


def test_turkish_sentences_address_the_player_as_sen_and_say_turn_for_a_turn() -> None:
    """One form of address (sen, as the game sites do) and the game's own words: a turn is a
    tur, a hand an el (docs/glossary.md)."""
    from okey101.lobby.errors import CATALOGUE as LOBBY
    from okey101.platform.sentences import CATALOGUE as PLATFORM
    from okey101.scoring.errors import CATALOGUE as SCORING
    from okey101.table.errors import CATALOGUE as TABLE

    formal = re.compile(
        r"(?i)\b(siz|sizin|sizde)\b|(ınız|iniz|unuz|ünüz|sınız|siniz|\byapın|\bdeneyin|\bkoyun)\b"
    )
    for catalogue in (CATALOGUE, PLATFORM, LOBBY, SCORING, TABLE):
        for code, entry in catalogue.items():
            assert not formal.search(entry["tr"]), (code, entry["tr"])
    assert "bu turda" in CATALOGUE["ALREADY_DREW"]["tr"].lower()
    assert "bu elde" not in " ".join(entry["tr"].lower() for entry in CATALOGUE.values())


def test_the_glossary_lists_the_games_words_and_the_colours_the_sentences_use() -> None:
    from okey101.engine.sentences import TURKISH_COLOURS

    glossary = (ENGINE.parent.parent.parent / "docs" / "glossary.md").read_text(encoding="utf-8")
    for word in ("el", "tur", "sıra", "per", "seri", "çift", "okey", "sahte okey", "gösterge"):
        assert f"| {word}" in glossary or f"; {word}" in glossary or f"({word}" in glossary, word
    for word in ("işlek taş", "ıstaka", "açmak", "elini bitirmek", "boşluk", "**sen**"):
        assert word in glossary, word
    for letter, colour in TURKISH_COLOURS.items():
        assert f"| {letter} |" in glossary and f"| {colour} |" in glossary
