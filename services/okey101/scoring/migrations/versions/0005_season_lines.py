"""Seasonal leaderboards: each player's rated matches per week and per month
(``scoring_season_lines``), filled here from the matches already recorded; RecordMatch adds to
them from now on.

A week is an ISO week and a month a calendar month, in UTC, each from its first instant
(``scoring.seasons``, written out again here so this revision never changes with the code).

Revision ID: 0005_season_lines
Revises: 0004_tournament_places
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0005_season_lines"
down_revision: str | Sequence[str] | None = "0004_tournament_places"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = 128
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _us(moment: datetime) -> int:
    delta = moment - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


FIRST_US = -62_135_596_800 * 1_000_000  # 0001-01-01, a Monday
LAST_US = 253_402_300_799_999_999  # 9999-12-31 23:59:59.999999


def _starts(instant_us: int) -> list[tuple[str, int]]:
    """The first instants of the week and the month that hold ``instant_us`` (outside the years
    1-9999, the nearest of them)."""
    moment = EPOCH + timedelta(microseconds=min(max(instant_us, FIRST_US), LAST_US))
    day = datetime(moment.year, moment.month, moment.day, tzinfo=UTC)
    return [
        ("week", _us(day - timedelta(days=day.weekday()))),
        ("month", _us(day.replace(day=1))),
    ]


def upgrade() -> None:
    season_lines = op.create_table(
        "scoring_season_lines",
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("season", sa.String(8), nullable=False),
        sa.Column("start_us", sa.BigInteger(), nullable=False),
        sa.Column("player_id", sa.String(ID), nullable=False),
        sa.Column("matches", sa.BigInteger(), nullable=False),
        sa.Column("wins", sa.BigInteger(), nullable=False),
        sa.Column("points", sa.BigInteger(), nullable=False),
        sa.Column("rating_change", sa.Double(), nullable=False),
        sa.PrimaryKeyConstraint(
            "mode", "preset", "season", "start_us", "player_id", name="pk_scoring_season_lines"
        ),
    )
    line = sa.table(
        "scoring_match_players",
        sa.column("match_id"),
        sa.column("player_id"),
        sa.column("winner"),
        sa.column("total"),
        sa.column("ended_at_us"),
    )
    change = sa.table(
        "scoring_rating_changes",
        sa.column("match_id"),
        sa.column("player_id"),
        sa.column("mode"),
        sa.column("preset"),
        sa.column("mu_before"),
        sa.column("sigma_before"),
        sa.column("mu_after"),
        sa.column("sigma_after"),
    )
    # Every rated line: a rating change of the line's player in the line's match.
    rated = sa.select(
        line.c.player_id,
        line.c.winner,
        line.c.total,
        line.c.ended_at_us,
        change.c.mode,
        change.c.preset,
        change.c.mu_before,
        change.c.sigma_before,
        change.c.mu_after,
        change.c.sigma_after,
    ).select_from(
        line.join(
            change,
            sa.and_(change.c.match_id == line.c.match_id, change.c.player_id == line.c.player_id),
        )
    )
    added: dict[tuple[str, str, str, int, str], dict[str, Any]] = {}
    for row in op.get_bind().execute(rated):
        gained = (row.mu_after - 3.0 * row.sigma_after) - (row.mu_before - 3.0 * row.sigma_before)
        for season, start in _starts(row.ended_at_us):
            key = (row.mode, row.preset, season, start, row.player_id)
            sums = added.setdefault(
                key, {"matches": 0, "wins": 0, "points": 0, "rating_change": 0.0}
            )
            sums["matches"] += 1
            sums["wins"] += 1 if row.winner else 0
            sums["points"] += row.total
            sums["rating_change"] += gained
    if added:
        op.bulk_insert(
            season_lines,
            [
                {
                    "mode": mode,
                    "preset": preset,
                    "season": season,
                    "start_us": start,
                    "player_id": player,
                    **sums,
                }
                for (mode, preset, season, start, player), sums in sorted(added.items())
            ],
        )


def downgrade() -> None:
    op.drop_table("scoring_season_lines")
