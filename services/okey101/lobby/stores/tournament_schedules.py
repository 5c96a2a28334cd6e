"""A tournament's schedule in the database: check-in, the entrants settled at the start
(``settle_entrants``), the check-in notices and due starts the scheduler finds, and recurring
series (``lobby_tournament_series``) with their occurrences.

Each change locks the tournament's row (``locked_tournament``), as every change of a tournament
does (``stores.tournaments``); a series' occurrences are created with its row locked, under ids
derived from the series and the start, so two pods extending a series at once create each
occurrence once.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict
from typing import Any, TypeVar

from google.protobuf.message import Message
from okey.v1 import lobby_pb2
from sqlalchemy import BigInteger, cast, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.chips import tournament_chips
from okey101.lobby.credentials import new_id
from okey101.lobby.errors import Conflict, Denied, Missing
from okey101.lobby.models import tournament_players, tournament_series, tournaments
from okey101.lobby.records import REGISTERING, TournamentRow, now_us
from okey101.lobby.stores.answers import ANSWERS
from okey101.lobby.stores.player_events import PlayerEvents
from okey101.lobby.tournament_schedule import (
    Recurrence,
    checked_recurrence,
    next_starts,
    registration_opens,
    shown_time,
)
from okey101.platform.database import Database, insert_ignoring_conflicts, row_mapping
from okey101.platform.idempotency import CallKey, Once

_M = TypeVar("_M", bound=Message)

#: Why a player was dropped at the start (PlayerEvent.reason).
NOT_CHECKED_IN = "NOT_CHECKED_IN"
NO_PLACE_LEFT = "NO_PLACE_LEFT"


def tournament_row(row: Any) -> TournamentRow:
    data = row_mapping(row)
    return TournamentRow(**{name: data[name] for name in TournamentRow.__dataclass_fields__})


async def locked_tournament(session: AsyncConnection, tournament_id: str) -> TournamentRow:
    """The tournament's row, locked for the rest of ``session``'s transaction."""
    row = (
        await session.execute(
            select(tournaments)
            .where(tournaments.c.tournament_id == tournament_id)
            .with_for_update()
        )
    ).one_or_none()
    if row is None:
        raise Missing("TOURNAMENT_NOT_FOUND", tournament_id=tournament_id)
    return tournament_row(row)


def still_registering(tournament: TournamentRow) -> None:
    """FAILED_PRECONDITION TOURNAMENT_NOT_REGISTERING unless ``tournament`` still registers."""
    if tournament.state != REGISTERING:
        raise Conflict(
            "TOURNAMENT_NOT_REGISTERING",
            tournament_id=tournament.tournament_id,
            state=tournament.state,
        )


def _event(kind: int, tournament_id: str, **fields: Any) -> lobby_pb2.PlayerEvent:
    event = lobby_pb2.PlayerEvent(kind=kind, tournament_id=tournament_id, **fields)  # type: ignore[arg-type]
    return event


async def settle_entrants(
    session: AsyncConnection,
    events: PlayerEvents,
    tournament: TournamentRow,
    told: list[str],
) -> int:
    """Who plays, decided at the start (the tournament locked): once its check-in window has
    opened, entrants who did not check in are dropped, and substitutes who checked in take
    the places in the order they registered; substitutes left without a place are dropped. The
    dropped are refunded and told (TOURNAMENT_DROPPED), the promoted told (PROMOTED); the rest
    are numbered 1, 2, 3, ... in registration order. Returns the entrants left."""
    p = tournament_players.c
    tournament_id = tournament.tournament_id
    rows = list(
        await session.execute(
            select(p.player_id, p.checked_in, p.substitute)
            .where(p.tournament_id == tournament_id)
            .order_by(p.registration)
        )
    )
    opens = tournament.check_in_opens_us()
    checking = opens is not None and now_us() >= opens
    kept: list[str] = []
    promoted: list[str] = []
    dropped: list[tuple[str, str]] = []
    for player_id, checked_in, substitute in rows:
        if checking and not checked_in:
            dropped.append((player_id, NOT_CHECKED_IN))
        elif not substitute:
            kept.append(player_id)
    for player_id, checked_in, substitute in rows:
        if substitute and (checked_in or not checking):
            if checking and len(kept) < tournament.max_players:
                kept.append(player_id)
                promoted.append(player_id)
            else:
                dropped.append((player_id, NO_PLACE_LEFT))
    if dropped:
        await session.execute(
            tournament_players.delete().where(
                p.tournament_id == tournament_id,
                p.player_id.in_([player for player, _ in dropped]),
            )
        )
    for player_id, reason in dropped:
        await tournament_chips.refund_entry(
            session, tournament_id=tournament_id, player_id=player_id, now_us=now_us()
        )
        await events.append(
            session,
            player_id,
            _event(lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_DROPPED, tournament_id, reason=reason),
        )
        told.append(player_id)
    for player_id in promoted:
        await events.append(
            session,
            player_id,
            _event(lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_PROMOTED, tournament_id),
        )
        told.append(player_id)
    # Numbered afresh in two steps: through negative numbers, so no two rows share one midway.
    for number, player_id in enumerate(kept, start=1):
        await session.execute(
            update(tournament_players)
            .where(p.tournament_id == tournament_id, p.player_id == player_id)
            .values(registration=-number, substitute=False)
        )
    await session.execute(
        update(tournament_players)
        .where(p.tournament_id == tournament_id)
        .values(registration=-p.registration)
    )
    await session.execute(
        update(tournaments)
        .where(tournaments.c.tournament_id == tournament_id)
        .values(registered=len(kept))
    )
    return len(kept)


async def promote_substitute(
    session: AsyncConnection, events: PlayerEvents, tournament_id: str, told: list[str]
) -> bool:
    """Give a freed place to the first substitute (the tournament locked): True if there was
    one (the count of entrants is then back where it was)."""
    p = tournament_players.c
    first = await session.scalar(
        select(p.player_id)
        .where(p.tournament_id == tournament_id, p.substitute == True)  # noqa: E712
        .order_by(p.registration)
        .limit(1)
    )
    if first is None:
        return False
    await session.execute(
        update(tournament_players)
        .where(p.tournament_id == tournament_id, p.player_id == first)
        .values(substitute=False)
    )
    await events.append(
        session, first, _event(lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_PROMOTED, tournament_id)
    )
    told.append(first)
    return True


async def substitutes(session: AsyncConnection, tournament_id: str) -> int:
    p = tournament_players.c
    count = await session.scalar(
        select(func.count())
        .select_from(tournament_players)
        .where(p.tournament_id == tournament_id, p.substitute == True)  # noqa: E712
    )
    return int(count or 0)


def series_occurrence_id(series_id: str, start_us: int) -> str:
    """An occurrence's tournament id, the same whichever pod creates it."""
    digest = hashlib.sha256(f"{series_id}:{start_us}".encode()).hexdigest()[:24]
    return f"t_{digest}"


def plan_json(plan: Any) -> str:
    """A ``NewTournament`` as JSON (its rules as base64)."""
    data = asdict(plan)
    data["rules"] = base64.b64encode(plan.rules).decode()
    return json.dumps(data, sort_keys=True)


def plan_fields(text: str) -> dict[str, Any]:
    """What ``plan_json`` wrote, rules as bytes again."""
    data: dict[str, Any] = json.loads(text)
    data["rules"] = base64.b64decode(data["rules"])
    return data


class TournamentSchedules:
    """Check-in, the scheduler's finds and recurring series (module docstring)."""

    def __init__(self, database: Database, events: PlayerEvents) -> None:
        self.database = database
        self._events = events

    async def check_in(
        self,
        tournament_id: str,
        player_id: str,
        call: Once[CallKey, _M],
        respond: Callable[[TournamentRow, int], _M],
    ) -> _M:
        """Check ``player_id`` in (again: nothing changes); the answer is stored with it."""

        async def work(session: AsyncConnection) -> _M:
            tournament = await locked_tournament(session, tournament_id)
            stored = await ANSWERS.claim(session, call)
            if stored is not None:
                return stored
            still_registering(tournament)
            p = tournament_players.c
            known = await session.scalar(
                select(p.player_id).where(
                    p.tournament_id == tournament_id, p.player_id == player_id
                )
            )
            if known is None:
                raise Conflict("NOT_REGISTERED", tournament_id=tournament_id)
            opens = tournament.check_in_opens_us()
            if opens is None:
                raise Conflict("NO_CHECK_IN", tournament_id=tournament_id)
            if now_us() < opens:
                raise Conflict(
                    "CHECK_IN_NOT_OPEN", tournament_id=tournament_id, opens=shown_time(opens)
                )
            await session.execute(
                update(tournament_players)
                .where(p.tournament_id == tournament_id, p.player_id == player_id)
                .values(checked_in=True)
            )
            pool = await tournament_chips.prize_pool(session, tournament_id)
            answer = respond(tournament, pool)
            await ANSWERS.remember(session, call, answer)
            return answer

        return await self.database.transaction(work)

    async def checked_in_count(self, tournament_id: str) -> int:
        p = tournament_players.c
        async with self.database.read() as session:
            count = await session.scalar(
                select(func.count())
                .select_from(tournament_players)
                .where(p.tournament_id == tournament_id, p.checked_in == True)  # noqa: E712
            )
            return int(count or 0)

    async def substitute_count(self, tournament_id: str) -> int:
        async with self.database.read() as session:
            return await substitutes(session, tournament_id)

    # ----------------------------------------------------------------------------------------
    # What the scheduler finds

    async def due_starts(self, now: int) -> list[str]:
        """Registering tournaments whose scheduled start has come."""
        t = tournaments.c
        async with self.database.read() as session:
            found = await session.scalars(
                select(t.tournament_id)
                .where(t.state == REGISTERING, t.scheduled_start_us <= now)
                .order_by(t.scheduled_start_us)
            )
            return list(found)

    async def due_check_in_notices(self, now: int) -> list[str]:
        """Registering tournaments whose check-in has opened and not yet been told."""
        t = tournaments.c
        async with self.database.read() as session:
            found = await session.scalars(
                select(t.tournament_id).where(
                    t.state == REGISTERING,
                    t.check_in_seconds > 0,
                    t.check_in_told == False,  # noqa: E712
                    t.scheduled_start_us - cast(t.check_in_seconds, BigInteger) * 1_000_000 <= now,
                )
            )
            return list(found)

    async def tell_check_in_open(self, tournament_id: str) -> int:
        """Tell every registered player that check-in is open, once (the flag is set in the
        same transaction). Returns how many were told."""
        told: list[str] = []

        async def work(session: AsyncConnection) -> None:
            told.clear()
            tournament = await locked_tournament(session, tournament_id)
            if tournament.state != REGISTERING or tournament.check_in_told:
                return
            await session.execute(
                update(tournaments)
                .where(tournaments.c.tournament_id == tournament_id)
                .values(check_in_told=True)
            )
            players = await session.scalars(
                select(tournament_players.c.player_id).where(
                    tournament_players.c.tournament_id == tournament_id
                )
            )
            for player_id in players.all():
                event = _event(lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_CHECK_IN_OPEN, tournament_id)
                event.start_time.FromMicroseconds(tournament.scheduled_start_us or 0)
                await self._events.append(session, player_id, event)
                told.append(player_id)

        await self.database.transaction(work)
        self._events.wakes.wake(told)
        return len(told)

    # ----------------------------------------------------------------------------------------
    # Recurring series

    async def create_series(
        self,
        plan: Any,
        recurrence: lobby_pb2.TournamentRecurrence,
        call: Once[CallKey, _M],
        respond: Callable[[str], _M],
    ) -> _M:
        """A series and its first occurrences (``occurrences_ahead`` of them), in one
        transaction; ``respond`` is given the first occurrence's id."""

        async def work(session: AsyncConnection) -> _M:
            stored = await ANSWERS.claim(session, call)
            if stored is not None:
                return stored
            now = now_us()
            checked = checked_recurrence(recurrence)
            series_id = new_id("s")
            await session.execute(
                tournament_series.insert().values(
                    series_id=series_id,
                    creator_player_id=plan.creator_player_id,
                    plan=plan_json(plan),
                    recurrence=recurrence.SerializeToString(deterministic=True),
                    next_start_us=next_starts(checked, now, 1)[0],
                    created_us=now,
                )
            )
            created = await self._extend(session, series_id, now)
            answer = respond(created[0])
            await ANSWERS.remember(session, call, answer)
            return answer

        return await self.database.transaction(work)

    async def series_to_extend(self) -> list[str]:
        async with self.database.read() as session:
            found = await session.scalars(
                select(tournament_series.c.series_id).where(
                    tournament_series.c.stopped_us.is_(None)
                )
            )
            return list(found)

    async def extend_series(self, series_id: str, now: int) -> list[str]:
        """Create the series' occurrences it lacks ahead of ``now``: their ids."""

        async def work(session: AsyncConnection) -> list[str]:
            return await self._extend(session, series_id, now)

        return await self.database.transaction(work)

    async def _extend(self, session: AsyncConnection, series_id: str, now: int) -> list[str]:
        s, t = tournament_series.c, tournaments.c
        series = (
            await session.execute(
                select(tournament_series).where(s.series_id == series_id).with_for_update()
            )
        ).one_or_none()
        if series is None or series.stopped_us is not None:
            return []
        recurrence = checked_recurrence(
            lobby_pb2.TournamentRecurrence.FromString(series.recurrence)
        )
        ahead = await session.scalar(
            select(func.count())
            .select_from(tournaments)
            .where(t.series_id == series_id, t.scheduled_start_us > now)
        )
        created: list[str] = []
        start = int(series.next_start_us)
        for _ in range(max(0, recurrence.occurrences_ahead - int(ahead or 0))):
            if start <= now:  # the pods were all down at a start: skip it, not start it late
                start = next_starts(recurrence, now, 1)[0]
            created.append(await self._occurrence(session, series, recurrence, start, now))
            start = next_starts(recurrence, start, 1)[0]
        if created:
            await session.execute(
                update(tournament_series)
                .where(s.series_id == series_id)
                .values(next_start_us=start)
            )
        return created

    async def _occurrence(
        self, session: AsyncConnection, series: Any, recurrence: Recurrence, start: int, now: int
    ) -> str:
        tournament_id = series_occurrence_id(series.series_id, start)
        fields = plan_fields(series.plan)
        fields.update(
            scheduled_start_us=start,
            registration_opens_us=registration_opens(recurrence, start, now),
        )
        await session.execute(
            insert_ignoring_conflicts(tournaments, self.database.dialect).values(
                tournament_id=tournament_id,
                **fields,
                series_id=series.series_id,
                state=REGISTERING,
                created_us=now,
            )
        )
        return tournament_id

    async def recurrence(self, series_id: str) -> lobby_pb2.TournamentRecurrence | None:
        if not series_id:
            return None
        async with self.database.read() as session:
            stored = await session.scalar(
                select(tournament_series.c.recurrence).where(
                    tournament_series.c.series_id == series_id
                )
            )
        return None if stored is None else lobby_pb2.TournamentRecurrence.FromString(stored)

    async def stop_series(self, series_id: str, caller: str | None) -> bool:
        """Stop a series (``caller``: the player asking, None for a service): True if this
        call stopped it."""

        async def work(session: AsyncConnection) -> bool:
            s = tournament_series.c
            series = (
                await session.execute(
                    select(tournament_series).where(s.series_id == series_id).with_for_update()
                )
            ).one_or_none()
            if series is None:
                raise Missing("SERIES_NOT_FOUND", series_id=series_id)
            if caller is not None and caller != series.creator_player_id:
                raise Denied("NOT_TOURNAMENT_CREATOR", tournament_id=series_id)
            if series.stopped_us is not None:
                return False
            await session.execute(
                update(tournament_series)
                .where(s.series_id == series_id)
                .values(stopped_us=now_us())
            )
            return True

        return await self.database.transaction(work)


__all__ = [
    "NOT_CHECKED_IN",
    "NO_PLACE_LEFT",
    "TournamentSchedules",
    "locked_tournament",
    "promote_substitute",
    "settle_entrants",
    "still_registering",
    "substitutes",
    "tournament_row",
]
