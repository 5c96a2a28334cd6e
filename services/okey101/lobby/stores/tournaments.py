"""Tournaments (``lobby_tournaments`` and its players and tables) and the leases that say which
lobby pod drives each one (``lobby_tournament_leases``); the bracket itself is ``lobby.bracket``.
A cancelled tournament keeps its players' rows (its standings) and loses its lease.

Registration and the start lock the tournament's row (``FOR UPDATE``): its count of registered
players and its state change one call at a time. The start stores its answer in its own
transaction, so a retry gets it even if the first call's answer was lost. While a tournament
runs, only the holder of its lease drives it, and every one of the driver's writes is fenced by
the lease in the same transaction (``_fence`` renews it, or raises ``LeaseLost``): a pod that
lost the lease changes nothing.

It is one module past 900 lines because it is one aggregate: every change of a tournament
(registering and unregistering with their entry fees, the start, a cancel with its refunds, the
driver's rounds, forfeits, the final ranking with its prizes) locks the same row and must see
the others' rules in its one transaction; split by step, each part would re-read and re-check
what the others decide. (A tournament's schedule and an organiser's pause and disqualification
are kept beside it, in ``stores.tournament_schedules`` and ``stores.tournament_control``, under
the same row lock.)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from google.protobuf.message import Message
from okey.v1 import lobby_pb2
from sqlalchemy import and_, case, delete, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby import bracket, no_shows
from okey101.lobby.chips import tournament_chips
from okey101.lobby.credentials import new_id
from okey101.lobby.errors import Conflict, Denied, Missing
from okey101.lobby.models import (
    player_events,
    tournament_leases,
    tournament_players,
    tournament_tables,
    tournaments,
)
from okey101.lobby.records import (
    CANCELLED,
    FINISHED,
    PLANNED,
    REGISTERING,
    RUNNING,
    STARTED,
    US,
    Entrant,
    LeaseLost,
    PlayerRow,
    RoundTable,
    TournamentRow,
    now_us,
)
from okey101.lobby.stores.answers import ANSWERS
from okey101.lobby.stores.player_events import PlayerEvents
from okey101.lobby.stores.tournament_schedules import (
    locked_tournament,
    promote_substitute,
    settle_entrants,
    still_registering,
    substitutes,
    tournament_row,
)
from okey101.lobby.tournament_schedule import shown_time
from okey101.platform.database import Database, insert_ignoring_conflicts, row_mapping
from okey101.platform.idempotency import CallKey, Once

_M = TypeVar("_M", bound=Message)

#: Why a tournament was cancelled (Tournament.cancel_reason).
TOO_FEW_PLAYERS = "TOO_FEW_PLAYERS"
CANCELLED_BY_ORGANISER = "CANCELLED_BY_ORGANISER"


@dataclass(frozen=True)
class NewTournament:
    """A tournament as CreateTournament asks for it."""

    name: str
    #: The okey.v1.RuleSet, serialized deterministically.
    rules: bytes
    preset: str
    max_players: int
    advance_per_table: int
    planned_rounds: int
    bot_level: int
    #: The player who created it ("" for a service).
    creator_player_id: str
    #: Chips an entrant pays (0: free), and the prize table (``chips.prizes``, JSON).
    entry_fee: int = 0
    prizes: str = "[]"
    #: The no-show policy: times a player's seat may go to a bot in a match (resolved).
    no_show_missed_turns: int = 2
    #: What the organiser says of it (0-500 characters), and its category (a slug, "" none).
    description: str = ""
    category: str = ""
    #: Its schedule (``lobby.tournament_schedule``): None for a start by hand, at once.
    scheduled_start_us: int | None = None
    registration_opens_us: int | None = None
    check_in_seconds: int = 0
    #: The fewest entrants it starts with; the most substitutes it takes once full.
    min_players: int = 2
    max_substitutes: int = 0
    #: Its pace: a round's time limit and the break between rounds (seconds), seeding.
    round_seconds: int = 0
    break_seconds: int = 0
    seed_by_rating: bool = False


@dataclass(frozen=True)
class Listing:
    """ListTournaments' filters besides the states: a category ("" for any) and time windows
    (microseconds; None for no bound), each ``[after, before)``."""

    category: str = ""
    created_after_us: int | None = None
    created_before_us: int | None = None
    started_after_us: int | None = None
    started_before_us: int | None = None
    series_id: str = ""
    scheduled_after_us: int | None = None
    scheduled_before_us: int | None = None
    #: Of registering tournaments, only those whose registration is open at ``now_us`` (True),
    #: only the upcoming ones (False), or both (None).
    registration_open: bool | None = None
    now_us: int = 0

    def state_condition(self, states: Sequence[str]) -> Any:
        """The states asked for, registering split by ``registration_open``."""
        c = tournaments.c
        others = [state for state in states if state != REGISTERING]
        if REGISTERING not in states or self.registration_open is None:
            return c.state.in_(list(states))
        opened = or_(c.registration_opens_us.is_(None), c.registration_opens_us <= self.now_us)
        registering = and_(c.state == REGISTERING, opened if self.registration_open else ~opened)
        return or_(c.state.in_(others), registering) if others else registering

    def conditions(self) -> list[Any]:
        c = tournaments.c
        found: list[Any] = []
        if self.series_id:
            found.append(c.series_id == self.series_id)
        if self.scheduled_after_us is not None:
            found.append(c.scheduled_start_us >= self.scheduled_after_us)
        if self.scheduled_before_us is not None:
            found.append(c.scheduled_start_us < self.scheduled_before_us)
        if self.category:
            found.append(c.category == self.category)
        if self.created_after_us is not None:
            found.append(c.created_us >= self.created_after_us)
        if self.created_before_us is not None:
            found.append(c.created_us < self.created_before_us)
        if self.started_after_us is not None:
            found.append(c.started_us >= self.started_after_us)
        if self.started_before_us is not None:
            found.append(c.started_us < self.started_before_us)
        return found


_tournament = tournament_row


def _round_table(row: Any) -> RoundTable:
    data = row_mapping(row)
    return RoundTable(
        tournament_id=data["tournament_id"],
        round=data["round"],
        table_index=data["table_index"],
        seats=list(json.loads(data["seats"])),
        advance=data["advance"],
        table_id=data["table_id"],
        match_id=data["match_id"],
        state=data["state"],
        deadline_us=data["deadline_us"],
    )


class Tournaments:
    """Tournaments and their leases (module docstring); a lease lasts ``lease_seconds``."""

    def __init__(
        self, database: Database, *, lease_seconds: float, events: PlayerEvents | None = None
    ) -> None:
        self.database = database
        self._lease_us = int(lease_seconds * US)
        self._events = events or PlayerEvents(database)

    # ----------------------------------------------------------------------------------------
    # Registration and the start

    async def create(
        self,
        plan: NewTournament,
        call: Once[CallKey, _M],
        respond: Callable[[str], _M],
    ) -> _M:
        """A tournament open for registration; ``respond`` is given its id."""

        async def work(session: AsyncConnection) -> _M:
            stored = await ANSWERS.claim(session, call)
            if stored is not None:
                return stored
            tournament_id = new_id("t")
            await session.execute(
                tournaments.insert().values(
                    tournament_id=tournament_id,
                    **plan.__dict__,
                    state=REGISTERING,
                    created_us=now_us(),
                )
            )
            answer = respond(tournament_id)
            await ANSWERS.remember(session, call, answer)
            return answer

        return await self.database.transaction(work)

    async def _tournament_for_update(
        self, session: AsyncConnection, tournament_id: str
    ) -> TournamentRow:
        return await locked_tournament(session, tournament_id)

    async def register(
        self, tournament_id: str, player: PlayerRow, *, starting_grant: int = 0
    ) -> None:
        """Register ``player`` (again: nothing changes), who pays the entry fee into the
        prize pool in the same transaction (INSUFFICIENT_CHIPS: not registered). A full
        tournament takes them as a substitute while it has substitute places. Before its
        registration opens: REGISTRATION_NOT_OPEN. ``starting_grant``: credited first if this
        is the player's first touch of their wallet."""

        async def work(session: AsyncConnection) -> None:
            tournament = await self._tournament_for_update(session, tournament_id)
            known = (
                await session.execute(
                    select(tournament_players.c.player_id).where(
                        tournament_players.c.tournament_id == tournament_id,
                        tournament_players.c.player_id == player.player_id,
                    )
                )
            ).one_or_none()
            if known is not None:
                return
            still_registering(tournament)
            if (
                tournament.registration_opens_us is not None
                and now_us() < tournament.registration_opens_us
            ):
                raise Conflict(
                    "REGISTRATION_NOT_OPEN",
                    tournament_id=tournament_id,
                    opens=shown_time(tournament.registration_opens_us),
                )
            waiting = await substitutes(session, tournament_id)
            substitute = tournament.registered >= tournament.max_players
            if substitute and waiting >= tournament.max_substitutes:
                raise Conflict(
                    "TOURNAMENT_FULL",
                    tournament_id=tournament_id,
                    max_players=tournament.max_players,
                )
            if tournament.entry_fee:
                await tournament_chips.pay_entry(
                    session,
                    tournament_id=tournament_id,
                    player_id=player.player_id,
                    fee=tournament.entry_fee,
                    starting_grant=starting_grant,
                    now_us=now_us(),
                )
            await session.execute(
                tournament_players.insert().values(
                    tournament_id=tournament_id,
                    player_id=player.player_id,
                    display_name=player.display_name,
                    registration=tournament.registered + waiting + 1,
                    substitute=substitute,
                    # Registering during the check-in window is checking in.
                    checked_in=(opens := tournament.check_in_opens_us()) is not None
                    and now_us() >= opens,
                )
            )
            if not substitute:
                await session.execute(
                    update(tournaments)
                    .where(tournaments.c.tournament_id == tournament_id)
                    .values(registered=tournament.registered + 1)
                )

        await self.database.transaction(work)

    async def unregister(
        self,
        tournament_id: str,
        player_id: str,
        call: Once[CallKey, _M],
        respond: Callable[[TournamentRow, int], _M],
    ) -> _M:
        """Unregister ``player_id`` from a tournament still registering, in one transaction
        with the tournament locked: their row goes, ``registered`` goes down, the later
        registrations move up one (they stay 1, 2, 3, ...), and the entry fee they paid is
        refunded; a place they free goes to the first substitute. TOURNAMENT_NOT_REGISTERING
        after the start, NOT_REGISTERED if they are not registered. The answer (``respond`` of
        the tournament after it and its prize pool) is stored in the same transaction, so a
        retry gets it even if the first call's answer was lost."""

        told: list[str] = []

        async def work(session: AsyncConnection) -> _M:
            told.clear()
            tournament = await self._tournament_for_update(session, tournament_id)
            stored = await ANSWERS.claim(session, call)
            if stored is not None:
                return stored
            still_registering(tournament)
            p = tournament_players.c
            leaving = (
                await session.execute(
                    select(p.registration, p.substitute).where(
                        p.tournament_id == tournament_id, p.player_id == player_id
                    )
                )
            ).one_or_none()
            if leaving is None:
                raise Conflict("NOT_REGISTERED", tournament_id=tournament_id)
            number = leaving.registration
            await session.execute(
                delete(tournament_players).where(
                    p.tournament_id == tournament_id, p.player_id == player_id
                )
            )
            await session.execute(
                update(tournament_players)
                .where(p.tournament_id == tournament_id, p.registration > number)
                .values(registration=p.registration - 1)
            )
            if not leaving.substitute and not await promote_substitute(
                session, self._events, tournament_id, told
            ):
                await session.execute(
                    update(tournaments)
                    .where(tournaments.c.tournament_id == tournament_id)
                    .values(registered=tournament.registered - 1)
                )
            await tournament_chips.refund_entry(
                session, tournament_id=tournament_id, player_id=player_id, now_us=now_us()
            )
            pool = await tournament_chips.prize_pool(session, tournament_id)
            answer = respond(await self._tournament_for_update(session, tournament_id), pool)
            await ANSWERS.remember(session, call, answer)
            return answer

        answer = await self.database.transaction(work)
        self._events.wakes.wake(told)
        return answer

    async def start(
        self,
        tournament_id: str,
        caller: str | None,
        minimum_players: int,
        call: Once[CallKey, _M],
        respond: Callable[[TournamentRow], _M],
    ) -> _M:
        """Start registration's end: round 1 is planned by whichever pod takes the lease.
        ``caller`` is the player starting it (None: a service). The answer (``respond`` of the
        tournament as started) is stored with the start, in its transaction, so a retry gets
        it even if the first call's answer was lost. Every registered player is told
        (``TOURNAMENT_STARTING``) in the same transaction."""
        told: list[str] = []

        async def work(session: AsyncConnection) -> _M:
            told.clear()
            tournament = await self._tournament_for_update(session, tournament_id)
            stored = await ANSWERS.claim(session, call)
            if stored is not None:
                return stored
            if caller is not None and caller != tournament.creator_player_id:
                raise Denied("NOT_TOURNAMENT_CREATOR", tournament_id=tournament_id)
            still_registering(tournament)
            entrants = await settle_entrants(session, self._events, tournament, told)
            minimum = max(minimum_players, tournament.min_players)
            if entrants < minimum:
                raise Conflict(
                    "TOURNAMENT_TOO_FEW_PLAYERS",
                    tournament_id=tournament_id,
                    minimum=minimum,
                    registered=entrants,
                )
            await self._begin(session, tournament_id, told)
            answer = respond(await self._tournament_for_update(session, tournament_id))
            await ANSWERS.remember(session, call, answer)
            return answer

        answer = await self.database.transaction(work)
        self._events.wakes.wake(told)
        return answer

    async def start_scheduled(self, tournament_id: str, minimum_players: int) -> str | None:
        """Start a tournament whose scheduled start has come (any pod may; the row lock makes
        it once): the entrants settled (``settle_entrants``), then the start, or with fewer
        than its ``min_players`` a cancel (TOO_FEW_PLAYERS: refunded, each entrant told
        TOURNAMENT_CANCELLED). Returns the state it left (None: not due or not registering)."""
        told: list[str] = []

        async def work(session: AsyncConnection) -> str | None:
            told.clear()
            tournament = await self._tournament_for_update(session, tournament_id)
            start = tournament.scheduled_start_us
            if tournament.state != REGISTERING or start is None or start > now_us():
                return None
            entrants = await settle_entrants(session, self._events, tournament, told)
            if entrants < max(minimum_players, tournament.min_players):
                await self._cancel(session, tournament, TOO_FEW_PLAYERS, told)
                return CANCELLED
            await self._begin(session, tournament_id, told)
            return RUNNING

        state = await self.database.transaction(work)
        self._events.wakes.wake(told)
        return state

    async def _begin(self, session: AsyncConnection, tournament_id: str, told: list[str]) -> None:
        """Running from round 1, its lease row made, every entrant told TOURNAMENT_STARTING."""
        await session.execute(
            update(tournaments)
            .where(tournaments.c.tournament_id == tournament_id)
            .values(state=RUNNING, current_round=1, started_us=now_us())
        )
        await session.execute(
            insert_ignoring_conflicts(tournament_leases, self.database.dialect).values(
                tournament_id=tournament_id, holder="", expires_us=0, generation=0
            )
        )
        registered = await session.scalars(
            select(tournament_players.c.player_id).where(
                tournament_players.c.tournament_id == tournament_id
            )
        )
        starts = lobby_pb2.PlayerEvent(
            kind=lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_STARTING, tournament_id=tournament_id
        )
        starts.start_time.FromMicroseconds(now_us())
        for player_id in registered.all():
            event = lobby_pb2.PlayerEvent()
            event.CopyFrom(starts)
            await self._tell(session, player_id, event, told)

    async def cancel(self, tournament_id: str, caller: str | None) -> TournamentRow:
        """Cancel a registering or running tournament (a cancelled one: nothing changes); its
        lease goes with it, so a driver mid-step changes nothing more (``LeaseLost``). Its
        players' rows stay as they are: the standings are kept; their entry fees are refunded
        in the same transaction. ``caller``: the player cancelling it (None: a service)."""

        told: list[str] = []

        async def work(session: AsyncConnection) -> TournamentRow:
            told.clear()
            tournament: TournamentRow = await self._tournament_for_update(session, tournament_id)
            if caller is not None and caller != tournament.creator_player_id:
                raise Denied("NOT_TOURNAMENT_CREATOR", tournament_id=tournament_id)
            if tournament.state == FINISHED:
                raise Conflict("TOURNAMENT_FINISHED", tournament_id=tournament_id)
            if tournament.state == CANCELLED:
                return tournament
            await self._cancel(session, tournament, CANCELLED_BY_ORGANISER, told)
            cancelled: TournamentRow = await self._tournament_for_update(session, tournament_id)
            return cancelled

        cancelled = await self.database.transaction(work)
        self._events.wakes.wake(told)
        return cancelled

    async def _cancel(
        self, session: AsyncConnection, tournament: TournamentRow, reason: str, told: list[str]
    ) -> None:
        """Cancelled for ``reason``: every entry fee refunded, the lease gone, every registered
        player told (TOURNAMENT_CANCELLED), in ``session``'s transaction."""
        tournament_id = tournament.tournament_id
        await session.execute(
            update(tournaments)
            .where(tournaments.c.tournament_id == tournament_id)
            .values(state=CANCELLED, finished_us=now_us(), cancel_reason=reason)
        )
        entrants = sorted(
            (
                await session.scalars(
                    select(tournament_players.c.player_id).where(
                        tournament_players.c.tournament_id == tournament_id
                    )
                )
            ).all()
        )
        if tournament.entry_fee:
            await tournament_chips.refund_entries(
                session, tournament_id=tournament_id, player_ids=entrants, now_us=now_us()
            )
        await session.execute(
            delete(tournament_leases).where(tournament_leases.c.tournament_id == tournament_id)
        )
        for player_id in entrants:
            event = lobby_pb2.PlayerEvent(
                kind=lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_CANCELLED,
                tournament_id=tournament_id,
                reason=reason,
            )
            await self._tell(session, player_id, event, told)

    async def get(self, tournament_id: str) -> TournamentRow:
        async with self.database.read() as session:
            row = (
                await session.execute(
                    select(tournaments).where(tournaments.c.tournament_id == tournament_id)
                )
            ).one_or_none()
        if row is None:
            raise Missing("TOURNAMENT_NOT_FOUND", tournament_id=tournament_id)
        return _tournament(row)

    async def page(
        self,
        states: Sequence[str],
        after: tuple[int, str] | None,
        size: int,
        listed: Listing | None = None,
    ) -> tuple[list[TournamentRow], tuple[int, str] | None]:
        """Tournaments newest first, after the key ``(created_us, id)``, of ``listed``'s
        category and time windows."""
        query = select(tournaments)
        if states:
            query = query.where((listed or Listing()).state_condition(states))
        if listed is not None:
            query = query.where(*listed.conditions())
        if after is not None:
            created, tournament_id = after
            query = query.where(
                or_(
                    tournaments.c.created_us < created,
                    and_(
                        tournaments.c.created_us == created,
                        tournaments.c.tournament_id < tournament_id,
                    ),
                )
            )
        query = query.order_by(
            tournaments.c.created_us.desc(), tournaments.c.tournament_id.desc()
        ).limit(size + 1)
        async with self.database.read() as session:
            rows = [_tournament(row) for row in await session.execute(query)]
        if len(rows) <= size:
            return rows, None
        last = rows[size - 1]
        return rows[:size], (last.created_us, last.tournament_id)

    async def round_tables(self, tournament_id: str) -> list[RoundTable]:
        async with self.database.read() as session:
            found = await session.execute(
                select(tournament_tables)
                .where(tournament_tables.c.tournament_id == tournament_id)
                .order_by(tournament_tables.c.round, tournament_tables.c.table_index)
            )
            return [_round_table(row) for row in found]

    async def entrants(self, tournament_id: str) -> list[Entrant]:
        """Every registered player."""
        async with self.database.read() as session:
            found = await session.execute(
                select(tournament_players).where(
                    tournament_players.c.tournament_id == tournament_id
                )
            )
            rows = list(found)
        return [
            Entrant(
                _entry(row),
                row.display_name,
                row.table_id,
                row.matches_won,
                checked_in=bool(row.checked_in),
                substitute=bool(row.substitute),
                disqualification_reason=row.disqualification_reason,
            )
            for row in rows
        ]

    # ----------------------------------------------------------------------------------------
    # Driving (each write fenced by the lease)

    async def registered(self, player_id: str) -> list[str]:
        """The tournaments ``player_id`` is registered for that are registering or running,
        oldest first."""
        t, p = tournaments.c, tournament_players.c
        async with self.database.read() as session:
            ids = await session.scalars(
                select(t.tournament_id)
                .join(tournament_players, p.tournament_id == t.tournament_id)
                .where(p.player_id == player_id, t.state.in_([REGISTERING, RUNNING]))
                .order_by(t.created_us, t.tournament_id)
            )
            return list(ids)

    async def running(self) -> list[str]:
        async with self.database.read() as session:
            found = await session.execute(
                select(tournaments.c.tournament_id).where(tournaments.c.state == RUNNING)
            )
            return [str(value) for value in found.scalars()]

    async def seat_events(
        self, tables_by_player: dict[str, str], since_us: int = 0
    ) -> dict[str, list[tuple[int, int]]]:
        """What each player's table told the lobby of their seat (``lobby.no_shows``): for each
        player of ``tables_by_player`` (player: table), (the table's event number, kind) of
        their recorded events from that table (those from ``since_us`` on)."""
        found: dict[str, list[tuple[int, int]]] = {player: [] for player in tables_by_player}
        if not tables_by_player:
            return found
        async with self.database.read() as session:
            rows = await session.execute(
                select(
                    player_events.c.player_id, player_events.c.kind, player_events.c.cause
                ).where(
                    player_events.c.player_id.in_(sorted(tables_by_player)),
                    player_events.c.kind.in_(no_shows.KINDS),
                    player_events.c.cause.is_not(None),
                    player_events.c.time_us >= since_us,
                )
            )
            for player_id, kind, cause in rows:
                number = no_shows.table_sequence(str(cause), tables_by_player[player_id])
                if number is not None:
                    found[player_id].append((number, int(kind)))
        return found

    async def forfeit(self, tournament_id: str, player_ids: Sequence[str], holder: str) -> None:
        """Forfeit ``player_ids`` under the tournament's no-show policy (fenced)."""
        if not player_ids:
            return

        async def work(session: AsyncConnection) -> None:
            await self._fence(session, tournament_id, holder)
            await session.execute(
                update(tournament_players)
                .where(
                    tournament_players.c.tournament_id == tournament_id,
                    tournament_players.c.player_id.in_(list(player_ids)),
                )
                .values(forfeited=True)
            )

        await self.database.transaction(work)

    async def unreported_rankings(self) -> list[str]:
        """Finished tournaments whose final ranking the scoring service has not yet recorded."""
        async with self.database.read() as session:
            found = await session.execute(
                select(tournaments.c.tournament_id).where(
                    tournaments.c.state == FINISHED,
                    tournaments.c.ranking_reported == False,  # noqa: E712
                )
            )
            return [str(value) for value in found.scalars()]

    async def final_ranking(self, tournament_id: str) -> list[tuple[int, str, str, bool]]:
        """A finished tournament's final ranking, ``(place, player, name, forfeited)``, best
        first."""
        async with self.database.read() as session:
            found = await session.execute(
                select(
                    tournament_players.c.final_rank,
                    tournament_players.c.player_id,
                    tournament_players.c.display_name,
                    tournament_players.c.forfeited,
                )
                .where(
                    tournament_players.c.tournament_id == tournament_id,
                    tournament_players.c.final_rank.is_not(None),
                )
                .order_by(tournament_players.c.final_rank)
            )
            return [
                (int(rank), str(player), str(name), bool(forfeited))
                for rank, player, name, forfeited in found
            ]

    async def ranking_reported(self, tournament_id: str) -> None:
        """The scoring service has recorded the tournament's final ranking."""

        async def work(session: AsyncConnection) -> None:
            await session.execute(
                update(tournaments)
                .where(tournaments.c.tournament_id == tournament_id)
                .values(ranking_reported=True)
            )

        await self.database.transaction(work)

    async def acquire_lease(self, tournament_id: str, holder: str) -> bool:
        """Take or renew the lease on ``tournament_id``: True if ``holder`` has it now."""
        now = now_us()

        async def work(session: AsyncConnection) -> bool:
            result = await session.execute(
                update(tournament_leases)
                .where(
                    tournament_leases.c.tournament_id == tournament_id,
                    or_(
                        tournament_leases.c.holder == holder,
                        tournament_leases.c.expires_us < now,
                    ),
                )
                .values(
                    holder=holder,
                    expires_us=now + self._lease_us,
                    generation=tournament_leases.c.generation
                    + case((tournament_leases.c.holder == holder, 0), else_=1),
                )
            )
            return bool(result.rowcount == 1)

        return await self.database.transaction(work)

    async def release_leases(self, holder: str) -> None:
        """Give up every lease ``holder`` has (a graceful stop): another pod takes over now."""

        async def work(session: AsyncConnection) -> None:
            await session.execute(
                update(tournament_leases)
                .where(tournament_leases.c.holder == holder)
                .values(expires_us=0)
            )

        await self.database.transaction(work)

    async def lease(self, tournament_id: str) -> tuple[str, int, int] | None:
        """(holder, expiry, generation) of a tournament's lease."""
        async with self.database.read() as session:
            row = (
                await session.execute(
                    select(tournament_leases).where(
                        tournament_leases.c.tournament_id == tournament_id
                    )
                )
            ).one_or_none()
        return None if row is None else (row.holder, row.expires_us, row.generation)

    async def _fence(self, session: AsyncConnection, tournament_id: str, holder: str) -> None:
        result = await session.execute(
            update(tournament_leases)
            .where(
                tournament_leases.c.tournament_id == tournament_id,
                tournament_leases.c.holder == holder,
                tournament_leases.c.expires_us >= now_us(),
            )
            .values(expires_us=now_us() + self._lease_us)
        )
        if result.rowcount != 1:
            raise LeaseLost(tournament_id)

    async def plan_round(
        self,
        tournament_id: str,
        round_number: int,
        holder: str,
        seeding: Sequence[str] = (),
    ) -> None:
        """Seat round ``round_number``: its entrants (not eliminated or disqualified), best
        first; round 1 in registration order, or in ``seeding``'s order (players it names
        first). With a round time limit, the round's deadline is set now."""

        async def work(session: AsyncConnection) -> None:
            await self._fence(session, tournament_id, holder)
            tournament = await self._tournament_for_update(session, tournament_id)
            if tournament.state != RUNNING or tournament.current_round != round_number:
                return
            exists = (
                await session.execute(
                    select(func.count())
                    .select_from(tournament_tables)
                    .where(
                        tournament_tables.c.tournament_id == tournament_id,
                        tournament_tables.c.round == round_number,
                    )
                )
            ).scalar_one()
            if exists:
                return
            rows = list(
                await session.execute(
                    select(tournament_players).where(
                        tournament_players.c.tournament_id == tournament_id,
                        tournament_players.c.eliminated == False,  # noqa: E712
                        tournament_players.c.disqualified == False,  # noqa: E712
                    )
                )
            )
            entries = sorted((_entry(row) for row in rows), key=bracket.entry_key)
            if round_number == 1:
                seeded = {player: place for place, player in enumerate(seeding)}
                entries.sort(
                    key=lambda entry: (
                        seeded.get(entry.player_id, len(seeded)),
                        entry.registration,
                    )
                )
            entrants = [entry.player_id for entry in entries]
            if not entrants:
                return
            deadline = (
                now_us() + tournament.round_seconds * US if tournament.round_seconds else None
            )
            last = bracket.is_last_round(round_number, len(entrants), tournament.planned_rounds)
            for index, seats in enumerate(bracket.seat_round(entrants)):
                seated = sum(1 for player in seats if player != bracket.BOT)
                await session.execute(
                    tournament_tables.insert().values(
                        tournament_id=tournament_id,
                        round=round_number,
                        table_index=index,
                        seats=json.dumps(seats),
                        advance=bracket.advance_count(seated, tournament.advance_per_table, last),
                        state=PLANNED,
                        deadline_us=deadline,
                    )
                )
            await session.execute(
                update(tournament_players)
                .where(
                    tournament_players.c.tournament_id == tournament_id,
                    tournament_players.c.player_id.in_(entrants),
                )
                .values(round_reached=round_number)
            )

        await self.database.transaction(work)

    async def table_started(
        self, table: RoundTable, table_id: str, match_id: str, holder: str
    ) -> None:
        """Record the round's table as started; its players are told where they sit
        (``TOURNAMENT_SEATED``) in the same transaction."""
        told: list[str] = []

        async def work(session: AsyncConnection) -> None:
            told.clear()
            await self._fence(session, table.tournament_id, holder)
            started = await session.execute(
                update(tournament_tables)
                .where(*_table_key(table), tournament_tables.c.state == PLANNED)
                .values(table_id=table_id, match_id=match_id, state=STARTED)
            )
            if started.rowcount != 1:
                return  # started before (a retry): its players were told then
            players_seated = [player for player in table.seats if player != bracket.BOT]
            await session.execute(
                update(tournament_players)
                .where(
                    tournament_players.c.tournament_id == table.tournament_id,
                    tournament_players.c.player_id.in_(players_seated),
                )
                .values(table_id=table_id)
            )
            for seat, player in enumerate(table.seats):
                if player != bracket.BOT:
                    event = lobby_pb2.PlayerEvent(
                        kind=lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_SEATED,
                        tournament_id=table.tournament_id,
                        round=table.round,
                        table_id=table_id,
                        seat=seat,
                    )
                    await self._tell(session, player, event, told)

        await self.database.transaction(work)
        self._events.wakes.wake(told)

    async def table_finished(
        self,
        table: RoundTable,
        lines: Sequence[bracket.MatchLine],
        holder: str,
        forfeited: Sequence[str] = (),
    ) -> None:
        """Record a finished table's result: each player's line of the match, and the players
        it forfeited under the no-show policy (``lobby.no_shows``), in one transaction."""

        async def work(session: AsyncConnection) -> None:
            await self._fence(session, table.tournament_id, holder)
            result = await session.execute(
                update(tournament_tables)
                .where(*_table_key(table), tournament_tables.c.state == STARTED)
                .values(
                    state=FINISHED,
                    result=json.dumps([line.__dict__ for line in lines], sort_keys=True),
                )
            )
            if result.rowcount != 1:
                return  # recorded already
            if forfeited:
                await session.execute(
                    update(tournament_players)
                    .where(
                        tournament_players.c.tournament_id == table.tournament_id,
                        tournament_players.c.player_id.in_(list(forfeited)),
                    )
                    .values(forfeited=True)
                )
            for line in lines:
                await session.execute(
                    update(tournament_players)
                    .where(
                        tournament_players.c.tournament_id == table.tournament_id,
                        tournament_players.c.player_id == line.player_id,
                    )
                    .values(
                        won_last=line.winner,
                        match_total=line.total,
                        hands_finished=line.hands_finished,
                        penalty_points=line.penalty_points,
                        matches_won=tournament_players.c.matches_won + (1 if line.winner else 0),
                    )
                )

        await self.database.transaction(work)

    async def complete_round(self, tournament_id: str, round_number: int, holder: str) -> bool:
        """Once every table of the round has finished: advance its best, or end the tournament
        with its winner. True if the tournament has finished. Each player eliminated is told
        (``TOURNAMENT_ELIMINATED``), and at the end every entrant their place
        (``TOURNAMENT_FINISHED``), in the same transaction."""
        told: list[str] = []

        async def work(session: AsyncConnection) -> bool:
            told.clear()
            await self._fence(session, tournament_id, holder)
            tournament = await self._tournament_for_update(session, tournament_id)
            if tournament.state != RUNNING or tournament.current_round != round_number:
                return bool(tournament.state == FINISHED)
            found = await session.execute(
                select(tournament_tables).where(
                    tournament_tables.c.tournament_id == tournament_id,
                    tournament_tables.c.round == round_number,
                )
            )
            rows = list(found)
            if not rows or any(row.state != FINISHED for row in rows):
                return False
            forfeited = set(
                (
                    await session.scalars(
                        select(tournament_players.c.player_id).where(
                            tournament_players.c.tournament_id == tournament_id,
                            tournament_players.c.forfeited == True,  # noqa: E712
                        )
                    )
                ).all()
            )
            advancing: list[str] = []
            entrants: list[str] = []
            for row in rows:
                lines = [bracket.MatchLine(**line) for line in json.loads(row.result or "[]")]
                entrants += [player for player in json.loads(row.seats) if player]
                advancing += bracket.advancing(lines, row.advance, forfeited)
            last = bracket.is_last_round(round_number, len(entrants), tournament.planned_rounds)
            # Every player of the round forfeited: nobody is left to play on.
            last = last or not advancing
            # In the last round nobody advances; everyone but the winner is out (below).
            out = [] if last else [player for player in entrants if player not in set(advancing)]
            if out:
                await session.execute(
                    update(tournament_players)
                    .where(
                        tournament_players.c.tournament_id == tournament_id,
                        tournament_players.c.player_id.in_(out),
                    )
                    .values(eliminated=True)
                )
                for player in out:
                    await self._tell(
                        session,
                        player,
                        lobby_pb2.PlayerEvent(
                            kind=lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_ELIMINATED,
                            tournament_id=tournament_id,
                            round=round_number,
                        ),
                        told,
                    )
            if not last:
                rest = (
                    now_us() + tournament.break_seconds * US if tournament.break_seconds else None
                )
                await session.execute(
                    update(tournaments)
                    .where(tournaments.c.tournament_id == tournament_id)
                    .values(current_round=round_number + 1, next_round_us=rest)
                )
                return False
            everyone = await session.execute(
                select(tournament_players).where(
                    tournament_players.c.tournament_id == tournament_id
                )
            )
            ranked = bracket.standings((_entry(row) for row in everyone), started=True)
            winner = next((entry.player_id for _, entry in ranked if not entry.forfeited), "")
            for rank, entry in ranked:
                await session.execute(
                    update(tournament_players)
                    .where(
                        tournament_players.c.tournament_id == tournament_id,
                        tournament_players.c.player_id == entry.player_id,
                    )
                    .values(final_rank=rank, eliminated=entry.player_id != winner)
                )
                await self._tell(
                    session,
                    entry.player_id,
                    lobby_pb2.PlayerEvent(
                        kind=lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_FINISHED,
                        tournament_id=tournament_id,
                        round=round_number,
                        place=rank,
                    ),
                    told,
                )
            await session.execute(
                update(tournaments)
                .where(tournaments.c.tournament_id == tournament_id)
                .values(
                    state=FINISHED,
                    winner_player_id=winner,
                    finished_us=now_us(),
                )
            )
            # Paid once: with the ranking, in its transaction, under the tournament's key.
            await tournament_chips.pay_prizes(
                session,
                tournament_id=tournament_id,
                prize_table=tournament.prizes,
                ranking=[(rank, entry.player_id) for rank, entry in ranked],
                now_us=now_us(),
            )
            await session.execute(
                delete(tournament_leases).where(tournament_leases.c.tournament_id == tournament_id)
            )
            return True

        finished = await self.database.transaction(work)
        self._events.wakes.wake(told)
        return finished

    async def _tell(
        self,
        session: AsyncConnection,
        player_id: str,
        event: lobby_pb2.PlayerEvent,
        told: list[str],
    ) -> None:
        """Append ``event`` to ``player_id``'s own events in ``session``'s transaction (its
        streams are woken once it has committed: ``told``)."""
        await self._events.append(session, player_id, event)
        told.append(player_id)


def _table_key(table: RoundTable) -> tuple[Any, ...]:
    return (
        tournament_tables.c.tournament_id == table.tournament_id,
        tournament_tables.c.round == table.round,
        tournament_tables.c.table_index == table.table_index,
    )


def _entry(row: Any) -> bracket.Entry:
    return bracket.Entry(
        player_id=row.player_id,
        registration=row.registration,
        round_reached=row.round_reached,
        eliminated=bool(row.eliminated),
        won_last=bool(row.won_last),
        match_total=row.match_total,
        hands_finished=row.hands_finished,
        penalty_points=row.penalty_points,
        forfeited=bool(row.forfeited),
        disqualified=bool(row.disqualified),
    )


__all__ = ["Listing", "NewTournament", "Tournaments"]
