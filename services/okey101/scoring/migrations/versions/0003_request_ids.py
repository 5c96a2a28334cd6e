"""Hands and matches found by their request id: a request id used for one hand's delivery (or
one match's result) and sent again for another is refused (REQUEST_ID_REUSED).

Revision ID: 0003_request_ids
Revises: 0002_score_lines
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0003_request_ids"
down_revision: str | Sequence[str] | None = "0002_score_lines"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_scoring_hands_request", "scoring_hands", ["request_id"], unique=False)
    op.create_index("ix_scoring_matches_request", "scoring_matches", ["request_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_scoring_matches_request", table_name="scoring_matches")
    op.drop_index("ix_scoring_hands_request", table_name="scoring_hands")
