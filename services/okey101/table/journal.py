"""The table's durable log: one write per change, and what a table is rebuilt from.

A change to a table (a move, a deal, a seat taken, a timer's step) is computed in memory
(``live``, ``change``) and made durable by ``TableJournal.write`` in **one round trip**: on
PostgreSQL a single statement whose data-modifying ``WITH`` parts advance the table's row, append
the events and the moves, store the request's answer, the hand's row and the outbox to scoring,
and send the ``NOTIFY`` that tells other pods; on SQLite the same statements in one
``BEGIN IMMEDIATE`` transaction run by a thread of its own on one connection (one hop off the
event loop).

A ``Write`` carries its rows as column -> value mappings, one kind of row per table it writes
(``TableColumns``, ``EventColumns``, ``MoveColumns``, ``answers.AnswerColumns``,
``HandColumns``, ``HandEndColumns``, ``OutboxColumns``). Those mappings are the one column
mapping both databases write from: the SQLite statements are built from their column names, and
the PostgreSQL statement is generated from them once, at import (``_PARTS``: the columns' types
are ``models``' compiled for PostgreSQL; rows of a kind a write may have several of are sent as
an array per column, ``unnest``-ed, the others as values), then prepared once per connection.

Every write is a compare-and-set on the row's ``revision``, which every write advances: a write
computed from a revision that is no longer the row's changes nothing and raises ``Stale`` (this
pod's memory was behind: another pod served the table). A request id answered already (a retry
that another pod, or an earlier attempt, committed) violates the answers' primary key: nothing
is written and ``AlreadyAnswered`` is raised (``answers.recall`` reads the stored answer). The
(table, sequence) key of the log makes a double append impossible either way.

The hand's state is written as a snapshot only every few moves (``hand_state``): the moves
since (``Snapshot.moves``) replayed with the deterministic engine give the state again
(``TableJournal.load``), so an ordinary move writes no state at all. The row also carries the
table's timer (``timer_*``) and who holds it (``timers``).
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import functools
import operator
import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypedDict, TypeVar

import asyncpg
from okey.v1 import common_pb2
from sqlalchemy import Column, Table
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import make_url

from okey101.table import models
from okey101.table.answers import AnswerColumns
from okey101.table.errors import NotReady, Stale

NOTIFY_CHANNEL: Final = "okey101_table_events"
_T = TypeVar("_T")


# --------------------------------------------------------------------------------------------
# What a table is made of in memory


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
class Snapshot:
    """What a table is rebuilt from: its row (as ``TableRecord.from_row`` reads it) and the
    moves of its hand since the row's snapshot of the hand state, in order."""

    row: dict[str, Any]
    moves: tuple[MoveRow, ...] = field(default_factory=tuple)


# --------------------------------------------------------------------------------------------
# What a write writes: rows, as column -> value


class _EveryWrite(TypedDict):
    revision: int
    state_version: int
    last_sequence: int
    updated_us: int
    state: int
    hand_number: int
    hand_id: str
    dealer: int
    turn_deadline_us: int | None


class TableColumns(_EveryWrite, total=False):
    """The columns of the table's row a write sets: every write its revision (one more than
    ``Write.revision``), versions, state and hand; the others only when the change changes
    them (``hand_state`` with ``snapshot_sequence``, the four ``timer_*`` together)."""

    seats: str
    match: str
    match_result: bytes | None
    hand_state: bytes
    snapshot_sequence: int
    timer_kind: str | None
    timer_due_us: int | None
    timer_claimed_until_us: int | None
    timer_claimed_by: str


class EventColumns(TypedDict):
    """A row of ``table_events`` (``EventRow``, and the table and time)."""

    table_id: str
    sequence: int
    state_version: int
    kind: int
    hand_id: str
    time_us: int
    public: bytes
    private_0: bytes | None
    private_1: bytes | None
    private_2: bytes | None
    private_3: bytes | None


class MoveColumns(TypedDict):
    """A row of ``table_moves`` (``MoveRow``, and the hand and time)."""

    hand_id: str
    sequence: int
    action_index: int
    seat: int
    action: bytes
    source: int
    time_us: int


class HandColumns(TypedDict):
    """A hand's row of ``table_hands``, written with its deal: its fairness record (the server
    seed unpublished) and deck."""

    hand_id: str
    table_id: str
    match_id: str
    hand_number: int
    dealer: int
    rules_version: str
    server_seed: str
    commitment: str
    player_seeds: str
    deck: str
    seats: str
    started_us: int


class HandEndColumns(TypedDict):
    """A hand's end, set on its row of ``table_hands``: its result and final state
    (``HandResult`` and ``HandState`` bytes)."""

    hand_id: str
    ended_us: int
    result: bytes
    final_state: bytes


class OutboxColumns(TypedDict):
    """A row of ``table_outbox``: a message owed to scoring, ``kind`` "hand" (RecordHand) or
    "match" (RecordMatch), or to the lobby, "player" (``player_events``) or "chips"
    (``chips``), unique by ``key`` (a row owed already is not owed twice)."""

    table_id: str
    kind: str
    key: str
    payload: bytes
    created_us: int
    next_attempt_us: int


@dataclass(frozen=True, slots=True)
class Write:
    """Everything one change makes durable, as rows (module docstring)."""

    table_id: str
    #: The row's revision the change was computed from: the write applies only if it still is.
    revision: int
    #: The columns of the table's row it sets.
    table: TableColumns
    events: Sequence[EventColumns] = ()
    moves: Sequence[MoveColumns] = ()
    answer: AnswerColumns | None = None
    hand_start: HandColumns | None = None
    hand_end: HandEndColumns | None = None
    outbox: Sequence[OutboxColumns] = ()


class AlreadyAnswered(Exception):
    """The request id of the write was answered already: nothing was written (the stored
    answer is read with ``answers.recall``)."""

    def __init__(self) -> None:
        super().__init__("the request id was answered already")


@dataclass(frozen=True)
class _Part:
    """The rows of one kind a ``Write`` carries (its field ``name``: a sequence of rows, or
    ``single``, one row or None) and where they go: into ``table``'s ``columns``; with ``key``,
    the rows those columns find are updated instead; with ``skip_taken``, a row whose columns
    are taken already is skipped. A write's rows of one kind all have the same value in the
    columns ``same`` (its table, its time): PostgreSQL is sent it once, as the first row's."""

    name: str
    table: Table
    columns: tuple[str, ...]
    single: bool = False
    key: tuple[str, ...] = ()
    skip_taken: tuple[str, ...] = ()
    same: tuple[str, ...] = ()
    #: ``columns`` but ``same``.
    varying: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "varying", tuple(name for name in self.columns if name not in self.same)
        )


def _columns(row: type[Mapping[str, Any]], table: Table) -> tuple[str, ...]:
    """The columns of ``table`` that ``row`` (a ``TypedDict``) gives, in its order."""
    names = tuple(row.__annotations__)
    missing = [name for name in names if name not in table.c]
    if missing:
        raise AssertionError(f"{table.name} has no columns {missing}")
    return names


#: The table row's columns every write sets, and those it sets only when the change does.
_EVERY_WRITE: Final = _columns(_EveryWrite, models.tables)
_SOMETIMES: Final = tuple(
    name for name in _columns(TableColumns, models.tables) if name not in _EVERY_WRITE
)
#: The other rows of a write, in the order SQLite writes them (the answer first: a request id
#: answered already stops the write before anything else is written).
_PARTS: Final = (
    _Part("answer", models.requests, _columns(AnswerColumns, models.requests), single=True),
    _Part(
        "events", models.events, _columns(EventColumns, models.events),
        same=("table_id", "time_us"),
    ),
    _Part("moves", models.moves, _columns(MoveColumns, models.moves), same=("hand_id", "time_us")),
    _Part("hand_start", models.hands, _columns(HandColumns, models.hands), single=True),
    _Part(
        "hand_end", models.hands, _columns(HandEndColumns, models.hands), single=True,
        key=("hand_id",),
    ),
    _Part(
        "outbox", models.outbox, _columns(OutboxColumns, models.outbox), skip_taken=("key",),
        same=("table_id", "created_us", "next_attempt_us"),
    ),
)  # fmt: skip
_ANSWER: Final = _PARTS[0]


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

_PG_DIALECT: Final = postgresql.dialect()  # type: ignore[no-untyped-call]
_quote: Final[Callable[[str], str]] = _PG_DIALECT.identifier_preparer.quote


def _pg_type(column: Column[Any]) -> str:
    """``column``'s type in PostgreSQL, without a length (a parameter is checked by the
    column it is written to, never cut by its cast)."""
    return re.sub(r"\(\d+\)", "", column.type.compile(dialect=_PG_DIALECT))


#: The bit of each of ``_SOMETIMES`` and of each ``single`` part of ``_PARTS`` that says a
#: write sets it, or has its row (a parameter of the statement).
_GIVEN: Final = {
    name: 1 << bit
    for bit, name in enumerate([*_SOMETIMES, *(part.name for part in _PARTS if part.single)])
}


def _pg_write_statement() -> str:
    """The one statement of a write (module docstring). Its parameters, in order (as
    ``_pg_arguments`` gives them): the table id and the revision the write was computed from;
    what the write has (``_GIVEN``'s bits); the values of ``_EVERY_WRITE`` and ``_SOMETIMES``;
    then, for each of ``_PARTS``, a ``single`` row's values, or the ``same`` columns' values and
    an array per column of the others (``unnest``-ed into rows)."""
    number = iter(range(4, 1_000))

    def value(column: Column[Any], array: str = "") -> str:
        return f"${next(number)}::{_pg_type(column)}{array}"

    def given(name: str) -> str:
        return f"($3::integer & {_GIVEN[name]}) <> 0"

    tables = models.tables
    sets = [f"{_quote(name)} = {value(tables.c[name])}" for name in _EVERY_WRITE]
    for name in _SOMETIMES:
        column = _quote(name)
        changed = value(tables.c[name])
        sets.append(f"{column} = CASE WHEN {given(name)} THEN {changed} ELSE {column} END")
    ctes = [
        f"upd AS (UPDATE {tables.name} SET {', '.join(sets)}"
        " WHERE table_id = $1 AND revision = $2 RETURNING table_id, revision, last_sequence)"
    ]
    for part in _PARTS:
        table = part.table.name
        names = [_quote(name) for name in part.columns]
        if part.single:  # one row or none (``_GIVEN``): its values
            conditions = [given(part.name)]
            values = [value(part.table.c[name]) for name in part.columns]
            source = "upd"
        else:  # the columns ``same`` once, then an array per column of the others
            conditions = []
            once = {name: value(part.table.c[name]) for name in part.same}
            arrays = ", ".join(value(part.table.c[name], "[]") for name in part.varying)
            source = f"upd, unnest({arrays}) AS r({', '.join(map(_quote, part.varying))})"
            values = [once.get(name) or f"r.{_quote(name)}" for name in part.columns]
        if part.key:
            row = dict(zip(names, values, strict=True))
            keys = [_quote(name) for name in part.key]
            changed = ", ".join(f"{name} = {row[name]}" for name in names if name not in keys)
            conditions += [f"{table}.{name} = {row[name]}" for name in keys]
            sql = f"UPDATE {table} SET {changed} FROM {source}"
        else:
            sql = (
                f"INSERT INTO {table} ({', '.join(names)}) SELECT {', '.join(values)} FROM {source}"
            )
        if conditions:
            sql += f" WHERE {' AND '.join(conditions)}"
        if part.skip_taken:
            sql += f" ON CONFLICT ({', '.join(map(_quote, part.skip_taken))}) DO NOTHING"
        ctes.append(f"{_quote(part.name)} AS ({sql})")
    notify = (
        f"SELECT pg_notify('{NOTIFY_CHANNEL}',"
        " upd.table_id || ' ' || upd.last_sequence::text || ' ' || upd.revision::text) FROM upd"
    )
    return "WITH " + ",\n".join(ctes) + "\n" + notify


_PG_WRITE: Final = _pg_write_statement()
#: The answers' primary key: a write that violates it answers a request id answered already.
_PG_ANSWERED: Final = f"pk_{models.requests.name}"

_PG_ROW: Final = "SELECT * FROM table_tables WHERE table_id = $1"

_PG_MOVES: Final = """
SELECT sequence, action_index, seat, action, source FROM table_moves
WHERE hand_id = $1 AND sequence > $2 ORDER BY sequence, action_index
"""

#: SQLSTATEs of a server shutting down, starting, or out of connections (and class 08).
_PG_UNREACHABLE: Final = frozenset({"57P01", "57P02", "57P03", "53300", "53000"})


def _getter(names: tuple[str, ...]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """The values of a row's ``names``, as a tuple."""
    if len(names) == 1:
        return lambda row: (row[names[0]],)
    return operator.itemgetter(*names)


def _pg_none(part: _Part) -> list[Any]:
    """The parameters of ``part`` for a write that has none of its rows."""
    if part.single:
        return [None] * len(part.columns)
    return [*[None] * len(part.same), *[[] for _name in part.varying]]


#: Each part's field of ``Write``, its bit in ``_GIVEN`` (0: not ``single``), the values sent
#: once (a single row's, or the ``same`` columns of the first row), those sent as an array per
#: column, and the parameters of a write that has none of its rows (``_pg_none``).
_PG_PARTS: Final = tuple(
    (
        part.name,
        _GIVEN.get(part.name, 0),
        _getter(part.columns if part.single else part.same),
        _getter(part.varying),
        _pg_none(part),
    )
    for part in _PARTS
)
_PG_SOMETIMES: Final = tuple((name, _GIVEN[name]) for name in _SOMETIMES)


def _pg_arguments(write: Write) -> list[Any]:
    """The parameters of ``_PG_WRITE`` for ``write`` (in ``_pg_write_statement``'s order)."""
    table: Mapping[str, Any] = write.table
    given = 0
    arguments: list[Any] = [write.table_id, write.revision, 0]
    arguments += [table[name] for name in _EVERY_WRITE]
    for name, bit in _PG_SOMETIMES:
        if name in table:
            given |= bit
            arguments.append(table[name])
        else:
            arguments.append(None)
    for name, bit, once, varying, none in _PG_PARTS:
        rows: Any = getattr(write, name)
        if not rows:
            arguments += none
        elif bit:
            given |= bit
            arguments += once(rows)
        else:
            arguments += once(rows[0])
            arguments += zip(*map(varying, rows), strict=True)  # an array (tuple) per column
    arguments[2] = given
    return arguments


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
                if write.answer is None or error.constraint_name != _PG_ANSWERED:
                    raise
                raise AlreadyAnswered() from None
            if not written:
                raise Stale("STALE_VERSION", version=write.table["state_version"], current=-1)

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
                    MoveRow(
                        m["sequence"], m["action_index"], m["seat"], bytes(m["action"]), m["source"]
                    )
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


def _sqlite_statement(part: _Part) -> tuple[str, Callable[[Mapping[str, Any]], tuple[Any, ...]]]:
    """The SQLite statement of ``part``'s rows, and a row's parameters."""
    if part.key:
        changed = tuple(name for name in part.columns if name not in part.key)
        sets = ", ".join(f'"{name}" = ?' for name in changed)
        found = " AND ".join(f'"{name}" = ?' for name in part.key)
        statement = f"UPDATE {part.table.name} SET {sets} WHERE {found}"
        return statement, _getter((*changed, *part.key))
    columns = ", ".join(f'"{name}"' for name in part.columns)
    marks = ", ".join("?" for _name in part.columns)
    statement = f"INSERT INTO {part.table.name} ({columns}) VALUES ({marks})"
    if part.skip_taken:
        taken = ", ".join(f'"{name}"' for name in part.skip_taken)
        statement += f" ON CONFLICT ({taken}) DO NOTHING"
    return statement, _getter(part.columns)


#: Each part's field of ``Write``, whether it is ``single``, its statement, and a row's
#: parameters.
_SQLITE_PARTS: Final = tuple((part.name, part.single, *_sqlite_statement(part)) for part in _PARTS)


@functools.lru_cache(maxsize=64)
def _sqlite_update(columns: tuple[str, ...]) -> str:
    """The compare-and-set of the table's row, setting ``columns``."""
    assignments = ", ".join(f'"{name}" = ?' for name in columns)
    return f"UPDATE {models.tables.name} SET {assignments} WHERE table_id = ? AND revision = ?"


def _sqlite_write(connection: sqlite3.Connection, write: Write) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        _sqlite_statements(connection, write)
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _sqlite_statements(connection: sqlite3.Connection, write: Write) -> None:
    table = write.table
    updated = connection.execute(
        _sqlite_update(tuple(table)), (*table.values(), write.table_id, write.revision)
    )
    if updated.rowcount != 1:
        raise Stale("STALE_VERSION", version=table["state_version"], current=-1)
    for name, single, statement, parameters in _SQLITE_PARTS:
        rows: Any = getattr(write, name)
        if not rows:
            continue
        try:
            if single:
                connection.execute(statement, parameters(rows))
            else:
                connection.executemany(statement, map(parameters, rows))
        except sqlite3.IntegrityError:
            if name != _ANSWER.name:
                raise
            raise AlreadyAnswered() from None


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
    "AlreadyAnswered",
    "EventColumns",
    "EventRow",
    "HandColumns",
    "HandEndColumns",
    "MoveColumns",
    "MoveRow",
    "OutboxColumns",
    "PostgresJournal",
    "Snapshot",
    "SqliteJournal",
    "TableColumns",
    "TableJournal",
    "Write",
]
