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
from okey101.platform.idempotency import CallKey
from okey101.table import answers, models
from okey101.table.answers import AnswerColumns, AnswerKey, Kept
from okey101.table.errors import Invalid, NotReady, Stale
from okey101.table.journal import (
    AlreadyAnswered,
    EventColumns,
    HandColumns,
    HandEndColumns,
    MoveColumns,
    OutboxColumns,
    TableColumns,
    TableJournal,
    Write,
)
from okey101.table.records import TimerRecord, timer_columns

from support.databases import postgres_database
from support.table_rows import new_table_row


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'table.db'}"
        return
    with postgres_database("okey_journal") as url:
        yield url


def _event(sequence: int, version: int, secret: bytes | None = None) -> EventColumns:
    return EventColumns(
        table_id="t-1", sequence=sequence, state_version=version, kind=7, hand_id="t-1-h1",
        time_us=1_000, public=b"public-%d" % sequence, private_0=secret, private_1=None,
        private_2=None, private_3=None,
    )  # fmt: skip


def _move(sequence: int, index: int, seat: int, action: bytes) -> MoveColumns:
    return MoveColumns(
        hand_id="t-1-h1", sequence=sequence, action_index=index, seat=seat, action=action,
        source=1, time_us=1_000,
    )  # fmt: skip


def _key(caller: str, method: str, request_id: str, fingerprint: bytes = b"f") -> AnswerKey:
    return AnswerKey(CallKey(method, caller, request_id), fingerprint)


def _answer(key: AnswerKey, response: bytes) -> AnswerColumns:
    return answers.row(key, "t-1", response, 1_000)


def _write(revision: int, columns: dict[str, Any] | None = None, **rows: Any) -> Write:
    """The write from ``revision`` of table t-1: its row's ``columns`` (over the versions,
    state and hand every write sets) and ``rows``."""
    table: dict[str, Any] = {
        "revision": revision + 1,
        "state_version": revision + 1,
        "last_sequence": revision + 1,
        "updated_us": 1_000 + revision,
        "state": 2,
        "hand_number": 1,
        "hand_id": "t-1-h1",
        "dealer": 3,
        "turn_deadline_us": 5_000,
        **(columns or {}),
    }
    rows.setdefault("events", (_event(revision + 1, revision + 1),))
    return Write("t-1", revision, TableColumns(**table), **rows)  # type: ignore[typeddict-item]


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
                    {
                        "seats": '[{"kind": "bot"}]',
                        "match": '{"totals": [1]}',
                        "match_result": b"result",
                        "hand_state": b"state-bytes",
                        "snapshot_sequence": 2,
                        **timer_columns(TimerRecord("bot", 2_000, 4_000, "pod-a")),
                        "last_sequence": 2,
                    },
                    events=(_event(1, 1, b"rack-0"), _event(2, 1)),
                    moves=(_move(1, 0, 2, b"draw"), _move(1, 1, 2, b"discard")),
                    answer=_answer(_key("ada", "Act", "r-1"), b"answer"),
                    hand_start=HandColumns(
                        hand_id="t-1-h1",
                        table_id="t-1",
                        match_id="m-1",
                        hand_number=1,
                        dealer=3,
                        rules_version="okey101-rules/1",
                        server_seed="seed",
                        commitment="commit",
                        player_seeds="[]",
                        deck="[1, 2]",
                        seats="[]",
                        started_us=1_000,
                    ),
                    outbox=(
                        OutboxColumns(
                            table_id="t-1",
                            kind="hand",
                            key="t-1-h0",
                            payload=b"payload",
                            created_us=1_000,
                            next_attempt_us=1_000,
                        ),
                    ),
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
                    {"last_sequence": 3, **timer_columns(None)},
                    events=(_event(3, 2),),
                    hand_end=HandEndColumns(
                        hand_id="t-1-h1",
                        ended_us=1_001,
                        result=b"hand-result",
                        final_state=b"final",
                    ),
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
                        0,
                        answer=_answer(_key("ada", "Act", "r-2"), b"late"),
                        events=(_event(9, 9),),
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
    """The write finds the key taken and writes nothing; the stored answer is read back by
    ``answers.recall`` (the core's way), for this table."""

    async def scenario() -> None:
        database, journal = await _prepared(url)
        try:
            first = _key("ada", "Act", "r-1")
            await journal.write(_write(0, answer=_answer(first, b"first")))
            with pytest.raises(AlreadyAnswered):
                await journal.write(_write(1, answer=_answer(first, b"second")))
            assert await answers.recall(database, first, Kept("t-1")) == b"first"
            (table,) = await _rows(database, models.tables)
            assert (table["revision"], table["last_sequence"]) == (1, 1)
            # The same id from another caller is another request.
            await journal.write(_write(1, answer=_answer(_key("bea", "Act", "r-1"), b"hers")))
        finally:
            await journal.close()
            await database.dispose()

    asyncio.run(scenario())


def test_a_stored_answer_keeps_its_requests_fingerprint(url: str) -> None:
    """The answer is stored with the fingerprint of the request it answers (migration 0003);
    when a write finds the key taken, the stored fingerprint tells a retry from a request id
    reused for another request (or about another table): REQUEST_ID_REUSED."""

    async def scenario() -> None:
        database, journal = await _prepared(url)
        try:
            draw, discard = b"\x01" * 32, b"\x02" * 32
            drew = _key("ada", "Act", "r-1", draw)
            await journal.write(_write(0, answer=_answer(drew, b"drew")))
            reused = _key("ada", "Act", "r-1", discard)
            with pytest.raises(AlreadyAnswered):
                await journal.write(_write(1, answer=_answer(reused, b"discarded")))
            assert await answers.recall(database, drew, Kept("t-1")) == b"drew"
            with pytest.raises(Invalid) as refused:
                await answers.recall(database, reused, Kept("t-1"))
            assert refused.value.code == "REQUEST_ID_REUSED"
            with pytest.raises(Invalid):
                await answers.recall(database, drew, Kept("t-2"))
            (table,) = await _rows(database, models.tables)
            assert (table["revision"], table["last_sequence"]) == (1, 1)
            (stored,) = await _rows(database, models.requests)
            assert bytes(stored["fingerprint"]) == draw
        finally:
            await journal.close()
            await database.dispose()

    asyncio.run(scenario())


def test_a_table_loads_as_its_row_and_the_moves_since_its_snapshot(url: str) -> None:
    async def scenario() -> None:
        database, journal = await _prepared(url)
        try:
            assert await journal.load("t-unknown") is None
            dealt = {"hand_state": b"dealt", "snapshot_sequence": 1}
            await journal.write(_write(0, dealt, moves=(_move(1, 0, 1, b"first"),)))
            await journal.write(_write(1, moves=(_move(2, 0, 1, b"second"),)))
            await journal.write(
                _write(2, moves=(_move(3, 0, 2, b"third"), _move(3, 1, 2, b"fourth")))
            )
            loaded = await journal.load("t-1")
            assert loaded is not None
            assert loaded.row["revision"] == 3 and bytes(loaded.row["hand_state"]) == b"dealt"
            # The snapshot is as of sequence 1: the moves after it, in order.
            assert [m.action for m in loaded.moves] == [b"second", b"third", b"fourth"]
            await journal.write(_write(3, {"hand_state": b"later", "snapshot_sequence": 4}))
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
