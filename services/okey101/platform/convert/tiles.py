"""Tiles and faces: ids read and checked, Tile and Face messages written from prebuilt ones."""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from typing import Final

from okey.v1 import common_pb2

from okey101.engine.errors import InvalidInput
from okey101.engine.tiles import (
    ALL_TILES,
    FACE_COUNT,
    TILE_COUNT,
    Okey,
    Tile,
    face_colour,
    face_number,
    face_of,
    tile_by_id,
)
from okey101.platform.convert.enums import COLOURS, COLOURS_BACK, enum_value_name


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
        message.colour = COLOURS[tile.colour]
        message.number = tile.number
    return message


#: Every Tile message there can be (106 tiles, wild or not), by tile id then wildness, built
#: once: a copy is ten times cheaper than building one, and views hold a hundred tiles. Shared:
#: never to be changed, only copied (by a constructor, ``add``, ``extend``, ``CopyFrom``).
TILE_MESSAGES: Final[tuple[tuple[common_pb2.Tile, common_pb2.Tile], ...]] = tuple(
    (_build_tile(tile, False), _build_tile(tile, True)) for tile in ALL_TILES
)


def tile_to_proto(tile: Tile, okey: Okey | None = None) -> common_pb2.Tile:
    """A Tile message; ``wild`` is set when ``okey`` says it is one of the hand's okeys."""
    message = common_pb2.Tile()
    message.CopyFrom(TILE_MESSAGES[tile.id][okey is not None and okey.is_wild(tile)])
    return message


def tiles_to_proto(tiles: Iterable[Tile], okey: Okey | None = None) -> list[common_pb2.Tile]:
    return [tile_to_proto(tile, okey) for tile in tiles]


def shared_tile(tile: Tile, okey: Okey | None) -> common_pb2.Tile:
    """``tile_to_proto``'s prebuilt message itself, for a message that copies what it is given
    (a constructor, ``add``, ``extend``, ``CopyFrom``): never to be changed."""
    return TILE_MESSAGES[tile.id][okey is not None and okey.is_wild(tile)]


def shared_tiles(tiles: Iterable[Tile], okey: Okey) -> list[common_pb2.Tile]:
    """``shared_tile`` of each tile."""
    return [TILE_MESSAGES[tile.id][okey.is_wild(tile)] for tile in tiles]


def face_to_proto(face: int) -> common_pb2.Face:
    """A coloured face (0-51) as a Face message."""
    if not 0 <= face < FACE_COUNT:
        return _build_face(face)  # not a face: fails as building one does
    message = common_pb2.Face()
    message.CopyFrom(FACE_MESSAGES[face])
    return message


def _build_face(face: int) -> common_pb2.Face:
    return common_pb2.Face(colour=COLOURS[face_colour(face)], number=face_number(face))


#: Every Face message (52), built once, like the tiles (shared: copied by whoever takes one).
FACE_MESSAGES: Final = tuple(_build_face(face) for face in range(FACE_COUNT))


def face_from_proto(
    message: common_pb2.Face, *, field: str = "face", code: str = "BAD_OKEY_AS"
) -> int:
    """A Face message as a face index (0-51); ``code`` if it is not a coloured face."""
    colour = COLOURS_BACK.get(int(message.colour))
    if colour is None or not 1 <= message.number <= 13:
        shown = f"{enum_value_name('Colour', message.colour)}/{message.number}"
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
