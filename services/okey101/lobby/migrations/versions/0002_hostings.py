"""HostTable calls not yet done (``lobby_hostings``), so any pod can finish one.

Revision ID: 0002_hostings
Revises: 0001_initial
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_hostings"
down_revision: str | Sequence[str] | None = "0001_initial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "lobby_hostings",
        sa.Column("create_request_id", sa.String(length=64), nullable=False),
        sa.Column("create_request", sa.LargeBinary(), nullable=False),
        sa.Column("sit_request", sa.LargeBinary(), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("create_request_id", name=op.f("pk_lobby_hostings")),
    )
    op.create_index("ix_lobby_hostings_created", "lobby_hostings", ["created_us"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_lobby_hostings_created", table_name="lobby_hostings")
    op.drop_table("lobby_hostings")
