"""Serialized parts that states and views are assembled from, without building them twice.

Parsing concatenated serialized messages merges them (repeated fields append, in order), which is
how protobuf defines it: so a state's table is the bytes of one HandState per meld joined, a
view's table the bytes of one SeatView per meld, and a seat's view the face-up part's bytes
followed by the seat's number and its rack entries, each prebuilt. Several times cheaper than
copying a hundred messages one by one. A meld's parts are remembered by the meld object (see
``memo``); rack entries and seat numbers exist once for every tile and seat.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from okey.v1 import common_pb2

from okey101.engine.hand import SEATS, HandState, TableMeld
from okey101.engine.melds import Meld
from okey101.engine.solver.playability import playable_faces
from okey101.engine.tiles import ALL_TILES, FACE_COUNT, Okey, Tile
from okey101.platform.convert.enums import MELD_KINDS, colour_to_proto
from okey101.platform.convert.melds import meld_to_proto
from okey101.platform.convert.memo import (
    MELD_BYTES,
    RACK_ENTRIES_BY_TABLE,
    STATE_MELD_BYTES,
    VIEW_MELD_BYTES,
)
from okey101.platform.convert.tiles import FACE_MESSAGES, TILE_MESSAGES

# --------------------------------------------------------------------------------------------
# Table melds


def meld_bytes(meld: Meld, okey: Okey) -> bytes:
    """``meld_to_proto(meld, okey)``, serialized and remembered."""
    key = (id(meld), okey.face)
    data: bytes | None = MELD_BYTES.owned(key, meld)
    if data is None:
        data = meld_to_proto(meld, okey).SerializeToString()
        MELD_BYTES.remember_owned(key, meld, data)
    return data


def state_meld_bytes(item: TableMeld) -> bytes:
    """A HandState holding just ``item`` in its table, serialized and remembered."""
    key = (id(item),)
    data: bytes | None = STATE_MELD_BYTES.owned(key, item)
    if data is None:
        meld = item.meld
        message = common_pb2.HandState()
        added = message.table.add(
            owner_seat=item.owner,
            kind=MELD_KINDS[meld.kind],
            number=meld.number,
            colour=colour_to_proto(meld.colour),
        )
        for tile, stands in zip(meld.tiles, meld.stands_for, strict=True):
            if stands is None:
                added.tiles.add(tile_id=tile.id)
            else:
                added.tiles.add(tile_id=tile.id, stands_for=FACE_MESSAGES[stands])
        data = message.SerializeToString()
        STATE_MELD_BYTES.remember_owned(key, item, data)
    return data


def view_meld_bytes(index: int, meld: Meld, owner: int, okey: Okey) -> bytes:
    """A SeatView holding just this table meld, serialized and remembered."""
    key = (id(meld), okey.face, index, owner)
    data: bytes | None = VIEW_MELD_BYTES.owned(key, meld)
    if data is None:
        message = common_pb2.SeatView()
        message.table.add(index=index, owner_seat=owner).meld.MergeFromString(
            meld_bytes(meld, okey)
        )
        data = message.SerializeToString()
        VIEW_MELD_BYTES.remember_owned(key, meld, data)
    return data


# --------------------------------------------------------------------------------------------
# A seat's own part of its view


def own_part(state: HandState, seat: int, entries: Sequence[bytes]) -> bytes:
    """What a seat's view adds to the face-up part, serialized: its number, its rack and, for
    the seat to move, whether it held the taken tile's twin (a hidden tile: its own only)."""
    rack = b"".join([entries[tile.id] for tile in state.seats[seat].rack])
    if seat == state.turn and state.this_turn.twin_held:
        return SEAT_NUMBERS[seat] + rack + _TWIN_HELD
    return SEAT_NUMBERS[seat] + rack


#: ``turn_progress { twin_held: true }``, merged into the face-up part's turn progress.
_TWIN_HELD: Final = common_pb2.SeatView(
    turn_progress=common_pb2.TurnProgress(twin_held=True)
).SerializeToString()


def rack_entries(state: HandState) -> list[bytes]:
    """Each tile's serialized rack entry (by tile id) in ``state`` (remembered for the state's
    table: it changes only when a meld is laid down or grows; callers only read the list)."""
    key = (id(state.table), state.okey.face, id(state.rules))
    entries: list[bytes] | None = RACK_ENTRIES_BY_TABLE.owned(key, state.table)
    if entries is None:
        entries = rack_entries_for(state.okey, playable_faces(state.table_melds(), state.rules))
        RACK_ENTRIES_BY_TABLE.remember_owned(key, state.table, entries)
    return entries


def rack_entries_for(okey: Okey, playable: frozenset[int]) -> list[bytes]:
    """Each tile's serialized rack entry (by tile id): wild for the two okeys, playable (and so
    a costly discard) for a tile playing as a face the table could take (a false joker plays
    as the okey's face), plain otherwise."""
    entries = list(RACK_ENTRIES[_PLAIN])
    for face in playable:
        if 0 <= face < FACE_COUNT:
            tile_id = face * 2
            entries[tile_id : tile_id + 2] = RACK_ENTRIES[_PLAYABLE][tile_id : tile_id + 2]
    if okey.face in playable:
        for joker in _FALSE_JOKER_IDS:
            entries[joker] = RACK_ENTRIES[_PLAYABLE][joker]
    for wild in (okey.face * 2, okey.face * 2 + 1):
        entries[wild] = RACK_ENTRIES[_WILD][wild]
    return entries


def _build_rack_tile(tile: Tile, wild: bool, playable: bool) -> common_pb2.RackTile:
    return common_pb2.RackTile(
        tile=TILE_MESSAGES[tile.id][wild], playable=playable, costly_discard=wild or playable
    )


# The kinds of rack entry (a wild tile is never marked playable: see RackTile in common.proto).
_PLAIN, _PLAYABLE, _WILD = 0, 1, 2
_FALSE_JOKER_IDS: Final = tuple(tile.id for tile in ALL_TILES if tile.is_false_joker)
#: Every rack entry there can be, serialized as a SeatView holding just it, by kind (plain,
#: playable, wild) then tile id.
RACK_ENTRIES: Final[tuple[tuple[bytes, ...], ...]] = tuple(
    tuple(
        common_pb2.SeatView(rack=[_build_rack_tile(tile, wild, playable)]).SerializeToString()
        for tile in ALL_TILES
    )
    for wild, playable in ((False, False), (False, True), (True, False))
)
#: A SeatView's ``seat`` field for each seat, serialized.
SEAT_NUMBERS: Final = tuple(
    common_pb2.SeatView(seat=seat).SerializeToString() for seat in range(SEATS)
)


# --------------------------------------------------------------------------------------------
# Fields of an answer assembled from serialized parts

# Every one-byte varint (the answers' keys, and many lengths), made once.
_SMALL_VARINTS: Final = tuple(bytes((value,)) for value in range(0x80))


def length_delimited(number: int, payload: bytes) -> bytes:
    """Field ``number`` holding ``payload`` (a message, serialized) as protobuf's wire format
    writes it: the key (field number, wire type 2), the length, the bytes."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def varint(value: int) -> bytes:
    """A non-negative integer as a protobuf varint: 7 bits a byte, low bits first."""
    if value < 0x80:
        return _SMALL_VARINTS[value]
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
