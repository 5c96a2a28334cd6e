"""Tiles, faces, notation, the indicator and the okey (oyna's rule text: "Tiles, the indicator
and the okey"; docs/rules.md)."""

from __future__ import annotations

import pickle
import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okey101.engine.errors import InvalidInput
from okey101.engine.tiles import (
    ALL_TILES,
    FALSE_JOKER_FACE,
    TILE_COUNT,
    Colour,
    Okey,
    Tile,
    TileAllocator,
    copies_of,
    face_colour,
    face_name,
    face_number,
    face_of,
    next_number,
    parse_face,
    tile_by_id,
    tiles_from_names,
)

COLOURED_FACES = range(52)
ALL_FACES = range(53)


def tile(name: str, copy: int = 0) -> Tile:
    return copies_of(parse_face(name))[copy]


# --- The 106 tiles and their ids ----------------------------------------------------------------


def test_the_set_has_106_tiles_with_ids_0_to_105_in_order() -> None:
    assert TILE_COUNT == 106
    assert len(ALL_TILES) == 106
    assert [t.id for t in ALL_TILES] == list(range(106))
    assert len(set(ALL_TILES)) == 106


def test_every_coloured_face_has_exactly_two_copies_and_there_are_two_false_jokers() -> None:
    faces = Counter(t.face for t in ALL_TILES)
    assert faces[FALSE_JOKER_FACE] == 2
    assert {face: count for face, count in faces.items() if face != FALSE_JOKER_FACE} == {
        face: 2 for face in COLOURED_FACES
    }
    colours = Counter(t.colour for t in ALL_TILES)
    assert colours == {**{colour: 26 for colour in Colour}, None: 2}
    numbers = Counter(t.number for t in ALL_TILES)
    assert numbers == {**{n: 8 for n in range(1, 14)}, None: 2}


@pytest.mark.parametrize("face", COLOURED_FACES)
def test_tile_id_is_face_times_two_plus_copy(face: int) -> None:
    first, second = copies_of(face)
    assert (first.id, second.id) == (face * 2, face * 2 + 1)
    for copy, t in enumerate((first, second)):
        assert t.face == face
        assert t.copy == copy
        assert not t.is_false_joker
        assert t.colour == face_colour(face)
        assert t.number == face_number(face)
        assert tile_by_id(face * 2 + copy) is t
        assert str(t) == face_name(face)
        assert repr(t) == f"Tile({face_name(face)}#{copy})"


def test_face_index_is_colour_times_13_plus_number_minus_1() -> None:
    assert face_of(Colour.RED, 1) == 0
    assert face_of(Colour.RED, 13) == 12
    assert face_of(Colour.YELLOW, 1) == 13
    assert face_of(Colour.BLUE, 7) == 2 * 13 + 6
    assert face_of(Colour.BLACK, 13) == 51
    for face in COLOURED_FACES:
        assert face_of(face_colour(face), face_number(face)) == face


def test_false_jokers_are_104_and_105() -> None:
    jokers = copies_of(FALSE_JOKER_FACE)
    assert [t.id for t in jokers] == [104, 105]
    for copy, joker in enumerate(jokers):
        assert joker.is_false_joker
        assert joker.face == FALSE_JOKER_FACE
        assert joker.copy == copy
        assert joker.colour is None
        assert joker.number is None
        assert str(joker) == "FJ"
    assert [t.id for t in ALL_TILES if t.is_false_joker] == [104, 105]


@pytest.mark.parametrize("bad_id", [-1, 106, 107, 1000])
def test_tile_by_id_refuses_ids_outside_the_set(bad_id: int) -> None:
    with pytest.raises(InvalidInput) as caught:
        tile_by_id(bad_id)
    assert caught.value.code == "UNKNOWN_TILE"
    assert caught.value.params == {"tile": str(bad_id)}


def test_tiles_order_by_id_and_survive_pickling() -> None:
    assert sorted([tile_by_id(9), tile_by_id(3), tile_by_id(105)]) == [
        tile_by_id(3),
        tile_by_id(9),
        tile_by_id(105),
    ]
    for t in (tile_by_id(0), tile_by_id(51), tile_by_id(104)):
        assert pickle.loads(pickle.dumps(t)) == t


# --- Notation -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "colour", "number"),
    [
        ("R7", Colour.RED, 7),
        ("Y5", Colour.YELLOW, 5),
        ("B13", Colour.BLUE, 13),
        ("K1", Colour.BLACK, 1),
        ("K13", Colour.BLACK, 13),
    ],
)
def test_letters_name_the_colours(name: str, colour: Colour, number: int) -> None:
    face = parse_face(name)
    assert face == face_of(colour, number)
    assert face_colour(face) is colour
    assert face_number(face) == number
    assert colour.letter == name[0]


def test_false_joker_notation() -> None:
    assert parse_face("FJ") == FALSE_JOKER_FACE
    assert face_name(FALSE_JOKER_FACE) == "FJ"


@pytest.mark.parametrize("face", ALL_FACES)
def test_notation_round_trips(face: int) -> None:
    name = face_name(face)
    assert re.fullmatch(r"[RYBK](?:[1-9]|1[0-3])|FJ", name)
    assert parse_face(name) == face
    assert face_name(parse_face(name)) == name


def test_every_name_is_distinct() -> None:
    assert len({face_name(face) for face in ALL_FACES}) == 53


@pytest.mark.parametrize(("text", "name"), [("r7", "R7"), (" K13 ", "K13"), ("fj", "FJ")])
def test_notation_ignores_case_and_surrounding_space(text: str, name: str) -> None:
    assert face_name(parse_face(text)) == name


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "R",
        "7",
        "R0",
        "R14",
        "R99",
        "X7",
        "G5",
        "7R",
        "RR7",
        "R 7",
        "R-1",
        "R+7",
        "R7.0",
        "R7a",
        "FJ1",
        "F",
        "J",
        "JOKER",
        "OKEY",
        "R\u00b2",  # superscript two: str.isdigit() says yes, int() says no
        "R\u0667",  # Arabic-Indic seven
        "R\uff17",  # fullwidth seven
    ],
)
def test_bad_notation_is_refused_with_unknown_tile(text: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_face(text)
    error = caught.value
    assert error.code == "UNKNOWN_TILE"
    assert error.params == {"tile": text}
    assert f"'{text}'" in error.message("en")
    assert f"'{text}'" in error.message("tr")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=6))
def test_any_text_is_a_face_or_unknown_tile(text: str) -> None:
    try:
        face = parse_face(text)
    except InvalidInput as error:
        assert error.code == "UNKNOWN_TILE"
        return
    assert face in ALL_FACES
    token = text.strip().upper()
    # Only the canonical spelling (give or take leading zeros) is read.
    if face == FALSE_JOKER_FACE:
        assert token == "FJ"
    else:
        assert token[0] + str(int(token[1:])) == face_name(face)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from("RYBKrybk"), st.integers(min_value=-5, max_value=30))
def test_numbers_outside_1_to_13_are_refused(letter: str, number: int) -> None:
    text = f"{letter}{number}"
    if 1 <= number <= 13:
        assert face_name(parse_face(text)) == f"{letter.upper()}{number}"
    else:
        with pytest.raises(InvalidInput) as caught:
            parse_face(text)
        assert caught.value.code == "UNKNOWN_TILE"


# --- Copies: never a third ----------------------------------------------------------------------


def test_two_copies_are_handed_out_then_a_third_is_refused() -> None:
    first, second = tiles_from_names(["R7", "R7"])
    assert {first.id, second.id} == {t.id for t in copies_of(parse_face("R7"))}
    with pytest.raises(InvalidInput) as caught:
        tiles_from_names(["R7", "B2", "R7", "R7"])
    assert caught.value.code == "TOO_MANY_COPIES"
    assert caught.value.params == {"tile": "R7"}
    assert "R7" in caught.value.message()


def test_the_indicator_counts_as_a_copy() -> None:
    indicator = tile("Y5", 1)
    (other,) = tiles_from_names(["Y5"], used=[indicator])
    assert other.id == tile("Y5", 0).id
    with pytest.raises(InvalidInput) as caught:
        tiles_from_names(["Y5", "Y5"], used=[indicator])
    assert caught.value.code == "TOO_MANY_COPIES"
    assert caught.value.params == {"tile": "Y5"}
    assert "indicator" in caught.value.message("en")
    assert "gösterge" in caught.value.message("tr")


def test_false_jokers_two_and_no_more() -> None:
    jokers = tiles_from_names(["FJ", "fj"])
    assert sorted(t.id for t in jokers) == [104, 105]
    with pytest.raises(InvalidInput) as caught:
        tiles_from_names(["FJ", "FJ", "FJ"])
    assert caught.value.code == "TOO_MANY_COPIES"
    assert caught.value.params == {"tile": "FJ"}


def test_allocator_tracks_what_remains() -> None:
    allocator = TileAllocator([tile("K13")])
    assert len(allocator.remaining()) == 105
    taken = allocator.take_names(["R1", "R1", "FJ"])
    assert len({t.id for t in taken}) == 3
    remaining = allocator.remaining()
    assert len(remaining) == 102
    assert [t.id for t in remaining] == sorted(t.id for t in remaining)
    assert not {t.id for t in remaining} & {*(t.id for t in taken), tile("K13").id}
    with pytest.raises(InvalidInput) as caught:
        allocator.take(parse_face("R1"))
    assert caught.value.code == "TOO_MANY_COPIES"
    # A refused take takes nothing.
    assert len(allocator.remaining()) == 102


def test_allocator_refuses_unknown_names() -> None:
    with pytest.raises(InvalidInput) as caught:
        tiles_from_names(["R7", "R17"])
    assert caught.value.code == "UNKNOWN_TILE"
    assert caught.value.params == {"tile": "R17"}


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(ALL_FACES), max_size=40))
def test_allocator_hands_each_copy_out_once(faces: list[int]) -> None:
    allocator = TileAllocator()
    handed: list[Tile] = []
    counts: Counter[int] = Counter()
    for face in faces:
        counts[face] += 1
        if counts[face] > 2:
            with pytest.raises(InvalidInput):
                allocator.take(face)
        else:
            t = allocator.take(face)
            assert t.face == face
            handed.append(t)
    assert len({t.id for t in handed}) == len(handed)
    assert len(allocator.remaining()) == 106 - len(handed)


# --- The indicator and the okey -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("indicator", "okey"),
    [("Y5", "Y6"), ("B13", "B1"), ("R1", "R2"), ("K12", "K13"), ("K13", "K1"), ("R13", "R1")],
)
def test_the_okey_is_the_next_number_in_the_indicators_colour(indicator: str, okey: str) -> None:
    for copy in (0, 1):
        assert face_name(Okey(tile(indicator, copy)).face) == okey


@pytest.mark.parametrize("face", COLOURED_FACES)
def test_every_indicator_makes_an_okey_of_its_colour(face: int) -> None:
    okey = Okey(copies_of(face)[0])
    assert face_colour(okey.face) is face_colour(face)
    number = face_number(face)
    assert face_number(okey.face) == (1 if number == 13 else number + 1)
    assert okey.face != face


def test_next_number_wraps_13_to_1() -> None:
    assert [next_number(n) for n in range(1, 14)] == [*range(2, 14), 1]


@pytest.mark.parametrize("face", COLOURED_FACES)
def test_exactly_the_two_okeys_are_wild(face: int) -> None:
    okey = Okey(copies_of(face)[1])
    wild = [t for t in ALL_TILES if okey.is_wild(t)]
    assert wild == list(copies_of(okey.face))
    assert not okey.is_wild(okey.indicator)
    assert not any(okey.is_wild(joker) for joker in copies_of(FALSE_JOKER_FACE))


@pytest.mark.parametrize("face", COLOURED_FACES)
def test_a_false_joker_plays_as_the_okeys_face(face: int) -> None:
    okey = Okey(copies_of(face)[0])
    for joker in copies_of(FALSE_JOKER_FACE):
        assert okey.plays_as(joker) == okey.face
        assert okey.plays_as(joker) != FALSE_JOKER_FACE
        assert not okey.is_wild(joker)


def test_false_joker_with_indicator_yellow_5_is_a_yellow_6() -> None:
    okey = Okey(tile("Y5"))
    assert face_name(okey.plays_as(tile("FJ"))) == "Y6"
    assert face_name(okey.plays_as(tile("FJ", 1))) == "Y6"


def test_ordinary_tiles_play_as_their_own_face() -> None:
    okey = Okey(tile("Y5"))
    for t in ALL_TILES[:104]:
        assert okey.plays_as(t) == t.face


@pytest.mark.parametrize("joker_id", [104, 105])
def test_an_indicator_cannot_be_a_false_joker(joker_id: int) -> None:
    with pytest.raises(InvalidInput) as caught:
        Okey(tile_by_id(joker_id))
    assert caught.value.code == "INDICATOR_IS_FALSE_JOKER"
    assert caught.value.message("en") == "The indicator is never a false joker."
