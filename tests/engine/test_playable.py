"""Playable tiles (işlek): the tiles a run or a set on the table could take, whose discard costs
+101."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okey101.engine.errors import RuleViolation
from okey101.engine.melds import Meld, MeldKind, make_group, make_meld
from okey101.engine.rules import RuleSet
from okey101.engine.solver.playability import is_playable, playable_faces, playable_tiles
from okey101.engine.tiles import (
    ALL_TILES,
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


class Table:
    """Melds written as ``"B4 OK B6"`` (OK: an okey), with the okey of ``indicator``."""

    def __init__(self, indicator: str = "Y5", rules: RuleSet = OYNA) -> None:
        self.okey = Okey(copies_of(parse_face(indicator))[0])
        self.rules = rules
        self.allocator = TileAllocator([self.okey.indicator])
        self.melds: list[Meld] = []

    def tiles(self, names: str) -> list[Tile]:
        return [
            self.allocator.take(self.okey.face if name == "OK" else parse_face(name))
            for name in names.split()
        ]

    def add(self, names: str, okey_as: list[str] | None = None) -> Meld:
        meld = make_group(
            self.tiles(names),
            self.okey,
            self.rules,
            okey_as=None if okey_as is None else [parse_face(name) for name in okey_as],
        )
        self.melds.append(meld)
        return meld

    def playable(self) -> set[str]:
        return set(playable_tiles(self.melds, self.rules))

    def is_playable(self, name: str) -> bool:
        """Whether discarding a tile of that name (a fresh copy; OK: an okey) costs +101."""
        if name == "OK":
            tile = next(t for t in ALL_TILES if self.okey.is_wild(t))
        else:
            tile = copies_of(parse_face(name))[1]
        return is_playable(tile, self.okey, self.melds, self.rules)


def test_the_worked_example() -> None:
    # The okey is Yellow 6; on the table Blue 4 - okey - Blue 6 and Red, Yellow, Blue 8.
    table = Table("Y5")
    run = table.add("B4 OK B6")
    assert [face_name(face) for face in run.stands_for if face is not None] == ["B4", "B5", "B6"]
    table.add("R8 Y8 B8")
    for name in ("B3", "B7", "K8"):
        assert table.is_playable(name), name
    for name in ("B5", "R2"):
        assert not table.is_playable(name), name
    assert table.playable() == {"B3", "B7", "K8"}


def test_an_empty_table_makes_nothing_playable() -> None:
    assert playable_faces([], OYNA) == frozenset()
    assert playable_tiles([], OYNA) == frozenset()


def test_playable_tiles_names_the_faces() -> None:
    table = Table()
    table.add("K3 K4 K5")
    assert playable_tiles(table.melds, OYNA) == {
        face_name(face) for face in playable_faces(table.melds, OYNA)
    }
    assert playable_faces(table.melds, OYNA) == {parse_face("K2"), parse_face("K6")}


def test_a_run_takes_a_tile_at_either_end_only() -> None:
    table = Table()
    table.add("R5 R6 R7 R8")
    assert table.playable() == {"R4", "R9"}
    for name in ("R5", "R6", "R3", "R10", "B4", "B9", "K9"):
        assert not table.is_playable(name), name


@pytest.mark.parametrize(
    ("names", "playable"),
    [("B4 B5 OK", {"B3", "B7"}), ("OK B4 B5", {"B2", "B6"}), ("B5 B4 OK", {"B2", "B6"})],
)
def test_an_okey_at_the_end_of_a_run_moves_the_end(names: str, playable: set[str]) -> None:
    table = Table()
    table.add(names)
    assert table.playable() == playable


def test_the_tile_an_okey_stands_for_in_a_run_is_not_playable() -> None:
    table = Table()
    table.add("K7 OK K9 K10")
    assert not table.is_playable("K8")
    assert table.playable() == {"K6", "K11"}


def test_a_three_tile_set_takes_its_missing_colour() -> None:
    table = Table()
    table.add("R9 B9 K9")
    assert table.playable() == {"Y9"}
    assert table.is_playable("Y9")
    assert not table.is_playable("R9")
    assert not table.is_playable("Y10")


@pytest.mark.parametrize(
    ("names", "okey_as", "playable"),
    [
        ("R9 B9 OK", None, {"Y9", "K9"}),
        ("R9 B9 OK", ["Y9"], {"Y9", "K9"}),  # a decided okey still closes no colour
        ("R9 B9 OK", ["K9"], {"Y9", "K9"}),
        ("R9 OK OK", ["Y9", "B9"], {"Y9", "B9", "K9"}),
    ],
)
def test_a_three_tile_set_with_an_okey_takes_every_colour_its_real_tiles_lack(
    names: str, okey_as: list[str] | None, playable: set[str]
) -> None:
    table = Table()
    meld = table.add(names, okey_as)
    assert meld.kind is MeldKind.SET
    assert table.playable() == playable
    assert not table.is_playable("R9")


@pytest.mark.parametrize("names", ["R9 Y9 B9 K9", "R9 Y9 B9 OK", "OK Y9 B9 K9", "R9 OK B9 OK"])
def test_a_four_tile_set_takes_nothing(names: str) -> None:
    table = Table()
    meld = table.add(names)
    assert meld.kind is MeldKind.SET
    assert table.playable() == set()
    for colour in "RYBK":
        assert not table.is_playable(f"{colour}9")


def test_the_colour_an_okey_stands_for_in_a_four_tile_set_is_not_playable() -> None:
    table = Table()
    meld = table.add("R9 Y9 OK B9")
    assert face_name(meld.stands_for[2]) == "K9"  # type: ignore[arg-type]
    assert not table.is_playable("K9")


@pytest.mark.parametrize("rules", PRESETS, ids=lambda rules: rules.name)
def test_the_1_after_11_12_13_only_where_12_13_1_is_a_run(rules: RuleSet) -> None:
    table = Table(rules=rules)
    table.add("R11 R12 R13")
    expected = {"R10", "R1"} if rules.run_may_end_12_13_1 else {"R10"}
    assert table.playable() == expected
    assert table.is_playable("R1") is rules.run_may_end_12_13_1
    assert not table.is_playable("B1")
    assert not table.is_playable("R2")


@pytest.mark.parametrize("rules", WRAPPING, ids=lambda rules: rules.name)
def test_nothing_follows_the_1_of_12_13_1(rules: RuleSet) -> None:
    table = Table(rules=rules)
    table.add("K12 K13 K1")
    assert table.playable() == {"K11"}
    assert not table.is_playable("K2")


@pytest.mark.parametrize("rules", PRESETS, ids=lambda rules: rules.name)
def test_nothing_goes_below_a_run_from_1(rules: RuleSet) -> None:
    table = Table(rules=rules)
    table.add("Y1 Y2 Y3")
    assert table.playable() == {"Y4"}
    assert not table.is_playable("Y13")


def test_a_run_of_1_to_13_where_12_13_1_is_not_a_run_takes_nothing() -> None:
    table = Table(rules=OYNA)
    table.add(" ".join(f"B{n}" for n in range(1, 14)))
    assert table.playable() == set()


@pytest.mark.parametrize("names", ["R7 R7", "OK K5", "OK OK", "FJ FJ", "FJ OK", "B2 OK"])
def test_pairs_never_make_anything_playable(names: str) -> None:
    table = Table()
    meld = table.add(names)
    assert meld.kind is MeldKind.PAIR
    assert table.playable() == set()
    for tile in ALL_TILES:
        assert not is_playable(tile, table.okey, table.melds, OYNA)


def test_a_false_joker_is_playable_exactly_when_the_okeys_face_is() -> None:
    # Okey Yellow 6: a false joker is a Yellow 6.
    table = Table("Y5")
    table.add("Y8 Y9 Y10")
    assert not table.is_playable("FJ")
    table.add("Y3 Y4 Y5")
    assert "Y6" in table.playable()
    assert table.is_playable("FJ")

    table = Table("Y5")
    table.add("R6 B6 K6")
    assert table.playable() == {"Y6"}
    assert table.is_playable("FJ")

    table = Table("R1")  # the okey is Red 2; a false joker is a Red 2
    table.add("Y3 Y4 Y5")
    assert not table.is_playable("FJ")
    table.add("R3 R4 R5")
    assert table.is_playable("FJ")


def test_the_okey_itself_is_never_reported_playable() -> None:
    table = Table("Y5")  # okey Yellow 6
    table.add("Y3 Y4 Y5")
    table.add("R6 B6 K6")
    assert "Y6" in table.playable()  # the face is takeable...
    okeys = [t for t in ALL_TILES if table.okey.is_wild(t)]
    assert len(okeys) == 2
    for okey_tile in okeys:  # ...but the okey's +101 is its own, not a playable tile's
        assert not is_playable(okey_tile, table.okey, table.melds, OYNA)


def test_the_table_is_the_union_of_its_melds() -> None:
    table = Table("K2")
    table.add("B4 OK B6")
    table.add("R8 Y8 B8")
    table.add("OK R12 R13")
    table.add("R1 R1")
    union: set[int] = set()
    for meld in table.melds:
        union |= playable_faces([meld], OYNA)
    assert playable_faces(table.melds, OYNA) == union
    assert table.playable() == {"B3", "B7", "K8", "R10"}


def test_playable_faces_accepts_any_iterable() -> None:
    table = Table()
    table.add("R5 R6 R7")
    assert playable_faces(iter(table.melds), OYNA) == playable_faces(table.melds, OYNA)
    tile = copies_of(parse_face("R8"))[0]
    assert is_playable(tile, table.okey, iter(table.melds), OYNA)


# --- Property: a face is playable exactly when a meld on the table can take it ------------------


def _takes(meld: Meld, face: int, okey: Okey, rules: RuleSet) -> bool:
    """An independent oracle: can ``meld`` be laid off with a tile of ``face``?"""
    tile = copies_of(FALSE_JOKER_FACE)[0] if face == okey.face else copies_of(face)[0]
    if meld.kind is MeldKind.SET:
        if len(meld.tiles) != 3:
            return False
        try:
            bigger = make_meld((*meld.tiles, tile), okey, rules)
        except RuleViolation:
            return False
        return bigger.kind is MeldKind.SET
    if meld.kind is not MeldKind.RUN:
        return False
    for tiles, keep in (((tile, *meld.tiles), slice(1, None)), ((*meld.tiles, tile), slice(-1))):
        try:
            longer = make_meld(tiles, okey, rules)
        except RuleViolation:
            continue
        if longer.kind is MeldKind.RUN and longer.stands_for[keep] == meld.stands_for:
            return True
    return False


@st.composite
def table_melds(draw: st.DrawFn) -> tuple[Meld, Okey, RuleSet]:
    rules = draw(st.sampled_from(PRESETS))
    okey = Okey(copies_of(draw(st.integers(min_value=0, max_value=51)))[0])
    allocator = TileAllocator([okey.indicator])
    if draw(st.booleans()):
        colour = draw(st.sampled_from(list(Colour)))
        top = 14 if rules.run_may_end_12_13_1 else 13
        low = draw(st.integers(min_value=2 if top == 14 else 1, max_value=top - 2))
        high = draw(st.integers(min_value=low + 2, max_value=top))
        faces = [face_of(colour, 1 if place == 14 else place) for place in range(low, high + 1)]
        # At most one okey, never at an end (an okey at the end reads either way round).
        inner = draw(st.sampled_from([None, *range(1, len(faces) - 1)]))
    else:
        number = draw(st.integers(min_value=1, max_value=13))
        colours = draw(st.lists(st.sampled_from(list(Colour)), min_size=3, max_size=4, unique=True))
        faces = [face_of(colour, number) for colour in colours]
        inner = draw(st.sampled_from([None, *range(len(faces))]))
    tiles = []
    for index, face in enumerate(faces):
        if index == inner:
            tiles.append(allocator.take(okey.face))
        elif face == okey.face:
            tiles.append(allocator.take(FALSE_JOKER_FACE))
        else:
            tiles.append(allocator.take(face))
    return make_group(tiles, okey, rules), okey, rules


@settings(max_examples=250, deadline=None)
@given(table_melds())
def test_a_face_is_playable_exactly_when_a_meld_can_take_it(
    case: tuple[Meld, Okey, RuleSet],
) -> None:
    meld, okey, rules = case
    playable = playable_faces([meld], rules)
    for face in range(52):
        assert (face in playable) == _takes(meld, face, okey, rules), face_name(face)
    # And for physical tiles: the okey never, a false joker as the okey's face.
    for tile in (*copies_of(okey.face), *copies_of(FALSE_JOKER_FACE)):
        expected = not okey.is_wild(tile) and okey.face in playable
        assert is_playable(tile, okey, [meld], rules) is expected
    if meld.kind is MeldKind.RUN:
        assert all(face_colour(face) == meld.colour for face in playable)
        assert len(playable) <= 2
    else:
        assert all(face_number(face) == meld.number for face in playable)
