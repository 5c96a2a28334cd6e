"""The table service's first schema: tables, the event log, request answers, hands, moves,
timers, the outbox to scoring, and pod liveness.

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
        "table_events",
        sa.Column("table_id", sa.String(length=128), nullable=False),
        sa.Column("sequence", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("state_version", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.Integer(), nullable=False),
        sa.Column("hand_id", sa.String(length=128), server_default="", nullable=False),
        sa.Column("time_us", sa.BigInteger(), nullable=False),
        sa.Column("public", sa.LargeBinary(), nullable=False),
        sa.Column("private_0", sa.LargeBinary(), nullable=True),
        sa.Column("private_1", sa.LargeBinary(), nullable=True),
        sa.Column("private_2", sa.LargeBinary(), nullable=True),
        sa.Column("private_3", sa.LargeBinary(), nullable=True),
        sa.PrimaryKeyConstraint("table_id", "sequence", name=op.f("pk_table_events")),
    )
    with op.batch_alter_table("table_events", schema=None) as batch_op:
        batch_op.create_index("ix_table_events_hand", ["hand_id", "sequence"], unique=False)

    op.create_table(
        "table_hands",
        sa.Column("hand_id", sa.String(length=128), nullable=False),
        sa.Column("table_id", sa.String(length=128), nullable=False),
        sa.Column("match_id", sa.String(length=128), nullable=False),
        sa.Column("hand_number", sa.Integer(), nullable=False),
        sa.Column("dealer", sa.Integer(), nullable=False),
        sa.Column("rules_version", sa.String(length=64), nullable=False),
        sa.Column("server_seed", sa.String(length=64), nullable=False),
        sa.Column("commitment", sa.String(length=64), nullable=False),
        sa.Column("player_seeds", sa.Text(), nullable=False),
        sa.Column("deck", sa.Text(), nullable=False),
        sa.Column("seats", sa.Text(), nullable=False),
        sa.Column("started_us", sa.BigInteger(), nullable=False),
        sa.Column("ended_us", sa.BigInteger(), nullable=True),
        sa.Column("result", sa.LargeBinary(), nullable=True),
        sa.Column("final_state", sa.LargeBinary(), nullable=True),
        sa.PrimaryKeyConstraint("hand_id", name=op.f("pk_table_hands")),
    )
    with op.batch_alter_table("table_hands", schema=None) as batch_op:
        batch_op.create_index("ix_table_hands_table", ["table_id", "hand_number"], unique=False)

    op.create_table(
        "table_liveness",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("alive_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_table_liveness")),
    )
    op.create_table(
        "table_moves",
        sa.Column("hand_id", sa.String(length=128), nullable=False),
        sa.Column("sequence", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("action_index", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("action", sa.LargeBinary(), nullable=False),
        sa.Column("source", sa.Integer(), nullable=False),
        sa.Column("time_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("hand_id", "sequence", "action_index", name=op.f("pk_table_moves")),
    )
    op.create_table(
        "table_outbox",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("table_id", sa.String(length=128), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("next_attempt_us", sa.BigInteger(), nullable=False),
        sa.Column("sent_us", sa.BigInteger(), nullable=True),
        sa.Column("last_error", sa.Text(), server_default="", nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_table_outbox")),
        sa.UniqueConstraint("key", name=op.f("uq_table_outbox_key")),
    )
    with op.batch_alter_table("table_outbox", schema=None) as batch_op:
        batch_op.create_index(
            "ix_table_outbox_pending", ["sent_us", "next_attempt_us"], unique=False
        )

    op.create_table(
        "table_requests",
        sa.Column("caller", sa.String(length=128), nullable=False),
        sa.Column("method", sa.String(length=32), nullable=False),
        sa.Column("request_id", sa.String(length=64), nullable=False),
        sa.Column("table_id", sa.String(length=128), nullable=False),
        sa.Column("response", sa.LargeBinary(), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("caller", "method", "request_id", name=op.f("pk_table_requests")),
    )
    op.create_table(
        "table_tables",
        sa.Column("table_id", sa.String(length=128), nullable=False),
        sa.Column("match_id", sa.String(length=128), nullable=False),
        sa.Column("name", sa.String(length=64), server_default="", nullable=False),
        sa.Column("visibility", sa.Integer(), nullable=False),
        sa.Column("invite_code", sa.String(length=32), server_default="", nullable=False),
        sa.Column("state", sa.Integer(), nullable=False),
        sa.Column("host_player_id", sa.String(length=128), server_default="", nullable=False),
        sa.Column("tournament_id", sa.String(length=128), server_default="", nullable=False),
        sa.Column("tournament_round", sa.Integer(), server_default="0", nullable=False),
        sa.Column("preset", sa.String(length=32), nullable=False),
        sa.Column("rules", sa.LargeBinary(), nullable=False),
        sa.Column("rules_version", sa.String(length=64), nullable=False),
        sa.Column("start_when_full", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.Column("updated_us", sa.BigInteger(), nullable=False),
        sa.Column("seats", sa.Text(), nullable=False),
        sa.Column("state_version", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("last_sequence", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("hand_number", sa.Integer(), server_default="0", nullable=False),
        sa.Column("hand_id", sa.String(length=128), server_default="", nullable=False),
        sa.Column("dealer", sa.Integer(), server_default="0", nullable=False),
        sa.Column("hand_state", sa.LargeBinary(), nullable=True),
        sa.Column("match", sa.Text(), nullable=False),
        sa.Column("turn_deadline_us", sa.BigInteger(), nullable=True),
        sa.Column("match_result", sa.LargeBinary(), nullable=True),
        sa.PrimaryKeyConstraint("table_id", name=op.f("pk_table_tables")),
    )
    with op.batch_alter_table("table_tables", schema=None) as batch_op:
        batch_op.create_index(
            "ix_table_tables_state_created", ["state", "created_us"], unique=False
        )
        batch_op.create_index("ix_table_tables_tournament", ["tournament_id"], unique=False)

    op.create_table(
        "table_timers",
        sa.Column("table_id", sa.String(length=128), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("due_us", sa.BigInteger(), nullable=False),
        sa.Column("claimed_until_us", sa.BigInteger(), nullable=True),
        sa.Column("claimed_by", sa.String(length=128), server_default="", nullable=False),
        sa.PrimaryKeyConstraint("table_id", name=op.f("pk_table_timers")),
    )
    with op.batch_alter_table("table_timers", schema=None) as batch_op:
        batch_op.create_index("ix_table_timers_due", ["due_us"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("table_timers", schema=None) as batch_op:
        batch_op.drop_index("ix_table_timers_due")

    op.drop_table("table_timers")
    with op.batch_alter_table("table_tables", schema=None) as batch_op:
        batch_op.drop_index("ix_table_tables_tournament")
        batch_op.drop_index("ix_table_tables_state_created")

    op.drop_table("table_tables")
    op.drop_table("table_requests")
    with op.batch_alter_table("table_outbox", schema=None) as batch_op:
        batch_op.drop_index("ix_table_outbox_pending")

    op.drop_table("table_outbox")
    op.drop_table("table_moves")
    op.drop_table("table_liveness")
    with op.batch_alter_table("table_hands", schema=None) as batch_op:
        batch_op.drop_index("ix_table_hands_table")

    op.drop_table("table_hands")
    with op.batch_alter_table("table_events", schema=None) as batch_op:
        batch_op.drop_index("ix_table_events_hand")

    op.drop_table("table_events")
