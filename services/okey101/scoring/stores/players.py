"""A player's record: statistics over their recorded hands and matches, and their history of
ended matches with what each did to their rating."""

from __future__ import annotations

from typing import Any

from okey.v1 import scoring_pb2
from sqlalchemy import and_, case, func, or_, select

from okey101.platform.database import Database
from okey101.scoring import ratings
from okey101.scoring.messages import player_match
from okey101.scoring.models import hand_seats, match_players, matches, rating_changes
from okey101.scoring.models import ratings as rating_rows
from okey101.scoring.records import StatsData


class PlayerRecords:
    """Players' statistics and histories (module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def known(self, player_id: str) -> bool:
        """Whether scoring has recorded anything of the player (a hand played, a match)."""
        async with self.database.read() as session:
            seat = await session.scalar(
                select(hand_seats.c.player_id).where(hand_seats.c.player_id == player_id).limit(1)
            )
            if seat is not None:
                return True
            line = await session.scalar(
                select(match_players.c.player_id)
                .where(match_players.c.player_id == player_id)
                .limit(1)
            )
        return line is not None

    async def stats(self, player_id: str, preset: str | None) -> StatsData:
        """What the player's recorded hands and matches add up to (one preset, or all)."""
        seat_filter = [
            hand_seats.c.player_id == player_id,
            hand_seats.c.void.is_(False),
            hand_seats.c.bot.is_(False),
        ]
        line_filter = [match_players.c.player_id == player_id]
        if preset is not None:
            seat_filter.append(hand_seats.c.preset == preset)
            line_filter.append(match_players.c.preset == preset)
        async with self.database.read() as session:
            hands_row = (
                await session.execute(
                    select(
                        func.count(),
                        func.coalesce(func.sum(hand_seats.c.points), 0),
                        func.coalesce(
                            func.sum(case((hand_seats.c.opened_as != "", 1), else_=0)), 0
                        ),
                        func.coalesce(func.sum(case((hand_seats.c.finished, 1), else_=0)), 0),
                        func.coalesce(func.sum(hand_seats.c.penalty_count), 0),
                    ).where(*seat_filter)
                )
            ).one()
            match_row = (
                await session.execute(
                    select(
                        func.count(),
                        func.coalesce(func.sum(case((match_players.c.winner, 1), else_=0)), 0),
                    ).where(*line_filter)
                )
            ).one()
            found = (
                await session.execute(
                    select(rating_rows).where(
                        rating_rows.c.player_id == player_id,
                        rating_rows.c.preset == (preset or ratings.ALL_PRESETS),
                    )
                )
            ).all()
        by_mode = {
            row.mode: ratings.Rating(row.mu, row.sigma, row.matches, row.wins) for row in found
        }
        return StatsData(
            hands=int(hands_row[0]),
            matches=int(match_row[0]),
            wins=int(match_row[1]),
            points=int(hands_row[1]),
            opened=int(hands_row[2]),
            finished=int(hands_row[3]),
            penalties=int(hands_row[4]),
            free_for_all=by_mode.get(ratings.FREE_FOR_ALL),
            partners=by_mode.get(ratings.PARTNERS),
        )

    async def history(
        self, player_id: str, after: list[Any] | None, size: int
    ) -> tuple[list[scoring_pb2.PlayerMatch], list[Any] | None]:
        """The player's ended matches, newest first (end time, then match id, descending)."""
        query = (
            select(match_players, matches.c.table_id)
            .join(matches, matches.c.match_id == match_players.c.match_id)
            .where(match_players.c.player_id == player_id)
        )
        if after is not None:
            ended, match_id = int(after[0]), str(after[1])
            query = query.where(
                or_(
                    match_players.c.ended_at_us < ended,
                    and_(match_players.c.ended_at_us == ended, match_players.c.match_id < match_id),
                )
            )
        query = query.order_by(
            match_players.c.ended_at_us.desc(), match_players.c.match_id.desc()
        ).limit(size + 1)
        async with self.database.read() as session:
            rows = list((await session.execute(query)).all())
            page = rows[:size]
            changes: dict[str, Any] = {}
            if page:
                for change in (
                    await session.execute(
                        select(rating_changes).where(
                            rating_changes.c.player_id == player_id,
                            rating_changes.c.preset == ratings.ALL_PRESETS,
                            rating_changes.c.match_id.in_([row.match_id for row in page]),
                        )
                    )
                ).all():
                    changes[change.match_id] = change
        out = [player_match(row, changes.get(row.match_id)) for row in page]
        next_key = None
        if len(rows) > size:
            last = page[-1]
            next_key = [last.ended_at_us, last.match_id]
        return out, next_key


__all__ = ["PlayerRecords"]
