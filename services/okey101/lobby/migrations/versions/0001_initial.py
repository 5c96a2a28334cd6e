"""The lobby's first schema: players, refresh tokens, stored answers, rate limits, tables, the
quick-match queue, tournaments and their leases.

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001_initial"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "lobby_players",
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("display_name", sa.String(length=64), nullable=False),
        sa.Column("username", sa.String(length=32), nullable=True),
        sa.Column("password_hash", sa.Text(), nullable=True),
        sa.Column("device_id", sa.String(length=128), nullable=True),
        sa.Column("guest_secret_hash", sa.String(length=64), nullable=True),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.Column("upgraded_us", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("player_id", name=op.f("pk_lobby_players")),
        sa.UniqueConstraint("device_id", name=op.f("uq_lobby_players_device_id")),
        sa.UniqueConstraint("username", name=op.f("uq_lobby_players_username")),
    )
    op.create_table(
        "lobby_rate_limits",
        sa.Column("bucket", sa.String(length=64), nullable=False),
        sa.Column("window_start_us", sa.BigInteger(), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("bucket", "window_start_us", name=op.f("pk_lobby_rate_limits")),
    )
    op.create_index(
        "ix_lobby_rate_limits_window", "lobby_rate_limits", ["window_start_us"], unique=False
    )

    op.create_table(
        "lobby_requests",
        sa.Column("request_key", sa.String(length=64), nullable=False),
        sa.Column("method", sa.String(length=64), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=True),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("request_key", name=op.f("pk_lobby_requests")),
    )
    op.create_index("ix_lobby_requests_created", "lobby_requests", ["created_us"], unique=False)

    op.create_table(
        "lobby_tables",
        sa.Column("table_id", sa.String(length=128), nullable=False),
        sa.Column("invite_code", sa.String(length=64), nullable=True),
        sa.Column("visibility", sa.String(length=8), nullable=False),
        sa.Column("host_player_id", sa.String(length=128), server_default="", nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("preset", sa.String(length=32), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("table_id", name=op.f("pk_lobby_tables")),
        sa.UniqueConstraint("invite_code", name=op.f("uq_lobby_tables_invite_code")),
    )
    op.create_table(
        "lobby_tournaments",
        sa.Column("tournament_id", sa.String(length=128), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("rules", sa.LargeBinary(), nullable=False),
        sa.Column("preset", sa.String(length=32), nullable=False),
        sa.Column("max_players", sa.Integer(), nullable=False),
        sa.Column("advance_per_table", sa.Integer(), nullable=False),
        sa.Column("planned_rounds", sa.Integer(), nullable=False),
        sa.Column("bot_level", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("current_round", sa.Integer(), server_default="0", nullable=False),
        sa.Column("winner_player_id", sa.String(length=128), server_default="", nullable=False),
        sa.Column("creator_player_id", sa.String(length=128), server_default="", nullable=False),
        sa.Column("registered", sa.Integer(), server_default="0", nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.Column("started_us", sa.BigInteger(), nullable=True),
        sa.Column("finished_us", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("tournament_id", name=op.f("pk_lobby_tournaments")),
    )
    op.create_index(
        "ix_lobby_tournaments_state", "lobby_tournaments", ["state", "created_us"], unique=False
    )

    op.create_table(
        "lobby_queue",
        sa.Column("ticket_id", sa.String(length=128), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("display_name", sa.String(length=64), nullable=False),
        sa.Column("preset", sa.String(length=32), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("enqueue_us", sa.BigInteger(), nullable=False),
        sa.Column("bots_fill_us", sa.BigInteger(), nullable=False),
        sa.Column("table_id", sa.String(length=128), nullable=True),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("updated_us", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["lobby_players.player_id"],
            name=op.f("fk_lobby_queue_player_id_lobby_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("ticket_id", name=op.f("pk_lobby_queue")),
    )
    op.create_index(
        "ix_lobby_queue_one_waiting",
        "lobby_queue",
        ["player_id"],
        unique=True,
        sqlite_where=sa.text("state = 'waiting'"),
        postgresql_where=sa.text("state = 'waiting'"),
    )
    op.create_index(
        "ix_lobby_queue_waiting", "lobby_queue", ["preset", "state", "enqueue_us"], unique=False
    )

    op.create_table(
        "lobby_refresh_tokens",
        sa.Column("token_id", sa.String(length=128), nullable=False),
        sa.Column("family_id", sa.String(length=128), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.Column("expires_us", sa.BigInteger(), nullable=False),
        sa.Column("used_us", sa.BigInteger(), nullable=True),
        sa.Column("revoked_us", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["lobby_players.player_id"],
            name=op.f("fk_lobby_refresh_tokens_player_id_lobby_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("token_id", name=op.f("pk_lobby_refresh_tokens")),
    )
    op.create_index(
        "ix_lobby_refresh_tokens_family", "lobby_refresh_tokens", ["family_id"], unique=False
    )
    op.create_index(
        "ix_lobby_refresh_tokens_player", "lobby_refresh_tokens", ["player_id"], unique=False
    )

    op.create_table(
        "lobby_tournament_leases",
        sa.Column("tournament_id", sa.String(length=128), nullable=False),
        sa.Column("holder", sa.String(length=128), nullable=False),
        sa.Column("expires_us", sa.BigInteger(), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["lobby_tournaments.tournament_id"],
            name=op.f("fk_lobby_tournament_leases_tournament_id_lobby_tournaments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("tournament_id", name=op.f("pk_lobby_tournament_leases")),
    )
    op.create_table(
        "lobby_tournament_players",
        sa.Column("tournament_id", sa.String(length=128), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("display_name", sa.String(length=64), nullable=False),
        sa.Column("registration", sa.Integer(), nullable=False),
        sa.Column("round_reached", sa.Integer(), server_default="0", nullable=False),
        sa.Column("eliminated", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("table_id", sa.String(length=128), server_default="", nullable=False),
        sa.Column("won_last", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("match_total", sa.Integer(), server_default="0", nullable=False),
        sa.Column("hands_finished", sa.Integer(), server_default="0", nullable=False),
        sa.Column("penalty_points", sa.Integer(), server_default="0", nullable=False),
        sa.Column("matches_won", sa.Integer(), server_default="0", nullable=False),
        sa.Column("final_rank", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["lobby_tournaments.tournament_id"],
            name=op.f("fk_lobby_tournament_players_tournament_id_lobby_tournaments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "tournament_id", "player_id", name=op.f("pk_lobby_tournament_players")
        ),
    )
    op.create_table(
        "lobby_tournament_tables",
        sa.Column("tournament_id", sa.String(length=128), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("table_index", sa.Integer(), nullable=False),
        sa.Column("seats", sa.Text(), nullable=False),
        sa.Column("advance", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.String(length=128), nullable=True),
        sa.Column("match_id", sa.String(length=128), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("result", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["lobby_tournaments.tournament_id"],
            name=op.f("fk_lobby_tournament_tables_tournament_id_lobby_tournaments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "tournament_id", "round", "table_index", name=op.f("pk_lobby_tournament_tables")
        ),
    )


def downgrade() -> None:
    op.drop_table("lobby_tournament_tables")
    op.drop_table("lobby_tournament_players")
    op.drop_table("lobby_tournament_leases")
    op.drop_index("ix_lobby_refresh_tokens_player", table_name="lobby_refresh_tokens")
    op.drop_index("ix_lobby_refresh_tokens_family", table_name="lobby_refresh_tokens")

    op.drop_table("lobby_refresh_tokens")
    op.drop_index("ix_lobby_queue_waiting", table_name="lobby_queue")
    op.drop_index(
        "ix_lobby_queue_one_waiting",
        table_name="lobby_queue",
        sqlite_where=sa.text("state = 'waiting'"),
        postgresql_where=sa.text("state = 'waiting'"),
    )

    op.drop_table("lobby_queue")
    op.drop_index("ix_lobby_tournaments_state", table_name="lobby_tournaments")

    op.drop_table("lobby_tournaments")
    op.drop_table("lobby_tables")
    op.drop_index("ix_lobby_requests_created", table_name="lobby_requests")

    op.drop_table("lobby_requests")
    op.drop_index("ix_lobby_rate_limits_window", table_name="lobby_rate_limits")

    op.drop_table("lobby_rate_limits")
    op.drop_table("lobby_players")
