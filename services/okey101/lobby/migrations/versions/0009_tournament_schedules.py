"""Tournaments on a schedule: a start time, a registration window, check-in, the fewest players,
substitutes, recurring series; and why a tournament was cancelled. Their pace: a round's time
limit, a break between rounds, seeding by rating, pause, and disqualified players.

Revision ID: 0009_tournament_schedules
Revises: 0008_tournaments
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_tournament_schedules"
down_revision: str | Sequence[str] | None = "0008_tournaments"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _schedules_upgrade() -> None:
    with op.batch_alter_table("lobby_tournaments") as batch:
        batch.add_column(sa.Column("scheduled_start_us", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("registration_opens_us", sa.BigInteger(), nullable=True))
        batch.add_column(
            sa.Column("check_in_seconds", sa.Integer(), server_default="0", nullable=False)
        )
        batch.add_column(
            sa.Column("check_in_told", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
        batch.add_column(sa.Column("min_players", sa.Integer(), server_default="2", nullable=False))
        batch.add_column(
            sa.Column("max_substitutes", sa.Integer(), server_default="0", nullable=False)
        )
        batch.add_column(
            sa.Column("series_id", sa.String(length=128), server_default="", nullable=False)
        )
        batch.add_column(
            sa.Column("cancel_reason", sa.String(length=32), server_default="", nullable=False)
        )
    op.create_index(
        "ix_lobby_tournaments_scheduled",
        "lobby_tournaments",
        ["state", "scheduled_start_us"],
        unique=False,
    )
    op.create_index(
        "ix_lobby_tournaments_series",
        "lobby_tournaments",
        ["series_id", "scheduled_start_us"],
        unique=False,
    )
    with op.batch_alter_table("lobby_tournament_players") as batch:
        batch.add_column(
            sa.Column("checked_in", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
        batch.add_column(
            sa.Column("substitute", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    op.create_table(
        "lobby_tournament_series",
        sa.Column("series_id", sa.String(length=128), nullable=False),
        sa.Column("creator_player_id", sa.String(length=128), server_default="", nullable=False),
        sa.Column("plan", sa.Text(), nullable=False),
        sa.Column("recurrence", sa.LargeBinary(), nullable=False),
        sa.Column("next_start_us", sa.BigInteger(), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.Column("stopped_us", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("series_id", name=op.f("pk_lobby_tournament_series")),
    )


def _schedules_downgrade() -> None:
    op.drop_table("lobby_tournament_series")
    with op.batch_alter_table("lobby_tournament_players") as batch:
        batch.drop_column("substitute")
        batch.drop_column("checked_in")
    op.drop_index("ix_lobby_tournaments_series", table_name="lobby_tournaments")
    op.drop_index("ix_lobby_tournaments_scheduled", table_name="lobby_tournaments")
    with op.batch_alter_table("lobby_tournaments") as batch:
        for column in (
            "cancel_reason",
            "series_id",
            "max_substitutes",
            "min_players",
            "check_in_told",
            "check_in_seconds",
            "registration_opens_us",
            "scheduled_start_us",
        ):
            batch.drop_column(column)


def _pace_upgrade() -> None:
    with op.batch_alter_table("lobby_tournaments") as batch:
        batch.add_column(
            sa.Column("round_seconds", sa.Integer(), server_default="0", nullable=False)
        )
        batch.add_column(
            sa.Column("break_seconds", sa.Integer(), server_default="0", nullable=False)
        )
        batch.add_column(
            sa.Column("seed_by_rating", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
        batch.add_column(
            sa.Column("paused", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
        batch.add_column(sa.Column("next_round_us", sa.BigInteger(), nullable=True))
    with op.batch_alter_table("lobby_tournament_players") as batch:
        batch.add_column(
            sa.Column("disqualified", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
        batch.add_column(
            sa.Column(
                "disqualification_reason",
                sa.Text(),
                server_default=sa.text("''"),
                nullable=False,
            )
        )
    with op.batch_alter_table("lobby_tournament_tables") as batch:
        batch.add_column(sa.Column("deadline_us", sa.BigInteger(), nullable=True))


def _pace_downgrade() -> None:
    with op.batch_alter_table("lobby_tournament_tables") as batch:
        batch.drop_column("deadline_us")
    with op.batch_alter_table("lobby_tournament_players") as batch:
        batch.drop_column("disqualification_reason")
        batch.drop_column("disqualified")
    with op.batch_alter_table("lobby_tournaments") as batch:
        for column in ("next_round_us", "paused", "seed_by_rating", "break_seconds"):
            batch.drop_column(column)
        batch.drop_column("round_seconds")


def upgrade() -> None:
    _schedules_upgrade()
    _pace_upgrade()


def downgrade() -> None:
    _pace_downgrade()
    _schedules_downgrade()
