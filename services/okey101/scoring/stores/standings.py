"""A tournament's standings as scoring sees them: its players' recorded matches added up (most
wins, then the lowest sum of totals), with the hands each played and finished.

The lobby owns tournaments and their one final ranking (``lobby.bracket``). Once it has
reported that ranking (``record_ranking``), the whole tournament's standings are ordered and
ranked by it, place for place; scoring keeps no rule of its own for a finished tournament."""

from __future__ import annotations

from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.platform.database import Database, insert_ignoring_conflicts
from okey101.scoring.errors import Invalid
from okey101.scoring.models import hand_seats, match_players, tournament_places
from okey101.scoring.records import Page, StandingLine


class Standings:
    """Tournament standings (module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def record_ranking(
        self,
        tournament_id: str,
        places: list[tuple[int, str, str, bool]],
        request_id: str,
        now_us: int,
    ) -> int:
        """Record a finished tournament's final ranking, ``(place, player, name)`` each; the
        first ranking recorded stays (``forfeited`` each too). The number of places recorded. A
        request id that recorded
        another tournament's ranking is REQUEST_ID_REUSED."""

        async def work(session: AsyncConnection) -> int:
            other = await session.scalar(
                select(tournament_places.c.tournament_id)
                .where(
                    tournament_places.c.request_id == request_id,
                    tournament_places.c.tournament_id != tournament_id,
                )
                .limit(1)
            )
            if other is not None:  # the id is bound to the other tournament's ranking
                raise Invalid("REQUEST_ID_REUSED", request_id=request_id)
            for place, player_id, name, forfeited in places:
                await session.execute(
                    insert_ignoring_conflicts(tournament_places, self.database.dialect).values(
                        tournament_id=tournament_id,
                        player_id=player_id,
                        place=place,
                        display_name=name,
                        forfeited=forfeited,
                        request_id=request_id,
                        recorded_at_us=now_us,
                    )
                )
            counted = await session.execute(
                select(func.count())
                .select_from(tournament_places)
                .where(tournament_places.c.tournament_id == tournament_id)
            )
            return int(counted.scalar_one())

        return await self.database.transaction(work)

    async def page(
        self, tournament_id: str, round_number: int, after: list[Any] | None, size: int
    ) -> tuple[Page, bool]:
        """The standings and whether they are the final ranking (module docstring). Without
        one: players of the tournament's recorded matches, most wins, then the lowest sum of
        totals; equal lines share a rank; player id breaks the order, never the rank."""
        async with self.database.read() as session:
            final: dict[str, tuple[int, str, bool]] = {}
            if not round_number:
                final = {
                    row.player_id: (row.place, row.display_name, bool(row.forfeited))
                    for row in await session.execute(
                        select(tournament_places).where(
                            tournament_places.c.tournament_id == tournament_id
                        )
                    )
                }
            conditions = [match_players.c.tournament_id == tournament_id]
            if round_number:
                conditions.append(match_players.c.tournament_round == round_number)
            lines = (
                await session.execute(
                    select(match_players)
                    .where(*conditions, match_players.c.player_id != "")
                    .order_by(match_players.c.ended_at_us)
                )
            ).all()
            match_ids = sorted({line.match_id for line in lines})
            hand_counts: dict[str, tuple[int, int]] = {}
            if match_ids:
                for player, played, finished in (
                    await session.execute(
                        select(
                            hand_seats.c.player_id,
                            func.count(),
                            func.sum(case((hand_seats.c.finished, 1), else_=0)),
                        )
                        .where(
                            hand_seats.c.match_id.in_(match_ids),
                            hand_seats.c.player_id != "",
                            hand_seats.c.void.is_(False),
                            hand_seats.c.bot.is_(False),
                        )
                        .group_by(hand_seats.c.player_id)
                    )
                ).all():
                    hand_counts[player] = (int(played), int(finished or 0))
        totals: dict[str, dict[str, Any]] = {}
        for line in lines:
            entry = totals.setdefault(
                line.player_id, {"name": line.display_name, "matches": 0, "wins": 0, "points": 0}
            )
            entry["name"] = line.display_name or entry["name"]
            entry["matches"] += 1
            entry["wins"] += 1 if line.winner else 0
            entry["points"] += line.total
        if final:
            return self._final_page(final, totals, hand_counts, after, size), True
        ordered = sorted(
            totals.items(), key=lambda item: (-item[1]["wins"], item[1]["points"], item[0])
        )
        standings: list[StandingLine] = []
        for position, (player, entry) in enumerate(ordered, start=1):
            rank = position
            if standings:
                previous = standings[-1]
                if (previous.wins, previous.total_points) == (entry["wins"], entry["points"]):
                    rank = previous.rank
            played, finished = hand_counts.get(player, (0, 0))
            standings.append(
                StandingLine(
                    player_id=player,
                    display_name=entry["name"],
                    matches=entry["matches"],
                    wins=entry["wins"],
                    total_points=entry["points"],
                    hands=played,
                    hands_finished=finished,
                    rank=rank,
                )
            )
        if after is not None:
            wins, points, player = int(after[0]), int(after[1]), str(after[2])
            standings = [
                line
                for line in standings
                if (-line.wins, line.total_points, line.player_id) > (-wins, points, player)
            ]
        page = standings[:size]
        next_key = None
        if len(standings) > size:
            last = page[-1]
            next_key = [last.wins, last.total_points, last.player_id]
        return Page(page, next_key), False

    @staticmethod
    def _final_page(
        final: dict[str, tuple[int, str, bool]],
        totals: dict[str, dict[str, Any]],
        hand_counts: dict[str, tuple[int, int]],
        after: list[Any] | None,
        size: int,
    ) -> Page:
        """The final ranking's lines, by place, with each player's recorded matches added up;
        pages continue after the last line's place (the key ``[place, 0, player]``)."""
        standings: list[StandingLine] = []
        for player, (place, name, forfeited) in sorted(final.items(), key=lambda item: item[1][0]):
            entry = totals.get(player, {"name": name, "matches": 0, "wins": 0, "points": 0})
            played, finished = hand_counts.get(player, (0, 0))
            standings.append(
                StandingLine(
                    player_id=player,
                    display_name=name or entry["name"],
                    matches=entry["matches"],
                    wins=entry["wins"],
                    total_points=entry["points"],
                    hands=played,
                    hands_finished=finished,
                    rank=place,
                    forfeited=forfeited,
                )
            )
        if after is not None:
            standings = [line for line in standings if line.rank > int(after[0])]
        page = standings[:size]
        next_key = None
        if len(standings) > size:
            next_key = [page[-1].rank, 0, page[-1].player_id]
        return Page(page, next_key)


__all__ = ["Standings"]
