"""Chips through SIGKILLs (issue #36, Failure and bad input): a table, lobby or scoring process
killed with SIGKILL at any point of a match start or a payout, on SQLite and on PostgreSQL,
creates or loses no chip, pays no pot twice and leaves no stake held for ever.

The five services run as ``okey101 serve`` processes (``okey101.stack``); on PostgreSQL
(``OKEY_TEST_DATABASE_URL``) a second lobby process runs on the same database, as a second pod
would: clients move to it while the first is down, its matchmaker and finisher share the work,
and it is killed too. Workers, each with two guests, play staked matches over and over (bots
move at once), each round one of:

- *solo*: HostTable at a stake, a one-hand match, with three bots and ``start_when_full``: the
  host's stake is held, the table is full at once and starts; the host leaves once it plays (a
  bot plays the seat, and the host is paid if it wins);
- *pair*: HostTable at a stake, a one-hand match, with one bot; the second guest JoinTable
  (its stake held first, ``staked_seats``), sometimes leaves (SEAT_FREED: refunded) and joins
  again; the host starts the table, bots filling the empty seats (their stakes from the house);
- *quick*: both JoinQuickMatch at a stake (the matchmaker holds the stakes in its claim's
  transaction; bots fill after a short wait) and leave once seated; the preset's match (eleven
  quick hands) is played out, or closed midway for some tables (MATCH_ABANDONED: every stake
  back).

Meanwhile a killer, drawing from a fixed seed, SIGKILLs the table, the lobby (both, on
PostgreSQL) and the scoring process, several times a run, at the moments the workers reach:
during or right after HostTable or JoinTable (the stake held, the seat taken, the table started
when full, its MATCH_STARTED record on its way), during the quick match's attempt right after
JoinQuickMatch (the stakes held in the claim's transaction, the table made, seated and started),
while a match plays or as it ends (a random delay after it is seen playing: the MATCH_ENDED
record written and sent to RecordTableChips), right after a table is seen finished (the payout
being recorded), or at any time; each process is started again on its database after a random
pause.

Then the load stops, the lobby's owed hostings and staked seats are finished, every table still
open (orphans of attempts a killed lobby began) is closed, the table's chips outbox is sent, and
from the lobby's database and the tables' own results:

- the books balance: ``okey101 audit chips --json`` run as the command on the lobby's database,
  and ``audit_chips`` in-process;
- no stake is held for ever: every pot is settled and empty, paid if its table finished and
  refunded if it was closed, and no hold is still ``held`` or ``in_play``;
- no payout twice: at most one payout transaction per table, exactly one per paid pot, paying
  out the four stakes (the players' held, the bots' from the house) as the table's result says:
  the fee and the remainder to ``house:fees``, an equal share to each winning seat (a bot's to
  ``house:bots``); each bot seat staked once;
- no chip created or lost: every player's balance is the sum of their entries, never negative
  at any entry, and is exactly the starting grant, less each of their stakes that was paid out,
  plus what the tables' results say they won; each refunded stake was refunded once, in full;
  GetWallet says the same and holds nothing. Every other account is reconciled with the results
  too: the fees and remainders, the bots' winnings less the house's stakes for them, the grants
  (the only chips created); nothing else holds a chip.

Some seating calls are sent again once answered, as a client sends a call whose answer a kill
lost: a kill lands in those few milliseconds only now and then, and the retry must get the first
answer (the same table and seat, the same ticket) and hold no stake twice.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import grpc
import grpc.aio
import pytest
from okey.v1 import common_pb2, lobby_pb2, lobby_pb2_grpc, table_pb2, table_pb2_grpc
from sqlalchemy import func, select

from okey101.client.errors import Rejection
from okey101.lobby.chips.audit import audit_chips, snapshot
from okey101.lobby.models import (
    chip_balances,
    chip_entries,
    chip_holds,
    chip_pots,
    chip_transactions,
    hostings,
    staked_seats,
)
from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.platform.database import Database, sqlite_url
from okey101.stack import FAST, LocalStack, wait_serving
from okey101.table.models import outbox, tables

from support.lobby_process import SecondLobby, running, with_second_lobby

pytestmark = pytest.mark.slow

SEED: Final = 36
STARTING_GRANT: Final = 1000
FEE_PERCENT: Final = 5
#: The stakes hosted tables and quick matches are played for (levels of the defaults).
HOST_STAKES: Final = (10, 50, 100)
QUICK_STAKES: Final = (10, 50)
WORKERS: Final = 4
ENVIRONMENT: Final = {
    **FAST,
    "OKEY_LOG_LEVEL": "info",
    "OKEY_CHIPS_STARTING_GRANT": str(STARTING_GRANT),
    "OKEY_CHIP_FEE_PERCENT": str(FEE_PERCENT),
    # Two guests of a worker queueing together usually share a table; bots fill it soon.
    "OKEY_QUICK_MATCH_WAIT_SECONDS": "0.3",
    "OKEY_QUICK_MATCH_LIMIT_PER_MINUTE": "100000",
    "OKEY_HOST_TABLE_LIMIT_PER_MINUTE": "100000",
    # A table process started again takes over the killed one's timers after 2 s, not 15.
    "OKEY_TABLE_TIMER_LEASE_SECONDS": "2",
    # The seats of a table a killed lobby made for players who never heard of it time out
    # quickly, so such orphans play on to their end like any other table.
    "OKEY_TABLE_DEFAULT_TURN_SECONDS": "2",
    # A process killed on purpose must not keep its port for the one started in its place.
    "OKEY_GRACE_SECONDS": "5",
}
ONE_HAND: Final = {
    "preset": common_pb2.RULE_PRESET_BOOMBALA,
    "match_end": common_pb2.MATCH_END_FIXED_HANDS,
    "match_hands": 1,
}
RANDOM_BOT: Final = common_pb2.BOT_LEVEL_RANDOM
ENDED: Final = (common_pb2.TABLE_STATE_FINISHED, common_pb2.TABLE_STATE_CLOSED)
RETRY: Final = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
#: A client that finds a restarted server again within a second.
CHANNEL_OPTIONS: Final = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1_000),
)
#: How long a call is sent again while no process answers, and each attempt's deadline.
CALL_SECONDS, ATTEMPT_SECONDS = 90.0, 10.0
#: How long a table may take to end, and a quick-match ticket to be seated, under the faults.
TABLE_SECONDS, SEATED_SECONDS = 90.0, 60.0
#: How long a kill waits for its moment before it strikes anyway.
ARMED_SECONDS: Final = 6.0
#: The share of seating calls sent again once answered (``Worker.seat``).
RESEND: Final = 0.25
Metadata = tuple[tuple[str, str], ...]


# --------------------------------------------------------------------------------------------
# The stack


def database_urls(stack: LocalStack, databases: dict[str, str] | None) -> tuple[str, str]:
    """Where the lobby and the table service keep their data: (lobby, table)."""
    if databases is not None:
        return databases["lobby"], databases["table"]
    return sqlite_url(stack.var_dir / "lobby.db"), sqlite_url(stack.var_dir / "table.db")


# --------------------------------------------------------------------------------------------
# The clients


class Calls:
    """The test's clients: the lobby processes, as a load balancer in front of them picks (the
    one that failed longest ago), and the table service. A call that finds no process (or one
    that cannot reach its peers) is sent again unchanged, its request id too, as common.proto
    allows."""

    def __init__(self, lobbies: list[str], table: str, service: Metadata) -> None:
        self.lobbies = lobbies
        self.service = service
        self._failed = dict.fromkeys(lobbies, 0.0)
        self._channels = {
            address: grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
            for address in [*lobbies, table]
        }
        self._table: Any = table_pb2_grpc.TableServiceStub(self._channels[table])

    async def lobby(self, method: str, request: Any, auth: Metadata) -> Any:
        async def attempt() -> Any:
            address = min(self.lobbies, key=self._failed.__getitem__)
            stub: Any = lobby_pb2_grpc.LobbyServiceStub(self._channels[address])
            try:
                return await getattr(stub, method)(request, metadata=auth, timeout=ATTEMPT_SECONDS)
            except grpc.aio.AioRpcError as error:
                if error.code() in RETRY:
                    self._failed[address] = time.monotonic()
                raise

        return await _again(attempt)

    async def table(self, method: str, request: Any, auth: Metadata | None = None) -> Any:
        stub = self._table
        return await _again(
            lambda: getattr(stub, method)(
                request, metadata=auth or self.service, timeout=ATTEMPT_SECONDS
            )
        )

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()


async def _again(attempt: Callable[[], Awaitable[Any]]) -> Any:
    deadline = time.monotonic() + CALL_SECONDS
    while True:
        try:
            return await attempt()
        except grpc.aio.AioRpcError as error:
            if error.code() not in RETRY or time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.1)


def refused(error: grpc.aio.AioRpcError, *reasons: str) -> bool:
    """Whether ``error`` is a refusal for one of ``reasons`` (or, without reasons, any
    FAILED_PRECONDITION or NOT_FOUND: a table that moved on)."""
    rejection = Rejection.of(error)
    if reasons:
        return rejection.reason in reasons
    return rejection.code in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.NOT_FOUND)


@dataclass
class Guest:
    player_id: str
    auth: Metadata


async def login(calls: Calls, name: str) -> Guest:
    answer = await calls.lobby(
        "LoginGuest",
        lobby_pb2.LoginGuestRequest(
            request_id=uuid.uuid4().hex, device_id=f"device-{uuid.uuid4().hex}", display_name=name
        ),
        (),
    )
    return Guest(
        answer.player.player_id, (("authorization", f"Bearer {answer.tokens.access_token}"),)
    )


def answered(answer: Any) -> tuple[str, int]:
    """What a seating call's answer says: its table and seat, or its ticket."""
    if isinstance(answer, lobby_pb2.JoinQuickMatchResponse):
        return answer.ticket.ticket_id, 0
    return answer.table.table_id, answer.seat


def one_hand(partners: bool) -> common_pb2.RuleSet:
    return common_pb2.RuleSet(**ONE_HAND, partners=partners)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# The killer


@dataclass
class Kill:
    """One SIGKILL: of whom, at which moment (and how long after it), and for how long."""

    victim: str
    moment: str
    #: Seconds after the last process is back before this kill is armed.
    gap: float
    #: Seconds from the moment to the kill ("any": from when it is armed).
    delay: float
    #: Seconds the process stays dead.
    down: float
    #: What struck it: the moment, or "late" when no worker reached it in time.
    by: str = ""
    at: float = 0.0


def kill_plan(rng: random.Random, two_lobbies: bool) -> list[Kill]:
    """Each process at each kind of moment at least once (module docstring), in random order,
    with random gaps, delays and pauses."""
    pairs = [
        ("table", "hosting"),
        ("lobby", "hosting"),
        ("table", "queueing"),
        ("lobby", "queueing"),
        ("table", "playing"),
        ("lobby", "playing"),
        ("lobby", "ended"),
        ("table", "ended"),
        ("scoring", "playing"),
    ]
    lobbies = ("lobby", "lobby-b") if two_lobbies else ("lobby",)
    pairs.append((rng.choice(("table", *lobbies)), "any"))
    if two_lobbies:
        pairs.append(("lobby-b", rng.choice(("hosting", "queueing"))))
    rng.shuffle(pairs)
    # From the moment, seconds to the kill. Hosting: the HostTable or JoinTable call (the stake
    # held, the seat taken), then the table's start (start_when_full). Queueing: the quick
    # match's attempt once the bots-fill wait (0.3 s) is over: the stakes held in its claim's
    # transaction, the table made, seated and started. Playing: a one-hand match, to its end.
    delays = {
        "hosting": (0.0, 0.6),
        "queueing": (0.2, 0.6),
        "playing": (0.0, 0.8),
        "ended": (0.0, 0.0),
        "any": (0.0, 2.0),
    }
    return [
        Kill(
            victim,
            moment,
            gap=rng.uniform(0.3, 1.5),
            delay=rng.uniform(*delays[moment]),
            down=rng.uniform(0.2, 2.0),
        )
        for victim, moment in pairs
    ]


class Killer:
    """SIGKILLs the plan's processes at the moments the workers reach (``moment``), and starts
    each again after its pause."""

    def __init__(self, stack: LocalStack, second: SecondLobby | None, plan: list[Kill]) -> None:
        self.stack = stack
        self.second = second
        self.plan = plan
        self.began = time.monotonic()
        self._armed: Kill | None = None
        self._struck = asyncio.Event()

    def moment(self, name: str) -> None:
        """A worker reached the moment ``name``: the armed kill strikes after its delay if it
        waits for this moment."""
        kill = self._armed
        if kill is None or kill.moment != name:
            return
        self._armed = None
        asyncio.get_running_loop().call_later(kill.delay, self._strike, kill, name)

    def _process(self, victim: str) -> subprocess.Popen[bytes]:
        if victim == "lobby-b":
            assert self.second is not None and self.second.process is not None
            return self.second.process
        return self.stack.services[victim].process

    def _strike(self, kill: Kill, by: str) -> None:
        self._process(kill.victim).send_signal(signal.SIGKILL)
        kill.by, kill.at = by, time.monotonic() - self.began
        self._struck.set()

    async def run(self) -> None:
        for kill in self.plan:
            await asyncio.sleep(kill.gap)
            self._struck.clear()
            self._armed = kill
            wait = kill.delay if kill.moment == "any" else ARMED_SECONDS
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._struck.wait(), wait)
            if self._armed is kill:  # no worker reached the moment in time: now
                self._armed = None
                self._strike(kill, "late" if kill.moment != "any" else "any")
            await self._struck.wait()  # a moment's delay may still be running
            await asyncio.to_thread(self._process(kill.victim).wait)
            await asyncio.sleep(kill.down)
            if kill.victim == "lobby-b":
                assert self.second is not None
                self.second.start()
                address = self.second.address
            else:
                self.stack.start(kill.victim)
                address = self.stack.address(kill.victim)
            await wait_serving(address, timeout=90)


# --------------------------------------------------------------------------------------------
# The players


@dataclass
class Worker:
    """Two guests playing staked rounds one after another (module docstring)."""

    calls: Calls
    killer: Killer
    rng: random.Random
    host: Guest
    friend: Guest
    rounds: collections.Counter[str] = field(default_factory=collections.Counter)
    #: Tables closed mid-match by this worker.
    closed: set[str] = field(default_factory=set)
    #: Seating calls sent again once answered, by method.
    resent: collections.Counter[str] = field(default_factory=collections.Counter)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            kind = self.rng.choice(("solo", "solo", "pair", "quick"))
            played = await getattr(self, kind)()
            self.rounds[kind if played else f"{kind} skipped"] += 1

    async def seat(self, method: str, request: Any, guest: Guest) -> Any:
        """A seating call (the killer's "hosting" or "queueing" moment). Some are sent again
        unchanged once answered, as a client sends a call whose answer a kill lost (a kill lands
        in those few milliseconds only now and then: this retries some every run), and must be
        answered as the first was: the same table and seat, or the same ticket."""
        self.killer.moment("queueing" if method == "JoinQuickMatch" else "hosting")
        first = await self.calls.lobby(method, request, guest.auth)
        if self.rng.random() < RESEND:
            again = await self.calls.lobby(method, request, guest.auth)
            self.resent[method] += 1
            assert answered(first) == answered(again), (method, first, again)
        return first

    async def stake_for(self, stakes: tuple[int, ...], *guests: Guest) -> int:
        """A stake the guests' balances cover three times over (0: none), as a client picks it
        from the wallet it shows."""
        balances = []
        for guest in guests:
            wallet = await self.calls.lobby("GetWallet", lobby_pb2.GetWalletRequest(), guest.auth)
            balances.append(wallet.balance)
        covered = [stake for stake in stakes if 3 * stake <= min(balances)]
        return self.rng.choice(covered) if covered else 0

    async def host_table(self, stake: int, bots: tuple[int, ...], when_full: bool) -> str | None:
        request = lobby_pb2.HostTableRequest(
            request_id=uuid.uuid4().hex,
            rules=one_hand(partners=self.rng.random() < 0.3),
            stake=stake,
            host_seat=0,
            bots=[lobby_pb2.BotSeat(seat=seat, level=RANDOM_BOT) for seat in bots],
            start_when_full=when_full,
        )
        try:
            hosted = await self.seat("HostTable", request, self.host)
        except grpc.aio.AioRpcError as error:
            if refused(error, "INSUFFICIENT_CHIPS"):
                return None
            raise
        table_id: str = hosted.table.table_id
        return table_id

    async def solo(self) -> bool:
        stake = await self.stake_for(HOST_STAKES, self.host)
        table_id = await self.host_table(stake, (1, 2, 3), when_full=True) if stake else None
        if table_id is None:
            return False
        await self.until_playing(table_id)
        await self.leave(self.host, table_id)
        await self.until_ended(table_id)
        return True

    async def pair(self) -> bool:
        stake = await self.stake_for(HOST_STAKES, self.host, self.friend)
        table_id = await self.host_table(stake, (1,), when_full=False) if stake else None
        if table_id is None:
            return False
        joined = await self.join(table_id)
        if joined and self.rng.random() < 0.5:
            await self.leave(self.friend, table_id)  # before the start: SEAT_FREED, refunded
            joined = await self.join(table_id)  # a new request: a new stake held
        try:
            await self.calls.table(
                "Start",
                table_pb2.StartRequest(
                    request_id=uuid.uuid4().hex,
                    table_id=table_id,
                    fill_with_bots=True,
                    bot_level=RANDOM_BOT,
                ),
                self.host.auth,
            )
        except grpc.aio.AioRpcError as error:
            if not refused(error, "ALREADY_STARTED"):
                raise
        await self.until_playing(table_id)
        await self.leave(self.host, table_id)
        if joined:
            await self.leave(self.friend, table_id)
        await self.until_ended(table_id)
        return True

    async def quick(self) -> bool:
        stake = await self.stake_for(QUICK_STAKES, self.host, self.friend)
        if not stake:
            return False
        places = await asyncio.gather(
            self.quick_match(self.host, stake), self.quick_match(self.friend, stake)
        )
        seated = [table_id for table_id in places if table_id]
        for guest, table_id in zip((self.host, self.friend), places, strict=True):
            if table_id:
                await self.leave(guest, table_id)
        closing = []
        for table_id in sorted(set(seated)):
            if self.rng.random() < 0.35:
                closing.append(self.close_later(table_id, self.rng.uniform(0.1, 1.5)))
        await asyncio.gather(*closing, *(self.until_ended(t) for t in sorted(set(seated))))
        return bool(seated)

    async def quick_match(self, guest: Guest, stake: int) -> str:
        """JoinQuickMatch, then the table it was seated at ("" if its ticket was cancelled)."""
        try:
            joined = await self.seat(
                "JoinQuickMatch",
                lobby_pb2.JoinQuickMatchRequest(request_id=uuid.uuid4().hex, stake=stake),
                guest,
            )
        except grpc.aio.AioRpcError as error:
            if refused(error, "INSUFFICIENT_CHIPS"):
                return ""
            raise
        ticket = joined.ticket
        deadline = time.monotonic() + SEATED_SECONDS
        while ticket.state == lobby_pb2.QUICK_MATCH_STATE_WAITING:
            assert time.monotonic() < deadline, f"ticket {ticket.ticket_id} was never seated"
            await asyncio.sleep(0.2)
            ticket = (
                await self.calls.lobby(
                    "GetQuickMatchStatus",
                    lobby_pb2.GetQuickMatchStatusRequest(ticket_id=ticket.ticket_id),
                    guest.auth,
                )
            ).ticket
        table_id: str = ticket.table_id
        return table_id

    async def join(self, table_id: str) -> bool:
        try:
            await self.seat(
                "JoinTable",
                lobby_pb2.JoinTableRequest(request_id=uuid.uuid4().hex, table_id=table_id),
                self.friend,
            )
        except grpc.aio.AioRpcError as error:
            if refused(error, "INSUFFICIENT_CHIPS"):
                return False
            raise
        return True

    async def leave(self, guest: Guest, table_id: str) -> None:
        try:
            await self.calls.lobby(
                "LeaveTable",
                lobby_pb2.LeaveTableRequest(request_id=uuid.uuid4().hex, table_id=table_id),
                guest.auth,
            )
        except grpc.aio.AioRpcError as error:
            if not refused(error):  # the table ended already, or the seat was given back
                raise

    async def close_later(self, table_id: str, seconds: float) -> None:
        """Close the table mid-match (its stakes go back), unless it ended already."""
        await asyncio.sleep(seconds)
        try:
            await self.calls.table(
                "CloseTable",
                table_pb2.CloseTableRequest(
                    request_id=uuid.uuid4().hex, table_id=table_id, reason="test: abandoned"
                ),
            )
            self.closed.add(table_id)
        except grpc.aio.AioRpcError as error:
            if not refused(error):
                raise

    async def state(self, table_id: str) -> int:
        answer = await self.calls.table("GetTable", table_pb2.GetTableRequest(table_id=table_id))
        return int(answer.table.state)

    async def until_playing(self, table_id: str) -> None:
        deadline = time.monotonic() + TABLE_SECONDS
        while await self.state(table_id) == common_pb2.TABLE_STATE_WAITING:
            assert time.monotonic() < deadline, f"table {table_id} never started"
            await asyncio.sleep(0.05)
        self.killer.moment("playing")

    async def until_ended(self, table_id: str) -> None:
        deadline = time.monotonic() + TABLE_SECONDS
        seen_playing = False
        while (state := await self.state(table_id)) not in ENDED:
            assert time.monotonic() < deadline, f"table {table_id} never ended"
            if state == common_pb2.TABLE_STATE_PLAYING and not seen_playing:
                seen_playing = True
                self.killer.moment("playing")
            await asyncio.sleep(0.05)
        self.killer.moment("ended")


# --------------------------------------------------------------------------------------------
# Settling


async def pending(lobby: Database, table: Database) -> dict[str, int]:
    """What is still owed: the lobby's hostings and staked seats not finished, the table's
    chips records not sent."""
    async with lobby.read() as session:
        owed_hostings = await session.scalar(select(func.count()).select_from(hostings))
        owed_seats = await session.scalar(select(func.count()).select_from(staked_seats))
    async with table.read() as session:
        unsent = await session.scalar(
            select(func.count())
            .select_from(outbox)
            .where(outbox.c.kind == "chips", outbox.c.sent_us.is_(None))
        )
    return {
        "hostings": int(owed_hostings or 0),
        "staked_seats": int(owed_seats or 0),
        "chips_records": int(unsent or 0),
    }


async def settled(lobby: Database, table: Database, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while any((owed := await pending(lobby, table)).values()):
        assert time.monotonic() < deadline, f"still owed after {timeout:.0f} s: {owed}"
        await asyncio.sleep(0.5)


async def all_tables(table: Database) -> set[str]:
    async with table.read() as session:
        return set(await session.scalars(select(tables.c.table_id)))


async def open_tables(table: Database) -> list[str]:
    async with table.read() as session:
        found = await session.scalars(
            select(tables.c.table_id).where(
                tables.c.state.in_([common_pb2.TABLE_STATE_WAITING, common_pb2.TABLE_STATE_PLAYING])
            )
        )
        return sorted(found)


# --------------------------------------------------------------------------------------------
# The books


@dataclass
class Books:
    """The lobby's ledger as the checks read it."""

    pots: dict[str, Any]
    holds: list[Any]
    #: Each transaction: its key, reason, table and entries by account.
    transactions: dict[int, dict[str, Any]]
    balances: dict[str, int]
    #: Each account's lowest balance after any of its entries.
    lowest: dict[str, int]


async def read_books(lobby: Database) -> Books:
    async with lobby.read() as session:
        pots = {row.table_id: row for row in await session.execute(select(chip_pots))}
        holds = list(await session.execute(select(chip_holds)))
        transactions: dict[int, dict[str, Any]] = {
            row.transaction_id: {
                "key": row.key,
                "reason": row.reason,
                "table_id": row.table_id,
                "entries": collections.Counter(),
            }
            for row in await session.execute(select(chip_transactions))
        }
        lowest: dict[str, int] = {}
        for entry in await session.execute(select(chip_entries)):
            transactions[entry.transaction_id]["entries"][entry.account] += int(entry.amount)
            after = int(entry.balance_after)
            lowest[entry.account] = min(lowest.get(entry.account, after), after)
        balances = {
            row.account: int(row.balance) for row in await session.execute(select(chip_balances))
        }
    return Books(pots, holds, transactions, balances, lowest)


def nonzero(amounts: collections.Counter[str]) -> dict[str, int]:
    return {account: amount for account, amount in amounts.items() if amount}


def expected_payout(table: common_pb2.Table, pot: int) -> collections.Counter[str]:
    """The payout the table's result calls for, computed here from the rules of docs/chips.md:
    the fee (rounded down) and the remainder of an equal split to the house, an equal share to
    each winning seat (the result's ``winner`` flags: ties, and both partners of the winning
    team), a bot's share to the bots' sink."""
    result = table.match_result
    winners = [line for line in result.seats if line.winner]
    assert winners, f"{table.table_id} finished without a winner: {result}"
    fee = pot * table.fee_percent // 100
    share, remainder = divmod(pot - fee, len(winners))
    entries: collections.Counter[str] = collections.Counter(
        {f"pot:{table.table_id}": -pot, "house:fees": fee + remainder}
    )
    for line in winners:
        entries[f"player:{line.player_id}" if line.player_id else "house:bots"] += share
    return entries


async def check_books(
    calls: Calls, lobby: Database, guests: list[Guest], stack: LocalStack
) -> dict[str, int]:
    """Every check of the module docstring; some figures of the run."""
    # The audit, as the command an operator runs (exit 0 and its JSON), and in-process.
    command = [sys.executable, "-m", "okey101.cli", "audit", "chips", "--json"]
    command += ["--var-dir", str(stack.var_dir)]
    done = subprocess.run(
        command, env=stack.env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["chips_balanced"] is True and report["differences"] == [], report
    async with snapshot(lobby) as session:
        audit = await audit_chips(session)
    assert audit.chips_balanced and not audit.differences, audit.differences
    assert (report["transactions"], report["entries"]) == (audit.transactions, audit.entries)

    books = await read_books(lobby)
    by_reason = collections.Counter(t["reason"] for t in books.transactions.values())
    payouts = collections.Counter(
        t["table_id"] for t in books.transactions.values() if t["reason"] == "payout"
    )
    assert all(count == 1 for count in payouts.values()), f"paid twice: {payouts}"
    # Every stake held and every payout belongs to a pot (which the loop below checks).
    assert set(payouts) | {h.table_id for h in books.holds} <= set(books.pots)
    by_key = {t["key"]: t for t in books.transactions.values()}
    holds_of: dict[str, list[Any]] = collections.defaultdict(list)
    for hold in books.holds:
        holds_of[hold.table_id].append(hold)
    # What the tables' results pay each account, over every finished table.
    results: collections.Counter[str] = collections.Counter()
    states: collections.Counter[str] = collections.Counter()
    for table_id, pot in sorted(books.pots.items()):
        table = (await calls.table("GetTable", table_pb2.GetTableRequest(table_id=table_id))).table
        account = f"pot:{table_id}"
        assert books.balances.get(account, 0) == 0, f"{account} holds chips: {pot}"
        unsettled = [h for h in holds_of[table_id] if h.state in ("held", "in_play")]
        assert not unsettled, f"stakes held for ever at {table_id}: {unsettled}"
        states[pot.state] += 1
        if table.state == common_pb2.TABLE_STATE_FINISHED:
            assert pot.state == "paid", f"{table_id} finished, its pot is {pot.state}"
        else:
            assert table.state == common_pb2.TABLE_STATE_CLOSED, (table_id, table.state)
            assert pot.state == "refunded", f"{table_id} closed, its pot is {pot.state}"
            assert payouts[table_id] == 0, f"{table_id} closed, and paid out"
            assert all(h.state == "refunded" for h in holds_of[table_id])
            continue
        assert payouts[table_id] == 1, f"{table_id} finished, paid {payouts[table_id]} times"
        paid = by_key[f"payout:{table_id}"]["entries"]
        expected = expected_payout(table, 4 * int(pot.stake))  # every seat staked
        assert nonzero(paid) == nonzero(expected), f"{table_id}: paid {paid}, result {expected}"
        results.update(expected)
        bots = {line.seat for line in table.match_result.seats if not line.player_id}
        staked = {h.seat for h in holds_of[table_id] if not h.player_id and h.state == "paid"}
        assert staked == bots, f"{table_id}: bots at {bots}, staked by the house at {staked}"
    for hold in books.holds:
        stake = by_key[hold.hold_key]["entries"]
        owner = f"player:{hold.player_id}" if hold.player_id else "house:bots"
        assert stake == {owner: -hold.amount, f"pot:{hold.table_id}": hold.amount}, hold
        refund = by_key.get(f"refund:{hold.hold_key}")
        if hold.state == "refunded":
            assert refund is not None and refund["entries"] == {
                owner: hold.amount,
                f"pot:{hold.table_id}": -hold.amount,
            }, hold
        else:
            assert hold.state == "paid" and refund is None, hold

    # Every account's chips from the tables' results alone: each player's grant, less their
    # stakes paid out, plus what they won; the fees and remainders; the bots' winnings less the
    # house's stakes for them; the grants; the pots empty. Nothing else holds a chip.
    bot_stakes = sum(int(h.amount) for h in books.holds if not h.player_id and h.state == "paid")
    owed = collections.Counter(
        {
            "house:grants": -STARTING_GRANT * len(guests),
            "house:fees": results["house:fees"],
            "house:bots": results["house:bots"] - bot_stakes,
        }
    )
    for guest in guests:
        account = f"player:{guest.player_id}"
        mine = [t for t in books.transactions.values() if account in t["entries"]]
        reasons: collections.Counter[str] = collections.Counter()
        for transaction in mine:
            reasons[transaction["reason"]] += transaction["entries"][account]
        assert set(reasons) <= {"grant", "stake", "refund", "payout"}, reasons
        assert reasons["grant"] == STARTING_GRANT, reasons
        assert by_key[f"grant:start:{guest.player_id}"]["entries"][account] == STARTING_GRANT
        theirs = [h for h in books.holds if h.player_id == guest.player_id]
        lost = sum(int(h.amount) for h in theirs if h.state == "paid")
        assert reasons["stake"] == -sum(int(h.amount) for h in theirs), reasons
        assert reasons["refund"] == sum(int(h.amount) for h in theirs if h.state == "refunded")
        assert reasons["payout"] == results[account], (reasons, results[account])
        balance = owed[account] = STARTING_GRANT - lost + results[account]
        assert books.balances[account] == sum(reasons.values()) == balance, (account, reasons)
        assert books.lowest[account] >= 0, f"{account} went below zero"
        wallet = await calls.lobby("GetWallet", lobby_pb2.GetWalletRequest(), guest.auth)
        assert (wallet.balance, wallet.held) == (balance, 0), wallet
    assert nonzero(collections.Counter(books.balances)) == nonzero(owed), (books.balances, owed)
    assert audit.created == STARTING_GRANT * len(guests), audit.as_json()
    return {
        "pots": len(books.pots),
        "paid": states["paid"],
        "refunded": states["refunded"],
        "payouts": by_reason["payout"],
        "refunds": by_reason["refund"],
        "stakes": by_reason["stake"],
        "transactions": len(books.transactions),
    }


# --------------------------------------------------------------------------------------------
# The test


def test_tables_lobbies_and_scoring_killed_mid_start_and_mid_payout_lose_no_chip(
    tmp_path: Path, stack_databases: dict[str, str] | None
) -> None:
    """See the module docstring."""
    two_lobbies = stack_databases is not None
    rng = random.Random(SEED)

    async def scenario(stack: LocalStack, second: SecondLobby | None) -> None:
        lobby_url, table_url = database_urls(stack, stack_databases)
        token = TokenIssuer(dev_signing_key(stack.var_dir)).issue("service:test", "service")
        lobbies = [stack.address("lobby")] + ([second.address] if second else [])
        calls = Calls(lobbies, stack.address("table"), (("authorization", f"Bearer {token}"),))
        lobby, table = Database(lobby_url), Database(table_url)
        plan = kill_plan(rng, two_lobbies)
        killer = Killer(stack, second, plan)
        workers = []
        for index in range(WORKERS):
            host = await login(calls, f"Host{index}")
            friend = await login(calls, f"Friend{index}")
            workers.append(Worker(calls, killer, random.Random(SEED * 100 + index), host, friend))
        guests = [guest for worker in workers for guest in (worker.host, worker.friend)]
        stop = asyncio.Event()
        began = time.monotonic()
        playing = [asyncio.create_task(worker.run(stop)) for worker in workers]
        killing = asyncio.create_task(killer.run())
        try:
            while not killing.done():  # a worker that fails fails the test at once
                done, _ = await asyncio.wait([*playing, killing], timeout=0.5)
                for task in done:
                    task.result()
            await asyncio.sleep(2.0)  # a little play with every process up
            stop.set()
            await asyncio.wait_for(asyncio.gather(*playing), TABLE_SECONDS + 30)
        finally:
            for task in [*playing, killing]:
                task.cancel()
            await asyncio.gather(*playing, killing, return_exceptions=True)
        loaded = time.monotonic() - began

        # Settle: what the lobby owes is finished, orphaned tables closed, the outbox sent.
        await settled(lobby, table)
        orphans = await open_tables(table)
        for table_id in orphans:
            with contextlib.suppress(grpc.aio.AioRpcError):  # it may have just ended
                await calls.table(
                    "CloseTable",
                    table_pb2.CloseTableRequest(
                        request_id=f"close-{table_id}", table_id=table_id, reason="test: orphan"
                    ),
                )
        await settled(lobby, table)
        assert await open_tables(table) == []

        figures = await check_books(calls, lobby, guests, stack)
        rounds: collections.Counter[str] = collections.Counter()
        resent: collections.Counter[str] = collections.Counter()
        for worker in workers:
            rounds.update(worker.rounds)
            resent.update(worker.resent)
        closed = sum(len(worker.closed) for worker in workers)
        # Tables no stake was ever held at: made by a quick-match attempt a killed lobby began,
        # its transaction (and the stakes) rolled back, and not the group's table after all.
        potless = len(await all_tables(table)) - figures["pots"]
        print(
            f"load {loaded:.0f} s; rounds {dict(rounds)}; resent {dict(resent)}; "
            f"closed mid-match {closed}; orphans closed {len(orphans)}; without a pot {potless}; "
            f"{figures}; kills: "
            + ", ".join(f"{k.victim}@{k.moment}/{k.by} {k.at:.1f}s" for k in plan)
        )
        assert figures["paid"] > 0 and figures["refunded"] > 0, figures
        assert all(kill.by for kill in plan)
        await calls.close()
        await lobby.dispose()
        await table.dispose()

    with running(tmp_path, stack_databases, ENVIRONMENT, log_lines=60) as stack:
        with_second_lobby(stack, two_lobbies, scenario, serving_timeout=90)
