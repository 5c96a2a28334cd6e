"""What a table's change owes its players' own streams (``LobbyService.WatchPlayer``).

A seat's turn starting, a seat going away or coming back, and a match's end are events of the
table's log; the players they concern also learn them on their own stream, which the lobby
keeps. ``owed`` turns a change's numbered events into outbox rows (kind ``player``), written
with the change in its one write, so a player is told exactly when the table committed it; the
outbox sends each to ``LobbyService.RecordPlayerEvents`` until the lobby has it, and the lobby
records each row once by its key (the table, the event's sequence number and the seat).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from okey.v1 import common_pb2, lobby_pb2

from okey101.table.journal import OutboxColumns
from okey101.table.records import TableRecord

#: The outbox rows' kind.
KIND: Final = "player"


def owed(
    record: TableRecord, events: Iterable[common_pb2.Event], now_us: int
) -> list[OutboxColumns]:
    """The rows owed to players' streams for ``events`` (numbered) of ``record``'s table."""
    rows: list[OutboxColumns] = []
    events = list(events)
    away = _away_at(record, events)
    for index, event in enumerate(events):
        for seat, player_id, told in _told(record, event, away[index]):
            told.table_id = record.table_id
            told.seat = seat
            told.time.FromMicroseconds(now_us)
            key = f"{KIND}/{record.table_id}/{event.sequence}/{seat}"
            payload = lobby_pb2.PlayerEventRecord(key=key, player_id=player_id, event=told)
            rows.append(
                OutboxColumns(
                    table_id=record.table_id,
                    kind=KIND,
                    key=key,
                    payload=payload.SerializeToString(),
                    created_us=now_us,
                    next_attempt_us=now_us,
                )
            )
    return rows


def _away_at(record: TableRecord, events: list[common_pb2.Event]) -> list[frozenset[int]]:
    """The seats away when each of a change's ``events`` happened. The record says how the
    change left them; before that, a seat was away if the next of its SEAT_AWAY, SEAT_BACK
    and SEAT_LEFT in the change is a SEAT_BACK (a change may start a seat's turn and give it
    back, or take it away, in either order)."""
    away = {seat for seat, occupant in enumerate(record.seats) if occupant.away}
    found: list[frozenset[int]] = [frozenset()] * len(events)
    for index in range(len(events) - 1, -1, -1):
        found[index] = frozenset(away)
        event = events[index]
        if event.kind == common_pb2.EVENT_KIND_SEAT_BACK:
            away.add(event.seat)
        elif event.kind in (common_pb2.EVENT_KIND_SEAT_AWAY, common_pb2.EVENT_KIND_SEAT_LEFT):
            away.discard(event.seat)
    return found


def _told(
    record: TableRecord, event: common_pb2.Event, away: frozenset[int]
) -> list[tuple[int, str, lobby_pb2.PlayerEvent]]:
    """(seat, player, the player's event) for each player ``event`` concerns (``away``: the
    seats away when it happened)."""
    kind = event.kind
    if kind == common_pb2.EVENT_KIND_MATCH_ENDED:
        result = event.match_result
        # The players are the record's: the event shows unlabelled bots with players' ids.
        players = {
            seat: occupant.player_id
            for seat, occupant in enumerate(record.seats)
            if occupant.kind == "player" and occupant.player_id
        }
        return [
            (
                line.seat,
                players[line.seat],
                lobby_pb2.PlayerEvent(
                    kind=lobby_pb2.PLAYER_EVENT_KIND_MATCH_ENDED, place=place(result, line.seat)
                ),
            )
            for line in result.seats
            if line.seat in players
        ]
    told = _SEAT_KINDS.get(kind)
    if told is None or event.seat >= len(record.seats):
        return []
    occupant = record.seats[event.seat]
    if occupant.kind != "player" or not occupant.player_id:
        return []
    if kind == common_pb2.EVENT_KIND_TURN_STARTED and event.seat in away:
        return []  # a bot plays the seat: its player is not asked to
    news = lobby_pb2.PlayerEvent(kind=told)
    if kind == common_pb2.EVENT_KIND_TURN_STARTED and event.HasField("turn_deadline"):
        news.deadline.CopyFrom(event.turn_deadline)
    return [(event.seat, occupant.player_id, news)]


_SEAT_KINDS: Final = {
    common_pb2.EVENT_KIND_TURN_STARTED: lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED,
    common_pb2.EVENT_KIND_SEAT_AWAY: lobby_pb2.PLAYER_EVENT_KIND_SEAT_AWAY,
    common_pb2.EVENT_KIND_SEAT_BACK: lobby_pb2.PLAYER_EVENT_KIND_SEAT_BACK,
}


def place(result: common_pb2.MatchResult, seat: int) -> int:
    """``seat``'s final place: 1 + the seats (with partners: the teams) whose total is lower
    than its own (a player's stream and the chips records, ``chips``, say the same)."""
    if result.team_totals:
        teams = list(result.team_totals)
        own = teams[seat % 2]
        return 1 + sum(1 for total in teams if total < own)
    totals = {line.seat: line.total for line in result.seats}
    own = totals.get(seat, 0)
    return 1 + sum(1 for total in totals.values() if total < own)


__all__ = ["KIND", "owed", "place"]
