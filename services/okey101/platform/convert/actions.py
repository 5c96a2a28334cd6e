"""Moves: an Action message as the engine's move, and back (with the groups they put down)."""

from __future__ import annotations

from collections.abc import Iterable

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
from okey101.engine.errors import InvalidInput
from okey101.platform.convert.enums import RUN_ENDS, RUN_ENDS_BACK, enum_from_proto
from okey101.platform.convert.tiles import (
    face_from_proto,
    face_to_proto,
    tile_from_id,
    tiles_from_ids,
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
        end: End | None = enum_from_proto(RUN_ENDS_BACK, lay_off.end, f"{where}.end", "RunEnd")
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
            tile_id=action.tile.id, meld_index=action.meld, end=RUN_ENDS[action.end]
        )
        return common_pb2.Action(lay_off=lay_off)
    if isinstance(action, TakeOkey):
        take = common_pb2.TakeOkeyAction(
            meld_index=action.meld, tile_ids=[tile.id for tile in action.tiles]
        )
        return common_pb2.Action(take_okey=take)
    return common_pb2.Action(discard=common_pb2.DiscardAction(tile_id=action.tile.id))
