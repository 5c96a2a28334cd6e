"""The table's durable log: one write per change, and what a table is rebuilt from.

A change to a table (a move, a deal, a seat taken, a timer's step) is computed in memory
(``live``) and made durable by ``Journal.write`` in **one round trip**: on PostgreSQL a single
statement whose data-modifying ``WITH`` parts advance the table's row, append the events and
the moves, store the request's answer, the hand's row and the outbox to scoring, and send the
``NOTIFY`` that tells other pods; on SQLite the same statements in one ``BEGIN IMMEDIATE``
transaction run by a thread of its own on one connection (one hop off the event loop).

Every write is a compare-and-set on the row's ``revision``, which every write advances: a write
computed from a revision that is no longer the row's changes nothing and raises ``Stale`` (this
pod's memory was behind: another pod served the table). A request id answered already (a retry
that another pod, or an earlier attempt, committed) violates the answers' primary key: nothing
is written and ``AlreadyAnswered`` carries the stored answer. The (table, sequence) key of the
log makes a double append impossible either way.

The hand's state is written as a snapshot only every few moves (``Write.snapshot``): the moves
since (``Snapshot.moves``) replayed with the deterministic engine give the state again
(``TableJournal.load``), so an ordinary move writes no state at all.

The row also carries the table's timer (``timer_*``): what is due when, and which pod holds it.
The pod that writes a timer holds it until ``claimed_until_us`` (its due time plus a lease)
and runs it from memory; any pod claims the timers nobody holds any more (``claim_due``, which
skips rows another pod is claiming), so a pod's death delays a timer by at most its lease.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

import asyncpg
from okey.v1 import common_pb2
from sqlalchemy.engine import make_url

from okey101.table.errors import NotReady, Stale

NOTIFY_CHANNEL: Final = "okey101_table_events"
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class EventRow:
    """One event of the log: everyone's copy, and each seat's private extra (protobuf merges
    ``public + private[seat]`` into that seat's copy)."""

    sequence: int
    state_version: int
    kind: int
    hand_id: str
    public: bytes
    private: tuple[bytes | None, bytes | None, bytes | None, bytes | None]

    def copy_for(self, seat: int | None) -> bytes:
        """The serialized event as ``seat`` may see it (a spectator's for None)."""
        extra = self.private[seat] if seat is not None else None
        return self.public + extra if extra else self.public

    def for_viewer(self, seat: int | None) -> common_pb2.Event:
        """``copy_for``, parsed."""
        return common_pb2.Event.FromString(self.copy_for(seat))


@dataclass(frozen=True, slots=True)
class MoveRow:
    """One action of a hand, filed under the sequence number of the first event its call made."""

    sequence: int
    action_index: int
    seat: int
    action: bytes
    source: int


@dataclass(frozen=True, slots=True)
class TimerRow:
    """The table's timer and who holds it: ``claimed_by`` runs it, others wait until
    ``claimed_until_us`` before they may take it over."""

    kind: str
    due_us: int
    claimed_until_us: int
    claimed_by: str


@dataclass(frozen=True, slots=True)
class AnswerRow:
    """The answer to a request id, stored with the change it answers."""

    caller: str
    method: str
    request_id: str
    response: bytes


@dataclass(frozen=True, slots=True)
class HandStartRow:
    """A hand's fairness record, written with its deal (the server seed unpublished)."""

    hand_id: str
    match_id: str
    hand_number: int
    dealer: int
    rules_version: str
    server_seed: str
    commitment: str
    player_seeds: str
    deck: str
    seats: str


@dataclass(frozen=True, slots=True)
class HandEndRow:
    """A hand's end: its result and final state (``HandResult`` and ``HandState`` bytes)."""

    hand_id: str
    result: bytes
    final_state: bytes


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """A message owed to scoring: ``kind`` "hand" (RecordHand) or "match" (RecordMatch),
    unique by ``key``."""

    kind: str
    key: str
    payload: bytes


@dataclass(frozen=True, slots=True)
class MatchColumns:
    """The match so far (JSON) and its result once it has ended."""

    match: str
    match_result: bytes | None


#: ``Write.timer`` for "no timer any more" (``None`` there means "unchanged").
NO_TIMER: Final = TimerRow("", 0, 0, "")


@dataclass(frozen=True, slots=True)
class Write:
    """Everything one change makes durable (module docstring)."""

    table_id: str
    #: The row's revision the change was computed from; the write makes it ``revision + 1``.
    revision: int
    state_version: int
    last_sequence: int
    now_us: int
    state: int
    hand_number: int
    hand_id: str
    dealer: int
    turn_deadline_us: int | None
    #: Written only where given (None: unchanged).
    seats: str | None = None
    match: MatchColumns | None = None
    #: The hand's state as of ``last_sequence`` (None: the snapshot stays as it is).
    snapshot: bytes | None = None
    #: The table's timer (None: unchanged; ``NO_TIMER``: none).
    timer: TimerRow | None = None
    events: Sequence[EventRow] = ()
    moves: Sequence[MoveRow] = ()
    answer: AnswerRow | None = None
    hand_start: HandStartRow | None = None
    hand_end: HandEndRow | None = None
    outbox: Sequence[OutboxRow] = ()


class AlreadyAnswered(Exception):
    """The request id of the write was answered already: nothing was written."""

    def __init__(self, table_id: str, response: bytes) -> None:
        super().__init__("the request id was answered already")
        self.table_id = table_id
        self.response = response


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a table is rebuilt from: its row (as ``TableRecord.from_row`` reads it) and the
    moves of its hand since the row's snapshot of the hand state, in order."""

    row: dict[str, Any]
    moves: tuple[MoveRow, ...] = field(default_factory=tuple)


class TableJournal:
    """``write`` and ``load`` over PostgreSQL or SQLite (module docstring)."""

    async def write(self, write: Write) -> None:
        """Make ``write`` durable: ``Stale`` if the row's revision moved on, ``AlreadyAnswered``
        if its request id was answered, ``NotReady`` if the database cannot be reached."""
        raise NotImplementedError

    async def load(self, table_id: str) -> Snapshot | None:
        """The table's row and the moves since its snapshot; None for an unknown table."""
        raise NotImplementedError

    async def close(self) -> None:
        """Release the journal's connections."""

    @staticmethod
    def for_url(url: str, *, pool_size: int = 4) -> TableJournal:
        """The journal of the database at ``url`` (a SQLAlchemy URL, as the service has it)."""
        parsed = make_url(url)
        if parsed.get_backend_name() == "sqlite":
            return SqliteJournal(parsed.database or "")
        dsn = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
        return PostgresJournal(dsn, pool_size=pool_size)


# --------------------------------------------------------------------------------------------
# PostgreSQL: one statement

_PG_WRITE: Final = """
WITH upd AS (
    UPDATE table_tables SET
        revision = $2 + 1,
        state_version = $3,
        last_sequence = $4,
        updated_us = $5,
        state = $6,
        hand_number = $7,
        hand_id = $8,
        dealer = $9,
        turn_deadline_us = $10,
        seats = CASE WHEN $11::boolean THEN $12::text ELSE seats END,
        match = CASE WHEN $13::boolean THEN $14::text ELSE match END,
        match_result = CASE WHEN $13::boolean THEN $15::bytea ELSE match_result END,
        hand_state = CASE WHEN $16::boolean THEN $17::bytea ELSE hand_state END,
        snapshot_sequence = CASE WHEN $16::boolean THEN $4 ELSE snapshot_sequence END,
        timer_kind = CASE WHEN $18::boolean THEN $19::text ELSE timer_kind END,
        timer_due_us = CASE WHEN $18::boolean THEN $20::bigint ELSE timer_due_us END,
        timer_claimed_until_us =
            CASE WHEN $18::boolean THEN $21::bigint ELSE timer_claimed_until_us END,
        timer_claimed_by = CASE WHEN $18::boolean THEN $22::text ELSE timer_claimed_by END
    WHERE table_id = $1 AND revision = $2
    RETURNING table_id
), appended AS (
    INSERT INTO table_events (table_id, sequence, state_version, kind, hand_id, time_us,
                              public, private_0, private_1, private_2, private_3)
    SELECT upd.table_id, e.sequence, e.state_version, e.kind, e.hand_id, $5,
           e.public, e.private_0, e.private_1, e.private_2, e.private_3
    FROM upd, unnest($23::bigint[], $24::bigint[], $25::integer[], $26::text[], $27::bytea[],
                     $28::bytea[], $29::bytea[], $30::bytea[], $31::bytea[])
         AS e(sequence, state_version, kind, hand_id, public,
              private_0, private_1, private_2, private_3)
), moved AS (
    INSERT INTO table_moves (hand_id, sequence, action_index, seat, action, source, time_us)
    SELECT $8, m.sequence, m.action_index, m.seat, m.action, m.source, $5
    FROM upd, unnest($32::bigint[], $33::integer[], $34::integer[], $35::bytea[],
                     $36::integer[]) AS m(sequence, action_index, seat, action, source)
), answered AS (
    INSERT INTO table_requests (caller, method, request_id, table_id, response, created_us)
    SELECT $37::text, $38::text, $39::text, upd.table_id, $40::bytea, $5 FROM upd
    WHERE $37::text <> ''
), dealt AS (
    INSERT INTO table_hands (hand_id, table_id, match_id, hand_number, dealer, rules_version,
                             server_seed, commitment, player_seeds, deck, seats, started_us)
    SELECT $41::text, upd.table_id, $42::text, $43::integer, $44::integer, $45::text, $46::text,
           $47::text, $48::text, $49::text, $50::text, $5
    FROM upd WHERE $41::text <> ''
), ended AS (
    UPDATE table_hands SET ended_us = $5, result = $52, final_state = $53
    FROM upd WHERE table_hands.hand_id = $51::text AND $51::text <> ''
), owed AS (
    INSERT INTO table_outbox (table_id, kind, key, payload, created_us, next_attempt_us)
    SELECT upd.table_id, o.kind, o.key, o.payload, $5, $5
    FROM upd, unnest($54::text[], $55::text[], $56::bytea[]) AS o(kind, key, payload)
    ON CONFLICT (key) DO NOTHING
)
SELECT pg_notify($57, upd.table_id || ' ' || $4::text || ' ' || ($2 + 1)::text) FROM upd
"""

_PG_ANSWER: Final = """
SELECT table_id, response FROM table_requests
WHERE caller = $1 AND method = $2 AND request_id = $3
"""

_PG_ROW: Final = "SELECT * FROM table_tables WHERE table_id = $1"

_PG_MOVES: Final = """
SELECT sequence, action_index, seat, action, source FROM table_moves
WHERE hand_id = $1 AND sequence > $2 ORDER BY sequence, action_index
"""

#: SQLSTATEs of a server shutting down, starting, or out of connections (and class 08).
_PG_UNREACHABLE: Final = frozenset({"57P01", "57P02", "57P03", "53300", "53000"})


def _pg_arguments(write: Write) -> list[Any]:
    events, moves, outbox = write.events, write.moves, write.outbox
    timer = write.timer
    answer = write.answer
    start = write.hand_start
    end = write.hand_end
    return [
        write.table_id,
        write.revision,
        write.state_version,
        write.last_sequence,
        write.now_us,
        write.state,
        write.hand_number,
        write.hand_id,
        write.dealer,
        write.turn_deadline_us,
        write.seats is not None,
        write.seats,
        write.match is not None,
        write.match.match if write.match is not None else None,
        write.match.match_result if write.match is not None else None,
        write.snapshot is not None,
        write.snapshot,
        timer is not None,
        (timer.kind or None) if timer is not None else None,
        (timer.due_us if timer.kind else None) if timer is not None else None,
        (timer.claimed_until_us if timer.kind else None) if timer is not None else None,
        timer.claimed_by if timer is not None else "",
        [e.sequence for e in events],
        [e.state_version for e in events],
        [e.kind for e in events],
        [e.hand_id for e in events],
        [e.public for e in events],
        [e.private[0] for e in events],
        [e.private[1] for e in events],
        [e.private[2] for e in events],
        [e.private[3] for e in events],
        [m.sequence for m in moves],
        [m.action_index for m in moves],
        [m.seat for m in moves],
        [m.action for m in moves],
        [m.source for m in moves],
        answer.caller if answer is not None else "",
        answer.method if answer is not None else "",
        answer.request_id if answer is not None else "",
        answer.response if answer is not None else b"",
        start.hand_id if start is not None else "",
        start.match_id if start is not None else "",
        start.hand_number if start is not None else 0,
        start.dealer if start is not None else 0,
        start.rules_version if start is not None else "",
        start.server_seed if start is not None else "",
        start.commitment if start is not None else "",
        start.player_seeds if start is not None else "",
        start.deck if start is not None else "",
        start.seats if start is not None else "",
        end.hand_id if end is not None else "",
        end.result if end is not None else b"",
        end.final_state if end is not None else b"",
        [o.kind for o in outbox],
        [o.key for o in outbox],
        [o.payload for o in outbox],
        NOTIFY_CHANNEL,
    ]


def _pg_unreachable(error: BaseException) -> bool:
    if isinstance(error, OSError | TimeoutError | asyncpg.exceptions.ConnectionDoesNotExistError):
        return True
    if isinstance(
        error,
        asyncpg.exceptions.InterfaceError
        | asyncpg.PostgresConnectionError
        | asyncpg.exceptions.InternalClientError,
    ):
        return True
    code = getattr(error, "sqlstate", None) or ""
    return code.startswith("08") or code in _PG_UNREACHABLE


class PostgresJournal(TableJournal):
    """The journal on PostgreSQL: a few asyncpg connections of its own, each statement prepared
    once per connection (asyncpg's statement cache). They are kept in a plain list rather than
    an ``asyncpg.Pool``, whose acquire and release cost as much as the write's own encoding: the
    journal never changes a session, so a connection needs no reset between writes, and one an
    operation failed on is closed, never reused."""

    def __init__(self, dsn: str, *, pool_size: int = 4) -> None:
        self._dsn = dsn
        self._size = pool_size
        self._idle: list[asyncpg.Connection] = []
        self._open = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._closed = False

    async def _acquire(self) -> asyncpg.Connection:
        while True:
            if self._closed:
                raise NotReady("DATABASE_UNAVAILABLE")
            while self._idle:
                connection = self._idle.pop()
                if not connection.is_closed():
                    return connection
                self._open -= 1
            if self._open < self._size:
                self._open += 1
                try:
                    connection = await asyncpg.connect(
                        self._dsn,
                        server_settings={"application_name": "okey101-table-journal"},
                    )
                except BaseException as error:
                    self._open -= 1
                    self._wake_one()
                    if isinstance(error, Exception) and _pg_unreachable(error):
                        raise NotReady("DATABASE_UNAVAILABLE") from error
                    raise
                return connection
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def _release(self, connection: asyncpg.Connection, *, broken: bool) -> None:
        if broken or self._closed or connection.is_closed():
            with contextlib.suppress(Exception):
                connection.terminate()
            self._open -= 1
        else:
            self._idle.append(connection)
        self._wake_one()

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def _run(self, work: Callable[[asyncpg.Connection], Any]) -> Any:
        connection = await self._acquire()
        try:
            result = await work(connection)
        except (Stale, AlreadyAnswered):
            self._release(connection, broken=False)
            raise
        except BaseException as error:
            # A connection an operation failed on (or was cancelled on) is not used again.
            self._release(connection, broken=True)
            if isinstance(error, Exception) and _pg_unreachable(error):
                raise NotReady("DATABASE_UNAVAILABLE") from error
            raise
        self._release(connection, broken=False)
        return result

    async def write(self, write: Write) -> None:
        arguments = _pg_arguments(write)

        async def work(connection: asyncpg.Connection) -> None:
            try:
                written = await connection.fetch(_PG_WRITE, *arguments)
            except asyncpg.UniqueViolationError as error:
                if write.answer is None or error.constraint_name != "pk_table_requests":
                    raise
                stored = await connection.fetchrow(
                    _PG_ANSWER, write.answer.caller, write.answer.method, write.answer.request_id
                )
                if stored is None:  # answered and gone (never: answers are kept)
                    raise
                raise AlreadyAnswered(stored["table_id"], bytes(stored["response"])) from None
            if not written:
                raise Stale("STALE_VERSION", version=write.state_version, current=-1)

        await self._run(work)

    async def load(self, table_id: str) -> Snapshot | None:
        async def work(connection: asyncpg.Connection) -> Snapshot | None:
            row = await connection.fetchrow(_PG_ROW, table_id)
            if row is None:
                return None
            values = dict(row)
            moves: tuple[MoveRow, ...] = ()
            if values["hand_id"]:
                found = await connection.fetch(
                    _PG_MOVES, values["hand_id"], values["snapshot_sequence"]
                )
                moves = tuple(
                    MoveRow(m["sequence"], m["action_index"], m["seat"], bytes(m["action"]),
                            m["source"])
                    for m in found
                )
            return Snapshot(values, moves)

        result: Snapshot | None = await self._run(work)
        return result

    async def close(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            with contextlib.suppress(Exception):
                await connection.close(timeout=2)
        self._open -= len(idle)
        self._wake_one()


# --------------------------------------------------------------------------------------------
# SQLite: one transaction, on a thread of its own

_SQLITE_BUSY_MS: Final = 30_000


class SqliteJournal(TableJournal):
    """The journal on SQLite: one connection, used only by one thread, which runs each write
    whole (``BEGIN IMMEDIATE`` ... ``COMMIT``) in one call from the event loop."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="journal")
        self._connection: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            connection = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute(f"PRAGMA busy_timeout={_SQLITE_BUSY_MS}")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.row_factory = sqlite3.Row
            self._connection = connection
        return self._connection

    async def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        loop = asyncio.get_running_loop()

        def call() -> _T:
            return work(self._connect())

        try:
            return await loop.run_in_executor(self._thread, call)
        except sqlite3.OperationalError as error:
            raise NotReady("DATABASE_UNAVAILABLE") from error

    async def write(self, write: Write) -> None:
        await self._run(lambda connection: _sqlite_write(connection, write))

    async def load(self, table_id: str) -> Snapshot | None:
        return await self._run(lambda connection: _sqlite_load(connection, table_id))

    async def close(self) -> None:
        def shut() -> None:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

        await asyncio.get_running_loop().run_in_executor(self._thread, shut)
        self._thread.shutdown(wait=True)


def _sqlite_write(connection: sqlite3.Connection, write: Write) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        _sqlite_statements(connection, write)
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _sqlite_statements(connection: sqlite3.Connection, write: Write) -> None:
    columns: dict[str, Any] = {
        "revision": write.revision + 1,
        "state_version": write.state_version,
        "last_sequence": write.last_sequence,
        "updated_us": write.now_us,
        "state": write.state,
        "hand_number": write.hand_number,
        "hand_id": write.hand_id,
        "dealer": write.dealer,
        "turn_deadline_us": write.turn_deadline_us,
    }
    if write.seats is not None:
        columns["seats"] = write.seats
    if write.match is not None:
        columns["match"] = write.match.match
        columns["match_result"] = write.match.match_result
    if write.snapshot is not None:
        columns["hand_state"] = write.snapshot
        columns["snapshot_sequence"] = write.last_sequence
    if write.timer is not None:
        timer = write.timer
        columns["timer_kind"] = timer.kind or None
        columns["timer_due_us"] = timer.due_us if timer.kind else None
        columns["timer_claimed_until_us"] = timer.claimed_until_us if timer.kind else None
        columns["timer_claimed_by"] = timer.claimed_by
    assignments = ", ".join(f'"{name}" = ?' for name in columns)
    updated = connection.execute(
        f"UPDATE table_tables SET {assignments} WHERE table_id = ? AND revision = ?",
        (*columns.values(), write.table_id, write.revision),
    )
    if updated.rowcount != 1:
        raise Stale("STALE_VERSION", version=write.state_version, current=-1)
    if write.answer is not None:
        answer = write.answer
        try:
            connection.execute(
                "INSERT INTO table_requests (caller, method, request_id, table_id, response,"
                " created_us) VALUES (?, ?, ?, ?, ?, ?)",
                (answer.caller, answer.method, answer.request_id, write.table_id,
                 answer.response, write.now_us),
            )
        except sqlite3.IntegrityError:
            stored = connection.execute(
                "SELECT table_id, response FROM table_requests"
                " WHERE caller = ? AND method = ? AND request_id = ?",
                (answer.caller, answer.method, answer.request_id),
            ).fetchone()
            if stored is None:
                raise
            raise AlreadyAnswered(stored["table_id"], bytes(stored["response"])) from None
    if write.events:
        connection.executemany(
            "INSERT INTO table_events (table_id, sequence, state_version, kind, hand_id, time_us,"
            " public, private_0, private_1, private_2, private_3)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (write.table_id, e.sequence, e.state_version, e.kind, e.hand_id, write.now_us,
                 e.public, *e.private)
                for e in write.events
            ],
        )
    if write.moves:
        connection.executemany(
            "INSERT INTO table_moves (hand_id, sequence, action_index, seat, action, source,"
            " time_us) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (write.hand_id, m.sequence, m.action_index, m.seat, m.action, m.source,
                 write.now_us)
                for m in write.moves
            ],
        )
    if write.hand_start is not None:
        start = write.hand_start
        connection.execute(
            "INSERT INTO table_hands (hand_id, table_id, match_id, hand_number, dealer,"
            " rules_version, server_seed, commitment, player_seeds, deck, seats, started_us)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (start.hand_id, write.table_id, start.match_id, start.hand_number, start.dealer,
             start.rules_version, start.server_seed, start.commitment, start.player_seeds,
             start.deck, start.seats, write.now_us),
        )
    if write.hand_end is not None:
        end = write.hand_end
        connection.execute(
            "UPDATE table_hands SET ended_us = ?, result = ?, final_state = ? WHERE hand_id = ?",
            (write.now_us, end.result, end.final_state, end.hand_id),
        )
    if write.outbox:
        connection.executemany(
            "INSERT INTO table_outbox (table_id, kind, key, payload, created_us, next_attempt_us,"
            " attempts, last_error) VALUES (?, ?, ?, ?, ?, ?, 0, '') ON CONFLICT (key) DO NOTHING",
            [
                (write.table_id, o.kind, o.key, o.payload, write.now_us, write.now_us)
                for o in write.outbox
            ],
        )


def _sqlite_load(connection: sqlite3.Connection, table_id: str) -> Snapshot | None:
    row = connection.execute(
        "SELECT * FROM table_tables WHERE table_id = ?", (table_id,)
    ).fetchone()
    if row is None:
        return None
    values = {key: row[key] for key in row.keys()}  # noqa: SIM118 (sqlite3.Row)
    moves: tuple[MoveRow, ...] = ()
    if values["hand_id"]:
        moves = tuple(
            MoveRow(m["sequence"], m["action_index"], m["seat"], bytes(m["action"]), m["source"])
            for m in connection.execute(
                "SELECT sequence, action_index, seat, action, source FROM table_moves"
                " WHERE hand_id = ? AND sequence > ? ORDER BY sequence, action_index",
                (values["hand_id"], values["snapshot_sequence"]),
            )
        )
    return Snapshot(values, moves)


__all__ = [
    "NOTIFY_CHANNEL",
    "NO_TIMER",
    "AlreadyAnswered",
    "AnswerRow",
    "EventRow",
    "HandEndRow",
    "HandStartRow",
    "MatchColumns",
    "MoveRow",
    "OutboxRow",
    "PostgresJournal",
    "Snapshot",
    "SqliteJournal",
    "TableJournal",
    "TimerRow",
    "Write",
]
