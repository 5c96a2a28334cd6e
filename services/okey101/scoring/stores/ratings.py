"""Ratings as stored (``scoring_ratings``, ``scoring_rating_changes``): what a recorded match
does to its players' OpenSkill ratings (the arithmetic is ``scoring.ratings``); the
leaderboards read from them are ``stores.leaderboards``.

A match's ratings are written in its RecordMatch transaction, each rating row locked in one
global order (player id within mode and preset), so two matches never deadlock. The same
transaction adds the match to its players' lines of its week and its month
(``scoring_season_lines``, what seasonal leaderboards rank), after the rating rows of the same
mode and preset are locked: a line is only written under its player's rating lock.
"""

from __future__ import annotations

from typing import Any

from okey.v1 import scoring_pb2
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.engine.match import MatchState
from okey101.platform.database import Database, dialect_insert, insert_ignoring_conflicts
from okey101.scoring import ratings, seasons
from okey101.scoring.messages import rating_change
from okey101.scoring.models import rating_changes, season_lines
from okey101.scoring.models import ratings as rating_rows
from okey101.scoring.records import now_us
from okey101.scoring.validation import CheckedMatch, SeatInfo


def _name(checked: CheckedMatch, seat: SeatInfo) -> str:
    return checked.request.result.seats[seat.seat].display_name or seat.display_name


class RatingStore:
    """Players' ratings (module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def rate(
        self,
        session: AsyncConnection,
        checked: CheckedMatch,
        state: MatchState,
        match_id: str,
        preset: str,
        ended_at_us: int,
    ) -> list[scoring_pb2.RatingChange]:
        """Rate the match's players (in ``session``, the match's transaction): each rating of
        the mode, over every preset and over the match's preset, locked in player id order,
        and their season lines of the week and the month ``ended_at_us`` falls in; the changes
        over every preset."""
        # Bots are not rated: a seat a bot played all match counts as no one's.
        players = ["" if seat.bot else seat.player_id for seat in checked.seats]
        sides = ratings.sides(players, state.totals, partners=checked.rules.partners)
        if not sides:
            return []
        mode = ratings.PARTNERS if checked.rules.partners else ratings.FREE_FOR_ALL
        rated = sorted({player for side in sides for player in side.players})
        names = {seat.player_id: _name(checked, seat) for seat in checked.seats}
        winners = {players[seat] for seat in state.winners if players[seat]}
        points = {player: state.totals[seat] for seat, player in enumerate(players) if player}
        windows = [seasons.window(season, ended_at_us) for season in (seasons.WEEK, seasons.MONTH)]
        now = now_us()
        start = ratings.initial()
        keys = [ratings.ALL_PRESETS, preset] if preset != ratings.ALL_PRESETS else [preset]
        await session.execute(
            insert_ignoring_conflicts(rating_rows, self.database.dialect),
            [
                {
                    "player_id": player,
                    "mode": mode,
                    "preset": key,
                    "display_name": names[player],
                    "mu": start.mu,
                    "sigma": start.sigma,
                    "ordinal": start.ordinal,
                    "matches": 0,
                    "wins": 0,
                    "updated_at_us": now,
                }
                for key in keys
                for player in rated
            ],
        )
        changes: list[scoring_pb2.RatingChange] = []
        for key in keys:
            rows = (
                await session.execute(
                    select(rating_rows)
                    .where(
                        rating_rows.c.mode == mode,
                        rating_rows.c.preset == key,
                        rating_rows.c.player_id.in_(rated),
                    )
                    .order_by(rating_rows.c.player_id)
                    .with_for_update()
                )
            ).all()
            before = {
                row.player_id: ratings.Rating(row.mu, row.sigma, row.matches, row.wins)
                for row in rows
            }
            after = ratings.rate(sides, before, winners)
            for player in rated:
                new = after[player]
                await session.execute(
                    update(rating_rows)
                    .where(
                        rating_rows.c.player_id == player,
                        rating_rows.c.mode == mode,
                        rating_rows.c.preset == key,
                    )
                    .values(
                        display_name=names[player],
                        mu=new.mu,
                        sigma=new.sigma,
                        ordinal=new.ordinal,
                        matches=new.matches,
                        wins=new.wins,
                        updated_at_us=now,
                    )
                )
            await session.execute(
                rating_changes.insert(),
                [
                    {
                        "match_id": match_id,
                        "player_id": player,
                        "mode": mode,
                        "preset": key,
                        "mu_before": before[player].mu,
                        "sigma_before": before[player].sigma,
                        "matches_before": before[player].matches,
                        "mu_after": after[player].mu,
                        "sigma_after": after[player].sigma,
                        "matches_after": after[player].matches,
                    }
                    for player in rated
                ],
            )
            await self._add_to_seasons(
                session,
                [
                    {
                        "mode": mode,
                        "preset": key,
                        "season": window.season,
                        "start_us": window.start_us,
                        "player_id": player,
                        "matches": 1,
                        "wins": 1 if player in winners else 0,
                        "points": points[player],
                        "rating_change": after[player].ordinal - before[player].ordinal,
                    }
                    for window in windows
                    for player in rated
                ],
            )
            if key == ratings.ALL_PRESETS:
                changes = [
                    rating_change(player, mode, before[player], after[player])
                    for player in players
                    if player in after
                ]
        return changes

    async def _add_to_seasons(self, session: AsyncConnection, lines: list[dict[str, Any]]) -> None:
        """Add each line to the player's line of its window (made at zero if it is the first)."""
        table = season_lines
        statement = dialect_insert(table, self.database.dialect)
        statement = statement.on_conflict_do_update(
            index_elements=[column.name for column in table.primary_key.columns],
            set_={
                name: table.c[name] + statement.excluded[name]
                for name in ("matches", "wins", "points", "rating_change")
            },
        )
        await session.execute(statement, lines)


__all__ = ["RatingStore"]
