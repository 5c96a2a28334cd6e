"""A table process's copy of a table another process writes (``table.live``): a notification
that arrives while the copy is being read from the database is not lost. Two races, each of
which left a copy a write behind and unmarked until the table's next write (issue #32: a seat
whose view said it was another's turn, so a table that waited for its turn timer):

- a notification during the first load of the table;
- a second notification while a reload for the first one is reading.

Played on a real SQLite file, with the database read held open at the moment that matters.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from okey101.platform.database import Database
from okey101.table import models
from okey101.table.journal import EventColumns, Snapshot, TableColumns, TableJournal, Write
from okey101.table.live import LiveTable, LiveTables
from okey101.table.store import TableStore

from support.table_rows import new_table_row

TABLE = "t-live"


def another_pods_write(revision: int) -> Write:
    """What another process writes: one event, the row one revision on."""
    event = EventColumns(
        table_id=TABLE, sequence=revision + 1, state_version=revision + 1, kind=7, hand_id="",
        time_us=1_000 + revision, public=b"public-%d" % revision, private_0=None, private_1=None,
        private_2=None, private_3=None,
    )  # fmt: skip
    row = TableColumns(
        revision=revision + 1, state_version=revision + 1, last_sequence=revision + 1,
        updated_us=1_000 + revision, state=1, hand_number=0, hand_id="", dealer=0,
        turn_deadline_us=None,
    )  # fmt: skip
    return Write(table_id=TABLE, revision=revision, table=row, events=(event,))


class HeldJournal:
    """The journal, whose next load is held, once its read is done, until released."""

    def __init__(self, journal: TableJournal) -> None:
        self._journal = journal
        self.read = asyncio.Event()
        self.release = asyncio.Event()
        self.holding = False

    async def load(self, table_id: str) -> Snapshot | None:
        snapshot = await self._journal.load(table_id)
        if self.holding:
            self.holding = False
            self.read.set()
            await self.release.wait()
        return snapshot

    def hold_next(self) -> None:
        self.holding = True
        self.read.clear()
        self.release.clear()


def scenario(tmp_path: Path, play: Any) -> None:
    async def run() -> None:
        database = Database(f"sqlite+aiosqlite:///{tmp_path / 'table.db'}")
        await database.migrate("table")
        async with database.write() as connection:
            await connection.execute(models.tables.insert().values(**new_table_row(TABLE)))
        journal = TableJournal.for_url(database.url)
        held = HeldJournal(journal)
        tables = LiveTables(held, TableStore(database))  # type: ignore[arg-type]
        try:
            await play(tables, held, journal)
        finally:
            await journal.close()
            await database.dispose()

    asyncio.run(run())


async def written_meanwhile(
    held: HeldJournal, journal: TableJournal, tables: LiveTables, revision: int
) -> None:
    """Once the held read is done: another process writes ``revision`` and says so."""
    await held.read.wait()
    await journal.write(another_pods_write(revision - 1))
    tables.notified(TABLE, revision)
    held.release.set()


def test_a_write_announced_during_the_first_load_leaves_the_copy_stale(tmp_path: Path) -> None:
    async def play(tables: LiveTables, held: HeldJournal, journal: TableJournal) -> None:
        held.hold_next()
        loading = asyncio.create_task(tables.get(TABLE))
        await written_meanwhile(held, journal, tables, 1)
        live: LiveTable = await loading
        assert live.record.revision == 0  # read before the write
        assert live.stale
        assert (await tables.get(TABLE)).record.revision == 1

    scenario(tmp_path, play)


def test_a_write_announced_during_a_reload_leaves_the_copy_stale(tmp_path: Path) -> None:
    async def play(tables: LiveTables, held: HeldJournal, journal: TableJournal) -> None:
        live = await tables.get(TABLE)
        await journal.write(another_pods_write(0))
        tables.notified(TABLE, 1)
        assert live.stale
        held.hold_next()
        reloading = asyncio.create_task(tables.fresh(live))
        await written_meanwhile(held, journal, tables, 2)
        await reloading
        assert live.record.revision == 1  # the reload read revision 1
        assert live.stale  # ... and revision 2 was announced meanwhile
        await tables.fresh(live)
        assert live.record.revision == 2 and not live.stale
        # A reload with nothing newer announced leaves it fresh.
        live.stale = True
        await tables.fresh(live)
        assert not live.stale

    scenario(tmp_path, play)
