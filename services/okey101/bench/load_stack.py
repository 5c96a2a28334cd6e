"""The whole stack under play, for ``okey101 bench load`` and the fault tests.

- ``temporary_databases``: one PostgreSQL database per stateful service (lobby, table, scoring)
  on a server the caller names, created for the run and dropped (``WITH (FORCE)``) after it.
- ``stack_environment``: the settings the five ``okey101 serve`` processes get
  (``okey101.stack.local_stack`` starts them on free ports, one var dir, local mode).
- ``StackClient``: channels to the public services, a service token, and ``rpc`` (one call,
  retried unchanged on UNAVAILABLE and DEADLINE_EXCEEDED, as common.proto allows: the request
  keeps its request_id), counting every failed attempt by status code in ``Figures``.
- Guests: ``login_guests`` (LobbyService.LoginGuest, tokens refreshed by the client's
  ``Tokens``); seating through the lobby, ``quick_match`` (JoinQuickMatch, then
  GetQuickMatchStatus) or ``host_table`` (HostTable, the others JoinTable).
- ``drive``: one table played from outside, as the players' apps would: each seat's view
  (TableService.GetSeatView with its player's token), a decision (``Decider``: the bot service's
  NextStep, or the engine's bot in-process), TableService.Act with the view's state_version,
  timed from the call to its answer; at most ``pace`` moves a second per table. Seats that are
  not ours (the table's bots) are left to the table.
- ``PlayerStream``: a guest's own WatchPlayer stream, kept open; ``quick_match`` is seated by
  it when the guest has one (QUICK_MATCH_SEATED), else by polling.
- ``follow``: a table played as apps play it, each seat over TableService.Play (a native
  app) or WatchTable with ``changes`` and Act (a browser), its view coming with each change.
- ``audit``: what the tables say was finished, against what scoring recorded: every ended hand
  (a HAND_ENDED event in the table's log, read back with WatchTable) must be on its match's
  score sheet exactly once, and every table's log numbered 1, 2, 3... with no gap.

It is over 900 lines as one idea: the whole stack driven from outside, as players do, for
``bench load``, ``bench tournament`` and the fault tests, which share its client, its figures
and its players (split, each part would import the others).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import grpc
import grpc.aio
from okey.v1 import (
    bot_pb2,
    bot_pb2_grpc,
    common_pb2,
    lobby_pb2,
    lobby_pb2_grpc,
    scoring_pb2,
    scoring_pb2_grpc,
    table_pb2,
    table_pb2_grpc,
)

from okey101.client.errors import Rejection, rate_limit_wait
from okey101.client.session import Tokens
from okey101.platform.auth import TokenIssuer, dev_signing_key

#: Where the PostgreSQL runs make their databases (``OKEY_TEST_DATABASE_URL``'s server).
DATABASE_ENV: Final = "OKEY_TEST_DATABASE_URL"
DEFAULT_DATABASE_URL: Final = "postgresql://postgres@127.0.0.1:5432/test"
STATEFUL: Final = ("lobby", "table", "scoring")
ACTIVE: Final = (common_pb2.PHASE_FIRST, common_pb2.PHASE_DRAW, common_pb2.PHASE_PLAY)
ENDED_TABLE: Final = (common_pb2.TABLE_STATE_FINISHED, common_pb2.TABLE_STATE_CLOSED)
RETRYABLE: Final = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
#: Codes that are answers about the game, not failures: a move computed from a state that has
#: moved on (ABORTED), or one the table no longer allows (the turn timed out, the hand ended).
GAME_ANSWERS: Final = frozenset({grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION})

#: A client that finds a restarted service again within a second (gRPC's default reconnect
#: back-off grows to two minutes).
CLIENT_OPTIONS: Final[tuple[tuple[str, Any], ...]] = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1_000),
)

Metadata = tuple[tuple[str, str], ...]
Auth = Callable[[], Awaitable[Metadata]]
Decider = Callable[[common_pb2.SeatView], Awaitable[list[common_pb2.Action]]]


# --------------------------------------------------------------------------------------------
# Databases and the stack's settings


def admin_url(base: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(base).set(drivername="postgresql").render_as_string(hide_password=False)


def database_url(base: str, name: str) -> str:
    from sqlalchemy.engine import make_url

    url = make_url(base).set(drivername="postgresql+asyncpg", database=name)
    return url.render_as_string(hide_password=False)


async def _admin(base: str, *statements: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(admin_url(base))
    try:
        for statement in statements:
            await connection.execute(statement)
    finally:
        await connection.close()


@contextlib.contextmanager
def temporary_databases(
    base: str, prefix: str, services: Sequence[str] = STATEFUL
) -> Iterator[dict[str, str]]:
    """A new database per service on ``base``'s server, ``{service: asyncpg URL}``; dropped
    when the block ends (connections still open are ended: ``WITH (FORCE)``)."""
    tag = uuid.uuid4().hex[:10]
    names = {service: f"{prefix}_{tag}_{service}" for service in services}
    created: list[str] = []
    try:
        for name in names.values():
            asyncio.run(_admin(base, f'CREATE DATABASE "{name}"'))
            created.append(name)
        yield {service: database_url(base, name) for service, name in names.items()}
    finally:
        for name in created:
            with contextlib.suppress(Exception):
                asyncio.run(_admin(base, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def stack_environment(databases: Mapping[str, str] | None = None, **table: str) -> dict[str, str]:
    """The settings of a stack that plays as fast as its clients: the table's bots move at
    once and the next hand is dealt at once (``table`` overrides ``OKEY_TABLE_<NAME>``), a
    quick-match ticket waits a minute for three more players before bots fill the seats, the
    lobby's limits per client address are out of the way (every player is 127.0.0.1), and
    each stateful service uses its database in ``databases`` (else SQLite under the var dir)."""
    env = {
        "OKEY_TABLE_BOT_MOVE_SECONDS": "0",
        "OKEY_TABLE_NEXT_HAND_SECONDS": "0",
        "OKEY_QUICK_MATCH_WAIT_SECONDS": "60",
        # Every simulated player connects from 127.0.0.1: the limits per client address
        # would hold the whole load to ten new guests a minute.
        "OKEY_NEW_GUEST_LIMIT_PER_ADDRESS_PER_MINUTE": "1000000",
        "OKEY_HOST_TABLE_LIMIT_PER_ADDRESS_PER_MINUTE": "1000000",
        # A process killed on purpose must not keep its port for the one started in its place.
        "OKEY_GRACE_SECONDS": "5",
    }
    env.update({f"OKEY_TABLE_{name.upper()}": value for name, value in table.items()})
    for service, url in (databases or {}).items():
        env[f"OKEY_{service.upper()}_DATABASE_URL"] = url
    return env


# --------------------------------------------------------------------------------------------
# Figures


@dataclass
class Figures:
    """What the clients saw: Act latencies (ms), failed attempts by method and code."""

    latencies: list[float] = field(default_factory=list)
    #: When each of ``latencies`` was answered (``time.perf_counter()``).
    answered: list[float] = field(default_factory=list)
    failures: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    #: A few failures as (method, code, reason, sentence), for a report.
    samples: list[tuple[str, str, str, str]] = field(default_factory=list)
    moves: int = 0
    #: Calls a rate limit refused (RESOURCE_EXHAUSTED, RATE_LIMITED), by method: waited out as
    #: the API asks, so not errors, but a load that needs them is more than players make.
    throttled: collections.Counter[str] = field(default_factory=collections.Counter)
    #: False while the figures are not wanted (warm-up): latencies are not kept.
    recording: bool = True
    #: Streams opened again after a server closed their connection at its age limit.
    reopened: collections.Counter[str] = field(default_factory=collections.Counter)

    def failed(self, method: str, error: grpc.aio.AioRpcError) -> None:
        code = error.code().name
        self.failures[(method, code)] += 1
        if error.code() not in GAME_ANSWERS and len(self.samples) < 20:
            rejection = Rejection.of(error)
            self.samples.append((method, code, rejection.reason, rejection.message[:200]))

    def stream_ended(self, method: str, error: grpc.aio.AioRpcError) -> None:
        """A long stream ended with ``error``: a server closing a connection at its age limit
        (``max_connection_age_seconds``, so that new pods get traffic) ends it UNAVAILABLE
        ("max connection age"), or CANCELLED when the connection's grace runs out under it
        (this client never cancels a stream it still reads), and the client opens it again
        where it was; that is counted in ``reopened``, anything else as a failure."""
        ended_by_age = (
            error.code() == grpc.StatusCode.UNAVAILABLE
            and "max connection age" in (error.details() or "")
        ) or error.code() == grpc.StatusCode.CANCELLED
        if ended_by_age:
            self.reopened[method] += 1
        else:
            self.failed(method, error)

    def failed_status(self, method: str, status: Any) -> None:
        """``failed`` for a refusal carried in a stream (a ``google.rpc.Status``)."""
        code = grpc.StatusCode.UNKNOWN
        for known in grpc.StatusCode:
            if known.value[0] == status.code:
                code = known
        self.failures[(method, code.name)] += 1
        if code not in GAME_ANSWERS and len(self.samples) < 20:
            self.samples.append((method, code.name, "", status.message[:200]))

    @property
    def errors(self) -> int:
        """Failed attempts other than the game's own answers (stale or refused moves)."""
        game = {code.name for code in GAME_ANSWERS}
        return sum(n for (_method, code), n in self.failures.items() if code not in game)

    def codes(self) -> dict[str, int]:
        """Failed attempts by code (game answers included)."""
        counts: collections.Counter[str] = collections.Counter()
        for (_method, code), n in self.failures.items():
            counts[code] += n
        return dict(counts)


# --------------------------------------------------------------------------------------------
# The client


class StackClient:
    """Channels to a stack's lobby, table, bot and scoring services, and a service token."""

    def __init__(self, addresses: Mapping[str, str], var_dir: Path, figures: Figures) -> None:
        self.figures = figures
        self._channels: dict[str, grpc.aio.Channel] = {}
        self.addresses = dict(addresses)
        self.lobby: Any = lobby_pb2_grpc.LobbyServiceStub(self.channel(addresses["lobby"]))
        self.bot: Any = bot_pb2_grpc.BotServiceStub(self.channel(addresses["bot"]))
        self.scoring: Any = scoring_pb2_grpc.ScoringServiceStub(self.channel(addresses["scoring"]))
        self.table_target = addresses["table"]
        token = TokenIssuer(dev_signing_key(var_dir)).issue(
            "load-client", "service", ttl_seconds=12 * 3600
        )
        self.service_metadata: Metadata = (("authorization", f"Bearer {token}"),)

    def channel(self, target: str) -> grpc.aio.Channel:
        if target not in self._channels:
            self._channels[target] = grpc.aio.insecure_channel(target, options=CLIENT_OPTIONS)
        return self._channels[target]

    @property
    def table(self) -> Any:
        """The table service where clients find it now (a load balancer's job in a cluster)."""
        return table_pb2_grpc.TableServiceStub(self.channel(self.table_target))

    async def service_auth(self) -> Metadata:
        return self.service_metadata

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()

    async def rpc(
        self,
        method: Callable[[StackClient], Any],
        request: Any,
        auth: Auth,
        *,
        name: str,
        timeout: float = 10.0,
        retry_seconds: float = 90.0,
        expected: frozenset[grpc.StatusCode] = frozenset(),
    ) -> Any:
        """``method(self)(request)``, again unchanged (same request id) after UNAVAILABLE or
        DEADLINE_EXCEEDED, for up to ``retry_seconds``; every failed attempt is counted but
        those ending with an ``expected`` code. A rate limit's refusal is waited out (its
        ``retry_after_ms``) and counted in ``Figures.throttled``. ``method`` picks the stub's
        method each time, so a retry goes wherever the service is found now."""
        began = time.monotonic()
        delay = 0.05
        while True:
            try:
                return await method(self)(request, metadata=await auth(), timeout=timeout)
            except grpc.aio.AioRpcError as error:
                wait = rate_limit_wait(error)
                if wait is not None and error.code() not in expected:
                    self.figures.throttled[name] += 1
                    await asyncio.sleep(wait)
                    continue
                if error.code() not in expected:
                    self.figures.failed(name, error)
                if error.code() not in RETRYABLE or time.monotonic() - began > retry_seconds:
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)


# --------------------------------------------------------------------------------------------
# Guests and seats


@dataclass
class Guest:
    """A guest logged in through the lobby (``stream``: their own WatchPlayer stream, once
    ``PlayerStream.open`` has started it)."""

    player_id: str
    tokens: Tokens
    stream: PlayerStream | None = None

    async def auth(self) -> Metadata:
        return await self.tokens.metadata()


class PlayerStream:
    """A guest's own WatchPlayer stream, kept open (reopened after the last sequence seen when
    it breaks), as an app keeps it: where quick match seated them, by ticket."""

    def __init__(
        self,
        client: StackClient,
        guest: Guest,
        on_event: Callable[[Guest, lobby_pb2.PlayerEvent], None] | None = None,
    ) -> None:
        self.client = client
        self.guest = guest
        self.on_event = on_event
        self.last_sequence = 0
        self.events = 0
        self._seated: dict[str, tuple[str, int]] = {}
        self._news = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    @staticmethod
    def open(
        client: StackClient,
        guest: Guest,
        on_event: Callable[[Guest, lobby_pb2.PlayerEvent], None] | None = None,
    ) -> PlayerStream:
        """Open ``guest``'s stream; ``on_event`` is told every event as it comes."""
        guest.stream = stream = PlayerStream(client, guest, on_event)
        stream.task = asyncio.create_task(stream._run())
        return stream

    async def _run(self) -> None:
        delay = 0.05
        while True:
            call = self.client.lobby.WatchPlayer(
                lobby_pb2.WatchPlayerRequest(after_sequence=self.last_sequence),
                metadata=await self.guest.auth(),
            )
            try:
                async for message in call:
                    delay = 0.05
                    if message.HasField("event"):
                        self._take(message.event)
            except grpc.aio.AioRpcError as error:
                self.client.figures.stream_ended("WatchPlayer", error)
                if error.code() not in RETRYABLE:
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    def _take(self, event: lobby_pb2.PlayerEvent) -> None:
        self.last_sequence = event.sequence
        self.events += 1
        if self.on_event is not None:
            self.on_event(self.guest, event)
        if event.kind == lobby_pb2.PLAYER_EVENT_KIND_QUICK_MATCH_SEATED:
            self._seated[event.ticket_id] = (event.table_id, event.seat)
            self._news.set()
            self._news = asyncio.Event()

    async def seated(self, ticket_id: str, timeout: float) -> tuple[str, int]:
        """Where the ticket was seated (QUICK_MATCH_SEATED), waiting up to ``timeout``."""
        async with asyncio.timeout(timeout):
            while ticket_id not in self._seated:
                await self._news.wait()
        return self._seated.pop(ticket_id)

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)


async def _no_auth() -> Metadata:
    return ()


async def login_guest(client: StackClient, name: str) -> Guest:
    device = f"load-{uuid.uuid4().hex}"
    first = await client.rpc(
        lambda c: c.lobby.LoginGuest,
        lobby_pb2.LoginGuestRequest(
            request_id=uuid.uuid4().hex, device_id=device, display_name=name[:32]
        ),
        _no_auth,
        name="LoginGuest",
    )
    secret = first.guest_secret

    async def relogin() -> lobby_pb2.AuthTokens:
        again = await client.rpc(
            lambda c: c.lobby.LoginGuest,
            lobby_pb2.LoginGuestRequest(
                request_id=uuid.uuid4().hex, device_id=device, guest_secret=secret
            ),
            _no_auth,
            name="LoginGuest",
        )
        tokens: lobby_pb2.AuthTokens = again.tokens
        return tokens

    return Guest(first.player.player_id, Tokens(client.lobby, first.tokens, "en", relogin))


async def login_guests(client: StackClient, count: int, *, concurrency: int = 16) -> list[Guest]:
    slots = asyncio.Semaphore(concurrency)

    async def one(index: int) -> Guest:
        async with slots:
            return await login_guest(client, f"load{index}")

    return list(await asyncio.gather(*(one(index) for index in range(count))))


@dataclass
class Seating:
    """Our guests at one table, by seat (the other seats, if any, are the table's bots)."""

    table_id: str
    seats: dict[int, Guest] = field(default_factory=dict)


async def quick_match(
    client: StackClient,
    guest: Guest,
    preset: int = common_pb2.RULE_PRESET_OYNA,
    *,
    poll_seconds: float = 1.0,
    timeout: float = 300.0,
    stake: int = 0,
) -> tuple[str, int]:
    """JoinQuickMatch, then (table id, seat): from the guest's own stream (QUICK_MATCH_SEATED)
    if it has one open, else from GetQuickMatchStatus about once a second (as the API allows)
    until matched."""
    joined = await client.rpc(
        lambda c: c.lobby.JoinQuickMatch,
        lobby_pb2.JoinQuickMatchRequest(
            request_id=uuid.uuid4().hex,
            preset=preset,  # type: ignore[arg-type]
            stake=stake,
        ),
        guest.auth,
        name="JoinQuickMatch",
    )
    ticket = joined.ticket
    if guest.stream is not None:
        if ticket.state == lobby_pb2.QUICK_MATCH_STATE_MATCHED:
            return ticket.table_id, ticket.seat
        try:
            return await guest.stream.seated(ticket.ticket_id, timeout)
        except TimeoutError:
            raise TimeoutError(f"quick match: no table within {timeout:.0f} s") from None
    deadline = time.monotonic() + timeout
    while ticket.state == lobby_pb2.QUICK_MATCH_STATE_WAITING:
        if time.monotonic() > deadline:
            raise TimeoutError(f"quick match: no table within {timeout:.0f} s")
        await asyncio.sleep(poll_seconds)
        ticket = (
            await client.rpc(
                lambda c: c.lobby.GetQuickMatchStatus,
                lobby_pb2.GetQuickMatchStatusRequest(ticket_id=ticket.ticket_id),
                guest.auth,
                name="GetQuickMatchStatus",
            )
        ).ticket
    if ticket.state != lobby_pb2.QUICK_MATCH_STATE_MATCHED:
        raise RuntimeError(f"quick-match ticket {ticket.ticket_id} was not matched")
    return ticket.table_id, ticket.seat


async def quick_match_group(
    client: StackClient, guests: Sequence[Guest], preset: int = common_pb2.RULE_PRESET_OYNA
) -> list[Seating]:
    """Quick-match ``guests`` together; the tables they were given."""
    places = await asyncio.gather(*(quick_match(client, guest, preset) for guest in guests))
    tables: dict[str, Seating] = {}
    for guest, (table_id, seat) in zip(guests, places, strict=True):
        tables.setdefault(table_id, Seating(table_id)).seats[seat] = guest
    return list(tables.values())


async def host_table(
    client: StackClient,
    guests: Sequence[Guest],
    rules: common_pb2.RuleSet,
    *,
    bots: Sequence[int] = (),
    bot_level: int = common_pb2.BOT_LEVEL_EASY,
    stake: int = 0,
) -> Seating:
    """The first guest hosts a public table (``bots`` seats for the table's bots, started once
    full); the others join it by id. Seats: the host 0, then the lowest free ones."""
    host, *others = guests
    hosted = await client.rpc(
        lambda c: c.lobby.HostTable,
        lobby_pb2.HostTableRequest(
            request_id=uuid.uuid4().hex,
            rules=rules,
            visibility=common_pb2.TABLE_VISIBILITY_PUBLIC,
            host_seat=0,
            bots=[lobby_pb2.BotSeat(seat=seat, level=bot_level) for seat in bots],  # type: ignore[arg-type]
            start_when_full=True,
            stake=stake,
        ),
        host.auth,
        name="HostTable",
    )
    seating = Seating(hosted.table.table_id, {hosted.seat: host})
    for guest in others:
        joined = await client.rpc(
            lambda c: c.lobby.JoinTable,
            lobby_pb2.JoinTableRequest(request_id=uuid.uuid4().hex, table_id=seating.table_id),
            guest.auth,
            name="JoinTable",
        )
        seating.seats[joined.seat] = guest
    return seating


# --------------------------------------------------------------------------------------------
# Deciding and playing


def bot_service_decider(client: StackClient, level: int = common_pb2.BOT_LEVEL_EASY) -> Decider:
    """Decisions from BotService.NextStep (seeded by the state version), as table_bench."""

    async def decide(view: common_pb2.SeatView) -> list[common_pb2.Action]:
        step = await client.rpc(
            lambda c: c.bot.NextStep,
            bot_pb2.NextStepRequest(
                view=view,
                phase=view.phase,
                level=level,  # type: ignore[arg-type]
                seed=view.state_version,
            ),
            client.service_auth,
            name="NextStep",
        )
        return list(step.actions)

    return decide


async def _read_unless(call: Any, stopped: asyncio.Task[Any]) -> Any:
    """The stream's next message (or ``grpc.aio.EOF``); None if ``stopped`` ends first."""
    read = asyncio.ensure_future(call.read())
    read.add_done_callback(_retrieved)
    await asyncio.wait({read, stopped}, return_when=asyncio.FIRST_COMPLETED)
    if not read.done():
        read.cancel()
        return None
    return read.result()


def _newest(view: common_pb2.SeatView | None, item: Any) -> common_pb2.SeatView | None:
    """The newer of ``view`` and the one ``item`` carries (a stream's view, or its change's),
    by sequence: a change's view may come after the seat's own move answered a newer one."""
    newer: common_pb2.SeatView = item.change.view if item.HasField("change") else item.view
    if newer.ByteSize() and (view is None or newer.as_of_sequence >= view.as_of_sequence):
        return newer
    return view


def _retrieved(read: asyncio.Future[Any]) -> None:
    """A stream's read that nobody waits for any more (the seat stopped, or its call was
    cancelled): its outcome marked as seen, so asyncio does not log it as lost."""
    if not read.cancelled():
        read.exception()


def engine_decider(level: str = "random", spent: list[float] | None = None) -> Decider:
    """Decisions from the engine's bot of ``level`` (``BotLevel``'s names) in this process, no
    service involved; the processor seconds each took are appended to ``spent``."""
    from okey101.engine.bots.entry_points import decide as bot_decide
    from okey101.engine.bots.levels import BotLevel
    from okey101.platform import convert

    bot_level = BotLevel(level)

    async def decide(view: common_pb2.SeatView) -> list[common_pb2.Action]:
        began = time.process_time()
        decision = bot_decide(
            convert.seat_view_from_proto(view),
            convert.rules_from_proto(view.rules),
            bot_level,
            view.state_version * 4 + view.phase,
        )
        actions = [convert.action_to_proto(action) for action in decision.actions]
        if spent is not None:
            spent.append(time.process_time() - began)
        return actions

    return decide


class Pacer:
    """At most ``pace`` moves a second (0: no limit), starting at a random point of the first
    interval so tables do not move in step; a late move is not made up for by a burst."""

    def __init__(self, pace: float) -> None:
        self.interval = 1.0 / pace if pace > 0 else 0.0
        self.next_at = time.monotonic() + random.random() * self.interval

    async def wait(self) -> None:
        if not self.interval:
            return
        now = time.monotonic()
        if self.next_at > now:
            await asyncio.sleep(self.next_at - now)
        self.next_at = max(self.next_at, time.monotonic()) + self.interval


@dataclass
class Play:
    """How ``drive`` and ``follow`` play."""

    decide: Decider
    pace: float = 0.0
    #: Seconds between looks while it is not one of our seats' turn (the table's bots play,
    #: or the next hand is not dealt yet).
    poll_seconds: float = 0.02
    #: Stop after this many moves of ours (None: play the match to its end).
    max_moves: int | None = None
    #: How long a call is retried while its service cannot be reached.
    retry_seconds: float = 90.0
    #: Stop once the view after one of our moves satisfies this (None: never).
    until: Callable[[common_pb2.SeatView], bool] | None = None
    #: ``follow``: each seat over one TableService.Play stream (a native client), or over
    #: WatchTable with ``changes`` and Act calls (a browser's calls).
    over_play: bool = True


async def drive(
    client: StackClient,
    seating: Seating,
    play: Play,
    stop: asyncio.Event | None = None,
    on_move: Callable[[Seating, int], None] | None = None,
) -> bool:
    """Play our seats at ``seating``'s table until its match ends (True), ``stop`` is set or
    ``play.max_moves`` are made (False)."""
    figures = client.figures
    stop = stop or asyncio.Event()
    pacer = Pacer(play.pace)
    view: common_pb2.SeatView | None = None
    next_seat = min(seating.seats)
    moves = 0
    while not stop.is_set():
        if view is None:
            seat = next_seat if next_seat in seating.seats else min(seating.seats)
            guest = seating.seats[seat]
            view = (
                await client.rpc(
                    lambda c: c.table.GetSeatView,
                    table_pb2.GetSeatViewRequest(table_id=seating.table_id, seat=seat),
                    guest.auth,
                    name="GetSeatView",
                    retry_seconds=play.retry_seconds,
                )
            ).view
        if view.phase not in ACTIVE:
            if view.phase == common_pb2.PHASE_ENDED or not view.hand_id:
                table = (
                    await client.rpc(
                        lambda c: c.table.GetTable,
                        table_pb2.GetTableRequest(table_id=seating.table_id),
                        seating.seats[view.seat].auth,
                        name="GetTable",
                        retry_seconds=play.retry_seconds,
                    )
                ).table
                if table.state in ENDED_TABLE:
                    return True
            view = None
            await asyncio.sleep(play.poll_seconds)
            continue
        if view.turn != view.seat:
            next_seat = view.turn
            if view.turn not in seating.seats:  # the table's bot moves: look again soon
                await asyncio.sleep(play.poll_seconds)
            view = None
            continue
        seat = view.seat
        answered = await _act(client, seating, seat, view, play, pacer, figures, stop)
        if answered is None:
            if stop.is_set():
                break
            view = None
            continue
        moves += 1
        if on_move is not None:
            on_move(seating, seat)
        if play.max_moves is not None and moves >= play.max_moves:
            return False
        view = answered
        if play.until is not None and play.until(view):
            return False
        if view.phase not in ACTIVE or view.turn != seat:
            next_seat = view.turn
            view = None
    return False


async def follow(
    client: StackClient,
    seating: Seating,
    play: Play,
    stop: asyncio.Event | None = None,
) -> bool:
    """Play our seats at ``seating``'s table as apps would, until its match ends (True) or
    ``stop`` is set (False): each seat over its own TableService.Play stream (``play.over_play``:
    a native app), or following its WatchTable stream (``changes``) and calling Act (a
    browser); either way the events of a change come with the seat's view, so no GetSeatView.
    On its turn a seat decides from that view (``play.decide``) and moves, timed from sending
    the move to its outcome; at most ``play.pace`` moves a second for the table."""
    stop = stop or asyncio.Event()
    pacer = Pacer(play.pace)
    one_seat = _play_seat if play.over_play else _follow_seat
    seats = [
        asyncio.create_task(one_seat(client, seating, seat, play, pacer, stop))
        for seat in seating.seats
    ]
    try:
        return any(await asyncio.gather(*seats))
    finally:
        for task in seats:
            task.cancel()


async def _follow_seat(
    client: StackClient,
    seating: Seating,
    seat: int,
    play: Play,
    pacer: Pacer,
    stop: asyncio.Event,
) -> bool:
    guest = seating.seats[seat]
    figures = client.figures
    stopped = asyncio.create_task(stop.wait())
    delay = 0.05
    try:
        while not stop.is_set():
            call = client.table.WatchTable(
                table_pb2.WatchTableRequest(
                    table_id=seating.table_id, seat=seat, start_with_view=True, changes=True
                ),
                metadata=await guest.auth(),
            )
            view: common_pb2.SeatView | None = None
            try:
                while True:
                    item = await _read_unless(call, stopped)
                    if item is None:
                        return False
                    if item is grpc.aio.EOF:
                        return True  # the match's (or the table's) last event was sent
                    delay = 0.05
                    view = _newest(view, item)
                    while (
                        view is not None
                        and view.phase in ACTIVE
                        and view.turn == seat
                        and not stop.is_set()
                    ):
                        view = await _act(client, seating, seat, view, play, pacer, figures, stop)
            except grpc.aio.AioRpcError as error:
                figures.stream_ended("WatchTable", error)
                if error.code() not in RETRYABLE:
                    raise
            finally:
                call.cancel()
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)
        return False
    finally:
        stopped.cancel()


async def _play_seat(
    client: StackClient,
    seating: Seating,
    seat: int,
    play: Play,
    pacer: Pacer,
    stop: asyncio.Event,
) -> bool:
    guest = seating.seats[seat]
    figures = client.figures
    stopped = asyncio.create_task(stop.wait())
    delay = 0.05
    try:
        while not stop.is_set():
            call = client.table.Play(metadata=await guest.auth())
            view: common_pb2.SeatView | None = None
            sent: dict[str, float] = {}
            try:
                await call.write(
                    table_pb2.PlayRequest(
                        open=table_pb2.WatchTableRequest(
                            table_id=seating.table_id, seat=seat, start_with_view=True
                        )
                    )
                )
                while True:
                    item = await _read_unless(call, stopped)
                    if item is None:
                        return False
                    if item is grpc.aio.EOF:
                        return True  # the match's (or the table's) last event was sent
                    delay = 0.05
                    if item.HasField("acted"):
                        began = sent.pop(item.acted.request_id, None)
                        refused = Rejection.of_status(item.acted.status)
                        wait = (
                            refused.retry_after
                            if refused.code == grpc.StatusCode.RESOURCE_EXHAUSTED
                            else None
                        )
                        if wait is not None:  # a rate limit: waited out, then moved again
                            figures.throttled["Play.act"] += 1
                            await asyncio.sleep(wait)
                        elif item.acted.status.code:
                            figures.failed_status("Play.act", item.acted.status)
                        elif began is not None and figures.recording:
                            answered = time.perf_counter()
                            figures.latencies.append((answered - began) * 1000)
                            figures.answered.append(answered)
                            figures.moves += 1
                    view = _newest(view, item)
                    if (
                        not sent
                        and view is not None
                        and view.phase in ACTIVE
                        and view.turn == seat
                        and not stop.is_set()
                    ):
                        await pacer.wait()
                        request_id = uuid.uuid4().hex
                        act = table_pb2.ActRequest(
                            request_id=request_id,
                            actions=await play.decide(view),
                            expected_state_version=view.state_version,
                        )
                        sent[request_id] = time.perf_counter()
                        try:
                            await call.write(table_pb2.PlayRequest(act=act))
                        except asyncio.InvalidStateError:
                            break  # the stream has ended: its status comes with the next read
            except grpc.aio.AioRpcError as error:
                figures.stream_ended("Play", error)
                if error.code() not in RETRYABLE:
                    raise
            finally:
                call.cancel()
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)
        return False
    finally:
        stopped.cancel()


async def _act(
    client: StackClient,
    seating: Seating,
    seat: int,
    view: common_pb2.SeatView,
    play: Play,
    pacer: Pacer,
    figures: Figures,
    stop: asyncio.Event | None = None,
) -> common_pb2.SeatView | None:
    """One move of ``seat`` from ``view`` by an Act call, at the pace, timed from the call to
    its answer: its view after the move, or None when ``stop`` was set while it waited or the
    move was refused (stale or not allowed: the news is on its way; after any other failure, a
    short pause first)."""
    await pacer.wait()
    if stop is not None and stop.is_set():
        return None
    actions = await play.decide(view)
    request = table_pb2.ActRequest(
        request_id=uuid.uuid4().hex,
        table_id=seating.table_id,
        seat=seat,
        actions=actions,
        expected_state_version=view.state_version,
    )
    began = time.perf_counter()
    try:
        answer = await client.rpc(
            lambda c: c.table.Act,
            request,
            seating.seats[seat].auth,
            name="Act",
            retry_seconds=play.retry_seconds,
        )
    except grpc.aio.AioRpcError as error:
        if error.code() not in GAME_ANSWERS:
            await asyncio.sleep(play.poll_seconds)
        return None
    if figures.recording:
        answered = time.perf_counter()
        figures.latencies.append((answered - began) * 1000)
        figures.answered.append(answered)
        figures.moves += 1
    result: common_pb2.SeatView = answer.view
    return result


# --------------------------------------------------------------------------------------------
# What was finished, and what scoring has


@dataclass
class TableLog:
    """A table's whole event log as WatchTable gives it, and what it says."""

    table: common_pb2.Table
    sequences: list[int]
    #: Hand ids of the HAND_ENDED events, in order, and when each was written (epoch seconds).
    ended_hands: list[str]
    ended_times: list[float]
    match_ended: bool
    #: The events themselves, when asked for.
    events: list[common_pb2.Event] = field(default_factory=list)

    @property
    def gap_free(self) -> bool:
        return self.sequences == list(range(1, len(self.sequences) + 1))


async def table_log(
    client: StackClient, table_id: str, *, timeout: float = 60.0, keep: bool = False
) -> TableLog:
    """Every event of the table so far (service token: everyone's copy), from sequence 1;
    ``keep``: with the events themselves."""
    table = (
        await client.rpc(
            lambda c: c.table.GetTable,
            table_pb2.GetTableRequest(table_id=table_id),
            client.service_auth,
            name="GetTable",
        )
    ).table
    sequences: list[int] = []
    ended: list[str] = []
    times: list[float] = []
    kept: list[common_pb2.Event] = []
    match_ended = False
    if table.last_sequence:
        call = client.table.WatchTable(
            table_pb2.WatchTableRequest(table_id=table_id, after_sequence=0),
            metadata=client.service_metadata,
            timeout=timeout,
        )
        try:
            async for item in call:
                if not item.HasField("event"):
                    continue
                event = item.event
                sequences.append(event.sequence)
                if keep:
                    kept.append(event)
                if event.kind == common_pb2.EVENT_KIND_HAND_ENDED:
                    ended.append(event.hand_id)
                    times.append(event.time.ToMicroseconds() / 1e6)
                elif event.kind == common_pb2.EVENT_KIND_MATCH_ENDED:
                    match_ended = True
                if event.sequence >= table.last_sequence:
                    break
        finally:
            call.cancel()
    return TableLog(table, sequences, ended, times, match_ended, kept)


async def scored_hands(client: StackClient, match_id: str) -> tuple[list[str], bool]:
    """The hand ids on a match's score sheet (every page), and whether the match is recorded
    as ended; ([], False) while scoring has nothing of it."""
    hands: list[str] = []
    token = ""
    ended = False
    while True:
        try:
            answer = await client.rpc(
                lambda c: c.scoring.GetScoreSheet,
                scoring_pb2.GetScoreSheetRequest(
                    match_id=match_id, page_size=500, page_token=token
                ),
                client.service_auth,
                name="GetScoreSheet",
                expected=frozenset({grpc.StatusCode.NOT_FOUND}),  # not recorded yet
            )
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return [], False
            raise
        hands.extend(row.hand_id for row in answer.sheet.rows)
        ended = answer.sheet.ended
        token = answer.next_page_token
        if not token:
            return hands, ended


@dataclass
class Audit:
    logs: dict[str, TableLog]
    #: Hands ended at a table but not on their score sheet exactly once (or there but never
    #: ended at a table), by hand id: how many times scoring has each.
    lost: dict[str, int]
    #: Tables whose log has a gap or a repeat.
    gaps: list[str]
    #: Matches ended at a table that scoring does not have as ended.
    unrecorded_matches: list[str]

    @property
    def hands(self) -> int:
        return sum(len(log.ended_hands) for log in self.logs.values())

    @property
    def matches(self) -> int:
        return sum(1 for log in self.logs.values() if log.match_ended)

    @property
    def clean(self) -> bool:
        return not (self.lost or self.gaps or self.unrecorded_matches)


async def fund(client: StackClient, guests: Sequence[Guest], chips: int) -> None:
    """Grant each of ``guests`` ``chips`` (AdjustChips, an operator's call), so that a bench
    at a stake measures play, not players running out of chips."""
    for guest in guests:
        await client.rpc(
            lambda c: c.lobby.AdjustChips,
            lobby_pb2.AdjustChipsRequest(
                request_id=uuid.uuid4().hex,
                player_id=guest.player_id,
                amount=chips,
                reason="bench: chips to play with",
            ),
            client.service_auth,
            name="AdjustChips",
        )


async def chips_audit(lobby_database_url: str) -> dict[str, Any]:
    """``okey101 audit chips``' figures on the lobby's database: ``chips_balanced`` and the
    differences, with the totals by kind of account."""
    from okey101.lobby.chips.audit import audit_chips, snapshot
    from okey101.platform.database import Database

    database = Database(lobby_database_url)
    try:
        async with snapshot(database) as session:
            found = await audit_chips(session)
    finally:
        await database.dispose()
    figures = found.as_json()
    return {
        "chips_balanced": figures["chips_balanced"],
        "chips_differences": figures["differences"][:20],
        "chips_totals": figures["totals"],
    }


def lobby_database_url(var_dir: Path, databases: Mapping[str, str] | None) -> str:
    """Where a stack started by the benches keeps the lobby's data."""
    from okey101.platform.database import normalize_url, sqlite_url

    if databases is not None:
        return normalize_url(databases["lobby"])
    return sqlite_url(var_dir / "lobby.db")


async def audit(
    client: StackClient,
    table_ids: Sequence[str],
    *,
    drain_seconds: float = 60.0,
    concurrency: int = 8,
) -> Audit:
    """Read every table's log, then the score sheets until each ended hand is there exactly
    once (the outbox has drained) or ``drain_seconds`` have passed."""
    slots = asyncio.Semaphore(concurrency)

    async def read(table_id: str) -> TableLog:
        async with slots:
            return await table_log(client, table_id)

    logs = dict(zip(table_ids, await asyncio.gather(*(read(t) for t in table_ids)), strict=True))
    gaps = [
        table_id
        for table_id, log in logs.items()
        if not log.gap_free or len(log.sequences) < log.table.last_sequence
    ]
    deadline = time.monotonic() + drain_seconds
    while True:
        lost: dict[str, int] = {}
        unrecorded: list[str] = []

        async def check(log: TableLog, lost: dict[str, int], unrecorded: list[str]) -> None:
            async with slots:
                hands, ended = await scored_hands(client, log.table.match_id)
            counts = collections.Counter(hands)
            if set(counts) - set(log.ended_hands):
                # Scoring has a hand this log did not: the table played on after its log was
                # read (its bots take a seat whose player has stopped). Read it again.
                async with slots:
                    log = logs[log.table.table_id] = await table_log(client, log.table.table_id)
            for hand_id in set(log.ended_hands) | set(counts):
                if counts[hand_id] != 1 or hand_id not in log.ended_hands:
                    lost[hand_id] = counts[hand_id]
            if log.match_ended and not ended:
                unrecorded.append(log.table.match_id)

        await asyncio.gather(*(check(log, lost, unrecorded) for log in logs.values()))
        if (not lost and not unrecorded) or time.monotonic() > deadline:
            return Audit(logs, lost, gaps, unrecorded)
        await asyncio.sleep(0.5)


# --------------------------------------------------------------------------------------------
# Processes


def peak_rss_mb(pid: int) -> float | None:
    """A process's peak resident memory (VmHWM) in MB, from /proc; None where unreadable."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def cpu_stall_us() -> int | None:
    """Microseconds some task has waited for a processor since boot (Linux pressure stall
    information, /proc/pressure/cpu); None where there is none."""
    try:
        with open("/proc/pressure/cpu", encoding="ascii") as pressure:
            for line in pressure:
                if line.startswith("some"):
                    return int(line.rsplit("total=", 1)[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def cpu_times() -> tuple[int, int] | None:
    """All processors' time since boot and the part of it a hypervisor gave to other machines
    (steal), in clock ticks (/proc/stat); None where there is none."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(value) for value in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return (sum(fields[:8]), fields[7]) if len(fields) >= 8 else None


def load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None
