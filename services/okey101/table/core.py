"""The table core: every change to a table goes plan, write, publish.

1. **Plan** (pure, ``seating``, ``dealing``, ``moves``): the change computed on the live table
   under its lock, from memory.
2. **Write** (``journal``): one round trip, a compare-and-set on the table's revision. If it
   finds the table moved on (another pod served it), the table is reloaded and the change
   planned again; after ``ATTEMPTS`` such tries the call is ABORTED ``TABLE_CONTENDED``. A
   request id answered already gives its stored answer.
3. **Publish**: the live table becomes the sealed one (its watchers woken, its answer kept),
   the game metrics count it, and its timer, if it changed, is scheduled in this pod's memory.

A refusal computed from memory is checked against the database before it is sent, when the
call carries a request id: if the id was answered (a retry of a change another pod made) its
answer is sent instead, and if the table moved on the call is planned again on the fresh table.
A memory that is behind therefore never refuses what the database would allow.

``TableCore`` is transport-free: the gRPC servicer (``service``) and the timer steps
(``autoplay``) both change tables through it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import structlog
from okey.v1 import common_pb2

from okey101.engine.errors import OkeyError
from okey101.platform.idempotency import same_request
from okey101.table import metrics
from okey101.table.change import AnswerKey, Change, Sealed, seal
from okey101.table.errors import Invalid, Stale
from okey101.table.journal import AlreadyAnswered, TableJournal
from okey101.table.live import LiveTable, LiveTables
from okey101.table.options import TableOptions, us
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
        self.on_outbox: Callable[[], None] = lambda: None

    def now_us(self) -> int:
        return us(self.clock())

    async def change(
        self,
        table_id: str,
        plan: Plan,
        *,
        answer_key: AnswerKey | None = None,
    ) -> Outcome:
        """Plan, write and publish one change to ``table_id`` (module docstring). With
        ``answer_key`` (caller, method, request id, the request's fingerprint) the change is
        answered once: a retry gets the first answer, a request id reused for another request
        (another fingerprint, or another table) is INVALID_ARGUMENT REQUEST_ID_REUSED, and a
        refusal is checked against the database before it is sent."""
        live = await self.tables.get(table_id)
        checked = False
        for _attempt in range(ATTEMPTS):
            async with live.lock:
                if live.stale:
                    await self.tables.refresh(live)
                if answer_key is not None:
                    known = live.answered(answer_key)
                    if known is not None:
                        return Outcome(None, known)
                try:
                    change = plan(live)
                except OkeyError:
                    if answer_key is None or checked:
                        raise
                    checked = True
                    stored, moved = await self._in_database(live, answer_key)
                    if stored is not None:
                        return Outcome(None, stored)
                    if moved:
                        continue  # memory was behind: plan again on the table reloaded
                    raise
                sealed = seal(change, pod=self.pod, lease_us=us(self.options.timer_lease_seconds))
                live.writing = sealed.record.revision
                try:
                    await self.journal.write(sealed.write)
                except Stale:
                    live.stale = True
                    if answer_key is not None:
                        stored, _moved = await self._in_database(live, answer_key)
                        if stored is not None:
                            return Outcome(None, stored)
                    continue
                except AlreadyAnswered as answered:
                    return Outcome(None, self._same_request(live, answered, answer_key))
                except BaseException:
                    live.stale = True  # written or not: the database says which
                    raise
                finally:
                    live.writing = 0
                live.apply(sealed)
            self._publish(live, sealed)
            return Outcome(sealed, sealed.answer)
        raise Stale("TABLE_CONTENDED", table_id=table_id)

    async def _in_database(self, live: LiveTable, key: AnswerKey) -> tuple[bytes | None, bool]:
        """The stored answer of ``key``, if the database has one; and whether the table had
        moved on from this pod's copy (then reloaded)."""
        stored = await self.store.answer(*key.slot)
        if stored is not None:
            table_id, fingerprint, answer = stored
            if table_id != live.table_id or not same_request(fingerprint, key.asked):
                raise Invalid("REQUEST_ID_REUSED", request_id=key.request_id)
            live.remember(key, answer, fingerprint)
            return answer, False
        revision = await self.store.revision(live.table_id)
        if live.stale or (revision is not None and revision != live.record.revision):
            await self.tables.refresh(live)
            return None, True
        return None, False

    @staticmethod
    def _same_request(live: LiveTable, answered: AlreadyAnswered, key: AnswerKey | None) -> bytes:
        """The stored answer a write found, if it answers this request (this table, this
        fingerprint): else REQUEST_ID_REUSED."""
        request_id = key.request_id if key is not None else ""
        if answered.table_id != live.table_id or (
            key is not None and not same_request(answered.fingerprint, key.asked)
        ):
            raise Invalid("REQUEST_ID_REUSED", request_id=request_id)
        if key is not None:
            live.remember(key, answered.response, answered.fingerprint)
        return answered.response

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
            self.on_outbox()

    def due_in(self, live: LiveTable) -> float | None:
        """Seconds until this pod should run the table's timer (None: none, or another pod's)."""
        timer = live.record.timer
        if timer is None or timer.claimed_by != self.pod:
            return None
        return max(0.0, (timer.due_us - self.now_us()) / 1e6)


__all__ = ["ATTEMPTS", "AnswerKey", "Outcome", "TableCore"]
