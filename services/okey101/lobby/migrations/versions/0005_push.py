"""Push notifications: players' devices, the push outbox, and open streams' presence.

Revision ID: 0005_push
Revises: 0004_player_events
Create Date: 2026-12-14
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_push"
down_revision: str | Sequence[str] | None = "0004_player_events"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "lobby_push_devices",
        sa.Column("device_id", sa.String(length=128), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("platform", sa.String(length=8), nullable=False),
        sa.Column("token", sa.Text(), nullable=False),
        sa.Column("token_digest", sa.String(length=64), nullable=False),
        sa.Column("language", sa.String(length=2), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.Column("registered_us", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["lobby_players.player_id"],
            name=op.f("fk_lobby_push_devices_player_id_lobby_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("device_id", name=op.f("pk_lobby_push_devices")),
        sa.UniqueConstraint("token_digest", name=op.f("uq_lobby_push_devices_token_digest")),
    )
    op.create_index(
        "ix_lobby_push_devices_player",
        "lobby_push_devices",
        ["player_id", "registered_us"],
        unique=False,
    )
    op.create_table(
        "lobby_push_outbox",
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("sequence", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("device_id", sa.String(length=128), nullable=False),
        sa.Column("kind", sa.Integer(), nullable=False),
        sa.Column("event", sa.LargeBinary(), nullable=False),
        sa.Column("state", sa.String(length=8), nullable=False),
        sa.Column("reason", sa.String(length=16), nullable=True),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.Column("next_attempt_us", sa.BigInteger(), nullable=False),
        sa.Column("expires_us", sa.BigInteger(), nullable=False),
        sa.Column("done_us", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["device_id"],
            ["lobby_push_devices.device_id"],
            name=op.f("fk_lobby_push_outbox_device_id_lobby_push_devices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "player_id", "sequence", "device_id", name=op.f("pk_lobby_push_outbox")
        ),
    )
    op.create_index(
        "ix_lobby_push_outbox_due", "lobby_push_outbox", ["state", "next_attempt_us"], unique=False
    )
    op.create_index("ix_lobby_push_outbox_device", "lobby_push_outbox", ["device_id"], unique=False)
    op.create_index(
        "ix_lobby_push_outbox_created", "lobby_push_outbox", ["created_us"], unique=False
    )
    op.create_table(
        "lobby_player_presence",
        sa.Column("stream_id", sa.String(length=128), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("holder", sa.String(length=128), nullable=False),
        sa.Column("expires_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("stream_id", name=op.f("pk_lobby_player_presence")),
    )
    op.create_index(
        "ix_lobby_player_presence_player",
        "lobby_player_presence",
        ["player_id", "expires_us"],
        unique=False,
    )
    op.create_index(
        "ix_lobby_player_presence_holder", "lobby_player_presence", ["holder"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_lobby_player_presence_holder", table_name="lobby_player_presence")
    op.drop_index("ix_lobby_player_presence_player", table_name="lobby_player_presence")
    op.drop_table("lobby_player_presence")
    op.drop_index("ix_lobby_push_outbox_created", table_name="lobby_push_outbox")
    op.drop_index("ix_lobby_push_outbox_device", table_name="lobby_push_outbox")
    op.drop_index("ix_lobby_push_outbox_due", table_name="lobby_push_outbox")
    op.drop_table("lobby_push_outbox")
    op.drop_index("ix_lobby_push_devices_player", table_name="lobby_push_devices")
    op.drop_table("lobby_push_devices")
