"""A tournament's standings as scoring sees them: its players' recorded matches added up (most
wins, then the lowest sum of totals), with the hands each played and finished."""

from __future__ import annotations

from typing import Any

from sqlalchemy import case, func, select

from okey101.platform.database import Database
from okey101.scoring.models import hand_seats, match_players
from okey101.scoring.records import Page, StandingLine


class Standings:
    """Tournament standings (module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def page(
        self, tournament_id: str, round_number: int, after: list[Any] | None, size: int
    ) -> Page:
        """Players of the tournament's recorded matches: most wins, then the lowest sum of
        totals; equal lines share a rank; player id breaks the order, never the rank."""
        async with self.database.read() as session:
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
        return Page(page, next_key)


__all__ = ["Standings"]
