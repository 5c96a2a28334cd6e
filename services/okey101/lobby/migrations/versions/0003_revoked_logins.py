"""An index on when refresh tokens were revoked, for ListRevokedLogins (the logins revoked
lately, which every service polls).

Revision ID: 0003_revoked_logins
Revises: 0002_hostings
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0003_revoked_logins"
down_revision: str | Sequence[str] | None = "0002_hostings"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_lobby_refresh_tokens_revoked", "lobby_refresh_tokens", ["revoked_us"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_lobby_refresh_tokens_revoked", table_name="lobby_refresh_tokens")
