"""Melds: written with what each tile plays as, read back checked to be the meld they say.

A HandState's table meld (``HandStateMeld``: tile ids) and a view's (``Meld``: Tile messages)
are read by the same check, ``is_consistent``; a HandState's are remembered by their bytes
(``memo.READ_MELDS``).
"""

from __future__ import annotations

from okey.v1 import common_pb2

from okey101.engine.errors import InvalidInput, OkeyError
from okey101.engine.hand import SEATS, TableMeld
from okey101.engine.melds import HIGH_ONE, Meld, MeldKind, make_pair
from okey101.engine.rules import RuleSet
from okey101.engine.tiles import Colour, Okey, Tile, face_colour, face_number, face_of
from okey101.platform.convert.enums import (
    COLOURS_BACK,
    MELD_KINDS,
    MELD_KINDS_BACK,
    colour_to_proto,
    enum_from_proto,
)
from okey101.platform.convert.limits import bad_field
from okey101.platform.convert.memo import READ_MELDS
from okey101.platform.convert.tiles import (
    FACE_MESSAGES,
    face_from_proto,
    shared_tile,
    tile_from_id,
    tiles_from_ids,
)


def meld_to_proto(meld: Meld, okey: Okey) -> common_pb2.Meld:
    """A meld with what each tile plays as (an undecided okey's ``stands_for`` unset)."""
    message = common_pb2.Meld(
        kind=MELD_KINDS[meld.kind],
        number=meld.number,
        colour=colour_to_proto(meld.colour),
        value=meld.value,
    )
    for tile, stands in zip(meld.tiles, meld.stands_for, strict=True):
        if stands is None:
            message.tiles.add(tile=shared_tile(tile, okey))
        else:
            message.tiles.add(tile=shared_tile(tile, okey), stands_for=FACE_MESSAGES[stands])
    return message


def table_meld_to_proto(index: int, item: TableMeld, okey: Okey) -> common_pb2.TableMeld:
    return common_pb2.TableMeld(
        index=index, owner_seat=item.owner, meld=meld_to_proto(item.meld, okey)
    )


def state_meld_remembered(
    message: common_pb2.HandStateMeld, okey: Okey, rules: RuleSet, field: str
) -> TableMeld:
    """``state_meld_from_proto``, remembered by the message's bytes, the okey and the rule set
    (only a meld that was read whole: an error is raised afresh every time)."""
    key = (message.SerializeToString(), okey.indicator.id, id(rules))
    item: TableMeld | None = READ_MELDS.owned(key, rules)
    if item is None:
        item = state_meld_from_proto(message, okey, rules, field)
        READ_MELDS.remember_owned(key, rules, item)
    return item


def state_meld_from_proto(
    message: common_pb2.HandStateMeld, okey: Okey, rules: RuleSet, field: str
) -> TableMeld:
    """A table meld of a HandState, checked to be the meld it says it is."""
    if message.owner_seat >= SEATS:
        raise InvalidInput("UNKNOWN_SEAT", seat=message.owner_seat, field=f"{field}.owner_seat")
    kind: MeldKind = enum_from_proto(MELD_KINDS_BACK, message.kind, f"{field}.kind", "MeldKind")
    tiles = tiles_from_ids((item.tile_id for item in message.tiles), field=f"{field}.tiles")
    stands: list[int | None] = []
    for index, item in enumerate(message.tiles):
        if item.HasField("stands_for"):
            where = f"{field}.tiles[{index}].stands_for"
            stands.append(face_from_proto(item.stands_for, field=where, code="NOT_A_MELD"))
        else:
            stands.append(None)
    wild = tuple(okey.is_wild(tile) for tile in tiles)
    colour = COLOURS_BACK.get(int(message.colour))
    if message.colour and colour is None:
        raise bad_field(f"{field}.colour", int(message.colour))
    meld = Meld(kind, tiles, tuple(stands), message.number, colour, wild)
    code = "NOT_A_PAIR" if kind is MeldKind.PAIR else "NOT_A_MELD"
    if not is_consistent(meld, okey, rules):
        raise InvalidInput(code, field=field, meld=" ".join(meld.names()))
    return TableMeld(meld, message.owner_seat)


def meld_from_proto(message: common_pb2.Meld, okey: Okey, rules: RuleSet, field: str) -> Meld:
    """A Meld message as the engine keeps it, checked to be the meld it says it is (its
    ``value`` is derived, not read)."""
    kind: MeldKind = enum_from_proto(MELD_KINDS_BACK, message.kind, f"{field}.kind", "MeldKind")
    tiles: list[Tile] = []
    stands: list[int | None] = []
    for index, item in enumerate(message.tiles):
        where = f"{field}.tiles[{index}]"
        if not item.HasField("tile"):
            raise bad_field(f"{where}.tile", "unset")
        tiles.append(tile_from_id(item.tile.id, field=f"{where}.tile.id"))
        if item.HasField("stands_for"):
            stands.append(
                face_from_proto(item.stands_for, field=f"{where}.stands_for", code="NOT_A_MELD")
            )
        else:
            stands.append(None)
    colour = COLOURS_BACK.get(int(message.colour))
    if message.colour and colour is None:
        raise bad_field(f"{field}.colour", int(message.colour))
    wild = tuple(okey.is_wild(tile) for tile in tiles)
    meld = Meld(kind, tuple(tiles), tuple(stands), message.number, colour, wild)
    if not is_consistent(meld, okey, rules):
        code = "NOT_A_PAIR" if kind is MeldKind.PAIR else "NOT_A_MELD"
        raise InvalidInput(code, field=field, meld=" ".join(meld.names()))
    return meld


def is_consistent(meld: Meld, okey: Okey, rules: RuleSet) -> bool:
    """Whether ``meld`` (read from a message) is a run, set or pair as the engine keeps them."""
    tiles = meld.tiles
    real = [i for i, is_wild in enumerate(meld.wild) if not is_wild]
    if meld.kind is MeldKind.PAIR:
        if len(tiles) != 2:
            return False
        try:
            expected = make_pair(tiles, okey)
        except OkeyError:
            return False
        return (expected.stands_for, expected.number, expected.colour) == (
            meld.stands_for,
            meld.number,
            meld.colour,
        )
    if len(tiles) < 3 or not real:
        return False
    if meld.kind is MeldKind.RUN:
        colour = meld.colour
        top = HIGH_ONE if rules.run_may_end_12_13_1 else 13
        if colour is None or meld.number < 1 or meld.number + len(tiles) - 1 > top:
            return False
        for offset, (tile, stands) in enumerate(zip(tiles, meld.stands_for, strict=True)):
            place = meld.number + offset
            face = face_of(colour, 1 if place == HIGH_ONE else place)
            if stands != face or (not okey.is_wild(tile) and okey.plays_as(tile) != face):
                return False
        return True
    # A set: one number, a different colour on every tile; an okey's colour may be undecided
    # while the set has three tiles.
    if meld.colour is not None or len(tiles) > 4 or not 1 <= meld.number <= 13:
        return False
    colours: set[Colour] = set()
    for tile, stands in zip(tiles, meld.stands_for, strict=True):
        if not okey.is_wild(tile) and okey.plays_as(tile) != stands:
            return False
        if stands is None:
            if len(tiles) == 4:
                return False
            continue
        if face_number(stands) != meld.number or face_colour(stands) in colours:
            return False
        colours.add(face_colour(stands))
    return True
