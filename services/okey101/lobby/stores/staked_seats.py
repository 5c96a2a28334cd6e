"""Seats at staked tables not yet settled (``lobby_staked_seats``): the SitRequest of a player
whose stake the lobby has moved into a table's pot, kept from the transaction that holds the
stake until the table service gives its verdict on the sit, so the stake is neither left in the
pot of a seat never taken nor refunded for a seat that was (``lobby.staked_seats``).
"""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.models import staked_seats
from okey101.platform.database import Database, insert_ignoring_conflicts


class StakedSeats:
    """Sits owed at staked tables (module docstring), keyed by the stake's hold key."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def begin(self, session: AsyncConnection, hold_key: str, sit: bytes, now_us: int) -> None:
        """Keep ``sit`` (a SitRequest, its stake_hold_key set) owed, in the transaction that
        holds its stake."""
        await session.execute(
            insert_ignoring_conflicts(staked_seats, self.database.dialect).values(
                hold_key=hold_key, sit_request=sit, created_us=now_us
            )
        )

    @staticmethod
    async def end(session: AsyncConnection, hold_key: str) -> None:
        """The table service has given its verdict on the sit: nothing more is owed."""
        await session.execute(delete(staked_seats).where(staked_seats.c.hold_key == hold_key))

    async def unfinished(self, begun_before_us: int, limit: int) -> list[bytes]:
        """The SitRequests of seats begun before ``begun_before_us`` and still owed, oldest
        first."""
        async with self.database.read() as session:
            rows = (
                await session.execute(
                    select(staked_seats.c.sit_request)
                    .where(staked_seats.c.created_us < begun_before_us)
                    .order_by(staked_seats.c.created_us)
                    .limit(limit)
                )
            ).all()
        return [bytes(row.sit_request) for row in rows]


__all__ = ["StakedSeats"]
