"""The push outbox (``lobby_push_outbox``): the notifications players' events owe their devices.

**Enqueued with the event.** ``PlayerEvents.append`` calls ``enqueue`` in the event's own
transaction for the pushed kinds (``PUSHED_KINDS``): one row per device the player has then,
keyed by the event (player and sequence) and the device, so a notification exists if and only
if its event committed, and once. One ``INSERT ... SELECT`` from the player's devices: a player
without devices costs one indexed read.

**Worth sending until** ``expires_us``: a TURN_STARTED until its turn's deadline, a
TOURNAMENT_STARTING until ``STARTING_GRACE_US`` after its start time, the others for
``STALE_US``. A notification is also stale once the player has a later event about the same
table (the turn is over, the seat is back, the match ended), or, for one about a tournament and
no table, the same tournament: it is dropped as ``superseded`` rather than sent late.

**Claimed by any pod** (``claim``): in one transaction, the due rows (the oldest first; on
PostgreSQL ``FOR UPDATE SKIP LOCKED``, so pods share the work and never take a row twice; SQLite
is one process whose writers take turns) are sorted: expired, superseded, of a player with a
stream open on some pod now (``stream``: the stream told them), of a platform no longer
configured (``unconfigured``) are dropped; the rest become ``sending`` with a lease, their
attempt counted. The sender sends them outside any transaction and ``settle`` records each
outcome: ``sent``; ``pending`` again at a later time (a retry); ``dropped`` (rejected, too many
attempts, or due again only after it expires); or the device removed (its token is gone).
A row still ``sending`` when its lease ends belonged to a pod that died mid-send: the provider
may have it already, so it is dropped (``lost``), never sent a second time: at most once per
event and device.

Rows are kept a day (``KEPT_US``), then pruned with the lobby's housekeeping.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from okey.v1 import lobby_pb2
from sqlalchemy import (
    BigInteger,
    Integer,
    LargeBinary,
    String,
    and_,
    bindparam,
    delete,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.models import player_events, push_devices, push_outbox
from okey101.lobby.push.devices import Device, PushDevices
from okey101.lobby.push.presence import StreamPresence
from okey101.lobby.records import US, now_us
from okey101.platform.database import Database

#: The kinds that go out as notifications.
PUSHED_KINDS: Final = frozenset(
    {
        lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED,
        lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_SEATED,
        lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_STARTING,
        lobby_pb2.PLAYER_EVENT_KIND_SEAT_AWAY,
        # A scheduled tournament's: the player must check in, or it will not be played.
        lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_CHECK_IN_OPEN,
        lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_CANCELLED,
    }
)
#: How long a notification without a moment of its own is worth sending.
STALE_US: Final = 10 * 60 * US
#: How long after a tournament's start its TOURNAMENT_STARTING is still worth sending.
STARTING_GRACE_US: Final = 5 * 60 * US
#: How long rows are kept once enqueued.
KEPT_US: Final = 24 * 3600 * US
#: The most later events read to find the superseded notifications of one claim.
LATER_EVENTS_MAX: Final = 5000

PENDING: Final = "pending"
SENDING: Final = "sending"
SENT: Final = "sent"
DROPPED: Final = "dropped"

_DELIVERY_IDS: Final = uuid.UUID("6f1c1a57-6a4e-4a39-9d0b-0c2b1f0a6e11")


def expires_us(event: lobby_pb2.PlayerEvent, now: int) -> int:
    """When ``event``'s notification is no longer worth sending (module docstring)."""
    if event.kind == lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED and event.HasField("deadline"):
        return int(event.deadline.ToMicroseconds())
    if event.kind == lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_STARTING and event.HasField(
        "start_time"
    ):
        return int(event.start_time.ToMicroseconds()) + STARTING_GRACE_US
    return now + STALE_US


@dataclass(frozen=True)
class Due:
    """A notification claimed for sending: its event, its device, its attempt (from 1)."""

    player_id: str
    sequence: int
    device: Device
    event: lobby_pb2.PlayerEvent
    attempt: int
    expires_us: int

    @property
    def delivery_id(self) -> str:
        """A UUID of the event and the device: the same for every attempt."""
        name = f"{self.player_id}/{self.sequence}/{self.device.device_id}"
        return str(uuid.uuid5(_DELIVERY_IDS, name))

    def key(self) -> dict[str, Any]:
        return {
            "k_player": self.player_id,
            "k_sequence": self.sequence,
            "k_device": self.device.device_id,
        }


@dataclass
class Claim:
    """What one claim took: the notifications to send, and how many it dropped, by reason."""

    due: list[Due] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class Settled:
    """A sent notification's outcome: its next state (``pending`` again at ``next_attempt_us``,
    ``sent``, ``dropped`` with a ``reason``), or ``gone``: its device is removed."""

    due: Due
    state: str
    reason: str | None = None
    next_attempt_us: int = 0
    gone: bool = False


_o = push_outbox.c
_KEY = (
    _o.player_id == bindparam("k_player"),
    _o.sequence == bindparam("k_sequence"),
    _o.device_id == bindparam("k_device"),
)


class PushOutbox:
    """The push outbox (module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    @staticmethod
    async def enqueue(
        session: AsyncConnection, player_id: str, event: lobby_pb2.PlayerEvent
    ) -> None:
        """A notification of ``event`` (appended, numbered) for each of the player's devices, in
        ``session``'s transaction."""
        now = now_us()
        d = push_devices.c
        devices = select(
            d.player_id,
            literal(event.sequence, BigInteger),
            d.device_id,
            literal(event.kind, Integer),
            literal(event.SerializeToString(), LargeBinary),
            literal(PENDING, String),
            literal(0, Integer),
            literal(now, BigInteger),
            literal(now, BigInteger),
            literal(expires_us(event, now), BigInteger),
        ).where(d.player_id == player_id)
        columns = [
            "player_id",
            "sequence",
            "device_id",
            "kind",
            "event",
            "state",
            "attempts",
            "created_us",
            "next_attempt_us",
            "expires_us",
        ]
        await session.execute(push_outbox.insert().from_select(columns, devices))

    async def any_due(self) -> bool:
        """Whether a claim now would find anything (a read: the idle loop's only query)."""
        async with self.database.read() as session:
            found = await session.scalar(
                select(_o.sequence)
                .where(_o.state.in_((PENDING, SENDING)), _o.next_attempt_us <= now_us())
                .limit(1)
            )
        return found is not None

    async def claim(self, limit: int, lease_us: int, platforms: frozenset[str]) -> Claim:
        """Claim up to ``limit`` due notifications (module docstring): those to send are
        ``sending`` for ``lease_us``; those of platforms not in ``platforms`` are dropped."""

        async def work(session: AsyncConnection) -> Claim:
            now = now_us()
            claim = Claim()
            lost = await session.execute(
                update(push_outbox)
                .where(_o.state == SENDING, _o.next_attempt_us <= now)
                .values(state=DROPPED, reason="lost", done_us=now)
            )
            if lost.rowcount:
                claim.dropped["lost"] += lost.rowcount
            d = push_devices.c
            rows = (
                await session.execute(
                    select(
                        _o.player_id,
                        _o.sequence,
                        _o.event,
                        _o.attempts,
                        _o.expires_us,
                        d.device_id,
                        d.platform,
                        d.token,
                        d.language,
                    )
                    .join(push_devices, d.device_id == _o.device_id)
                    .where(_o.state == PENDING, _o.next_attempt_us <= now)
                    .order_by(_o.next_attempt_us)
                    .limit(limit)
                    .with_for_update(skip_locked=True, of=push_outbox)
                )
            ).all()
            candidates = [
                Due(
                    player_id=row.player_id,
                    sequence=int(row.sequence),
                    device=Device(
                        row.device_id, row.player_id, row.platform, row.token, row.language
                    ),
                    event=lobby_pb2.PlayerEvent.FromString(bytes(row.event)),
                    attempt=int(row.attempts) + 1,
                    expires_us=int(row.expires_us),
                )
                for row in rows
            ]
            drops: list[tuple[Due, str]] = []
            alive: list[Due] = []
            for due in candidates:
                if due.expires_us <= now:
                    drops.append((due, "expired"))
                elif due.device.platform not in platforms:
                    drops.append((due, "unconfigured"))
                else:
                    alive.append(due)
            superseded = await _superseded(session, alive)
            present = await StreamPresence.present(session, (due.player_id for due in alive), now)
            for due in alive:
                if (due.player_id, due.sequence) in superseded:
                    drops.append((due, "superseded"))
                elif due.player_id in present:
                    drops.append((due, "stream"))
                else:
                    claim.due.append(due)
            if drops:
                await session.execute(
                    update(push_outbox)
                    .where(*_KEY)
                    .values(state=DROPPED, reason=bindparam("v_reason"), done_us=now),
                    [{**due.key(), "v_reason": reason} for due, reason in drops],
                )
                claim.dropped.update(reason for _, reason in drops)
            if claim.due:
                await session.execute(
                    update(push_outbox)
                    .where(*_KEY)
                    .values(
                        state=SENDING,
                        attempts=bindparam("v_attempts"),
                        next_attempt_us=now + lease_us,
                    ),
                    [{**due.key(), "v_attempts": due.attempt} for due in claim.due],
                )
            return claim

        return await self.database.transaction(work)

    async def settle(self, outcomes: Sequence[Settled]) -> None:
        """Record what became of claimed notifications (module docstring)."""
        if not outcomes:
            return

        async def work(session: AsyncConnection) -> None:
            now = now_us()
            kept = [outcome for outcome in outcomes if not outcome.gone]
            if kept:
                await session.execute(
                    update(push_outbox)
                    .where(*_KEY, _o.state == SENDING)
                    .values(
                        state=bindparam("v_state"),
                        reason=bindparam("v_reason"),
                        next_attempt_us=bindparam("v_next"),
                        done_us=bindparam("v_done"),
                    ),
                    [
                        {
                            **outcome.due.key(),
                            "v_state": outcome.state,
                            "v_reason": outcome.reason,
                            "v_next": outcome.next_attempt_us or now,
                            "v_done": None if outcome.state == PENDING else now,
                        }
                        for outcome in kept
                    ],
                )
            gone = sorted({outcome.due.device.device_id for outcome in outcomes if outcome.gone})
            await PushDevices.remove(session, gone)

        await self.database.transaction(work)

    @staticmethod
    async def prune(session: AsyncConnection, before_us: int) -> None:
        """Forget the rows enqueued before ``before_us`` (all long sent or dropped)."""
        await session.execute(delete(push_outbox).where(_o.created_us < before_us))


async def _superseded(session: AsyncConnection, due: Sequence[Due]) -> set[tuple[str, int]]:
    """The (player, sequence) of the ``due`` notifications whose player has a later event
    about the same table (or, without a table, the same tournament)."""
    first: dict[str, int] = {}
    for item in due:
        first[item.player_id] = min(item.sequence, first.get(item.player_id, item.sequence))
    if not first:
        return set()
    e = player_events.c
    later = await session.execute(
        select(e.player_id, e.sequence, e.event)
        .where(or_(*(and_(e.player_id == p, e.sequence > s) for p, s in first.items())))
        .order_by(e.player_id, e.sequence)
        .limit(LATER_EVENTS_MAX)
    )
    subjects: dict[str, list[tuple[int, str, str]]] = {}
    for row in later:
        event = lobby_pb2.PlayerEvent.FromString(bytes(row.event))
        subjects.setdefault(row.player_id, []).append(
            (int(row.sequence), event.table_id, event.tournament_id)
        )
    found = set()
    for item in due:
        table, tournament = item.event.table_id, item.event.tournament_id
        for sequence, later_table, later_tournament in subjects.get(item.player_id, ()):
            if sequence <= item.sequence:
                continue
            if (table and later_table == table) or (
                not table and tournament and later_tournament == tournament
            ):
                found.add((item.player_id, item.sequence))
                break
    return found


__all__ = [
    "DROPPED",
    "KEPT_US",
    "PENDING",
    "PUSHED_KINDS",
    "SENDING",
    "SENT",
    "STALE_US",
    "STARTING_GRACE_US",
    "Claim",
    "Due",
    "PushOutbox",
    "Settled",
    "expires_us",
]
