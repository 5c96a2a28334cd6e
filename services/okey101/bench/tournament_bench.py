"""``okey101 bench tournament``: a hosted tournament of N registered players, end to end.

The five services run as processes (``okey101.stack``, as ``bench load`` runs them), on
temporary PostgreSQL databases or SQLite files. N guests log in through the lobby and register
for one tournament (oyna, ``--hands`` hands a match, one player of each table advancing), which
the lobby starts: it seats each round's players at tables of four (the table's bots fill what is
left), and every seat a player holds is played **from outside, through the public API**, as
apps play it: each player keeps their own WatchPlayer stream open and learns from it where the
tournament seats them (TOURNAMENT_SEATED) and that it is over (TOURNAMENT_FINISHED), with no
polling; each seat is played over TableService.Play, its moves chosen by the bot service's
NextStep at level easy. When a round's tables have ended the lobby plays the next, until the
final table has its winner.

The last line is JSON: ``players``, ``rounds``, ``tables_played``, ``hands``, ``moves``, ``seconds``
(from the start to the winner), ``finished`` (the tournament has its winner), ``winner_player_id``,
``errors`` (failed calls other than stale or refused moves), ``lost_hands`` (hands ended at a table
that are not on their match's score sheet exactly once), ``unrecorded_matches`` (matches over at a
table that scoring does not have as ended), ``unstanded_players`` (registered players missing from
the tournament's standings), ``rankings_agree`` (the lobby's GetTournamentStandings and scoring's
GetStandings give the same final ranking, place by place, once the lobby has reported it), and each
service's processor time and peak memory. With ``--no-show-percent P``, that share of the entrants
(the first registered, so one to a table of round 1) never act: their streams do not play their
seats. Then ``no_shows`` (how many), ``no_shows_forfeited`` and ``forfeited`` (players the lobby's
standings mark forfeited), ``forfeited_advanced`` (forfeited players seated in a later round than
the one they lost their seat in, or winning: must be 0), and ``longest_no_show_hold_s`` (the longest
time from a round's first table start to a no-show's seat going to a bot: at most about one turn
timer, ``--turn-seconds``, 0 being the table's default). Exit status 1 unless it finished with no
error and nothing lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from okey.v1 import common_pb2, lobby_pb2, scoring_pb2

from okey101.bench import load_stack
from okey101.bench.load_stack import Figures, Guest, Play, PlayerStream, Seating, StackClient
from okey101.bench.rules_bench import cpu_seconds

SERVICES = ("rules", "bot", "scoring", "table", "lobby")


#: The prize table of a tournament with an entry fee: shares of the pool by place.
PRIZE_SHARES = (50, 30, 20)


async def _create(
    client: StackClient, players: int, hands: int, entry_fee: int = 0, turn_seconds: int = 0
) -> str:
    created = await client.rpc(
        lambda c: c.lobby.CreateTournament,
        lobby_pb2.CreateTournamentRequest(
            request_id=uuid.uuid4().hex,
            name=f"Bench cup of {players}",
            rules=common_pb2.RuleSet(
                preset=common_pb2.RULE_PRESET_OYNA,
                match_end=common_pb2.MATCH_END_FIXED_HANDS,
                match_hands=hands,
                turn_seconds=turn_seconds,
            ),
            max_players=players,
            advance_per_table=1,
            bot_level=common_pb2.BOT_LEVEL_EASY,
            entry_fee=entry_fee,
            prizes=[
                lobby_pb2.TournamentPrize(place=place, share_percent=share)
                for place, share in enumerate(PRIZE_SHARES, 1)
                if entry_fee and place <= players
            ],
        ),
        client.service_auth,
        name="CreateTournament",
    )
    return str(created.tournament.tournament_id)


async def _register(client: StackClient, tournament_id: str, guests: list[Guest]) -> None:
    slots = asyncio.Semaphore(16)

    async def one(guest: Guest) -> None:
        async with slots:
            await client.rpc(
                lambda c: c.lobby.RegisterForTournament,
                lobby_pb2.RegisterForTournamentRequest(
                    request_id=uuid.uuid4().hex, tournament_id=tournament_id
                ),
                guest.auth,
                name="RegisterForTournament",
            )

    await asyncio.gather(*(one(guest) for guest in guests))


async def _tournament(client: StackClient, tournament_id: str) -> lobby_pb2.Tournament:
    answer = await client.rpc(
        lambda c: c.lobby.GetTournament,
        lobby_pb2.GetTournamentRequest(tournament_id=tournament_id),
        client.service_auth,
        name="GetTournament",
    )
    tournament: lobby_pb2.Tournament = answer.tournament
    return tournament


async def _standings(client: StackClient, tournament_id: str) -> list[tuple[int, str]]:
    """The lobby's standings (GetTournamentStandings): (rank, player), best first."""
    players: list[tuple[int, str]] = []
    token = ""
    while True:
        answer = await client.rpc(
            lambda c: c.lobby.GetTournamentStandings,
            lobby_pb2.GetTournamentStandingsRequest(
                tournament_id=tournament_id, page_size=500, page_token=token
            ),
            client.service_auth,
            name="GetTournamentStandings",
        )
        players.extend((line.rank, line.player_id) for line in answer.standings)
        token = answer.next_page_token
        if not token:
            return players


async def _forfeited(client: StackClient, tournament_id: str) -> set[str]:
    """The players the lobby's standings mark forfeited."""
    players: set[str] = set()
    token = ""
    while True:
        answer = await client.rpc(
            lambda c: c.lobby.GetTournamentStandings,
            lobby_pb2.GetTournamentStandingsRequest(
                tournament_id=tournament_id, page_size=500, page_token=token
            ),
            client.service_auth,
            name="GetTournamentStandings",
        )
        players.update(line.player_id for line in answer.standings if line.forfeited)
        token = answer.next_page_token
        if not token:
            return players


async def _scoring_standings(
    client: StackClient, tournament_id: str, wait: float = 30.0
) -> list[tuple[int, str]] | None:
    """Scoring's whole-tournament standings (GetStandings) once they are the final ranking the
    lobby reported (``final``): (rank, player), best first; None if they never became so."""
    deadline = time.monotonic() + wait
    while True:
        lines: list[tuple[int, str]] = []
        final = True
        token = ""
        while True:
            answer = await client.rpc(
                lambda c: c.scoring.GetStandings,
                scoring_pb2.GetStandingsRequest(
                    tournament_id=tournament_id, page_size=500, page_token=token
                ),
                client.service_auth,
                name="GetStandings",
            )
            final = final and answer.final
            lines.extend((line.rank, line.player_id) for line in answer.standings)
            token = answer.next_page_token
            if not token:
                break
        if final:
            return lines
        if time.monotonic() > deadline:
            return None
        await asyncio.sleep(0.5)


async def _play(
    stack: Any,
    var_dir: Path,
    players: int,
    hands: int,
    timeout: float,
    entry_fee: int = 0,
    lobby_url: str = "",
    no_show_percent: float = 0.0,
    turn_seconds: int = 0,
) -> dict[str, Any]:
    figures = Figures(recording=True)
    addresses = {name: stack.address(name) for name in SERVICES}
    client = StackClient(addresses, var_dir, figures)
    pids = {name: stack.services[name].process.pid for name in SERVICES}
    play = Play(decide=load_stack.bot_service_decider(client), pace=0.0)
    drivers: dict[tuple[str, int], asyncio.Task[bool]] = {}
    stop = asyncio.Event()
    finished_told = asyncio.Event()
    streams: list[PlayerStream] = []
    absent: set[str] = set()
    #: Each table's round, each round's first table start, each player's last round seated,
    #: and each player's first seat lost to a bot (its table, when).
    table_rounds: dict[str, int] = {}
    round_starts: dict[int, int] = {}
    last_seated: dict[str, int] = {}
    first_away: dict[str, tuple[str, int]] = {}

    def told(guest: Guest, event: lobby_pb2.PlayerEvent) -> None:
        """A player's own event: a seat to play, or the tournament's end (and, for the
        no-show figures, seats and seats lost to a bot)."""
        when = event.time.ToMicroseconds()
        if event.kind == lobby_pb2.PLAYER_EVENT_KIND_SEAT_AWAY:
            first_away.setdefault(guest.player_id, (event.table_id, when))
        if event.kind == lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_SEATED:
            table_rounds[event.table_id] = event.round
            round_starts[event.round] = min(round_starts.get(event.round, when), when)
            last_seated[guest.player_id] = max(last_seated.get(guest.player_id, 0), event.round)
            seat = (event.table_id, event.seat)
            if guest.player_id in absent:
                return  # a no-show: their seat is never played
            if seat not in drivers:
                seating = Seating(event.table_id, {event.seat: guest})
                drivers[seat] = asyncio.create_task(load_stack.follow(client, seating, play, stop))
        elif event.kind == lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_FINISHED:
            finished_told.set()

    try:
        guests = await load_stack.login_guests(client, players)
        by_player = {guest.player_id: guest for guest in guests}
        streams.extend(PlayerStream.open(client, guest, told) for guest in guests)
        tournament_id = await _create(client, players, hands, entry_fee, turn_seconds)
        await _register(client, tournament_id, guests)
        # The first registered: round 1 deals them round-robin, one to a table.
        share = min(players, round(players * no_show_percent / 100))
        registered = await _standings(client, tournament_id)
        absent.update(player for _rank, player in registered[:share])
        cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        began = time.monotonic()
        await client.rpc(
            lambda c: c.lobby.StartTournament,
            lobby_pb2.StartTournamentRequest(
                request_id=uuid.uuid4().hex, tournament_id=tournament_id
            ),
            client.service_auth,
            name="StartTournament",
        )
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(finished_told.wait(), timeout)
        seconds = time.monotonic() - began
        tournament = await _tournament(client, tournament_id)
        cpu_after = {name: cpu_seconds(pid) for name, pid in pids.items()}
        stop.set()
        if drivers:
            await asyncio.wait(list(drivers.values()), timeout=60)
        for task in drivers.values():
            task.cancel()
        await asyncio.gather(*drivers.values(), return_exceptions=True)
        tables = sorted({table_id for table_id, _seat in drivers})
        checked = await load_stack.audit(client, tables, drain_seconds=60)
        standing = await _standings(client, tournament_id)
        served = await _scoring_standings(client, tournament_id)
        forfeits = await _forfeited(client, tournament_id)
        chips: dict[str, Any] = {}
        if entry_fee:
            chips = await load_stack.chips_audit(lobby_url)
            chips["prize_pool_left"] = (await _tournament(client, tournament_id)).prize_pool
        peak = {name: load_stack.peak_rss_mb(pid) for name, pid in pids.items()}
    finally:
        for stream in streams:
            await stream.close()
        await client.close()
    cpu: dict[str, float | None] = {}
    for name in SERVICES:
        before, after = cpu_before.get(name), cpu_after.get(name)
        cpu[name] = None if before is None or after is None else round(after - before, 1)
    finished = tournament.state == lobby_pb2.TOURNAMENT_STATE_FINISHED
    holds = [
        when - round_starts[table_rounds[table_id]]
        for player, (table_id, when) in first_away.items()
        if player in absent and table_id in table_rounds
    ]
    advanced = [
        player
        for player in forfeits
        if player == tournament.winner_player_id
        or (
            player in first_away
            and first_away[player][0] in table_rounds
            and last_seated.get(player, 0) > table_rounds[first_away[player][0]]
        )
    ]
    return {
        "players": players,
        "hands_per_match": hands,
        "rounds": len(tournament.rounds),
        "tables_played": len({table_id for table_id, _seat in drivers}),
        "hands": checked.hands,
        "moves": figures.moves,
        "seconds": round(seconds, 1),
        "finished": finished and bool(tournament.winner_player_id),
        "winner_player_id": tournament.winner_player_id,
        "errors": figures.errors,
        "errors_by_code": figures.codes(),
        "error_samples": figures.samples[:5],
        "throttled": dict(figures.throttled),
        "lost_hands": len(checked.lost),
        "unrecorded_matches": len(checked.unrecorded_matches),
        "sequence_gaps": len(checked.gaps),
        "unstanded_players": len(set(by_player) - {player for _, player in standing}),
        "rankings_agree": finished and served == standing,
        "turn_seconds": turn_seconds,
        "no_shows": len(absent),
        "no_shows_forfeited": len(absent & forfeits),
        "forfeited": len(forfeits),
        "forfeited_advanced": len(advanced),
        "longest_no_show_hold_s": round(max(holds) / 1e6, 1) if holds else 0.0,
        "cpu_seconds": cpu,
        "peak_rss_mb": peak,
        "entry_fee": entry_fee,
        **chips,
    }


def run(
    players: int,
    hands: int = 1,
    *,
    sqlite: bool = False,
    database_url: str | None = None,
    timeout: float = 3600.0,
    entry_fee: int = 0,
    no_show_percent: float = 0.0,
    turn_seconds: int = 0,
) -> dict[str, Any]:
    """Start the stack, run the tournament to its winner, audit, stop; the figures."""
    from okey101.stack import local_stack

    base = (
        database_url or os.environ.get(load_stack.DATABASE_ENV) or load_stack.DEFAULT_DATABASE_URL
    )
    with contextlib.ExitStack() as cleanup:
        var_dir = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="okey101-cup-")))
        databases = None
        if not sqlite:
            databases = cleanup.enter_context(load_stack.temporary_databases(base, "okey_cup"))
        env = load_stack.stack_environment(databases)
        stack = cleanup.enter_context(local_stack(var_dir, env=env, services=SERVICES))
        lobby_url = load_stack.lobby_database_url(var_dir, databases)
        figures = asyncio.run(
            _play(
                stack,
                var_dir,
                players,
                hands,
                timeout,
                entry_fee,
                lobby_url,
                no_show_percent=no_show_percent,
                turn_seconds=turn_seconds,
            )
        )
    figures["database"] = "sqlite" if sqlite else "postgresql"
    return figures


def main(
    players: int,
    hands: int,
    sqlite: bool,
    database_url: str | None,
    as_json: bool,
    *,
    entry_fee: int = 0,
    no_show_percent: float = 0.0,
    turn_seconds: int = 0,
) -> int:
    figures = run(
        players,
        hands,
        sqlite=sqlite,
        database_url=database_url,
        entry_fee=entry_fee,
        no_show_percent=no_show_percent,
        turn_seconds=turn_seconds,
    )
    print(
        f"tournament: {figures['players']} players ({figures['database']}), "
        f"{figures['rounds']} rounds, {figures['tables_played']} tables, {figures['hands']} "
        f"hands in {figures['seconds']} s; finished {figures['finished']}; "
        f"{figures['errors']} errors, {figures['lost_hands']} lost hands"
    )
    if as_json:
        print(json.dumps(figures, sort_keys=True))
    clean = (
        figures["finished"]
        and figures["errors"] == 0
        and figures["lost_hands"] == 0
        and figures["unrecorded_matches"] == 0
        and figures["unstanded_players"] == 0
        and figures["rankings_agree"]
        and figures["forfeited_advanced"] == 0
        and figures.get("chips_balanced", True)
        and not figures.get("prize_pool_left", 0)
    )
    return 0 if clean else 1


__all__ = ["main", "run"]
