"""Other pods' writes, heard: PostgreSQL ``LISTEN`` for the journal's ``NOTIFY``.

Each write of a table sends ``NOTIFY okey101_table_events`` with the table id, its last sequence
number and its new revision (``journal``), delivered when it commits. This pod's copy of a table
another pod wrote is then stale (``LiveTables.notified``): the next call on it reloads it, and
its watchers here get the new events from one read for all of them. When the listening
connection drops, every live table is treated as stale once it is back; watchers also look at
the log on their own every few seconds, so a lost notification costs a delay, never an event.
On SQLite (one process, local mode) there is nothing to listen to.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import asyncpg
import structlog

from okey101.table.journal import NOTIFY_CHANNEL

_log = structlog.get_logger("okey101.table.feed")

#: ``notified(table_id, revision)``, and ``lost()`` when notifications may have been missed.
Notified = Callable[[str, int], None]


class PostgresListener:
    """``LISTEN okey101_table_events`` on a connection of its own (module docstring)."""

    def __init__(
        self,
        dsn: str,
        notified: Notified,
        lost: Callable[[], None],
        *,
        server_settings: dict[str, str],
    ) -> None:
        self._dsn = dsn
        self._notified_callback = notified
        self._lost = lost
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
        table_id, _, numbers = payload.partition(" ")
        _sequence, _, revision = numbers.partition(" ")
        try:
            self._notified_callback(table_id, int(revision))
        except ValueError:
            _log.warning("unreadable notification", payload=payload[:200])

    async def _run(self) -> None:
        delay = 0.1
        while True:
            connection = None
            try:
                connection = await asyncpg.connect(self._dsn, server_settings=self._server_settings)
                await connection.add_listener(NOTIFY_CHANNEL, self._notified)
                delay = 0.1
                # Anything committed while we were not listening is read again.
                self._lost()
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


__all__ = ["PostgresListener"]
