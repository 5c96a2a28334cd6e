"""The table's journal on real SQLite files and real PostgreSQL: one write per change, a
compare-and-set on the row's revision, a request id answered once, and a table rebuilt from its
row and the moves since its snapshot."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.engine import make_url

from okey101.platform.database import Database
from okey101.table import models
from okey101.table.errors import NotReady, Stale
from okey101.table.journal import (
    NO_TIMER,
    AlreadyAnswered,
    AnswerRow,
    EventRow,
    HandEndRow,
    HandStartRow,
    MatchColumns,
    MoveRow,
    OutboxRow,
    TableJournal,
    TimerRow,
    Write,
)

from support.databases import postgres_database
from support.table_rows import new_table_row


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'table.db'}"
        return
    with postgres_database("okey_journal") as url:
        yield url


def _event(sequence: int, version: int, secret: bytes | None = None) -> EventRow:
    private = (secret, None, None, None)
    return EventRow(sequence, version, 7, "t-1-h1", b"public-%d" % sequence, private)


def _write(revision: int, **changes: Any) -> Write:
    values: dict[str, Any] = {
        "table_id": "t-1",
        "revision": revision,
        "state_version": revision + 1,
        "last_sequence": revision + 1,
        "now_us": 1_000 + revision,
        "state": 2,
        "hand_number": 1,
        "hand_id": "t-1-h1",
        "dealer": 3,
        "turn_deadline_us": 5_000,
        "events": (_event(revision + 1, revision + 1),),
    }
    values.update(changes)
    return Write(**values)


async def _prepared(url: str) -> tuple[Database, TableJournal]:
    database = Database(url)
    await database.migrate("table")
    async with database.write() as connection:
        await connection.execute(models.tables.insert().values(**new_table_row("t-1")))
    return database, TableJournal.for_url(database.url)


async def _rows(database: Database, table: Any) -> list[dict[str, Any]]:
    async with database.read() as connection:
        return [dict(row._mapping) for row in (await connection.execute(select(table))).all()]


def test_a_write_advances_the_row_and_appends_everything_it_carries(url: str) -> None:
    async def scenario() -> None:
        database, journal = await _prepared(url)
        try:
            await journal.write(
                _write(
                    0,
                    seats='[{"kind": "bot"}]',
                    match=MatchColumns('{"totals": [1]}', b"result"),
                    snapshot=b"state-bytes",
                    timer=TimerRow("bot", 2_000, 4_000, "pod-a"),
                    events=(_event(1, 1, b"rack-0"), _event(2, 1)),
                    moves=(MoveRow(1, 0, 2, b"draw", 1), MoveRow(1, 1, 2, b"discard", 1)),
                    answer=AnswerRow("ada", "Act", "r-1", b"answer"),
                    hand_start=HandStartRow(
                        "t-1-h1",
                        "m-1",
                        1,
                        3,
                        "okey101-rules/1",
                        "seed",
                        "commit",
                        "[]",
                        "[1, 2]",
                        "[]",
                    ),
                    outbox=(OutboxRow("hand", "t-1-h0", b"payload"),),
                    last_sequence=2,
                )
            )
            (table,) = await _rows(database, models.tables)
            assert table["revision"] == 1
            assert (table["state_version"], table["last_sequence"]) == (1, 2)
            assert (table["state"], table["hand_number"], table["hand_id"], table["dealer"]) == (
                2,
                1,
                "t-1-h1",
                3,
            )
            assert table["seats"] == '[{"kind": "bot"}]'
            assert (table["match"], bytes(table["match_result"])) == ('{"totals": [1]}', b"result")
            assert bytes(table["hand_state"]) == b"state-bytes"
            assert table["snapshot_sequence"] == 2
            assert (table["timer_kind"], table["timer_due_us"]) == ("bot", 2_000)
            assert (table["timer_claimed_until_us"], table["timer_claimed_by"]) == (4_000, "pod-a")
            events = sorted(await _rows(database, models.events), key=lambda e: e["sequence"])
            assert [e["sequence"] for e in events] == [1, 2]
            assert bytes(events[0]["private_0"]) == b"rack-0" and events[1]["private_0"] is None
            assert all(e["time_us"] == 1_000 for e in events)
            moves = await _rows(database, models.moves)
            assert sorted((m["action_index"], bytes(m["action"])) for m in moves) == [
                (0, b"draw"),
                (1, b"discard"),
            ]
            (answer,) = await _rows(database, models.requests)
            assert (answer["request_id"], bytes(answer["response"])) == ("r-1", b"answer")
            (hand,) = await _rows(database, models.hands)
            assert (hand["hand_id"], hand["server_seed"], hand["ended_us"]) == (
                "t-1-h1",
                "seed",
                None,
            )
            (owed,) = await _rows(database, models.outbox)
            assert (owed["key"], owed["sent_us"], owed["attempts"]) == ("t-1-h0", None, 0)

            # The next write leaves what it does not carry as it was, and ends the hand.
            await journal.write(
                _write(
                    1,
                    last_sequence=3,
                    events=(_event(3, 2),),
                    hand_end=HandEndRow("t-1-h1", b"hand-result", b"final"),
                    timer=NO_TIMER,
                )
            )
            (table,) = await _rows(database, models.tables)
            assert table["revision"] == 2 and table["seats"] == '[{"kind": "bot"}]'
            assert bytes(table["hand_state"]) == b"state-bytes" and table["snapshot_sequence"] == 2
            assert (table["timer_kind"], table["timer_due_us"]) == (None, None)
            (hand,) = await _rows(database, models.hands)
            assert (hand["ended_us"], bytes(hand["final_state"])) == (1_001, b"final")
        finally:
            await journal.close()
            await database.dispose()

    asyncio.run(scenario())


def test_a_write_from_an_old_revision_changes_nothing(url: str) -> None:
    async def scenario() -> None:
        database, journal = await _prepared(url)
        try:
            await journal.write(_write(0))
            with pytest.raises(Stale):
                await journal.write(
                    _write(
                        0, answer=AnswerRow("ada", "Act", "r-2", b"late"), events=(_event(9, 9),)
                    )
                )
            (table,) = await _rows(database, models.tables)
            assert (table["revision"], table["last_sequence"]) == (1, 1)
            assert [e["sequence"] for e in await _rows(database, models.events)] == [1]
            assert await _rows(database, models.requests) == []
        finally:
            await journal.close()
            await database.dispose()

    asyncio.run(scenario())


def test_a_request_id_answered_already_writes_nothing_and_gives_the_answer(url: str) -> None:
    async def scenario() -> None:
        database, journal = await _prepared(url)
        try:
            await journal.write(_write(0, answer=AnswerRow("ada", "Act", "r-1", b"first")))
            with pytest.raises(AlreadyAnswered) as answered:
                await journal.write(_write(1, answer=AnswerRow("ada", "Act", "r-1", b"second")))
            assert (answered.value.table_id, answered.value.response) == ("t-1", b"first")
            (table,) = await _rows(database, models.tables)
            assert (table["revision"], table["last_sequence"]) == (1, 1)
            # The same id from another caller is another request.
            await journal.write(_write(1, answer=AnswerRow("bea", "Act", "r-1", b"hers")))
        finally:
            await journal.close()
            await database.dispose()

    asyncio.run(scenario())


def test_a_stored_answer_keeps_its_requests_fingerprint_and_older_ones_have_none(
    url: str,
) -> None:
    """The answer is stored with the fingerprint of the request it answers (migration 0003);
    a write that finds the key taken reports the stored fingerprint, so the core can tell a
    retry from a request id reused for another request. Answers stored before the column
    (NULL) come back with none."""

    async def scenario() -> None:
        database, journal = await _prepared(url)
        try:
            draw, discard = b"\x01" * 32, b"\x02" * 32
            await journal.write(_write(0, answer=AnswerRow("ada", "Act", "r-1", b"drew", draw)))
            with pytest.raises(AlreadyAnswered) as answered:
                await journal.write(
                    _write(1, answer=AnswerRow("ada", "Act", "r-1", b"discarded", discard))
                )
            found = answered.value
            assert (found.table_id, found.response, found.fingerprint) == ("t-1", b"drew", draw)
            (table,) = await _rows(database, models.tables)
            assert (table["revision"], table["last_sequence"]) == (1, 1)
            (stored,) = await _rows(database, models.requests)
            assert bytes(stored["fingerprint"]) == draw
            # An answer written before fingerprints were kept.
            await journal.write(_write(1, answer=AnswerRow("ada", "Sit", "r-2", b"sat")))
            with pytest.raises(AlreadyAnswered) as old:
                await journal.write(_write(2, answer=AnswerRow("ada", "Sit", "r-2", b"x", draw)))
            assert (old.value.response, old.value.fingerprint) == (b"sat", None)
        finally:
            await journal.close()
            await database.dispose()

    asyncio.run(scenario())


def test_a_table_loads_as_its_row_and_the_moves_since_its_snapshot(url: str) -> None:
    async def scenario() -> None:
        database, journal = await _prepared(url)
        try:
            assert await journal.load("t-unknown") is None
            await journal.write(
                _write(0, snapshot=b"dealt", moves=(MoveRow(1, 0, 1, b"first", 1),))
            )
            await journal.write(_write(1, moves=(MoveRow(2, 0, 1, b"second", 1),)))
            await journal.write(
                _write(2, moves=(MoveRow(3, 0, 2, b"third", 1), MoveRow(3, 1, 2, b"fourth", 1)))
            )
            loaded = await journal.load("t-1")
            assert loaded is not None
            assert loaded.row["revision"] == 3 and bytes(loaded.row["hand_state"]) == b"dealt"
            # The snapshot is as of sequence 1: the moves after it, in order.
            assert [m.action for m in loaded.moves] == [b"second", b"third", b"fourth"]
            await journal.write(_write(3, snapshot=b"later"))
            loaded = await journal.load("t-1")
            assert loaded is not None and loaded.moves == ()
        finally:
            await journal.close()
            await database.dispose()

    asyncio.run(scenario())


def test_an_unreachable_database_is_not_ready(tmp_path: Path) -> None:
    async def scenario() -> None:
        base = make_url("postgresql://postgres@127.0.0.1:1/none")
        journal = TableJournal.for_url(base.render_as_string(hide_password=False))
        with pytest.raises(NotReady):
            await journal.write(_write(0))
        await journal.close()
        missing = TableJournal.for_url(f"sqlite+aiosqlite:///{tmp_path / 'no' / 'such.db'}")
        with pytest.raises(NotReady):
            await missing.load("t-1")
        await missing.close()

    asyncio.run(scenario())
