"""Conversions between the engine's values and the ``okey.v1`` messages, both ways.

Pure functions, no I/O: every service that speaks the API converts here and nowhere else.

- Engine → message (``*_to_proto``) never fails for a value the engine made.
- Message → engine (``*_from_proto``) validates everything it reads and raises the engine's
  ``InvalidInput`` (malformed: INVALID_ARGUMENT through ``platform.errors``) with a stable code
  and parameters; ``field`` in the parameters names where in the request the problem is
  (``state.seats[2].rack_tile_ids[5]``), so a client can point at it. A message that does not
  describe what it claims (a tile id that does not exist, a tile in two places, a meld that is
  not one) is refused, never executed.

Codes used for malformed input are the engine's own (``okey101.engine.messages``): UNKNOWN_TILE,
DUPLICATE_TILE_ID, TOO_MANY_COPIES (the indicator's tile used again), UNKNOWN_SEAT,
WRONG_SEAT_COUNT, BAD_DECK, INDICATOR_IS_FALSE_JOKER, UNKNOWN_PRESET, BAD_RULE_VALUE (a knob),
BAD_OKEY_AS, EMPTY_MOVE, NOT_A_MELD, NOT_A_PAIR, UNKNOWN_RULES_VERSION. A field holding a value
that cannot be (an enum's unknown or unspecified value, a takeable tile that is not the last
discard on the left) is BAD_FIELD with the field's path and what it held.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Any, Final

from google.protobuf.internal.containers import RepeatedCompositeFieldContainer
from okey.v1 import common_pb2

from okey101.engine.actions import (
    Action,
    Discard,
    Draw,
    End,
    GiveBack,
    Group,
    LayDown,
    LayOff,
    Open,
    OpenPairs,
    ShowIndicator,
    TakeDiscard,
    TakeOkey,
)
from okey101.engine.errors import InvalidInput, OkeyError
from okey101.engine.hand import (
    RULES_VERSION,
    SEATS,
    Event,
    EventKind,
    HandState,
    Phase,
    TableMeld,
    ThisTurn,
    left_of,
)
from okey101.engine.melds import HIGH_ONE, Meld, MeldKind, make_pair
from okey101.engine.result import EndReason, Finish, HandResult
from okey101.engine.rules import PRESETS, RuleSet
from okey101.engine.seat import OpenedAs, PenaltyReason, Seat
from okey101.engine.solver.playability import playable_faces
from okey101.engine.tiles import (
    ALL_TILES,
    FACE_COUNT,
    TILE_COUNT,
    Colour,
    Okey,
    Tile,
    face_colour,
    face_number,
    face_of,
    tile_by_id,
)
from okey101.engine.view import OtherSeat, SeatView, view

#: The most tiles a rack ever holds (the starting player's 22).
MAX_RACK: Final = 22
#: Bounds on a hand state's counters (turns, lay-offs) and on a seat's penalties: far above
#: any real hand, far below where the API's integers would overflow.
MAX_COUNT: Final = 100_000
MAX_PENALTIES: Final = 1_000

# --------------------------------------------------------------------------------------------
# Enums


_COLOURS: Final[Mapping[Colour, common_pb2.Colour]] = {
    Colour.RED: common_pb2.COLOUR_RED,
    Colour.YELLOW: common_pb2.COLOUR_YELLOW,
    Colour.BLUE: common_pb2.COLOUR_BLUE,
    Colour.BLACK: common_pb2.COLOUR_BLACK,
}
_COLOURS_BACK: Final[Mapping[int, Colour]] = {int(v): k for k, v in _COLOURS.items()}

_MELD_KINDS: Final[Mapping[MeldKind, common_pb2.MeldKind]] = {
    MeldKind.RUN: common_pb2.MELD_KIND_RUN,
    MeldKind.SET: common_pb2.MELD_KIND_SET,
    MeldKind.PAIR: common_pb2.MELD_KIND_PAIR,
}
_MELD_KINDS_BACK: Final[Mapping[int, MeldKind]] = {int(v): k for k, v in _MELD_KINDS.items()}

_PHASES: Final[Mapping[Phase, common_pb2.Phase]] = {
    Phase.FIRST: common_pb2.PHASE_FIRST,
    Phase.DRAW: common_pb2.PHASE_DRAW,
    Phase.PLAY: common_pb2.PHASE_PLAY,
    Phase.ENDED: common_pb2.PHASE_ENDED,
}
_PHASES_BACK: Final[Mapping[int, Phase]] = {int(v): k for k, v in _PHASES.items()}

_PENALTIES: Final[Mapping[PenaltyReason, common_pb2.PenaltyReason]] = {
    PenaltyReason.OKEY_DISCARDED: common_pb2.PENALTY_REASON_OKEY_DISCARDED,
    PenaltyReason.PLAYABLE_DISCARDED: common_pb2.PENALTY_REASON_PLAYABLE_DISCARDED,
    PenaltyReason.GAVE_BACK: common_pb2.PENALTY_REASON_GAVE_BACK,
    PenaltyReason.CHARGED_BEFORE: common_pb2.PENALTY_REASON_CHARGED_BEFORE,
}
_PENALTIES_BACK: Final[Mapping[int, PenaltyReason]] = {int(v): k for k, v in _PENALTIES.items()}

_END_REASONS: Final[Mapping[EndReason, common_pb2.HandEndReason]] = {
    EndReason.FINISHED: common_pb2.HAND_END_REASON_FINISHED,
    EndReason.STOCK_OUT: common_pb2.HAND_END_REASON_STOCK_OUT,
    EndReason.VOID: common_pb2.HAND_END_REASON_VOID,
}
_END_REASONS_BACK: Final[Mapping[int, EndReason]] = {int(v): k for k, v in _END_REASONS.items()}

_OPENINGS: Final[Mapping[OpenedAs | None, common_pb2.OpeningKind]] = {
    None: common_pb2.OPENING_KIND_NOT_OPENED,
    OpenedAs.RUNS: common_pb2.OPENING_KIND_RUNS,
    OpenedAs.PAIRS: common_pb2.OPENING_KIND_PAIRS,
}
_OPENINGS_BACK: Final[Mapping[int, OpenedAs | None]] = {
    int(common_pb2.OPENING_KIND_UNSPECIFIED): None,  # read as "not opened" in requests
    **{int(v): k for k, v in _OPENINGS.items()},
}

_ENDS_BACK: Final[Mapping[int, End | None]] = {
    int(common_pb2.RUN_END_UNSPECIFIED): None,
    int(common_pb2.RUN_END_LOW): End.LOW,
    int(common_pb2.RUN_END_HIGH): End.HIGH,
}
_ENDS: Final[Mapping[End | None, common_pb2.RunEnd]] = {
    None: common_pb2.RUN_END_UNSPECIFIED,
    End.LOW: common_pb2.RUN_END_LOW,
    End.HIGH: common_pb2.RUN_END_HIGH,
}

_PRESETS_BACK: Final[Mapping[str, common_pb2.RulePreset]] = {
    "oyna": common_pb2.RULE_PRESET_OYNA,
    "boombala": common_pb2.RULE_PRESET_BOOMBALA,
    "north_sultan": common_pb2.RULE_PRESET_NORTH_SULTAN,
}
_PRESETS: Final[Mapping[int, str]] = {int(v): k for k, v in _PRESETS_BACK.items()}

# The event kinds whose `points` means something (see Event.points in common.proto).
_POINTS_EVENTS: Final = frozenset(
    {EventKind.PENALTY, EventKind.OPENED, EventKind.MELDED, EventKind.SHOWED_INDICATOR}
)


def _bad_field(field: str, value: object) -> InvalidInput:
    """A field holding a value that cannot be (see the module docstring)."""
    return InvalidInput("BAD_FIELD", field=field, value=str(value))


def _enum_from_proto(
    table: Mapping[int, Any], value: int, field: str, enum_name: str | None = None
) -> Any:
    try:
        return table[int(value)]
    except KeyError:
        raise _bad_field(field, _enum_value_name(enum_name, value)) from None


def _enum_value_name(enum_name: str | None, value: int) -> str:
    if enum_name is not None:
        enum_type = common_pb2.DESCRIPTOR.enum_types_by_name[enum_name]
        known = enum_type.values_by_number.get(int(value))
        if known is not None:
            return str(known.name)
    return str(int(value))


def phase_to_proto(phase: Phase) -> common_pb2.Phase:
    return _PHASES[phase]


def phase_from_proto(value: int, *, field: str = "phase") -> Phase:
    phase: Phase = _enum_from_proto(_PHASES_BACK, value, field, "Phase")
    return phase


def penalty_reason_to_proto(reason: PenaltyReason) -> common_pb2.PenaltyReason:
    return _PENALTIES[reason]


def penalty_reason_from_proto(value: int, *, field: str = "penalties") -> PenaltyReason:
    reason: PenaltyReason = _enum_from_proto(_PENALTIES_BACK, value, field, "PenaltyReason")
    return reason


def opened_as_to_proto(opened_as: OpenedAs | None) -> common_pb2.OpeningKind:
    return _OPENINGS[opened_as]


def opened_as_from_proto(value: int, *, field: str = "opened_as") -> OpenedAs | None:
    opened: OpenedAs | None = _enum_from_proto(_OPENINGS_BACK, value, field, "OpeningKind")
    return opened


def end_reason_to_proto(reason: EndReason) -> common_pb2.HandEndReason:
    return _END_REASONS[reason]


def end_reason_from_proto(value: int, *, field: str = "reason") -> EndReason:
    reason: EndReason = _enum_from_proto(_END_REASONS_BACK, value, field, "HandEndReason")
    return reason


def colour_to_proto(colour: Colour | None) -> common_pb2.Colour:
    return common_pb2.COLOUR_UNSPECIFIED if colour is None else _COLOURS[colour]


# --------------------------------------------------------------------------------------------
# Tiles and faces


def tile_from_id(tile_id: int, *, field: str = "tile_id") -> Tile:
    """The physical tile of an id; UNKNOWN_TILE for an id that is not 0-105."""
    if not 0 <= tile_id < TILE_COUNT:
        raise InvalidInput("UNKNOWN_TILE", tile=str(tile_id), field=field)
    return tile_by_id(tile_id)


def tiles_from_ids(tile_ids: Iterable[int], *, field: str) -> tuple[Tile, ...]:
    """Tiles of ids (each checked; duplicates are the caller's to refuse)."""
    ids = tile_ids if isinstance(tile_ids, list) else list(tile_ids)
    # Both in C: one pass of set lookups, then one of indexing (a hand state holds 106 ids).
    if _TILE_IDS.issuperset(ids):
        if len(ids) > 1:
            return itemgetter(*ids)(ALL_TILES)  # type: ignore[no-any-return]
        return tuple([ALL_TILES[tile_id] for tile_id in ids])
    return tuple(tile_from_id(tile_id, field=f"{field}[{i}]") for i, tile_id in enumerate(ids))


_TILE_IDS: Final = frozenset(range(TILE_COUNT))


def _build_tile(tile: Tile, wild: bool) -> common_pb2.Tile:
    message = common_pb2.Tile(
        id=tile.id, notation=str(tile), false_joker=tile.is_false_joker, wild=wild
    )
    if tile.colour is not None and tile.number is not None:
        message.colour = _COLOURS[tile.colour]
        message.number = tile.number
    return message


# Every Tile message there can be (106 tiles, wild or not), built once: a copy is ten times
# cheaper than building one, and views hold a hundred tiles.
_TILE_MESSAGES: Final[tuple[tuple[common_pb2.Tile, common_pb2.Tile], ...]] = tuple(
    (_build_tile(tile, False), _build_tile(tile, True)) for tile in ALL_TILES
)


def tile_to_proto(tile: Tile, okey: Okey | None = None) -> common_pb2.Tile:
    """A Tile message; ``wild`` is set when ``okey`` says it is one of the hand's okeys."""
    message = common_pb2.Tile()
    message.CopyFrom(_TILE_MESSAGES[tile.id][okey is not None and okey.is_wild(tile)])
    return message


def tiles_to_proto(tiles: Iterable[Tile], okey: Okey | None = None) -> list[common_pb2.Tile]:
    return [tile_to_proto(tile, okey) for tile in tiles]


def _shared_tile(tile: Tile, okey: Okey | None) -> common_pb2.Tile:
    """``tile_to_proto``'s prebuilt message itself, for a message that copies what it is given
    (a constructor, ``add``, ``extend``, ``CopyFrom``): never to be changed."""
    return _TILE_MESSAGES[tile.id][okey is not None and okey.is_wild(tile)]


def _shared_tiles(tiles: Iterable[Tile], okey: Okey) -> list[common_pb2.Tile]:
    """``_shared_tile`` of each tile."""
    return [_TILE_MESSAGES[tile.id][okey.is_wild(tile)] for tile in tiles]


def face_to_proto(face: int) -> common_pb2.Face:
    """A coloured face (0-51) as a Face message."""
    if not 0 <= face < FACE_COUNT:
        return _build_face(face)  # not a face: fails as building one does
    message = common_pb2.Face()
    message.CopyFrom(_FACE_MESSAGES[face])
    return message


def _build_face(face: int) -> common_pb2.Face:
    return common_pb2.Face(colour=_COLOURS[face_colour(face)], number=face_number(face))


# Every Face message (52), built once, like the tiles (shared: copied by whoever takes one).
_FACE_MESSAGES: Final = tuple(_build_face(face) for face in range(FACE_COUNT))


def face_from_proto(
    message: common_pb2.Face, *, field: str = "face", code: str = "BAD_OKEY_AS"
) -> int:
    """A Face message as a face index (0-51); ``code`` if it is not a coloured face."""
    colour = _COLOURS_BACK.get(int(message.colour))
    if colour is None or not 1 <= message.number <= 13:
        shown = f"{_enum_value_name('Colour', message.colour)}/{message.number}"
        raise InvalidInput(code, tile=shown, field=field)
    face = face_of(colour, message.number)
    assert 0 <= face < FACE_COUNT
    return face


def okey_from_indicator_id(tile_id: int, *, field: str = "indicator_tile_id") -> Okey:
    """The okey a hand's indicator makes (INDICATOR_IS_FALSE_JOKER for 104 and 105)."""
    indicator = tile_from_id(tile_id, field=field)
    if indicator.is_false_joker:
        raise InvalidInput("INDICATOR_IS_FALSE_JOKER", field=field)
    return _OKEYS[indicator.id]


# The okey of every indicator there can be (an Okey is frozen: one per indicator will do).
_OKEYS: Final = {tile.id: Okey(tile) for tile in ALL_TILES if not tile.is_false_joker}


class TileLedger:
    """Checks that no physical tile is named in two places of one request.

    The indicator, once known, is a place of its own: naming its tile again is TOO_MANY_COPIES
    ("there are only two ... the indicator counts").
    """

    def __init__(self, indicator: Tile | None = None) -> None:
        self._ids: set[int] = set()
        # Where tiles were named, in order: (field, index or -1, ids) for one tile, or (field,
        # None, ids) for a list whose tile ``i`` is at ``field[i]``; read only for an error.
        self._places: list[tuple[str, int | None, Sequence[int]]] = []
        self._indicator = indicator
        if indicator is not None:
            self._ids.add(indicator.id)
            self._places.append(("indicator", -1, (indicator.id,)))

    def add(self, tile: Tile, field: str, index: int = -1) -> None:
        if tile.id in self._ids:
            raise self._repeated(tile, _field_path(field, index))
        self._ids.add(tile.id)
        self._places.append((field, index, (tile.id,)))

    def add_all(self, tiles: Sequence[Tile], field: str) -> None:
        self.add_ids([tile.id for tile in tiles], field)

    def add_ids(self, tile_ids: Sequence[int], field: str) -> None:
        """``add_all`` for the tiles of valid ids (as ``tiles_from_ids`` checked them)."""
        fresh = set(tile_ids)
        # Set operations check a whole list at once; tile by tile only to name a repeat.
        if len(fresh) == len(tile_ids) and self._ids.isdisjoint(fresh):
            self._ids |= fresh
            self._places.append((field, None, tile_ids))
            return
        for index, tile_id in enumerate(tile_ids):
            self.add(ALL_TILES[tile_id], field, index)

    def _repeated(self, tile: Tile, where: str) -> InvalidInput:
        if self._indicator is not None and tile.id == self._indicator.id:
            return InvalidInput("TOO_MANY_COPIES", tile=str(tile), field=where)
        return InvalidInput(
            "DUPLICATE_TILE_ID",
            tile=str(tile),
            tile_id=tile.id,
            field=where,
            first_field=self._first_place(tile.id),
        )

    def _first_place(self, tile_id: int) -> str:
        for field, index, ids in self._places:
            if tile_id in ids:
                return _field_path(field, list(ids).index(tile_id) if index is None else index)
        raise AssertionError(f"tile {tile_id} was never named")


def _field_path(field: str, index: int) -> str:
    return field if index < 0 else f"{field}[{index}]"


# --------------------------------------------------------------------------------------------
# Melds


def meld_to_proto(meld: Meld, okey: Okey) -> common_pb2.Meld:
    """A meld with what each tile plays as (an undecided okey's ``stands_for`` unset)."""
    message = common_pb2.Meld(
        kind=_MELD_KINDS[meld.kind],
        number=meld.number,
        colour=colour_to_proto(meld.colour),
        value=meld.value,
    )
    for tile, stands in zip(meld.tiles, meld.stands_for, strict=True):
        if stands is None:
            message.tiles.add(tile=_shared_tile(tile, okey))
        else:
            message.tiles.add(tile=_shared_tile(tile, okey), stands_for=_FACE_MESSAGES[stands])
    return message


def table_meld_to_proto(index: int, item: TableMeld, okey: Okey) -> common_pb2.TableMeld:
    return common_pb2.TableMeld(
        index=index, owner_seat=item.owner, meld=meld_to_proto(item.meld, okey)
    )


def group_from_proto(message: common_pb2.TileGroup, *, field: str = "group") -> Group:
    """A group of tiles to put down, with what its okeys stand for (if said)."""
    tiles = tiles_from_ids(message.tile_ids, field=f"{field}.tile_ids")
    okey_as = tuple(
        face_from_proto(face, field=f"{field}.okey_as[{i}]")
        for i, face in enumerate(message.okey_as)
    )
    return Group(tiles, okey_as or None)


def group_to_proto(group: Group) -> common_pb2.TileGroup:
    return common_pb2.TileGroup(
        tile_ids=[tile.id for tile in group.tiles],
        okey_as=[face_to_proto(face) for face in group.okey_as or ()],
    )


def _state_meld_from_proto(
    message: common_pb2.HandStateMeld, okey: Okey, rules: RuleSet, field: str
) -> TableMeld:
    """A table meld of a HandState, checked to be the meld it says it is."""
    if message.owner_seat >= SEATS:
        raise InvalidInput("UNKNOWN_SEAT", seat=message.owner_seat, field=f"{field}.owner_seat")
    kind: MeldKind = _enum_from_proto(_MELD_KINDS_BACK, message.kind, f"{field}.kind", "MeldKind")
    tiles = tiles_from_ids((item.tile_id for item in message.tiles), field=f"{field}.tiles")
    stands: list[int | None] = []
    for index, item in enumerate(message.tiles):
        if item.HasField("stands_for"):
            where = f"{field}.tiles[{index}].stands_for"
            stands.append(face_from_proto(item.stands_for, field=where, code="NOT_A_MELD"))
        else:
            stands.append(None)
    wild = tuple(okey.is_wild(tile) for tile in tiles)
    colour = _COLOURS_BACK.get(int(message.colour))
    if message.colour and colour is None:
        raise _bad_field(f"{field}.colour", int(message.colour))
    meld = Meld(kind, tiles, tuple(stands), message.number, colour, wild)
    code = "NOT_A_PAIR" if kind is MeldKind.PAIR else "NOT_A_MELD"
    if not _is_consistent(meld, okey, rules):
        raise InvalidInput(code, field=field, meld=" ".join(meld.names()))
    return TableMeld(meld, message.owner_seat)


def _is_consistent(meld: Meld, okey: Okey, rules: RuleSet) -> bool:
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


# --------------------------------------------------------------------------------------------
# Table melds, remembered
#
# A table sends the same melds with every move. Reading one (checking it is the meld it says it
# is) and writing one (a message per tile) cost more than the rest of a move once the table has
# a dozen, so read melds are remembered by their bytes, and what is written for a meld by the
# meld object itself: the object an earlier read returned, or one the engine made.

#: How many entries each memory keeps (then it starts again: a table re-teaches its melds in
#: one move).
MELD_MEMORY_SIZE: Final = 4096


class _Memory:
    """A bounded dict whose values hold the object their key names by ``id`` (so that no key is
    reused while its entry lives)."""

    def __init__(self) -> None:
        self._entries: dict[tuple[int | bytes, ...], tuple[object, Any]] = {}

    def get(self, key: tuple[int | bytes, ...], owner: object) -> Any:
        """The value stored under ``key`` for this very ``owner``, or None."""
        known = self._entries.get(key)
        if known is None or known[0] is not owner:
            return None
        return known[1]

    def put(self, key: tuple[int | bytes, ...], owner: object, value: object) -> None:
        if len(self._entries) >= MELD_MEMORY_SIZE:
            self._entries.clear()
        self._entries[key] = (owner, value)


_READ_MELDS: Final = _Memory()
_MELD_BYTES: Final = _Memory()
_STATE_MELD_BYTES: Final = _Memory()
_VIEW_MELD_BYTES: Final = _Memory()


def _state_meld_remembered(
    message: common_pb2.HandStateMeld, okey: Okey, rules: RuleSet, field: str
) -> TableMeld:
    """``_state_meld_from_proto``, remembered by the message's bytes, the okey and the rule set
    (only a meld that was read whole: an error is raised afresh every time)."""
    key = (message.SerializeToString(), okey.indicator.id, id(rules))
    item: TableMeld | None = _READ_MELDS.get(key, rules)
    if item is None:
        item = _state_meld_from_proto(message, okey, rules, field)
        _READ_MELDS.put(key, rules, item)
    return item


def _meld_bytes(meld: Meld, okey: Okey) -> bytes:
    """``meld_to_proto(meld, okey)``, serialized and remembered."""
    key = (id(meld), okey.face)
    data: bytes | None = _MELD_BYTES.get(key, meld)
    if data is None:
        data = meld_to_proto(meld, okey).SerializeToString()
        _MELD_BYTES.put(key, meld, data)
    return data


def _state_meld_bytes(item: TableMeld) -> bytes:
    """A HandState holding just ``item`` in its table, serialized and remembered."""
    key = (id(item),)
    data: bytes | None = _STATE_MELD_BYTES.get(key, item)
    if data is None:
        meld = item.meld
        message = common_pb2.HandState()
        added = message.table.add(
            owner_seat=item.owner,
            kind=_MELD_KINDS[meld.kind],
            number=meld.number,
            colour=colour_to_proto(meld.colour),
        )
        for tile, stands in zip(meld.tiles, meld.stands_for, strict=True):
            if stands is None:
                added.tiles.add(tile_id=tile.id)
            else:
                added.tiles.add(tile_id=tile.id, stands_for=_FACE_MESSAGES[stands])
        data = message.SerializeToString()
        _STATE_MELD_BYTES.put(key, item, data)
    return data


def _view_meld_bytes(index: int, meld: Meld, owner: int, okey: Okey) -> bytes:
    """A SeatView holding just this table meld, serialized and remembered."""
    key = (id(meld), okey.face, index, owner)
    data: bytes | None = _VIEW_MELD_BYTES.get(key, meld)
    if data is None:
        message = common_pb2.SeatView()
        message.table.add(index=index, owner_seat=owner).meld.MergeFromString(
            _meld_bytes(meld, okey)
        )
        data = message.SerializeToString()
        _VIEW_MELD_BYTES.put(key, meld, data)
    return data


# --------------------------------------------------------------------------------------------
# Rule sets

_KNOBS: Final[tuple[str, ...]] = tuple(
    field.name for field in dataclasses.fields(RuleSet) if field.name != "name"
)
_RULE_FIELDS: Final = common_pb2.RuleSet.DESCRIPTOR.fields_by_name


def _enum_prefix(enum_name: str) -> str:
    """``LeftDiscardPolicy`` -> ``LEFT_DISCARD_POLICY_`` (how buf STANDARD prefixes values)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", enum_name).upper() + "_"


def _knob_enum_tables() -> dict[str, tuple[dict[int, enum.Enum], dict[enum.Enum, int]]]:
    """For each enum knob: proto number -> engine member, and back. Checked to cover both."""
    tables: dict[str, tuple[dict[int, enum.Enum], dict[enum.Enum, int]]] = {}
    defaults = RuleSet()
    for knob in _KNOBS:
        current = getattr(defaults, knob)
        enum_type = _RULE_FIELDS[knob].enum_type
        if not isinstance(current, enum.Enum) or enum_type is None:
            continue
        prefix = _enum_prefix(enum_type.name)
        forward: dict[int, enum.Enum] = {}
        for value in enum_type.values:
            if value.number == 0:
                continue
            forward[value.number] = type(current)[value.name.removeprefix(prefix)]
        back = {member: number for number, member in forward.items()}
        if len(back) != len(type(current)):
            raise RuntimeError(f"RuleSet.{knob}: the proto enum does not cover the engine's")
        tables[knob] = (forward, back)
    return tables


_KNOB_ENUMS: Final = _knob_enum_tables()

#: The range every integer knob must be in, so that no score a hand can reach overflows the
#: API's int32 points (the engine takes any integer; see the module docstring of ``rules``).
KNOB_LIMIT: Final = 100_000
#: Integer knobs that are counts, minimums or durations: never negative.
_COUNT_KNOBS: Final = frozenset(
    {
        "opening_min_points",
        "opening_min_pairs",
        "pairs_opener_lay_off_limit",
        "never_opened_cap",
        "match_target",
        "match_hands",
        "turn_seconds",
    }
)


def rules_from_proto(message: common_pb2.RuleSet, *, field: str = "rules") -> RuleSet:
    """The preset with each knob present in ``message`` replacing the preset's value.

    BAD_RULE_VALUE for an enum value the engine does not know, and for an integer outside
    +-``KNOB_LIMIT`` (or negative, for a count, a minimum or a duration). Tables send the same
    few rule sets again and again: answers are remembered by the message's bytes.
    """
    return _rules_from_bytes(message.SerializeToString(deterministic=True), field)


@lru_cache(maxsize=256)
def _rules_from_bytes(data: bytes, field: str) -> RuleSet:
    return _rules_from_message(common_pb2.RuleSet.FromString(data), field)


def _rules_from_message(message: common_pb2.RuleSet, field: str) -> RuleSet:
    if message.preset == common_pb2.RULE_PRESET_UNSPECIFIED:
        name = "oyna"
    else:
        known = _PRESETS.get(int(message.preset))
        if known is None:
            raise InvalidInput(
                "UNKNOWN_PRESET", preset=str(int(message.preset)), field=f"{field}.preset"
            )
        name = known
    overrides: dict[str, object] = {}
    for knob in _KNOBS:
        tables = _KNOB_ENUMS.get(knob)
        if tables is not None:
            number = int(getattr(message, knob))
            if number == 0:
                continue  # *_UNSPECIFIED: keep the preset's value
            member = tables[0].get(number)
            if member is None:
                raise InvalidInput(
                    "BAD_RULE_VALUE", rule=knob, value=str(number), field=f"{field}.{knob}"
                )
            overrides[knob] = member
        elif message.HasField(knob):
            value = getattr(message, knob)
            low = 0 if knob in _COUNT_KNOBS else -KNOB_LIMIT
            if not isinstance(value, bool) and not low <= value <= KNOB_LIMIT:
                raise InvalidInput(
                    "BAD_RULE_VALUE", rule=knob, value=str(value), field=f"{field}.{knob}"
                )
            overrides[knob] = value
    return RuleSet.preset(name).with_overrides(overrides)


def rules_to_proto(rules: RuleSet) -> common_pb2.RuleSet:
    """Every knob present and resolved; ``custom`` when any differs from the preset."""
    preset = PRESETS.get(rules.name)
    message = common_pb2.RuleSet(
        preset=_PRESETS_BACK.get(rules.name, common_pb2.RULE_PRESET_UNSPECIFIED),
        custom=preset is None or preset != rules,
    )
    for knob in _KNOBS:
        value = getattr(rules, knob)
        tables = _KNOB_ENUMS.get(knob)
        setattr(message, knob, tables[1][value] if tables is not None else value)
    return message


# --------------------------------------------------------------------------------------------
# Actions


def action_from_proto(message: common_pb2.Action, *, field: str = "action") -> Action:
    """The engine's move for an Action; EMPTY_MOVE when none of the oneof is set."""
    move = message.WhichOneof("move")
    where = f"{field}.{move}"
    if move is None:
        raise InvalidInput("EMPTY_MOVE", field=field)
    if move == "draw":
        return Draw()
    if move == "take":
        return TakeDiscard()
    if move == "give_back":
        return GiveBack()
    if move == "show_indicator":
        return ShowIndicator()
    if move == "open":
        return Open(_groups(message.open.groups, f"{where}.groups"))
    if move == "meld":
        return LayDown(_groups(message.meld.groups, f"{where}.groups"))
    if move == "open_pairs":
        pairs = tuple(
            (
                tile_from_id(pair.first_tile_id, field=f"{where}.pairs[{i}].first_tile_id"),
                tile_from_id(pair.second_tile_id, field=f"{where}.pairs[{i}].second_tile_id"),
            )
            for i, pair in enumerate(message.open_pairs.pairs)
        )
        return OpenPairs(pairs)
    if move == "lay_off":
        lay_off = message.lay_off
        end: End | None = _enum_from_proto(_ENDS_BACK, lay_off.end, f"{where}.end", "RunEnd")
        tile = tile_from_id(lay_off.tile_id, field=f"{where}.tile_id")
        return LayOff(tile, lay_off.meld_index, end)
    if move == "take_okey":
        take = message.take_okey
        return TakeOkey(take.meld_index, tiles_from_ids(take.tile_ids, field=f"{where}.tile_ids"))
    if move == "discard":
        return Discard(tile_from_id(message.discard.tile_id, field=f"{where}.tile_id"))
    raise InvalidInput("EMPTY_MOVE", field=where)  # a move this server does not know


def _groups(messages: Iterable[common_pb2.TileGroup], field: str) -> tuple[Group, ...]:
    return tuple(group_from_proto(group, field=f"{field}[{i}]") for i, group in enumerate(messages))


def action_to_proto(action: Action) -> common_pb2.Action:
    """The Action message of an engine move."""
    if isinstance(action, Draw):
        return common_pb2.Action(draw=common_pb2.DrawAction())
    if isinstance(action, TakeDiscard):
        return common_pb2.Action(take=common_pb2.TakeAction())
    if isinstance(action, GiveBack):
        return common_pb2.Action(give_back=common_pb2.GiveBackAction())
    if isinstance(action, ShowIndicator):
        return common_pb2.Action(show_indicator=common_pb2.ShowIndicatorAction())
    if isinstance(action, Open):
        groups = [group_to_proto(group) for group in action.groups]
        return common_pb2.Action(open=common_pb2.OpenAction(groups=groups))
    if isinstance(action, LayDown):
        groups = [group_to_proto(group) for group in action.groups]
        return common_pb2.Action(meld=common_pb2.MeldAction(groups=groups))
    if isinstance(action, OpenPairs):
        pairs = [
            common_pb2.TilePair(first_tile_id=first.id, second_tile_id=second.id)
            for first, second in action.pairs
        ]
        return common_pb2.Action(open_pairs=common_pb2.OpenPairsAction(pairs=pairs))
    if isinstance(action, LayOff):
        lay_off = common_pb2.LayOffAction(
            tile_id=action.tile.id, meld_index=action.meld, end=_ENDS[action.end]
        )
        return common_pb2.Action(lay_off=lay_off)
    if isinstance(action, TakeOkey):
        take = common_pb2.TakeOkeyAction(
            meld_index=action.meld, tile_ids=[tile.id for tile in action.tiles]
        )
        return common_pb2.Action(take_okey=take)
    return common_pb2.Action(discard=common_pb2.DiscardAction(tile_id=action.tile.id))


# --------------------------------------------------------------------------------------------
# Results


def finish_to_proto(finish: Finish) -> common_pb2.Finish:
    return common_pb2.Finish(
        winner_seat=finish.winner,
        with_okey=finish.with_okey,
        after_pairs=finish.after_pairs,
        one_go=finish.one_go,
        multiplier=finish.multiplier,
    )


def finish_from_proto(message: common_pb2.Finish, *, field: str = "finish") -> Finish:
    if message.winner_seat >= SEATS:
        raise InvalidInput("UNKNOWN_SEAT", seat=message.winner_seat, field=f"{field}.winner_seat")
    if message.multiplier not in (1, 2, 4, 8):
        raise _bad_field(f"{field}.multiplier", message.multiplier)
    return Finish(
        message.winner_seat,
        message.with_okey,
        message.after_pairs,
        message.one_go,
        message.multiplier,
    )


def hand_result_to_proto(result: HandResult, state: HandState) -> common_pb2.HandResult:
    """A hand's result; each seat's penalty reasons come from ``state`` (none for a void hand,
    whose +101s are wiped)."""
    message = common_pb2.HandResult(reason=_END_REASONS[result.reason])
    if result.finish is not None:
        message.finish.CopyFrom(finish_to_proto(result.finish))
    void = result.reason is EndReason.VOID
    for seat, (points, penalty_points) in enumerate(
        zip(result.scores, result.penalties, strict=True)
    ):
        reasons = () if void else state.seats[seat].penalties
        message.scores.add(
            seat=seat,
            points=points,
            penalty_points=penalty_points,
            penalties=[_PENALTIES[reason] for reason in reasons],
        )
    return message


def hand_result_from_proto(message: common_pb2.HandResult, *, field: str = "result") -> HandResult:
    reason = end_reason_from_proto(message.reason, field=f"{field}.reason")
    finish: Finish | None = None
    if reason is EndReason.FINISHED:
        if not message.HasField("finish"):
            raise _bad_field(f"{field}.finish", "unset")
        finish = finish_from_proto(message.finish, field=f"{field}.finish")
    if len(message.scores) != SEATS:
        raise _bad_field(f"{field}.scores", f"{len(message.scores)} seats")
    for index, score in enumerate(message.scores):
        if score.seat != index:
            raise InvalidInput("UNKNOWN_SEAT", seat=score.seat, field=f"{field}.scores[{index}]")
    return HandResult(
        reason,
        finish,
        tuple(score.points for score in message.scores),
        tuple(score.penalty_points for score in message.scores),
    )


# --------------------------------------------------------------------------------------------
# Events


def event_to_proto(event: Event, state: HandState, *, for_seat: int | None) -> common_pb2.Event:
    """An engine event as ``for_seat`` may see it (None: a spectator).

    ``state`` is the state right after the move that caused the event (the meld an event names
    is shown as it is then; a hand's end carries its result and every rack). Private tiles (a
    drawn tile) are included only when ``for_seat`` is the event's seat.
    """
    okey = state.okey
    message = common_pb2.Event(
        kind=_EVENT_KINDS[event.kind],
        tiles=_shared_tiles(event.tiles, okey),
    )
    if event.seat is not None:
        message.seat = event.seat
        if for_seat == event.seat:
            message.private_tiles.extend(_shared_tiles(event.private, okey))
    if event.meld is not None:
        message.meld_index = event.meld
        if event.meld < len(state.table):
            message.meld.MergeFromString(_meld_bytes(state.table[event.meld].meld, okey))
    if event.kind in _POINTS_EVENTS:
        message.points = event.points
    if event.kind is EventKind.PENALTY and event.detail:
        message.penalty_reason = _PENALTIES[PenaltyReason(event.detail)]
    if event.kind is EventKind.HAND_ENDED and state.result is not None:
        message.hand_result.CopyFrom(hand_result_to_proto(state.result, state))
        message.revealed_racks.extend(_revealed(state))
    return message


# The okey.v1.EventKind of each engine kind (the same name).
_EVENT_KINDS: Final[Mapping[EventKind, common_pb2.EventKind]] = {
    EventKind.DREW: common_pb2.EVENT_KIND_DREW,
    EventKind.TOOK: common_pb2.EVENT_KIND_TOOK,
    EventKind.GAVE_BACK: common_pb2.EVENT_KIND_GAVE_BACK,
    EventKind.PENALTY: common_pb2.EVENT_KIND_PENALTY,
    EventKind.OPENED: common_pb2.EVENT_KIND_OPENED,
    EventKind.MELDED: common_pb2.EVENT_KIND_MELDED,
    EventKind.LAID_OFF: common_pb2.EVENT_KIND_LAID_OFF,
    EventKind.TOOK_OKEY: common_pb2.EVENT_KIND_TOOK_OKEY,
    EventKind.SHOWED_INDICATOR: common_pb2.EVENT_KIND_SHOWED_INDICATOR,
    EventKind.DISCARDED: common_pb2.EVENT_KIND_DISCARDED,
    EventKind.STOCK_OUT: common_pb2.EVENT_KIND_STOCK_OUT,
    EventKind.DECLINED_LAST_DISCARD: common_pb2.EVENT_KIND_DECLINED_LAST_DISCARD,
    EventKind.HAND_ENDED: common_pb2.EVENT_KIND_HAND_ENDED,
}


def _revealed(state: HandState) -> list[common_pb2.RevealedRack]:
    return [
        common_pb2.RevealedRack(seat=index, tiles=_shared_tiles(seat.rack, state.okey))
        for index, seat in enumerate(state.seats)
    ]


#: The engine's kind of every EventKind; None for the table's own kinds (seats, turns, deals,
#: the match): the engine never makes them and its readers skip them.
_EVENT_KINDS_BACK: Final[Mapping[int, EventKind | None]] = {
    **{value.number: None for value in common_pb2.EventKind.DESCRIPTOR.values if value.number},
    **{int(v): k for k, v in _EVENT_KINDS.items()},
}


def event_from_proto(message: common_pb2.Event, *, field: str = "event") -> Event | None:
    """The engine's event of an Event message: the inverse of ``event_to_proto``.

    Tiles are read by id (``private_tiles`` as given: the reader's own, if any); ``points``
    where the kind gives it a meaning; ``detail`` is a PENALTY's reason, or a HAND_ENDED's end
    reason, whose ``points`` are then the finish's multiplier, as in the engine's own event.
    None for a kind of the table's own (a seat, a turn, a deal, the match), read as strictly.
    The table's fields (sequence, times, occupants, deal records) are not the engine's and are
    not read. Refused: an unspecified or unknown kind, penalty reason or end reason
    (BAD_FIELD), a seat outside 0-3 (UNKNOWN_SEAT), an unknown tile (UNKNOWN_TILE), a meld
    index past ``MAX_COUNT`` (BAD_FIELD).
    """
    kind: EventKind | None = _enum_from_proto(
        _EVENT_KINDS_BACK, message.kind, f"{field}.kind", "EventKind"
    )
    seat: int | None = None
    if message.HasField("seat"):
        if message.seat >= SEATS:
            raise InvalidInput("UNKNOWN_SEAT", seat=message.seat, field=f"{field}.seat")
        seat = message.seat
    tiles = tiles_from_ids((tile.id for tile in message.tiles), field=f"{field}.tiles")
    private = tiles_from_ids(
        (tile.id for tile in message.private_tiles), field=f"{field}.private_tiles"
    )
    meld: int | None = None
    if message.HasField("meld_index"):
        if message.meld_index > MAX_COUNT:
            raise _bad_field(f"{field}.meld_index", message.meld_index)
        meld = message.meld_index
    points = message.points if kind in _POINTS_EVENTS else 0
    detail = ""
    if kind is EventKind.PENALTY and message.penalty_reason:
        detail = penalty_reason_from_proto(message.penalty_reason, field=f"{field}.penalty_reason")
    if kind is EventKind.HAND_ENDED and message.HasField("hand_result"):
        result = message.hand_result
        where = f"{field}.hand_result"
        detail = end_reason_from_proto(result.reason, field=f"{where}.reason").value
        if result.HasField("finish"):
            points = finish_from_proto(result.finish, field=f"{where}.finish").multiplier
    if kind is None:
        return None
    return Event(kind, seat, tiles, private, meld, points, detail)


# --------------------------------------------------------------------------------------------
# Views


def seat_view_to_proto(state: HandState, seat: int | None) -> common_pb2.SeatView:
    """What ``seat`` (None: a spectator) may know of ``state``, from the engine's ``view``.

    The rack comes with each tile's discard cost (``costly_discard``: an okey or a playable
    tile; ``playable``: a run or set on the table could take it). A spectator gets no rack.
    The table's own fields (ids, sequence, occupants, deadline, deal, match totals) stay empty.
    """
    public = _public_view(state)
    if seat is None:
        return public
    own = _own_part(state, seat, _rack_entries(state))
    return common_pb2.SeatView.FromString(public.SerializeToString() + own)


def seat_views_to_proto(
    state: HandState,
) -> tuple[list[common_pb2.SeatView], common_pb2.SeatView]:
    """Every seat's view and a spectator's, the face-up part built once for all five."""
    public = _public_view(state)
    shared = public.SerializeToString()
    entries = _rack_entries(state)
    seats = [
        common_pb2.SeatView.FromString(shared + _own_part(state, seat, entries))
        for seat in range(len(state.seats))
    ]
    return seats, public


def serialized_seat_views(state: HandState) -> tuple[list[bytes], bytes]:
    """``seat_views_to_proto``, serialized: for an answer assembled from bytes (nothing is
    parsed). Each seat's view is the face-up part's bytes followed by the seat's number and rack
    entries: parsing concatenated messages merges them (repeated fields append)."""
    shared = _public_view(state).SerializeToString()
    entries = _rack_entries(state)
    return [shared + _own_part(state, seat, entries) for seat in range(len(state.seats))], shared


def add_seat_views(
    state: HandState,
    views: RepeatedCompositeFieldContainer[common_pb2.SeatView],
    spectator: common_pb2.SeatView,
) -> None:
    """``seat_views_to_proto`` written straight into a response's ``views`` (appended, in seat
    order) and ``spectator_view`` (replaced): nothing is built twice.

    The face-up part is built and serialized once; each seat's view is those bytes followed by
    the seat's number and rack entries, all prebuilt: parsing concatenated messages merges
    them (repeated fields append), which is how protobuf defines it, and is several times
    cheaper than copying a hundred RackTile messages one by one.
    """
    public = _public_view(state)
    shared = public.SerializeToString()
    entries = _rack_entries(state)
    for seat in range(len(state.seats)):
        views.add().MergeFromString(shared + _own_part(state, seat, entries))
    spectator.CopyFrom(public)


def _public_view(state: HandState) -> common_pb2.SeatView:
    """The part of a view every seat and a spectator share: all that is face up."""
    okey = state.okey
    # The engine's view of the seat to move, whose rack is then left out.
    seen = view(state, state.turn)
    message = common_pb2.SeatView(
        rules_version=seen.version,
        rules=_rules_message(state.rules),
        indicator=_shared_tile(seen.indicator, okey),
        okey=_FACE_MESSAGES[seen.okey_face],
        dealer=seen.dealer,
        turn=seen.turn,
        phase=_PHASES[seen.phase],
        turn_number=seen.turn_number,
        stock_count=seen.stock_count,
        turn_progress=_turn_progress(state.this_turn, okey),
    )
    if seen.table:
        message.MergeFromString(
            b"".join(
                [
                    _view_meld_bytes(index, meld, owner, okey)
                    for index, (meld, owner) in enumerate(seen.table)
                ]
            )
        )
    for other in seen.seats:
        public = state.seats[other.seat]
        entry = message.seats.add(
            seat=other.seat,
            tile_count=other.tile_count,
            discards=_shared_tiles(other.discards, okey),
            opened_as=_OPENINGS[other.opened_as],
            opened_on_turn=public.opened_on_turn,
        )
        # The rest only when not at its default, as in ``fill_hand_state``.
        if public.penalties:
            entry.penalties.extend([_PENALTIES[reason] for reason in public.penalties])
        if other.penalties:
            entry.penalty_points = other.penalties
        if public.turns_played:
            entry.turns_played = public.turns_played
        if public.showed_indicator:
            entry.showed_indicator = True
    if seen.takeable is not None:
        message.takeable.CopyFrom(_shared_tile(seen.takeable, okey))
    if seen.result is not None:
        message.result.CopyFrom(hand_result_to_proto(seen.result, state))
    for index, rack in enumerate(seen.revealed_racks):
        message.revealed_racks.add(seat=index, tiles=_shared_tiles(rack, okey))
    return message


def _own_part(state: HandState, seat: int, entries: Sequence[bytes]) -> bytes:
    """What a seat's view adds to the face-up part, serialized: its number and its rack."""
    return _SEAT_NUMBERS[seat] + b"".join([entries[tile.id] for tile in state.seats[seat].rack])


def _rack_entries(state: HandState) -> list[bytes]:
    """Each tile's serialized rack entry (by tile id) in ``state``."""
    return _rack_entries_for(state.okey, playable_faces(state.table_melds(), state.rules))


def _rack_entries_for(okey: Okey, playable: frozenset[int]) -> list[bytes]:
    """Each tile's serialized rack entry (by tile id): wild for the two okeys, playable (and so
    a costly discard) for a tile playing as a face the table could take (a false joker plays
    as the okey's face), plain otherwise."""
    entries = list(_RACK_ENTRIES[_PLAIN])
    for face in playable:
        if 0 <= face < FACE_COUNT:
            tile_id = face * 2
            entries[tile_id : tile_id + 2] = _RACK_ENTRIES[_PLAYABLE][tile_id : tile_id + 2]
    if okey.face in playable:
        for joker in _FALSE_JOKER_IDS:
            entries[joker] = _RACK_ENTRIES[_PLAYABLE][joker]
    for wild in (okey.face * 2, okey.face * 2 + 1):
        entries[wild] = _RACK_ENTRIES[_WILD][wild]
    return entries


def _build_rack_tile(tile: Tile, wild: bool, playable: bool) -> common_pb2.RackTile:
    return common_pb2.RackTile(
        tile=_TILE_MESSAGES[tile.id][wild], playable=playable, costly_discard=wild or playable
    )


# The kinds of rack entry (a wild tile is never marked playable: see RackTile in common.proto).
_PLAIN, _PLAYABLE, _WILD = 0, 1, 2
_FALSE_JOKER_IDS: Final = tuple(tile.id for tile in ALL_TILES if tile.is_false_joker)
# Every rack entry there can be, serialized as a SeatView holding just it, by kind then tile id.
_RACK_ENTRIES: Final[tuple[tuple[bytes, ...], ...]] = tuple(
    tuple(
        common_pb2.SeatView(rack=[_build_rack_tile(tile, wild, playable)]).SerializeToString()
        for tile in ALL_TILES
    )
    for wild, playable in ((False, False), (False, True), (True, False))
)
# A SeatView's ``seat`` field for each seat, serialized.
_SEAT_NUMBERS: Final = tuple(
    common_pb2.SeatView(seat=seat).SerializeToString() for seat in range(SEATS)
)


def _rules_message(rules: RuleSet) -> common_pb2.RuleSet:
    """A rule set's message, built once per rule set (callers copy it)."""
    # By identity first: states read from requests share the RuleSet ``rules_from_proto``
    # remembers, and hashing or comparing a RuleSet's every knob costs more than the lookup.
    known = _RULES_BY_IDENTITY.get(id(rules))
    if known is not None and known[0] is rules:
        return known[1]
    message = _rules_message_by_value(rules)
    if len(_RULES_BY_IDENTITY) >= 64:
        _RULES_BY_IDENTITY.clear()
    _RULES_BY_IDENTITY[id(rules)] = (rules, message)  # holding ``rules`` keeps its id unique
    return message


_RULES_BY_IDENTITY: dict[int, tuple[RuleSet, common_pb2.RuleSet]] = {}


@lru_cache(maxsize=64)
def _rules_message_by_value(rules: RuleSet) -> common_pb2.RuleSet:
    return rules_to_proto(rules)


def _turn_progress(this_turn: ThisTurn, okey: Okey) -> common_pb2.TurnProgress:
    message = common_pb2.TurnProgress(
        taken_unopened=this_turn.taken_unopened,
        gave_back=this_turn.gave_back,
        opened=this_turn.opened,
        laid_off=this_turn.laid_off,
        took_okey=this_turn.took_okey,
    )
    if this_turn.taken is not None:
        message.taken.CopyFrom(_shared_tile(this_turn.taken, okey))
    return message


def seat_view_from_proto(message: common_pb2.SeatView, *, field: str = "view") -> SeatView:
    """The engine's view of a SeatView message: the inverse of ``seat_view_to_proto``.

    A seat's view only (a spectator's has no seat and is refused: there is no rack to read). Its
    rule set is ``rules_from_proto(message.rules)``; the view keeps its name. Tiles are read by
    id (every other field of a Tile is derived from it), and what the view derives is derived
    again rather than believed: the okey from the indicator (a given ``okey`` that differs is
    refused), each meld tile's wildness from the okey, the costly discards from the rack and the
    table (RackTile's flags are the server's answer, not an input), the tile taken this turn only
    for the seat to move. The table's own fields (ids, sequence, occupants, deadline, deal,
    match totals) and what the engine's view does not hold (when a seat opened, its turns, the
    rest of the turn's progress) are not read.

    Refused: no ``rules_version`` or no ``seat`` or no ``indicator`` (BAD_FIELD: a required field
    missing), an unknown rules version (UNKNOWN_RULES_VERSION), a bad rule set, an unknown
    tile (UNKNOWN_TILE), a tile in two places of the indicator, the rack, the table, the discard
    piles and the revealed racks (DUPLICATE_TILE_ID; the indicator's tile: TOO_MANY_COPIES), a
    seat number outside 0-3 (UNKNOWN_SEAT), not exactly four seats in seat order
    (WRONG_SEAT_COUNT, BAD_FIELD), a table meld out of index order or that is not the meld it
    says it is (BAD_FIELD, NOT_A_MELD, NOT_A_PAIR), an unknown enum value, a rack of more than 22
    tiles or one whose size is not the seat's ``tile_count``, a counter past ``MAX_COUNT``,
    penalty points that are not the penalties' count times the rule set's points, more hidden
    tiles (the stock and the other racks) than the set leaves unseen, a takeable tile that is
    not the last discard on the left of the seat to move, a tile taken this turn that is neither
    in the rack nor on the table, a phase that disagrees with the result (PHASE_ENDED exactly
    when a result is set), and revealed racks while the hand is live (all BAD_FIELD).
    """
    if not message.rules_version:
        raise _bad_field(f"{field}.rules_version", "unset")
    if message.rules_version != RULES_VERSION:
        raise InvalidInput(
            "UNKNOWN_RULES_VERSION", version=message.rules_version, field=f"{field}.rules_version"
        )
    rules = rules_from_proto(message.rules, field=f"{field}.rules")
    if not message.HasField("seat"):
        raise _bad_field(f"{field}.seat", "unset")
    seat = message.seat
    for name, number in (("seat", seat), ("dealer", message.dealer), ("turn", message.turn)):
        if number >= SEATS:
            raise InvalidInput("UNKNOWN_SEAT", seat=number, field=f"{field}.{name}")
    if not message.HasField("indicator"):
        raise _bad_field(f"{field}.indicator", "unset")
    okey = okey_from_indicator_id(message.indicator.id, field=f"{field}.indicator.id")
    if message.HasField("okey") and message.okey != face_to_proto(okey.face):
        shown = f"{_enum_value_name('Colour', message.okey.colour)}/{message.okey.number}"
        raise _bad_field(f"{field}.okey", shown)
    phase = phase_from_proto(message.phase, field=f"{field}.phase")
    if message.turn_number > MAX_COUNT:
        raise _bad_field(f"{field}.turn_number", message.turn_number)
    if message.stock_count > TILE_COUNT:
        raise _bad_field(f"{field}.stock_count", message.stock_count)
    if len(message.seats) != SEATS:
        raise InvalidInput("WRONG_SEAT_COUNT", seats=len(message.seats), field=f"{field}.seats")

    ledger = TileLedger(okey.indicator)
    rack = _rack_from_proto(message.rack, f"{field}.rack")
    ledger.add_all(rack, f"{field}.rack")
    seen = 1 + len(rack)  # the indicator and the rack (the ledger refuses any tile seen twice)
    table: list[tuple[Meld, int]] = []
    for index, item in enumerate(message.table):
        where = f"{field}.table[{index}]"
        if item.index != index:
            raise _bad_field(f"{where}.index", item.index)
        if item.owner_seat >= SEATS:
            raise InvalidInput("UNKNOWN_SEAT", seat=item.owner_seat, field=f"{where}.owner_seat")
        meld = _meld_from_proto(item.meld, okey, rules, f"{where}.meld")
        ledger.add_all(meld.tiles, f"{where}.meld.tiles")
        seen += len(meld.tiles)
        table.append((meld, item.owner_seat))
    seats: list[OtherSeat] = []
    for index, public in enumerate(message.seats):
        where = f"{field}.seats[{index}]"
        if public.seat != index:
            if public.seat >= SEATS:
                raise InvalidInput("UNKNOWN_SEAT", seat=public.seat, field=f"{where}.seat")
            raise _bad_field(f"{where}.seat", public.seat)  # not in seat order
        if public.tile_count > MAX_RACK:
            raise _bad_field(f"{where}.tile_count", public.tile_count)
        discards = tiles_from_ids((tile.id for tile in public.discards), field=f"{where}.discards")
        ledger.add_all(discards, f"{where}.discards")
        seen += len(discards)
        if len(public.penalties) > MAX_PENALTIES:
            raise _bad_field(f"{where}.penalties", f"{len(public.penalties)} penalties")
        for position, reason in enumerate(public.penalties):
            penalty_reason_from_proto(reason, field=f"{where}.penalties[{position}]")
        if public.penalty_points != len(public.penalties) * rules.penalty_points:
            raise _bad_field(f"{where}.penalty_points", public.penalty_points)
        seats.append(
            OtherSeat(
                seat=index,
                tile_count=public.tile_count,
                discards=discards,
                opened_as=opened_as_from_proto(public.opened_as, field=f"{where}.opened_as"),
                penalties=public.penalty_points,
                opened_on_turn=_opened_on_turn(public, f"{where}.opened_on_turn"),
            )
        )
    if seats[seat].tile_count != len(rack):
        raise _bad_field(f"{field}.seats[{seat}].tile_count", seats[seat].tile_count)
    hidden = message.stock_count + sum(other.tile_count for other in seats if other.seat != seat)
    if seen + hidden > TILE_COUNT:
        # More tiles in the stock and the other racks than the set leaves unseen.
        raise _bad_field(f"{field}.stock_count", message.stock_count)

    takeable: Tile | None = None
    if message.HasField("takeable"):
        takeable = tile_from_id(message.takeable.id, field=f"{field}.takeable.id")
        left = seats[left_of(message.turn)].discards
        if not left or left[-1].id != takeable.id:
            raise _bad_field(f"{field}.takeable", takeable)
    taken: Tile | None = None
    if message.turn == seat and message.turn_progress.HasField("taken"):
        where = f"{field}.turn_progress.taken"
        taken = tile_from_id(message.turn_progress.taken.id, field=f"{where}.id")
        placed = {tile.id for tile in rack} | {t.id for meld, _ in table for t in meld.tiles}
        if taken.id not in placed:
            raise _bad_field(where, taken)
    result: HandResult | None = None
    if message.HasField("result"):
        result = hand_result_from_proto(message.result, field=f"{field}.result")
    if (result is not None) != (phase is Phase.ENDED):
        raise _bad_field(f"{field}.phase", common_pb2.Phase.Name(message.phase))
    revealed = _revealed_from_proto(message.revealed_racks, seat, rack, ledger, phase, field)

    playable = playable_faces((meld for meld, _owner in table), rules)
    costly = tuple(tile for tile in rack if okey.is_wild(tile) or okey.plays_as(tile) in playable)
    return SeatView(
        seat=seat,
        rules_name=rules.name,
        version=message.rules_version,
        indicator=okey.indicator,
        okey_face=okey.face,
        dealer=message.dealer,
        turn=message.turn,
        phase=phase,
        turn_number=message.turn_number,
        rack=rack,
        costly_discards=costly,
        table=tuple(table),
        seats=tuple(seats),
        stock_count=message.stock_count,
        takeable=takeable,
        taken_this_turn=taken,
        result=result,
        revealed_racks=revealed,
        this_turn=_this_turn_from_proto(message, seat, taken, field),
    )


def _opened_on_turn(public: common_pb2.SeatPublic, field: str) -> int:
    """A seat's opening turn (-1: not opened), within what a hand can hold."""
    if public.opened_as == common_pb2.OPENING_KIND_NOT_OPENED or not public.opened_as:
        return -1
    if not -1 <= public.opened_on_turn <= MAX_COUNT:
        raise _bad_field(field, public.opened_on_turn)
    return public.opened_on_turn


def _this_turn_from_proto(
    message: common_pb2.SeatView, seat: int, taken: Tile | None, field: str
) -> ThisTurn:
    """The viewer's own turn so far (nothing when another seat is to move)."""
    if message.turn != seat:
        return ThisTurn()
    progress = message.turn_progress
    if progress.laid_off > MAX_RACK:
        raise _bad_field(f"{field}.turn_progress.laid_off", progress.laid_off)
    return ThisTurn(
        taken=taken,
        taken_unopened=progress.taken_unopened and taken is not None,
        gave_back=progress.gave_back,
        opened=progress.opened,
        laid_off=progress.laid_off,
        took_okey=progress.took_okey,
    )


def _rack_from_proto(rack: Sequence[common_pb2.RackTile], field: str) -> tuple[Tile, ...]:
    """A view's rack, read by tile id (each RackTile's tile required)."""
    if len(rack) > MAX_RACK:
        raise _bad_field(field, f"{len(rack)} tiles")
    tiles = []
    for index, item in enumerate(rack):
        if not item.HasField("tile"):
            raise _bad_field(f"{field}[{index}].tile", "unset")
        tiles.append(tile_from_id(item.tile.id, field=f"{field}[{index}].tile.id"))
    return tuple(tiles)


def _meld_from_proto(message: common_pb2.Meld, okey: Okey, rules: RuleSet, field: str) -> Meld:
    """A Meld message as the engine keeps it, checked to be the meld it says it is (its
    ``value`` is derived, not read)."""
    kind: MeldKind = _enum_from_proto(_MELD_KINDS_BACK, message.kind, f"{field}.kind", "MeldKind")
    tiles: list[Tile] = []
    stands: list[int | None] = []
    for index, item in enumerate(message.tiles):
        where = f"{field}.tiles[{index}]"
        if not item.HasField("tile"):
            raise _bad_field(f"{where}.tile", "unset")
        tiles.append(tile_from_id(item.tile.id, field=f"{where}.tile.id"))
        if item.HasField("stands_for"):
            stands.append(
                face_from_proto(item.stands_for, field=f"{where}.stands_for", code="NOT_A_MELD")
            )
        else:
            stands.append(None)
    colour = _COLOURS_BACK.get(int(message.colour))
    if message.colour and colour is None:
        raise _bad_field(f"{field}.colour", int(message.colour))
    wild = tuple(okey.is_wild(tile) for tile in tiles)
    meld = Meld(kind, tuple(tiles), tuple(stands), message.number, colour, wild)
    if not _is_consistent(meld, okey, rules):
        code = "NOT_A_PAIR" if kind is MeldKind.PAIR else "NOT_A_MELD"
        raise InvalidInput(code, field=field, meld=" ".join(meld.names()))
    return meld


def _revealed_from_proto(
    racks: Sequence[common_pb2.RevealedRack],
    seat: int,
    rack: tuple[Tile, ...],
    ledger: TileLedger,
    phase: Phase,
    field: str,
) -> tuple[tuple[Tile, ...], ...]:
    """Every rack of an ended hand, in seat order (the viewer's own is its rack); none while
    the hand is live."""
    if not racks:
        return ()
    where = f"{field}.revealed_racks"
    if phase is not Phase.ENDED:
        raise _bad_field(where, f"{len(racks)} racks while the hand is live")
    if len(racks) != SEATS:
        raise InvalidInput("WRONG_SEAT_COUNT", seats=len(racks), field=where)
    out = []
    for index, item in enumerate(racks):
        if item.seat != index:
            if item.seat >= SEATS:
                raise InvalidInput("UNKNOWN_SEAT", seat=item.seat, field=f"{where}[{index}].seat")
            raise _bad_field(f"{where}[{index}].seat", item.seat)
        tiles = tiles_from_ids((tile.id for tile in item.tiles), field=f"{where}[{index}].tiles")
        if len(tiles) > MAX_RACK:
            raise _bad_field(f"{where}[{index}].tiles", f"{len(tiles)} tiles")
        if index == seat:
            if sorted(tile.id for tile in tiles) != sorted(tile.id for tile in rack):
                raise _bad_field(f"{where}[{index}].tiles", "not the rack")
        else:
            ledger.add_all(tiles, f"{where}[{index}].tiles")
        out.append(tiles)
    return tuple(out)


# --------------------------------------------------------------------------------------------
# The hand state


def hand_state_to_proto(state: HandState) -> common_pb2.HandState:
    """The whole state (every rack, the stock's order): for services only."""
    message = common_pb2.HandState()
    fill_hand_state(message, state)
    return message


def fill_hand_state(message: common_pb2.HandState, state: HandState) -> None:
    """``hand_state_to_proto`` written into ``message`` (an empty one, e.g. a response's
    ``state``), so that it is not built and then copied."""
    message.rules_version = state.version
    message.rules.CopyFrom(_rules_message(state.rules))
    message.indicator_tile_id = state.okey.indicator.id
    message.dealer = state.dealer
    message.turn = state.turn
    message.phase = _PHASES[state.phase]
    message.stock_tile_ids.extend([tile.id for tile in state.stock])
    message.turn_number = state.turn_number
    for seat in state.seats:
        entry = message.seats.add(
            rack_tile_ids=[tile.id for tile in seat.rack],
            discard_tile_ids=[tile.id for tile in seat.discards],
            opened_as=_OPENINGS[seat.opened_as],  # never 0: "not opened" is a value
            opened_on_turn=seat.opened_on_turn,
        )
        # The rest only when not at its default (what is at its default is not written anyway,
        # and each field set by name has to be looked up).
        if seat.penalties:
            entry.penalties.extend([_PENALTIES[reason] for reason in seat.penalties])
        if seat.turns_played:
            entry.turns_played = seat.turns_played
        if seat.showed_indicator:
            entry.showed_indicator = True
    if state.table:
        # Parsing concatenated messages appends their repeated fields: the table, in order.
        message.MergeFromString(b"".join([_state_meld_bytes(item) for item in state.table]))
    if state.takeable is not None:
        message.takeable_tile_id = state.takeable.id
    turn = state.this_turn
    this_turn = message.this_turn
    this_turn.SetInParent()  # present even when every field is at its default
    this_turn.taken_unopened = turn.taken_unopened
    this_turn.gave_back = turn.gave_back
    this_turn.opened = turn.opened
    this_turn.laid_off = turn.laid_off
    this_turn.took_okey = turn.took_okey
    if turn.taken is not None:
        this_turn.taken_tile_id = turn.taken.id
    if state.result is not None:
        message.result.CopyFrom(hand_result_to_proto(state.result, state))


def hand_state_from_proto(message: common_pb2.HandState, *, field: str = "state") -> HandState:
    """The engine's state of a HandState message, refused if it is not one.

    Refused: no ``rules_version`` (a required field), an unknown one (UNKNOWN_RULES_VERSION,
    before anything else is read), a bad rule set, an unknown tile id, a tile in two places
    (the indicator, racks, discard piles, table, stock), not exactly four seats, a seat number
    outside 0-3, a rack of more than 22 tiles, a counter past ``MAX_COUNT`` or
    ``MAX_PENALTIES``, a table meld that is not the meld it says it is, a takeable tile that is
    not the last discard on the left of the seat to move, an unknown enum value, and a phase
    that disagrees with the result (PHASE_ENDED exactly when a result is set). Not every tile of
    the set has to be placed: a what-if position may leave some out.
    """
    if not message.rules_version:
        raise _bad_field(f"{field}.rules_version", "unset")  # a required field missing
    if message.rules_version != RULES_VERSION:
        raise InvalidInput(
            "UNKNOWN_RULES_VERSION", version=message.rules_version, field=f"{field}.rules_version"
        )
    rules = rules_from_proto(message.rules, field=f"{field}.rules")
    okey = okey_from_indicator_id(message.indicator_tile_id, field=f"{field}.indicator_tile_id")
    for name in ("dealer", "turn"):
        seat_number = int(getattr(message, name))
        if seat_number >= SEATS:
            raise InvalidInput("UNKNOWN_SEAT", seat=seat_number, field=f"{field}.{name}")
    phase = phase_from_proto(message.phase, field=f"{field}.phase")
    if len(message.seats) != SEATS:
        count = len(message.seats)
        raise InvalidInput("WRONG_SEAT_COUNT", seats=count, field=f"{field}.seats")
    ledger = TileLedger(okey.indicator)
    seats = []
    for index, seat in enumerate(message.seats):
        where = f"{field}.seats[{index}]"
        rack_field = f"{where}.rack_tile_ids"
        discards_field = f"{where}.discard_tile_ids"
        # Plain lists: a message's repeated field is slow to iterate, and each is read twice.
        rack_ids = seat.rack_tile_ids[:]
        rack = tiles_from_ids(rack_ids, field=rack_field)
        if len(rack) > MAX_RACK:
            raise _bad_field(rack_field, f"{len(rack)} tiles")
        discard_ids = seat.discard_tile_ids[:]
        discards = tiles_from_ids(discard_ids, field=discards_field)
        ledger.add_ids(rack_ids, rack_field)
        ledger.add_ids(discard_ids, discards_field)
        opened_on_turn = seat.opened_on_turn
        if not -1 <= opened_on_turn <= MAX_COUNT:
            raise _bad_field(f"{where}.opened_on_turn", opened_on_turn)
        turns_played = seat.turns_played
        if turns_played > MAX_COUNT:
            raise _bad_field(f"{where}.turns_played", turns_played)
        penalties = seat.penalties
        if len(penalties) > MAX_PENALTIES:
            raise _bad_field(f"{where}.penalties", f"{len(penalties)} penalties")
        opened = seat.opened_as
        if opened not in _OPENINGS_BACK:
            opened_as_from_proto(opened, field=f"{where}.opened_as")  # raises: no such kind
        seats.append(
            Seat(
                rack=rack,
                discards=discards,
                opened_as=_OPENINGS_BACK[opened],
                opened_on_turn=opened_on_turn,
                penalties=tuple(
                    penalty_reason_from_proto(reason, field=f"{where}.penalties[{i}]")
                    for i, reason in enumerate(penalties)
                )
                if penalties
                else (),
                turns_played=turns_played,
                showed_indicator=seat.showed_indicator,
            )
        )
    table = []
    for index, meld_message in enumerate(message.table):
        where = f"{field}.table[{index}]"
        item = _state_meld_remembered(meld_message, okey, rules, where)
        ledger.add_all(item.meld.tiles, f"{where}.tiles")
        table.append(item)
    stock_ids = message.stock_tile_ids[:]
    stock = tiles_from_ids(stock_ids, field=f"{field}.stock_tile_ids")
    ledger.add_ids(stock_ids, f"{field}.stock_tile_ids")
    takeable: Tile | None = None
    if message.HasField("takeable_tile_id"):
        where = f"{field}.takeable_tile_id"
        takeable = tile_from_id(message.takeable_tile_id, field=where)
        left = seats[left_of(message.turn)].discards
        if not left or left[-1].id != takeable.id:
            raise _bad_field(where, takeable)
    turn = message.this_turn
    for name, count in (
        ("turn_number", message.turn_number),
        ("this_turn.laid_off", turn.laid_off),
    ):
        if count > MAX_COUNT:
            raise _bad_field(f"{field}.{name}", count)
    taken: Tile | None = None
    if turn.HasField("taken_tile_id"):
        taken = tile_from_id(turn.taken_tile_id, field=f"{field}.this_turn.taken_tile_id")
    this_turn = ThisTurn(
        taken=taken,
        taken_unopened=turn.taken_unopened,
        gave_back=turn.gave_back,
        opened=turn.opened,
        laid_off=turn.laid_off,
        took_okey=turn.took_okey,
    )
    result: HandResult | None = None
    if message.HasField("result"):
        result = hand_result_from_proto(message.result, field=f"{field}.result")
    if (result is not None) != (phase is Phase.ENDED):
        raise _bad_field(f"{field}.phase", common_pb2.Phase.Name(message.phase))
    return HandState(
        rules=rules,
        okey=okey,
        dealer=message.dealer,
        turn=message.turn,
        phase=phase,
        seats=tuple(seats),
        table=tuple(table),
        stock=stock,
        takeable=takeable,
        turn_number=message.turn_number,
        this_turn=this_turn,
        result=result,
        version=message.rules_version,
    )


# --------------------------------------------------------------------------------------------
# Violations


def violation_to_proto(error: OkeyError, language: str = "en") -> common_pb2.Violation:
    """An engine error as a validation answer's Violation (code, parameters, sentence)."""
    return common_pb2.Violation(
        code=error.code,
        params={key: str(value) for key, value in error.params.items()},
        message=error.message(language),
    )


__all__ = [
    "KNOB_LIMIT",
    "MAX_COUNT",
    "MAX_PENALTIES",
    "MAX_RACK",
    "TileLedger",
    "action_from_proto",
    "action_to_proto",
    "add_seat_views",
    "colour_to_proto",
    "end_reason_from_proto",
    "end_reason_to_proto",
    "event_from_proto",
    "event_to_proto",
    "face_from_proto",
    "face_to_proto",
    "fill_hand_state",
    "finish_from_proto",
    "finish_to_proto",
    "group_from_proto",
    "group_to_proto",
    "hand_result_from_proto",
    "hand_result_to_proto",
    "hand_state_from_proto",
    "hand_state_to_proto",
    "meld_to_proto",
    "okey_from_indicator_id",
    "opened_as_from_proto",
    "opened_as_to_proto",
    "penalty_reason_from_proto",
    "penalty_reason_to_proto",
    "phase_from_proto",
    "phase_to_proto",
    "rules_from_proto",
    "rules_to_proto",
    "seat_view_from_proto",
    "seat_view_to_proto",
    "seat_views_to_proto",
    "serialized_seat_views",
    "table_meld_to_proto",
    "tile_from_id",
    "tile_to_proto",
    "tiles_from_ids",
    "tiles_to_proto",
    "violation_to_proto",
]
