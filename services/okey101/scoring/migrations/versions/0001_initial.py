"""The scoring service's first schema: matches, hands, seats, match lines, ratings.

Revision ID: 0001_initial
Revises:
Create Date: 2025-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001_initial"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = 128


def upgrade() -> None:
    op.create_table(
        "scoring_matches",
        sa.Column("match_id", sa.String(ID), nullable=False),
        sa.Column("table_id", sa.String(ID), nullable=False),
        sa.Column("tournament_id", sa.String(ID), server_default="", nullable=False),
        sa.Column("tournament_round", sa.Integer(), server_default="0", nullable=False),
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("rules_json", sa.Text(), nullable=False),
        sa.Column("partners", sa.Boolean(), nullable=False),
        sa.Column("created_at_us", sa.BigInteger(), nullable=False),
        sa.Column("ended", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("ended_at_us", sa.BigInteger(), nullable=True),
        sa.Column("hands_played", sa.Integer(), nullable=True),
        sa.Column("winner_seats", sa.String(16), nullable=True),
        sa.Column("request_id", sa.String(64), nullable=True),
        sa.Column("content_hash", sa.String(64), nullable=True),
        sa.Column("response", sa.LargeBinary(), nullable=True),
        sa.Column("recorded_at_us", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("match_id", name="pk_scoring_matches"),
    )
    op.create_index(
        "ix_scoring_matches_tournament",
        "scoring_matches",
        ["tournament_id", "tournament_round"],
    )
    op.create_table(
        "scoring_hands",
        sa.Column("hand_id", sa.String(ID), nullable=False),
        sa.Column("match_id", sa.String(ID), nullable=False),
        sa.Column("hand_number", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.String(ID), nullable=False),
        sa.Column("tournament_id", sa.String(ID), server_default="", nullable=False),
        sa.Column("rules_version", sa.String(64), nullable=False),
        sa.Column("reason", sa.String(16), nullable=False),
        sa.Column("winner_seat", sa.Integer(), nullable=True),
        sa.Column("with_okey", sa.Boolean(), nullable=False),
        sa.Column("after_pairs", sa.Boolean(), nullable=False),
        sa.Column("one_go", sa.Boolean(), nullable=False),
        sa.Column("multiplier", sa.Integer(), nullable=False),
        sa.Column("end_time_us", sa.BigInteger(), nullable=False),
        sa.Column("server_seed_sha256", sa.String(64), nullable=False),
        sa.Column("server_seed", sa.Text(), nullable=False),
        sa.Column("player_seeds", sa.Text(), nullable=False),
        sa.Column("final_state", sa.LargeBinary(), nullable=False),
        sa.Column("request_id", sa.String(64), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("response", sa.LargeBinary(), nullable=False),
        sa.Column("recorded_at_us", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["match_id"],
            ["scoring_matches.match_id"],
            name="fk_scoring_hands_match_id_scoring_matches",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("hand_id", name="pk_scoring_hands"),
        sa.UniqueConstraint(
            "match_id", "hand_number", name="uq_scoring_hands_match_id_hand_number"
        ),
    )
    op.create_table(
        "scoring_hand_seats",
        sa.Column("hand_id", sa.String(ID), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.String(ID), nullable=False),
        sa.Column("player_id", sa.String(ID), nullable=False),
        sa.Column("display_name", sa.String(256), nullable=False),
        sa.Column("bot", sa.Boolean(), nullable=False),
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("void", sa.Boolean(), nullable=False),
        sa.Column("points", sa.Integer(), nullable=False),
        sa.Column("penalty_points", sa.Integer(), nullable=False),
        sa.Column("penalty_count", sa.Integer(), nullable=False),
        sa.Column("penalties", sa.Text(), nullable=False),
        sa.Column("opened_as", sa.String(8), nullable=False),
        sa.Column("finished", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["hand_id"],
            ["scoring_hands.hand_id"],
            name="fk_scoring_hand_seats_hand_id_scoring_hands",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("hand_id", "seat", name="pk_scoring_hand_seats"),
    )
    op.create_index("ix_scoring_hand_seats_player", "scoring_hand_seats", ["player_id", "preset"])
    op.create_index("ix_scoring_hand_seats_match", "scoring_hand_seats", ["match_id"])
    op.create_table(
        "scoring_match_players",
        sa.Column("match_id", sa.String(ID), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.String(ID), nullable=False),
        sa.Column("display_name", sa.String(256), nullable=False),
        sa.Column("bot", sa.Boolean(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("place", sa.Integer(), nullable=False),
        sa.Column("winner", sa.Boolean(), nullable=False),
        sa.Column("hands_played", sa.Integer(), nullable=False),
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("tournament_id", sa.String(ID), nullable=False),
        sa.Column("tournament_round", sa.Integer(), nullable=False),
        sa.Column("ended_at_us", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["match_id"],
            ["scoring_matches.match_id"],
            name="fk_scoring_match_players_match_id_scoring_matches",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("match_id", "seat", name="pk_scoring_match_players"),
    )
    op.create_index(
        "ix_scoring_match_players_history",
        "scoring_match_players",
        ["player_id", "ended_at_us", "match_id"],
    )
    op.create_index(
        "ix_scoring_match_players_tournament",
        "scoring_match_players",
        ["tournament_id", "tournament_round"],
    )
    op.create_table(
        "scoring_ratings",
        sa.Column("player_id", sa.String(ID), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("display_name", sa.String(256), nullable=False),
        sa.Column("mu", sa.Double(), nullable=False),
        sa.Column("sigma", sa.Double(), nullable=False),
        sa.Column("ordinal", sa.Double(), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("updated_at_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("player_id", "mode", "preset", name="pk_scoring_ratings"),
    )
    op.create_index(
        "ix_scoring_ratings_leaderboard",
        "scoring_ratings",
        ["mode", "preset", "ordinal", "player_id"],
    )
    op.create_table(
        "scoring_rating_changes",
        sa.Column("match_id", sa.String(ID), nullable=False),
        sa.Column("player_id", sa.String(ID), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("mu_before", sa.Double(), nullable=False),
        sa.Column("sigma_before", sa.Double(), nullable=False),
        sa.Column("matches_before", sa.Integer(), nullable=False),
        sa.Column("mu_after", sa.Double(), nullable=False),
        sa.Column("sigma_after", sa.Double(), nullable=False),
        sa.Column("matches_after", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["match_id"],
            ["scoring_matches.match_id"],
            name="fk_scoring_rating_changes_match_id_scoring_matches",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "match_id", "player_id", "mode", "preset", name="pk_scoring_rating_changes"
        ),
    )


def downgrade() -> None:
    op.drop_table("scoring_rating_changes")
    op.drop_index("ix_scoring_ratings_leaderboard", table_name="scoring_ratings")
    op.drop_table("scoring_ratings")
    op.drop_index("ix_scoring_match_players_tournament", table_name="scoring_match_players")
    op.drop_index("ix_scoring_match_players_history", table_name="scoring_match_players")
    op.drop_table("scoring_match_players")
    op.drop_index("ix_scoring_hand_seats_match", table_name="scoring_hand_seats")
    op.drop_index("ix_scoring_hand_seats_player", table_name="scoring_hand_seats")
    op.drop_table("scoring_hand_seats")
    op.drop_table("scoring_hands")
    op.drop_index("ix_scoring_matches_tournament", table_name="scoring_matches")
    op.drop_table("scoring_matches")
