"""No-shows and drop-outs (#37), over real gRPC: the lobby in-process, the table (telling the
lobby of its players' seats through its outbox), scoring, rules and bot services as ``okey101
serve`` starts them. Players play their own seats as a client would (``play_seat``); a no-show
never acts."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import grpc
from okey.v1 import common_pb2, lobby_pb2, scoring_pb2, scoring_pb2_grpc, table_pb2
from sqlalchemy import func, select

from okey101.lobby.models import tournaments
from okey101.lobby.no_shows import forfeited
from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.platform.database import Database
from okey101.stack import free_port

from support.lobby import bearer, lobby_client, refused, run, until
from support.lobby_peers import lobby_for, peers_running, play_seat

TURN_SECONDS = 3
ONE_HAND = common_pb2.RuleSet(
    preset=common_pb2.RULE_PRESET_BOOMBALA,
    match_end=common_pb2.MATCH_END_FIXED_HANDS,
    match_hands=1,
    turn_seconds=TURN_SECONDS,
)
TURN = lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED
AWAY = lobby_pb2.PLAYER_EVENT_KIND_SEAT_AWAY
BACK = lobby_pb2.PLAYER_EVENT_KIND_SEAT_BACK


def _service_auth(var_dir: Path) -> tuple[tuple[str, str], ...]:
    return bearer(TokenIssuer(dev_signing_key(var_dir)).issue("service:test", "service"))


def test_the_policy_forfeits_a_missed_start_too_many_losses_of_the_seat_or_a_drop_out() -> None:
    """``no_shows.forfeited`` on a player's seat events, in the table's order."""
    assert forfeited([(1, TURN), (2, AWAY)], 2, match_over=False)  # missed the start
    assert forfeited([(2, AWAY)], 2, match_over=False)
    played = [(1, TURN), (5, TURN), (9, AWAY)]  # played a turn, then missed one
    assert not forfeited(played, 2, match_over=False)
    assert forfeited(played, 1, match_over=False)
    assert forfeited(played, 2, match_over=True)  # still a bot's seat at the end: dropped out
    back = [*played, (12, BACK), (14, TURN)]
    assert not forfeited(back, 2, match_over=True)
    assert forfeited([*back, (20, AWAY)], 2, match_over=False)  # the second time
    assert not forfeited([(9, AWAY), (5, TURN), (1, TURN)][::-1], 3, match_over=False)


def test_a_no_show_is_forfeited_after_one_missed_turn_never_advances_and_is_ranked_last(
    tmp_path: Path, tournament_database: str
) -> None:
    """Eight guests, one advancing per table; the first registered never acts. Their seat goes
    to a bot after one missed turn (one TURN_TIMED_OUT, then SEAT_AWAY: a tournament's table
    does not wait for two), the lobby forfeits them while round 1 is in play, they never reach
    round 2 even if their bot wins their table, and the final standings (the lobby's and
    scoring's alike) rank them last with ``forfeited`` set; the other seven are not forfeited.
    Bad policies are refused with a sentence in English and Turkish, and nothing is written."""

    async def scenario() -> None:
        port = free_port()
        settings = {"port": port, "database_url": tournament_database}
        async with (
            peers_running(tmp_path, lobby_address=f"127.0.0.1:{port}") as peers,
            lobby_client(lobby_for(tmp_path, peers, **settings)) as client,
        ):
            stub = client.stub
            service = _service_auth(tmp_path)
            guests = [await client.guest(name=f"N{index}") for index in range(8)]
            tokens = {guest.player.player_id: guest.tokens.access_token for guest in guests}
            absent = guests[0].player.player_id
            created = await stub.CreateTournament(
                lobby_pb2.CreateTournamentRequest(
                    request_id="cup",
                    name="No-show cup",
                    rules=ONE_HAND,
                    max_players=8,
                    advance_per_table=1,
                    bot_level=common_pb2.BOT_LEVEL_RANDOM,
                    no_show_policy=lobby_pb2.NoShowPolicy(),
                ),
                metadata=service,
            )
            assert created.tournament.no_show_policy.missed_turns == 2  # the default
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
            playing: dict[tuple[str, int], asyncio.Task[None]] = {}
            seated_at: dict[str, tuple[str, int, float]] = {}

            async def follow() -> Any:
                """Play every seat of a player who acts; the tournament once it has finished."""
                answer = await stub.GetTournament(
                    lobby_pb2.GetTournamentRequest(tournament_id=tid), metadata=service
                )
                for item in answer.tournament.rounds:
                    for table_id in item.table_ids:
                        table = (
                            await peers.tables.GetTable(
                                table_pb2.GetTableRequest(table_id=table_id), metadata=service
                            )
                        ).table
                        for seat in table.seats:
                            player = seat.player_id
                            if not player or (table_id, seat.seat) in playing:
                                continue
                            if seat.kind == common_pb2.OCCUPANT_KIND_BOT and not seat.away:
                                continue
                            seated_at.setdefault(player, (table_id, seat.seat, time.monotonic()))
                            playing[(table_id, seat.seat)] = asyncio.create_task(
                                asyncio.sleep(0)
                                if player == absent
                                else play_seat(peers, tokens[player], table_id, seat.seat, 7)
                            )
                if answer.tournament.state == lobby_pb2.TOURNAMENT_STATE_FINISHED:
                    return answer.tournament
                return None

            async def absent_forfeited() -> bool:
                await follow()
                answer = await stub.GetTournamentStandings(
                    lobby_pb2.GetTournamentStandingsRequest(tournament_id=tid), metadata=service
                )
                return any(line.forfeited for line in answer.standings if line.player_id == absent)

            await until(absent_forfeited, 60, "the no-show to be forfeited")
            forfeited_after = time.monotonic() - seated_at[absent][2]
            tournament = await until(follow, 120, "the tournament to finish")
            for task in playing.values():
                task.cancel()
            await asyncio.gather(*playing.values(), return_exceptions=True)
            # One missed turn, not two, gave the no-show's seat to a bot.
            table_id, seat, _ = seated_at[absent]
            events = await _events(peers, table_id, service)
            kinds = [event.kind for event in events if event.seat == seat]
            first_away = kinds.index(common_pb2.EVENT_KIND_SEAT_AWAY)
            assert kinds[:first_away].count(common_pb2.EVENT_KIND_TURN_TIMED_OUT) == 1
            assert forfeited_after < 2 * TURN_SECONDS + 5
            # A match still in play when the lobby forfeits them marks their seat (a busy
            # machine may end a one-hand match first: test_tournament_pace and the table's own
            # tests cover the mark); nobody else's seat is ever marked.
            round_one = (
                await peers.tables.GetTable(
                    table_pb2.GetTableRequest(table_id=table_id), metadata=service
                )
            ).table
            assert not any(other.forfeited for other in round_one.seats if other.seat != seat)
            if round_one.seats[seat].forfeited:
                assert common_pb2.EVENT_KIND_SEAT_LEFT in kinds
            # Never advanced; ranked below every player who was not forfeited.
            assert [len(item.table_ids) for item in tournament.rounds] == [2, 1]
            final = (
                await peers.tables.GetTable(
                    table_pb2.GetTableRequest(table_id=tournament.rounds[1].table_ids[0]),
                    metadata=service,
                )
            ).table
            assert absent not in {seat.player_id for seat in final.seats}
            assert tournament.winner_player_id != absent
            standings = (
                await stub.GetTournamentStandings(
                    lobby_pb2.GetTournamentStandingsRequest(tournament_id=tid), metadata=service
                )
            ).standings
            assert [line.rank for line in standings] == list(range(1, 9))
            assert standings[-1].player_id == absent and standings[-1].forfeited
            assert standings[-1].round_reached == 1
            assert not any(line.forfeited for line in standings[:-1])
            # Scoring serves the same ranking, the forfeit included.
            scoring: Any = scoring_pb2_grpc.ScoringServiceStub(peers.channel_to_scoring)

            async def served() -> Any:
                answer = await scoring.GetStandings(
                    scoring_pb2.GetStandingsRequest(tournament_id=tid), metadata=service
                )
                return answer if answer.final else None

            final_lines = (await until(served, 30, "the ranking to reach scoring")).standings
            assert [(line.rank, line.player_id, line.forfeited) for line in final_lines] == [
                (line.rank, line.player_id, line.forfeited) for line in standings
            ]

            # Bad policies: refused with a reason and sentences, nothing written.
            database = Database(tournament_database)
            try:
                async with database.read() as session:
                    before = (
                        await session.execute(select(func.count()).select_from(tournaments))
                    ).scalar_one()
                for value, locale in ((11, "en"), (1000, "tr")):
                    bad = await refused(
                        stub.CreateTournament(
                            lobby_pb2.CreateTournamentRequest(
                                request_id=f"bad-{value}",
                                name="Bad",
                                rules=ONE_HAND,
                                max_players=8,
                                no_show_policy=lobby_pb2.NoShowPolicy(missed_turns=value),
                                locale=locale,
                            ),
                            metadata=service,
                        )
                    )
                    assert (bad.code, bad.reason) == (
                        grpc.StatusCode.INVALID_ARGUMENT,
                        "BAD_NO_SHOW_POLICY",
                    )
                    assert str(value) in bad.message
                    word = "forfeited" if locale == "en" else "hükmen"
                    assert word in bad.message, bad.message
                async with database.read() as session:
                    after = (
                        await session.execute(select(func.count()).select_from(tournaments))
                    ).scalar_one()
                assert after == before
            finally:
                await database.dispose()

    run(scenario())


async def _events(peers: Any, table_id: str, auth: Any) -> list[common_pb2.Event]:
    """Every event of the table so far (WatchTable from the start)."""
    table = (
        await peers.tables.GetTable(table_pb2.GetTableRequest(table_id=table_id), metadata=auth)
    ).table
    call = peers.tables.WatchTable(
        table_pb2.WatchTableRequest(table_id=table_id, after_sequence=0), metadata=auth
    )
    events: list[common_pb2.Event] = []
    try:
        async for item in call:
            events.append(item.event)
            if len(events) >= table.last_sequence:
                break
    finally:
        call.cancel()
    return events


def test_a_table_outside_tournaments_still_waits_two_missed_turns(tmp_path: Path) -> None:
    """The same table service, a table hosted through the lobby (not a tournament's): its host
    never acts, and their seat goes to a bot only after two turns have run out."""
    rules = common_pb2.RuleSet()
    rules.CopyFrom(ONE_HAND)
    rules.turn_seconds = 1

    async def scenario() -> None:
        port = free_port()
        async with (
            peers_running(tmp_path, lobby_address=f"127.0.0.1:{port}") as peers,
            lobby_client(lobby_for(tmp_path, peers, port=port)) as client,
        ):
            guest = await client.guest(name="Host")
            hosted = await client.stub.HostTable(
                lobby_pb2.HostTableRequest(
                    request_id="host",
                    name="Away",
                    rules=rules,
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
            service = _service_auth(tmp_path)

            async def away() -> bool:
                table = (
                    await peers.tables.GetTable(
                        table_pb2.GetTableRequest(table_id=table_id), metadata=service
                    )
                ).table
                return table.seats[0].away or table.state != common_pb2.TABLE_STATE_PLAYING

            await until(away, 30, "the host's seat to go away")
            kinds = [e.kind for e in await _events(peers, table_id, service) if e.seat == 0]
            first_away = kinds.index(common_pb2.EVENT_KIND_SEAT_AWAY)
            assert kinds[:first_away].count(common_pb2.EVENT_KIND_TURN_TIMED_OUT) == 2

    run(scenario())
