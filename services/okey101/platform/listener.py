"""Other pods' commits, heard: PostgreSQL ``LISTEN`` on a channel their writes ``NOTIFY``.

A write that others must hear of sends ``NOTIFY channel, payload`` in its transaction, delivered
only if and when it commits (the table's journal: the table id, its last sequence number and
revision; the lobby's player events: the player id). ``PostgresListener`` hears them on a
connection of its own and hands each payload to ``heard``. When the connection drops it
reconnects, and calls ``lost`` once it is listening again: anything committed meanwhile must be
read again by whoever relies on it (the table treats every live table as stale; a player's
stream reads its events again). On SQLite (one process, local mode) there is nothing to listen
to: the process hears its own writes directly.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import asyncpg
import structlog

_log = structlog.get_logger("okey101.platform.listener")


class PostgresListener:
    """``LISTEN channel`` on a connection of its own (module docstring)."""

    def __init__(
        self,
        dsn: str,
        channel: str,
        heard: Callable[[str], None],
        lost: Callable[[], None],
        *,
        server_settings: dict[str, str],
    ) -> None:
        self._dsn = dsn
        self._channel = channel
        self._heard = heard
        self._lost = lost
        self._server_settings = server_settings
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"listener-{self._channel}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _notified(self, _connection: Any, _pid: int, _channel: str, payload: str) -> None:
        try:
            self._heard(payload)
        except ValueError:
            _log.warning("unreadable notification", channel=self._channel, payload=payload[:200])

    async def _run(self) -> None:
        delay = 0.1
        while True:
            connection = None
            try:
                connection = await asyncpg.connect(self._dsn, server_settings=self._server_settings)
                await connection.add_listener(self._channel, self._notified)
                delay = 0.1
                # Anything committed while we were not listening is read again.
                self._lost()
                lost = asyncio.Event()
                connection.add_termination_listener(_setter(lost))
                await lost.wait()
                _log.warning("listener connection lost: reconnecting", channel=self._channel)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the database is down or restarting: retry
                _log.warning(
                    "listener cannot connect", channel=self._channel, error=str(error)[:200]
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
            finally:
                if connection is not None and not connection.is_closed():
                    with contextlib.suppress(Exception):
                        await connection.close(timeout=1)


def _setter(event: asyncio.Event) -> Callable[[Any], None]:
    return lambda _connection: event.set()


__all__ = ["PostgresListener"]
