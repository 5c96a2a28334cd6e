"""The tables the lobby made (``lobby_tables``): private tables' invite codes, and where each
table came from (hosted, quick match, tournament). The table service holds the tables
themselves; the lobby keeps what it needs to find them.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.models import tables
from okey101.lobby.records import TableEntry, now_us
from okey101.platform.database import Database, insert_ignoring_conflicts


class Directory:
    """The table directory (module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def record(self, entry: TableEntry, *, session: AsyncConnection | None = None) -> None:
        """Remember a table the lobby made (again: nothing changes), in ``session``'s
        transaction if given."""
        values = {**entry.__dict__, "created_us": now_us()}

        async def work(session: AsyncConnection) -> None:
            await session.execute(
                insert_ignoring_conflicts(tables, self.database.dialect).values(**values)
            )

        if session is not None:
            await work(session)
        else:
            await self.database.transaction(work)

    async def table_by_invite(self, invite_code: str) -> str | None:
        async with self.database.read() as session:
            found = (
                await session.execute(
                    select(tables.c.table_id).where(tables.c.invite_code == invite_code)
                )
            ).scalar_one_or_none()
        return None if found is None else str(found)


__all__ = ["Directory"]
