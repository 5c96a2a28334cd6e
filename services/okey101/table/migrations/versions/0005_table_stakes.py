"""Staked tables (#36): each table's stake (chips each seat stakes on the match; 0 for none)
and the table fee in percent of the pot. Existing tables stake nothing.

Revision ID: 0005_table_stakes
Revises: 0004_fingerprint_required
Create Date: 2027-01-10
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_table_stakes"
down_revision: str | Sequence[str] | None = "0004_fingerprint_required"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("table_tables", schema=None) as batch_op:
        batch_op.add_column(sa.Column("stake", sa.BigInteger(), server_default="0", nullable=False))
        batch_op.add_column(
            sa.Column("fee_percent", sa.Integer(), server_default="0", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("table_tables", schema=None) as batch_op:
        batch_op.drop_column("fee_percent")
        batch_op.drop_column("stake")
