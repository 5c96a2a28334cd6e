"""Tournaments an organiser can run: who may organise, a tournament's description and category,
and its no-show policy and forfeits.

Revision ID: 0008_tournaments
Revises: 0007_stakes
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_tournaments"
down_revision: str | Sequence[str] | None = "0007_stakes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _organisers_upgrade() -> None:
    """Who may organise; a tournament's description and category."""
    op.create_table(
        "lobby_organisers",
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("granted_us", sa.BigInteger(), nullable=False),
        sa.Column("granted_by", sa.String(length=128), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["lobby_players.player_id"],
            name=op.f("fk_lobby_organisers_player_id_lobby_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("player_id", name=op.f("pk_lobby_organisers")),
    )
    op.create_table(
        "lobby_organiser_changes",
        sa.Column(
            "change_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("action", sa.String(length=8), nullable=False),
        sa.Column("operator", sa.String(length=128), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("request_id", sa.String(length=128), nullable=False),
        sa.Column("changed_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("change_id", name=op.f("pk_lobby_organiser_changes")),
    )
    op.create_index(
        "ix_lobby_organiser_changes_player",
        "lobby_organiser_changes",
        ["player_id", "change_id"],
        unique=False,
    )
    with op.batch_alter_table("lobby_tournaments") as batch:
        batch.add_column(
            sa.Column("description", sa.Text(), server_default=sa.text("''"), nullable=False)
        )
        batch.add_column(
            sa.Column(
                "category", sa.String(length=32), server_default=sa.text("''"), nullable=False
            )
        )
    op.create_index(
        "ix_lobby_tournaments_category",
        "lobby_tournaments",
        ["category", "created_us"],
        unique=False,
    )


def _organisers_downgrade() -> None:
    op.drop_index("ix_lobby_tournaments_category", table_name="lobby_tournaments")
    with op.batch_alter_table("lobby_tournaments") as batch:
        batch.drop_column("category")
        batch.drop_column("description")
    op.drop_index("ix_lobby_organiser_changes_player", table_name="lobby_organiser_changes")
    op.drop_table("lobby_organiser_changes")
    op.drop_table("lobby_organisers")


def _no_shows_upgrade() -> None:
    """A tournament's no-show policy and its forfeited players; whether its final ranking has
    reached the scoring service."""
    with op.batch_alter_table("lobby_tournaments") as batch:
        batch.add_column(
            sa.Column("ranking_reported", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
        batch.add_column(
            sa.Column("no_show_missed_turns", sa.Integer(), server_default="2", nullable=False)
        )
    with op.batch_alter_table("lobby_tournament_players") as batch:
        batch.add_column(
            sa.Column("forfeited", sa.Boolean(), server_default=sa.false(), nullable=False)
        )


def _no_shows_downgrade() -> None:
    with op.batch_alter_table("lobby_tournament_players") as batch:
        batch.drop_column("forfeited")
    with op.batch_alter_table("lobby_tournaments") as batch:
        batch.drop_column("no_show_missed_turns")
        batch.drop_column("ranking_reported")


def upgrade() -> None:
    _organisers_upgrade()
    _no_shows_upgrade()


def downgrade() -> None:
    _no_shows_downgrade()
    _organisers_downgrade()
