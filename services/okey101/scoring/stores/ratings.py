"""Ratings as stored (``scoring_ratings``, ``scoring_rating_changes``): what a recorded match
does to its players' OpenSkill ratings (the arithmetic is ``scoring.ratings``), and the leaderboards
read from them.

A match's ratings are written in its RecordMatch transaction, each rating row locked in one
global order (player id within mode and preset), so two matches never deadlock.
"""

from __future__ import annotations

from typing import Any

from okey.v1 import scoring_pb2
from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.engine.match import MatchState
from okey101.platform.database import Database, insert_ignoring_conflicts
from okey101.scoring import ratings
from okey101.scoring.messages import rating_change
from okey101.scoring.models import rating_changes
from okey101.scoring.models import ratings as rating_rows
from okey101.scoring.records import Page, now_us
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
    ) -> list[scoring_pb2.RatingChange]:
        """Rate the match's players (in ``session``, the match's transaction): each rating of
        the mode, over every preset and over the match's preset, locked in player id order;
        the changes over every preset."""
        # Bots are not rated: a seat a bot played all match counts as no one's.
        players = ["" if seat.bot else seat.player_id for seat in checked.seats]
        sides = ratings.sides(players, state.totals, partners=checked.rules.partners)
        if not sides:
            return []
        mode = ratings.PARTNERS if checked.rules.partners else ratings.FREE_FOR_ALL
        rated = sorted({player for side in sides for player in side.players})
        names = {seat.player_id: _name(checked, seat) for seat in checked.seats}
        winners = {players[seat] for seat in state.winners if players[seat]}
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
            if key == ratings.ALL_PRESETS:
                changes = [
                    rating_change(player, mode, before[player], after[player])
                    for player in players
                    if player in after
                ]
        return changes

    async def leaderboard(
        self, mode: str, preset: str, min_matches: int, after: list[Any] | None, size: int
    ) -> Page:
        """Best first by (ordinal desc, player id asc), continuing strictly after ``after``."""
        table = rating_rows
        base = [table.c.mode == mode, table.c.preset == preset, table.c.matches >= min_matches]
        query = select(table).where(*base)
        if after is not None:
            ordinal, player = float(after[0]), str(after[1])
            query = query.where(
                or_(
                    table.c.ordinal < ordinal,
                    and_(table.c.ordinal == ordinal, table.c.player_id > player),
                )
            )
        query = query.order_by(table.c.ordinal.desc(), table.c.player_id).limit(size + 1)
        async with self.database.read() as session:
            rows = list((await session.execute(query)).all())
            page = rows[:size]
            entries: list[tuple[int, Any]] = []
            if page:
                first = page[0]
                above = (
                    await session.execute(
                        select(func.count())
                        .select_from(table)
                        .where(*base, table.c.ordinal > first.ordinal)
                    )
                ).scalar_one()
                ties = (
                    await session.execute(
                        select(func.count())
                        .select_from(table)
                        .where(
                            *base,
                            table.c.ordinal == first.ordinal,
                            table.c.player_id < first.player_id,
                        )
                    )
                ).scalar_one()
                position = above + ties + 1
                for index, row in enumerate(page):
                    # Equal ordinals share a rank (1, 2, 2, 4).
                    if row.ordinal == first.ordinal:
                        rank = above + 1
                    elif index and row.ordinal == page[index - 1].ordinal:
                        rank = entries[-1][0]
                    else:
                        rank = position + index
                    entries.append((rank, row))
        next_key = None
        if len(rows) > size:
            last = page[-1]
            next_key = [last.ordinal, last.player_id]
        return Page(entries, next_key)


__all__ = ["RatingStore"]
