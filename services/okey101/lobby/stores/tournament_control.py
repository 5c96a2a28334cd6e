"""An organiser's hand on a tournament in the database: pause, resume, and disqualification.

Each change locks the tournament's row (``stores.tournament_schedules.locked_tournament``) as
every change of a tournament does, and tells the players it concerns in the same transaction.
A pause holds back the next round's tables (``lobby.tournament_driver`` reads ``paused``); a
disqualified player is forfeited too, so the bracket never advances them and the standings rank
them last (``lobby.bracket``).
"""

from __future__ import annotations

from okey.v1 import lobby_pb2
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.errors import Conflict, Denied
from okey101.lobby.models import tournament_players, tournaments
from okey101.lobby.records import CANCELLED, FINISHED, RUNNING, TournamentRow
from okey101.lobby.stores.player_events import PlayerEvents
from okey101.lobby.stores.tournament_schedules import locked_tournament
from okey101.platform.database import Database


def _creator_only(tournament: TournamentRow, caller: str | None) -> None:
    if caller is not None and caller != tournament.creator_player_id:
        raise Denied("NOT_TOURNAMENT_CREATOR", tournament_id=tournament.tournament_id)


class TournamentControl:
    """Pause, resume and disqualify (module docstring); ``caller`` is the player asking (None:
    a service)."""

    def __init__(self, database: Database, events: PlayerEvents) -> None:
        self.database = database
        self._events = events

    async def set_paused(
        self, tournament_id: str, caller: str | None, paused: bool
    ) -> tuple[TournamentRow, bool]:
        """Pause or resume a running tournament: the tournament after, and whether this call
        changed it. Every entrant still in is told (TOURNAMENT_PAUSED or RESUMED)."""
        told: list[str] = []

        async def work(session: AsyncConnection) -> tuple[TournamentRow, bool]:
            told.clear()
            tournament = await locked_tournament(session, tournament_id)
            _creator_only(tournament, caller)
            if tournament.state != RUNNING:
                raise Conflict(
                    "TOURNAMENT_NOT_RUNNING", tournament_id=tournament_id, state=tournament.state
                )
            if tournament.paused == paused:
                return tournament, False
            await session.execute(
                update(tournaments)
                .where(tournaments.c.tournament_id == tournament_id)
                .values(paused=paused)
            )
            p = tournament_players.c
            players = await session.scalars(
                select(p.player_id).where(
                    p.tournament_id == tournament_id,
                    p.eliminated == False,  # noqa: E712
                    p.disqualified == False,  # noqa: E712
                )
            )
            kind = (
                lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_PAUSED
                if paused
                else lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_RESUMED
            )
            for player_id in players.all():
                await self._events.append(
                    session,
                    player_id,
                    lobby_pb2.PlayerEvent(kind=kind, tournament_id=tournament_id),
                )
                told.append(player_id)
            return await locked_tournament(session, tournament_id), True

        answer = await self.database.transaction(work)
        self._events.wakes.wake(told)
        return answer

    async def disqualify(
        self, tournament_id: str, player_id: str, reason: str, caller: str | None
    ) -> tuple[bool, str]:
        """Disqualify ``player_id`` for ``reason``: whether this call did, and the table they
        sit at now ("" for none; the caller has a bot take the seat, again on a retry). Told
        TOURNAMENT_DISQUALIFIED."""
        told: list[str] = []

        async def work(session: AsyncConnection) -> tuple[bool, str]:
            told.clear()
            tournament = await locked_tournament(session, tournament_id)
            _creator_only(tournament, caller)
            if tournament.state in (FINISHED, CANCELLED):
                raise Conflict(
                    "TOURNAMENT_FINISHED"
                    if tournament.state == FINISHED
                    else "TOURNAMENT_NOT_RUNNING",
                    tournament_id=tournament_id,
                    state=tournament.state,
                )
            p = tournament_players.c
            row = (
                await session.execute(
                    select(p.disqualified, p.table_id, p.eliminated).where(
                        p.tournament_id == tournament_id, p.player_id == player_id
                    )
                )
            ).one_or_none()
            if row is None:
                raise Conflict("NOT_REGISTERED", tournament_id=tournament_id)
            # Their table, again when already disqualified: a retry finishes the seat's handing
            # over to a bot if the first call could not.
            playing = tournament.state == RUNNING and not row.eliminated
            table_id = row.table_id if playing else ""
            if row.disqualified:
                return False, table_id
            await session.execute(
                update(tournament_players)
                .where(p.tournament_id == tournament_id, p.player_id == player_id)
                .values(disqualified=True, forfeited=True, disqualification_reason=reason)
            )
            await self._events.append(
                session,
                player_id,
                lobby_pb2.PlayerEvent(
                    kind=lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_DISQUALIFIED,
                    tournament_id=tournament_id,
                    reason=reason,
                ),
            )
            told.append(player_id)
            return True, table_id

        answer = await self.database.transaction(work)
        self._events.wakes.wake(told)
        return answer


__all__ = ["TournamentControl"]
