"""Running the table service: the gRPC server, its live tables' timers, and its workers.

- **Timers.** The pod that writes a table's timer holds it and runs it from memory when it is
  due (``timers.HeldTimers``: a bot's step at once, a turn's deadline, the next deal), one step
  at a time per table (``autoplay``). A timer whose holder let it lapse (the pod died, or its
  step kept failing) is claimed by any pod (``TableStore.claim_due``; ``SKIP LOCKED`` on
  PostgreSQL) and run there. Every pod also marks the deployment alive; after an outage (no pod
  alive), the gap is added to every turn deadline.
- **Outbox.** Finished hands and matches are sent to scoring, players' events and a staked
  table's chips records to the lobby (a loop for each; the lobby's in batches), until
  acknowledged, with back-off.
- **Watchdog.** Live tables, outbox backlog and stuck tables (timers overdue by more than
  ``stuck_seconds``) as gauges.
- **Listener.** On PostgreSQL, ``LISTEN`` for other pods' writes (``platform.listener``).

``start_table(settings)`` runs all of it in-process (tests, benchmarks); ``serve_table`` is
``okey101 serve table``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Final

import grpc
import grpc.aio
import structlog
from okey.v1 import lobby_pb2, lobby_pb2_grpc, scoring_pb2, scoring_pb2_grpc
from sqlalchemy.engine import make_url

from okey101.engine.errors import OkeyError
from okey101.platform.auth import JwksVerifier
from okey101.platform.config import ConfigError, Settings
from okey101.platform.database import Database
from okey101.platform.listener import PostgresListener
from okey101.platform.peer_channels import PeerChannels
from okey101.platform.revocation_follower import lobby_source
from okey101.platform.server import ServerHandle, serve
from okey101.platform.waiting import wait_set
from okey101.table import chips, metrics, player_events
from okey101.table.autoplay import Autoplay
from okey101.table.core import Clock, TableCore
from okey101.table.journal import NOTIFY_CHANNEL
from okey101.table.options import TableOptions, us
from okey101.table.service import ACCESS, NAME, TableServicer, register
from okey101.table.timers import HeldTimers

_log = structlog.get_logger("okey101.table")

#: Timer steps one pod runs at once.
STEP_CONCURRENCY: Final = 64
_ALIVE_EVERY_SECONDS: Final = 1.0
_OUTBOX_BATCH: Final = 20
#: Players' events sent in one RecordPlayerEvents call at most (the call's own limit).
_PLAYER_EVENTS_BATCH: Final = 100
#: How long the players' loop, woken by a write that owes them events, waits for more before
#: it claims them: a busy table process sends them in a few calls a second rather than one
#: (and two transactions) a move, and a player learns of a turn a tenth of a second later.
_PLAYER_EVENTS_LINGER_SECONDS: Final = 0.1
#: A staked table's chips records sent in one RecordTableChips call at most (its own limit).
_CHIPS_BATCH: Final = 100
#: The outbox rows owed to scoring (the players' streams' are ``player_events.KIND``, the
#: lobby's ledger's ``chips.KIND``).
_SCORING_KINDS: Final = ("hand", "match")
#: The loops whose rows go to the lobby in one call per claim (``Workers._deliver_together``).
_TO_THE_LOBBY: Final = frozenset({"players", "chips"})
#: A claimed outbox row: (id, kind, key, payload, attempts before this one).
OutboxRow = tuple[int, str, str, bytes, int]
#: How long an outbox row claimed for sending waits before another try (scoring is idempotent:
#: a row sent twice is recorded once).
_OUTBOX_LEASE_SECONDS: Final = 10.0
#: A step that failed is tried again this much later.
_RETRY_SECONDS: Final = 1.0


class Workers:
    """The table service's timers and background loops (module docstring)."""

    def __init__(self, servicer: TableServicer) -> None:
        self.servicer = servicer
        self.core: TableCore = servicer.core
        self.autoplay: Autoplay = servicer.autoplay
        self.store = servicer.store
        self.options = servicer.options
        self.pod = self.core.pod
        self._tasks: list[asyncio.Task[None]] = []
        self._steps: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(STEP_CONCURRENCY)
        peers = servicer.autoplay.peers
        self._scoring = scoring_pb2_grpc.ScoringServiceStub(peers.channel("scoring"))
        self._lobby = lobby_pb2_grpc.LobbyServiceStub(peers.channel("lobby"))
        self._listener: PostgresListener | None = None
        self._running = False
        self.held = HeldTimers(
            self.pod, self.core.now_us, self._run_held, poll_seconds=self.options.poll_seconds
        )
        self.core.on_timer = self.held.hold
        #: Set when a write owes scoring (players' streams, the lobby's ledger) something: sent
        #: at once.
        self._owed = {
            "scoring": asyncio.Event(),
            "players": asyncio.Event(),
            "chips": asyncio.Event(),
        }
        self.core.on_outbox = self._owe
        #: Outbox rows this pod has claimed and is sending (given back if it stops).
        self._sending: set[int] = set()
        #: The lobby's loops' (players', chips') failed calls in a row (their back-off).
        self._lobby_failures = {"players": 0, "chips": 0}

    def start(self) -> None:
        self._running = True
        if self.store.postgres:
            url = make_url(self.store.database.url).set(drivername="postgresql")
            tables = self.core.tables
            self._listener = PostgresListener(
                url.render_as_string(hide_password=False),
                NOTIFY_CHANNEL,
                tables.heard,
                tables.stale_all,
                server_settings={"application_name": "okey101-table-listener"},
            )
            self._listener.start()
        for name, loop in (
            ("held-timers", self.held.run),
            ("timers", self._timers),
            ("outbox", lambda: self._outbox("scoring", _SCORING_KINDS, _OUTBOX_BATCH)),
            (
                "player-outbox",
                lambda: self._outbox(
                    "players",
                    (player_events.KIND,),
                    _PLAYER_EVENTS_BATCH,
                    linger=_PLAYER_EVENTS_LINGER_SECONDS,
                ),
            ),
            ("chips-outbox", lambda: self._outbox("chips", (chips.KIND,), _CHIPS_BATCH)),
            ("watchdog", self._watchdog),
        ):
            self._tasks.append(asyncio.create_task(_forever(name, loop), name=f"table-{name}"))

    async def stop(self) -> None:
        self._running = False
        self.held.clear()
        for task in self._tasks:
            task.cancel()
        for task in [*self._tasks, *self._steps]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        if self._sending:  # claimed, not sent: due again now, for whichever pod is up
            with contextlib.suppress(Exception):
                await self.store.outbox_failed_all(
                    sorted(self._sending), self.core.now_us(), "stopped before it was sent"
                )
        if self._listener is not None:
            await self._listener.stop()

    # ----------------------------------------------------------------------------------------
    # Timers held in memory

    def _run_held(self, table_id: str) -> None:
        self._spawn(table_id, held=True)

    def _spawn(self, table_id: str, *, held: bool) -> None:
        task = asyncio.create_task(self._step(table_id, held=held))
        self._steps.add(task)
        task.add_done_callback(self._steps.discard)

    async def _step(self, table_id: str, *, held: bool) -> None:
        """One due step (``autoplay``): ``held``, a timer this pod holds (skipped if another
        pod has written the table since); else one claimed from the database. Whatever the
        step comes to, the table's timer, if this pod holds it, is held again afterwards."""
        async with self._slots:
            try:
                if held:
                    live = await self.core.tables.get(table_id)
                    if not self.held.holds(live):
                        return  # the table moved on: its timer is someone else's, or none
                await self.autoplay.play_due(table_id)
            except OkeyError as error:
                if error.code in ("STALE_VERSION", "TABLE_CONTENDED"):
                    return  # someone moved first: the table's timer is already the new one
                _log.warning("timer step failed: retrying", table_id=table_id, code=error.code)
                await self._retry_later(table_id, held=held)
            except Exception:
                _log.exception("timer step failed: retrying", table_id=table_id)
                await self._retry_later(table_id, held=held)
            finally:
                await self._hold_again(table_id)

    async def _hold_again(self, table_id: str) -> None:
        """Hold the table's timer again if it is this pod's and nothing holds it (a step that
        found the table moved on leaves the table's new timer unheld here)."""
        kept = self.core.tables.cached(table_id)
        if kept is None or kept.holds_timer or not self._running:
            return
        with contextlib.suppress(Exception):  # the next call reloads it
            await self.core.tables.fresh(kept)
        if not kept.stale:
            self.held.hold(kept)

    async def _retry_later(self, table_id: str, *, held: bool) -> None:
        """A step that failed: held here again a little later if it was this pod's, else
        given back to every pod (due again then)."""
        retry_us = self.core.now_us() + us(_RETRY_SECONDS)
        if held and self._running:
            live = self.core.tables.cached(table_id)
            if live is not None and self.held.retry(live, retry_us):
                return
        with contextlib.suppress(Exception):
            await self.store.postpone_timer(table_id, retry_us)

    # ----------------------------------------------------------------------------------------
    # Timers nobody holds

    async def _timers(self) -> None:
        last_alive = 0.0
        starting = True
        while True:
            now_us = self.core.now_us()
            if time.monotonic() - last_alive >= _ALIVE_EVERY_SECONDS:
                last_alive = time.monotonic()
                gap = await self.store.mark_alive(
                    now_us, us(self.options.outage_seconds), starting=starting
                )
                starting = False
                if gap:
                    _log.warning("no table pod was alive: turn deadlines moved on", gap_s=gap / 1e6)
            free = STEP_CONCURRENCY - len(self._steps)
            claimed: list[str] = []
            if free > 0:
                lease = us(self.options.timer_lease_seconds)
                claimed = await self.store.claim_due(now_us, self.pod, lease, free)
            for table_id in claimed:
                self._spawn(table_id, held=False)
            if claimed:
                await asyncio.sleep(0)  # let the steps start before claiming more
                continue
            await asyncio.sleep(self.options.poll_seconds)

    # ----------------------------------------------------------------------------------------
    # Outbox

    def _owe(self, kinds: set[str]) -> None:
        """A write made outbox rows of ``kinds``: the loop that sends them looks at once."""
        if player_events.KIND in kinds:
            self._owed["players"].set()
        if chips.KIND in kinds:
            self._owed["chips"].set()
        if kinds & set(_SCORING_KINDS):
            self._owed["scoring"].set()

    async def _outbox(
        self, name: str, kinds: tuple[str, ...], batch: int, *, linger: float = 0.0
    ) -> None:
        """Send the outbox rows of ``kinds``, up to ``batch`` claimed at a time, ``linger``
        seconds after a write owed some (one loop for scoring's, one for the players'
        streams, one for the chips records: a lobby out of reach never holds a score back,
        and a flood of players' events never holds a payout back)."""
        owed = self._owed[name]
        together = name in _TO_THE_LOBBY
        while True:
            if linger:
                await asyncio.sleep(linger)
            now_us = self.core.now_us()
            rows = await self.store.claim_outbox(
                now_us, us(_OUTBOX_LEASE_SECONDS), batch, kinds=kinds
            )
            if together and rows:
                self._sending.update(row[0] for row in rows)
                try:
                    pause = await self._deliver_together(name, rows)
                finally:
                    self._sending.difference_update(row[0] for row in rows)
                if pause:
                    await asyncio.sleep(pause)
                    continue
            for row_id, kind, key, payload, attempts in rows if not together else ():
                self._sending.add(row_id)
                try:
                    await self._deliver(row_id, kind, key, payload, attempts)
                finally:
                    self._sending.discard(row_id)
            if len(rows) < batch:
                owed.clear()
                await wait_set(owed, self.options.poll_seconds)

    async def _deliver_together(self, name: str, rows: Sequence[OutboxRow]) -> float:
        """Rows for the lobby (players' events, or a staked table's chips records) go to it
        together, one RecordPlayerEvents or RecordTableChips call for what was claimed (the
        lobby records each once by its key, so a retry may regroup them): the seconds to wait
        before the next try (0 once sent). A lobby out of reach holds them all where they are,
        due at once, and the loop backs off (0.5 s doubling to a minute), so they reach the
        lobby in the order the tables wrote them. A call the lobby refuses as a whole is sent
        again a row at a time: a bad row is kept for its fix (``_deliver``) and never holds
        the others back."""
        metadata = self.autoplay.peers.metadata()
        try:
            if name == "chips":
                await self._lobby.RecordTableChips(
                    lobby_pb2.RecordTableChipsRequest(
                        request_id=uuid.uuid4().hex,
                        records=[lobby_pb2.TableChipsRecord.FromString(row[3]) for row in rows],
                    ),
                    metadata=metadata,
                    timeout=10,
                )
            else:
                await self._lobby.RecordPlayerEvents(
                    lobby_pb2.RecordPlayerEventsRequest(
                        request_id=uuid.uuid4().hex,
                        records=[lobby_pb2.PlayerEventRecord.FromString(row[3]) for row in rows],
                    ),
                    metadata=metadata,
                    timeout=10,
                )
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.INVALID_ARGUMENT and len(rows) > 1:
                for row in rows:
                    await self._deliver(*row)
                return 0.0
            failures = self._lobby_failures[name] = self._lobby_failures[name] + 1
            delay: float = min(60.0, 0.5 * 2.0 ** min(failures - 1, 8))
            level = _log.warning if error.code() == grpc.StatusCode.UNAVAILABLE else _log.error
            level("outbox delivery failed", kind=rows[0][1], rows=len(rows),
                  code=error.code().name)  # fmt: skip
            await self.store.outbox_failed_all(
                [row[0] for row in rows],
                self.core.now_us(),
                f"{error.code().name}: {error.details()}",
            )
            return delay
        self._lobby_failures[name] = 0
        await self.store.outbox_sent([row[0] for row in rows], self.core.now_us())
        return 0.0

    async def _deliver(
        self, row_id: int, kind: str, key: str, payload: bytes, attempts: int
    ) -> None:
        metadata = self.autoplay.peers.metadata()
        try:
            if kind == "hand":
                await self._scoring.RecordHand(
                    scoring_pb2.RecordHandRequest.FromString(payload), metadata=metadata, timeout=10
                )
            elif kind == player_events.KIND:
                record = lobby_pb2.PlayerEventRecord.FromString(payload)
                await self._lobby.RecordPlayerEvents(
                    lobby_pb2.RecordPlayerEventsRequest(
                        request_id=uuid.uuid4().hex, records=[record]
                    ),
                    metadata=metadata,
                    timeout=10,
                )
            elif kind == chips.KIND:
                await self._lobby.RecordTableChips(
                    lobby_pb2.RecordTableChipsRequest(
                        request_id=uuid.uuid4().hex,
                        records=[lobby_pb2.TableChipsRecord.FromString(payload)],
                    ),
                    metadata=metadata,
                    timeout=10,
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
            retry = self.core.now_us() + round(delay * 1e6)
            await self.store.outbox_failed(row_id, retry, f"{error.code().name}: {error.details()}")
            return
        await self.store.outbox_sent([row_id], self.core.now_us())

    # ----------------------------------------------------------------------------------------
    # Watchdog

    async def _watchdog(self) -> None:
        while True:
            live, backlog, stuck = await self.store.figures(
                self.core.now_us(), round(self.options.stuck_seconds * 1e6)
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


def build(
    settings: Settings, options: TableOptions | None, clock: Clock | None
) -> tuple[Database, PeerChannels, TableServicer]:
    """The table service's parts: its database, its peers, and the servicer over its core."""
    database = Database.for_service(NAME, settings)
    peers = PeerChannels(settings)
    core = TableCore.open(
        database,
        options=options or TableOptions.from_environ(),
        clock=clock or time.time,
        pod=f"table-{uuid.uuid4().hex[:12]}",
    )
    servicer = TableServicer(core, Autoplay(core, peers))
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
    database, peers, servicer = build(settings, options, clock)
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
            revocations=lobby_source(peers),
        )
        workers.start()
        yield handle, servicer
    finally:
        if handle is not None:
            await handle.stop(grace=0.5)
        await workers.stop()
        await peers.close()
        await servicer.core.close()
        await database.dispose()


async def serve_table(settings: Settings) -> None:
    """Run the table service until SIGTERM or SIGINT (``okey101 serve table``)."""
    try:
        options = TableOptions.from_environ()
    except ValueError as error:
        raise ConfigError(str(error)) from None
    database, peers, servicer = build(settings, options, None)
    workers = Workers(servicer)

    async def ready() -> None:
        await database.migrate(NAME)
        workers.start()

    try:
        await serve(
            NAME,
            lambda server: register(server, servicer),
            settings,
            ready=ready,
            access=ACCESS,
            revocations=lobby_source(peers),
        )
    finally:
        await workers.stop()
        await peers.close()
        await servicer.core.close()
        await database.dispose()


__all__ = ["Workers", "build", "register", "serve_table", "start_table"]
