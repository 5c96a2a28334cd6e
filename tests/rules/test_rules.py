"""The rule set: presets for the three rule texts (docs/rules.md) and custom mixes."""

from __future__ import annotations

import dataclasses
import enum
import pickle
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okey101.engine.errors import InvalidInput
from okey101.engine.rules import (
    PRESETS,
    LeftDiscardPolicy,
    MatchEnd,
    OkeyInLosersHand,
    OneGoFinish,
    RuleSet,
    StockOutPolicy,
)

NAMES = ("oyna", "boombala", "north_sultan")

# One or more knobs per row of docs/rules.md's "Where they differ" table, then the common
# rules: (row, knob, oyna, boombala, north_sultan).
TABLE: list[tuple[str, str, Any, Any, Any]] = [
    ("12-13-1 is a run", "run_may_end_12_13_1", False, True, True),
    ("lay off in the opening turn", "lay_off_in_opening_turn", True, False, True),
    (
        "opening-turn play spoils a hand finish",
        "opening_turn_play_spoils_hand_finish",
        False,
        False,
        True,
    ),
    ("pairs opener lays off", "pairs_opener_may_lay_off", True, True, True),
    ("pairs opener lay-off limit", "pairs_opener_lay_off_limit", 0, 0, 2),
    (
        "runs openers put pairs down",
        "runs_openers_may_pair_after_pairs_opening",
        True,
        False,
        True,
    ),
    ("taking an okey back", "may_take_okey_back", True, False, True),
    ("okey back from a three-tile set", "okey_back_from_three_set", True, False, False),
    (
        "taking the left discard",
        "left_discard",
        LeftDiscardPolicy.USE_THIS_TURN,
        LeftDiscardPolicy.GIVE_BACK_FOR_PENALTY,
        LeftDiscardPolicy.OPENED_TAKE_FREELY,
    ),
    ("left discard not thrown back", "taken_tile_may_not_be_discarded", True, False, False),
    ("left discard never the finishing tile", "taken_tile_may_not_finish", True, False, False),
    ("indicator", "indicator_show_points", 0, -101, 0),
    (
        "stock runs out",
        "stock_out",
        StockOutPolicy.ENDS_ON_LAST_DISCARD,
        StockOutPolicy.ENDS_ON_LAST_DISCARD,
        StockOutPolicy.NEXT_MAY_TAKE_LAST_DISCARD,
    ),
    ("finisher's score", "finish_points", -101, -101, -101),
    ("finish doubled with the okey", "double_with_okey", True, True, True),
    ("finish doubled after a pairs opening", "double_after_pairs_opening", True, False, True),
    ("doublings of a finish stack", "finish_doublings_stack", True, False, True),
    ("never-opened penalty", "never_opened_points", 202, 202, 202),
    ("never-opened cap", "never_opened_cap", 0, 0, 808),
    (
        "okey left in a loser's hand",
        "okey_in_losers_hand",
        OkeyInLosersHand.ADDED_UNDOUBLED,
        OkeyInLosersHand.IN_HAND_SUM,
        OkeyInLosersHand.IN_HAND_SUM,
    ),
    ("okey in hand counts", "okey_in_hand_points", 101, 101, 101),
    (
        "going out in one go",
        "one_go_finish",
        OneGoFinish.WHILE_NOBODY_OPENED,
        OneGoFinish.SAME_TURN,
        OneGoFinish.HAND_FINISH,
    ),
    ("all four open with pairs", "all_pairs_voids_hand", True, True, True),
    (
        "match length",
        "match_end",
        MatchEnd.TARGET_TOTAL,
        MatchEnd.FIXED_HANDS,
        MatchEnd.FIXED_HANDS,
    ),
    ("partners", "partners", False, False, False),
    ("turn timer", "turn_seconds", 0, 0, 45),
    ("bots labelled", "bots_labelled", True, True, False),
    # Common to all three.
    ("opening minimum", "opening_min_points", 101, 101, 101),
    ("opening pairs", "opening_min_pairs", 5, 5, 5),
    ("discard penalty", "penalty_points", 101, 101, 101),
]


@pytest.mark.parametrize("name", NAMES)
def test_each_rule_text_has_a_preset(name: str) -> None:
    rules = RuleSet.preset(name)
    assert isinstance(rules, RuleSet)
    assert rules.name == name
    assert PRESETS[name] is rules
    assert RuleSet.preset(name) is rules


def test_there_are_exactly_three_presets_and_oyna_is_the_default() -> None:
    assert set(PRESETS) == set(NAMES)
    assert RuleSet() == RuleSet.preset("oyna")
    assert len({PRESETS[name] for name in NAMES}) == 3


@pytest.mark.parametrize(
    ("row", "knob", "oyna", "boombala", "north_sultan"), TABLE, ids=[row[0] for row in TABLE]
)
def test_preset_knobs_follow_the_readme_table(
    row: str, knob: str, oyna: Any, boombala: Any, north_sultan: Any
) -> None:
    expected = {"oyna": oyna, "boombala": boombala, "north_sultan": north_sultan}
    for name, value in expected.items():
        actual = getattr(RuleSet.preset(name), knob)
        assert actual == value, f"{name}.{knob} ({row})"
        assert type(actual) is type(value), f"{name}.{knob} ({row})"


def test_match_targets() -> None:
    assert RuleSet.preset("oyna").match_target == 1000
    assert RuleSet.preset("north_sultan").match_hands == 11
    # boombala: the host picks 1, 3, 5, 7, 9 or 11 hands.
    assert RuleSet.preset("boombala").match_hands in (1, 3, 5, 7, 9, 11)


def test_every_knob_is_in_the_table_or_named() -> None:
    covered = {row[1] for row in TABLE} | {"name", "match_target", "match_hands"}
    assert covered == {field.name for field in dataclasses.fields(RuleSet)}


@pytest.mark.parametrize("name", ["", "Oyna", "OYNA", "classic", "north-sultan", "101"])
def test_unknown_preset_is_refused(name: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        RuleSet.preset(name)
    assert caught.value.code == "UNKNOWN_PRESET"
    assert caught.value.params == {"preset": name}
    assert f"'{name}'" in str(caught.value)


def test_presets_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        RuleSet.preset("oyna").run_may_end_12_13_1 = True  # type: ignore[misc]


# --- with_overrides -----------------------------------------------------------------------------


def test_an_override_changes_one_knob_and_nothing_else() -> None:
    oyna = RuleSet.preset("oyna")
    custom = oyna.with_overrides({"run_may_end_12_13_1": True})
    assert custom.run_may_end_12_13_1 is True
    assert oyna.run_may_end_12_13_1 is False  # the preset is untouched
    assert RuleSet.preset("oyna").run_may_end_12_13_1 is False
    assert custom.name == "oyna"
    assert dataclasses.replace(custom, run_may_end_12_13_1=False) == oyna


def test_several_overrides_at_once() -> None:
    custom = RuleSet.preset("boombala").with_overrides(
        {
            "turn_seconds": 30,
            "partners": True,
            "match_hands": 5,
            "stock_out": "next_may_take_last_discard",
        }
    )
    assert (custom.turn_seconds, custom.partners, custom.match_hands) == (30, True, 5)
    assert custom.stock_out is StockOutPolicy.NEXT_MAY_TAKE_LAST_DISCARD
    assert custom.run_may_end_12_13_1 is True  # boombala's own stays


def test_no_overrides_is_the_same_rule_set() -> None:
    for name in NAMES:
        assert RuleSet.preset(name).with_overrides({}) == RuleSet.preset(name)


def test_enum_knobs_take_members_or_their_string_values() -> None:
    oyna = RuleSet.preset("oyna")
    by_value = oyna.with_overrides({"left_discard": "opened_take_freely"})
    by_member = oyna.with_overrides({"left_discard": LeftDiscardPolicy.OPENED_TAKE_FREELY})
    assert by_value.left_discard is LeftDiscardPolicy.OPENED_TAKE_FREELY
    assert by_value == by_member


@pytest.mark.parametrize("knob", ["no_such_rule", "Run_May_End_12_13_1", "", "name", "value"])
def test_unknown_knobs_are_refused(knob: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        RuleSet.preset("oyna").with_overrides({knob: True})
    assert caught.value.code == "UNKNOWN_RULE"
    assert caught.value.params == {"rule": knob}


def test_an_unknown_knob_refuses_the_whole_override() -> None:
    with pytest.raises(InvalidInput) as caught:
        RuleSet.preset("oyna").with_overrides({"partners": True, "partner": True})
    assert caught.value.code == "UNKNOWN_RULE"
    assert caught.value.params == {"rule": "partner"}


@pytest.mark.parametrize(
    ("knob", "value"),
    [
        ("run_may_end_12_13_1", 1),
        ("run_may_end_12_13_1", 0),
        ("run_may_end_12_13_1", "true"),
        ("run_may_end_12_13_1", None),
        ("opening_min_points", True),
        ("opening_min_points", "101"),
        ("opening_min_points", 101.0),
        ("opening_min_points", None),
        ("turn_seconds", 4.5),
        ("left_discard", "take_anything"),
        ("left_discard", "USE_THIS_TURN"),
        ("left_discard", 1),
        ("left_discard", None),
        ("left_discard", StockOutPolicy.ENDS_ON_LAST_DISCARD),
        ("match_end", "ten_hands"),
        ("one_go_finish", True),
        ("left_discard", ["use_this_turn"]),
    ],
)
def test_wrong_typed_values_are_refused(knob: str, value: object) -> None:
    oyna = RuleSet.preset("oyna")
    with pytest.raises(InvalidInput) as caught:
        oyna.with_overrides({knob: value})
    error = caught.value
    assert error.code == "BAD_RULE_VALUE"
    assert error.params == {"rule": knob, "value": str(value)}
    assert knob in str(error)


def test_knobs_lists_every_field_with_enums_as_strings() -> None:
    knobs = RuleSet.preset("north_sultan").knobs()
    assert set(knobs) == {field.name for field in dataclasses.fields(RuleSet)}
    assert knobs["name"] == "north_sultan"
    assert knobs["left_discard"] == "opened_take_freely"
    assert knobs["turn_seconds"] == 45
    for value in knobs.values():
        assert not isinstance(value, enum.Enum)
        assert type(value) in (str, int, bool)


@pytest.mark.parametrize("name", NAMES)
def test_a_preset_rebuilt_from_its_knobs_is_the_preset(name: str) -> None:
    preset = RuleSet.preset(name)
    knobs = {key: value for key, value in preset.knobs().items() if key != "name"}
    rebuilt = RuleSet().with_overrides(knobs)
    assert dataclasses.replace(rebuilt, name=name) == preset


def test_rule_sets_pickle() -> None:
    for name in NAMES:
        assert pickle.loads(pickle.dumps(RuleSet.preset(name))) == RuleSet.preset(name)


def _field_values(field: dataclasses.Field[Any]) -> st.SearchStrategy[Any]:
    current = getattr(RuleSet(), field.name)
    if isinstance(current, enum.Enum):
        return st.sampled_from(list(type(current)))
    if isinstance(current, bool):
        return st.booleans()
    return st.integers(min_value=-1000, max_value=1000)


KNOB_FIELDS = [field for field in dataclasses.fields(RuleSet) if field.name != "name"]


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(NAMES),
    st.data(),
)
def test_any_well_typed_override_is_taken(name: str, data: st.DataObject) -> None:
    fields = data.draw(st.lists(st.sampled_from(KNOB_FIELDS), unique_by=lambda f: f.name))
    overrides = {field.name: data.draw(_field_values(field)) for field in fields}
    custom = RuleSet.preset(name).with_overrides(overrides)
    for knob, value in overrides.items():
        assert getattr(custom, knob) == value
    for field in KNOB_FIELDS:
        if field.name not in overrides:
            assert getattr(custom, field.name) == getattr(RuleSet.preset(name), field.name)


# ------------------------------------------------------------------------------------------
# docs/rules.md

RULES_DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def _doc_section(heading: str) -> str:
    text = RULES_DOC.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def test_the_docs_knob_table_is_every_knob_with_each_presets_value() -> None:
    rows: dict[str, list[str]] = {}
    for line in _doc_section("Every knob").splitlines():
        match = re.match(r"\| `([a-z0-9_]+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \|", line)
        if match:
            rows[match.group(1)] = [cell.strip() for cell in match.groups()[1:]]

    def written(value: Any) -> str:
        return str(value).lower() if isinstance(value, bool) else str(value)

    expected = {
        field.name: [written(RuleSet.preset(name).knobs()[field.name]) for name in NAMES]
        for field in KNOB_FIELDS
    }
    assert rows == expected


def test_every_knob_is_named_where_the_docs_say_the_presets_differ() -> None:
    differ = _doc_section("Where they differ")
    missing = [field.name for field in KNOB_FIELDS if f"`{field.name}`" not in differ]
    assert missing == []
