"""Bots as players and spectators see them where the rule set does not label bots.

North Sultan's text: "To keep the atmosphere of the table, bots are not individually labelled"
(the ``bots_labelled`` knob, false in its preset; a host may set it either way). At such a table
nothing a player or a spectator is sent says which seats are bots: a bot seat is shown as a
player's seat, with a person's name and an id shaped like a player's (both fixed per table and
seat), no bot level, and a turn clock like a player's (``turns.turn_timer``); a seat whose player
left or is away shows as that player, away. Services (the lobby, scoring, benches) are sent the
truth by GetTable and ListTables; views, events and hand records are everyone's, so they are
always shown this way at such a table. Where bots are labelled every answer is the truth.
"""

from __future__ import annotations

from collections.abc import Sequence

from okey.v1 import common_pb2, table_pb2

from okey101.platform.bot_seats import (
    BOT_NAMES,
    bot_name,
    bot_player_id,
    bots_labelled,
    hide_bot,
    hide_bots,
    hide_bots_in_result,
    seat_names,
)
from okey101.table.records import SeatRecord, TableRecord


def named_bots(seats: Sequence[SeatRecord], table_id: str) -> list[SeatRecord]:
    """``seats`` with each bot seat that has no name given its ``bot_name`` (what every answer,
    scoring's score sheet included, then calls it)."""
    unnamed = [i for i, seat in enumerate(seats) if seat.kind == "bot" and not seat.display_name]
    names = seat_names(table_id, [seat.display_name for seat in seats], unnamed)
    return [
        seat.replace(display_name=names[index]) if index in unnamed else seat
        for index, seat in enumerate(seats)
    ]


def shown_occupant(
    seat: SeatRecord, index: int, record: TableRecord, *, labelled: bool | None = None
) -> common_pb2.SeatOccupant:
    """Who holds seat ``index`` as players and spectators are shown it; ``labelled``:
    ``bots_labelled`` of the table's rules, when the caller knows it already."""
    occupant = seat.occupant(index)
    if labelled is None:
        labelled = bots_labelled(record.rules_message())
    if not labelled:
        hide_bot(occupant, record.table_id)
    return occupant


def shown_occupants(record: TableRecord) -> list[common_pb2.SeatOccupant]:
    """Every seat's ``shown_occupant``, in seat order."""
    labelled = bots_labelled(record.rules_message())
    return [
        shown_occupant(seat, index, record, labelled=labelled)
        for index, seat in enumerate(record.seats)
    ]


def hide_bots_in_hand(hand: table_pb2.HandRecord) -> None:
    """A hand's record as its players are shown it, in place: where bots are not labelled, its
    seats as ``hide_bot`` shows them and a bot seat's moves as a player's (an away player's
    stay their bot's)."""
    if bots_labelled(hand.rules):
        return
    bots = set()
    for occupant in hand.seats:
        if occupant.kind == common_pb2.OCCUPANT_KIND_BOT and not occupant.player_id:
            bots.add(occupant.seat)
        hide_bot(occupant, hand.table_id)
    for move in hand.moves:
        if move.seat in bots and move.source == table_pb2.MOVE_SOURCE_BOT:
            move.source = table_pb2.MOVE_SOURCE_PLAYER


__all__ = [
    "BOT_NAMES",
    "bot_name",
    "bot_player_id",
    "bots_labelled",
    "hide_bot",
    "hide_bots",
    "hide_bots_in_hand",
    "hide_bots_in_result",
    "named_bots",
    "seat_names",
    "shown_occupant",
    "shown_occupants",
]
