"""The table service's other reads and writes: listings, hand records, the event log read
back, new tables, timers nobody holds, the outbox to scoring and pod liveness.

A change to a table is written by the journal (``journal``), one round trip per change, and
stored answers are looked up by ``answers``; this store is everything else, through SQLAlchemy
Core: calls that are not on a move's path.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final, TypeVar

from okey.v1 import common_pb2
from sqlalchemy import and_, func, or_, select, true, update
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.platform.database import (
    Database,
    insert_ignoring_conflicts,
    outage_as,
    row_mapping,
)
from okey101.table import answers, models
from okey101.table.answers import AnswerColumns
from okey101.table.errors import NotReady
from okey101.table.journal import EventRow
from okey101.table.records import TableRecord

_T = TypeVar("_T")
_PRIVATE: Final = (
    models.events.c.private_0,
    models.events.c.private_1,
    models.events.c.private_2,
    models.events.c.private_3,
)


class TableStore:
    """The table service's reads and writes (module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.postgres = database.dialect == "postgresql"

    # A database that cannot be reached (restarting, a connection cut) is UNAVAILABLE
    # DATABASE_UNAVAILABLE to callers, who retry with the same request id; never INTERNAL.

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[AsyncConnection]:
        with outage_as(NotReady):
            async with self.database.read() as session:
                yield session

    async def _transaction(self, work: Callable[[AsyncConnection], Awaitable[_T]]) -> _T:
        with outage_as(NotReady):
            return await self.database.transaction(work)

    # ----------------------------------------------------------------------------------------
    # Reads

    async def load(self, table_id: str) -> TableRecord | None:
        async with self._read() as session:
            row = (
                await session.execute(
                    select(models.tables).where(models.tables.c.table_id == table_id)
                )
            ).first()
        return None if row is None else TableRecord.from_row(row_mapping(row))

    async def events_after(
        self, table_id: str, after: int, *, limit: int = 500, hand_id: str | None = None
    ) -> list[EventRow]:
        query = select(
            models.events.c.sequence,
            models.events.c.state_version,
            models.events.c.kind,
            models.events.c.hand_id,
            models.events.c.public,
            *_PRIVATE,
        ).where(models.events.c.table_id == table_id, models.events.c.sequence > after)
        if hand_id is not None:
            query = query.where(models.events.c.hand_id == hand_id)
        query = query.order_by(models.events.c.sequence).limit(limit)
        async with self._read() as session:
            rows = (await session.execute(query)).all()
        return [_stored(row) for row in rows]

    async def list_tables(
        self,
        *,
        preset: str | None,
        states: Sequence[int],
        visibility: int | None,
        tournament_id: str | None,
        player_id: str | None,
        after: tuple[int, str] | None,
        limit: int,
    ) -> list[TableRecord]:
        c = models.tables.c
        query = select(models.tables)
        if preset:
            query = query.where(c.preset == preset)
        if states:
            query = query.where(c.state.in_(list(states)))
        if visibility is not None:
            query = query.where(c.visibility == visibility)
        if tournament_id:
            query = query.where(c.tournament_id == tournament_id)
        if player_id:
            # A cheap filter in SQL; the exact check (a seat held) is made on the records.
            query = query.where(c.seats.contains(json.dumps(player_id)))
        if after is not None:
            created, table_id = after
            query = query.where(
                or_(c.created_us < created, and_(c.created_us == created, c.table_id < table_id))
            )
        query = query.order_by(c.created_us.desc(), c.table_id.desc()).limit(limit)
        async with self._read() as session:
            rows = (await session.execute(query)).all()
        records = [TableRecord.from_row(row_mapping(row)) for row in rows]
        if player_id:
            records = [record for record in records if record.played_by(player_id)]
        return records

    async def hand(self, hand_id: str) -> Mapping[str, Any] | None:
        async with self._read() as session:
            row = (
                await session.execute(select(models.hands).where(models.hands.c.hand_id == hand_id))
            ).first()
        return None if row is None else dict(row._mapping)

    async def moves(self, hand_id: str) -> list[Mapping[str, Any]]:
        async with self._read() as session:
            rows = (
                await session.execute(
                    select(models.moves)
                    .where(models.moves.c.hand_id == hand_id)
                    .order_by(models.moves.c.sequence, models.moves.c.action_index)
                )
            ).all()
        return [dict(row._mapping) for row in rows]

    # ----------------------------------------------------------------------------------------
    # Writes

    async def create(self, record: TableRecord, answer: AnswerColumns) -> bool:
        """Insert a new table (its record's row, its first timer included: a full table's
        start) and the answer to its request (``answers.row``); False if the request id was
        answered already (by a racing retry)."""

        async def work(session: AsyncConnection) -> bool:
            if not await answers.claim(session, answer):
                return False
            await session.execute(models.tables.insert().values(**record.to_row()))
            return True

        return await self._transaction(work)

    # ----------------------------------------------------------------------------------------
    # Timers

    async def revision(self, table_id: str) -> int | None:
        """The table's revision in the database (None: no such table)."""
        async with self._read() as session:
            value = await session.scalar(
                select(models.tables.c.revision).where(models.tables.c.table_id == table_id)
            )
        return None if value is None else int(value)

    async def claim_due(self, now_us: int, pod: str, lease_us: int, limit: int) -> list[str]:
        """Claim up to ``limit`` due timers no pod holds any more (the pod that set each holds
        it until its due time plus its lease, and runs it from memory); their table ids. On
        PostgreSQL rows another pod is claiming are skipped (SKIP LOCKED), never waited for. A
        claim changes no revision: the step it runs is a change like any other."""
        c = models.tables.c

        async def work(session: AsyncConnection) -> list[str]:
            query = (
                select(c.table_id)
                .where(
                    c.timer_due_us <= now_us,
                    or_(c.timer_claimed_until_us.is_(None), c.timer_claimed_until_us < now_us),
                )
                .order_by(c.timer_due_us)
                .limit(limit)
            )
            if self.postgres:
                query = query.with_for_update(skip_locked=True)
            ids = list((await session.scalars(query)).all())
            if ids:
                await session.execute(
                    update(models.tables)
                    .where(c.table_id.in_(ids))
                    .values(timer_claimed_until_us=now_us + lease_us, timer_claimed_by=pod)
                )
            return ids

        return await self._transaction(work)

    async def next_due_us(self) -> int | None:
        """When the next timer of any table is due (None: no table has one)."""
        async with self._read() as session:
            value = await session.scalar(select(func.min(models.tables.c.timer_due_us)))
        return None if value is None else int(value)

    async def postpone_timer(self, table_id: str, due_us: int) -> None:
        """Give a table's timer back to every pod, due again at ``due_us`` (its step failed
        here; whichever pod is free then tries again)."""

        async def work(session: AsyncConnection) -> None:
            c = models.tables.c
            await session.execute(
                update(models.tables)
                .where(c.table_id == table_id, c.timer_kind.is_not(None))
                .values(timer_due_us=due_us, timer_claimed_until_us=None, timer_claimed_by="")
            )

        await self._transaction(work)

    async def mark_alive(self, now_us: int, outage_us: int, *, starting: bool) -> int:
        """Record that a pod is alive at ``now_us``. A pod ``starting`` that finds no pod was
        alive for longer than ``outage_us`` pushes every turn deadline back by that gap (time
        with no table pod alive is not charged to players) and returns the gap; else 0. Only a
        starting pod can see an outage: a pod that was running all along was alive."""

        async def work(session: AsyncConnection) -> int:
            query = select(models.liveness.c.alive_us).where(models.liveness.c.id == 1)
            if self.postgres:
                query = query.with_for_update()
            last = await session.scalar(query)
            if last is None:
                await session.execute(
                    insert_ignoring_conflicts(models.liveness, self.database.dialect).values(
                        id=1, alive_us=now_us
                    )
                )
                return 0
            gap = now_us - int(last)
            await session.execute(
                update(models.liveness).where(models.liveness.c.id == 1).values(alive_us=now_us)
            )
            if not starting or gap <= outage_us:
                return 0
            c = models.tables.c
            await session.execute(
                update(models.tables)
                .where(c.timer_kind == "turn")
                .values(timer_due_us=c.timer_due_us + gap)
            )
            await session.execute(
                update(models.tables)
                .where(c.turn_deadline_us.is_not(None))
                .values(turn_deadline_us=c.turn_deadline_us + gap)
            )
            return gap

        return await self._transaction(work)

    # ----------------------------------------------------------------------------------------
    # Outbox

    async def claim_outbox(
        self, now_us: int, lease_us: int, limit: int, *, kinds: Sequence[str] = ()
    ) -> list[tuple[int, str, str, bytes, int]]:
        """Claim up to ``limit`` unsent rows that are due (of ``kinds``, if given), oldest
        first: (id, kind, key, payload, attempts before this one). Claimed rows are not due again
        for ``lease_us``."""
        o = models.outbox.c

        async def work(session: AsyncConnection) -> list[tuple[int, str, str, bytes, int]]:
            query = (
                select(o.id, o.kind, o.key, o.payload, o.attempts)
                .where(o.sent_us.is_(None), o.next_attempt_us <= now_us)
                .where(o.kind.in_(list(kinds)) if kinds else true())
                .order_by(o.id)
                .limit(limit)
            )
            if self.postgres:
                query = query.with_for_update(skip_locked=True)
            rows = (await session.execute(query)).all()
            if rows:
                await session.execute(
                    update(models.outbox)
                    .where(o.id.in_([row.id for row in rows]))
                    .values(next_attempt_us=now_us + lease_us, attempts=o.attempts + 1)
                )
            return [(row.id, row.kind, row.key, bytes(row.payload), row.attempts) for row in rows]

        return await self._transaction(work)

    async def outbox_sent(self, row_ids: Sequence[int], now_us: int) -> None:
        """The rows ``row_ids`` were acknowledged."""

        async def work(session: AsyncConnection) -> None:
            await session.execute(
                update(models.outbox)
                .where(models.outbox.c.id.in_(list(row_ids)))
                .values(sent_us=now_us)
            )

        await self._transaction(work)

    async def outbox_failed_all(self, row_ids: list[int], retry_us: int, error: str) -> None:
        """``outbox_failed`` for several rows at once."""

        async def work(session: AsyncConnection) -> None:
            await session.execute(
                update(models.outbox)
                .where(models.outbox.c.id.in_(row_ids), models.outbox.c.sent_us.is_(None))
                .values(next_attempt_us=retry_us, last_error=error[:500])
            )

        await self._transaction(work)

    async def outbox_failed(self, row_id: int, retry_us: int, error: str) -> None:
        async def work(session: AsyncConnection) -> None:
            await session.execute(
                update(models.outbox)
                .where(models.outbox.c.id == row_id)
                .values(next_attempt_us=retry_us, last_error=error[:500])
            )

        await self._transaction(work)

    async def outbox_delivered(self, key: str) -> bool:
        """Scoring has acknowledged the outbox row ``key`` (a hand id or a match id), or no
        such row is owed."""
        o = models.outbox.c
        async with self._read() as session:
            row = (await session.execute(select(o.sent_us).where(o.key == key))).first()
        return row is None or row.sent_us is not None

    # ----------------------------------------------------------------------------------------
    # The watchdog's figures

    async def figures(self, now_us: int, stuck_us: int) -> tuple[int, int, int]:
        """(tables in play, outbox rows not yet acknowledged, tables whose timer is overdue
        by more than ``stuck_us``)."""
        async with self._read() as session:
            live = await session.scalar(
                select(func.count())
                .select_from(models.tables)
                .where(models.tables.c.state == common_pb2.TABLE_STATE_PLAYING)
            )
            backlog = await session.scalar(
                select(func.count())
                .select_from(models.outbox)
                .where(models.outbox.c.sent_us.is_(None))
            )
            stuck = await session.scalar(
                select(func.count())
                .select_from(models.tables)
                .where(models.tables.c.timer_due_us < now_us - stuck_us)
            )
        return int(live or 0), int(backlog or 0), int(stuck or 0)


def _stored(row: Any) -> EventRow:
    return EventRow(
        sequence=row.sequence,
        state_version=row.state_version,
        kind=row.kind,
        hand_id=row.hand_id,
        public=bytes(row.public),
        private=(
            _bytes_or_none(row.private_0),
            _bytes_or_none(row.private_1),
            _bytes_or_none(row.private_2),
            _bytes_or_none(row.private_3),
        ),
    )


def _bytes_or_none(value: Any) -> bytes | None:
    return None if value is None else bytes(value)
