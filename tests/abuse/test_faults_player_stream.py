"""A player's own stream (``LobbyService.WatchPlayer``) through a lobby process killed with
SIGKILL: the stream resumed with ``after_sequence`` loses no event and repeats none.

The five services run as ``okey101 serve`` processes (``okey101.stack``). Four guests play
quick matches over and over, each led by its own stream: JoinQuickMatch, its QUICK_MATCH_SEATED
on the stream, then its seat played through the table's own stream (WatchTable: on each
TURN_STARTED of its seat, the view, the engine's random bot's decision, Act) for a few turns,
after which the test closes the table (CloseTable, a service's call) and the guest queues
again. Every turn of a guest's seat is also a TURN_STARTED on the guest's stream, sent by the
table's outbox to ``RecordPlayerEvents``. Mid-flow the lobby serving the streams (and the one
the table's outbox reaches) is killed; for a few seconds the tables go on and their players'
events wait in the outbox, retried. Clients reconnect with the last sequence number they saw:

- on PostgreSQL (``OKEY_TEST_DATABASE_URL``), to a second lobby process on the same database,
  where the guests also queue while the first is down (its events committed there, the
  outbox's reaching the first lobby once it is back and the second lobby's streams by NOTIFY);
- on SQLite, to the same lobby started again on its database file.

Then: each guest saw sequence numbers 1..N over its streams, with no gap and no repeat; N is
the number of its events in the lobby's database (and its cursor); its QUICK_MATCH_SEATED are
exactly its matched tickets; and every event the tables' logs owe it (each TURN_STARTED of its
seat while it was not away, each SEAT_AWAY and SEAT_BACK, each MATCH_ENDED: what
``okey101.table.player_events`` sends) is on its stream exactly once, those written while the
lobby was dead included.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from okey.v1 import common_pb2, lobby_pb2, lobby_pb2_grpc, table_pb2, table_pb2_grpc
from sqlalchemy import func, select

from okey101.engine.bots.entry_points import fallback_decision
from okey101.lobby.models import player_cursors, player_events, queue
from okey101.platform import convert
from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.platform.database import Database, sqlite_url
from okey101.stack import LocalStack, wait_serving

from support.lobby_process import SecondLobby, running, with_second_lobby

pytestmark = pytest.mark.slow

ENVIRONMENT = {
    "OKEY_LOG_LEVEL": "info",
    "OKEY_TABLE_BOT_MOVE_SECONDS": "0",
    "OKEY_TABLE_NEXT_HAND_SECONDS": "0",
    "OKEY_QUICK_MATCH_WAIT_SECONDS": "0",  # a ticket gets its bots at once
    "OKEY_QUICK_MATCH_LIMIT_PER_MINUTE": "100000",
    "OKEY_NEW_GUEST_LIMIT_PER_ADDRESS_PER_MINUTE": "100000",
    "OKEY_GRACE_SECONDS": "5",
}
#: A client that finds a restarted server again within a second.
CHANNEL_OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1_000),
)
RETRY = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
ACTIVE = (common_pb2.PHASE_FIRST, common_pb2.PHASE_DRAW, common_pb2.PHASE_PLAY)
ENDS = (common_pb2.EVENT_KIND_MATCH_ENDED, common_pb2.EVENT_KIND_TABLE_CLOSED)
PLAYERS = 4
#: A guest's turns at a table before the table is closed and the guest queues again.
TURNS_PER_TABLE = 8
#: Seconds of play before the kill, with the lobby dead, and after it is back.
BEFORE, DEAD, AFTER = 4.0, 5.0, 4.0
SEATED = lobby_pb2.PLAYER_EVENT_KIND_QUICK_MATCH_SEATED


# --------------------------------------------------------------------------------------------
# The stack


class Lobbies:
    """The lobby processes a client knows, as a load balancer in front of them would pick: the
    one that failed longest ago (one that just failed a call is tried last)."""

    def __init__(self, addresses: list[str]) -> None:
        self.addresses = addresses
        self._failed = dict.fromkeys(addresses, 0.0)
        self._channels: dict[str, grpc.aio.Channel] = {}

    def pick(self) -> str:
        return min(self.addresses, key=lambda address: self._failed[address])

    def failed(self, address: str) -> None:
        self._failed[address] = time.monotonic()

    def stub(self, address: str) -> Any:
        if address not in self._channels:
            self._channels[address] = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
        return lobby_pb2_grpc.LobbyServiceStub(self._channels[address])

    async def call(self, method: str, request: Any, metadata: Any = None) -> Any:
        """A unary call, sent again unchanged (same request id) while no lobby answers."""
        deadline = time.monotonic() + 60
        while True:
            address = self.pick()
            try:
                stub = self.stub(address)
                return await getattr(stub, method)(request, metadata=metadata, timeout=5)
            except grpc.aio.AioRpcError as error:
                if error.code() not in RETRY or time.monotonic() > deadline:
                    raise
                self.failed(address)
                await asyncio.sleep(0.1)

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()


class Player:
    """A guest led by its own stream (module docstring)."""

    def __init__(self, lobbies: Lobbies, tables: Any, login: Any, closer: Any) -> None:
        self.lobbies, self.tables, self.closer = lobbies, tables, closer
        self.player_id: str = login.player.player_id
        self.auth = (("authorization", f"Bearer {login.tokens.access_token}"),)
        #: Every event its streams gave, in the order they came.
        self.seen: list[lobby_pb2.PlayerEvent] = []
        #: How each stream ended (the lobby it was on, the status), and where each read from.
        self.endings: list[tuple[str, grpc.StatusCode]] = []
        self.read_from: collections.Counter[str] = collections.Counter()
        #: The (table, seat) it was seated at, in order.
        self.sat: list[tuple[str, int]] = []
        self._news = asyncio.Event()
        self._decisions = 0

    async def follow(self) -> None:
        """WatchPlayer, resumed after the last sequence seen on any end (until cancelled)."""
        while True:
            address = self.lobbies.pick()
            after = self.seen[-1].sequence if self.seen else 0
            call = self.lobbies.stub(address).WatchPlayer(
                lobby_pb2.WatchPlayerRequest(after_sequence=after), metadata=self.auth
            )
            try:
                async for item in call:
                    self.seen.append(item.event)
                    self.read_from[address] += 1
                    self._news.set()
                self.endings.append((address, grpc.StatusCode.OK))
            except grpc.aio.AioRpcError as error:
                self.endings.append((address, error.code()))
                self.lobbies.failed(address)
                await asyncio.sleep(0.1)
            finally:
                call.cancel()

    async def seated(self, ticket_id: str) -> lobby_pb2.PlayerEvent:
        """The QUICK_MATCH_SEATED of ``ticket_id``, once the stream has brought it."""
        async with asyncio.timeout(60):
            while True:
                self._news.clear()
                for event in self.seen:
                    if event.kind == SEATED and event.ticket_id == ticket_id:
                        return event
                await self._news.wait()

    async def play(self, stop: asyncio.Event) -> None:
        """Quick matches, one after another, until ``stop``."""
        while not stop.is_set():
            joined = await self.lobbies.call(
                "JoinQuickMatch",
                lobby_pb2.JoinQuickMatchRequest(request_id=uuid.uuid4().hex),
                self.auth,
            )
            seated = await self.seated(joined.ticket.ticket_id)
            self.sat.append((seated.table_id, seated.seat))
            await self._play_table(seated.table_id, seated.seat)

    async def _play_table(self, table_id: str, seat: int) -> None:
        """The seat played on its table's stream for ``TURNS_PER_TABLE`` turns; then closed."""
        call = self.tables.WatchTable(
            table_pb2.WatchTableRequest(table_id=table_id, seat=seat), metadata=self.auth
        )
        turns = 0
        try:
            async for item in call:
                event = item.event
                if event.kind in ENDS:
                    break
                if event.kind == common_pb2.EVENT_KIND_TURN_STARTED and event.seat == seat:
                    turns += 1
                    if turns > TURNS_PER_TABLE:
                        break
                    await self._turn(table_id, seat)
        finally:
            call.cancel()
        await self.closer(table_id)

    async def _turn(self, table_id: str, seat: int) -> None:
        """Play the seat's turn: decide on the view and act until it is someone else's."""
        refused: list[str] = []
        for _ in range(30):
            view = (
                await self.tables.GetSeatView(
                    table_pb2.GetSeatViewRequest(table_id=table_id, seat=seat),
                    metadata=self.auth,
                )
            ).view
            if view.turn != seat or view.phase not in ACTIVE or view.HasField("result"):
                return
            self._decisions += 1
            decision = fallback_decision(
                convert.seat_view_from_proto(view),
                convert.rules_from_proto(view.rules),
                self._decisions,
            )
            try:
                await self.tables.Act(
                    table_pb2.ActRequest(
                        request_id=uuid.uuid4().hex,
                        table_id=table_id,
                        seat=seat,
                        actions=[convert.action_to_proto(action) for action in decision.actions],
                        expected_state_version=view.state_version,
                    ),
                    metadata=self.auth,
                )
            except grpc.aio.AioRpcError as error:
                if error.code() not in (
                    grpc.StatusCode.ABORTED,
                    grpc.StatusCode.FAILED_PRECONDITION,
                ):
                    raise
                refused.append(f"{error.code().name} {error.details()}")
        raise AssertionError(f"the turn at {table_id} was never played: {refused[-3:]}")


# --------------------------------------------------------------------------------------------
# What the tables' logs owe each player


def owed(log: list[common_pb2.Event], table_id: str, seat: int) -> list[tuple[Any, ...]]:
    """The player events ``log`` owes the player at ``seat`` (``table.player_events``): each
    TURN_STARTED of the seat while it is not away, its SEAT_AWAY and SEAT_BACK, MATCH_ENDED."""
    kinds = lobby_pb2
    told: list[tuple[Any, ...]] = []
    away = False
    for event in log:
        mine = event.HasField("seat") and event.seat == seat
        if event.kind == common_pb2.EVENT_KIND_SEAT_AWAY and mine:
            away = True
            told.append((kinds.PLAYER_EVENT_KIND_SEAT_AWAY, table_id, seat, 0))
        elif event.kind == common_pb2.EVENT_KIND_SEAT_LEFT and mine:
            away = True
        elif event.kind == common_pb2.EVENT_KIND_SEAT_BACK and mine:
            away = False
            told.append((kinds.PLAYER_EVENT_KIND_SEAT_BACK, table_id, seat, 0))
        elif event.kind == common_pb2.EVENT_KIND_TURN_STARTED and mine and not away:
            deadline = event.turn_deadline.ToMicroseconds()
            told.append((kinds.PLAYER_EVENT_KIND_TURN_STARTED, table_id, seat, deadline))
        elif event.kind == common_pb2.EVENT_KIND_MATCH_ENDED:
            told.append((kinds.PLAYER_EVENT_KIND_MATCH_ENDED, table_id, seat, 0))
    return told


def told(event: lobby_pb2.PlayerEvent) -> tuple[Any, ...]:
    """An event of a table as the player's stream carried it (what ``owed`` compares)."""
    deadline = event.deadline.ToMicroseconds() if event.HasField("deadline") else 0
    return (event.kind, event.table_id, event.seat, deadline)


async def table_log(tables: Any, auth: Any, table_id: str, seat: int) -> list[common_pb2.Event]:
    """A closed table's whole log as ``seat`` sees it (the stream ends after TABLE_CLOSED)."""
    call = tables.WatchTable(
        table_pb2.WatchTableRequest(table_id=table_id, seat=seat), metadata=auth, timeout=30
    )
    return [item.event async for item in call]


async def lobby_figures(url: str, player_id: str) -> tuple[int, int, set[str]]:
    """The player's (events kept, last sequence given, matched tickets) in the lobby's database."""
    database = Database(url)
    try:
        async with database.read() as session:
            count = await session.scalar(
                select(func.count())
                .select_from(player_events)
                .where(player_events.c.player_id == player_id)
            )
            last = await session.scalar(
                select(player_cursors.c.last_sequence).where(
                    player_cursors.c.player_id == player_id
                )
            )
            tickets = await session.scalars(
                select(queue.c.ticket_id).where(
                    queue.c.player_id == player_id, queue.c.state == "matched"
                )
            )
            return int(count or 0), int(last or 0), set(tickets)
    finally:
        await database.dispose()


# --------------------------------------------------------------------------------------------
# The test


def test_a_lobby_killed_mid_flow_the_resumed_player_streams_lose_and_repeat_nothing(
    tmp_path: Path, stack_databases: dict[str, str] | None
) -> None:
    """See the module docstring. A few seconds of play, SIGKILL to the lobby (the one every
    stream is on, and the table's outbox's), five seconds of play without it (on PostgreSQL
    the streams and the queue move to the second lobby), the lobby started again, a few more
    seconds, then every guest's last table closed and the outbox drained."""
    two_lobbies = stack_databases is not None

    async def scenario(stack: LocalStack, second: SecondLobby | None) -> None:
        first = stack.address("lobby")
        lobbies = Lobbies([first, second.address] if second else [first])
        channel = grpc.aio.insecure_channel(stack.address("table"), options=CHANNEL_OPTIONS)
        tables = table_pb2_grpc.TableServiceStub(channel)
        token = TokenIssuer(dev_signing_key(stack.var_dir)).issue("service:test", "service")
        service_auth = (("authorization", f"Bearer {token}"),)

        async def close(table_id: str) -> None:
            with contextlib.suppress(grpc.aio.AioRpcError):  # ended already
                await tables.CloseTable(
                    table_pb2.CloseTableRequest(request_id=f"close-{table_id}", table_id=table_id),
                    metadata=service_auth,
                    timeout=10,
                )

        players = []
        for index in range(PLAYERS):
            login = await lobbies.call(
                "LoginGuest",
                lobby_pb2.LoginGuestRequest(
                    request_id=uuid.uuid4().hex,
                    device_id=f"device-{uuid.uuid4().hex}",
                    display_name=f"Stream{index}",
                ),
            )
            players.append(Player(lobbies, tables, login, close))
        following = [asyncio.create_task(player.follow()) for player in players]
        stop = asyncio.Event()
        playing = [asyncio.create_task(player.play(stop)) for player in players]

        async def pause(seconds: float) -> None:
            """Play goes on for ``seconds`` (a player that fails fails the test at once)."""
            done, _ = await asyncio.wait(playing, timeout=seconds)
            for task in done:
                task.result()

        await pause(BEFORE)
        assert all(player.seen for player in players), "no event before the kill"
        stack.services["lobby"].process.send_signal(signal.SIGKILL)
        stack.services["lobby"].process.wait()
        killed_at = time.time()
        seen_at_kill = [len(player.seen) for player in players]
        await pause(DEAD)
        stack.start("lobby")
        await wait_serving(first, timeout=60)
        back_at = time.time()
        await pause(AFTER)
        stop.set()
        await asyncio.wait_for(asyncio.gather(*playing), 60)

        url = (
            stack_databases["lobby"] if stack_databases else sqlite_url(stack.var_dir / "lobby.db")
        )
        # Every table's log, and what it owes each player; then the outbox drains.
        expected: dict[str, collections.Counter[tuple[Any, ...]]] = {}
        written_while_dead = 0
        for player in players:
            expected[player.player_id] = collections.Counter()
            for table_id, seat in player.sat:
                log = await table_log(tables, player.auth, table_id, seat)
                assert log[-1].kind == common_pb2.EVENT_KIND_TABLE_CLOSED
                expected[player.player_id].update(owed(log, table_id, seat))
                written_while_dead += sum(
                    1
                    for event in log
                    if event.kind == common_pb2.EVENT_KIND_TURN_STARTED
                    and event.HasField("seat")
                    and event.seat == seat
                    and killed_at < event.time.ToMicroseconds() / 1e6 < back_at
                )

        async def drained() -> bool:
            for player in players:
                count, _last, tickets = await lobby_figures(url, player.player_id)
                owed_count = sum(expected[player.player_id].values()) + len(tickets)
                if count < owed_count or len(player.seen) < count:
                    return False
            return True

        deadline = time.monotonic() + 45
        while not await drained():
            assert time.monotonic() < deadline, "the outbox did not drain into the streams"
            await asyncio.sleep(0.5)
        await asyncio.sleep(1.0)  # nothing more comes

        for task in following:
            task.cancel()
        await asyncio.gather(*following, return_exceptions=True)
        for player, before_kill in zip(players, seen_at_kill, strict=True):
            sequences = [event.sequence for event in player.seen]
            assert sequences == list(range(1, len(sequences) + 1)), "a gap or a repeat"
            count, last, tickets = await lobby_figures(url, player.player_id)
            assert count == last == len(sequences)
            assert {e.ticket_id for e in player.seen if e.kind == SEATED} == tickets
            assert len(tickets) == len(player.sat)
            from_tables = collections.Counter(told(e) for e in player.seen if e.kind != SEATED)
            assert from_tables == expected[player.player_id]
            # The stream on the killed lobby broke, and a resumed one carried on.
            assert (first, grpc.StatusCode.UNAVAILABLE) in player.endings, player.endings
            assert len(player.seen) > before_kill
            if second is not None:
                assert player.read_from[second.address] > 0
        assert written_while_dead > 0, "no turn started while the lobby was dead"
        await lobbies.close()
        await channel.close()

    with running(tmp_path, stack_databases, ENVIRONMENT) as stack:
        with_second_lobby(stack, two_lobbies, scenario, serving_timeout=60)
