"""Telling watchers that a table has new events.

Watchers read events from the log (``TableStore.events_after``), never from memory, so a
notification only says "read again": a missed or repeated one costs a read, never an event.
Commits on this pod publish directly; on PostgreSQL a ``LISTEN`` connection hears every pod's
commits (``NOTIFY okey101_table_events``, sent in the committing transaction). When that
connection drops, every watcher is woken once it is back, and watchers also re-read every few
seconds on their own, so nothing waits on a lost notification.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, Final

import structlog

from okey101.table.store import NOTIFY_CHANNEL

_log = structlog.get_logger("okey101.table.feed")

#: A watcher re-reads the log at least this often even with no notification.
SAFETY_POLL_SECONDS: Final = 5.0


class TableFeed:
    """The latest sequence number this pod knows of for each watched table."""

    def __init__(self) -> None:
        self._latest: dict[str, int] = {}
        self._changed: dict[str, asyncio.Event] = {}
        self._watchers: dict[str, int] = {}

    def publish(self, table_id: str, sequence: int) -> None:
        """A table has events up to ``sequence`` (0: unknown, read again)."""
        if sequence > self._latest.get(table_id, 0):
            self._latest[table_id] = sequence
        changed = self._changed.pop(table_id, None)
        if changed is not None:
            changed.set()

    def wake_all(self) -> None:
        for table_id in list(self._changed):
            self.publish(table_id, 0)

    async def wait_beyond(self, table_id: str, sequence: int, timeout: float) -> None:
        """Until the table is known to have an event after ``sequence``, a notification comes,
        or ``timeout`` seconds pass."""
        if self._latest.get(table_id, 0) > sequence:
            return
        changed = self._changed.setdefault(table_id, asyncio.Event())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), timeout)

    def watching(self, table_id: str, delta: int) -> None:
        """Count watchers; forget a table nobody watches."""
        count = self._watchers.get(table_id, 0) + delta
        if count > 0:
            self._watchers[table_id] = count
            return
        self._watchers.pop(table_id, None)
        self._latest.pop(table_id, None)
        self._changed.pop(table_id, None)


class PostgresListener:
    """``LISTEN okey101_table_events`` on a connection of its own, feeding a ``TableFeed``."""

    def __init__(self, dsn: str, feed: TableFeed, *, server_settings: dict[str, str]) -> None:
        self._dsn = dsn
        self._feed = feed
        self._server_settings = server_settings
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="table-listener")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _notified(self, _connection: Any, _pid: int, _channel: str, payload: str) -> None:
        table_id, _, sequence = payload.rpartition(" ")
        try:
            self._feed.publish(table_id, int(sequence))
        except ValueError:
            _log.warning("unreadable notification", payload=payload[:200])

    async def _run(self) -> None:
        import asyncpg

        delay = 0.1
        while True:
            connection = None
            try:
                connection = await asyncpg.connect(self._dsn, server_settings=self._server_settings)
                await connection.add_listener(NOTIFY_CHANNEL, self._notified)
                delay = 0.1
                # Anything committed while we were not listening is read now.
                self._feed.wake_all()
                lost = asyncio.Event()
                connection.add_termination_listener(_setter(lost))
                await lost.wait()
                _log.warning("event listener connection lost: reconnecting")
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the database is down or restarting: retry
                _log.warning("event listener cannot connect", error=str(error)[:200])
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
            finally:
                if connection is not None and not connection.is_closed():
                    with contextlib.suppress(Exception):
                        await connection.close(timeout=1)


def _setter(event: asyncio.Event) -> Callable[[Any], None]:
    return lambda _connection: event.set()
