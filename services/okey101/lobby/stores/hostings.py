"""HostTable calls not yet done (``lobby_hostings``): the two table service requests each makes
(create the table, seat the host), kept from before the first is sent until the call's answer is
stored, so any pod can finish a call whose pod or caller went away (``lobby.hosting_finisher``).
"""

from __future__ import annotations

from typing import TypeVar

from google.protobuf.message import Message
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.models import hostings
from okey101.lobby.records import Hosting, now_us
from okey101.lobby.stores.answers import ANSWERS
from okey101.platform.database import Database, insert_ignoring_conflicts
from okey101.platform.idempotency import CallKey, Once

_M = TypeVar("_M", bound=Message)


class Hostings:
    """HostTable calls owed (module docstring), keyed by the derived request id of their
    CreateTable."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def begin(self, create_request_id: str, create: bytes, sit: bytes) -> None:
        """Keep a HostTable's two table service requests until it is done (``end``)."""

        async def work(session: AsyncConnection) -> None:
            await session.execute(
                insert_ignoring_conflicts(hostings, self.database.dialect).values(
                    create_request_id=create_request_id,
                    create_request=create,
                    sit_request=sit,
                    created_us=now_us(),
                )
            )

        await self.database.transaction(work)

    async def end(self, create_request_id: str) -> None:
        async def work(session: AsyncConnection) -> None:
            await session.execute(
                delete(hostings).where(hostings.c.create_request_id == create_request_id)
            )

        await self.database.transaction(work)

    async def finish(self, create_request_id: str, call: Once[CallKey, _M], answer: _M) -> None:
        """Keep the HostTable's ``answer`` (a retry gets it; the first stored answer wins) and
        end its hosting, in one transaction."""

        async def work(session: AsyncConnection) -> None:
            await ANSWERS.settle(session, call, answer)
            await session.execute(
                delete(hostings).where(hostings.c.create_request_id == create_request_id)
            )

        await self.database.transaction(work)

    async def unfinished(self, begun_before_us: int, limit: int) -> list[Hosting]:
        """HostTable calls begun before ``begun_before_us`` and not yet done, oldest first."""
        async with self.database.read() as session:
            rows = (
                await session.execute(
                    select(hostings.c.create_request, hostings.c.sit_request)
                    .where(hostings.c.created_us < begun_before_us)
                    .order_by(hostings.c.created_us)
                    .limit(limit)
                )
            ).all()
        return [Hosting(bytes(row.create_request), bytes(row.sit_request)) for row in rows]

    @staticmethod
    async def prune(session: AsyncConnection, before_us: int) -> None:
        """Forget calls begun before ``before_us`` that were never done."""
        await session.execute(delete(hostings).where(hostings.c.created_us < before_us))


__all__ = ["Hostings"]
