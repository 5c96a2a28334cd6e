"""Scheduled tournaments through a lobby's death (issue #37, Figures and failure): a lobby process
SIGKILLed at a tournament's scheduled start, at a round's end and during the final payout, on
SQLite and on PostgreSQL; the tournament starts once, advances once and pays once.

The five services run as ``okey101 serve`` processes (``okey101.stack``); on PostgreSQL
(``OKEY_TEST_DATABASE_URL``) a second lobby process runs on the same database, as a second pod
would: its scheduler and tournament driver compete for the same tournaments (the driver's lease,
``OKEY_TOURNAMENT_LEASE_SECONDS`` 2 here), and it is killed too. Three tournaments of eight
guests each run side by side (an entry fee of ``FEE``, prizes of 50/30/20% of the pool, one-hand
matches, the tables' bots moving at once, two rounds: two tables of four, then the final table
of their two winners and two bots). The first has a check-in window and a ninth entrant who never
checks in (dropped and refunded by the start); check-in is whole minutes, so each is created to
start minutes ahead and its start is then moved in the lobby's database to a few seconds ahead,
once everyone has registered (and checked in). Every seat a guest is given is played from
outside, as apps play it: each guest keeps their WatchPlayer stream open, learns where the
tournament seats them (TOURNAMENT_SEATED) and plays it over TableService.Play with the engine's
random bot deciding in the test.

A killer SIGKILLs, for each tournament, with delays drawn from a fixed seed:

- *start*: every lobby process, at or just after the scheduled start (the schedulers tick every
  second; the start settles the entrants, refunds the dropped one, tells every entrant
  TOURNAMENT_STARTING and makes the lease, in one transaction);
- *round end*: the lease holder, up to half a second after the lobby has recorded round 1's last
  table (its database polled): the same step of its driver completes the round, then plans and
  starts round 2's tables;
- *payout*: the lease holder, up to a twentieth of a second after the lobby has recorded the
  final table: the same step writes the final ranking with the prizes, in one transaction.

One tournament takes its round end early, another its payout: up to 0.8 s after the table
service shows the round's last table ended, while the lobby is still to hear of it (the table's
outbox), record it (its driver's next tick) and go on.

Each killed process is started again after a short pause; a moment that comes while its victim
is still down strikes nothing (each kind of moment must strike at least once), and the test
prints where each kill landed against the lobby's writes. Then, once every tournament has its
winner, from the lobby's database, the table service and the scoring service:

- each tournament started once: one TOURNAMENT_STARTING per entrant (none to the dropped one,
  who was told TOURNAMENT_DROPPED once and refunded once);
- each round completed once: the rounds numbered 1, 2 without a gap, the round's tables planned
  and made at the table service once each (three tables, no duplicate from a takeover), each
  player TOURNAMENT_SEATED at most once a round and TOURNAMENT_FINISHED once, at the place the
  standings give;
- paid once: one prize transaction for the tournament, paying each place of the prize table its
  share of the pool by the standings (one PRIZE entry in each winner's wallet, ListWalletEntries,
  none in the others'), the pool empty; each entrant paid one entry fee; each guest's balance is
  the starting grant, less the fee, plus their prize;
- ``okey101 audit chips --json`` (the command, on the lobby's database) says the books balance;
- the lobby's final standings (GetTournamentStandings) are scoring's (GetStandings, final);
- the clients never saw INTERNAL or UNKNOWN.
"""

from __future__ import annotations

import asyncio
import collections
import json
import random
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pytest
from okey.v1 import common_pb2, lobby_pb2, scoring_pb2, table_pb2
from sqlalchemy import func, select, update

from okey101.bench import load_stack
from okey101.bench.load_stack import Figures, Guest, Play, PlayerStream, Seating, StackClient
from okey101.lobby.chips import accounts, prizes
from okey101.lobby.models import (
    chip_balances,
    chip_entries,
    chip_transactions,
    player_events,
    tournament_leases,
    tournament_tables,
    tournaments,
)
from okey101.lobby.records import FINISHED
from okey101.platform.database import Database, sqlite_url
from okey101.stack import FAST, LocalStack, wait_serving

from support.lobby_process import SecondLobby, running, with_second_lobby

pytestmark = pytest.mark.slow

SEED: Final = 37
STARTING_GRANT: Final = 1000
FEE: Final = 20
#: The prize table: shares of the pool by place.
PRIZE_SHARES: Final = (50, 30, 20)
#: Entrants of each tournament (the first has one more, who never checks in), tournaments.
ENTRANTS, CUPS = 8, 3
#: Round 1's tables (of four), then the final table of their winners.
ROUND_ONE_TABLES: Final = 2
ENVIRONMENT: Final = {
    **FAST,
    "OKEY_LOG_LEVEL": "info",
    "OKEY_CHIPS_STARTING_GRANT": str(STARTING_GRANT),
    # A killed pod's tournaments are taken over 2 s after its last renewal, not 15.
    "OKEY_TOURNAMENT_LEASE_SECONDS": "2",
    # A process killed on purpose must not keep its port for the one started in its place.
    "OKEY_GRACE_SECONDS": "5",
}
#: A one-hand match; a turn long enough that a seat whose player learns of it late (the lobby
#: down) is not lost to the no-show policy.
RULES: Final = common_pb2.RuleSet(
    preset=common_pb2.RULE_PRESET_BOOMBALA,
    match_end=common_pb2.MATCH_END_FIXED_HANDS,
    match_hands=1,
    turn_seconds=30,
)
#: Seconds from moving the starts to the first one, and between the starts.
FIRST_START, START_GAP = 3.0, 7.0
#: How long a tournament may take to reach each moment, and to end, under the faults.
MOMENT_SECONDS: Final = 120.0
#: Codes a client may see while a lobby is down (retried), and a game's stale-move answers.
EXPECTED_CODES: Final = frozenset(
    {"UNAVAILABLE", "DEADLINE_EXCEEDED", "FAILED_PRECONDITION", "ABORTED", "CANCELLED"}
)


# --------------------------------------------------------------------------------------------
# The killer


@dataclass
class Struck:
    """One kill: its moment, its victims, and when (seconds into the run)."""

    cup: int
    moment: str
    victims: tuple[str, ...]
    at: float
    #: The wall clock at the kill (microseconds), to place it against the lobby's writes.
    wall_us: int


class Killer:
    """SIGKILLs lobby processes and starts each again after a pause (``restarted`` waits for
    those under way). A victim not yet started again after an earlier kill is not struck."""

    def __init__(self, stack: LocalStack, second: SecondLobby | None, rng: random.Random) -> None:
        self.stack = stack
        self.second = second
        self.rng = rng
        self.began = time.monotonic()
        self.struck: list[Struck] = []
        self._down: set[str] = set()
        self._restarts: list[asyncio.Task[None]] = []

    def processes(self) -> dict[str, subprocess.Popen[bytes]]:
        found = {"lobby": self.stack.services["lobby"].process}
        if self.second is not None and self.second.process is not None:
            found["lobby-b"] = self.second.process
        return found

    async def holder(self, lobby: Database, tournament_id: str) -> str:
        """The lobby process holding the tournament's lease (its holder names its process id);
        the first lobby if none living does (the lease is free, or a dead pod's)."""
        async with lobby.read() as session:
            holder = await session.scalar(
                select(tournament_leases.c.holder).where(
                    tournament_leases.c.tournament_id == tournament_id
                )
            )
        parts = (holder or "").split(":")
        pid = int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None
        for name, process in self.processes().items():
            if process.pid == pid and process.poll() is None:
                return name
        return "lobby"

    def kill(self, cup: int, moment: str, victims: tuple[str, ...]) -> None:
        processes = self.processes()
        hit = tuple(victim for victim in victims if victim not in self._down)
        for victim in hit:
            processes[victim].send_signal(signal.SIGKILL)
            self._down.add(victim)
        now = time.monotonic() - self.began
        self.struck.append(Struck(cup, moment, hit, now, time.time_ns() // 1000))
        self._restarts += [asyncio.create_task(self._restart(victim)) for victim in hit]

    async def _restart(self, victim: str) -> None:
        await asyncio.to_thread(self.processes()[victim].wait)
        await asyncio.sleep(self.rng.uniform(0.2, 1.0))
        if victim == "lobby-b":
            assert self.second is not None
            self.second.start()
            address = self.second.address
        else:
            self.stack.start(victim)
            address = self.stack.address(victim)
        self._down.discard(victim)  # a process again: killed again while it starts, if so
        await wait_serving(address, timeout=90)

    async def restarted(self) -> None:
        await asyncio.gather(*self._restarts)


# --------------------------------------------------------------------------------------------
# The tournaments


@dataclass
class Cup:
    """One tournament of the run, its guests and when its kills strike."""

    index: int
    tournament_id: str
    entrants: list[Guest]
    #: Registered, never checked in: dropped (and refunded) by the start.
    dropped: list[Guest]
    start_us: int = 0
    #: Seconds from each moment to its kill.
    delays: dict[str, float] = field(default_factory=dict)
    #: The moments taken early: at the table's end, before the lobby has recorded it.
    early: frozenset[str] = frozenset()


async def create_cup(
    client: StackClient, index: int, guests: list[Guest], check_in: bool
) -> lobby_pb2.Tournament:
    """A scheduled tournament (starting minutes ahead: the test moves its start), with the
    entry fee and the prize table, ``guests`` registered."""
    request = lobby_pb2.CreateTournamentRequest(
        request_id=uuid.uuid4().hex,
        name=f"Fault cup {index}",
        rules=RULES,
        max_players=len(guests),
        advance_per_table=1,
        bot_level=common_pb2.BOT_LEVEL_RANDOM,
        entry_fee=FEE,
        prizes=[
            lobby_pb2.TournamentPrize(place=place, share_percent=share)
            for place, share in enumerate(PRIZE_SHARES, 1)
        ],
    )
    # Check-in is the last whole minutes before the start: it opens 5 s from now.
    request.start_time.FromMicroseconds(time.time_ns() // 1000 + (65 if check_in else 300) * 10**6)
    request.check_in_minutes = 1 if check_in else 0
    created = await client.rpc(
        lambda c: c.lobby.CreateTournament, request, client.service_auth, name="CreateTournament"
    )
    tournament: lobby_pb2.Tournament = created.tournament
    for guest in guests:
        await client.rpc(
            lambda c: c.lobby.RegisterForTournament,
            lobby_pb2.RegisterForTournamentRequest(
                request_id=uuid.uuid4().hex, tournament_id=tournament.tournament_id
            ),
            guest.auth,
            name="RegisterForTournament",
        )
    return tournament


async def check_in(
    client: StackClient, tournament: lobby_pb2.Tournament, guests: list[Guest]
) -> None:
    opens = tournament.scheduled_start_time.ToMicroseconds() - 60 * 10**6
    await asyncio.sleep(max(0.0, opens / 1e6 - time.time()) + 0.2)
    for guest in guests:
        await client.rpc(
            lambda c: c.lobby.CheckInToTournament,
            lobby_pb2.CheckInToTournamentRequest(
                request_id=uuid.uuid4().hex, tournament_id=tournament.tournament_id
            ),
            guest.auth,
            name="CheckInToTournament",
        )


async def move_start(lobby: Database, tournament_id: str, start_us: int) -> None:
    """The tournament's scheduled start moved in the lobby's database (check-in being whole
    minutes, the API cannot make one start seconds after its check-in)."""

    async def work(session: Any) -> None:
        await session.execute(
            update(tournaments)
            .where(tournaments.c.tournament_id == tournament_id)
            .values(scheduled_start_us=start_us)
        )

    await lobby.transaction(work)


async def tournament(client: StackClient, tournament_id: str) -> lobby_pb2.Tournament:
    answer = await client.rpc(
        lambda c: c.lobby.GetTournament,
        lobby_pb2.GetTournamentRequest(tournament_id=tournament_id),
        client.service_auth,
        name="GetTournament",
    )
    found: lobby_pb2.Tournament = answer.tournament
    return found


async def ended_tables(client: StackClient, tournament_id: str) -> int:
    """The tournament's tables whose match has ended, as the table service says."""
    answer = await client.rpc(
        lambda c: c.table.ListTables,
        table_pb2.ListTablesRequest(
            tournament_id=tournament_id,
            states=[common_pb2.TABLE_STATE_FINISHED, common_pb2.TABLE_STATE_CLOSED],
            page_size=50,
        ),
        client.service_auth,
        name="ListTables",
    )
    return len(answer.tables)


async def recorded(lobby: Database, tournament_id: str, round_number: int) -> int:
    """The round's tables whose result the lobby has recorded."""
    async with lobby.read() as session:
        found = await session.scalar(
            select(func.count())
            .select_from(tournament_tables)
            .where(
                tournament_tables.c.tournament_id == tournament_id,
                tournament_tables.c.round == round_number,
                tournament_tables.c.state == FINISHED,
            )
        )
    return int(found or 0)


async def watch(client: StackClient, killer: Killer, lobby: Database, cup: Cup) -> None:
    """Strike at the cup's three moments (module docstring), then wait for its winner."""
    await asyncio.sleep(max(0.0, cup.start_us / 1e6 - time.time() + cup.delays["start"]))
    killer.kill(cup.index, "start", tuple(killer.processes()))
    # A round's end: once the lobby has recorded its last table, the same step of the driver
    # completes the round (and then plans and starts the next); the final one pays the prizes.
    # An early moment is the round's last table ending at the table service instead: the lobby
    # has yet to hear of it (the outbox), record it (its driver's next tick), and go on.
    for moment, round_number, tables in (("round end", 1, ROUND_ONE_TABLES), ("payout", 2, 1)):
        deadline = time.monotonic() + MOMENT_SECONDS
        while (
            await ended_tables(client, cup.tournament_id) < ROUND_ONE_TABLES + round_number - 1
            if moment in cup.early
            else await recorded(lobby, cup.tournament_id, round_number) < tables
        ):
            assert time.monotonic() < deadline, f"cup {cup.index} never reached its {moment}"
            await asyncio.sleep(0.01)
        victim = await killer.holder(lobby, cup.tournament_id)
        await asyncio.sleep(cup.delays[moment])
        killer.kill(cup.index, moment, (victim,))
    deadline = time.monotonic() + MOMENT_SECONDS
    while (await tournament(client, cup.tournament_id)).state != (
        lobby_pb2.TOURNAMENT_STATE_FINISHED
    ):
        assert time.monotonic() < deadline, f"cup {cup.index} never finished"
        await asyncio.sleep(0.2)


# --------------------------------------------------------------------------------------------
# The checks


async def standings(client: StackClient, tournament_id: str) -> list[tuple[int, str]]:
    answer = await client.rpc(
        lambda c: c.lobby.GetTournamentStandings,
        lobby_pb2.GetTournamentStandingsRequest(tournament_id=tournament_id, page_size=100),
        client.service_auth,
        name="GetTournamentStandings",
    )
    return [(line.rank, line.player_id) for line in answer.standings]


async def scoring_standings(client: StackClient, tournament_id: str) -> list[tuple[int, str]]:
    """Scoring's standings of the tournament once they are the lobby's final ranking."""
    deadline = time.monotonic() + 60
    while True:
        answer = await client.rpc(
            lambda c: c.scoring.GetStandings,
            scoring_pb2.GetStandingsRequest(tournament_id=tournament_id, page_size=100),
            client.service_auth,
            name="GetStandings",
        )
        if answer.final:
            return [(line.rank, line.player_id) for line in answer.standings]
        assert time.monotonic() < deadline, f"scoring never had {tournament_id}'s ranking"
        await asyncio.sleep(0.5)


async def tournament_events(
    lobby: Database, tournament_id: str
) -> dict[int, collections.Counter[tuple[str, int, int]]]:
    """The tournament's player events by kind: (player, round, place) counted."""
    found: dict[int, collections.Counter[tuple[str, int, int]]] = collections.defaultdict(
        collections.Counter
    )
    async with lobby.read() as session:
        rows = await session.execute(select(player_events.c.player_id, player_events.c.event))
        for player_id, data in rows:
            event = lobby_pb2.PlayerEvent.FromString(data)
            if event.tournament_id == tournament_id:
                found[event.kind][(player_id, event.round, event.place)] += 1
    return found


async def seated_events(lobby: Database, tournament_id: str) -> list[lobby_pb2.PlayerEvent]:
    async with lobby.read() as session:
        rows = await session.scalars(
            select(player_events.c.event).where(
                player_events.c.kind == lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_SEATED
            )
        )
        found = [lobby_pb2.PlayerEvent.FromString(data) for data in rows]
    return [event for event in found if event.tournament_id == tournament_id]


async def check_cup(client: StackClient, lobby: Database, cup: Cup) -> dict[str, Any]:
    """Started once, advanced once, paid once (module docstring); a few figures."""
    tournament_id = cup.tournament_id
    entrants = {guest.player_id for guest in cup.entrants}
    dropped = {guest.player_id for guest in cup.dropped}
    found = await tournament(client, tournament_id)
    assert found.state == lobby_pb2.TOURNAMENT_STATE_FINISHED and found.winner_player_id
    assert found.registered_players == len(entrants), found
    events = await tournament_events(lobby, tournament_id)

    def told(kind: int) -> collections.Counter[str]:
        return collections.Counter(player for player, _, _ in events[kind].elements())

    # Started once: one TOURNAMENT_STARTING per entrant; the dropped one told once.
    starting = told(lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_STARTING)
    assert starting == dict.fromkeys(entrants, 1), starting
    dropped_told = told(lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_DROPPED)
    assert dropped_told == dict.fromkeys(dropped, 1), dropped_told

    # Advanced once: rounds 1, 2; each round's tables planned and made once; seated at most
    # once a round; finished once, at the standings' place.
    async with lobby.read() as session:
        rows = list(
            await session.execute(
                select(tournament_tables).where(tournament_tables.c.tournament_id == tournament_id)
            )
        )
    per_round = collections.Counter(int(row.round) for row in rows)
    assert per_round == {1: ROUND_ONE_TABLES, 2: 1}, per_round
    assert [r.number for r in found.rounds] == [1, 2], found.rounds
    made = await client.rpc(
        lambda c: c.table.ListTables,
        table_pb2.ListTablesRequest(tournament_id=tournament_id, page_size=50),
        client.service_auth,
        name="ListTables",
    )
    assert sorted(t.table_id for t in made.tables) == sorted(str(row.table_id) for row in rows)
    assert all(t.state == common_pb2.TABLE_STATE_FINISHED for t in made.tables), made.tables
    seated = events[lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_SEATED]
    by_round = collections.Counter((p, r) for p, r, _ in seated.elements())
    assert max(by_round.values()) == 1, f"seated twice in a round: {by_round}"
    assert {p for p, r in by_round if r == 1} == entrants
    assert len([p for p, r in by_round if r == 2]) == ROUND_ONE_TABLES
    assert {r for _, r in by_round} == {1, 2}
    eliminated = told(lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_ELIMINATED)
    assert max(eliminated.values(), default=1) == 1, eliminated
    ranking = await standings(client, tournament_id)
    assert {p for _, p in ranking} == entrants and ranking[0][1] == found.winner_player_id
    finished = events[lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_FINISHED]
    assert sorted(finished.elements()) == sorted((p, 2, rank) for rank, p in ranking), finished

    # One ranking: the lobby's is scoring's.
    assert await scoring_standings(client, tournament_id) == ranking

    # Paid once: one prize transaction, by the prize table and the standings; the pool empty.
    pool = FEE * len(entrants)
    async with lobby.read() as session:
        paid = list(
            await session.execute(
                select(chip_transactions).where(chip_transactions.c.tournament_id == tournament_id)
            )
        )
        amounts: dict[int, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        for entry in await session.execute(
            select(chip_entries).where(
                chip_entries.c.transaction_id.in_([t.transaction_id for t in paid])
            )
        ):
            amounts[entry.transaction_id][entry.account] += int(entry.amount)
        balances = {
            row.account: int(row.balance) for row in await session.execute(select(chip_balances))
        }
    reasons = collections.Counter(t.reason for t in paid)
    wanted = {"entry_fee": len(entrants) + len(dropped), "refund": len(dropped), "prize": 1}
    assert reasons == {reason: n for reason, n in wanted.items() if n}, reasons
    # What the prize table pays by the served ranking (ties share their places' prizes).
    table = [prizes.Prize(place, 0, share) for place, share in enumerate(PRIZE_SHARES, 1)]
    owed = prizes.prize_payments(pool, table, ranking)
    assert owed.from_pool[found.winner_player_id] == pool * PRIZE_SHARES[0] // 100, owed
    (prize,) = [t for t in paid if t.reason == "prize"]
    assert prize.key == f"prizes:{tournament_id}"
    expected = {accounts.player(p): amount for p, amount in owed.from_pool.items()}
    expected[accounts.pool(tournament_id)] = -sum(owed.from_pool.values())
    if owed.to_house:  # the shares' rounding
        expected[accounts.pool(tournament_id)] -= owed.to_house
        expected[accounts.FEES] = owed.to_house
    assert {a: n for a, n in amounts[prize.transaction_id].items() if n} == expected
    assert balances.get(accounts.pool(tournament_id), 0) == 0
    for guest in cup.entrants + cup.dropped:
        won = owed.from_pool.get(guest.player_id, 0)
        fee = FEE if guest.player_id in entrants else 0
        assert balances[accounts.player(guest.player_id)] == STARTING_GRANT - fee + won, guest
        # The player's own wallet: one prize entry if they won one, none otherwise.
        wallet = await client.rpc(
            lambda c: c.lobby.ListWalletEntries,
            lobby_pb2.ListWalletEntriesRequest(page_size=100),
            guest.auth,
            name="ListWalletEntries",
        )
        prized = [
            entry.amount
            for entry in wallet.entries
            if entry.reason == lobby_pb2.WALLET_ENTRY_REASON_PRIZE
            and entry.tournament_id == tournament_id
        ]
        assert prized == ([won] if won else []), (guest.player_id, prized, won)
    seated_us = min(
        event.time.ToMicroseconds()
        for event in await seated_events(lobby, tournament_id)
        if event.round == 2
    )
    return {
        "prize_us": int(prize.created_us),
        "started_us": found.start_time.ToMicroseconds(),
        "seated_us": seated_us,
    }


def audit_chips(stack: LocalStack) -> dict[str, Any]:
    """``okey101 audit chips --json``, as an operator runs it, on the lobby's database."""
    command = [sys.executable, "-m", "okey101.cli", "audit", "chips", "--json"]
    command += ["--var-dir", str(stack.var_dir)]
    done = subprocess.run(
        command, env=stack.env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


# --------------------------------------------------------------------------------------------
# The test


def test_a_lobby_killed_at_the_start_a_round_end_and_the_payout_starts_advances_and_pays_once(
    tmp_path: Path, stack_databases: dict[str, str] | None
) -> None:
    """See the module docstring."""
    two_lobbies = stack_databases is not None
    rng = random.Random(SEED)

    async def scenario(stack: LocalStack, second: SecondLobby | None) -> None:
        lobby_url = (
            stack_databases["lobby"]
            if stack_databases is not None
            else sqlite_url(stack.var_dir / "lobby.db")
        )
        lobby = Database(lobby_url)
        figures = Figures(recording=False)
        addresses = {name: stack.address(name) for name in ("lobby", "table", "bot", "scoring")}
        client = StackClient(addresses, stack.var_dir, figures)
        play = Play(decide=load_stack.engine_decider("random"))
        stop = asyncio.Event()
        drivers: dict[tuple[str, int], asyncio.Task[bool]] = {}

        def told(guest: Guest, event: lobby_pb2.PlayerEvent) -> None:
            if event.kind == lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_SEATED:
                seat = (event.table_id, event.seat)
                if seat not in drivers:
                    seating = Seating(event.table_id, {event.seat: guest})
                    drivers[seat] = asyncio.create_task(
                        load_stack.follow(client, seating, play, stop)
                    )

        guests = await load_stack.login_guests(client, CUPS * ENTRANTS + 1)
        streams = [PlayerStream.open(client, guest, told) for guest in guests]
        killer = Killer(stack, second, rng)
        try:
            cups: list[Cup] = []
            made: list[lobby_pb2.Tournament] = []
            for index in range(CUPS):
                entrants = guests[index * ENTRANTS : (index + 1) * ENTRANTS]
                dropped = guests[-1:] if index == 0 else []
                made.append(await create_cup(client, index, entrants + dropped, index == 0))
                cups.append(Cup(index, made[-1].tournament_id, entrants, dropped))
            await check_in(client, made[0], cups[0].entrants)
            now = time.time_ns() // 1000
            for cup in cups:
                cup.start_us = now + int((FIRST_START + START_GAP * cup.index) * 1e6)
                # The schedulers tick every second; the round's completion follows its last
                # table's record within milliseconds, the next round's tables within a second.
                # An early moment's kill comes up to 0.8 s after the table's end: before the
                # lobby records it, or between the record and what follows.
                cup.early = frozenset([("payout",), ("round end",), ()][cup.index % 3])
                cup.delays = {
                    "start": rng.uniform(-0.3, 1.0),
                    "round end": rng.uniform(0.0, 0.8 if "round end" in cup.early else 0.5),
                    "payout": rng.uniform(0.0, 0.8 if "payout" in cup.early else 0.05),
                }
                await move_start(lobby, cup.tournament_id, cup.start_us)
            watching = [asyncio.create_task(watch(client, killer, lobby, cup)) for cup in cups]
            try:
                await asyncio.gather(*watching)
            finally:
                for task in watching:
                    task.cancel()
                await asyncio.gather(*watching, return_exceptions=True)
            await killer.restarted()
            stop.set()
            if drivers:
                await asyncio.wait(list(drivers.values()), timeout=30)
            checked = [await check_cup(client, lobby, cup) for cup in cups]
            report = audit_chips(stack)
            assert report["chips_balanced"] is True and report["differences"] == [], report
            unexpected = {
                (method, code): count
                for (method, code), count in figures.failures.items()
                if code not in EXPECTED_CODES
            }
            assert not unexpected, (unexpected, figures.samples)
            # Where the kills landed against the lobby's writes (for the log of a run): the
            # start, round 2's tables started (its players told), the prizes paid.
            marks = {"start": "started_us", "round end": "seated_us", "payout": "prize_us"}
            for kill in killer.struck:
                mark = checked[kill.cup][marks[kill.moment]]
                early = " (early)" if kill.moment in cups[kill.cup].early else ""
                print(
                    f"cup {kill.cup} {kill.moment}{early}: {'+'.join(kill.victims) or 'none up'} "
                    f"killed at {kill.at:.1f} s, {(kill.wall_us - mark) / 1e6:+.2f} s from "
                    f"the lobby's {marks[kill.moment].removesuffix('_us')}"
                )
            # A moment may come while its victim is still down from another cup's kill (then
            # nothing is struck), but each kind of moment was struck.
            assert len(killer.struck) == 3 * CUPS, killer.struck
            struck = {kill.moment for kill in killer.struck if kill.victims}
            assert struck == {"start", "round end", "payout"}, killer.struck
        finally:
            stop.set()
            for task in drivers.values():
                task.cancel()
            await asyncio.gather(*drivers.values(), return_exceptions=True)
            for stream in streams:
                await stream.close()
            await client.close()
            await lobby.dispose()

    with running(tmp_path, stack_databases, ENVIRONMENT, log_lines=60) as stack:
        with_second_lobby(stack, two_lobbies, scenario, serving_timeout=90)
