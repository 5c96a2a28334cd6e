"""Each seat's points in a hand itemized: ``scoring_hand_seats.score_lines``, the seat's score
lines (engine ``ScoreLine``) as a JSON list. Hands recorded before this revision keep ``[]``:
their sheet rows have no lines.

Revision ID: 0002_score_lines
Revises: 0001_initial
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_score_lines"
down_revision: str | Sequence[str] | None = "0001_initial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("scoring_hand_seats", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("score_lines", sa.Text(), server_default="[]", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("scoring_hand_seats", schema=None) as batch_op:
        batch_op.drop_column("score_lines")
