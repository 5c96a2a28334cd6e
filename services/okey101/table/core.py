"""The table core: every change to a table goes plan, write, publish.

1. **Plan** (pure, ``seating``, ``dealing``, ``moves``): the change computed on the live table
   under its lock, from memory.
2. **Write** (``journal``): one round trip, a compare-and-set on the table's revision. If it
   finds the table moved on (another pod served it), the table is reloaded and the change
   planned again; after ``ATTEMPTS`` such tries the call is ABORTED ``TABLE_CONTENDED``. A
   request id answered already gives its stored answer (``answers``).
3. **Publish**: the live table becomes the sealed one (its watchers woken, its answer kept),
   the game metrics count it, and its timer, if it changed, is handed to ``on_timer`` (the
   runtime's ``timers.HeldTimers``, which holds it if this pod does).

A refusal computed from memory is checked against the database before it is sent, when the
call carries a request id: if the id was answered (a retry of a change another pod made) its
answer is sent instead, and if the table moved on the call is planned again on the fresh table.
A memory that is behind therefore never refuses what the database would allow.

``TableCore`` is transport-free and the one way into a table: the gRPC servicer (``service``),
the timer steps (``autoplay``) and ``okey101 bench core`` all change tables through it
(``open`` makes one over a database; ``create``, ``start``, ``deal_next``, ``move`` and
``change`` with any plan).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import structlog
from okey.v1 import common_pb2

from okey101.engine.errors import OkeyError
from okey101.platform.database import Database
from okey101.table import answers, metrics
from okey101.table.answers import AnswerKey
from okey101.table.change import Change, Sealed, seal
from okey101.table.dealing import plan_next_deal, plan_start
from okey101.table.errors import Stale
from okey101.table.journal import AlreadyAnswered, TableJournal
from okey101.table.live import LiveTable, LiveTables
from okey101.table.moves import plan_moves
from okey101.table.options import TableOptions, us
from okey101.table.records import TableRecord
from okey101.table.store import TableStore

_log = structlog.get_logger("okey101.table")

#: How many times a change is planned again on a table that moved on before it is refused.
ATTEMPTS: Final = 5

Clock = Callable[[], float]
Plan = Callable[[LiveTable], Change]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a change came to: the sealed change this call made, or (``sealed`` None) the
    stored answer of a request id answered before."""

    sealed: Sealed | None
    answer: bytes | None


class TableCore:
    """Changes tables (module docstring) and keeps them live."""

    def __init__(
        self,
        journal: TableJournal,
        store: TableStore,
        *,
        options: TableOptions | None = None,
        clock: Clock = time.time,
        pod: str = "",
    ) -> None:
        self.journal = journal
        self.store = store
        self.options = options or TableOptions()
        self.clock = clock
        self.pod = pod or f"table-{uuid.uuid4().hex[:12]}"
        self.tables = LiveTables(journal, store)
        #: Called with each live table whose timer a published change set or cleared.
        self.on_timer: Callable[[LiveTable], None] = lambda _live: None
        #: Called when a published change owes scoring something (the outbox is sent at once).
        #: Told the kinds of the outbox rows each write made (their loops send them at once).
        self.on_outbox: Callable[[set[str]], None] = lambda _kinds: None

    @classmethod
    def open(
        cls,
        database: Database,
        *,
        options: TableOptions | None = None,
        clock: Clock = time.time,
        pod: str = "",
    ) -> TableCore:
        """The core of the tables in ``database`` (its journal and store; ``close`` it)."""
        return cls(
            TableJournal.for_url(database.url),
            TableStore(database),
            options=options,
            clock=clock,
            pod=pod,
        )

    async def close(self) -> None:
        """Release the journal's connections (the database is its owner's to dispose of)."""
        await self.journal.close()

    def now_us(self) -> int:
        return us(self.clock())

    async def create(self, record: TableRecord, key: AnswerKey, answer: bytes) -> bool:
        """Write the new table ``record`` with ``answer``, the answer to ``key`` (its
        CreateTable); False if the request id was answered already (a racing retry: its
        answer is ``answers.recall``'s)."""
        return await self.store.create(
            record, answers.row(key, record.table_id, answer, self.now_us())
        )

    async def change(
        self,
        table_id: str,
        plan: Plan,
        *,
        answer_key: AnswerKey | None = None,
    ) -> Outcome:
        """Plan, write and publish one change to ``table_id`` (module docstring). With
        ``answer_key`` the change is answered once (``answers``): a retry gets the first answer,
        a request id reused for another request (another fingerprint, or another table) is
        INVALID_ARGUMENT REQUEST_ID_REUSED, and a refusal is checked against the database before
        it is sent."""
        live = await self.tables.get(table_id)
        checked = False
        for _attempt in range(ATTEMPTS):
            async with live.lock:
                if live.stale:
                    await self.tables.refresh(live)
                if answer_key is not None:
                    known = live.answers.recall(answer_key)
                    if known is not None:
                        return Outcome(None, known)
                try:
                    change = plan(live)
                except OkeyError:
                    if answer_key is None or checked:
                        raise
                    checked = True
                    stored = await self._stored(live, answer_key)
                    if stored is not None:
                        return Outcome(None, stored)
                    if await self._moved_on(live):
                        continue  # memory was behind: plan again on the table reloaded
                    raise
                sealed = seal(change, pod=self.pod, lease_us=us(self.options.timer_lease_seconds))
                live.writing = sealed.record.revision
                try:
                    await self.journal.write(sealed.write)
                except Stale:
                    live.stale = True
                    if answer_key is not None:
                        stored = await self._stored(live, answer_key)
                        if stored is not None:
                            return Outcome(None, stored)
                    continue
                except AlreadyAnswered:
                    # A racing attempt (this pod's or another's) answered the request id first.
                    assert sealed.answer_key is not None
                    stored = await self._stored(live, sealed.answer_key)
                    if stored is None:  # answered and gone (never: answers are kept)
                        raise
                    return Outcome(None, stored)
                except BaseException:
                    live.stale = True  # written or not: the database says which
                    raise
                finally:
                    live.writing = 0
                live.apply(sealed)
            self._publish(live, sealed)
            return Outcome(sealed, sealed.answer)
        raise Stale("TABLE_CONTENDED", table_id=table_id)

    async def _stored(self, live: LiveTable, key: AnswerKey) -> bytes | None:
        """The stored answer to ``key`` at ``live``'s table, if the database has one."""
        return await answers.recall(self.store.database, key, live.answers)

    async def _moved_on(self, live: LiveTable) -> bool:
        """Whether the table had moved on from this pod's copy (then reloaded)."""
        revision = await self.store.revision(live.table_id)
        if live.stale or (revision is not None and revision != live.record.revision):
            await self.tables.refresh(live)
            return True
        return False

    # ----------------------------------------------------------------------------------------
    # The changes more than one caller makes

    async def start(self, table_id: str) -> Outcome:
        """Start the match of a full table (no bots added: a timer's step, a full table's
        start, the benchmark's tables)."""
        now = self.now_us()
        options = self.options
        return await self.change(
            table_id,
            lambda t: plan_start(
                t.record, t.state, t.deal, fill_with_bots=False, level=0, now_us=now,
                options=options,
            ),
        )  # fmt: skip

    async def deal_next(self, table_id: str) -> Outcome:
        """Deal the next hand of a table whose hand has ended (its "deal" timer's step)."""
        now = self.now_us()
        options = self.options
        return await self.change(
            table_id,
            lambda t: plan_next_deal(t.record, t.state, t.deal, now_us=now, options=options),
        )

    async def move(
        self,
        table_id: str,
        seat: int,
        actions: Sequence[common_pb2.Action],
        *,
        source: int,
        expected_version: int | None = None,
        answer_key: AnswerKey | None = None,
        back_from_away: bool = False,
        autoplayed: bool = False,
    ) -> Outcome:
        """``seat``'s ``actions`` (``moves.plan_moves``), computed from ``expected_version``
        (None: the table's version when planned)."""
        now = self.now_us()
        options = self.options

        def plan(table: LiveTable) -> Change:
            version = table.record.state_version if expected_version is None else expected_version
            return plan_moves(
                table.record, table.state, table.deal, seat, actions, expected_version=version,
                source=source, now_us=now, options=options, answer=answer_key,
                back_from_away=back_from_away, autoplayed=autoplayed,
            )  # fmt: skip

        return await self.change(table_id, plan, answer_key=answer_key)

    def _publish(self, live: LiveTable, sealed: Sealed) -> None:
        preset = sealed.record.preset
        for event in sealed.events:
            if event.kind == common_pb2.EVENT_KIND_HAND_DEALT:
                metrics.HANDS_STARTED.labels(preset).inc()
            elif event.kind == common_pb2.EVENT_KIND_HAND_ENDED:
                metrics.HANDS_FINISHED.labels(preset).inc()
            elif event.kind == common_pb2.EVENT_KIND_MATCH_ENDED:
                metrics.MATCHES_FINISHED.labels(preset).inc()
            elif event.kind == common_pb2.EVENT_KIND_TABLE_CLOSED:
                _log.info("table closed", table_id=live.table_id)
        if sealed.timer_changed:
            self.on_timer(live)
        if sealed.write.outbox:
            self.on_outbox({row["kind"] for row in sealed.write.outbox})


__all__ = ["ATTEMPTS", "Outcome", "TableCore"]
