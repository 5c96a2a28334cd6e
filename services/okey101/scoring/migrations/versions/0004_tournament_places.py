"""A finished tournament's final ranking as the lobby reported it (RecordTournamentRanking).

Revision ID: 0004_tournament_places
Revises: 0003_request_ids
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_tournament_places"
down_revision: str | Sequence[str] | None = "0003_request_ids"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = 128


def upgrade() -> None:
    op.create_table(
        "scoring_tournament_places",
        sa.Column("tournament_id", sa.String(ID), nullable=False),
        sa.Column("player_id", sa.String(ID), nullable=False),
        sa.Column("place", sa.Integer(), nullable=False),
        sa.Column("display_name", sa.String(256), nullable=False),
        sa.Column("forfeited", sa.Boolean(), nullable=False),
        sa.Column("request_id", sa.String(128), nullable=False),
        sa.Column("recorded_at_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("tournament_id", "player_id", name="pk_scoring_tournament_places"),
    )
    op.create_index(
        "ix_scoring_tournament_places_request",
        "scoring_tournament_places",
        ["request_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_scoring_tournament_places_request", table_name="scoring_tournament_places")
    op.drop_table("scoring_tournament_places")
