"""``okey101 bench players``: many players' own WatchPlayer streams open on one lobby process.

The lobby alone runs as an ``okey101 serve`` process (``okey101.stack``, local mode) on a
temporary PostgreSQL database on ``OKEY_TEST_DATABASE_URL``'s server (default
``postgresql://postgres@127.0.0.1:5432/test``; dropped afterwards), or a SQLite file with
``--sqlite``. Its connections are not aged out (``OKEY_MAX_CONNECTION_AGE_SECONDS=0``) and its
access tokens last an hour, so that no stream is ended on purpose while it is measured (an app
would reconnect after its last sequence; that is not what is measured here).

``players`` guests log in (LobbyService.LoginGuest, 32 at a time), then each opens one
WatchPlayer stream (``start_with_snapshot``; at most 64 being opened at once) from this
process, ``--streams-per-channel`` streams (default ``STREAMS_PER_CHANNEL``, 100) on each gRPC
channel, a connection of its own (``channels``; 1 stands for apps that each have their own
connection, as players' phones do, unless a proxy in front of the lobby gathers their
streams). A stream counts as open when its snapshot has come.

The figures, in the last line's JSON:

- ``login_seconds`` and ``open_seconds``: logging every guest in, then opening every stream;
  ``streams_open`` (of ``players``), ``channels``, and ``open_files_limit`` (this process's
  soft limit on open files, raised to its hard limit; the lobby inherits it);
- ``rss_mb_before``: the lobby's resident memory (VmRSS) once the guests are logged in and
  before any stream opens; ``rss_mb_open``: the same with every stream open, after
  ``SETTLE_SECONDS`` of quiet; ``kb_per_stream``: the difference per stream (everything a
  stream holds: its gRPC call, its handler's task, its wake, its presence row's bookkeeping);
  ``peak_rss_mb`` (VmHWM) at the end;
- ``idle_cpu_percent``: the lobby's processor time (user and system, from ``/proc``), as a
  share of one core, over ``idle_seconds`` with every stream open and no event (each stream's
  own read every ``SAFETY_POLL_SECONDS``, the presence rows' renewal, the lobby's own loops);
  ``client_idle_cpu_percent``: this process's over the same seconds; on PostgreSQL,
  ``db_transactions_idle_per_second``: the lobby database's transactions a second then (its
  statistics, ``pg_stat_database``: each stream's own read is one);
- ``events`` events (SEAT_BACK, a kind with no push notification) for players chosen at random
  (seeded) are recorded through RecordPlayerEvents (a service token), ``BATCH`` records a call,
  one call after another, each record with a key and a table id of its own;
  ``events_delivered`` (distinct events that came on a stream), ``events_lost`` (recorded,
  never came within ``ARRIVAL_TIMEOUT_SECONDS``), ``events_duplicated`` (came more than once),
  ``sequence_gaps`` (an event whose sequence number is not the one after the stream's last);
  ``delivery_seconds`` (from the first call's start until the last event came);
  ``cpu_us_per_event``: the lobby's processor time over those seconds, less what it spends idle
  over as many seconds (``idle_cpu_percent``), divided by the events: recording one and
  delivering it to its player's stream; ``client_cpu_us_per_event``: this process's (not less
  anything); ``delivery_p50_ms``, ``delivery_p99_ms``, ``delivery_max_ms``: from the start of
  the RecordPlayerEvents call that carried an event until it came on its stream; on
  PostgreSQL, ``db_transactions_per_event``: the database's transactions over those seconds
  and ``FLUSH_SECONDS`` after (until every connection has reported), less the idle rate, an
  event (a stream's read is one), and ``db_connections_opened`` (idle, delivery, unwatched:
  connections the lobby's pool opened in each phase);
- ``cpu_us_per_event_unwatched`` and ``db_transactions_per_event_unwatched``: the same number
  of events recorded the same way for player ids that have no stream (recording alone: on
  PostgreSQL the notifications still go out and are heard, and find no stream);
  ``cpu_us_per_delivery``: the difference, what delivering an event to its stream costs beyond
  recording it;
- ``stream_failures`` (streams that ended or failed, by status code) and ``errors`` (failed
  calls of any kind; ``error_samples``);
- ``load_before``/``load_after`` (the load average) and ``cpu_stalled_percent`` (the share of
  the measured seconds some task on the machine waited for a processor: Linux's pressure stall
  information) and ``cpu_steal_percent``: whether the figures were taken on a busy machine.

Exit status 1 if a stream did not open or failed, or an event was lost, duplicated or out of
sequence, or a call failed.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import math
import os
import random
import resource
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import grpc
import grpc.aio
from okey.v1 import lobby_pb2, lobby_pb2_grpc

from okey101.bench import load_stack
from okey101.bench.load_stack import Figures, Guest, StackClient
from okey101.bench.rules_bench import cpu_seconds
from okey101.bench.solver_bench import percentile

SERVICES: Final = ("lobby",)
#: Streams a gRPC channel (one HTTP/2 connection) carries by default (the lobby sets no limit
#: of its own on a connection's concurrent streams: gRPC's server default, unlimited).
STREAMS_PER_CHANNEL: Final = 100
#: Streams being opened at once, and guests logging in at once.
OPENING: Final = 64
LOGINS: Final = 32
#: Records a RecordPlayerEvents call carries.
BATCH: Final = 100
#: Quiet before the lobby's memory is read with every stream open.
SETTLE_SECONDS: Final = 3.0
#: How long an event may take to come before it counts as lost (over the streams' own
#: reading every 15 s, ``player_stream.SAFETY_POLL_SECONDS``).
ARRIVAL_TIMEOUT_SECONDS: Final = 40.0
#: How long after a phase PostgreSQL's statistics are read: every connection reports its
#: counts when it goes idle, at the latest 10 s after its last report.
FLUSH_SECONDS: Final = 11.0
#: The kind recorded: one the table records, and not pushed (no push outbox row).
KIND: Final = lobby_pb2.PLAYER_EVENT_KIND_SEAT_BACK


def rss_mb(pid: int) -> float | None:
    """A process's resident memory now (VmRSS) in MB, from /proc; None where unreadable."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def raise_open_files_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit (the processes it starts
    inherit it); the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        wanted = 1 << 20 if hard == resource.RLIM_INFINITY else hard
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
    return soft


class Streams:
    """Every guest's WatchPlayer stream, and what came on them."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.opened = 0
        self.all_open = asyncio.Event()
        self.closing = False
        #: Arrival times (``time.perf_counter()``) of each event, by its table id.
        self.arrivals: dict[str, list[float]] = collections.defaultdict(list)
        self.sequence_gaps = 0
        self.failures: collections.Counter[str] = collections.Counter()
        self.samples: list[str] = []

    async def watch(self, stub: Any, guest: Guest, slots: asyncio.Semaphore) -> None:
        """One stream, kept open until cancelled; a stream that ends is a failure."""
        await slots.acquire()
        held = True
        call = None
        try:
            call = stub.WatchPlayer(
                lobby_pb2.WatchPlayerRequest(start_with_snapshot=True),
                metadata=await guest.auth(),
            )
            last = 0
            async for message in call:
                if message.HasField("snapshot"):
                    last = message.snapshot.as_of_sequence
                    if held:
                        slots.release()
                        held = False
                        self.opened += 1
                        if self.opened == self.count:
                            self.all_open.set()
                elif message.HasField("event"):
                    now = time.perf_counter()
                    event = message.event
                    if event.sequence != last + 1:
                        self.sequence_gaps += 1
                    last = event.sequence
                    self.arrivals[event.table_id].append(now)
            if not self.closing:
                self.failures["ENDED"] += 1
        except grpc.aio.AioRpcError as error:
            if not self.closing:
                self.failures[error.code().name] += 1
                if len(self.samples) < 5:
                    self.samples.append(f"WatchPlayer {error.code().name}: {error.details()}")
        finally:
            if held:
                slots.release()
            if call is not None:
                call.cancel()


async def _record(
    client: StackClient, targets: list[str], tag: str
) -> tuple[dict[str, float], int]:
    """Record one event for each of ``targets`` (player ids), ``BATCH`` a call, one call after
    another: when each event's call started, by its table id, and the calls made."""
    sent: dict[str, float] = {}
    calls = 0
    for start in range(0, len(targets), BATCH):
        records = []
        for index in range(start, min(start + BATCH, len(targets))):
            table_id = f"t_{tag}_{index}"
            records.append(
                lobby_pb2.PlayerEventRecord(
                    key=f"bench-players:{table_id}",
                    player_id=targets[index],
                    event=lobby_pb2.PlayerEvent(kind=KIND, table_id=table_id, seat=index % 4),
                )
            )
        request = lobby_pb2.RecordPlayerEventsRequest(request_id=uuid.uuid4().hex, records=records)
        began = time.perf_counter()
        for record in records:
            sent[record.event.table_id] = began
        await client.rpc(
            lambda c: c.lobby.RecordPlayerEvents,
            request,
            client.service_auth,
            name="RecordPlayerEvents",
            timeout=30.0,
        )
        calls += 1
    return sent, calls


@dataclass(frozen=True)
class Mark:
    """What the counters said at one moment: the lobby's processor time, this process's, the
    machine's stall and steal counters, and (PostgreSQL) the lobby database's transactions and
    connections opened so far."""

    at: float
    lobby_cpu: float | None
    client_cpu: float
    stall_us: int | None
    times: tuple[int, int] | None
    database: tuple[int, int] | None

    @staticmethod
    async def take(pid: int, stats_url: str | None) -> Mark:
        return Mark(
            at=time.perf_counter(),
            lobby_cpu=cpu_seconds(pid),
            client_cpu=time.process_time(),
            stall_us=load_stack.cpu_stall_us(),
            times=load_stack.cpu_times(),
            database=await _database_counts(stats_url),
        )

    def lobby_cpu_since(self, before: Mark) -> float | None:
        if self.lobby_cpu is None or before.lobby_cpu is None:
            return None
        return self.lobby_cpu - before.lobby_cpu

    def database_since(self, before: Mark) -> tuple[int, int] | None:
        if self.database is None or before.database is None:
            return None
        # Each reading's own connection and transaction counts once.
        return (
            self.database[0] - before.database[0] - 1,
            self.database[1] - before.database[1] - 1,
        )


async def _database_counts(url: str | None) -> tuple[int, int] | None:
    """The lobby database's transactions (committed and rolled back) and connections opened so
    far, from PostgreSQL's cumulative statistics (each connection reports its own at least
    every ``FLUSH_SECONDS``); None on SQLite."""
    if url is None:
        return None
    import asyncpg

    connection = await asyncpg.connect(load_stack.admin_url(url))
    try:
        row = await connection.fetchrow(
            "SELECT xact_commit + xact_rollback AS transactions, sessions"
            " FROM pg_stat_database WHERE datname = current_database()"
        )
    finally:
        await connection.close()
    return (int(row["transactions"]), int(row["sessions"])) if row is not None else None


def _stall_and_steal(before: Mark, after: Mark) -> tuple[float | None, float | None]:
    """``cpu_stalled_percent`` and ``cpu_steal_percent`` between two marks."""
    stalled = None
    seconds = after.at - before.at
    if before.stall_us is not None and after.stall_us is not None and seconds > 0:
        stalled = round((after.stall_us - before.stall_us) / 1e6 / seconds * 100, 1)
    stolen = None
    if before.times is not None and after.times is not None:
        total = after.times[0] - before.times[0]
        stolen = round((after.times[1] - before.times[1]) / max(total, 1) * 100, 1)
    return stalled, stolen


class Costs:
    """A phase's costs beyond idling: the lobby's processor time and its database's
    transactions between two marks, less what the idle streams cost over the same time."""

    def __init__(self, idle_from: Mark, idle_to: Mark) -> None:
        seconds = idle_to.at - idle_from.at
        used = idle_to.lobby_cpu_since(idle_from)
        self.idle_cpu = None if used is None else used / seconds
        counted = idle_to.database_since(idle_from)
        self.idle_transactions = None if counted is None else counted[0] / seconds

    def cpu_us_each(self, before: Mark, after: Mark, count: int) -> int | None:
        used = after.lobby_cpu_since(before)
        if used is None or self.idle_cpu is None:
            return None
        return round((used - self.idle_cpu * (after.at - before.at)) * 1e6 / count)

    def transactions_each(self, before: Mark, after: Mark, count: int) -> float | None:
        counted = after.database_since(before)
        if counted is None or self.idle_transactions is None:
            return None
        return round((counted[0] - self.idle_transactions * (after.at - before.at)) / count, 2)


async def _measure(
    stack: Any,
    var_dir: Path,
    players: int,
    events: int,
    idle_seconds: float,
    per_channel: int,
    seed: int,
    stats_url: str | None,
) -> dict[str, Any]:
    figures = Figures()
    address = stack.address("lobby")
    # Only the lobby is called; StackClient wants every service's address.
    client = StackClient(
        dict.fromkeys(("lobby", "table", "scoring", "bot"), address), var_dir, figures
    )
    pid = stack.services["lobby"].process.pid
    channel_count = math.ceil(players / per_channel)
    # A channel of its own connection each (channels with the same target and settings would
    # share one through gRPC's global subchannel pool).
    options = (*load_stack.CLIENT_OPTIONS, ("grpc.use_local_subchannel_pool", 1))
    channels = [grpc.aio.insecure_channel(address, options=options) for _ in range(channel_count)]
    streams = Streams(players)
    tasks: list[asyncio.Task[None]] = []
    # PostgreSQL's statistics are read once every connection has reported its own.
    flush = FLUSH_SECONDS if stats_url is not None else 1.0
    try:
        began = time.monotonic()
        guests = await load_stack.login_guests(client, players, concurrency=LOGINS)
        login_seconds = round(time.monotonic() - began, 1)
        await asyncio.sleep(SETTLE_SECONDS)
        rss_before = rss_mb(pid)

        began = time.monotonic()
        slots = asyncio.Semaphore(OPENING)
        stubs = [lobby_pb2_grpc.LobbyServiceStub(channel) for channel in channels]
        for index, guest in enumerate(guests):
            stub = stubs[index // per_channel]
            tasks.append(asyncio.create_task(streams.watch(stub, guest, slots)))
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(120.0 + players / 20):
                await streams.all_open.wait()
        open_seconds = round(time.monotonic() - began, 1)
        await asyncio.sleep(SETTLE_SECONDS)
        rss_open = rss_mb(pid)

        # Idle: every stream open, no event.
        idle_from = await Mark.take(pid, stats_url)
        await asyncio.sleep(idle_seconds)
        idle_to = await Mark.take(pid, stats_url)
        costs = Costs(idle_from, idle_to)
        idle = idle_to.at - idle_from.at

        # Events to the players' streams.
        chooser = random.Random(seed)
        targets = [chooser.choice(guests).player_id for _ in range(events)]
        sent, calls = await _record(client, targets, uuid.uuid4().hex[:8])
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(ARRIVAL_TIMEOUT_SECONDS):
                while len(streams.arrivals) < len(sent):
                    await asyncio.sleep(0.005)
        arrived = await Mark.take(pid, None)
        last_arrival = max((times[0] for times in streams.arrivals.values()), default=arrived.at)
        delivery_seconds = last_arrival - idle_to.at
        await asyncio.sleep(flush)
        delivered_mark = await Mark.take(pid, stats_url)
        latencies = [
            (streams.arrivals[key][0] - start) * 1000
            for key, start in sent.items()
            if key in streams.arrivals
        ]
        duplicated = sum(len(times) - 1 for times in streams.arrivals.values())
        strays = sum(1 for key in streams.arrivals if key not in sent)

        # The same events for players with no stream: recording alone.
        unwatched = [f"p_{uuid.uuid4().hex}" for _ in range(events)]
        await _record(client, unwatched, uuid.uuid4().hex[:8])
        recorded = await Mark.take(pid, None)
        await asyncio.sleep(flush)
        unwatched_mark = await Mark.take(pid, stats_url)
        stalled, stolen = _stall_and_steal(idle_from, unwatched_mark)
        peak = load_stack.peak_rss_mb(pid)
    finally:
        streams.closing = True
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for channel in channels:
            await channel.close()
        await client.close()
    per_event = costs.cpu_us_each(idle_to, arrived, events)
    per_unwatched = costs.cpu_us_each(delivered_mark, recorded, events)
    kb_per_stream = None
    if rss_before is not None and rss_open is not None and streams.opened:
        kb_per_stream = round((rss_open - rss_before) * 1024 / streams.opened, 1)
    idle_used = idle_to.lobby_cpu_since(idle_from)
    connections = {
        name: None if counted is None else counted[1]
        for name, counted in (
            ("idle", idle_to.database_since(idle_from)),
            ("delivery", delivered_mark.database_since(idle_to)),
            ("unwatched", unwatched_mark.database_since(delivered_mark)),
        )
    }
    return {
        "players": players,
        "streams_open": streams.opened,
        "channels": channel_count,
        "streams_per_channel": per_channel,
        "login_seconds": login_seconds,
        "open_seconds": open_seconds,
        "rss_mb_before": rss_before,
        "rss_mb_open": rss_open,
        "kb_per_stream": kb_per_stream,
        "peak_rss_mb": peak,
        "idle_seconds": round(idle, 1),
        "idle_cpu_percent": None if idle_used is None else round(idle_used / idle * 100, 1),
        "client_idle_cpu_percent": round(
            (idle_to.client_cpu - idle_from.client_cpu) / idle * 100, 1
        ),
        "db_transactions_idle_per_second": (
            None if costs.idle_transactions is None else round(costs.idle_transactions, 1)
        ),
        "events": events,
        "record_calls": calls,
        "events_delivered": len(latencies),
        "events_lost": events - len(latencies),
        "events_duplicated": duplicated,
        "events_stray": strays,
        "sequence_gaps": streams.sequence_gaps,
        "delivery_seconds": round(delivery_seconds, 2),
        "cpu_us_per_event": per_event,
        "cpu_us_per_event_unwatched": per_unwatched,
        "cpu_us_per_delivery": (
            None if per_event is None or per_unwatched is None else per_event - per_unwatched
        ),
        "db_transactions_per_event": costs.transactions_each(idle_to, delivered_mark, events),
        "db_transactions_per_event_unwatched": costs.transactions_each(
            delivered_mark, unwatched_mark, events
        ),
        "db_connections_opened": connections,
        "client_cpu_us_per_event": round((arrived.client_cpu - idle_to.client_cpu) * 1e6 / events),
        "delivery_p50_ms": round(percentile(latencies, 50), 1) if latencies else None,
        "delivery_p99_ms": round(percentile(latencies, 99), 1) if latencies else None,
        "delivery_max_ms": round(max(latencies), 1) if latencies else None,
        "stream_failures": dict(streams.failures),
        "errors": figures.errors,
        "error_samples": [*streams.samples, *(" ".join(s) for s in figures.samples[:5])],
        "cpu_stalled_percent": stalled,
        "cpu_steal_percent": stolen,
    }


def run(
    players: int,
    events: int,
    idle_seconds: float = 10.0,
    *,
    per_channel: int = STREAMS_PER_CHANNEL,
    sqlite: bool = False,
    database_url: str | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Start the lobby, open the streams, measure, stop; the figures (module docstring)."""
    from okey101.stack import local_stack

    limit = raise_open_files_limit()
    load_before = load_stack.load_average()
    base = (
        database_url or os.environ.get(load_stack.DATABASE_ENV) or load_stack.DEFAULT_DATABASE_URL
    )
    with contextlib.ExitStack() as cleanup:
        var_dir = Path(
            cleanup.enter_context(tempfile.TemporaryDirectory(prefix="okey101-players-"))
        )
        databases = None
        if not sqlite:
            databases = cleanup.enter_context(
                load_stack.temporary_databases(base, "okey_players", services=SERVICES)
            )
        env = load_stack.stack_environment(databases)
        env["OKEY_MAX_CONNECTION_AGE_SECONDS"] = "0"
        env["OKEY_ACCESS_TOKEN_SECONDS"] = "3600"
        stack = cleanup.enter_context(local_stack(var_dir, env=env, services=SERVICES))
        figures = asyncio.run(
            _measure(
                stack,
                var_dir,
                players,
                events,
                idle_seconds,
                per_channel,
                seed,
                None if databases is None else databases["lobby"],
            )
        )
    figures.update(
        database="sqlite" if sqlite else "postgresql",
        open_files_limit=limit,
        load_before=load_before,
        load_after=load_stack.load_average(),
    )
    return figures


def failed(figures: dict[str, Any]) -> bool:
    """Whether the run found a fault (the exit status's reasons, module docstring)."""
    return bool(
        figures["streams_open"] < figures["players"]
        or figures["stream_failures"]
        or figures["events_lost"]
        or figures["events_duplicated"]
        or figures["events_stray"]
        or figures["sequence_gaps"]
        or figures["errors"]
    )


def main(
    players: int,
    events: int,
    idle_seconds: float,
    sqlite: bool,
    database_url: str | None,
    as_json: bool,
    *,
    per_channel: int = STREAMS_PER_CHANNEL,
) -> int:
    figures = run(
        players,
        events,
        idle_seconds,
        per_channel=per_channel,
        sqlite=sqlite,
        database_url=database_url,
    )
    opened = f"{figures['streams_open']}/{players} streams open"
    if figures["streams_open"] < players:
        opened += (
            f" (NOT ALL: stream failures {figures['stream_failures']}, open files limit "
            f"{figures['open_files_limit']}, {figures['error_samples'][:2]})"
        )
    print(
        f"players ({figures['database']}): {opened} on {figures['channels']} channels; "
        f"lobby RSS {figures['rss_mb_before']} -> {figures['rss_mb_open']} MB "
        f"({figures['kb_per_stream']} KB a stream), idle {figures['idle_cpu_percent']}% of a core; "
        f"{figures['events']} events: {figures['cpu_us_per_event']} us of lobby CPU each "
        f"({figures['cpu_us_per_event_unwatched']} unwatched), delivery p50 "
        f"{figures['delivery_p50_ms']} ms p99 {figures['delivery_p99_ms']} ms, "
        f"{figures['events_lost']} lost, {figures['events_duplicated']} duplicated; "
        f"load {figures['load_before']} -> {figures['load_after']}"
    )
    if as_json:
        print(json.dumps(figures, sort_keys=True))
    return 1 if failed(figures) else 0
