"""A table's own number of turns in a row a player may miss before a bot keeps their seat
(#37: the lobby's tournament tables say 1); 0, as for existing tables, is the service's setting.

Revision ID: 0006_missed_turns
Revises: 0005_table_stakes
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_missed_turns"
down_revision: str | Sequence[str] | None = "0005_table_stakes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("table_tables", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("missed_turns_before_away", sa.Integer(), server_default="0", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("table_tables", schema=None) as batch_op:
        batch_op.drop_column("missed_turns_before_away")
