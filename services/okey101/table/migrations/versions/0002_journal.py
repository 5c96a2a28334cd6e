"""The table as a journal: every write a compare-and-set on the row's ``revision``, the hand's
state a snapshot as of ``snapshot_sequence`` (the moves since replay onto it), and the table's
timer in its own row (``timer_*``, indexed by due time) instead of a row of ``table_timers``
rewritten on every move.

Revision ID: 0002_journal
Revises: 0001_initial
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_journal"
down_revision: str | Sequence[str] | None = "0001_initial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("table_tables", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("revision", sa.BigInteger(), server_default="0", nullable=False)
        )
        batch_op.add_column(
            sa.Column("snapshot_sequence", sa.BigInteger(), server_default="0", nullable=False)
        )
        batch_op.add_column(sa.Column("timer_kind", sa.String(length=8), nullable=True))
        batch_op.add_column(sa.Column("timer_due_us", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("timer_claimed_until_us", sa.BigInteger(), nullable=True))
        batch_op.add_column(
            sa.Column("timer_claimed_by", sa.String(length=128), server_default="", nullable=False)
        )
        batch_op.create_index("ix_table_tables_timer_due", ["timer_due_us"], unique=False)
    # Every existing row: its hand state is a snapshot as of its last event; its timer moves in.
    op.execute("UPDATE table_tables SET snapshot_sequence = last_sequence")
    op.execute(
        "UPDATE table_tables SET"
        " timer_kind = (SELECT kind FROM table_timers t WHERE t.table_id = table_tables.table_id),"
        " timer_due_us ="
        " (SELECT due_us FROM table_timers t WHERE t.table_id = table_tables.table_id),"
        " timer_claimed_until_us = (SELECT claimed_until_us FROM table_timers t"
        " WHERE t.table_id = table_tables.table_id),"
        " timer_claimed_by = COALESCE((SELECT claimed_by FROM table_timers t"
        " WHERE t.table_id = table_tables.table_id), '')"
    )
    with op.batch_alter_table("table_timers", schema=None) as batch_op:
        batch_op.drop_index("ix_table_timers_due")
    op.drop_table("table_timers")


def downgrade() -> None:
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
    op.execute(
        "INSERT INTO table_timers (table_id, kind, due_us, claimed_until_us, claimed_by)"
        " SELECT table_id, timer_kind, timer_due_us, timer_claimed_until_us, timer_claimed_by"
        " FROM table_tables WHERE timer_kind IS NOT NULL"
    )
    with op.batch_alter_table("table_tables", schema=None) as batch_op:
        batch_op.drop_index("ix_table_tables_timer_due")
        batch_op.drop_column("timer_claimed_by")
        batch_op.drop_column("timer_claimed_until_us")
        batch_op.drop_column("timer_due_us")
        batch_op.drop_column("timer_kind")
        batch_op.drop_column("snapshot_sequence")
        batch_op.drop_column("revision")
