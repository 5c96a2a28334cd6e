"""Each player's own events (WatchPlayer) and their last sequence number.

Revision ID: 0004_player_events
Revises: 0003_revoked_logins
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_player_events"
down_revision: str | Sequence[str] | None = "0003_revoked_logins"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "lobby_player_events",
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("sequence", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.Integer(), nullable=False),
        sa.Column("time_us", sa.BigInteger(), nullable=False),
        sa.Column("event", sa.LargeBinary(), nullable=False),
        sa.Column("cause", sa.String(length=255), nullable=True),
        sa.PrimaryKeyConstraint("player_id", "sequence", name=op.f("pk_lobby_player_events")),
        sa.UniqueConstraint("cause", name=op.f("uq_lobby_player_events_cause")),
    )
    op.create_index("ix_lobby_player_events_time", "lobby_player_events", ["time_us"], unique=False)
    op.create_table(
        "lobby_player_cursors",
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("last_sequence", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("player_id", name=op.f("pk_lobby_player_cursors")),
    )


def downgrade() -> None:
    op.drop_table("lobby_player_cursors")
    op.drop_index("ix_lobby_player_events_time", table_name="lobby_player_events")
    op.drop_table("lobby_player_events")
