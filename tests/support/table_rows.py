"""A table's row as the table service first writes it, for tests that write the database
directly (the journal's, the live copies')."""

from __future__ import annotations

from typing import Any

from okey101.table.records import SEATS, MatchRecord, SeatRecord, seats_to_json


def new_table_row(table_id: str) -> dict[str, Any]:
    """A waiting table with four empty seats and no hand."""
    return {
        "table_id": table_id,
        "match_id": f"m-{table_id}",
        "name": "test",
        "visibility": 1,
        "invite_code": "",
        "state": 1,
        "host_player_id": "",
        "tournament_id": "",
        "tournament_round": 0,
        "preset": "oyna",
        "rules": b"",
        "rules_version": "okey101-rules/1",
        "start_when_full": False,
        "created_us": 1,
        "updated_us": 1,
        "seats": seats_to_json([SeatRecord()] * SEATS),
        "state_version": 0,
        "last_sequence": 0,
        "hand_number": 0,
        "hand_id": "",
        "dealer": 0,
        "hand_state": None,
        "match": MatchRecord().to_json(),
        "turn_deadline_us": None,
        "match_result": None,
    }
