"""The table's stored answers (``okey101.table.answers``) on real SQLite and PostgreSQL: one
key, one verdict wherever the answer is found (a live table's memory, or the database), a new
table's answer claimed once, and the answers stored before fingerprints were kept deleted by
migration 0004 (so that no stored answer matches just any request)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from okey.v1 import table_pb2
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.platform.database import Database, run_migrations
from okey101.platform.idempotency import CallKey
from okey101.table import answers, models
from okey101.table.answers import KEPT, AnswerKey, Kept
from okey101.table.errors import Invalid

from support.databases import fresh_database


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from fresh_database(request.param, tmp_path, "table")


def _reused(error: pytest.ExceptionInfo[Invalid]) -> bool:
    return error.value.code == "REQUEST_ID_REUSED"


def test_a_key_is_the_call_and_the_request_without_its_locale_or_shown_name() -> None:
    sit = table_pb2.SitRequest(request_id="r-1", table_id="t-1", seat=2, display_name="Ada")
    again = table_pb2.SitRequest(
        request_id="r-1", table_id="t-1", seat=2, display_name="Ada B.", locale="tr"
    )
    other = table_pb2.SitRequest(request_id="r-1", table_id="t-1", seat=3)
    key = AnswerKey.of("player:ada", "Sit", sit)
    assert key.call == CallKey("Sit", "player:ada", "r-1") and key.request_id == "r-1"
    assert AnswerKey.of("player:ada", "Sit", again) == key
    assert AnswerKey.of("player:ada", "Sit", other).fingerprint != key.fingerprint
    assert len(key.fingerprint) == 32


def test_a_live_table_keeps_its_recent_answers_bound_to_their_requests() -> None:
    kept = Kept("t-1")
    key = AnswerKey(CallKey("Act", "player:ada", "r-1"), b"draw")
    assert kept.recall(key) is None
    kept.keep(key, b"drew")
    assert kept.recall(key) == b"drew"
    with pytest.raises(Invalid) as refused:
        kept.recall(AnswerKey(key.call, b"discard"))
    assert _reused(refused)
    for number in range(KEPT):
        kept.keep(AnswerKey(CallKey("Act", "player:ada", f"r-{number + 2}"), b"x"), b"later")
    assert len(kept) == KEPT and kept.recall(key) is None  # the oldest is the database's


def test_a_stored_answer_is_its_tables_and_its_requests(url: str) -> None:
    """One verdict on what the database keeps: the same table (when the call names one) and
    the same fingerprint; a CreateTable (no table named) takes it whatever its table; an answer
    found there is kept in the table's memory; a request id is claimed once."""

    async def scenario() -> None:
        database = Database(url)
        try:
            await database.migrate("table")
            leave = AnswerKey(CallKey("Leave", "player:p1", "r-1"), b"leave t-1")
            assert await answers.recall(database, leave) is None
            stored = answers.row(leave, "t-1", b"left", 5)

            async def claim(session: AsyncConnection) -> bool:
                return await answers.claim(session, stored)

            assert await database.transaction(claim)
            assert not await database.transaction(claim)  # a racing retry: the first stays
            async with database.read() as session:
                row = (await session.execute(select(models.requests))).one()
            assert (row.table_id, bytes(row.response), bytes(row.fingerprint)) == (
                "t-1",
                b"left",
                b"leave t-1",
            )
            kept = Kept("t-1")
            assert await answers.recall(database, leave, kept) == b"left"
            assert kept.recall(leave) == b"left"  # kept in memory from then on
            assert await answers.recall(database, leave) == b"left"  # naming no table
            with pytest.raises(Invalid) as elsewhere:
                await answers.recall(database, leave, Kept("t-2"))
            assert _reused(elsewhere)
            with pytest.raises(Invalid) as other:
                await answers.recall(database, AnswerKey(leave.call, b"leave t-2"))
            assert _reused(other)
        finally:
            await database.dispose()

    asyncio.run(scenario())


def test_migration_0004_deletes_the_answers_stored_without_a_fingerprint(url: str) -> None:
    async def scenario() -> None:
        database = Database(url)
        try:
            await run_migrations("table", database.engine, revision="0003_request_fingerprint")
            row = {
                "caller": "player:p1",
                "method": "Act",
                "table_id": "t-1",
                "response": b"answer",
                "created_us": 1,
            }
            async with database.write() as session:
                await session.execute(
                    models.requests.insert(),
                    [
                        {**row, "request_id": "old", "fingerprint": None},
                        {**row, "request_id": "new", "fingerprint": b"f"},
                    ],
                )
            await database.migrate("table")
            async with database.read() as session:
                left = (await session.execute(select(models.requests.c.request_id))).scalars()
                assert list(left) == ["new"]
            with pytest.raises(IntegrityError):
                async with database.write() as session:
                    await session.execute(
                        models.requests.insert().values(**row, request_id="none", fingerprint=None)
                    )
        finally:
            await database.dispose()

    asyncio.run(scenario())
