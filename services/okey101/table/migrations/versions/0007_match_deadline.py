"""A table's match deadline (#37: a tournament round's time limit): the match ends with the
first hand that ends at or after it. NULL, as for existing tables, is no deadline.

Revision ID: 0007_match_deadline
Revises: 0006_missed_turns
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_match_deadline"
down_revision: str | Sequence[str] | None = "0006_missed_turns"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("table_tables", schema=None) as batch_op:
        batch_op.add_column(sa.Column("match_deadline_us", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("table_tables", schema=None) as batch_op:
        batch_op.drop_column("match_deadline_us")
