"""The events a table logs besides the engine's: seats taken, left, away and back, turns
started and timed out, the match started and ended, the table closed; and the engine's events
as the table logs them (everyone's copy, the mover's private tiles apart)."""

from __future__ import annotations

from okey.v1 import common_pb2

from okey101.engine.hand import Event, HandState
from okey101.platform import convert
from okey101.table import disguise
from okey101.table.change import EventDraft
from okey101.table.records import SeatRecord, TableRecord
from okey101.table.views import hand_live


def presence(
    kind: int, seat: int, occupant: SeatRecord, record: TableRecord, state: HandState | None
) -> EventDraft:
    """A seat taken, left, away or back: the hand it happened in, if one is in play; its
    occupant as players see it (``disguise``: everyone is sent the same event)."""
    live = hand_live(state)
    return EventDraft(
        common_pb2.Event(
            kind=kind,  # type: ignore[arg-type]
            seat=seat,
            occupant=disguise.shown_occupant(occupant, seat, record),
            hand_id=record.hand_id if live else "",
            hand_number=record.hand_number if live else 0,
        )
    )


def turn_started(seat: int, record: TableRecord, deadline_us: int | None) -> EventDraft:
    event = common_pb2.Event(
        kind=common_pb2.EVENT_KIND_TURN_STARTED,
        seat=seat,
        hand_id=record.hand_id,
        hand_number=record.hand_number,
    )
    if deadline_us is not None:
        event.turn_deadline.FromMicroseconds(deadline_us)
    return EventDraft(event)


def turn_timed_out(seat: int, record: TableRecord) -> EventDraft:
    return EventDraft(
        common_pb2.Event(
            kind=common_pb2.EVENT_KIND_TURN_TIMED_OUT,
            seat=seat,
            hand_id=record.hand_id,
            hand_number=record.hand_number,
        )
    )


def of_kind(kind: int) -> EventDraft:
    """An event with nothing but its kind (the match started, the table closed)."""
    return EventDraft(common_pb2.Event(kind=kind))  # type: ignore[arg-type]


def engine_event(event: Event, after: HandState, record: TableRecord) -> EventDraft:
    """An engine event (``after``: the state right after the move that caused it) as the table
    logs it: everyone's copy, and the private tiles (a drawn tile) as the mover's extra."""
    message = convert.event_to_proto(event, after, for_seat=event.seat)
    message.hand_id = record.hand_id
    message.hand_number = record.hand_number
    draft = EventDraft(message)
    if message.private_tiles:
        draft.private[message.seat] = common_pb2.Event(
            private_tiles=message.private_tiles
        ).SerializeToString()
        del message.private_tiles[:]
    return draft


__all__ = ["engine_event", "of_kind", "presence", "turn_started", "turn_timed_out"]
