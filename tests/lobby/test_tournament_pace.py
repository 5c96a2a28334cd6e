"""A tournament's pace and an organiser's hand on it (issue #37, point 4), over real gRPC with
the table, scoring, rules and bot services as ``okey101 serve`` starts them, on SQLite and
PostgreSQL: a round's time limit as its tables' match deadline; a pause holding the next round
back through its break, and a resume releasing it; a disqualified player's seat going to a bot,
never advancing, ranked last with the reason shown; round 1 seeded by rating; bad paces and
strangers refused."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import grpc
from okey.v1 import common_pb2, lobby_pb2, table_pb2

from okey101.lobby.records import now_us
from okey101.lobby.tournament_driver import TournamentDriver
from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.stack import free_port

from support.lobby import bearer, lobby_client, lobby_settings, refused, run, until
from support.lobby_peers import lobby_for, peers_running, play_seat

ONE_HAND = common_pb2.RuleSet(
    preset=common_pb2.RULE_PRESET_BOOMBALA,
    match_end=common_pb2.MATCH_END_FIXED_HANDS,
    match_hands=1,
    turn_seconds=5,
)
BREAK_SECONDS = 2
DISQUALIFIED = lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_DISQUALIFIED
PAUSED = lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_PAUSED
RESUMED = lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_RESUMED


def _service_auth(var_dir: Path) -> tuple[tuple[str, str], ...]:
    return bearer(TokenIssuer(dev_signing_key(var_dir)).issue("service:test", "service"))


def test_pause_break_time_limit_and_disqualification_over_a_whole_tournament(
    tmp_path: Path, tournament_database: str
) -> None:
    async def scenario() -> None:
        port = free_port()
        table_url = None if tournament_database.startswith("sqlite") else tournament_database
        async with (
            peers_running(tmp_path, table_url, lobby_address=f"127.0.0.1:{port}") as peers,
            lobby_client(
                lobby_for(tmp_path, peers, port=port, database_url=tournament_database)
            ) as client,
        ):
            stub, service = client.stub, _service_auth(tmp_path)
            guests = [await client.guest(name=f"G{index}") for index in range(8)]
            tokens = {g.player.player_id: g.tokens.access_token for g in guests}
            cheat = guests[5].player.player_id
            bad = await refused(
                stub.CreateTournament(
                    lobby_pb2.CreateTournamentRequest(
                        request_id="bad",
                        name="Too slow",
                        max_players=8,
                        pace=lobby_pb2.TournamentPace(round_minutes=601),
                    ),
                    metadata=service,
                )
            )
            assert (bad.code, bad.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_PACE")
            created = await stub.CreateTournament(
                lobby_pb2.CreateTournamentRequest(
                    request_id="cup",
                    name="Paced cup",
                    rules=ONE_HAND,
                    max_players=8,
                    advance_per_table=1,
                    bot_level=common_pb2.BOT_LEVEL_RANDOM,
                    pace=lobby_pb2.TournamentPace(round_minutes=5, break_seconds=BREAK_SECONDS),
                ),
                metadata=service,
            )
            tid = created.tournament.tournament_id
            assert created.tournament.pace.round_minutes == 5
            for guest in guests:
                await stub.RegisterForTournament(
                    lobby_pb2.RegisterForTournamentRequest(request_id="r", tournament_id=tid),
                    metadata=bearer(guest.tokens.access_token),
                )
            early = await refused(
                stub.PauseTournament(
                    lobby_pb2.PauseTournamentRequest(request_id="p0", tournament_id=tid),
                    metadata=service,
                )
            )
            assert (early.code, early.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "TOURNAMENT_NOT_RUNNING",
            )
            started_us = now_us()
            await stub.StartTournament(
                lobby_pb2.StartTournamentRequest(request_id="go", tournament_id=tid),
                metadata=service,
            )

            async def tournament() -> Any:
                return (
                    await stub.GetTournament(
                        lobby_pb2.GetTournamentRequest(tournament_id=tid), metadata=service
                    )
                ).tournament

            async def round_tables(number: int) -> list[str]:
                found = await tournament()
                return [t for r in found.rounds if r.number == number for t in r.table_ids]

            await until(lambda: _count(round_tables(1), 2), 30, "round 1's two tables")
            first = await tournament()
            deadline = first.rounds[0].deadline.ToMicroseconds()
            assert started_us + 290 * 1_000_000 < deadline < now_us() + 301 * 1_000_000
            for table_id in first.rounds[0].table_ids:
                table = (
                    await peers.tables.GetTable(
                        table_pb2.GetTableRequest(table_id=table_id), metadata=service
                    )
                ).table
                assert table.match_deadline.ToMicroseconds() == deadline
            # Paused while round 1 plays: its tables go on.
            paused = await stub.PauseTournament(
                lobby_pb2.PauseTournamentRequest(request_id="p1", tournament_id=tid),
                metadata=service,
            )
            assert paused.tournament.paused
            stranger = bearer(guests[0].tokens.access_token)
            denied = await refused(
                stub.ResumeTournament(
                    lobby_pb2.ResumeTournamentRequest(request_id="x", tournament_id=tid),
                    metadata=stranger,
                )
            )
            assert denied.reason == "NOT_TOURNAMENT_CREATOR"
            # The cheat is disqualified at their table: a bot plays their seat.
            disqualified = await stub.DisqualifyFromTournament(
                lobby_pb2.DisqualifyFromTournamentRequest(
                    request_id="dq", tournament_id=tid, player_id=cheat, reason="Collusion"
                ),
                metadata=service,
            )
            assert disqualified.changed
            again = await stub.DisqualifyFromTournament(
                lobby_pb2.DisqualifyFromTournamentRequest(
                    request_id="dq2", tournament_id=tid, player_id=cheat, reason="Collusion"
                ),
                metadata=service,
            )
            assert not again.changed
            no_reason = await refused(
                stub.DisqualifyFromTournament(
                    lobby_pb2.DisqualifyFromTournamentRequest(
                        request_id="dq3", tournament_id=tid, player_id=cheat
                    ),
                    metadata=service,
                )
            )
            assert (no_reason.code, no_reason.reason) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "FIELD_REQUIRED",
            )
            playing: dict[tuple[str, int], asyncio.Task[None]] = {}

            async def follow() -> Any:
                """Play every seat of the players still in; the tournament as it is."""
                found = await tournament()
                for item in found.rounds:
                    for table_id in item.table_ids:
                        table = (
                            await peers.tables.GetTable(
                                table_pb2.GetTableRequest(table_id=table_id), metadata=service
                            )
                        ).table
                        for seat in table.seats:
                            player = seat.player_id
                            key = (table_id, seat.seat)
                            if player in tokens and player != cheat and key not in playing:
                                playing[key] = asyncio.create_task(
                                    play_seat(peers, tokens[player], table_id, seat.seat, 3)
                                )
                            if player == cheat:
                                # Disqualified in play: a bot's to the end, marked forfeited.
                                assert seat.forfeited and seat.away
                return found

            async def round_two() -> bool:
                return bool((await follow()).current_round == 2)

            await until(round_two, 90, "round 1 to end")
            held = await tournament()
            assert held.paused
            assert held.next_round_time.ToMicroseconds() > now_us() - BREAK_SECONDS * 1_000_000
            # Paused through the whole break: no table of round 2 starts.
            await asyncio.sleep(BREAK_SECONDS + 1.5)
            assert await round_tables(2) == []
            resumed = await stub.ResumeTournament(
                lobby_pb2.ResumeTournamentRequest(request_id="r1", tournament_id=tid),
                metadata=service,
            )
            assert not resumed.tournament.paused

            async def finished() -> Any:
                found = await follow()
                return found if found.state == lobby_pb2.TOURNAMENT_STATE_FINISHED else None

            final = await until(finished, 120, "the tournament to finish")
            round_two_players = {
                seat.player_id
                for table_id in [t for r in final.rounds if r.number == 2 for t in r.table_ids]
                for seat in (
                    await peers.tables.GetTable(
                        table_pb2.GetTableRequest(table_id=table_id), metadata=service
                    )
                ).table.seats
            }
            assert cheat not in round_two_players
            standings = (
                await stub.GetTournamentStandings(
                    lobby_pb2.GetTournamentStandingsRequest(tournament_id=tid), metadata=service
                )
            ).standings
            last = standings[-1]
            assert (last.player_id, last.disqualified, last.disqualification_reason) == (
                cheat,
                True,
                "Collusion",
            )
            assert not any(line.disqualified for line in standings[:-1])
            events = client.lobby.servicer.repository.player_events
            kinds = [e.kind for e in await events.after(cheat, 0, limit=200)]
            assert kinds.count(DISQUALIFIED) == 1
            # Told of the pause, all eight; of the resume, those still in (round 2's).
            finalist = next(player for player in round_two_players if player in tokens)
            other = [e.kind for e in await events.after(finalist, 0, limit=200)]
            assert (other.count(PAUSED), other.count(RESUMED)) == (1, 1)
            out = [e.kind for e in await events.after(cheat, 0, limit=200)]
            assert (out.count(PAUSED), out.count(RESUMED)) == (1, 0)
            for task in playing.values():
                task.cancel()

    run(scenario())


async def _count(values: Any, count: int) -> bool:
    return len(await values) == count


class _Ratings:
    """The scoring service's ordinals, as the driver asks for them (``ScoringClient.ordinal``)."""

    def __init__(self, ordinals: dict[str, float]) -> None:
        self._ordinals = ordinals

    async def ordinal(self, player_id: str) -> float | None:
        return self._ordinals.get(player_id)


def test_round_one_seats_the_strongest_apart_when_seeded_by_rating(
    tmp_path: Path, tournament_database: str
) -> None:
    async def scenario() -> None:
        settings = lobby_settings(tmp_path, tournament_database)
        # The pod's own driver idles: this test drives round 1's planning itself.
        async with lobby_client(settings, driver_interval=3600) as client:
            stub, service = client.stub, _service_auth(tmp_path)
            guests = [await client.guest(name=f"S{index}") for index in range(8)]
            ids = [g.player.player_id for g in guests]
            created = await stub.CreateTournament(
                lobby_pb2.CreateTournamentRequest(
                    request_id=uuid.uuid4().hex,
                    name="Seeded",
                    max_players=8,
                    pace=lobby_pb2.TournamentPace(seed_by_rating=True),
                ),
                metadata=service,
            )
            tid = created.tournament.tournament_id
            for guest in guests:
                await stub.RegisterForTournament(
                    lobby_pb2.RegisterForTournamentRequest(request_id="r", tournament_id=tid),
                    metadata=bearer(guest.tokens.access_token),
                )
            await stub.StartTournament(
                lobby_pb2.StartTournamentRequest(request_id="go", tournament_id=tid),
                metadata=service,
            )
            repository = client.lobby.servicer.repository
            # The two strongest registered last; two players unrated.
            ratings = {ids[7]: 30.0, ids[6]: 25.0, ids[0]: 1.0, ids[1]: 2.0, ids[2]: 3.0}
            ratings.update({ids[3]: 4.0, ids[4]: -1.0})
            driver = TournamentDriver(repository, None, _Ratings(ratings), holder="test")  # type: ignore[arg-type]
            row = await repository.tournaments.get(tid)
            seeding = await driver._seeding(row)
            assert seeding == [ids[7], ids[6], ids[3], ids[2], ids[1], ids[0], ids[4]]
            assert await repository.tournaments.acquire_lease(tid, "test")
            await repository.tournaments.plan_round(tid, 1, "test", seeding)
            tables = await repository.tournaments.round_tables(tid)
            seats = [table.seats for table in tables]
            assert len(seats) == 2
            # The two strongest sit apart, and the unrated one last of all.
            assert {seats[0][0], seats[1][0]} == {ids[7], ids[6]}
            assert ids[5] in seats[1] and seats[1][-1] == ids[5]

    run(scenario())
