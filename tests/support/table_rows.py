"""A table's row as the table service first writes it, for tests that write the database
directly (the journal's, the live copies')."""

from __future__ import annotations

from typing import Any

from okey101.engine.hand import SEATS
from okey101.table.records import SeatRecord, TableRecord


def new_table_row(table_id: str) -> dict[str, Any]:
    """A waiting table with four empty seats and no hand."""
    return TableRecord.new(
        table_id=table_id,
        match_id=f"m-{table_id}",
        preset="oyna",
        rules=b"",
        rules_version="okey101-rules/1",
        seats=[SeatRecord()] * SEATS,
        created_us=1,
        name="test",
    ).to_row()
