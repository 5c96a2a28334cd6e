"""The table service's storage: one transaction per change, the event log, timers and the outbox.

Every change to a table (a move, a deal, someone sitting down) is a ``Change`` applied by
``TableStore.commit`` in one transaction that

1. locks the table's row and checks its ``state_version`` is the one the change was computed
   from (else ``Stale``: nothing is written);
2. numbers the change's events after the table's ``last_sequence`` and appends them to the log
   (the primary key (table, sequence) makes a double append impossible, even from two pods);
3. updates the row (the snapshot), advancing ``state_version`` if the change is a game change;
4. stores the answer to the request id, the moves, the hand rows, the outbox rows, and the
   table's timer, and, on PostgreSQL, sends ``NOTIFY okey101_table_events`` so watchers on every
   pod read the new events (delivered when the transaction commits, never before).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from okey.v1 import common_pb2
from sqlalchemy import and_, delete, func, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.platform.database import (
    Database,
    insert_ignoring_conflicts,
    outage_as,
    row_mapping,
    upsert,
)
from okey101.table import models
from okey101.table.errors import NotReady, Stale
from okey101.table.records import SeatRecord, TableRecord, seats_from_json

NOTIFY_CHANNEL: Final = "okey101_table_events"
_T = TypeVar("_T")
_PRIVATE: Final = (
    models.events.c.private_0,
    models.events.c.private_1,
    models.events.c.private_2,
    models.events.c.private_3,
)


@dataclass
class EventDraft:
    """An event before it is numbered: everyone's copy, and each seat's private extra."""

    event: common_pb2.Event
    private: dict[int, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class StoredEvent:
    """An event as the log holds it."""

    sequence: int
    state_version: int
    kind: int
    hand_id: str
    public: bytes
    private: tuple[bytes | None, ...]

    def for_viewer(self, seat: int | None) -> common_pb2.Event:
        """The copy ``seat`` may see (a spectator's for None): protobuf merges the seat's
        private fields into the public message."""
        extra = self.private[seat] if seat is not None else None
        return common_pb2.Event.FromString(self.public + extra if extra else self.public)


@dataclass(frozen=True)
class Move:
    seat: int
    action: bytes
    source: int
    #: The draft of the first event the call caused (the move is filed under its number).
    first_event: EventDraft
    action_index: int


@dataclass(frozen=True)
class TimerSet:
    kind: str
    due_us: int


@dataclass
class Change:
    """Everything one transaction writes for a table (see the module docstring)."""

    table_id: str
    #: The state_version the change was computed from; None for a change that does not depend
    #: on it.
    expected_version: int | None
    #: A game change (deal, move, hand end) advances state_version; presence does not.
    game: bool
    now_us: int
    drafts: list[EventDraft] = field(default_factory=list)
    #: Columns of ``table_tables`` to set.
    updates: dict[str, Any] = field(default_factory=dict)
    #: (caller, method, request id) and a function of the numbered events giving the answer.
    answer: tuple[str, str, str, Callable[[Sequence[StoredEvent]], bytes]] | None = None
    hand_id: str = ""
    moves: list[Move] = field(default_factory=list)
    hand_insert: dict[str, Any] | None = None
    hand_update: dict[str, Any] | None = None
    outbox: list[tuple[str, str, bytes]] = field(default_factory=list)
    #: The table's timer: a new one, None to delete it, or unchanged when ``keep_timer``.
    timer: TimerSet | None = None
    keep_timer: bool = False
    #: A presence change (seats) is computed from the table as of this sequence number: it
    #: must not overwrite a presence change made since (two players sitting at once).
    expected_sequence: int | None = None
    #: Called in the transaction, with the seats as they are now, before anything is written:
    #: what depends on who holds the seats (a move's next timer, a player back from away) is
    #: decided there, so a presence change that raced the move is never undone by it.
    finalize: Callable[[tuple[SeatRecord, ...]], None] | None = None

    @classmethod
    def presence(cls, record: TableRecord, now_us: int, *, keep_timer: bool = True) -> Change:
        """A presence change (seats, not the game) computed from ``record``: it keeps the
        table's timer unless told otherwise, and applies only if no other presence change
        came first."""
        return cls(
            record.table_id,
            record.state_version,
            game=False,
            now_us=now_us,
            keep_timer=keep_timer,
            expected_sequence=record.last_sequence,
        )


@dataclass(frozen=True)
class Committed:
    events: tuple[StoredEvent, ...]
    state_version: int
    last_sequence: int
    answer: bytes | None


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

    async def load_for_request(
        self, table_id: str, caller: str, method: str, request_id: str
    ) -> tuple[TableRecord | None, tuple[str, bytes] | None]:
        """``load`` and ``answer`` in one read (the two every move starts with)."""
        async with self._read() as session:
            row = (
                await session.execute(
                    select(models.tables).where(models.tables.c.table_id == table_id)
                )
            ).first()
            found = (
                await session.execute(
                    select(models.requests.c.table_id, models.requests.c.response).where(
                        models.requests.c.caller == caller,
                        models.requests.c.method == method,
                        models.requests.c.request_id == request_id,
                    )
                )
            ).first()
        record = None if row is None else TableRecord.from_row(row_mapping(row))
        return record, None if found is None else (found.table_id, bytes(found.response))

    async def answer(self, caller: str, method: str, request_id: str) -> tuple[str, bytes] | None:
        """The table and the answer stored for a request id, if it was answered."""
        async with self._read() as session:
            found = (
                await session.execute(
                    select(models.requests.c.table_id, models.requests.c.response).where(
                        models.requests.c.caller == caller,
                        models.requests.c.method == method,
                        models.requests.c.request_id == request_id,
                    )
                )
            ).first()
        return None if found is None else (found.table_id, bytes(found.response))

    async def events_after(
        self, table_id: str, after: int, *, limit: int = 500, hand_id: str | None = None
    ) -> list[StoredEvent]:
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

    async def create(
        self,
        row: Mapping[str, Any],
        answer: tuple[str, str, str, bytes],
        timer: TimerSet | None = None,
    ) -> bool:
        """Insert a new table, the answer to its request and its first timer (a full table's
        start); False if the request id was answered already (by a racing retry)."""

        async def work(session: AsyncConnection) -> bool:
            caller, method, request_id, response = answer
            stored = await session.execute(
                insert_ignoring_conflicts(models.requests, self.database.dialect).values(
                    caller=caller,
                    method=method,
                    request_id=request_id,
                    table_id=row["table_id"],
                    response=response,
                    created_us=row["created_us"],
                )
            )
            if stored.rowcount == 0:
                return False
            await session.execute(models.tables.insert().values(**row))
            if timer is not None:
                await self._set_timer(session, row["table_id"], timer)
            return True

        return await self._transaction(work)

    async def commit(self, change: Change) -> Committed:
        """Apply ``change`` in one transaction (module docstring); ``Stale`` if the table's
        state_version is no longer ``change.expected_version``."""
        return await self._transaction(lambda session: self._commit(session, change))

    async def _commit(self, session: AsyncConnection, change: Change) -> Committed:
        c = models.tables.c
        locked = select(c.state_version, c.last_sequence, c.seats).where(
            c.table_id == change.table_id
        )
        if self.postgres:
            locked = locked.with_for_update()
        row = (await session.execute(locked)).one()
        version, sequence = row.state_version, row.last_sequence
        if change.expected_version is not None and version != change.expected_version:
            raise Stale("STALE_VERSION", version=change.expected_version, current=version)
        if change.expected_sequence is not None and sequence != change.expected_sequence:
            # Only presence changes check this; they are computed again by their callers.
            raise Stale("STALE_VERSION", version=version, current=version)
        if change.finalize is not None:
            change.finalize(seats_from_json(row.seats))
        if change.game:
            version += 1
        stored: list[StoredEvent] = []
        rows: list[dict[str, Any]] = []
        for draft in change.drafts:
            sequence += 1
            event = draft.event
            event.sequence = sequence
            event.state_version = version
            event.time.FromMicroseconds(change.now_us)
            public = event.SerializeToString()
            private = tuple(draft.private.get(seat) for seat in range(4))
            stored.append(
                StoredEvent(sequence, version, event.kind, event.hand_id, public, private)
            )
            rows.append(
                {
                    "table_id": change.table_id,
                    "sequence": sequence,
                    "state_version": version,
                    "kind": event.kind,
                    "hand_id": event.hand_id,
                    "time_us": change.now_us,
                    "public": public,
                    **{f"private_{seat}": private[seat] for seat in range(4)},
                }
            )
        if rows:
            await session.execute(models.events.insert(), rows)
        await session.execute(
            update(models.tables)
            .where(c.table_id == change.table_id)
            .values(
                **change.updates,
                state_version=version,
                last_sequence=sequence,
                updated_us=change.now_us,
            )
        )
        if change.hand_insert is not None:
            await session.execute(models.hands.insert().values(**change.hand_insert))
        if change.hand_update is not None:
            await session.execute(
                update(models.hands)
                .where(models.hands.c.hand_id == change.hand_update["hand_id"])
                .values(**{k: v for k, v in change.hand_update.items() if k != "hand_id"})
            )
        if change.moves:
            await session.execute(
                models.moves.insert(),
                [
                    {
                        "hand_id": change.hand_id,
                        "sequence": stored[_index_of(change.drafts, move.first_event)].sequence,
                        "action_index": move.action_index,
                        "seat": move.seat,
                        "action": move.action,
                        "source": move.source,
                        "time_us": change.now_us,
                    }
                    for move in change.moves
                ],
            )
        for kind, key, payload in change.outbox:
            await session.execute(
                insert_ignoring_conflicts(models.outbox, self.database.dialect).values(
                    table_id=change.table_id,
                    kind=kind,
                    key=key,
                    payload=payload,
                    created_us=change.now_us,
                    next_attempt_us=change.now_us,
                )
            )
        if not change.keep_timer:
            await self._set_timer(session, change.table_id, change.timer)
        answer: bytes | None = None
        if change.answer is not None:
            caller, method, request_id, respond = change.answer
            answer = respond(stored)
            await session.execute(
                models.requests.insert().values(
                    caller=caller,
                    method=method,
                    request_id=request_id,
                    table_id=change.table_id,
                    response=answer,
                    created_us=change.now_us,
                )
            )
        if self.postgres and stored:
            await session.execute(
                text("SELECT pg_notify(:channel, :payload)"),
                {"channel": NOTIFY_CHANNEL, "payload": f"{change.table_id} {sequence}"},
            )
        return Committed(tuple(stored), version, sequence, answer)

    async def _set_timer(
        self, session: AsyncConnection, table_id: str, timer: TimerSet | None
    ) -> None:
        if timer is None:
            await session.execute(delete(models.timers).where(models.timers.c.table_id == table_id))
            return
        # One statement: a move replaces the turn's timer, and every move sets one.
        await session.execute(
            upsert(
                models.timers,
                self.database.dialect,
                ("table_id",),
                {
                    "table_id": table_id,
                    "kind": timer.kind,
                    "due_us": timer.due_us,
                    "claimed_until_us": None,
                    "claimed_by": "",
                },
            )
        )

    # ----------------------------------------------------------------------------------------
    # Timers

    async def claim_due(self, now_us: int, pod: str, lease_us: int, limit: int) -> list[str]:
        """Claim up to ``limit`` due timers no live claim holds; their table ids. On
        PostgreSQL rows another pod is claiming are skipped (SKIP LOCKED), never waited for."""
        t = models.timers.c

        async def work(session: AsyncConnection) -> list[str]:
            query = (
                select(t.table_id)
                .where(
                    t.due_us <= now_us,
                    or_(t.claimed_until_us.is_(None), t.claimed_until_us < now_us),
                )
                .order_by(t.due_us)
                .limit(limit)
            )
            if self.postgres:
                query = query.with_for_update(skip_locked=True)
            ids = list((await session.scalars(query)).all())
            if ids:
                await session.execute(
                    update(models.timers)
                    .where(t.table_id.in_(ids))
                    .values(claimed_until_us=now_us + lease_us, claimed_by=pod)
                )
            return ids

        return await self._transaction(work)

    async def next_due_us(self) -> int | None:
        async with self._read() as session:
            value = await session.scalar(select(func.min(models.timers.c.due_us)))
        return None if value is None else int(value)

    async def postpone_timer(self, table_id: str, due_us: int) -> None:
        """Give a timer back, due again at ``due_us`` (its step failed; try again later)."""

        async def work(session: AsyncConnection) -> None:
            await session.execute(
                update(models.timers)
                .where(models.timers.c.table_id == table_id)
                .values(due_us=due_us, claimed_until_us=None, claimed_by="")
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
            t, c = models.timers.c, models.tables.c
            await session.execute(
                update(models.timers).where(t.kind == "turn").values(due_us=t.due_us + gap)
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
        self, now_us: int, lease_us: int, limit: int
    ) -> list[tuple[int, str, str, bytes, int]]:
        """Claim up to ``limit`` unsent rows that are due, oldest first: (id, kind, key,
        payload, attempts before this one). Claimed rows are not due again for ``lease_us``."""
        o = models.outbox.c

        async def work(session: AsyncConnection) -> list[tuple[int, str, str, bytes, int]]:
            query = (
                select(o.id, o.kind, o.key, o.payload, o.attempts)
                .where(o.sent_us.is_(None), o.next_attempt_us <= now_us)
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

    async def outbox_sent(self, row_id: int, now_us: int) -> None:
        async def work(session: AsyncConnection) -> None:
            await session.execute(
                update(models.outbox).where(models.outbox.c.id == row_id).values(sent_us=now_us)
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
                .select_from(models.timers)
                .where(models.timers.c.due_us < now_us - stuck_us)
            )
        return int(live or 0), int(backlog or 0), int(stuck or 0)


def _index_of(drafts: Sequence[EventDraft], draft: EventDraft) -> int:
    return next(index for index, item in enumerate(drafts) if item is draft)


def _stored(row: Any) -> StoredEvent:
    return StoredEvent(
        sequence=row.sequence,
        state_version=row.state_version,
        kind=row.kind,
        hand_id=row.hand_id,
        public=bytes(row.public),
        private=tuple(
            None if value is None else bytes(value)
            for value in (row.private_0, row.private_1, row.private_2, row.private_3)
        ),
    )
