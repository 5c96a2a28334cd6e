"""Tournaments on a schedule (issue #37, point 2) over real gRPC, on SQLite and PostgreSQL:
bad schedules refused with nothing written; a registration window (UPCOMING); check-in, with
the absent dropped and refunded and substitutes promoted at the start; a start with too few
checked in cancelled and everyone told; a freed place going to the first substitute; recurring
series created ahead and stopped. The clock is moved by moving the tournament's times in the
lobby's database (the scheduler ticks every second), never by waiting minutes."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import grpc
from google.protobuf.timestamp_pb2 import Timestamp
from okey.v1 import lobby_pb2
from sqlalchemy import update

from okey101.lobby.chips import accounts
from okey101.lobby.models import tournaments
from okey101.lobby.records import now_us

from support.chips import ChipsWorld, Player, chips_world_with_tables
from support.lobby import make_organiser, refused, run, until

FEE = 40
HOUR_US = 3600 * 1_000_000
DROPPED = lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_DROPPED
PROMOTED = lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_PROMOTED
CANCELLED = lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_CANCELLED
CHECK_IN_OPEN = lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_CHECK_IN_OPEN
STARTING = lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_STARTING


def _at(micros: int) -> Timestamp:
    stamp = Timestamp()
    stamp.FromMicroseconds(micros)
    return stamp


async def _organiser(world: ChipsWorld) -> Any:
    organiser = await world.client.guest(name="Organiser")
    await make_organiser(world.stub, organiser, world.operator)
    return (("authorization", f"Bearer {organiser.tokens.access_token}"),)


def _create(world: ChipsWorld, auth: Any, **fields: Any) -> Any:
    fields.setdefault("name", "Weekly cup")
    fields.setdefault("max_players", 8)
    return world.stub.CreateTournament(
        lobby_pb2.CreateTournamentRequest(request_id=uuid.uuid4().hex, **fields), metadata=auth
    )


async def _register(world: ChipsWorld, player: Player, tournament_id: str) -> Any:
    return await world.stub.RegisterForTournament(
        lobby_pb2.RegisterForTournamentRequest(
            request_id=uuid.uuid4().hex, tournament_id=tournament_id
        ),
        metadata=player.auth,
    )


def _check_in(world: ChipsWorld, player: Player, tournament_id: str, request_id: str = "") -> Any:
    return world.stub.CheckInToTournament(
        lobby_pb2.CheckInToTournamentRequest(
            request_id=request_id or uuid.uuid4().hex, tournament_id=tournament_id
        ),
        metadata=player.auth,
    )


async def _get(world: ChipsWorld, tournament_id: str) -> Any:
    answer = await world.stub.GetTournament(
        lobby_pb2.GetTournamentRequest(tournament_id=tournament_id), metadata=world.service
    )
    return answer.tournament


async def _move(world: ChipsWorld, tournament_id: str, **times: int | None) -> None:
    """Move the tournament's times (``scheduled_start_us``, ``registration_opens_us``): the
    clock's passing, as the scheduler sees it."""

    async def work(session: Any) -> None:
        await session.execute(
            update(tournaments).where(tournaments.c.tournament_id == tournament_id).values(**times)
        )

    await world.database.transaction(work)


async def _events(world: ChipsWorld, player: Player) -> list[Any]:
    store = world.client.lobby.servicer.repository.player_events
    return list(await store.after(player.player_id, 0, limit=200))


async def _standings(world: ChipsWorld, tournament_id: str) -> dict[str, Any]:
    answer = await world.stub.GetTournamentStandings(
        lobby_pb2.GetTournamentStandingsRequest(tournament_id=tournament_id),
        metadata=world.service,
    )
    return {line.player_id: line for line in answer.standings}


def test_bad_schedules_are_refused_and_nothing_is_written(
    tmp_path: Path, chips_database: str
) -> None:
    async def scenario() -> None:
        async with chips_world_with_tables(tmp_path, chips_database) as world:
            auth = await _organiser(world)
            now = now_us()
            weekly = lobby_pb2.RECURRENCE_FREQUENCY_WEEKLY
            daily = lobby_pb2.RECURRENCE_FREQUENCY_DAILY
            cases: list[tuple[str, dict[str, Any]]] = [
                ("BAD_START_TIME", {"start_time": _at(now - HOUR_US)}),
                ("BAD_START_TIME", {"start_time": _at(now + 400 * 24 * HOUR_US)}),
                (
                    "BAD_REGISTRATION_WINDOW",
                    {
                        "start_time": _at(now + HOUR_US),
                        "registration_open_time": _at(now + 2 * HOUR_US),
                    },
                ),
                ("BAD_REGISTRATION_WINDOW", {"registration_open_time": _at(now + HOUR_US)}),
                ("BAD_CHECK_IN_WINDOW", {"check_in_minutes": 10}),
                (
                    "BAD_CHECK_IN_WINDOW",
                    {
                        "start_time": _at(now + 2 * HOUR_US),
                        "registration_open_time": _at(now + HOUR_US),
                        "check_in_minutes": 90,
                    },
                ),
                (
                    "BAD_CHECK_IN_WINDOW",
                    {"start_time": _at(now + 48 * HOUR_US), "check_in_minutes": 2000},
                ),
                (
                    "BAD_RECURRENCE",
                    {
                        "recurrence": lobby_pb2.TournamentRecurrence(
                            frequency=weekly, local_time="20:00", time_zone="Europe/Istanbul"
                        )
                    },
                ),
                (
                    "BAD_RECURRENCE",
                    {
                        "recurrence": lobby_pb2.TournamentRecurrence(
                            frequency=daily, local_time="24:00", time_zone="Europe/Istanbul"
                        )
                    },
                ),
                (
                    "BAD_RECURRENCE",
                    {
                        "recurrence": lobby_pb2.TournamentRecurrence(
                            frequency=daily, local_time="20:00", time_zone="Mars/Olympus"
                        )
                    },
                ),
                (
                    "BAD_RECURRENCE",
                    {
                        "recurrence": lobby_pb2.TournamentRecurrence(
                            frequency=daily, local_time="20:00", time_zone="UTC"
                        ),
                        "start_time": _at(now + HOUR_US),
                    },
                ),
                (
                    "BAD_RECURRENCE",
                    {
                        "recurrence": lobby_pb2.TournamentRecurrence(
                            local_time="20:00", time_zone="UTC"
                        )
                    },
                ),
                (
                    "BAD_PRIZE_OVER_ENTRIES",
                    {"entry_fee": 10, "prizes": [lobby_pb2.TournamentPrize(place=1, amount=100)]},
                ),
                ("BAD_FIELD", {"min_players": 9}),
            ]
            for reason, fields in cases:
                failure = await refused(_create(world, auth, **fields))
                assert (failure.code, failure.reason) == (
                    grpc.StatusCode.INVALID_ARGUMENT,
                    reason,
                ), fields
                assert failure.message
            turkish = await refused(
                _create(world, auth, start_time=_at(now - HOUR_US), locale="tr")
            )
            assert "başlangıç" in turkish.message
            listed = await world.stub.ListTournaments(
                lobby_pb2.ListTournamentsRequest(), metadata=world.service
            )
            assert list(listed.tournaments) == []
            # Fixed prizes within what the fewest entrants bring are an organiser's to give.
            fair = await _create(
                world,
                auth,
                entry_fee=10,
                min_players=4,
                prizes=[lobby_pb2.TournamentPrize(place=1, amount=40)],
            )
            assert fair.tournament.min_players == 4

    run(scenario())


def test_registration_opens_at_its_time_and_upcoming_is_listed_apart(
    tmp_path: Path, chips_database: str
) -> None:
    async def scenario() -> None:
        async with chips_world_with_tables(tmp_path, chips_database) as world:
            auth = await _organiser(world)
            now = now_us()
            later = await _create(
                world,
                auth,
                start_time=_at(now + 3 * HOUR_US),
                registration_open_time=_at(now + HOUR_US),
                check_in_minutes=30,
                category="weekly",
            )
            tournament = later.tournament
            assert tournament.state == lobby_pb2.TOURNAMENT_STATE_UPCOMING
            assert tournament.scheduled_start_time.ToMicroseconds() == now + 3 * HOUR_US
            assert tournament.check_in_minutes == 30
            player = await world.player("Early")
            early = await refused(_register(world, player, tournament.tournament_id))
            assert (early.code, early.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "REGISTRATION_NOT_OPEN",
            )

            async def listed(state: int) -> list[str]:
                answer = await world.stub.ListTournaments(
                    lobby_pb2.ListTournamentsRequest(states=[state]), metadata=world.service
                )
                return [t.tournament_id for t in answer.tournaments]

            assert await listed(lobby_pb2.TOURNAMENT_STATE_UPCOMING) == [tournament.tournament_id]
            assert await listed(lobby_pb2.TOURNAMENT_STATE_REGISTERING) == []
            await _move(world, tournament.tournament_id, registration_opens_us=now_us() - 1)
            assert await listed(lobby_pb2.TOURNAMENT_STATE_UPCOMING) == []
            assert await listed(lobby_pb2.TOURNAMENT_STATE_REGISTERING) == [
                tournament.tournament_id
            ]
            registered = await _register(world, player, tournament.tournament_id)
            assert registered.tournament.state == lobby_pb2.TOURNAMENT_STATE_REGISTERING
            assert registered.tournament.registered_players == 1
            # Check-in is not open hours before the start.
            closed = await refused(_check_in(world, player, tournament.tournament_id))
            assert (closed.code, closed.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "CHECK_IN_NOT_OPEN",
            )
            # The scheduled window filter finds it.
            window = await world.stub.ListTournaments(
                lobby_pb2.ListTournamentsRequest(
                    scheduled_after=_at(now + 2 * HOUR_US), scheduled_before=_at(now + 4 * HOUR_US)
                ),
                metadata=world.service,
            )
            assert [t.tournament_id for t in window.tournaments] == [tournament.tournament_id]

    run(scenario())


def test_the_start_drops_who_did_not_check_in_and_seats_checked_in_substitutes(
    tmp_path: Path, chips_database: str
) -> None:
    async def scenario() -> None:
        async with chips_world_with_tables(tmp_path, chips_database) as world:
            auth = await _organiser(world)
            now = now_us()
            created = await _create(
                world,
                auth,
                max_players=4,
                max_substitutes=2,
                entry_fee=FEE,
                start_time=_at(now + 2 * HOUR_US),
                check_in_minutes=60,
            )
            tournament_id = created.tournament.tournament_id
            players = [await world.player(f"P{n}") for n in range(7)]
            for player in players[:6]:
                await _register(world, player, tournament_id)
            full = await refused(_register(world, players[6], tournament_id))
            assert (full.code, full.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "TOURNAMENT_FULL",
            )
            tournament = await _get(world, tournament_id)
            assert (tournament.registered_players, tournament.substitutes) == (4, 2)
            lines = await _standings(world, tournament_id)
            assert [lines[p.player_id].substitute for p in players[:6]] == [False] * 4 + [True] * 2
            # The check-in window opens: every registered player is told, once.
            await _move(world, tournament_id, scheduled_start_us=now_us() + 30 * 60 * 1_000_000)
            for player in players[:6]:
                await until(
                    lambda player=player: _has(world, player, CHECK_IN_OPEN),
                    10,
                    "the check-in notice",
                )
            for player in (players[0], players[1], players[2], players[4], players[5]):
                checked = await _check_in(world, player, tournament_id, f"in-{player.player_id}")
                again = await _check_in(world, player, tournament_id, f"in-{player.player_id}")
                assert again.tournament.checked_in_players == checked.tournament.checked_in_players
            assert (await _get(world, tournament_id)).checked_in_players == 5
            # The start: P3 did not check in; P4, the first substitute, takes the place; P5,
            # checked in, finds none.
            await _move(world, tournament_id, scheduled_start_us=now_us())
            await until(
                lambda: _state_is(world, tournament_id, lobby_pb2.TOURNAMENT_STATE_RUNNING),
                10,
                "the scheduled start",
            )
            started = await _get(world, tournament_id)
            assert (started.registered_players, started.substitutes) == (4, 0)
            lines = await _standings(world, tournament_id)
            playing = {players[n].player_id for n in (0, 1, 2, 4)}
            assert set(lines) == playing
            start = world.starting_grant
            for n, (kind, reason) in {
                3: (DROPPED, "NOT_CHECKED_IN"),
                5: (DROPPED, "NO_PLACE_LEFT"),
            }.items():
                events = await _events(world, players[n])
                assert [(e.kind, e.reason) for e in events if e.kind == kind] == [(kind, reason)]
                assert not [e for e in events if e.kind == STARTING]
                assert (await world.wallet(players[n])).balance == start
            assert [e.kind for e in await _events(world, players[4])].count(PROMOTED) == 1
            for n in (0, 1, 2, 4):
                kinds = [e.kind for e in await _events(world, players[n])]
                assert kinds.count(STARTING) == 1
                assert (await world.wallet(players[n])).balance == start - FEE
            assert await world.balance(accounts.pool(tournament_id)) == 4 * FEE
            report = await world.audit()
            assert report.chips_balanced, report.differences

    run(scenario())


async def _has(world: ChipsWorld, player: Player, kind: int) -> bool:
    return any(event.kind == kind for event in await _events(world, player))


async def _state_is(world: ChipsWorld, tournament_id: str, state: int) -> bool:
    return bool((await _get(world, tournament_id)).state == state)


def test_a_start_with_too_few_checked_in_cancels_and_tells_everyone(
    tmp_path: Path, chips_database: str
) -> None:
    async def scenario() -> None:
        async with chips_world_with_tables(tmp_path, chips_database) as world:
            auth = await _organiser(world)
            created = await _create(
                world,
                auth,
                min_players=3,
                entry_fee=FEE,
                start_time=_at(now_us() + 2 * HOUR_US),
                check_in_minutes=60,
            )
            tournament_id = created.tournament.tournament_id
            players = [await world.player(f"P{n}") for n in range(3)]
            for player in players:
                await _register(world, player, tournament_id)
            await _move(world, tournament_id, scheduled_start_us=now_us() + HOUR_US // 2)
            await _check_in(world, players[0], tournament_id)
            await _check_in(world, players[1], tournament_id)
            await _move(world, tournament_id, scheduled_start_us=now_us())
            await until(
                lambda: _state_is(world, tournament_id, lobby_pb2.TOURNAMENT_STATE_CANCELLED),
                10,
                "the cancel",
            )
            cancelled = await _get(world, tournament_id)
            assert cancelled.cancel_reason == "TOO_FEW_PLAYERS"
            assert cancelled.prize_pool == 0
            for player in players[:2]:
                events = await _events(world, player)
                assert [(e.kind, e.reason) for e in events if e.kind == CANCELLED] == [
                    (CANCELLED, "TOO_FEW_PLAYERS")
                ]
            dropped = await _events(world, players[2])
            assert [e.reason for e in dropped if e.kind == DROPPED] == ["NOT_CHECKED_IN"]
            for player in players:
                assert (await world.wallet(player)).balance == world.starting_grant
            late = await refused(_check_in(world, players[2], tournament_id))
            assert late.reason == "TOURNAMENT_NOT_REGISTERING"
            report = await world.audit()
            assert report.chips_balanced, report.differences

    run(scenario())


def test_a_freed_place_goes_to_the_first_substitute(
    chips: Callable[..., Any],
) -> None:
    async def scenario() -> None:
        async with chips() as world:
            auth = await _organiser(world)
            created = await _create(world, auth, max_players=4, max_substitutes=3, entry_fee=FEE)
            tournament_id = created.tournament.tournament_id
            players = [await world.player(f"P{n}") for n in range(6)]
            for player in players:
                await _register(world, player, tournament_id)
            await world.stub.UnregisterFromTournament(
                lobby_pb2.UnregisterFromTournamentRequest(
                    request_id="out", tournament_id=tournament_id
                ),
                metadata=players[1].auth,
            )
            tournament = await _get(world, tournament_id)
            assert (tournament.registered_players, tournament.substitutes) == (4, 1)
            lines = await _standings(world, tournament_id)
            assert not lines[players[4].player_id].substitute
            assert lines[players[5].player_id].substitute
            assert await _has(world, players[4], PROMOTED)
            assert not await _has(world, players[5], PROMOTED)
            # A substitute leaving frees no entrant's place.
            await world.stub.UnregisterFromTournament(
                lobby_pb2.UnregisterFromTournamentRequest(
                    request_id="sub-out", tournament_id=tournament_id
                ),
                metadata=players[5].auth,
            )
            tournament = await _get(world, tournament_id)
            assert (tournament.registered_players, tournament.substitutes) == (4, 0)
            assert (await world.wallet(players[5])).balance == world.starting_grant
            report = await world.audit()
            assert report.chips_balanced, report.differences

    run(scenario())


def test_a_weekly_series_is_created_ahead_and_stops(tmp_path: Path, chips_database: str) -> None:
    async def scenario() -> None:
        async with chips_world_with_tables(tmp_path, chips_database) as world:
            auth = await _organiser(world)
            recurrence = lobby_pb2.TournamentRecurrence(
                frequency=lobby_pb2.RECURRENCE_FREQUENCY_WEEKLY,
                weekdays=[2, 5],
                local_time="20:30",
                time_zone="Europe/Istanbul",
                registration_hours=48,
                occurrences_ahead=3,
            )
            created = await _create(world, auth, recurrence=recurrence, check_in_minutes=15)
            series_id = created.tournament.series_id
            assert series_id
            assert created.tournament.recurrence == recurrence

            async def occurrences() -> list[Any]:
                answer = await world.stub.ListTournaments(
                    lobby_pb2.ListTournamentsRequest(series_id=series_id), metadata=world.service
                )
                return sorted(
                    answer.tournaments, key=lambda t: t.scheduled_start_time.ToMicroseconds()
                )

            found = await occurrences()
            assert len(found) == 3
            istanbul = ZoneInfo("Europe/Istanbul")
            starts = [
                t.scheduled_start_time.ToDatetime(tzinfo=dt.UTC).astimezone(istanbul) for t in found
            ]
            assert all(
                (s.isoweekday(), s.hour, s.minute) in {(2, 20, 30), (5, 20, 30)} for s in starts
            )
            assert len({s.date() for s in starts}) == 3
            for tournament in found:
                assert tournament.check_in_minutes == 15
                opens = tournament.scheduled_start_time.ToMicroseconds() - 48 * HOUR_US
                if opens > now_us():
                    assert tournament.registration_open_time.ToMicroseconds() == opens
                    assert tournament.state == lobby_pb2.TOURNAMENT_STATE_UPCOMING
            # The first occurrence's start comes: the scheduler keeps three ahead.
            first = found[0].tournament_id
            await _move(world, first, scheduled_start_us=now_us(), registration_opens_us=None)

            async def four() -> bool:
                return len(await occurrences()) == 4

            await until(four, 10, "the next occurrence")
            after = await occurrences()
            assert {t.tournament_id for t in after} > {t.tournament_id for t in found}
            # Too few players: the first occurrence is cancelled, the series goes on.
            assert (await _get(world, first)).cancel_reason == "TOO_FEW_PLAYERS"
            stopped = await world.stub.StopTournamentSeries(
                lobby_pb2.StopTournamentSeriesRequest(
                    request_id="stop", series_id=series_id, reason="season over"
                ),
                metadata=auth,
            )
            assert stopped.changed
            again = await world.stub.StopTournamentSeries(
                lobby_pb2.StopTournamentSeriesRequest(request_id="stop2", series_id=series_id),
                metadata=auth,
            )
            assert not again.changed
            await _move(world, after[1].tournament_id, scheduled_start_us=now_us())
            await until(
                lambda: _state_is(
                    world, after[1].tournament_id, lobby_pb2.TOURNAMENT_STATE_CANCELLED
                ),
                10,
                "the second occurrence's start",
            )
            assert len(await occurrences()) == 4
            stranger = await world.player("Stranger")
            denied = await refused(
                world.stub.StopTournamentSeries(
                    lobby_pb2.StopTournamentSeriesRequest(request_id="x", series_id=series_id),
                    metadata=stranger.auth,
                )
            )
            assert denied.reason == "NOT_TOURNAMENT_CREATOR"
            missing = await refused(
                world.stub.StopTournamentSeries(
                    lobby_pb2.StopTournamentSeriesRequest(request_id="y", series_id="s_nothing"),
                    metadata=world.service,
                )
            )
            assert (missing.code, missing.reason) == (grpc.StatusCode.NOT_FOUND, "SERIES_NOT_FOUND")

    run(scenario())


def test_registering_during_check_in_is_checking_in(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips() as world:
            auth = await _organiser(world)
            created = await _create(
                world, auth, start_time=_at(now_us() + 2 * HOUR_US), check_in_minutes=30
            )
            tournament_id = created.tournament.tournament_id
            early, late = await world.player("Early"), await world.player("Late")
            await _register(world, early, tournament_id)
            await _move(world, tournament_id, scheduled_start_us=now_us() + HOUR_US // 4)
            await _register(world, late, tournament_id)
            lines = await _standings(world, tournament_id)
            assert not lines[early.player_id].checked_in
            assert lines[late.player_id].checked_in
            assert (await _get(world, tournament_id)).checked_in_players == 1

    run(scenario())
