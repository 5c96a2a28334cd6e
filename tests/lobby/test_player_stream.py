"""WatchPlayer: a player's own events over real gRPC, from the lobby's own commits.

A lobby runs in-process as ``okey101 serve lobby`` runs it, with its peers (table, scoring,
rules, bot) beside it; players log in and watch their own streams while they are matched.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from pathlib import Path
from typing import Any

import grpc
import pytest
from okey.v1 import common_pb2, lobby_pb2, table_pb2

from okey101.lobby.rpc.player_stream import seats_held
from okey101.stack import free_port

from support.databases import TEST_DATABASE_ENV, postgres_database
from support.lobby import (
    Client,
    bearer,
    lobby_client,
    make_organiser,
    operator_auth,
    refused,
    run,
)
from support.lobby_peers import lobby_for, peers_running, play_seat
from support.service_stack import FAST

SEATED = lobby_pb2.PLAYER_EVENT_KIND_QUICK_MATCH_SEATED


class Watch:
    """A WatchPlayer stream read in the background: its messages as they come."""

    def __init__(self, client: Client, token: str, request: lobby_pb2.WatchPlayerRequest) -> None:
        self.call = client.stub.WatchPlayer(request, metadata=bearer(token))
        self.items: list[lobby_pb2.WatchPlayerResponse] = []
        self._more = asyncio.Event()
        self._task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for item in self.call:
            self.items.append(item)
            self._more.set()

    async def until(self, count: int, timeout: float = 20.0) -> list[lobby_pb2.WatchPlayerResponse]:
        """The first ``count`` messages, once they have come."""
        async with asyncio.timeout(timeout):
            while len(self.items) < count:
                self._more.clear()
                await self._more.wait()
        return self.items[:count]

    def events(self) -> list[lobby_pb2.PlayerEvent]:
        return [item.event for item in self.items if item.HasField("event")]

    async def close(self) -> None:
        self.call.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


async def join(client: Client, guest: Any, request_id: str) -> lobby_pb2.QuickMatchTicket:
    joined = await client.stub.JoinQuickMatch(
        lobby_pb2.JoinQuickMatchRequest(
            request_id=request_id, preset=common_pb2.RULE_PRESET_NORTH_SULTAN
        ),
        metadata=bearer(guest.tokens.access_token),
    )
    ticket: lobby_pb2.QuickMatchTicket = joined.ticket
    return ticket


def test_a_quick_match_seats_every_player_on_every_stream_once_and_resumes(
    tmp_path: Path,
) -> None:
    """Four players watch (one of them from two devices); four tickets make a table; each stream
    gets QUICK_MATCH_SEATED with the table and the seat GetQuickMatchStatus gives, numbered 1;
    a stream resumed from 0 gets it again, from 1 nothing; a sequence ahead is refused."""

    async def scenario() -> None:
        async with (
            peers_running(tmp_path) as peers,
            lobby_client(lobby_for(tmp_path, peers, quick_match_wait_seconds=60.0)) as client,
        ):
            four = [await client.guest(name=f"W{index}") for index in range(4)]
            watches = [
                Watch(
                    client,
                    guest.tokens.access_token,
                    lobby_pb2.WatchPlayerRequest(start_with_snapshot=True),
                )
                for guest in four
            ]
            second_device = Watch(
                client, four[0].tokens.access_token, lobby_pb2.WatchPlayerRequest()
            )
            for watch in watches:
                (first,) = await watch.until(1)
                assert first.snapshot == lobby_pb2.PlayerSnapshot(as_of_sequence=0)
            tickets = [await join(client, guest, f"w-{index}") for index, guest in enumerate(four)]
            for index, watch in enumerate(watches):
                _snapshot, seated = await watch.until(2, timeout=5.0)  # a wake, not the poll
                event = seated.event
                assert (event.sequence, event.kind) == (1, SEATED)
                assert event.ticket_id == tickets[index].ticket_id
                status = await client.stub.GetQuickMatchStatus(
                    lobby_pb2.GetQuickMatchStatusRequest(ticket_id=tickets[index].ticket_id),
                    metadata=bearer(four[index].tokens.access_token),
                )
                assert (event.table_id, event.seat) == (status.ticket.table_id, status.ticket.seat)
                assert event.time.ToMicroseconds() > 0
            (again,) = await second_device.until(1)
            assert again.event == watches[0].events()[0]
            assert len({watch.events()[0].table_id for watch in watches}) == 1
            assert sorted(watch.events()[0].seat for watch in watches) == [0, 1, 2, 3]

            resumed = Watch(client, four[1].tokens.access_token, lobby_pb2.WatchPlayerRequest())
            (replayed,) = await resumed.until(1)
            assert replayed.event == watches[1].events()[0]
            caught_up = Watch(
                client,
                four[1].tokens.access_token,
                lobby_pb2.WatchPlayerRequest(after_sequence=1),
            )
            await asyncio.sleep(0.5)
            assert caught_up.items == [] and len(resumed.items) == 1  # nothing twice
            for watch in [*watches, second_device, resumed, caught_up]:
                await watch.close()

            ahead = await refused(
                _first(client, four[2], lobby_pb2.WatchPlayerRequest(after_sequence=5))
            )
            assert (ahead.code, ahead.reason) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "PLAYER_SEQUENCE_AHEAD",
            )
            assert ahead.metadata == {"after_sequence": "5", "last_sequence": "1"}

    run(scenario())


async def _first(client: Client, guest: Any, request: lobby_pb2.WatchPlayerRequest) -> Any:
    """The first message of a stream (or its error)."""
    call = client.stub.WatchPlayer(request, metadata=bearer(guest.tokens.access_token))
    try:
        async for item in call:
            return item
        return None
    finally:
        call.cancel()


def test_the_snapshot_says_where_the_player_waits_and_old_events_are_out_of_range(
    tmp_path: Path,
) -> None:
    """A player waiting in a queue and registered for a tournament sees both in the snapshot;
    once the day's events are pruned, resuming before them is OUT_OF_RANGE
    PLAYER_EVENTS_EXPIRED naming the oldest sequence kept, and a snapshot starts again."""

    async def scenario() -> None:
        async with (
            peers_running(tmp_path) as peers,
            lobby_client(lobby_for(tmp_path, peers, quick_match_wait_seconds=60.0)) as client,
        ):
            guest = await client.guest(name="Snap")
            ticket = await join(client, guest, "snap-1")
            created = await client.stub.CreateTournament(
                lobby_pb2.CreateTournamentRequest(
                    request_id="snap-t",
                    name="Snap cup",
                    max_players=8,
                    rules=common_pb2.RuleSet(
                        preset=common_pb2.RULE_PRESET_OYNA,
                        match_end=common_pb2.MATCH_END_FIXED_HANDS,
                        match_hands=1,
                    ),
                ),
                metadata=operator_auth(tmp_path),
            )
            tournament_id = created.tournament.tournament_id
            await client.stub.RegisterForTournament(
                lobby_pb2.RegisterForTournamentRequest(
                    request_id="snap-r", tournament_id=tournament_id
                ),
                metadata=bearer(guest.tokens.access_token),
            )
            first = await _first(
                client, guest, lobby_pb2.WatchPlayerRequest(start_with_snapshot=True)
            )
            snapshot = first.snapshot
            assert snapshot.as_of_sequence == 0
            assert snapshot.waiting_ticket.ticket_id == ticket.ticket_id
            assert snapshot.waiting_ticket.state == lobby_pb2.QUICK_MATCH_STATE_WAITING
            assert list(snapshot.tournament_ids) == [tournament_id]

            # Two events of the player's, then a day passes: both are pruned.
            events = client.lobby.servicer.repository.player_events
            player_id = guest.player.player_id

            async def two(session: Any) -> None:
                for seat in (1, 2):
                    await events.append(
                        session,
                        player_id,
                        lobby_pb2.PlayerEvent(kind=SEATED, table_id="t-old", seat=seat),
                    )

            await client.lobby.servicer.database.transaction(two)
            assert [e.sequence for e in await events.after(player_id, 0)] == [1, 2]
            async with client.lobby.servicer.database.write() as session:
                await events.prune(session, before_us=2**62)
            expired = await refused(_first(client, guest, lobby_pb2.WatchPlayerRequest()))
            assert (expired.code, expired.reason) == (
                grpc.StatusCode.OUT_OF_RANGE,
                "PLAYER_EVENTS_EXPIRED",
            )
            assert expired.metadata["oldest_sequence"] == "3"
            again = await _first(
                client, guest, lobby_pb2.WatchPlayerRequest(start_with_snapshot=True)
            )
            assert again.snapshot.as_of_sequence == 2  # numbers are never given twice

    run(scenario())


@pytest.mark.skipif(not os.environ.get(TEST_DATABASE_ENV), reason=f"{TEST_DATABASE_ENV} not set")
def test_an_event_committed_by_another_lobby_process_reaches_the_stream_by_notify(
    tmp_path: Path,
) -> None:
    """Two lobbies on one PostgreSQL: an event one of them commits reaches a stream open on the
    other at once (LISTEN/NOTIFY), not at the stream's safety poll."""

    async def scenario(url: str) -> None:
        async with peers_running(tmp_path) as peers:
            settings = lobby_for(tmp_path, peers, database_url=url)
            async with lobby_client(settings) as first, lobby_client(settings) as second:
                guest = await first.guest(name="Far")
                watch = Watch(first, guest.tokens.access_token, lobby_pb2.WatchPlayerRequest())
                await asyncio.sleep(0.5)  # the stream is open and waiting
                events = second.lobby.servicer.repository.player_events

                async def seated(session: Any) -> None:
                    await events.append(
                        session,
                        guest.player.player_id,
                        lobby_pb2.PlayerEvent(kind=SEATED, table_id="t-far", seat=3),
                    )

                loop = asyncio.get_running_loop()
                began = loop.time()
                await second.lobby.servicer.database.transaction(seated)
                (item,) = await watch.until(1, timeout=10.0)
                assert loop.time() - began < 5.0  # the safety poll is 15 s
                assert (item.event.sequence, item.event.table_id) == (1, "t-far")
                await watch.close()

    with postgres_database("okey_player_stream") as url:
        run(scenario(url))


def test_a_tournament_tells_its_players_it_starts_where_they_sit_who_is_out_and_the_places(
    tmp_path: Path,
) -> None:
    """Five players of a tournament (one advancing from each table) play where their streams
    seat them, learning nothing by polling: every one is told it starts and where they sit in
    round 1; those who did not advance are told they are out; at the end every one gets their
    place, and the places are the standings'."""

    async def scenario() -> None:
        async with (
            peers_running(tmp_path) as peers,
            lobby_client(lobby_for(tmp_path, peers), driver_interval=0.1) as client,
        ):
            guests = [await client.guest(name=f"T{index}") for index in range(5)]
            await make_organiser(client.stub, guests[0], operator_auth(tmp_path))
            created = await client.stub.CreateTournament(
                lobby_pb2.CreateTournamentRequest(
                    request_id="cup",
                    name="Stream cup",
                    max_players=8,
                    advance_per_table=1,
                    bot_level=common_pb2.BOT_LEVEL_RANDOM,
                    rules=common_pb2.RuleSet(
                        preset=common_pb2.RULE_PRESET_OYNA,
                        match_end=common_pb2.MATCH_END_FIXED_HANDS,
                        match_hands=1,
                    ),
                ),
                metadata=bearer(guests[0].tokens.access_token),
            )
            tournament_id = created.tournament.tournament_id
            for guest in guests:
                await client.stub.RegisterForTournament(
                    lobby_pb2.RegisterForTournamentRequest(
                        request_id="in", tournament_id=tournament_id
                    ),
                    metadata=bearer(guest.tokens.access_token),
                )
            watches = [
                Watch(client, guest.tokens.access_token, lobby_pb2.WatchPlayerRequest())
                for guest in guests
            ]
            await client.stub.StartTournament(
                lobby_pb2.StartTournamentRequest(request_id="go", tournament_id=tournament_id),
                metadata=bearer(guests[0].tokens.access_token),
            )

            async def play(index: int) -> None:
                """Sit wherever the stream says, until the stream says the tournament is over."""
                watch, token = watches[index], guests[index].tokens.access_token
                done = 0
                while True:
                    events = watch.events()
                    for event in events[done:]:
                        if event.kind == lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_SEATED:
                            await play_seat(peers, token, event.table_id, event.seat, index)
                        if event.kind == lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_FINISHED:
                            return
                    done = len(events)
                    await watch.until(done + 1, timeout=120.0)

            await asyncio.wait_for(asyncio.gather(*(play(i) for i in range(5))), 240)
            standings = await client.stub.GetTournamentStandings(
                lobby_pb2.GetTournamentStandingsRequest(tournament_id=tournament_id),
                metadata=bearer(guests[0].tokens.access_token),
            )
            place_of = {line.player_id: line.rank for line in standings.standings}
            kinds = lobby_pb2.PlayerEventKind
            for guest, watch in zip(guests, watches, strict=True):
                events = watch.events()
                assert [event.sequence for event in events] == list(range(1, len(events) + 1))
                names = [kinds.Name(event.kind) for event in events]
                assert names[:2] == [
                    "PLAYER_EVENT_KIND_TOURNAMENT_STARTING",
                    "PLAYER_EVENT_KIND_TOURNAMENT_SEATED",
                ]
                assert names[-1] == "PLAYER_EVENT_KIND_TOURNAMENT_FINISHED"
                assert all(event.tournament_id == tournament_id for event in events)
                assert events[1].round == 1
                finished = events[-1]
                assert finished.place == place_of[guest.player.player_id]
                out = "PLAYER_EVENT_KIND_TOURNAMENT_ELIMINATED" in names
                assert out == (finished.place > 1 and names.count(names[1]) == 1), names
            assert sorted(watch.events()[-1].place for watch in watches) == [1, 2, 3, 4, 5]
            for watch in watches:
                await watch.close()

    run(scenario())


def test_a_tables_turns_and_match_end_reach_the_players_stream_once_each(
    tmp_path: Path,
) -> None:
    """A player hosts a one-hand table with three bots and plays it; the table's outbox tells
    the lobby (RecordPlayerEvents), and the player's stream gets a TURN_STARTED (table, seat,
    deadline) for each of their turns in the table's log, once, and MATCH_ENDED with their
    place, numbered on from the lobby's own events with no gap."""

    async def scenario() -> None:
        port = free_port()
        async with (
            peers_running(tmp_path, lobby_address=f"127.0.0.1:{port}") as peers,
            lobby_client(lobby_for(tmp_path, peers, port=port)) as client,
        ):
            guest = await client.guest(name="Host")
            watch = Watch(client, guest.tokens.access_token, lobby_pb2.WatchPlayerRequest())
            hosted = await client.stub.HostTable(
                lobby_pb2.HostTableRequest(
                    request_id="host",
                    name="Turns",
                    rules=common_pb2.RuleSet(
                        preset=common_pb2.RULE_PRESET_BOOMBALA,
                        match_end=common_pb2.MATCH_END_FIXED_HANDS,
                        match_hands=1,
                    ),
                    visibility=common_pb2.TABLE_VISIBILITY_PRIVATE,
                    host_seat=0,
                    bots=[
                        lobby_pb2.BotSeat(seat=seat, level=common_pb2.BOT_LEVEL_RANDOM)
                        for seat in (1, 2, 3)
                    ],
                    start_when_full=True,
                ),
                metadata=bearer(guest.tokens.access_token),
            )
            table_id = hosted.table.table_id
            await asyncio.wait_for(
                play_seat(peers, guest.tokens.access_token, table_id, 0, seed=3), 120
            )
            log = await _table_log(peers, guest, table_id)
            turns = [e for e in log if e.kind == common_pb2.EVENT_KIND_TURN_STARTED and e.seat == 0]
            ended = next(e for e in log if e.kind == common_pb2.EVENT_KIND_MATCH_ENDED)
            await watch.until(len(turns) + 1, timeout=30.0)
            events = watch.events()
            assert [e.sequence for e in events] == list(range(1, len(events) + 1))
            started = [e for e in events if e.kind == lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED]
            assert len(started) == len(turns) > 0
            for mine, logged in zip(started, turns, strict=True):
                assert (mine.table_id, mine.seat) == (table_id, 0)
                assert mine.deadline == logged.turn_deadline
            last = events[-1]
            assert last.kind == lobby_pb2.PLAYER_EVENT_KIND_MATCH_ENDED
            totals = [line.total for line in ended.match_result.seats]
            assert last.place == 1 + sum(1 for total in totals if total < totals[0])
            await asyncio.sleep(1.0)  # the outbox sent each once: nothing more comes
            assert len(watch.events()) == len(events)
            await watch.close()

    run(scenario())


async def _table_log(peers: Any, guest: Any, table_id: str) -> list[common_pb2.Event]:
    """The table's whole event log as the player's seat sees it."""
    table = (
        await peers.tables.GetTable(
            table_pb2.GetTableRequest(table_id=table_id),
            metadata=bearer(guest.tokens.access_token),
        )
    ).table
    call = peers.tables.WatchTable(
        table_pb2.WatchTableRequest(table_id=table_id, seat=0),
        metadata=bearer(guest.tokens.access_token),
    )
    events: list[common_pb2.Event] = []
    try:
        async for item in call:
            events.append(item.event)
            if item.event.sequence >= table.last_sequence:
                break
    finally:
        call.cancel()
    return events


async def _next_of(
    watch: Watch, kind: int, table_id: str = "", timeout: float = 60.0
) -> lobby_pb2.PlayerEvent:
    """The stream's first event of ``kind`` (at ``table_id``, if given), once it has come."""
    async with asyncio.timeout(timeout):
        while True:
            for event in watch.events():
                if event.kind == kind and table_id in ("", event.table_id):
                    return event
            await watch.until(len(watch.items) + 1, timeout=timeout)


def test_the_snapshot_lists_the_seats_held_and_which_are_away(tmp_path: Path) -> None:
    """A player seated by a quick match (with three bots) also hosts a table with another
    player and two bots. They do not play there: their first turn runs out and the seat is
    away (one missed turn here), and the snapshot lists both seats, in the order the player
    heard of them, the hosted one away. Back through WatchTable with return_to_seat (SEAT_BACK
    on the stream), it is not away; once the hosted match has ended (MATCH_ENDED), only the
    quick-match seat is left."""
    options = dataclasses.replace(FAST, missed_turns_before_away=1)

    async def scenario() -> None:
        port = free_port()
        settings_of = {"port": port, "quick_match_wait_seconds": 0.0}
        async with (
            peers_running(tmp_path, options=options, lobby_address=f"127.0.0.1:{port}") as peers,
            lobby_client(lobby_for(tmp_path, peers, **settings_of)) as client,
        ):
            host, other = await client.guest(name="Seats"), await client.guest(name="Other")
            token = host.tokens.access_token
            watch = Watch(client, token, lobby_pb2.WatchPlayerRequest())
            await join(client, host, "seats-q")
            seated = await _next_of(watch, SEATED)
            quick = lobby_pb2.PlayerSeat(table_id=seated.table_id, seat=seated.seat)
            hosted = await client.stub.HostTable(
                lobby_pb2.HostTableRequest(
                    request_id="seats-h",
                    rules=common_pb2.RuleSet(
                        preset=common_pb2.RULE_PRESET_BOOMBALA,
                        match_end=common_pb2.MATCH_END_FIXED_HANDS,
                        match_hands=3,
                        turn_seconds=2,
                    ),
                    visibility=common_pb2.TABLE_VISIBILITY_PRIVATE,
                    host_seat=0,
                    bots=[
                        lobby_pb2.BotSeat(seat=seat, level=common_pb2.BOT_LEVEL_RANDOM)
                        for seat in (2, 3)
                    ],
                    start_when_full=True,
                ),
                metadata=bearer(token),
            )
            table_id = hosted.table.table_id
            await client.stub.JoinTable(
                lobby_pb2.JoinTableRequest(
                    request_id="seats-j", invite_code=hosted.table.invite_code, seat=1
                ),
                metadata=bearer(other.tokens.access_token),
            )
            other_plays = asyncio.ensure_future(
                play_seat(peers, other.tokens.access_token, table_id, 1, seed=5)
            )
            await _next_of(watch, lobby_pb2.PLAYER_EVENT_KIND_SEAT_AWAY, table_id)
            request = lobby_pb2.WatchPlayerRequest(start_with_snapshot=True)
            away = (await _first(client, host, request)).snapshot
            assert list(away.seats) == [
                quick,
                lobby_pb2.PlayerSeat(table_id=table_id, seat=0, away=True),
            ]

            back_call = peers.tables.WatchTable(
                table_pb2.WatchTableRequest(table_id=table_id, seat=0, return_to_seat=True),
                metadata=bearer(token),
            )
            await _next_of(watch, lobby_pb2.PLAYER_EVENT_KIND_SEAT_BACK, table_id)
            back_call.cancel()
            back = (await _first(client, host, request)).snapshot
            assert list(back.seats) == [quick, lobby_pb2.PlayerSeat(table_id=table_id, seat=0)]
            assert back.as_of_sequence > away.as_of_sequence

            await asyncio.wait_for(
                asyncio.gather(play_seat(peers, token, table_id, 0, seed=3), other_plays), 120
            )
            await _next_of(watch, lobby_pb2.PLAYER_EVENT_KIND_MATCH_ENDED, table_id)
            ended = (await _first(client, host, request)).snapshot
            # The quick-match seat (45 s turns) is still held, not played.
            assert [(s.table_id, s.seat) for s in ended.seats] == [(quick.table_id, quick.seat)]
            await watch.close()

    run(scenario())


def _told(sequence: int, kind: int, table_id: str, time_us: int = 0, **fields: Any) -> Any:
    event = lobby_pb2.PlayerEvent(sequence=sequence, kind=kind, table_id=table_id, **fields)
    event.time.FromMicroseconds(time_us or sequence)
    return event


def test_a_seats_away_state_is_its_latest_by_the_tables_time_whatever_order_it_came_in() -> None:
    """A table's events reach the lobby in the order its outbox delivered them, which after a
    lobby outage need not be the table's: the seat's away state is its latest SEAT_AWAY or
    SEAT_BACK by the table's time; a MATCH_ENDED ends its table even before its other events;
    a tournament's table goes with the tournament; a table first heard of by a turn is listed."""
    kinds = lobby_pb2
    events = [
        _told(1, kinds.PLAYER_EVENT_KIND_QUICK_MATCH_SEATED, "t-quick", seat=2),
        _told(2, kinds.PLAYER_EVENT_KIND_SEAT_BACK, "t-quick", time_us=200, seat=2),
        _told(3, kinds.PLAYER_EVENT_KIND_SEAT_AWAY, "t-quick", time_us=100, seat=2),
        _told(4, kinds.PLAYER_EVENT_KIND_TOURNAMENT_SEATED, "t-cup", tournament_id="c", round=2),
        _told(5, kinds.PLAYER_EVENT_KIND_TOURNAMENT_SEATED, "t-gone", tournament_id="x", round=1),
        _told(6, kinds.PLAYER_EVENT_KIND_MATCH_ENDED, "t-done", seat=1),
        _told(7, kinds.PLAYER_EVENT_KIND_TURN_STARTED, "t-done", time_us=1, seat=1),
        _told(8, kinds.PLAYER_EVENT_KIND_TURN_STARTED, "t-hosted", seat=3),
        _told(9, kinds.PLAYER_EVENT_KIND_SEAT_AWAY, "t-hosted", seat=3),
    ]
    assert seats_held(events, frozenset({"c"})) == [
        lobby_pb2.PlayerSeat(table_id="t-quick", seat=2, away=False),
        lobby_pb2.PlayerSeat(table_id="t-cup", seat=0, tournament_id="c", round=2),
        lobby_pb2.PlayerSeat(table_id="t-hosted", seat=3, away=True),
    ]


def test_a_record_whose_times_no_timestamp_holds_is_refused_and_changes_nothing(
    chips: Any,
) -> None:
    """RecordPlayerEvents with an event time or deadline outside what a Timestamp holds (found
    by the fuzz suite: negative nanos were INTERNAL) is INVALID_ARGUMENT BAD_FIELD, and no event
    is recorded."""

    async def scenario() -> None:
        async with chips() as world:
            player = await world.player("Zaman")
            for name, seconds, nanos in (
                ("time", 1_796_636_004, -25_823),
                ("deadline", 1_796_636_064, 1_000_000_000),
                ("time", 253_402_300_800, 0),
            ):
                event = lobby_pb2.PlayerEvent(
                    kind=lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED, table_id="t-clock", seat=1
                )
                getattr(event, name).seconds = seconds
                getattr(event, name).nanos = nanos
                failure = await refused(
                    world.stub.RecordPlayerEvents(
                        lobby_pb2.RecordPlayerEventsRequest(
                            request_id=f"clock-{name}-{nanos}",
                            records=[
                                lobby_pb2.PlayerEventRecord(
                                    key=f"clock/{name}/{nanos}",
                                    player_id=player.player_id,
                                    event=event,
                                )
                            ],
                        ),
                        metadata=world.service,
                    )
                )
                assert (failure.code, failure.reason) == (
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "BAD_FIELD",
                ), (name, nanos)
                assert f"records[0].event.{name}" in failure.message
            store = world.client.lobby.servicer.repository.player_events
            assert await store.after(player.player_id, 0) == []

    run(scenario())
