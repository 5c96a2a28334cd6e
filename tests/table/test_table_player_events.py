"""What a table's change owes its players' own streams (``table.player_events.owed``): which
events, for whom, with what, keyed once per event and seat."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from okey.v1 import common_pb2, lobby_pb2

from okey101.table.player_events import KIND, owed
from okey101.table.records import SeatRecord, TableRecord

from support.table_rows import new_table_row

TABLE = "t-news"


def record_with(seats: list[SeatRecord]) -> TableRecord:
    return TableRecord.from_row(new_table_row(TABLE)).replace(seats=tuple(seats))


def told(rows: Sequence[Any]) -> list[lobby_pb2.PlayerEventRecord]:
    assert all(row["kind"] == KIND for row in rows)
    return [lobby_pb2.PlayerEventRecord.FromString(bytes(row["payload"])) for row in rows]


def event(kind: Any, sequence: int, seat: int = 0) -> common_pb2.Event:
    return common_pb2.Event(kind=kind, sequence=sequence, seat=seat)


PLAYER = SeatRecord(kind="player", player_id="p-ada", display_name="Ada")
AWAY = SeatRecord(kind="player", player_id="p-bea", display_name="Bea", away=True)
BOT = SeatRecord(kind="bot")


def test_a_players_turn_away_and_back_are_owed_to_them_and_a_bots_to_nobody() -> None:
    record = record_with([PLAYER, AWAY, BOT, SeatRecord()])
    turn = event(common_pb2.EVENT_KIND_TURN_STARTED, 8, seat=0)
    turn.turn_deadline.FromMicroseconds(5_000_000)
    events = [
        event(common_pb2.EVENT_KIND_SEAT_BACK, 7, seat=0),
        turn,
        event(common_pb2.EVENT_KIND_SEAT_AWAY, 9, seat=1),
        event(common_pb2.EVENT_KIND_TURN_STARTED, 10, seat=1),  # away: a bot plays it
        event(common_pb2.EVENT_KIND_TURN_STARTED, 11, seat=2),  # a bot's
        event(common_pb2.EVENT_KIND_DISCARDED, 12, seat=0),  # not a player's news
    ]
    rows = owed(record, events, now_us=1_000)
    records = told(rows)
    assert [(r.key, r.player_id, r.event.kind) for r in records] == [
        (f"player/{TABLE}/7/0", "p-ada", lobby_pb2.PLAYER_EVENT_KIND_SEAT_BACK),
        (f"player/{TABLE}/8/0", "p-ada", lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED),
        (f"player/{TABLE}/9/1", "p-bea", lobby_pb2.PLAYER_EVENT_KIND_SEAT_AWAY),
    ]
    first = records[1].event
    assert (first.table_id, first.seat, first.deadline.ToMicroseconds()) == (TABLE, 0, 5_000_000)
    assert first.time.ToMicroseconds() == 1_000 and first.sequence == 0  # the lobby numbers it
    assert all(row["key"] == record.key for row, record in zip(rows, records, strict=True))


def test_a_turn_is_owed_by_whether_the_seat_was_away_when_it_started_not_after_the_change() -> None:
    """One change may start a seat's turn and then give the seat back, or start it and then
    take it away: the log's order decides, not how the change left the seat."""
    back_after = [
        event(common_pb2.EVENT_KIND_TURN_STARTED, 20, seat=0),  # still away: not owed
        event(common_pb2.EVENT_KIND_SEAT_BACK, 21, seat=0),
    ]
    records = told(owed(record_with([PLAYER, AWAY, BOT, SeatRecord()]), back_after, now_us=1))
    assert [(r.key, r.event.kind) for r in records] == [
        (f"player/{TABLE}/21/0", lobby_pb2.PLAYER_EVENT_KIND_SEAT_BACK)
    ]
    away_after = [
        event(common_pb2.EVENT_KIND_TURN_STARTED, 30, seat=1),  # not away yet: owed
        event(common_pb2.EVENT_KIND_SEAT_AWAY, 31, seat=1),
    ]
    records = told(owed(record_with([PLAYER, AWAY, BOT, SeatRecord()]), away_after, now_us=1))
    assert [(r.key, r.event.kind) for r in records] == [
        (f"player/{TABLE}/30/1", lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED),
        (f"player/{TABLE}/31/1", lobby_pb2.PLAYER_EVENT_KIND_SEAT_AWAY),
    ]


def test_a_match_end_tells_each_player_their_place_ties_and_teams_shared() -> None:
    record = record_with([PLAYER, BOT, AWAY, SeatRecord(kind="player", player_id="p-cem")])
    result = common_pb2.MatchResult(
        seats=[
            common_pb2.MatchSeatResult(seat=0, player_id="p-ada", total=120),
            common_pb2.MatchSeatResult(seat=1, player_id="", total=80),
            common_pb2.MatchSeatResult(seat=2, player_id="p-bea", total=120),
            common_pb2.MatchSeatResult(seat=3, player_id="p-cem", total=300),
        ]
    )
    ended = common_pb2.Event(kind=common_pb2.EVENT_KIND_MATCH_ENDED, sequence=40)
    ended.match_result.CopyFrom(result)
    records = told(owed(record, [ended], now_us=1))
    assert [(r.player_id, r.event.seat, r.event.place) for r in records] == [
        ("p-ada", 0, 2),  # the bot's 80 is lower; bea ties at 120
        ("p-bea", 2, 2),
        ("p-cem", 3, 4),
    ]
    assert {r.event.kind for r in records} == {lobby_pb2.PLAYER_EVENT_KIND_MATCH_ENDED}
    ended.match_result.team_totals.extend([240, 380])  # partners: seats 0+2 and 1+3
    places = [r.event.place for r in told(owed(record, [ended], now_us=1))]
    assert places == [1, 1, 2]
