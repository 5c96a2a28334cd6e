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
time a no-show held their table up: from their first turn's start, TURN_STARTED on their stream,
to their seat going to a bot, SEAT_AWAY: one turn timer, ``--turn-seconds``, 0 being the table's
default). ``longest_no_show_hold_from_table_start_s`` is the same from their table's start (as
the lobby tells its players TOURNAMENT_SEATED), which adds the turns of the seats before theirs,
and ``longest_no_show_hold_from_round_start_s`` from their round's first table start, which adds
the time the lobby takes to start the round's tables one after another (at 1,024 players, 256).
Exit status 1 unless it finished with no error and nothing lost.

By default the tournament is **scheduled** with a check-in window (issue #37): once the guests have
logged in it is created with a ``start_time`` and ``check_in_minutes`` (``--check-in-minutes``, at
least 1: the window is whole minutes) sized by how long the logins took (``Schedule.sized``: three
times that for the registrations before the window opens, as long for the check-ins within it,
then 5 s; ``--start-in-seconds`` sets the start instead). Every entrant registers at once and
checks in as soon as the window opens (the no-shows too: they check in, then never act), and the
lobby's scheduler starts it by itself at the start time, nobody calling StartTournament. The idle
wait to the start is not counted in ``seconds`` (which runs from the scheduled start). The report
adds ``scheduled: true``, ``check_in_minutes`` and ``start_in_s`` (as created), ``registered`` and
``checked_in`` (registrations and check-ins the lobby took), ``dropped`` (entrants the start
dropped: 0 when all went well), ``started_late_s`` (the tournament's start time less its scheduled
start: how long after it the tournament was running), and ``login_s``, ``registration_s`` and
``check_in_s`` (the check-ins from the end of the registrations, the wait for the window
included). A registration or check-in refused because the tournament had started already fails
the run (``registered`` or ``checked_in`` short of ``players``, ``dropped`` above 0).
``--unscheduled`` creates it unscheduled and starts it with StartTournament once everyone has
registered (the run before issue #37); then ``scheduled`` is false and the check-in figures are 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from okey.v1 import common_pb2, lobby_pb2, scoring_pb2

from okey101.bench import load_stack
from okey101.bench.load_stack import Figures, Guest, Play, PlayerStream, Seating, StackClient
from okey101.bench.rules_bench import cpu_seconds

SERVICES = ("rules", "bot", "scoring", "table", "lobby")


#: The prize table of a tournament with an entry fee: shares of the pool by place.
PRIZE_SHARES = (50, 30, 20)
#: A scheduled run's least check-in window (whole minutes).
CHECK_IN_MINUTES = 1


@dataclass(frozen=True)
class Schedule:
    """A scheduled run's check-in window (whole minutes) and start (``start_in_seconds``
    after its creation, more than the window; None: sized by ``sized``); None for an
    unscheduled run."""

    check_in_minutes: int = CHECK_IN_MINUTES
    start_in_seconds: float | None = None

    def sized(self, login_seconds: float) -> Schedule:
        """The window and start for a run whose guests took ``login_seconds`` to log in: the
        registrations (as many lobby transactions, but each with the tournament's row locked:
        two to four times as long, measured at 1,024 players) have three times as long before
        the window opens, and the check-ins as long within it (the window widened to whole
        minutes if need be); then 5 s more."""
        if self.start_in_seconds is not None:
            return self
        allowance = 3 * login_seconds
        minutes = max(self.check_in_minutes, math.ceil(allowance / 60))
        return Schedule(minutes, minutes * 60 + allowance + 5.0)


async def _create(
    client: StackClient,
    players: int,
    hands: int,
    entry_fee: int = 0,
    turn_seconds: int = 0,
    schedule: Schedule | None = None,
) -> lobby_pb2.Tournament:
    request = lobby_pb2.CreateTournamentRequest(
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
    )
    if schedule is not None:
        ahead = schedule.start_in_seconds or schedule.check_in_minutes * 60 + 5.0
        request.start_time.FromMicroseconds(int((time.time() + ahead) * 1e6))
        request.check_in_minutes = schedule.check_in_minutes
    created = await client.rpc(
        lambda c: c.lobby.CreateTournament,
        request,
        client.service_auth,
        name="CreateTournament",
    )
    tournament: lobby_pb2.Tournament = created.tournament
    return tournament


async def _register(client: StackClient, tournament_id: str, guests: list[Guest]) -> int:
    """Every guest registers: how many the lobby took (a scheduled tournament that started
    first refuses the rest, TOURNAMENT_NOT_REGISTERING: the run fails)."""
    slots = asyncio.Semaphore(16)
    taken = 0

    async def one(guest: Guest) -> None:
        nonlocal taken
        async with slots:
            with contextlib.suppress(grpc.aio.AioRpcError):
                await client.rpc(
                    lambda c: c.lobby.RegisterForTournament,
                    lobby_pb2.RegisterForTournamentRequest(
                        request_id=uuid.uuid4().hex, tournament_id=tournament_id
                    ),
                    guest.auth,
                    name="RegisterForTournament",
                )
                taken += 1

    await asyncio.gather(*(one(guest) for guest in guests))
    return taken


async def _check_in(
    client: StackClient, tournament: lobby_pb2.Tournament, guests: list[Guest]
) -> int:
    """Once the tournament's check-in window opens, every guest checks in (the no-shows too):
    how many check-ins the lobby took (one refused, as once the tournament has started, fails
    the run)."""
    start = tournament.scheduled_start_time.ToMicroseconds()
    opens = start - tournament.check_in_minutes * 60 * 1_000_000
    # The lobby's clock is this machine's; a tenth of a second for the rounding of the two.
    await asyncio.sleep(max(0.0, opens / 1e6 - time.time()) + 0.1)
    slots = asyncio.Semaphore(16)
    taken = 0

    async def one(guest: Guest) -> None:
        nonlocal taken
        async with slots:
            with contextlib.suppress(grpc.aio.AioRpcError):
                await client.rpc(
                    lambda c: c.lobby.CheckInToTournament,
                    lobby_pb2.CheckInToTournamentRequest(
                        request_id=uuid.uuid4().hex, tournament_id=tournament.tournament_id
                    ),
                    guest.auth,
                    name="CheckInToTournament",
                )
                taken += 1

    await asyncio.gather(*(one(guest) for guest in guests))
    return taken


async def _running(client: StackClient, tournament_id: str, wait: float) -> lobby_pb2.Tournament:
    """The tournament once the lobby's scheduler has started it (or as it is after ``wait``
    seconds)."""
    deadline = time.monotonic() + wait
    while True:
        tournament = await _tournament(client, tournament_id)
        if tournament.state != lobby_pb2.TOURNAMENT_STATE_REGISTERING:
            return tournament
        if time.monotonic() > deadline:
            return tournament
        await asyncio.sleep(0.2)


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
    schedule: Schedule | None = None,
) -> dict[str, Any]:
    figures = Figures(recording=True)
    addresses = {name: stack.address(name) for name in SERVICES}
    client = StackClient(addresses, var_dir, figures)
    pids = {name: stack.services[name].process.pid for name in SERVICES}
    play = Play(decide=load_stack.bot_service_decider(client), pace=0.0)
    drivers: dict[tuple[str, int], asyncio.Task[bool]] = {}
    stop = asyncio.Event()
    finished_told = asyncio.Event()
    #: Seconds the guests took to log in, register and check in (check-in: from the end of
    #: the registrations, the wait for the window included).
    timings: dict[str, float] = {}
    streams: list[PlayerStream] = []
    absent: set[str] = set()
    #: Each table's round and start, each round's first table start, each player's last round
    #: seated, each player's first turn at a table, and each player's first seat lost to a bot
    #: (its table, when).
    first_turns: dict[tuple[str, str], int] = {}
    table_rounds: dict[str, int] = {}
    table_starts: dict[str, int] = {}
    round_starts: dict[int, int] = {}
    last_seated: dict[str, int] = {}
    first_away: dict[str, tuple[str, int]] = {}

    def told(guest: Guest, event: lobby_pb2.PlayerEvent) -> None:
        """A player's own event: a seat to play, or the tournament's end (and, for the
        no-show figures, seats and seats lost to a bot)."""
        when = event.time.ToMicroseconds()
        if event.kind == lobby_pb2.PLAYER_EVENT_KIND_SEAT_AWAY:
            first_away.setdefault(guest.player_id, (event.table_id, when))
        if event.kind == lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED:
            first_turns.setdefault((guest.player_id, event.table_id), when)
        if event.kind == lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_SEATED:
            table_rounds[event.table_id] = event.round
            table_starts[event.table_id] = min(table_starts.get(event.table_id, when), when)
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
        phase = time.monotonic()
        guests = await load_stack.login_guests(client, players)
        by_player = {guest.player_id: guest for guest in guests}
        streams.extend(PlayerStream.open(client, guest, told) for guest in guests)
        timings["login_s"] = time.monotonic() - phase
        if schedule is not None:
            schedule = schedule.sized(timings["login_s"])
        created = await _create(client, players, hands, entry_fee, turn_seconds, schedule)
        tournament_id = created.tournament_id
        phase = time.monotonic()
        registered_count = await _register(client, tournament_id, guests)
        timings["registration_s"] = time.monotonic() - phase
        checked_in = 0
        if schedule is not None:
            checked_in = await _check_in(client, created, guests)
            timings["check_in_s"] = time.monotonic() - phase - timings["registration_s"]
        # The first registered: round 1 deals them round-robin, one to a table.
        share = min(players, round(players * no_show_percent / 100))
        registered = await _standings(client, tournament_id)
        absent.update(player for _rank, player in registered[:share])
        cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        began = time.monotonic()
        if schedule is None:
            await client.rpc(
                lambda c: c.lobby.StartTournament,
                lobby_pb2.StartTournamentRequest(
                    request_id=uuid.uuid4().hex, tournament_id=tournament_id
                ),
                client.service_auth,
                name="StartTournament",
            )
        else:
            # Nobody starts it: the lobby's scheduler does, at the start time. The run's
            # seconds count from the scheduled start, not from the idle wait before it.
            start_s = created.scheduled_start_time.ToMicroseconds() / 1e6
            began += max(0.0, start_s - time.time())
            await asyncio.sleep(max(0.0, start_s - time.time()))
        started = await _running(client, tournament_id, 30.0)
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
    late_us = started.start_time.ToMicroseconds() - started.scheduled_start_time.ToMicroseconds()
    away = [
        (player, table_id, when)
        for player, (table_id, when) in first_away.items()
        if player in absent and table_id in table_rounds
    ]
    holds = [
        when - first_turns[(player, table_id)]
        for player, table_id, when in away
        if (player, table_id) in first_turns
    ]
    table_holds = [when - table_starts[table_id] for _player, table_id, when in away]
    round_holds = [when - round_starts[table_rounds[table_id]] for _player, table_id, when in away]
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
        "longest_no_show_hold_from_table_start_s": (
            round(max(table_holds) / 1e6, 1) if table_holds else 0.0
        ),
        "longest_no_show_hold_from_round_start_s": (
            round(max(round_holds) / 1e6, 1) if round_holds else 0.0
        ),
        "cpu_seconds": cpu,
        "peak_rss_mb": peak,
        "entry_fee": entry_fee,
        "scheduled": schedule is not None,
        "check_in_minutes": schedule.check_in_minutes if schedule is not None else 0,
        "start_in_s": round(schedule.start_in_seconds or 0.0, 1) if schedule is not None else 0.0,
        "registered": registered_count,
        "checked_in": checked_in,
        "dropped": players - started.registered_players,
        **{name: round(seconds, 1) for name, seconds in timings.items()},
        "started_late_s": round(late_us / 1e6, 2) if schedule is not None else 0.0,
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
    schedule: Schedule | None = None,
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
                schedule=schedule,
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
    schedule: Schedule | None = None,
) -> int:
    figures = run(
        players,
        hands,
        sqlite=sqlite,
        database_url=database_url,
        entry_fee=entry_fee,
        no_show_percent=no_show_percent,
        turn_seconds=turn_seconds,
        schedule=schedule,
    )
    print(
        f"tournament: {figures['players']} players ({figures['database']}), "
        f"{figures['rounds']} rounds, {figures['tables_played']} tables, {figures['hands']} "
        f"hands in {figures['seconds']} s; finished {figures['finished']}; "
        f"{figures['errors']} errors, {figures['lost_hands']} lost hands"
        + (
            f"; scheduled: {figures['checked_in']} checked in, started "
            f"{figures['started_late_s']} s after its start time"
            if figures["scheduled"]
            else ""
        )
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
        and figures["dropped"] == 0
        and figures["registered"] == figures["players"]
        and (not figures["scheduled"] or figures["checked_in"] == figures["players"])
    )
    return 0 if clean else 1


__all__ = ["Schedule", "main", "run"]
