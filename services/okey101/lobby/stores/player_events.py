"""Each player's own events (``lobby_player_events``), for WatchPlayer.

An event is appended in the transaction of the change that causes it (a quick-match ticket
matched, a tournament table started), so it exists if and only if the change committed. Events
are numbered per player, 1, 2, ... with no gaps: the number comes from the player's row in
``lobby_player_cursors``, taken by an upsert whose row lock orders a player's concurrent events
(a later transaction waits, then takes the next number) and which outlives the events
themselves, so a number is never given twice. On PostgreSQL the transaction also sends ``NOTIFY
okey101_player_events`` with the player id, delivered at commit to every lobby pod
(``platform.listener``); on SQLite (one process) the writer wakes its streams itself once it has
committed (``PlayerWakes``). A writer on this pod also hands the events it committed to its
streams (``PlayerWakes.committed``), which then send them without reading them back; the
notification names the player's last sequence, so this pod's own notifications wake nothing
again. Events are kept ``KEPT_US`` (24 hours). The kinds that go out as
push notifications (``push.outbox.PUSHED_KINDS``) also owe one to each of the player's devices,
enqueued in the same transaction (``PushOutbox.enqueue``).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Iterable, Sequence
from typing import Final

from okey.v1 import lobby_pb2
from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.models import player_cursors, player_events, push_devices
from okey101.lobby.push.outbox import PUSHED_KINDS, PushOutbox
from okey101.lobby.records import US, now_us
from okey101.platform.database import Database, dialect_insert

#: The channel a committed event is announced on (its payload: the player id).
NOTIFY_CHANNEL: Final = "okey101_player_events"
#: How long events are kept.
KEPT_US: Final = 24 * 3600 * US
#: Streams' reads (``after``) at once: fewer than the pool's connections (10), so that a
#: notification waking a hundred streams queues their reads here rather than opening and
#: closing the pool's overflow connections for them.
READS_AT_ONCE: Final = 8
#: A watched player's events kept in memory for their streams here (``PlayerWakes.recent``).
RECENT_KEPT: Final = 32


class PlayerEvents:
    """Players' events: appended with their cause, read back by sequence (module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database
        #: This process's open streams, woken by the writers once they have committed.
        self.wakes = PlayerWakes()
        self._reads = asyncio.Semaphore(READS_AT_ONCE)

    async def append(
        self,
        session: AsyncConnection,
        player_id: str,
        event: lobby_pb2.PlayerEvent,
        *,
        cause: str | None = None,
    ) -> int | None:
        """Append ``event`` to ``player_id``'s events in ``session``'s transaction: its sequence
        number (set on ``event``, with its time if unset). With ``cause`` (what made it, for an
        event another service records) it is appended once: None if it was already."""
        if cause is not None:
            known = await session.scalar(
                select(player_events.c.sequence).where(player_events.c.cause == cause)
            )
            if known is not None:
                return None
        cursors = player_cursors.c
        numbered = (
            dialect_insert(player_cursors, self.database.dialect)
            .values(player_id=player_id, last_sequence=1)
            .on_conflict_do_update(
                index_elements=["player_id"], set_={"last_sequence": cursors.last_sequence + 1}
            )
            .returning(cursors.last_sequence)
        )
        sequence = int((await session.execute(numbered)).scalar_one())
        event.sequence = sequence
        if not event.HasField("time"):
            event.time.FromMicroseconds(now_us())
        await session.execute(
            player_events.insert().values(
                player_id=player_id,
                sequence=sequence,
                kind=event.kind,
                time_us=event.time.ToMicroseconds(),
                event=event.SerializeToString(),
                cause=cause,
            )
        )
        if event.kind in PUSHED_KINDS:
            await PushOutbox.enqueue(session, player_id, event)
        if self.database.dialect == "postgresql":
            await session.execute(select(func.pg_notify(NOTIFY_CHANNEL, player_id)))
        return sequence

    async def append_many(
        self,
        session: AsyncConnection,
        records: Sequence[tuple[str, lobby_pb2.PlayerEvent, str]],
    ) -> list[str]:
        """``append`` for many (player, event, cause) at once, in a few statements whatever
        their number: the causes already recorded are skipped (and a cause repeated within
        ``records`` taken once); each player's events are numbered in the order given; the
        players' cursor rows are taken in player order (as every writer takes them). The
        players told, each once."""
        c = player_events.c
        causes = [cause for _player, _event, cause in records]
        known = set((await session.scalars(select(c.cause).where(c.cause.in_(causes)))).all())
        fresh: list[tuple[str, lobby_pb2.PlayerEvent, str]] = []
        for player_id, event, cause in records:
            if cause not in known:
                known.add(cause)
                fresh.append((player_id, event, cause))
        if not fresh:
            return []
        counts = collections.Counter(player_id for player_id, _event, _cause in fresh)
        players = sorted(counts)
        insert = dialect_insert(player_cursors, self.database.dialect)
        numbered = (
            insert.values([{"player_id": p, "last_sequence": counts[p]} for p in players])
            .on_conflict_do_update(
                index_elements=["player_id"],
                set_={
                    "last_sequence": player_cursors.c.last_sequence + insert.excluded.last_sequence
                },
            )
            .returning(player_cursors.c.player_id, player_cursors.c.last_sequence)
        )
        last = {row.player_id: int(row.last_sequence) for row in await session.execute(numbered)}
        following = {player: last[player] - counts[player] + 1 for player in players}
        now = now_us()
        rows = []
        for player_id, event, cause in fresh:
            event.sequence = following[player_id]
            following[player_id] += 1
            if not event.HasField("time"):
                event.time.FromMicroseconds(now)
            rows.append(
                {
                    "player_id": player_id,
                    "sequence": event.sequence,
                    "kind": event.kind,
                    "time_us": event.time.ToMicroseconds(),
                    "event": event.SerializeToString(),
                    "cause": cause,
                }
            )
        await session.execute(player_events.insert(), rows)
        pushed = [(player, event) for player, event, _cause in fresh if event.kind in PUSHED_KINDS]
        if pushed:
            with_devices = set(
                (
                    await session.scalars(
                        select(push_devices.c.player_id)
                        .where(push_devices.c.player_id.in_({player for player, _ in pushed}))
                        .distinct()
                    )
                ).all()
            )
            for player_id, event in pushed:
                if player_id in with_devices:
                    await PushOutbox.enqueue(session, player_id, event)
        if self.database.dialect == "postgresql":  # one round trip for every player told
            await session.execute(
                select(*(func.pg_notify(NOTIFY_CHANNEL, f"{p}:{last[p]}") for p in players))
            )
        return players

    async def after(
        self, player_id: str, sequence: int, *, limit: int = 100
    ) -> list[lobby_pb2.PlayerEvent]:
        """``player_id``'s events after ``sequence``, in order (at most ``limit``)."""
        c = player_events.c
        async with self._reads, self.database.read() as session:
            rows = (
                await session.execute(
                    select(c.event)
                    .where(c.player_id == player_id, c.sequence > sequence)
                    .order_by(c.sequence)
                    .limit(limit)
                )
            ).all()
        return [lobby_pb2.PlayerEvent.FromString(bytes(row.event)) for row in rows]

    async def of_kinds(
        self, player_id: str, kinds: Iterable[int], *, up_to: int
    ) -> list[lobby_pb2.PlayerEvent]:
        """``player_id``'s kept events of ``kinds`` up to sequence ``up_to``, in order."""
        c = player_events.c
        async with self.database.read() as session:
            rows = (
                await session.execute(
                    select(c.event)
                    .where(
                        c.player_id == player_id,
                        c.sequence <= up_to,
                        c.kind.in_([int(kind) for kind in kinds]),
                    )
                    .order_by(c.sequence)
                )
            ).all()
        return [lobby_pb2.PlayerEvent.FromString(bytes(row.event)) for row in rows]

    async def bounds(self, player_id: str) -> tuple[int, int]:
        """(the oldest sequence number kept, 0 for none; the last one given, 0 for none)."""
        async with self.database.read() as session:
            oldest = await session.scalar(
                select(func.min(player_events.c.sequence)).where(
                    player_events.c.player_id == player_id
                )
            )
            last = await session.scalar(
                select(player_cursors.c.last_sequence).where(
                    player_cursors.c.player_id == player_id
                )
            )
        return int(oldest or 0), int(last or 0)

    @staticmethod
    async def prune(session: AsyncConnection, before_us: int) -> None:
        """Forget the events older than ``before_us`` (their numbers stay given)."""
        await session.execute(delete(player_events).where(player_events.c.time_us < before_us))


class PlayerWakes:
    """This process's open WatchPlayer streams, woken when their player has a new event: by the
    writer once it has committed, or by a notification from another pod (or this one).

    A writer here that hands over what it committed (``committed``) lets the streams send it
    from memory (``recent``): the last ``RECENT_KEPT`` events of each watched player, kept only
    while they run on from one sequence to the next. Anything else (an event another pod
    wrote, a gap, a stream further behind) is read from the database, as before."""

    def __init__(self) -> None:
        self._events: dict[str, asyncio.Event] = {}
        self._watching: dict[str, int] = {}
        self._recent: dict[str, collections.deque[lobby_pb2.PlayerEvent]] = {}

    def open(self, player_id: str) -> None:
        """A stream of ``player_id`` opened here (``done`` when it ends)."""
        self._watching[player_id] = self._watching.get(player_id, 0) + 1

    def next_wake(self, player_id: str) -> asyncio.Event:
        """The event the next wake of ``player_id`` sets: take it before reading, then wait on
        it, and a wake that comes between the two is not missed."""
        return self._events.setdefault(player_id, asyncio.Event())

    def done(self, player_id: str) -> None:
        left = self._watching.get(player_id, 0) - 1
        if left > 0:
            self._watching[player_id] = left
        else:
            self._watching.pop(player_id, None)
            self._events.pop(player_id, None)
            self._recent.pop(player_id, None)

    def committed(self, told: Iterable[tuple[str, lobby_pb2.PlayerEvent]]) -> None:
        """A writer here has committed these (player, numbered event), in each player's
        order: keep them for the player's streams here, and wake those."""
        players = []
        for player_id, event in told:
            players.append(player_id)
            if player_id not in self._watching:
                continue
            recent = self._recent.get(player_id)
            if recent is None:
                recent = self._recent[player_id] = collections.deque(maxlen=RECENT_KEPT)
            elif recent and recent[-1].sequence + 1 != event.sequence:
                recent.clear()  # not the next one (writers committed out of turn): start over
            recent.append(event)
        self.wake(players)

    def recent(self, player_id: str, after: int) -> list[lobby_pb2.PlayerEvent] | None:
        """``player_id``'s events after ``after`` from memory, if memory holds every one of
        them up to the last committed here; None when the stream must read the database."""
        recent = self._recent.get(player_id)
        if not recent or recent[0].sequence > after + 1 or recent[-1].sequence <= after:
            return None
        return [event for event in recent if event.sequence > after]

    def notified(self, payload: str) -> None:
        """A notification (``player`` or ``player:last sequence``): wake the player's streams
        here unless this process committed that event itself (and woke them then)."""
        player_id, _colon, sequence = payload.partition(":")
        recent = self._recent.get(player_id)
        if sequence.isdigit() and recent and recent[-1].sequence >= int(sequence):
            return
        self.wake((player_id,))

    def wake(self, player_ids: Iterable[str]) -> None:
        """``player_ids`` have new events: their streams here read them."""
        for player_id in player_ids:
            event = self._events.pop(player_id, None)
            if event is not None:
                event.set()

    def wake_all(self) -> None:
        """Notifications may have been lost: every stream here reads again."""
        self.wake(list(self._events))


__all__ = ["KEPT_US", "NOTIFY_CHANNEL", "PlayerEvents", "PlayerWakes"]
