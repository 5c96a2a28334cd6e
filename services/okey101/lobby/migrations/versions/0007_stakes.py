"""Stakes: the quick-match queue's stake, the sits at staked tables still owed, and
tournaments' entry fees and prizes.

Revision ID: 0007_stakes
Revises: 0006_chips
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_stakes"
down_revision: str | Sequence[str] | None = "0006_chips"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("lobby_queue") as batch:
        batch.add_column(
            sa.Column("stake", sa.BigInteger(), server_default=sa.text("0"), nullable=False)
        )
    with op.batch_alter_table("lobby_tournaments") as batch:
        batch.add_column(
            sa.Column("entry_fee", sa.BigInteger(), server_default=sa.text("0"), nullable=False)
        )
        batch.add_column(
            sa.Column("prizes", sa.Text(), server_default=sa.text("'[]'"), nullable=False)
        )
    op.create_table(
        "lobby_staked_seats",
        sa.Column("hold_key", sa.String(length=128), nullable=False),
        sa.Column("sit_request", sa.LargeBinary(), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("hold_key", name=op.f("pk_lobby_staked_seats")),
    )
    op.create_index(
        "ix_lobby_staked_seats_created", "lobby_staked_seats", ["created_us"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_lobby_staked_seats_created", table_name="lobby_staked_seats")
    op.drop_table("lobby_staked_seats")
    with op.batch_alter_table("lobby_tournaments") as batch:
        batch.drop_column("prizes")
        batch.drop_column("entry_fee")
    with op.batch_alter_table("lobby_queue") as batch:
        batch.drop_column("stake")
