"""Playable tiles (işlek: a discard a meld on the table could take costs +101), and whether a
tile taken from the left can go on the table this turn."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from okey101.engine.melds import HIGH_ONE, Meld, MeldKind
from okey101.engine.rules import RuleSet
from okey101.engine.seat import OpenedAs
from okey101.engine.solver.arrangement import Hand
from okey101.engine.solver.bounds import meldable_faces, quick_tiles_bound, quick_value_bound
from okey101.engine.solver.openings import (
    best_opening,
    distinct_tiles,
    most_tiles_down,
    opening_value_bound,
)
from okey101.engine.solver.pairs import best_pairs, most_pairs_bound
from okey101.engine.tiles import Colour, Okey, Tile, face_colour, face_name, face_number, face_of


def playable_faces(table: Iterable[Meld], rules: RuleSet) -> frozenset[int]:
    """Every face a run or set on the table could take: discarding one costs +101.

    - A run takes the tile below its low end (not below 1) and above its high end (not past 13;
      past 13 the 1, where 12-13-1 is a run). The tile an okey stands for inside a run is not
      playable for that run.
    - A three-tile set takes every missing colour (an okey in it does not close a colour). A
      four-tile set takes nothing: the colour its okey stands for is not playable.
    - Pairs take nothing.
    """
    high_one = rules.run_may_end_12_13_1
    faces: set[int] = set()
    for meld in table:
        faces.update(_meld_playable(meld, high_one))
    return frozenset(faces)


def meld_takes(meld: Meld, rules: RuleSet) -> tuple[int, ...]:
    """The faces ``meld`` could take (``playable_faces`` of it alone): a run's ends, a
    three-tile set's missing colours."""
    return _meld_playable(meld, rules.run_may_end_12_13_1)


# The faces each recent meld takes, by the meld's identity: a move changes one meld of the
# table or none, and every discard asks about the whole table. Entries hold the meld, so an id
# reused by a new object is never mistaken for it. Bounded: cleared when full.
_MELD_FACES: dict[int, tuple[Meld, bool, tuple[int, ...]]] = {}


def _meld_playable(meld: Meld, high_one: bool) -> tuple[int, ...]:
    known = _MELD_FACES.get(id(meld))
    if known is not None and known[0] is meld and known[1] is high_one:
        return known[2]
    faces: list[int] = []
    if meld.kind is MeldKind.RUN:
        colour = meld.colour
        assert colour is not None
        if meld.low > 1:
            faces.append(face_of(colour, meld.low - 1))
        if meld.high < 13 or (meld.high == 13 and high_one):
            faces.append(face_of(colour, 1 if meld.high == 13 else meld.high + 1))
    elif meld.kind is MeldKind.SET and len(meld.tiles) == 3:
        # An okey in a three-tile set closes no colour: the set can still take a fourth.
        shown = {
            face_colour(face)
            for face, wild in zip(meld.stands_for, meld.wild, strict=True)
            if face is not None and not wild
        }
        for colour in Colour:
            if colour not in shown:
                faces.append(face_of(colour, meld.number))
    if len(_MELD_FACES) >= 4096:
        _MELD_FACES.clear()
    _MELD_FACES[id(meld)] = (meld, high_one, tuple(faces))
    return tuple(faces)


def is_playable(tile: Tile, okey: Okey, table: Iterable[Meld], rules: RuleSet) -> bool:
    """Whether discarding ``tile`` costs +101 because a meld on the table could take it.

    The okey itself is not "playable" here (its own +101 is charged separately).
    """
    if okey.is_wild(tile):
        return False
    return okey.plays_as(tile) in playable_faces(table, rules)


def playable_tiles(table: Iterable[Meld], rules: RuleSet) -> frozenset[str]:
    """The faces (``R7``...) whose discard costs +101 at this table, as names."""
    return frozenset(face_name(face) for face in playable_faces(table, rules))


def can_use(
    tile: Tile,
    hand: Hand,
    table: Sequence[Meld],
    opened_as: OpenedAs | None,
    rules: RuleSet,
    *,
    pairs_on_table: bool = False,
) -> bool:
    """Whether a taken tile can go on the table this turn (the rule for the tile on your left).

    ``hand`` is the rack before taking ``tile``. Unopened: open with it (runs and sets worth the
    minimum, or the minimum of pairs) or lay the whole hand down with it. Opened: lay it off
    (after other tiles from the hand, as R8 then R9 on R5-6-7), put it in the place of an okey on
    the table, or make a new meld or pair with it where the opener may. A tile must always be
    left to discard.
    """
    okey = hand.okey
    full = hand.with_tile(tile)
    if opened_as is None:
        minimum = rules.opening_min_points
        if (
            quick_value_bound(full, rules) >= minimum
            and opening_value_bound(full, rules, required=tile, at_least=minimum) >= minimum
            and best_opening(full, rules, required=tile).value >= minimum
        ):
            return True
        if (
            most_pairs_bound(full) >= rules.opening_min_pairs
            and best_pairs(full, required=tile).pair_count >= rules.opening_min_pairs
        ):
            return True
        # The whole hand laid down with it, another tile kept to discard.
        if quick_tiles_bound(full, rules) < len(full.tiles) - 1:
            return False
        down = most_tiles_down(full, rules, required=tile, at_least=len(full.tiles) - 1)
        if down == len(full.tiles) - 1:
            return True
        return down == len(full.tiles) and any(
            most_tiles_down(full.without(keep), rules, required=tile, at_least=len(hand.tiles))
            == len(hand.tiles)
            for keep in distinct_tiles(full)
            if keep.id != tile.id
        )
    may_pair = opened_as is OpenedAs.PAIRS or (
        rules.runs_openers_may_pair_after_pairs_opening and pairs_on_table
    )
    if may_pair and _pairs_with(tile, hand):
        return True
    if opened_as is OpenedAs.RUNS and _in_a_new_meld(tile, hand, rules):
        return True
    if opened_as is OpenedAs.PAIRS and not rules.pairs_opener_may_lay_off:
        return False
    if rules.may_take_okey_back and _replaces_okey(tile, hand, table, rules):
        return True
    return _lays_off(tile, hand, table, rules, okey)


def _in_a_new_meld(tile: Tile, hand: Hand, rules: RuleSet) -> bool:
    """Whether ``tile`` and two or three tiles of ``hand`` make a run or a set, keeping a tile.

    Any arrangement that uses the tile holds a meld with it, and a meld of three (four for a
    set of four) needs no more than the tiles around the tile's own place or number.
    """
    if len(hand.tiles) < 3:
        return False
    okey = hand.okey
    if okey.is_wild(tile):
        return _okey_meld_with(hand, rules)
    face = okey.plays_as(tile)
    _okeys, meldable = meldable_faces(hand.with_tile(tile), rules)
    return any(meldable_face == face for meldable_face, _count in meldable)


def _okey_meld_with(hand: Hand, rules: RuleSet) -> bool:
    """Whether an okey and two tiles of ``hand`` make a run or a set."""
    okey = hand.okey
    if any(okey.is_wild(tile) for tile in hand.tiles):
        return True  # okey, okey and any tile
    top = HIGH_ONE if rules.run_may_end_12_13_1 else 13
    faces = sorted({okey.plays_as(tile) for tile in hand.tiles})
    for index, first in enumerate(faces):
        for second in faces[index + 1 :]:
            if first % 13 == second % 13:
                return True  # two colours of one number and the okey
            if first // 13 != second // 13:
                continue
            for low, high in _places_pairs(first % 13 + 1, second % 13 + 1, top):
                gap = high - low
                if gap == 2 or (gap == 1 and (low > 1 or high < top)):
                    return True
    return False


def _places_pairs(a: int, b: int, top: int) -> list[tuple[int, int]]:
    """The places two numbers of one colour can take in a run (a 1 may also be place 14)."""
    firsts = [a] + ([HIGH_ONE] if a == 1 and top == HIGH_ONE else [])
    seconds = [b] + ([HIGH_ONE] if b == 1 and top == HIGH_ONE else [])
    return [(min(x, y), max(x, y)) for x in firsts for y in seconds if x != y]


def _pairs_with(tile: Tile, hand: Hand) -> bool:
    okey = hand.okey
    if okey.is_wild(tile):
        return len(hand.tiles) >= 2
    face = okey.plays_as(tile)
    partners = [t for t in hand.tiles if okey.is_wild(t) or okey.plays_as(t) == face]
    return bool(partners) and len(hand.tiles) >= 2


def _replaces_okey(tile: Tile, hand: Hand, table: Sequence[Meld], rules: RuleSet) -> bool:
    okey = hand.okey
    if okey.is_wild(tile):
        return False
    face = okey.plays_as(tile)
    for meld in table:
        for stands, wild in zip(meld.stands_for, meld.wild, strict=True):
            if not wild:
                continue
            if meld.kind is MeldKind.SET and len(meld.tiles) == 3:
                if not rules.okey_back_from_three_set:
                    continue
                # Only by completing the set to all four colours: the other missing colour too.
                shown = {
                    face_colour(f)
                    for f, w in zip(meld.stands_for, meld.wild, strict=True)
                    if not w and f is not None
                }
                missing = [face_of(c, meld.number) for c in Colour if c not in shown]
                if face in missing and len(missing) == 2:
                    other = next(f for f in missing if f != face)
                    if any(not okey.is_wild(t) and okey.plays_as(t) == other for t in hand.tiles):
                        return len(hand.tiles) >= 2
                continue
            if stands == face:
                return True
    return False


def _lays_off(tile: Tile, hand: Hand, table: Sequence[Meld], rules: RuleSet, okey: Okey) -> bool:
    """Lay ``tile`` off, after as many hand tiles as it takes to reach it, keeping one."""
    wild = okey.is_wild(tile)
    spare_okeys = sum(1 for t in hand.tiles if okey.is_wild(t))
    hand_faces = {okey.plays_as(t) for t in hand.tiles if not okey.is_wild(t)}
    budget = len(hand.tiles) - 1  # hand tiles that may go down with it
    for meld in table:
        if meld.kind is MeldKind.SET:
            if len(meld.tiles) == 3:
                if wild:
                    return True
                shown = {
                    face_colour(f)
                    for f, w in zip(meld.stands_for, meld.wild, strict=True)
                    if not w and f is not None
                }
                face = okey.plays_as(tile)
                # Any colour its real tiles lack (an okey in a three-tile set closes none).
                if face_number(face) == meld.number and face_colour(face) not in shown:
                    return True
            continue
        if meld.kind is not MeldKind.RUN:
            continue
        colour = meld.colour
        assert colour is not None
        top = 13 + (1 if rules.run_may_end_12_13_1 else 0)
        if wild:
            if meld.low > 1 or meld.high < top:
                return True
            continue
        face = okey.plays_as(tile)
        if face_colour(face) != colour:
            continue
        number = face_number(face)
        targets = [number]
        if number == 1 and rules.run_may_end_12_13_1:
            targets.append(HIGH_ONE)
        for place in targets:
            if place > meld.high and place <= top:
                between = range(meld.high + 1, place)
            elif place < meld.low:
                between = range(place + 1, meld.low)
            else:
                continue
            missing = sum(1 for p in between if _place_face(colour, p) not in hand_faces)
            if len(between) <= budget and missing <= spare_okeys:
                return True
    return False


def _place_face(colour: Colour, place: int) -> int:
    return face_of(colour, 1 if place == HIGH_ONE else place)
