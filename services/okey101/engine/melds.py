"""Runs, sets and pairs, and what each okey in them stands for.

- A run is three or more consecutive numbers of one colour, written low to high. The 1 is the
  lowest tile; where the rule set allows, a run may end 12-13-1 (the 1 counting 1); 13-1-2 is
  never a run. An okey stands for the tile its place implies.
- A set is three or four tiles of one number in different colours. An okey stands for a missing
  colour: given when only one colour is missing, otherwise ambiguous unless stated (``okey_as``).
- A pair is two identical tiles; an okey pairs with anything, two okeys pair, two false jokers
  pair.

A false joker is not wild: it plays as the okey's face (``Okey.plays_as``). Values count what
each tile stands for: a run the sum of its numbers, a set its number times its size.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from okey101.engine.errors import InvalidInput, RuleViolation
from okey101.engine.rules import RuleSet
from okey101.engine.tiles import (
    FACE_COUNT,
    Colour,
    Okey,
    Tile,
    face_colour,
    face_name,
    face_number,
    face_of,
)

HIGH_ONE = 14  # the place of the 1 in 12-13-1


class MeldKind(enum.StrEnum):
    RUN = "run"
    SET = "set"
    PAIR = "pair"


@dataclass(frozen=True, slots=True)
class Meld:
    """A group on the table (or proposed for it).

    ``stands_for[i]`` is the face ``tiles[i]`` plays as: its own face, a false joker's okey
    face, or what an okey replaces. It is ``None`` only for an okey in a set whose colour is
    not decided (a three-tile set with an okey, say); ``number`` still says what it counts.
    For a run, ``number`` is the place of its first tile (1-13) and places run up to 14 for
    the 1 of 12-13-1; for a set or a pair it is the number shown.
    """

    kind: MeldKind
    tiles: tuple[Tile, ...]
    stands_for: tuple[int | None, ...]
    number: int
    colour: Colour | None = None
    # wild[i]: tiles[i] is an okey.
    wild: tuple[bool, ...] = ()

    def __post_init__(self) -> None:
        if not self.wild:
            object.__setattr__(self, "wild", (False,) * len(self.tiles))

    @property
    def value(self) -> int:
        """Points toward an opening: what each tile stands for, summed."""
        if self.kind is MeldKind.RUN:
            return sum(_place_value(self.number + i) for i in range(len(self.tiles)))
        if self.kind is MeldKind.SET:
            return self.number * len(self.tiles)
        return 0

    @property
    def low(self) -> int:
        """A run's first place."""
        return self.number

    @property
    def high(self) -> int:
        """A run's last place (14 for the 1 of 12-13-1)."""
        return self.number + len(self.tiles) - 1

    def set_colours(self) -> frozenset[Colour]:
        """The colours a set shows (okeys of undecided colour excluded)."""
        return frozenset(face_colour(face) for face in self.stands_for if face is not None)

    def names(self) -> list[str]:
        return [str(tile) for tile in self.tiles]

    def __str__(self) -> str:
        return "-".join(self.names())


def _place_value(place: int) -> int:
    return 1 if place == HIGH_ONE else place


def _place_face(colour: Colour, place: int) -> int:
    return face_of(colour, 1 if place == HIGH_ONE else place)


def make_group(
    tiles: Sequence[Tile],
    okey: Okey,
    rules: RuleSet,
    *,
    okey_as: Sequence[int] | None = None,
) -> Meld:
    """A run, a set, or (two tiles) a pair; a violation with the reason otherwise."""
    if len(tiles) == 2:
        return make_pair(tiles, okey)
    return make_meld(tiles, okey, rules, okey_as=okey_as)


def make_pair(tiles: Sequence[Tile], okey: Okey) -> Meld:
    """Two identical tiles, or an okey with anything."""
    if len(tiles) != 2:
        raise RuleViolation("NOT_A_PAIR")
    first, second = tiles
    wild = [okey.is_wild(tile) for tile in tiles]
    if wild[0] and wild[1]:
        stands: tuple[int | None, ...] = (okey.face, okey.face)
    elif wild[0]:
        stands = (okey.plays_as(second), okey.plays_as(second))
    elif wild[1]:
        stands = (okey.plays_as(first), okey.plays_as(first))
    elif okey.plays_as(first) == okey.plays_as(second):
        stands = (okey.plays_as(first), okey.plays_as(second))
    else:
        raise RuleViolation("NOT_A_PAIR")
    face = stands[0]
    assert face is not None
    return Meld(
        MeldKind.PAIR, tuple(tiles), stands, face_number(face), face_colour(face), tuple(wild)
    )


def make_meld(
    tiles: Sequence[Tile],
    okey: Okey,
    rules: RuleSet,
    *,
    okey_as: Sequence[int] | None = None,
) -> Meld:
    """A run or a set from ``tiles`` in the order given.

    Where the tiles read as both (one real tile and okeys), the reading ``okey_as`` names is
    taken, else the one worth more. A violation names the first reason the tiles fail.
    """
    if len(tiles) < 3:
        raise RuleViolation("MELD_TOO_SHORT")
    for face in okey_as or ():
        # An okey stands for a coloured face (0-51), never a false joker or a made-up number.
        if isinstance(face, bool) or not isinstance(face, int) or not 0 <= face < FACE_COUNT:
            raise InvalidInput("BAD_OKEY_AS", tile=str(face))
    run_error: RuleViolation | None = None
    set_error: RuleViolation | None = None
    candidates: list[Meld] = []
    real_faces = [okey.plays_as(t) for t in tiles if not okey.is_wild(t)]
    same_colour = len({face_colour(face) for face in real_faces}) == 1
    same_number = len({face_number(face) for face in real_faces}) == 1
    # Tiles of several colours are no run, of several numbers no set: not parsed as one (the
    # reason would not be told: below, a run's is told only for one colour, a set's for one
    # number).
    if same_colour:
        try:
            candidates.append(_parse_run(tiles, okey, rules))
        except RuleViolation as error:
            run_error = error
    if same_number:
        try:
            candidates.append(_parse_set(tiles, okey))
        except RuleViolation as error:
            set_error = error
    if okey_as is not None and candidates:
        return _apply_okey_as(candidates, tiles, okey, okey_as)
    if candidates:
        return max(candidates, key=lambda meld: (meld.value, meld.kind is MeldKind.RUN))
    if same_colour and run_error is not None:
        raise run_error
    if same_number and set_error is not None:
        raise set_error
    raise RuleViolation("NOT_A_MELD")


def _parse_run(tiles: Sequence[Tile], okey: Okey, rules: RuleSet) -> Meld:
    """The run ``tiles`` make (``make_meld`` asks only for tiles of one colour)."""
    try:
        return _parse_run_in_order(tiles, okey, rules)
    except RuleViolation as forward_error:
        errors = [forward_error]
        # A run read high to low (as a rack may hold it) is the same run.
        try:
            meld = _parse_run_in_order(tuple(reversed(tiles)), okey, rules)
        except RuleViolation as error:
            errors.append(error)
        else:
            return meld
        # Without okeys the order says nothing: sort the tiles.
        if not any(okey.is_wild(tile) for tile in tiles):
            ordered = sorted(tiles, key=lambda tile: (okey.plays_as(tile), tile.id))
            # 12-13-1 sorts as 1-12-13: try the 1s last too.
            ones_last = [t for t in ordered if face_number(okey.plays_as(t)) != 1] + [
                t for t in ordered if face_number(okey.plays_as(t)) == 1
            ]
            for attempt in (ordered, ones_last):
                if attempt != list(tiles):
                    try:
                        return _parse_run_in_order(attempt, okey, rules)
                    except RuleViolation as error:
                        errors.append(error)
        # The first specific reason (12-13-1 written 1-12-13 is still 12-13-1), else the first.
        specific = [error for error in errors if error.code != "NOT_A_MELD"]
        raise (specific or errors)[0] from None


def _parse_run_in_order(tiles: Sequence[Tile], okey: Okey, rules: RuleSet) -> Meld:
    real = [
        (index, okey.plays_as(tile)) for index, tile in enumerate(tiles) if not okey.is_wild(tile)
    ]
    if not real:
        raise RuleViolation("NOT_A_MELD")
    colours = {face_colour(face) for _, face in real}
    if len(colours) != 1:
        raise RuleViolation("NOT_A_MELD")
    colour = colours.pop()
    first_index, first_face = real[0]
    # A place past 13 is a number wrapped round (14 is the 1 of 12-13-1; 15 would be 13-1-2).
    start_low = face_number(first_face) - first_index
    error: RuleViolation = RuleViolation("NOT_A_MELD")
    starts = (start_low, start_low + 13) if start_low <= 0 else (start_low,)
    for start in starts:
        places = [start + index for index in range(len(tiles))]
        if not all(
            places[index] == face_number(face) or places[index] - 13 == face_number(face)
            for index, face in real
        ):
            continue
        reason = None
        if places[0] < 1:
            reason = "RUN_OUT_OF_RANGE"
        elif places[-1] > HIGH_ONE:
            reason = "RUN_13_1_2" if places[0] <= 13 else "RUN_OUT_OF_RANGE"
        elif places[-1] == HIGH_ONE and not rules.run_may_end_12_13_1:
            reason = "RUN_WRAPS_AROUND"
        if reason is not None:
            # The first reason stands: okey-1-2 is an okey below the 1 before it is 13-1-2.
            if error.code == "NOT_A_MELD":
                error = RuleViolation(reason)
            continue
        stands = tuple(_place_face(colour, place) for place in places)
        wild = tuple(okey.is_wild(tile) for tile in tiles)
        return Meld(MeldKind.RUN, tuple(tiles), stands, places[0], colour, wild)
    raise error


def _parse_set(tiles: Sequence[Tile], okey: Okey) -> Meld:
    if len(tiles) > 4:
        raise RuleViolation("SET_TOO_LONG")
    real = [okey.plays_as(tile) for tile in tiles if not okey.is_wild(tile)]
    if not real:
        raise RuleViolation("NOT_A_MELD")
    numbers = {face_number(face) for face in real}
    if len(numbers) != 1:
        raise RuleViolation("NOT_A_MELD")
    number = numbers.pop()
    seen: set[Colour] = set()
    for face in real:
        colour = face_colour(face)
        if colour in seen:
            raise RuleViolation("SET_REPEATS_COLOUR", tile=face_name(face))
        seen.add(colour)
    missing = [colour for colour in Colour if colour not in seen]
    wild_count = len(tiles) - len(real)
    # With as many okeys as missing colours, each okey's colour is decided.
    decided = iter(missing) if wild_count == len(missing) else None
    stands: list[int | None] = []
    for tile in tiles:
        if not okey.is_wild(tile):
            stands.append(okey.plays_as(tile))
        elif decided is not None:
            stands.append(face_of(next(decided), number))
        else:
            stands.append(None)
    wild = tuple(okey.is_wild(tile) for tile in tiles)
    return Meld(MeldKind.SET, tuple(tiles), tuple(stands), number, None, wild)


def _apply_okey_as(
    candidates: list[Meld], tiles: Sequence[Tile], okey: Okey, okey_as: Sequence[int]
) -> Meld:
    wild_positions = [i for i, tile in enumerate(tiles) if okey.is_wild(tile)]
    if len(okey_as) != len(wild_positions):
        raise InvalidInput("BAD_OKEY_AS", tile=",".join(face_name(face) for face in okey_as))
    for meld in candidates:
        stands = list(meld.stands_for)
        fits = True
        for position, face in zip(wild_positions, okey_as, strict=True):
            current = stands[position]
            if current is None:
                # An undecided okey in a set: any missing colour of the set's number.
                shown = {face_colour(f) for f in stands if f is not None}
                if face_number(face) != meld.number or face_colour(face) in shown:
                    fits = False
                    break
                stands[position] = face
            elif current != face:
                fits = False
                break
        if fits:
            return Meld(meld.kind, meld.tiles, tuple(stands), meld.number, meld.colour, meld.wild)
    bad = ",".join(face_name(face) for face in okey_as)
    raise RuleViolation("BAD_OKEY_AS", tile=bad)
