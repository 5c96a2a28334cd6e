"""Events: what a move caused, as a seat (or a spectator) may see it, and back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from okey.v1 import common_pb2

from okey101.engine.errors import InvalidInput
from okey101.engine.hand import SEATS, Event, EventKind, HandState
from okey101.engine.seat import PenaltyReason
from okey101.platform.convert.enums import (
    PENALTIES,
    end_reason_from_proto,
    enum_from_proto,
    penalty_reason_from_proto,
)
from okey101.platform.convert.limits import MAX_COUNT, bad_field
from okey101.platform.convert.results import finish_from_proto, hand_result_to_proto
from okey101.platform.convert.tiles import shared_tiles, tiles_from_ids
from okey101.platform.convert.wire import meld_bytes

# The event kinds whose `points` means something (see Event.points in common.proto).
_POINTS_EVENTS: Final = frozenset(
    {EventKind.PENALTY, EventKind.OPENED, EventKind.MELDED, EventKind.SHOWED_INDICATOR}
)


def event_to_proto(event: Event, state: HandState, *, for_seat: int | None) -> common_pb2.Event:
    """An engine event as ``for_seat`` may see it (None: a spectator).

    ``state`` is the state right after the move that caused the event (the meld an event names
    is shown as it is then; a hand's end carries its result and every rack). Private tiles (a
    drawn tile) are included only when ``for_seat`` is the event's seat.
    """
    okey = state.okey
    message = common_pb2.Event(
        kind=_EVENT_KINDS[event.kind],
        tiles=shared_tiles(event.tiles, okey),
    )
    if event.seat is not None:
        message.seat = event.seat
        if for_seat == event.seat:
            message.private_tiles.extend(shared_tiles(event.private, okey))
    if event.meld is not None:
        message.meld_index = event.meld
        if event.meld < len(state.table):
            message.meld.MergeFromString(meld_bytes(state.table[event.meld].meld, okey))
    if event.kind in _POINTS_EVENTS:
        message.points = event.points
    if event.kind is EventKind.PENALTY and event.detail:
        message.penalty_reason = PENALTIES[PenaltyReason(event.detail)]
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
        common_pb2.RevealedRack(seat=index, tiles=shared_tiles(seat.rack, state.okey))
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
    kind: EventKind | None = enum_from_proto(
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
            raise bad_field(f"{field}.meld_index", message.meld_index)
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
