"""Running the table service: the gRPC server and its background workers.

- **Timers.** Any pod claims due timer rows (``TableStore.claim_due``; ``SKIP LOCKED`` on
  PostgreSQL) and plays one step for each (``TableServicer.play_due``): a bot's step, an away
  player's, a timed-out turn, the next deal. A step's commit sets the table's next timer, so a
  bot's turn is a few claims in a row. A claim is a lease: if the pod dies, another takes the
  timer over once the lease runs out. Every pod also marks the deployment alive; after an outage
  (no pod alive), the gap is added to every turn deadline.
- **Outbox.** Finished hands and matches are sent to scoring until acknowledged, with back-off.
- **Watchdog.** Live tables, outbox backlog and stuck tables (timers overdue by more than
  ``stuck_seconds``) as gauges.
- **Listener.** On PostgreSQL, ``LISTEN`` for other pods' commits (``feed``).

``start_table(settings)`` runs all of it in-process (tests, benchmarks); ``main`` is
``okey101 serve table``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Final

import grpc
import grpc.aio
import structlog
from okey.v1 import scoring_pb2, scoring_pb2_grpc, table_pb2_grpc
from sqlalchemy.engine import make_url

from okey101.engine.errors import OkeyError
from okey101.platform.auth import JwksVerifier
from okey101.platform.clients import Peers
from okey101.platform.config import ConfigError, Settings
from okey101.platform.database import Database
from okey101.platform.logs import configure_logging
from okey101.platform.server import ServerHandle, serve
from okey101.table import metrics
from okey101.table.feed import PostgresListener, TableFeed
from okey101.table.service import ACCESS, NAME, SERVICE_NAME, Clock, TableOptions, TableServicer
from okey101.table.store import TableStore

_log = structlog.get_logger("okey101.table")

#: Timer steps one pod runs at once.
STEP_CONCURRENCY: Final = 32
_ALIVE_EVERY_SECONDS: Final = 1.0
_OUTBOX_BATCH: Final = 20


class Workers:
    """The table service's background loops (module docstring)."""

    def __init__(self, servicer: TableServicer, *, pod: str | None = None) -> None:
        self.servicer = servicer
        self.store = servicer.store
        self.options = servicer.options
        self.clock: Clock = servicer.clock
        self.pod = pod or f"{os.uname().nodename}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._steps: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(STEP_CONCURRENCY)
        self._scoring = scoring_pb2_grpc.ScoringServiceStub(servicer.peers.channel("scoring"))
        self._listener: PostgresListener | None = None
        servicer.on_timer_due = self._wake.set

    def start(self) -> None:
        if self.store.postgres:
            url = make_url(self.store.database.url).set(drivername="postgresql")
            self._listener = PostgresListener(
                url.render_as_string(hide_password=False),
                self.servicer.feed,
                server_settings={"application_name": "okey101-table-listener"},
            )
            self._listener.start()
        for name, loop in (
            ("timers", self._timers),
            ("outbox", self._outbox),
            ("watchdog", self._watchdog),
        ):
            self._tasks.append(asyncio.create_task(_forever(name, loop), name=f"table-{name}"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in [*self._tasks, *self._steps]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        if self._listener is not None:
            await self._listener.stop()

    def wake(self) -> None:
        self._wake.set()

    # ----------------------------------------------------------------------------------------
    # Timers

    async def _timers(self) -> None:
        last_alive = 0.0
        starting = True
        while True:
            now_us = self.servicer.now_us()
            if time.monotonic() - last_alive >= _ALIVE_EVERY_SECONDS:
                last_alive = time.monotonic()
                gap = await self.store.mark_alive(
                    now_us, round(self.options.outage_seconds * 1e6), starting=starting
                )
                starting = False
                if gap:
                    _log.warning("no table pod was alive: turn deadlines moved on", gap_s=gap / 1e6)
            free = STEP_CONCURRENCY - len(self._steps)
            claimed: list[str] = []
            if free > 0:
                lease = round(self.options.timer_lease_seconds * 1e6)
                claimed = await self.store.claim_due(now_us, self.pod, lease, free)
            for table_id in claimed:
                task = asyncio.create_task(self._step(table_id))
                self._steps.add(task)
                task.add_done_callback(self._steps.discard)
            if claimed:
                await asyncio.sleep(0)  # let the steps start before claiming more
                continue
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.options.poll_seconds)

    async def _step(self, table_id: str) -> None:
        async with self._slots:
            try:
                await self.servicer.play_due(table_id)
            except OkeyError as error:
                if error.code == "STALE_VERSION":
                    return  # someone moved first: the table's timer is already the new one
                _log.warning("timer step failed: retrying", table_id=table_id, code=error.code)
                await self._retry_later(table_id)
            except Exception:
                _log.exception("timer step failed: retrying", table_id=table_id)
                await self._retry_later(table_id)
            finally:
                self._wake.set()

    async def _retry_later(self, table_id: str) -> None:
        with contextlib.suppress(Exception):
            await self.store.postpone_timer(table_id, self.servicer.now_us() + 1_000_000)

    # ----------------------------------------------------------------------------------------
    # Outbox

    async def _outbox(self) -> None:
        while True:
            now_us = self.servicer.now_us()
            rows = await self.store.claim_outbox(now_us, 30_000_000, _OUTBOX_BATCH)
            for row_id, kind, key, payload, attempts in rows:
                await self._deliver(row_id, kind, key, payload, attempts)
            if len(rows) < _OUTBOX_BATCH:
                await asyncio.sleep(self.options.poll_seconds)

    async def _deliver(
        self, row_id: int, kind: str, key: str, payload: bytes, attempts: int
    ) -> None:
        metadata = self.servicer.peers.metadata()
        try:
            if kind == "hand":
                await self._scoring.RecordHand(
                    scoring_pb2.RecordHandRequest.FromString(payload), metadata=metadata, timeout=10
                )
            else:
                await self._scoring.RecordMatch(
                    scoring_pb2.RecordMatchRequest.FromString(payload),
                    metadata=metadata,
                    timeout=10,
                )
        except grpc.aio.AioRpcError as error:
            # Kept and retried whatever the answer: a rejection is a bug to fix, never a score
            # to drop. Back-off: 0.5 s doubling to a minute.
            delay = min(60.0, 0.5 * 2 ** min(attempts, 8))
            level = _log.warning if error.code() == grpc.StatusCode.UNAVAILABLE else _log.error
            level("outbox delivery failed", kind=kind, key=key, code=error.code().name)
            retry = self.servicer.now_us() + round(delay * 1e6)
            await self.store.outbox_failed(row_id, retry, f"{error.code().name}: {error.details()}")
            return
        await self.store.outbox_sent(row_id, self.servicer.now_us())

    # ----------------------------------------------------------------------------------------
    # Watchdog

    async def _watchdog(self) -> None:
        while True:
            live, backlog, stuck = await self.store.figures(
                self.servicer.now_us(), round(self.options.stuck_seconds * 1e6)
            )
            metrics.TABLES_LIVE.set(live)
            metrics.OUTBOX_BACKLOG.set(backlog)
            metrics.STUCK_TABLES.set(stuck)
            if stuck:
                _log.warning("stuck tables", count=stuck)
            await asyncio.sleep(self.options.watchdog_seconds)


async def _forever(name: str, loop: Callable[[], Awaitable[None]]) -> None:
    """Run a worker loop; if it fails (the database is restarting), log and start it again."""
    while True:
        try:
            await loop()
        except asyncio.CancelledError:
            raise
        except Exception as error:
            _log.warning("worker failed: restarting", worker=name, error=str(error)[:300])
            await asyncio.sleep(1.0)


def register(server: grpc.aio.Server, servicer: TableServicer) -> list[str]:
    table_pb2_grpc.add_TableServiceServicer_to_server(servicer, server)
    return [SERVICE_NAME]


def _build(
    settings: Settings, options: TableOptions | None, clock: Clock | None
) -> tuple[Database, Peers, TableServicer]:
    database = Database.for_service(NAME, settings)
    peers = Peers(settings)
    servicer = TableServicer(
        TableStore(database),
        peers,
        options=options or TableOptions.from_environ(),
        clock=clock or time.time,
        feed=TableFeed(),
    )
    return database, peers, servicer


@contextlib.asynccontextmanager
async def start_table(
    settings: Settings,
    *,
    options: TableOptions | None = None,
    clock: Clock | None = None,
    verifier: JwksVerifier | None = None,
) -> AsyncIterator[tuple[ServerHandle, TableServicer]]:
    """The table service running in-process, with its workers: (server handle, servicer).
    Its database is migrated before it reports SERVING; everything stops on exit."""
    database, peers, servicer = _build(settings, options, clock)
    workers = Workers(servicer)
    handle: ServerHandle | None = None
    try:
        handle = await ServerHandle.start(
            NAME,
            lambda server: register(server, servicer),
            settings,
            ready=lambda: database.migrate(NAME),
            access=ACCESS,
            verifier=verifier,
        )
        workers.start()
        yield handle, servicer
    finally:
        if handle is not None:
            await handle.stop(grace=0.5)
        await workers.stop()
        await peers.close()
        await database.dispose()


async def serve_table(settings: Settings) -> None:
    """Run the table service until SIGTERM or SIGINT (``okey101 serve table``)."""
    try:
        options = TableOptions.from_environ()
    except ValueError as error:
        raise ConfigError(str(error)) from None
    database, peers, servicer = _build(settings, options, None)
    workers = Workers(servicer)

    async def ready() -> None:
        await database.migrate(NAME)
        workers.start()

    try:
        await serve(
            NAME, lambda server: register(server, servicer), settings, ready=ready, access=ACCESS
        )
    finally:
        await workers.stop()
        await peers.close()
        await database.dispose()


def main(settings: Settings) -> int:
    # First: every line the process writes, from the first, follows its log format.
    configure_logging(settings.log_format, settings.log_level)
    try:
        asyncio.run(serve_table(settings))
    except ConfigError as error:
        _log.error("cannot start", reason=str(error))
        return 1
    return 0


__all__ = ["Workers", "main", "register", "serve_table", "start_table"]
