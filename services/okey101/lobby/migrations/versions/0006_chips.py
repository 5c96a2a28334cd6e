"""Chips: the double-entry ledger (transactions, entries, cached balances), stake holds, staked
tables' pots and players' daily claims (docs/chips.md).

Revision ID: 0006_chips
Revises: 0005_push
Create Date: 2026-12-20
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_chips"
down_revision: str | Sequence[str] | None = "0005_push"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "lobby_chip_transactions",
        sa.Column(
            "transaction_id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            nullable=False,
        ),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("reason", sa.String(length=16), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=True),
        sa.Column("table_id", sa.String(length=128), nullable=True),
        sa.Column("tournament_id", sa.String(length=128), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("transaction_id", name=op.f("pk_lobby_chip_transactions")),
        sa.UniqueConstraint("key", name=op.f("uq_lobby_chip_transactions_key")),
    )
    op.create_index(
        "ix_lobby_chip_transactions_table", "lobby_chip_transactions", ["table_id"], unique=False
    )
    op.create_table(
        "lobby_chip_entries",
        sa.Column("entry_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("transaction_id", sa.BigInteger(), nullable=False),
        sa.Column("account", sa.String(length=160), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("balance_after", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["transaction_id"],
            ["lobby_chip_transactions.transaction_id"],
            name=op.f("fk_lobby_chip_entries_transaction_id_lobby_chip_transactions"),
        ),
        sa.PrimaryKeyConstraint("entry_id", name=op.f("pk_lobby_chip_entries")),
    )
    op.create_index(
        "ix_lobby_chip_entries_account",
        "lobby_chip_entries",
        ["account", "entry_id"],
        unique=False,
    )
    op.create_index(
        "ix_lobby_chip_entries_transaction", "lobby_chip_entries", ["transaction_id"], unique=False
    )
    op.create_table(
        "lobby_chip_balances",
        sa.Column("account", sa.String(length=160), nullable=False),
        sa.Column("balance", sa.BigInteger(), nullable=False),
        sa.Column("updated_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("account", name=op.f("pk_lobby_chip_balances")),
    )
    op.create_table(
        "lobby_chip_holds",
        sa.Column("hold_key", sa.String(length=255), nullable=False),
        sa.Column("table_id", sa.String(length=128), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("state", sa.String(length=8), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.Column("settled_us", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("hold_key", name=op.f("pk_lobby_chip_holds")),
    )
    op.create_index(
        "ix_lobby_chip_holds_player", "lobby_chip_holds", ["player_id", "state"], unique=False
    )
    op.create_index("ix_lobby_chip_holds_table", "lobby_chip_holds", ["table_id"], unique=False)
    op.create_table(
        "lobby_chip_pots",
        sa.Column("table_id", sa.String(length=128), nullable=False),
        sa.Column("stake", sa.BigInteger(), nullable=False),
        sa.Column("fee_percent", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=8), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.Column("settled_us", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("table_id", name=op.f("pk_lobby_chip_pots")),
    )
    op.create_table(
        "lobby_chip_daily_claims",
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("last_claim_us", sa.BigInteger(), nullable=False),
        sa.Column("claims", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("player_id", name=op.f("pk_lobby_chip_daily_claims")),
    )


def downgrade() -> None:
    op.drop_table("lobby_chip_daily_claims")
    op.drop_table("lobby_chip_pots")
    op.drop_index("ix_lobby_chip_holds_table", table_name="lobby_chip_holds")
    op.drop_index("ix_lobby_chip_holds_player", table_name="lobby_chip_holds")
    op.drop_table("lobby_chip_holds")
    op.drop_table("lobby_chip_balances")
    op.drop_index("ix_lobby_chip_entries_transaction", table_name="lobby_chip_entries")
    op.drop_index("ix_lobby_chip_entries_account", table_name="lobby_chip_entries")
    op.drop_table("lobby_chip_entries")
    op.drop_index("ix_lobby_chip_transactions_table", table_name="lobby_chip_transactions")
    op.drop_table("lobby_chip_transactions")
