"""Every stored answer has the fingerprint of the request it answered
(``table_requests.fingerprint`` NOT NULL): the answers stored before migration 0003, which had
none, are deleted. A retry comes within minutes of its call and those answers are days old, so
no retry is left to take them; with them goes the one case where a stored answer matched any
request (``okey101.table.answers.verdict``).

Revision ID: 0004_fingerprint_required
Revises: 0003_request_fingerprint
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_fingerprint_required"
down_revision: str | Sequence[str] | None = "0003_request_fingerprint"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("DELETE FROM table_requests WHERE fingerprint IS NULL")
    with op.batch_alter_table("table_requests", schema=None) as batch_op:
        batch_op.alter_column("fingerprint", existing_type=sa.LargeBinary(), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("table_requests", schema=None) as batch_op:
        batch_op.alter_column("fingerprint", existing_type=sa.LargeBinary(), nullable=True)
