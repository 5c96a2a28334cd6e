"""Database access every stateful service shares: SQLAlchemy 2 async engines, transactions on
their connections, and each service's own Alembic history run at start-up.

- Where: ``database_url(service, settings)`` is ``settings.database_url`` (``--database-url``,
  ``OKEY_<SERVICE>_DATABASE_URL``, ``OKEY_DATABASE_URL``), else in local mode a SQLite file
  ``<var dir>/<service>.db`` (``./var/scoring.db``). Outside local mode a URL is required: a
  pod's own file system is no place for scores. ``postgresql://`` and ``postgres://`` URLs are
  read as ``postgresql+asyncpg://``, ``sqlite://`` as ``sqlite+aiosqlite://``.
- SQLite (the embedded default): WAL, a busy timeout, foreign keys on, and transactions that
  SQLAlchemy begins itself (the driver's legacy transaction handling is off). A read begins a
  plain (deferred) transaction, which never blocks under WAL; a write transaction
  (``Database.write()``) begins with ``BEGIN IMMEDIATE``, so concurrent writers queue on the busy
  timeout instead of failing when one upgrades a read lock.
- PostgreSQL (the cluster's truth): asyncpg, READ COMMITTED. Writers that must serialise take
  row locks (``SELECT ... FOR UPDATE``); duplicates are stopped by unique constraints and
  ``INSERT ... ON CONFLICT DO NOTHING`` (``insert_ignoring_conflicts``). A read runs in
  autocommit: under READ COMMITTED a transaction gives a read nothing (each statement sees
  its own snapshot either way), and BEGIN and COMMIT would be two more round trips. No
  ``pool_pre_ping`` (on asyncpg it is three round trips, BEGIN, a ping and ROLLBACK, at every
  checkout: as many as a move's own reads): a dead connection fails its statement, which
  invalidates every connection the pool held before it; a write transaction is then run again
  (``transaction``) and a read's caller gets UNAVAILABLE and retries. Connections are
  recycled after ``POOL_RECYCLE_SECONDS``, before any idle timeout on the way drops them.
- Migrations: ``run_migrations(service, url)`` upgrades the service's own Alembic history
  (``okey101/<service>/migrations``) to head, recording it in ``alembic_version_<service>``, so
  services may share one database. On PostgreSQL an advisory lock keeps two replicas starting
  at once from migrating together. Call it from ``serve()``'s ``ready`` hook.
- Outages: inside ``with outage_as(NotReady)``, a database that cannot be reached or a failure
  that trying again may cure (``is_outage``) is raised as the service's UNAVAILABLE
  ``DATABASE_UNAVAILABLE``, which callers retry (with the same request id); never INTERNAL.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Final, TypeVar

from sqlalchemy import Connection, Table, event, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    create_async_engine,
)
from sqlalchemy.sql.dml import Insert

from okey101.platform.config import ConfigError, Settings
from okey101.platform.logs import get_logger

#: How long a SQLite writer waits for the lock before giving up (seconds).
SQLITE_BUSY_TIMEOUT: Final = 30.0
#: The execution option that marks a connection as a writer's (SQLite: BEGIN IMMEDIATE).
WRITE_OPTION: Final = "okey101_write"
#: PostgreSQL connections older than this are closed at checkout (module docstring).
POOL_RECYCLE_SECONDS: Final = 600
#: How many times ``Database.transaction`` runs a write again after a transient failure.
WRITE_ATTEMPTS: Final = 4

_log = get_logger(component="database")
_T = TypeVar("_T")


def normalize_url(url: str) -> str:
    """The async driver's form of ``url`` (asyncpg for PostgreSQL, aiosqlite for SQLite)."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ConfigError(f"database_url is not a database URL: {_redact(url)!r}") from None
    backend = parsed.get_backend_name()
    if backend in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+asyncpg")
    elif backend == "sqlite":
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    else:
        raise ConfigError(f"database_url must be PostgreSQL or SQLite, not {backend!r}")
    return parsed.render_as_string(hide_password=False)


def sqlite_url(path: Path) -> str:
    """The aiosqlite URL of a database file."""
    return f"sqlite+aiosqlite:///{path}"


def database_url(service: str, settings: Settings) -> str:
    """Where ``service`` keeps its data (see the module docstring)."""
    if settings.database_url:
        return normalize_url(settings.database_url)
    if not settings.local_mode:
        raise ConfigError(
            f"{service} needs a database: set OKEY_DATABASE_URL (or OKEY_{service.upper()}_"
            "DATABASE_URL) to a PostgreSQL URL, or run in local mode (OKEY_LOCAL_MODE=1) for SQLite"
        )
    return sqlite_url(settings.var_dir / f"{service}.db")


def _redact(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unreadable URL>"


def is_sqlite(engine: AsyncEngine | AsyncConnection | Connection) -> bool:
    return engine.dialect.name == "sqlite"


def create_engine(url: str, **options: Any) -> AsyncEngine:
    """An async engine for ``url`` set up as the module docstring says."""
    url = normalize_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        connect_args = {"timeout": SQLITE_BUSY_TIMEOUT, **options.pop("connect_args", {})}
        engine = create_async_engine(url, connect_args=connect_args, **options)
        _sqlite_events(engine)
        return engine
    options.setdefault("pool_recycle", POOL_RECYCLE_SECONDS)
    options.setdefault("pool_size", 10)
    options.setdefault("max_overflow", 20)
    return create_async_engine(url, **options)


def _sqlite_events(engine: AsyncEngine) -> None:
    sync_engine = engine.sync_engine

    @event.listens_for(sync_engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        # SQLAlchemy emits BEGIN itself (below); the driver's legacy handling is turned off.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT * 1000)}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")
        finally:
            cursor.close()

    @event.listens_for(sync_engine, "begin")
    def on_begin(connection: Connection) -> None:
        write = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def dialect_insert(table: Table, dialect_name: str) -> postgresql.Insert | sqlite.Insert:
    """``INSERT`` into ``table`` in PostgreSQL's or SQLite's dialect (both have ON CONFLICT)."""
    if dialect_name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


def insert_ignoring_conflicts(table: Table, dialect_name: str) -> Insert:
    """``INSERT ... ON CONFLICT DO NOTHING`` for ``table`` on PostgreSQL or SQLite."""
    return dialect_insert(table, dialect_name).on_conflict_do_nothing()


def upsert(
    table: Table, dialect_name: str, keys: Sequence[str], values: Mapping[str, Any]
) -> Insert:
    """``INSERT ... ON CONFLICT (keys) DO UPDATE`` setting every other column in ``values``,
    on PostgreSQL or SQLite: one statement where a delete and an insert would be two."""
    statement = dialect_insert(table, dialect_name).values(**values)
    changes = {name: statement.excluded[name] for name in values if name not in keys}
    return statement.on_conflict_do_update(index_elements=list(keys), set_=changes)


def is_transient(error: BaseException) -> bool:
    """A failure that running the transaction again may cure: a deadlock or serialisation
    failure (PostgreSQL), a locked database (SQLite), a dropped connection."""
    if not isinstance(error, DBAPIError):
        return False
    if error.connection_invalidated:
        return True
    code = getattr(error.orig, "sqlstate", None) or getattr(error.orig, "pgcode", None)
    if code in ("40001", "40P01", "55P03"):
        return True
    return "database is locked" in str(error.orig).lower()


#: SQLSTATEs of a server shutting down, starting or full (class 08, a broken connection, too).
_UNREACHABLE_STATES: Final = frozenset({"57P01", "57P02", "57P03", "53300"})


def is_unreachable(error: BaseException) -> bool:
    """The database could not be reached or dropped the connection (the server restarting, the
    network cut, a terminated backend, no free connection in the pool): nothing to do with the
    work itself, so the call may be made again later (UNAVAILABLE, never INTERNAL)."""
    if isinstance(error, OSError | PoolTimeout):  # refused, reset, timed out; an empty pool
        return True
    if not isinstance(error, DBAPIError):
        return False
    if error.connection_invalidated or isinstance(error, OperationalError | InterfaceError):
        return True
    code = getattr(error.orig, "sqlstate", None) or getattr(error.orig, "pgcode", None) or ""
    return str(code).startswith("08") or code in _UNREACHABLE_STATES


def is_outage(error: BaseException) -> bool:
    """A failure of the database rather than of the work (``is_unreachable``), or one that the
    same work may not meet again (``is_transient``): the caller should try again later."""
    return is_unreachable(error) or is_transient(error)


@contextmanager
def outage_as(unavailable: Callable[[str], Exception], *, log: Any = None) -> Iterator[None]:
    """Inside the block, an outage (``is_outage``) is raised as ``unavailable(
    "DATABASE_UNAVAILABLE")`` (each service's UNAVAILABLE class, so that its own sentence is
    sent), noted on ``log`` if given; anything else passes unchanged."""
    try:
        yield
    except Exception as error:
        if not is_outage(error):
            raise
        if log is not None:
            log.warning("database unavailable", error=type(error).__name__)
        raise unavailable("DATABASE_UNAVAILABLE") from error


class Database:
    """One service's engine and its transactions.

    ``read()`` and ``write()`` are connections in a transaction committed at the end of the
    block (rolled back on an exception); ``transaction(work)`` runs ``work(connection)`` in a
    write transaction, again after a transient failure. The services use SQLAlchemy Core only:
    an ORM session would add its own bookkeeping to every statement and give nothing back.
    """

    def __init__(self, url: str, **options: Any) -> None:
        self.url = normalize_url(url)
        self.engine = create_engine(self.url, **options)
        #: Whether ``migrate_to_serve`` has brought the schema to its head (calls wait for it).
        self.migrated = False
        self._writer = self.engine.execution_options(**{WRITE_OPTION: True})
        # PostgreSQL reads in autocommit (module docstring); SQLite's reads keep their
        # transaction, which there is a snapshot across statements.
        self._reader = (
            self.engine
            if self.engine.dialect.name == "sqlite"
            else self.engine.execution_options(isolation_level="AUTOCOMMIT")
        )
        # SQLite takes one writer at a time; writers of this process queue here rather than in
        # SQLite's busy handler, which sleeps in steps of up to 100 ms between tries.
        self._sqlite_writer = asyncio.Lock() if self.engine.dialect.name == "sqlite" else None

    @classmethod
    def for_service(cls, service: str, settings: Settings, **options: Any) -> Database:
        return cls(database_url(service, settings), **options)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        async with self._reader.begin() as connection:
            yield connection

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        if self._sqlite_writer is None:
            async with self._writer.begin() as connection:
                yield connection
            return
        async with self._sqlite_writer, self._writer.begin() as connection:
            yield connection

    async def transaction(self, work: Callable[[AsyncConnection], Awaitable[_T]]) -> _T:
        """``work`` in a write transaction, retried (a few times, briefly) when it fails for a
        transient reason; any other exception propagates after the rollback."""
        delay = 0.02
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                async with self.write() as session:
                    return await work(session)
            except DBAPIError as error:
                if attempt == WRITE_ATTEMPTS or not is_transient(error):
                    raise
                _log.warning("transient database failure: retrying", attempt=attempt)
                await asyncio.sleep(delay)
                delay *= 4
        raise AssertionError("unreachable")

    async def migrate(self, service: str) -> None:
        await run_migrations(service, self.engine)

    async def migrate_to_serve(self, service: str) -> None:
        """``migrate``, as a service's ``ready`` hook: calls are served from then on
        (``serving``); a database that cannot be reached or migrated stops the start
        (ConfigError: the reason logged, exit status 1) rather than leaving a service that
        answers UNAVAILABLE for ever."""
        try:
            await self.migrate(service)
        except (OSError, DBAPIError) as error:
            raise ConfigError(f"cannot migrate the {service} database: {error}") from None
        self.migrated = True

    @contextmanager
    def serving(
        self, unavailable: Callable[[str], Exception], *, log: Any = None
    ) -> Iterator[None]:
        """Around a call's work: ``unavailable("SERVICE_STARTING")`` until the schema is
        migrated (``migrate_to_serve``), then ``outage_as(unavailable)``."""
        if not self.migrated:
            raise unavailable("SERVICE_STARTING")
        with outage_as(unavailable, log=log):
            yield

    async def dispose(self) -> None:
        await self.engine.dispose()


# --------------------------------------------------------------------------------------------
# Migrations


def migrations_path(service: str) -> Path:
    """The Alembic script directory of a service: ``okey101/<service>/migrations``."""
    module = importlib.import_module(f"okey101.{service}")
    if module.__file__ is None:
        raise ConfigError(f"okey101.{service} is not a package with files")
    path = Path(module.__file__).parent / "migrations"
    if not (path / "env.py").exists():
        raise ConfigError(f"okey101.{service} has no Alembic history at {path}")
    return path


def version_table(service: str) -> str:
    """The table a service's Alembic history records its revision in."""
    return f"alembic_version_{service}"


def alembic_config(service: str, url: str | None = None) -> Any:
    """An Alembic ``Config`` for a service's history (no alembic.ini needed)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_path(service)))
    config.set_main_option("version_table", version_table(service))
    if url is not None:
        # configparser interpolates '%': escape it (a password may hold one).
        config.set_main_option("sqlalchemy.url", normalize_url(url).replace("%", "%%"))
    config.attributes["service"] = service
    return config


def _advisory_key(service: str) -> int:
    digest = hashlib.sha256(f"okey101-migrations:{service}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


async def run_migrations(service: str, url: str | AsyncEngine, *, revision: str = "head") -> None:
    """Upgrade ``service``'s database (a URL or an engine) to ``revision`` of its own history."""
    # Alembic announces each of its plugins at info level on import: not worth a line.
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    from alembic import command

    engine = url if isinstance(url, AsyncEngine) else create_engine(url)
    config = alembic_config(service)
    try:
        writer = engine.execution_options(**{WRITE_OPTION: True})
        async with writer.begin() as connection:
            if connection.dialect.name == "postgresql":
                await connection.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": _advisory_key(service)}
                )

            def upgrade(sync_connection: Connection) -> None:
                config.attributes["connection"] = sync_connection
                command.upgrade(config, revision)

            await connection.run_sync(upgrade)
        _log.info("database migrated", service=service, revision=revision, dialect=engine.name)
    finally:
        if not isinstance(url, AsyncEngine):
            await engine.dispose()


def run_env_migrations(target_metadata: Any, *, render_as_batch_on_sqlite: bool = True) -> None:
    """The body of a service's ``migrations/env.py``: online migrations on the connection
    ``run_migrations`` hands over, else on the URL of the Alembic config (the ``alembic``
    command), else on the service's configured database; offline, SQL to standard output."""
    from alembic import context

    config = context.config
    table = config.get_main_option("version_table") or version_table(
        str(config.attributes.get("service", "service"))
    )

    def configure(connection: Connection) -> None:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            version_table=table,
            render_as_batch=render_as_batch_on_sqlite and connection.dialect.name == "sqlite",
            compare_type=True,
        )
        with context.begin_transaction():
            context.run_migrations()

    if context.is_offline_mode():
        context.configure(
            url=config.get_main_option("sqlalchemy.url"),
            target_metadata=target_metadata,
            version_table=table,
            literal_binds=True,
            dialect_opts={"paramstyle": "named"},
        )
        with context.begin_transaction():
            context.run_migrations()
        return
    connection = config.attributes.get("connection")
    if connection is not None:
        configure(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        from okey101.platform.config import load_settings

        service = str(config.attributes.get("service") or config.get_main_option("service"))
        url = database_url(service, load_settings(service))

    async def online() -> None:
        engine = create_engine(url)
        try:
            async with engine.execution_options(**{WRITE_OPTION: True}).connect() as conn:
                await conn.run_sync(configure)
                await conn.commit()
        finally:
            await engine.dispose()

    asyncio.run(online())


def row_mapping(row: Any) -> Mapping[str, Any]:
    """A result row as a mapping (for code that reads columns by name)."""
    mapping: Mapping[str, Any] = row._mapping
    return mapping


__all__: Sequence[str] = (
    "SQLITE_BUSY_TIMEOUT",
    "WRITE_OPTION",
    "Database",
    "alembic_config",
    "create_engine",
    "database_url",
    "insert_ignoring_conflicts",
    "is_outage",
    "is_sqlite",
    "is_transient",
    "is_unreachable",
    "migrations_path",
    "normalize_url",
    "outage_as",
    "row_mapping",
    "run_env_migrations",
    "run_migrations",
    "sqlite_url",
    "version_table",
)
