"""Runs, sets and pairs, what each okey stands for, and what melds are worth."""

from __future__ import annotations

import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from okey101.engine.errors import InvalidInput, RuleViolation
from okey101.engine.melds import HIGH_ONE, Meld, MeldKind, make_group, make_meld, make_pair
from okey101.engine.rules import RuleSet
from okey101.engine.sentences import CATALOGUE
from okey101.engine.tiles import (
    FALSE_JOKER_FACE,
    Colour,
    Okey,
    Tile,
    TileAllocator,
    copies_of,
    face_colour,
    face_name,
    face_number,
    face_of,
    parse_face,
)

OYNA = RuleSet.preset("oyna")
BOOMBALA = RuleSet.preset("boombala")
NORTH_SULTAN = RuleSet.preset("north_sultan")
PRESETS = [OYNA, BOOMBALA, NORTH_SULTAN]
WRAPPING = [BOOMBALA, NORTH_SULTAN]

WRAP_SENTENCE = "In 101 the 1 is only the lowest tile: 12-13-1 is not a run."


def okey_of(indicator: str = "Y5") -> Okey:
    return Okey(copies_of(parse_face(indicator))[0])


def build(names: str, indicator: str = "Y5") -> tuple[list[Tile], Okey]:
    """Physical tiles for ``"R7 OK R9"``: OK is an okey; the indicator's copy is used up."""
    okey = okey_of(indicator)
    allocator = TileAllocator([okey.indicator])
    tiles = [
        allocator.take(okey.face if name == "OK" else parse_face(name)) for name in names.split()
    ]
    return tiles, okey


def group(names: str, rules: RuleSet = OYNA, indicator: str = "Y5", **kwargs: object) -> Meld:
    tiles, okey = build(names, indicator)
    return make_group(tiles, okey, rules, **kwargs)  # type: ignore[arg-type]


def refused(names: str, rules: RuleSet = OYNA, indicator: str = "Y5", **kwargs: object) -> str:
    with pytest.raises((RuleViolation, InvalidInput)) as caught:
        group(names, rules, indicator, **kwargs)
    return caught.value.code


def stands(meld: Meld) -> list[str | None]:
    return [None if face is None else face_name(face) for face in meld.stands_for]


def f(name: str) -> int:
    return parse_face(name)


# --- Runs ---------------------------------------------------------------------------------------


def test_an_ascending_run() -> None:
    meld = group("R3 R4 R5")
    assert meld.kind is MeldKind.RUN
    assert meld.colour is Colour.RED
    assert (meld.low, meld.high, meld.number) == (3, 5, 3)
    assert stands(meld) == ["R3", "R4", "R5"]
    assert meld.wild == (False, False, False)
    assert meld.value == 12
    assert str(meld) == "R3-R4-R5"


@pytest.mark.parametrize("names", ["R5 R4 R3", "R4 R3 R5", "R5 R3 R4", "R3 R5 R4", "R4 R5 R3"])
def test_descending_and_unordered_runs_without_okeys_are_the_same_run(names: str) -> None:
    meld = group(names)
    assert meld.kind is MeldKind.RUN
    assert (meld.low, meld.high) == (3, 5)
    assert stands(meld) == ["R3", "R4", "R5"]
    assert meld.value == 12


def test_one_two_three_is_a_run_worth_6() -> None:
    for rules in PRESETS:
        meld = group("B1 B2 B3", rules)
        assert meld.kind is MeldKind.RUN
        assert meld.value == 6


def test_the_longest_run_is_1_to_13() -> None:
    names = " ".join(f"K{n}" for n in range(1, 14))
    meld = group(names)
    assert (meld.low, meld.high, meld.value) == (1, 13, 91)
    assert meld.colour is Colour.BLACK


@pytest.mark.parametrize(
    ("names", "okey_stands_for"),
    [
        ("B5 B6 OK", "B7"),  # the okey at the end
        ("OK B5 B6", "B4"),  # at the start
        ("B5 OK B7", "B6"),  # in the gap
        ("B6 B5 OK", "B4"),  # written high to low: after the 5 comes the 4
        ("OK B6 B5", "B7"),
    ],
)
def test_the_okeys_place_decides_what_it_stands_for(names: str, okey_stands_for: str) -> None:
    meld = group(names)
    assert meld.kind is MeldKind.RUN
    assert sum(meld.wild) == 1
    index = meld.wild.index(True)
    assert str(meld.tiles[index]) == "Y6"  # the okey tile itself
    assert stands(meld)[index] == okey_stands_for
    # A run reads low to high whichever way it was written.
    numbers = [face_number(face) for face in meld.stands_for if face is not None]
    assert numbers == list(range(numbers[0], numbers[0] + 3))
    assert meld.value == sum(numbers)
    assert sorted(t.id for t in meld.tiles) == sorted(t.id for t in build(names)[0])


def test_red_7_okey_red_9_is_worth_24() -> None:
    meld = group("R7 OK R9")
    assert stands(meld) == ["R7", "R8", "R9"]
    assert meld.wild == (False, True, False)
    assert meld.value == 24


def test_two_okeys_in_a_run() -> None:
    meld = group("R5 OK OK R8")
    assert stands(meld) == ["R5", "R6", "R7", "R8"]
    assert meld.value == 26
    meld = group("OK K10 OK")
    assert stands(meld) == ["K9", "K10", "K11"]
    assert meld.value == 30


def test_one_tile_and_two_okeys_reads_as_the_better_meld() -> None:
    # R5 OK OK: the run 5-6-7 (18) beats the set of 5s (15).
    meld = group("R5 OK OK")
    assert meld.kind is MeldKind.RUN
    assert meld.value == 18
    # R13 OK OK: no run goes past 13 in oyna, so it is a set of 13s.
    meld = group("R13 OK OK")
    assert meld.kind is MeldKind.SET
    assert meld.value == 39
    # B12 OK OK where 12-13-1 is a run: the set (36) beats 12-13-1 (26).
    meld = group("B12 OK OK", BOOMBALA)
    assert meld.kind is MeldKind.SET
    assert meld.value == 36


@pytest.mark.parametrize("names", ["R12 R13 R1", "R11 R12 R13 R1", "R12 R13 OK", "R12 OK R1"])
def test_12_13_1_is_refused_in_oyna_with_the_sentence(names: str) -> None:
    with pytest.raises(RuleViolation) as caught:
        group(names, OYNA)
    error = caught.value
    assert error.code == "RUN_WRAPS_AROUND"
    assert str(error) == WRAP_SENTENCE
    assert error.message("en") == WRAP_SENTENCE
    assert error.message("tr") == CATALOGUE["RUN_WRAPS_AROUND"]["tr"]


@pytest.mark.parametrize("names", ["R1 R12 R13", "R1 R13 R12", "R13 R1 R12", "R13 R12 R1"])
def test_12_13_1_in_another_order_gets_the_same_sentence(names: str) -> None:
    with pytest.raises(RuleViolation) as caught:
        group(names, OYNA)
    assert caught.value.code == "RUN_WRAPS_AROUND"
    assert str(caught.value) == WRAP_SENTENCE


def test_12_13_1_is_refused_by_a_custom_rule_set_too() -> None:
    rules = BOOMBALA.with_overrides({"run_may_end_12_13_1": False})
    assert refused("K12 K13 K1", rules) == "RUN_WRAPS_AROUND"
    rules = OYNA.with_overrides({"run_may_end_12_13_1": True})
    assert group("K12 K13 K1", rules).value == 26


@pytest.mark.parametrize("rules", WRAPPING, ids=lambda rules: rules.name)
def test_12_13_1_is_a_run_worth_26_where_allowed(rules: RuleSet) -> None:
    meld = group("R12 R13 R1", rules)
    assert meld.kind is MeldKind.RUN
    assert stands(meld) == ["R12", "R13", "R1"]
    assert (meld.low, meld.high) == (12, HIGH_ONE)
    assert meld.value == 26  # the 1 counts 1
    assert group("R11 R12 R13 R1", rules).value == 37
    for names in ("R1 R12 R13", "R1 R13 R12"):
        assert group(names, rules).value == 26


@pytest.mark.parametrize("rules", WRAPPING, ids=lambda rules: rules.name)
def test_an_okey_after_13_is_the_1_where_allowed(rules: RuleSet) -> None:
    meld = group("B12 B13 OK", rules)
    assert stands(meld) == ["B12", "B13", "B1"]
    assert meld.value == 26
    meld = group("B12 OK B1", rules)
    assert stands(meld) == ["B12", "B13", "B1"]
    assert meld.value == 26


@pytest.mark.parametrize("rules", PRESETS, ids=lambda rules: rules.name)
@pytest.mark.parametrize(
    "names", ["R13 R1 R2", "R12 R13 R1 R2", "R13 R1 R2 R3", "R13 OK R2", "R2 R1 R13"]
)
def test_13_1_2_is_never_a_run(rules: RuleSet, names: str) -> None:
    with pytest.raises(RuleViolation) as caught:
        group(names, rules)
    assert caught.value.code == "RUN_13_1_2"
    assert "13-1-2" in str(caught.value)


@pytest.mark.parametrize("rules", WRAPPING, ids=lambda rules: rules.name)
def test_nothing_follows_the_1_of_12_13_1(rules: RuleSet) -> None:
    assert refused("R12 R13 R1 OK", rules) == "RUN_13_1_2"


@pytest.mark.parametrize("rules", PRESETS, ids=lambda rules: rules.name)
@pytest.mark.parametrize("names", ["OK R1 R2", "R2 R1 OK", "OK OK R1 R2", "OK R1 R2 R3"])
def test_no_okey_goes_below_the_1(rules: RuleSet, names: str) -> None:
    with pytest.raises(RuleViolation) as caught:
        group(names, rules)
    assert caught.value.code == "RUN_OUT_OF_RANGE"


@pytest.mark.parametrize(
    ("names", "code"),
    [
        ("R3 R5 R7", "NOT_A_MELD"),
        ("R3 R4 R6", "NOT_A_MELD"),
        ("R3 Y4 B5", "NOT_A_MELD"),
        ("R3 R4 B5", "NOT_A_MELD"),
        ("R5 R5 R6", "NOT_A_MELD"),
        ("R3 OK R6", "NOT_A_MELD"),
        ("R3 B4 OK", "NOT_A_MELD"),
        ("R3 R4", "NOT_A_PAIR"),
        ("R3", "MELD_TOO_SHORT"),
    ],
)
def test_groups_that_are_nothing(names: str, code: str) -> None:
    assert refused(names) == code


def test_make_meld_needs_three_tiles() -> None:
    tiles, okey = build("R7 R7")
    with pytest.raises(RuleViolation) as caught:
        make_meld(tiles, okey, OYNA)
    assert caught.value.code == "MELD_TOO_SHORT"
    with pytest.raises(RuleViolation):
        make_meld([], okey, OYNA)


def test_a_false_joker_stands_as_the_okeys_face_in_a_run() -> None:
    # Indicator Y5: the okey is Yellow 6, and a false joker is a Yellow 6.
    meld = group("Y5 FJ Y7")
    assert meld.kind is MeldKind.RUN
    assert stands(meld) == ["Y5", "Y6", "Y7"]
    assert meld.wild == (False, False, False)
    assert meld.value == 18
    assert stands(group("FJ Y7 Y8")) == ["Y6", "Y7", "Y8"]
    assert stands(group("Y7 FJ Y5")) == ["Y5", "Y6", "Y7"]


def test_a_false_joker_is_not_wild() -> None:
    assert refused("R5 FJ R7") == "NOT_A_MELD"
    assert refused("Y5 FJ Y8") == "NOT_A_MELD"
    # With another indicator the false joker is another tile.
    meld = group("R5 FJ R7", indicator="R5")
    assert stands(meld) == ["R5", "R6", "R7"]
    assert meld.wild == (False, False, False)


def test_a_false_joker_and_an_okey_in_one_run() -> None:
    meld = group("Y4 Y5 FJ OK")
    assert stands(meld) == ["Y4", "Y5", "Y6", "Y7"]
    assert meld.wild == (False, False, False, True)
    assert meld.value == 22


# --- Sets ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("names", ["R9 B9 K9", "K9 R9 B9", "B9 K9 R9"])
def test_a_three_tile_set(names: str) -> None:
    meld = group(names)
    assert meld.kind is MeldKind.SET
    assert meld.number == 9
    assert meld.colour is None
    assert meld.set_colours() == {Colour.RED, Colour.BLUE, Colour.BLACK}
    assert sorted(stands(meld)) == ["B9", "K9", "R9"]  # type: ignore[type-var]
    assert meld.value == 27


def test_a_four_tile_set() -> None:
    meld = group("R9 Y9 B9 K9")
    assert meld.kind is MeldKind.SET
    assert meld.set_colours() == set(Colour)
    assert meld.value == 36


@pytest.mark.parametrize(
    ("names", "tile"), [("R9 R9 B9", "R9"), ("R9 B9 R9 K9", "R9"), ("R9 B9 OK B9", "B9")]
)
def test_a_set_repeating_a_colour_is_refused(names: str, tile: str) -> None:
    with pytest.raises(RuleViolation) as caught:
        group(names)
    assert caught.value.code == "SET_REPEATS_COLOUR"
    assert caught.value.params == {"tile": tile}
    assert tile in str(caught.value)


@pytest.mark.parametrize("names", ["R9 Y9 B9 K9 R9", "R9 Y9 B9 K9 OK", "R9 Y9 B9 OK OK"])
def test_a_set_has_at_most_four_tiles(names: str) -> None:
    assert refused(names) == "SET_TOO_LONG"


def test_a_set_mixing_numbers_is_nothing() -> None:
    assert refused("R9 B9 K8") == "NOT_A_MELD"
    assert refused("R9 B8 OK") == "NOT_A_MELD"


def test_an_okey_in_a_three_tile_set_is_undecided() -> None:
    meld = group("R9 B9 OK")
    assert meld.kind is MeldKind.SET
    assert stands(meld) == ["R9", "B9", None]
    assert meld.wild == (False, False, True)
    assert meld.number == 9
    assert meld.set_colours() == {Colour.RED, Colour.BLUE}
    assert meld.value == 27  # the okey still counts 9


@pytest.mark.parametrize("colour", ["Y9", "K9"])
def test_okey_as_decides_an_undecided_okey(colour: str) -> None:
    meld = group("R9 B9 OK", okey_as=[f(colour)])
    assert stands(meld) == ["R9", "B9", colour]
    assert meld.value == 27
    assert meld.set_colours() == {Colour.RED, Colour.BLUE, face_colour(f(colour))}


@pytest.mark.parametrize("bad", ["R9", "B9", "Y8", "Y10", "K1"])
def test_okey_as_must_be_a_missing_colour_of_the_sets_number(bad: str) -> None:
    with pytest.raises(RuleViolation) as caught:
        group("R9 B9 OK", okey_as=[f(bad)])
    assert caught.value.code == "BAD_OKEY_AS"
    assert caught.value.params == {"tile": bad}


def test_a_four_tile_set_with_one_okey_decides_its_colour() -> None:
    meld = group("R9 Y9 OK B9")
    assert stands(meld) == ["R9", "Y9", "K9", "B9"]
    assert meld.value == 36
    assert meld.set_colours() == set(Colour)
    assert stands(group("R9 Y9 OK B9", okey_as=[f("K9")])) == ["R9", "Y9", "K9", "B9"]
    assert refused("R9 Y9 OK B9", okey_as=[f("R9")]) == "BAD_OKEY_AS"


def test_two_okeys_in_a_four_tile_set_take_the_two_missing_colours() -> None:
    meld = group("R9 OK B9 OK")
    assert meld.kind is MeldKind.SET
    assert stands(meld)[0::2] == ["R9", "B9"]
    assert sorted(stands(meld)[1::2]) == ["K9", "Y9"]  # type: ignore[type-var]
    assert meld.value == 36


def test_okey_as_can_choose_the_set_reading() -> None:
    # R5 OK OK is the run 5-6-7 unless the okeys are said to be 5s.
    meld = group("R5 OK OK", okey_as=[f("Y5"), f("B5")])
    assert meld.kind is MeldKind.SET
    assert stands(meld) == ["R5", "Y5", "B5"]
    assert meld.value == 15
    assert refused("R5 OK OK", okey_as=[f("Y5"), f("Y5")]) == "BAD_OKEY_AS"


def test_okey_as_on_a_run_must_match_the_place() -> None:
    assert stands(group("B5 B6 OK", okey_as=[f("B7")])) == ["B5", "B6", "B7"]
    assert stands(group("OK B5 B6", okey_as=[f("B4")])) == ["B4", "B5", "B6"]
    with pytest.raises(RuleViolation) as caught:
        group("B5 B6 OK", okey_as=[f("B4")])
    assert caught.value.code == "BAD_OKEY_AS"
    assert caught.value.params == {"tile": "B4"}
    assert "B4" in str(caught.value)


def test_okey_as_without_okeys_changes_nothing() -> None:
    meld = group("R3 R4 R5", okey_as=[])
    assert stands(meld) == ["R3", "R4", "R5"]


@pytest.mark.parametrize(
    ("names", "okey_as"),
    [
        ("R9 B9 OK", []),  # one okey, no face
        ("R9 B9 OK", ["Y9", "K9"]),  # one okey, two faces
        ("R3 R4 R5", ["R6"]),  # no okey at all
        ("R5 OK OK", ["R6"]),  # two okeys, one face
    ],
)
def test_okey_as_must_name_one_face_per_okey(names: str, okey_as: list[str]) -> None:
    with pytest.raises(InvalidInput) as caught:
        group(names, okey_as=[f(name) for name in okey_as])
    assert caught.value.code == "BAD_OKEY_AS"


@pytest.mark.parametrize("face", [FALSE_JOKER_FACE, -1, 53, 104, 1000])
def test_okey_as_must_be_a_coloured_face(face: int) -> None:
    # A set of 1s: the false joker's face index (52) reads as "a 1" by arithmetic.
    for names in ("R1 B1 OK", "R9 B9 OK", "B5 B6 OK"):
        with pytest.raises(InvalidInput) as caught:
            group(names, okey_as=[face])
        assert caught.value.code == "BAD_OKEY_AS"
        assert caught.value.params == {"tile": str(face)}


def test_okey_as_on_a_group_that_is_no_meld_gives_the_real_reason() -> None:
    assert refused("R9 R9 B9 OK", okey_as=[f("K9")]) == "SET_REPEATS_COLOUR"
    assert refused("R12 R13 OK", okey_as=[f("R1")]) == "RUN_WRAPS_AROUND"
    assert refused("R3 B5 OK", okey_as=[f("R4")]) == "NOT_A_MELD"


def test_a_false_joker_in_a_set_is_the_okeys_colour() -> None:
    # Okey Yellow 6: the false joker is the set's Yellow 6.
    meld = group("R6 FJ B6")
    assert meld.kind is MeldKind.SET
    assert stands(meld) == ["R6", "Y6", "B6"]
    assert meld.set_colours() == {Colour.RED, Colour.YELLOW, Colour.BLUE}
    assert meld.value == 18
    assert refused("R6 FJ B7") == "NOT_A_MELD"
    assert refused("R7 FJ B7") == "NOT_A_MELD"


# --- Pairs --------------------------------------------------------------------------------------


def test_two_identical_tiles_are_a_pair() -> None:
    meld = group("R7 R7")
    assert meld.kind is MeldKind.PAIR
    assert stands(meld) == ["R7", "R7"]
    assert (meld.number, meld.colour) == (7, Colour.RED)
    assert meld.wild == (False, False)
    assert meld.value == 0
    tiles, okey = build("R7 R7")
    assert make_pair(tiles, okey) == meld


@pytest.mark.parametrize("names", ["R7 B7", "R7 R8", "R7 FJ", "FJ Y7", "R7 B7 K7", "R7"])
def test_other_twos_are_not_pairs(names: str) -> None:
    tiles, okey = build(names)
    with pytest.raises(RuleViolation) as caught:
        make_pair(tiles, okey)
    assert caught.value.code == "NOT_A_PAIR"


@pytest.mark.parametrize(("names", "index"), [("OK K3", 0), ("K3 OK", 1)])
def test_an_okey_pairs_with_anything(names: str, index: int) -> None:
    meld = group(names)
    assert meld.kind is MeldKind.PAIR
    assert stands(meld) == ["K3", "K3"]
    assert meld.wild[index] and not meld.wild[1 - index]
    assert (meld.number, meld.colour) == (3, Colour.BLACK)


def test_two_okeys_pair() -> None:
    meld = group("OK OK")
    assert meld.kind is MeldKind.PAIR
    assert stands(meld) == ["Y6", "Y6"]
    assert meld.wild == (True, True)


def test_two_false_jokers_pair() -> None:
    meld = group("FJ FJ")
    assert meld.kind is MeldKind.PAIR
    assert stands(meld) == ["Y6", "Y6"]
    assert meld.wild == (False, False)


@pytest.mark.parametrize("names", ["FJ OK", "OK FJ"])
def test_a_false_joker_pairs_with_the_okey(names: str) -> None:
    meld = group(names)
    assert meld.kind is MeldKind.PAIR
    assert stands(meld) == ["Y6", "Y6"]
    assert sum(meld.wild) == 1


# --- Values -------------------------------------------------------------------------------------


def test_the_worked_opening_is_worth_115() -> None:
    okey = okey_of("Y2")
    allocator = TileAllocator([okey.indicator])
    melds = [
        make_group(allocator.take_names(names.split()), okey, BOOMBALA)
        for names in ("R10 R11 R12 R13", "K13 B13 Y13", "K9 K10 K11")
    ]
    assert [meld.kind for meld in melds] == [MeldKind.RUN, MeldKind.SET, MeldKind.RUN]
    assert [meld.value for meld in melds] == [46, 39, 30]
    assert sum(meld.value for meld in melds) == 115


def test_an_okey_counts_the_tile_it_stands_for() -> None:
    assert group("R11 R12 OK").value == 36
    assert group("OK R12 R13").value == 36
    assert group("R1 OK R3").value == 6
    assert group("K13 B13 OK").value == 39
    assert group("K13 B13 Y13 OK").value == 52


# --- Properties ---------------------------------------------------------------------------------


@st.composite
def runs(draw: st.DrawFn, allow_okeys: bool = True) -> tuple[list[int], RuleSet, str]:
    """(faces of a run in order, rules, indicator name): runs up to 12-13-1 where allowed."""
    rules = draw(st.sampled_from(PRESETS))
    colour = draw(st.sampled_from(list(Colour)))
    top = 14 if rules.run_may_end_12_13_1 else 13
    low = draw(st.integers(min_value=1, max_value=top - 2))
    high = draw(st.integers(min_value=low + 2, max_value=top))
    if high == 14 and low == 1:
        low = 2  # 1-...-13-1 would need the 1 twice
    places = list(range(low, high + 1))
    faces = [face_of(colour, 1 if place == 14 else place) for place in places]
    indicator = face_name(draw(st.integers(min_value=0, max_value=51)))
    return faces, rules, indicator


def substitute(
    draw: st.DrawFn, faces: list[int], okey: Okey, allocator: TileAllocator
) -> list[Tile]:
    """Tiles for ``faces``; some replaced by okeys (at most two), the okey's own face by an okey
    or a false joker. At least one tile stays real."""
    okey_positions = set(
        draw(st.lists(st.sampled_from(range(len(faces))), max_size=2, unique=True))
    )
    joker_positions: set[int] = set()
    for index, face in enumerate(faces):
        if face == okey.face and index not in okey_positions:
            (joker_positions if draw(st.booleans()) else okey_positions).add(index)
    assume(len(okey_positions) <= 2 and len(okey_positions) < len(faces))
    return [
        allocator.take(
            okey.face
            if index in okey_positions
            else FALSE_JOKER_FACE
            if index in joker_positions
            else face
        )
        for index, face in enumerate(faces)
    ]


@settings(max_examples=300, deadline=None)
@given(st.data(), runs())
def test_random_runs_are_accepted_at_their_value(
    data: st.DataObject, run: tuple[list[int], RuleSet, str]
) -> None:
    faces, rules, indicator = run
    okey = okey_of(indicator)
    allocator = TileAllocator([okey.indicator])
    tiles = substitute(data.draw, faces, okey, allocator)
    okey_positions = {i for i, tile in enumerate(tiles) if okey.is_wild(tile)}
    meld = make_group(tiles, okey, rules)
    expected = sum(face_number(face) for face in faces)
    stood = sum(meld.number if face is None else face_number(face) for face in meld.stands_for)
    assert meld.value == stood
    assert meld.wild == tuple(okey.is_wild(tile) for tile in meld.tiles)
    if len(faces) - len(okey_positions) >= 2:
        # Two real tiles of one colour and different numbers: only the run reading exists.
        assert meld.kind is MeldKind.RUN
        assert meld.tiles == tuple(tiles)
        assert list(meld.stands_for) == faces
        assert meld.value == expected
        assert meld.colour is face_colour(faces[0])
    else:
        # One real tile and two okeys: the run, or a set worth more.
        assert meld.value >= expected


@settings(max_examples=300, deadline=None)
@given(
    st.data(),
    st.sampled_from(PRESETS),
    st.integers(min_value=1, max_value=13),
    st.lists(st.sampled_from(list(Colour)), min_size=3, max_size=4, unique=True),
    st.integers(min_value=0, max_value=51),
)
def test_random_sets_are_accepted_at_their_value(
    data: st.DataObject,
    rules: RuleSet,
    number: int,
    colours: list[Colour],
    indicator_face: int,
) -> None:
    okey = okey_of(face_name(indicator_face))
    allocator = TileAllocator([okey.indicator])
    faces = [face_of(colour, number) for colour in colours]
    tiles = substitute(data.draw, faces, okey, allocator)
    meld = make_group(tiles, okey, rules)
    real = [i for i, tile in enumerate(tiles) if not okey.is_wild(tile)]
    stood = sum(meld.number if face is None else face_number(face) for face in meld.stands_for)
    assert meld.value == stood
    if len(real) >= 2:
        assert meld.kind is MeldKind.SET
        assert meld.number == number
        assert meld.value == number * len(faces)
        for i in real:
            assert meld.stands_for[i] == faces[i]
        decided = [face for face in meld.stands_for if face is not None]
        assert len(set(decided)) == len(decided)  # no colour twice
        if len(faces) == 4:
            assert set(meld.stands_for) == set(faces)  # a four-tile set decides every okey
        elif len(real) == 2:
            assert meld.stands_for[next(i for i in range(3) if i not in real)] is None
    else:
        assert meld.value >= number * len(faces)


@settings(max_examples=200, deadline=None)
@given(runs(), st.randoms(use_true_random=False))
def test_a_shuffled_run_without_okeys_is_the_same_run(
    run: tuple[list[int], RuleSet, str], rng: random.Random
) -> None:
    faces, rules, indicator = run
    okey = okey_of(indicator)
    assume(okey.face not in faces)
    # 2-...-13-1 and 1-...-13 are the same tiles: the order of 12-13-1 is then ambiguous.
    assume(not (meld_ends_high(faces) and face_of(face_colour(faces[0]), 2) in faces))
    tiles = [copies_of(face)[0] for face in faces]
    shuffled = tiles[:]
    rng.shuffle(shuffled)
    meld = make_group(shuffled, okey, rules)
    assert meld.kind is MeldKind.RUN
    assert meld.stands_for == tuple(faces)
    assert sorted(t.id for t in meld.tiles) == sorted(t.id for t in tiles)
    assert (meld.low, meld.high) == (
        face_number(faces[0]),
        face_number(faces[0]) + len(faces) - 1,
    )
    assert meld.value == sum(face_number(face) for face in faces)
    assert meld.wild == (False,) * len(faces)


def meld_ends_high(faces: list[int]) -> bool:
    return face_number(faces[-1]) == 1 and len(faces) > 1 and face_number(faces[-2]) == 13
