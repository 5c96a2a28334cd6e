"""A stored answer keeps the fingerprint of the request it answered (``table_requests.fingerprint``:
SHA-256 of the request without its locale), so that a request id reused for another
request is refused (REQUEST_ID_REUSED) instead of answered with the first request's answer.
Answers stored before have none and are taken by any retry, as they were.

Revision ID: 0003_request_fingerprint
Revises: 0002_journal
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_request_fingerprint"
down_revision: str | Sequence[str] | None = "0002_journal"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("table_requests", schema=None) as batch_op:
        batch_op.add_column(sa.Column("fingerprint", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("table_requests", schema=None) as batch_op:
        batch_op.drop_column("fingerprint")
