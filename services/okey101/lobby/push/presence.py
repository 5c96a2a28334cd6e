"""Which players have a WatchPlayer stream open, on any lobby pod (``lobby_player_presence``).

A stream adds its row when it opens (before it reads the player's events) and removes it when it
ends; while it is open its pod renews the lease of all its rows every ``RENEW_SECONDS`` with one
statement. A pod that dies leaves rows whose lease runs out within ``LEASE_US``, and a row whose
lease ran out counts as no stream. A removal that fails (the database away) is tried again at
the next renewal, so a closed stream is never renewed for long.

The sender asks at send time (``present``), so a stream opened on another pod, or after the
event, is seen: a player who has one was told by it, and gets no notification.
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Iterable
from typing import Final

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.credentials import new_id
from okey101.lobby.models import player_presence
from okey101.lobby.records import US, now_us
from okey101.platform.database import Database
from okey101.platform.logs import get_logger

#: How long a stream's row counts without renewal.
LEASE_US: Final = 30 * US
#: How often a pod renews its streams' rows.
RENEW_SECONDS: Final = 10.0

_log = get_logger(service="lobby")


def holder_name() -> str:
    """This process's name as the holder of its streams' rows: host, process id, a suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class StreamPresence:
    """This pod's open streams as rows every pod reads (module docstring)."""

    def __init__(self, database: Database, holder: str | None = None) -> None:
        self.database = database
        self.holder = holder or holder_name()
        self._closing: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def open(self, player_id: str) -> str:
        """A stream of ``player_id`` opens here: its row (its id, for ``close``)."""
        stream_id = new_id("ws")

        async def work(session: AsyncConnection) -> None:
            await session.execute(
                player_presence.insert().values(
                    stream_id=stream_id,
                    player_id=player_id,
                    holder=self.holder,
                    expires_us=now_us() + LEASE_US,
                )
            )

        await self.database.transaction(work)
        return stream_id

    def close(self, stream_id: str) -> None:
        """The stream ended: its row is removed (in the background: the stream's task may be
        cancelled; a removal that fails is retried at the next renewal)."""
        self._closing.add(stream_id)
        task = asyncio.ensure_future(self._remove([stream_id]))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _remove(self, stream_ids: list[str]) -> None:
        async def work(session: AsyncConnection) -> None:
            await session.execute(
                delete(player_presence).where(player_presence.c.stream_id.in_(stream_ids))
            )

        try:
            await self.database.transaction(work)
        except Exception as error:
            _log.warning("a closed stream's presence stays until renewal", error=str(error)[:200])
        else:
            self._closing.difference_update(stream_ids)

    async def renew(self) -> None:
        """Renew every row of this pod, after removing those of streams that closed."""
        if self._closing:
            await self._remove(list(self._closing))

        async def work(session: AsyncConnection) -> None:
            await session.execute(
                update(player_presence)
                .where(player_presence.c.holder == self.holder)
                .values(expires_us=now_us() + LEASE_US)
            )

        await self.database.transaction(work)

    async def run(self, interval: float = RENEW_SECONDS) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await self.renew()
            except Exception as error:
                _log.warning("renewing streams' presence failed", error=str(error)[:300])

    async def release(self) -> None:
        """This pod stops: its rows go (its streams were ended)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

        async def work(session: AsyncConnection) -> None:
            await session.execute(
                delete(player_presence).where(player_presence.c.holder == self.holder)
            )

        try:
            await self.database.transaction(work)
        except Exception as error:
            _log.warning("streams' presence left to expire", error=str(error)[:200])

    @staticmethod
    async def present(session: AsyncConnection, player_ids: Iterable[str], now: int) -> set[str]:
        """Those of ``player_ids`` with a stream open on some pod now."""
        wanted = sorted(set(player_ids))
        if not wanted:
            return set()
        c = player_presence.c
        rows = await session.scalars(
            select(c.player_id).distinct().where(c.player_id.in_(wanted), c.expires_us > now)
        )
        return set(rows)

    @staticmethod
    async def prune(session: AsyncConnection, now: int) -> None:
        """Forget the rows whose lease ran out (their pods died)."""
        await session.execute(delete(player_presence).where(player_presence.c.expires_us <= now))


__all__ = ["LEASE_US", "RENEW_SECONDS", "StreamPresence", "holder_name"]
