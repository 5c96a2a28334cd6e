"""Quick-match tickets (``lobby_queue``): a player's place in a queue (a preset and a stake) until
a matcher seats them (``lobby.matchmaker``).

A partial unique index keeps a player in one queue at a time: joining again returns the ticket
held, and two joins racing are answered with the one ticket. Matchers claim the oldest waiting
tickets with ``FOR UPDATE SKIP LOCKED`` in the transaction that makes their table, so any number
of pods share one queue and never claim a ticket twice; a LeaveQuickMatch racing a match waits
for the claim and then finds its ticket matched.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from google.protobuf.message import Message
from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby import bracket
from okey101.lobby.credentials import new_id
from okey101.lobby.errors import Denied, Missing
from okey101.lobby.models import queue
from okey101.lobby.records import (
    CANCELLED,
    MATCHED,
    US,
    WAITING,
    PlayerRow,
    Ticket,
    TicketStatus,
    now_us,
)
from okey101.lobby.stores.answers import ANSWERS
from okey101.platform.database import Database, row_mapping
from okey101.platform.idempotency import CallKey, Once

_M = TypeVar("_M", bound=Message)


def _ticket(row: Any) -> Ticket:
    data = row_mapping(row)
    return Ticket(**{name: data[name] for name in Ticket.__dataclass_fields__})


class QuickMatchQueue:
    """The quick-match queues, one per preset and stake (module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def join(
        self,
        player: PlayerRow,
        preset: str,
        stake: int,
        wait_seconds: float,
        call: Once[CallKey, _M],
        respond: Callable[[TicketStatus], _M],
    ) -> _M:
        """The player's waiting ticket (a new one in the queue of ``preset`` and ``stake`` if
        none is held)."""

        async def work(session: AsyncConnection) -> _M:
            stored = await ANSWERS.claim(session, call)
            if stored is not None:
                return stored
            held = (
                await session.execute(
                    select(queue).where(
                        queue.c.player_id == player.player_id, queue.c.state == WAITING
                    )
                )
            ).one_or_none()
            if held is not None:
                ticket = _ticket(held)
            else:
                now = now_us()
                ticket = Ticket(
                    ticket_id=new_id("q"),
                    player_id=player.player_id,
                    display_name=player.display_name,
                    preset=preset,
                    state=WAITING,
                    enqueue_us=now,
                    bots_fill_us=now + int(wait_seconds * US),
                    table_id=None,
                    seat=None,
                    stake=stake,
                )
                await session.execute(queue.insert().values(**ticket.__dict__, updated_us=now))
            waiting = await self._waiting(session, ticket)
            answer = respond(TicketStatus(ticket, waiting))
            await ANSWERS.remember(session, call, answer)
            return answer

        try:
            return await self.database.transaction(work)
        except IntegrityError:
            # The same player joined twice at once: the other call made the ticket.
            return await self.database.transaction(work)

    async def _waiting(self, session: AsyncConnection, ticket: Ticket) -> int:
        """How many tickets wait in ``ticket``'s queue."""
        return int(
            (
                await session.execute(
                    select(func.count())
                    .select_from(queue)
                    .where(
                        queue.c.preset == ticket.preset,
                        queue.c.stake == ticket.stake,
                        queue.c.state == WAITING,
                    )
                )
            ).scalar_one()
        )

    @staticmethod
    async def _own_ticket(
        session: AsyncConnection, ticket_id: str, player_id: str, *, lock: bool = False
    ) -> Ticket:
        """The player's ticket ``ticket_id`` (NOT_FOUND, or PERMISSION_DENIED for another's),
        locked for this transaction if ``lock``."""
        query = select(queue).where(queue.c.ticket_id == ticket_id)
        row = (await session.execute(query.with_for_update() if lock else query)).one_or_none()
        if row is None:
            raise Missing("TICKET_NOT_FOUND", ticket_id=ticket_id)
        ticket = _ticket(row)
        if ticket.player_id != player_id:
            raise Denied("NOT_YOUR_TICKET", ticket_id=ticket_id)
        return ticket

    async def status(self, ticket_id: str, player_id: str) -> TicketStatus:
        """The player's ticket ``ticket_id``."""
        async with self.database.read() as session:
            ticket = await self._own_ticket(session, ticket_id, player_id)
            waiting = await self._waiting(session, ticket)
        return TicketStatus(ticket, waiting)

    async def waiting_ticket(self, player_id: str) -> TicketStatus | None:
        """The ticket ``player_id`` waits with, if any (a player waits in one queue at most)."""
        async with self.database.read() as session:
            row = (
                await session.execute(
                    select(queue).where(queue.c.player_id == player_id, queue.c.state == WAITING)
                )
            ).first()
            if row is None:
                return None
            ticket = _ticket(row)
            return TicketStatus(ticket, await self._waiting(session, ticket))

    async def leave(self, ticket_id: str, player_id: str) -> TicketStatus:
        """Cancel a waiting ticket (a matched one stays matched)."""

        async def work(session: AsyncConnection) -> TicketStatus:
            ticket = await self._own_ticket(session, ticket_id, player_id, lock=True)
            if ticket.state == WAITING:
                await session.execute(
                    update(queue)
                    .where(queue.c.ticket_id == ticket_id)
                    .values(state=CANCELLED, updated_us=now_us())
                )
                ticket = dataclasses.replace(ticket, state=CANCELLED)
            return TicketStatus(ticket, await self._waiting(session, ticket))

        return await self.database.transaction(work)

    async def states_of(self, ticket_ids: Sequence[str]) -> dict[str, tuple[str, str | None]]:
        """Each of ``ticket_ids``' state and the table it was matched to (if it was)."""
        async with self.database.read() as session:
            found = await session.execute(
                select(queue.c.ticket_id, queue.c.state, queue.c.table_id).where(
                    queue.c.ticket_id.in_(ticket_ids)
                )
            )
            return {str(ticket): (str(state), table) for ticket, state, table in found}

    async def ready_queues(self) -> list[tuple[str, int]]:
        """The queues (preset, stake) with a group ready: four waiting, or one past its
        bots-fill time."""
        now = now_us()
        async with self.database.read() as session:
            found = await session.execute(
                select(queue.c.preset, queue.c.stake, func.count(), func.min(queue.c.bots_fill_us))
                .where(queue.c.state == WAITING)
                .group_by(queue.c.preset, queue.c.stake)
            )
            return [
                (str(preset), int(stake))
                for preset, stake, count, fill in found
                if count >= bracket.SEATS or fill <= now
            ]

    async def claim_group(
        self, session: AsyncConnection, preset: str, stake: int = 0
    ) -> list[Ticket]:
        """The oldest waiting tickets of the queue of ``preset`` and ``stake`` (four at
        most), locked for this transaction; tickets another pod holds are skipped (``FOR UPDATE
        SKIP LOCKED``)."""
        found = await session.execute(
            select(queue)
            .where(queue.c.preset == preset, queue.c.stake == stake, queue.c.state == WAITING)
            .order_by(queue.c.enqueue_us, queue.c.ticket_id)
            .limit(bracket.SEATS)
            .with_for_update(skip_locked=True)
        )
        return [_ticket(row) for row in found]

    @staticmethod
    async def cancel(session: AsyncConnection, ticket_ids: Sequence[str]) -> None:
        """Cancel waiting tickets (their players cannot cover their queue's stake)."""
        await session.execute(
            update(queue)
            .where(queue.c.ticket_id.in_(ticket_ids), queue.c.state == WAITING)
            .values(state=CANCELLED, updated_us=now_us())
        )

    async def mark_matched(
        self, session: AsyncConnection, seated: Sequence[tuple[Ticket, int]], table_id: str
    ) -> None:
        now = now_us()
        for ticket, seat in seated:
            await session.execute(
                update(queue)
                .where(queue.c.ticket_id == ticket.ticket_id)
                .values(state=MATCHED, table_id=table_id, seat=seat, updated_us=now)
            )


__all__ = ["QuickMatchQueue"]
