"""Live tables: what the pod serving a table keeps of it in memory.

A ``LiveTable`` is a table as of its last write: its record, the hand's state (the engine's own
value), the hand's fairness record, the events of its recent past, the answers to its recent
requests and its views. Every change is planned on it (under its lock), written once
(``journal``), and then applied to it (``apply``), which wakes its watchers: a move is checked
against memory, never read from the database first.

The database stays the truth. A table is loaded from its row and the moves since its snapshot,
replayed with the engine (``LiveTables.get``); a write that finds the row moved on (another pod
served the table) marks it ``stale`` and the change is planned again on the table reloaded
(``refresh``). Other pods' commits reach this one as notifications (``notified``) that mark
their tables stale and, where someone watches, fetch the new events once for every watcher. A
hand pinned to a rules version this process does not have is never reinterpreted: loading it
fails with UNKNOWN_RULES_VERSION, and so does every call on that table.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from typing import Final

import structlog
from okey.v1 import common_pb2

from okey101.engine.hand import HandState, apply
from okey101.platform import convert
from okey101.platform.waiting import wait_set
from okey101.table.answers import Kept
from okey101.table.change import Sealed
from okey101.table.errors import Missing
from okey101.table.journal import EventRow, Snapshot, TableJournal
from okey101.table.records import DealInfo, TableRecord
from okey101.table.store import TableStore
from okey101.table.views import SeatViews

_log = structlog.get_logger("okey101.table.live")

#: Events kept in memory per table (older ones are read from the log): more than a hand has.
EVENTS_KEPT: Final = 256


class LiveTable:
    """One table in memory (module docstring)."""

    def __init__(
        self,
        record: TableRecord,
        state: HandState | None,
        deal: DealInfo | None,
    ) -> None:
        self.table_id = record.table_id
        self.record = record
        self.state = state
        self.deal = deal
        #: Consecutive events ending at ``record.last_sequence`` (possibly none).
        self.events: list[EventRow] = []
        #: The answers to its recent requests (``answers``).
        self.answers = Kept(record.table_id)
        #: Held while a change is planned and written: one at a time per table and pod.
        self.lock = asyncio.Lock()
        #: The database may hold a newer revision: reload before planning on it.
        self.stale = False
        #: The newest revision other pods have announced (their notifications): a reload that
        #: read an older one leaves the copy stale, whatever order the two came in.
        self.announced = 0
        self.watchers = 0
        self.touched = time.monotonic()
        self._views = SeatViews(record, state, deal)
        self._changed = asyncio.Event()
        #: This pod holds the table's timer and runs it from memory (set by
        #: ``timers.HeldTimers``).
        self.holds_timer = False
        #: The revision a write of this pod is making now (its own notification is no news).
        self.writing = 0
        #: Events set whenever the table changes, besides ``wait_beyond``'s (Play's streams,
        #: which wait for the table or their own acts on one event).
        self.listeners: set[asyncio.Event] = set()

    # ----------------------------------------------------------------------------------------
    # Reading

    @property
    def views(self) -> SeatViews:
        """The views of the table as it is now (built on first use, once per revision)."""
        views = self._views
        if views.record is not self.record:
            views = self._views = SeatViews(self.record, self.state, self.deal)
        return views

    def events_after(self, sequence: int, limit: int) -> list[EventRow] | None:
        """The events after ``sequence`` (at most ``limit``), or None if memory does not reach
        back that far."""
        events = self.events
        last = self.record.last_sequence
        if sequence >= last:
            return []
        first = events[0].sequence if events else last + 1
        if sequence + 1 < first:
            return None
        start = sequence + 1 - first
        return events[start : start + limit]

    async def wait_beyond(self, sequence: int, timeout: float) -> None:
        """Until the table has an event after ``sequence``, is found stale, or ``timeout``."""
        if self.record.last_sequence > sequence:
            return
        changed = self._changed
        await wait_set(changed, timeout)

    # ----------------------------------------------------------------------------------------
    # Changing

    def apply(self, sealed: Sealed) -> None:
        """The table after a written change: its events appended, its answer kept, its
        watchers woken."""
        self.record = sealed.record
        self.state = sealed.state
        self.deal = sealed.deal
        self._views = sealed.views
        self._append(sealed.events)
        if sealed.answer_key is not None and sealed.answer is not None:
            self.answers.keep(sealed.answer_key, sealed.answer)
        self._wake()

    def replace(
        self,
        record: TableRecord,
        state: HandState | None,
        deal: DealInfo | None,
        events: Sequence[EventRow],
    ) -> None:
        """The table as reloaded from the database, with the events it has logged since the
        ones kept here (``refresh``)."""
        self.record = record
        self.state = state
        self.deal = deal
        self.stale = self.announced > record.revision
        # The events kept stay only if the new ones follow them without a gap.
        follows = events[0].sequence if events else record.last_sequence + 1
        if self.events and self.events[-1].sequence + 1 != follows:
            self.events.clear()
        self._append(events)
        self._wake()

    def mark_stale(self) -> None:
        self.stale = True
        self._wake()

    def _append(self, events: Sequence[EventRow]) -> None:
        if not events:
            return
        self.events.extend(events)
        if len(self.events) > EVENTS_KEPT:
            del self.events[: len(self.events) - EVENTS_KEPT]

    def _wake(self) -> None:
        self.touched = time.monotonic()
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
        for listener in self.listeners:
            listener.set()


class LiveTables:
    """The tables this pod keeps live, loaded on first use and forgotten when idle."""

    def __init__(self, journal: TableJournal, store: TableStore, *, limit: int = 20_000) -> None:
        self.journal = journal
        self.store = store
        self.limit = limit
        self._tables: dict[str, LiveTable] = {}
        self._loading: dict[str, asyncio.Future[LiveTable]] = {}
        #: The newest revision another pod announced for a table while it was loading here: a
        #: load reads the database once, and a write committed after that read would otherwise
        #: leave the loaded copy behind, unmarked, until the table's next write.
        self._announced: dict[str, int] = {}
        self._refreshing: dict[str, asyncio.Task[None]] = {}

    def __len__(self) -> int:
        return len(self._tables)

    def cached(self, table_id: str) -> LiveTable | None:
        return self._tables.get(table_id)

    def all(self) -> list[LiveTable]:
        return list(self._tables.values())

    async def get(self, table_id: str) -> LiveTable:
        """The live table (loaded if this pod does not have it, reloaded if stale);
        TABLE_NOT_FOUND if there is no such table."""
        live = self._tables.get(table_id)
        if live is not None:
            await self.fresh(live)
            return live
        loading = self._loading.get(table_id)
        if loading is not None:
            return await asyncio.shield(loading)
        future: asyncio.Future[LiveTable] = asyncio.get_running_loop().create_future()
        self._loading[table_id] = future
        self._announced[table_id] = 0
        try:
            live = await self._load(table_id)
            live.announced = self._announced[table_id]
            live.stale = live.announced > live.record.revision
            self._tables[table_id] = live
            future.set_result(live)
            self._forget_idle()
            return live
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # retrieved: a failed load is the callers' error, not a leak
            raise
        finally:
            del self._loading[table_id]
            del self._announced[table_id]

    async def refresh(self, live: LiveTable) -> None:
        """Reload ``live`` from the database, keeping its watchers and the events they have
        not seen yet (the caller holds its lock: nothing changes it meanwhile)."""
        snapshot = await self.journal.load(live.table_id)
        if snapshot is None:
            raise Missing("TABLE_NOT_FOUND", table_id=live.table_id)
        if snapshot.row["revision"] < live.record.revision:
            # This pod's copy is the newer one (a read raced a write), unless another pod has
            # announced a newer one still.
            live.stale = live.announced > live.record.revision
            return
        record, state, deal = await self._rebuild(snapshot)
        known = live.events[-1].sequence if live.events else live.record.last_sequence
        missing: list[EventRow] = []
        if record.last_sequence > known and live.watchers:
            missing = await self.store.events_after(live.table_id, known, limit=EVENTS_KEPT)
        live.replace(record, state, deal, missing)

    async def reload(self, live: LiveTable) -> None:
        """``live`` read again from the database now, whatever its notifications said (once
        nobody is changing it)."""
        async with live.lock:
            await self.refresh(live)

    async def fresh(self, live: LiveTable) -> None:
        """``live`` reloaded if it is stale (once nobody is changing it)."""
        if live.stale:
            async with live.lock:
                if live.stale:
                    await self.refresh(live)

    def heard(self, payload: str) -> None:
        """A notification of the journal's write (``journal.NOTIFY_CHANNEL``: the table id, its
        last sequence number and its new revision), as ``notified``; ValueError if unreadable."""
        table_id, _, numbers = payload.partition(" ")
        _sequence, _, revision = numbers.partition(" ")
        self.notified(table_id, int(revision))

    def notified(self, table_id: str, revision: int) -> None:
        """Another pod wrote ``table_id`` at ``revision``: if it is newer than this pod's
        copy, the copy is stale; its watchers get the new events from one read."""
        live = self._tables.get(table_id)
        if live is None:
            if table_id in self._announced:
                self._announced[table_id] = max(self._announced[table_id], revision)
            return
        if max(live.record.revision, live.writing) >= revision:
            return  # nothing newer than this pod's copy (or than the write it is making)
        live.announced = max(live.announced, revision)
        self._stale(live)

    def stale_all(self) -> None:
        """Every table may have changed (notifications were lost): reload each on next use,
        and those watched now."""
        for live in self._tables.values():
            self._stale(live)

    def _stale(self, live: LiveTable) -> None:
        """``live`` is to be read again: now, once for all its watchers, or on next use."""
        live.stale = True
        if live.watchers and live.table_id not in self._refreshing:
            table_id = live.table_id
            task = asyncio.create_task(self._refresh_quietly(live))
            self._refreshing[table_id] = task
            task.add_done_callback(lambda _task: self._refreshing.pop(table_id, None))
        else:
            live.mark_stale()

    async def _refresh_quietly(self, live: LiveTable) -> None:
        async with live.lock:
            try:
                await self.refresh(live)
            except Exception as error:  # the next call reloads it
                _log.warning("table refresh failed", table_id=live.table_id, error=str(error)[:200])
                live.mark_stale()

    async def _load(self, table_id: str) -> LiveTable:
        snapshot = await self.journal.load(table_id)
        if snapshot is None:
            raise Missing("TABLE_NOT_FOUND", table_id=table_id)
        record, state, deal = await self._rebuild(snapshot)
        return LiveTable(record, state, deal)

    async def _rebuild(
        self, snapshot: Snapshot
    ) -> tuple[TableRecord, HandState | None, DealInfo | None]:
        """A table from its row, the moves since its snapshot replayed with the engine."""
        row = snapshot.row
        record = TableRecord.from_row(row)
        state: HandState | None = None
        if row["hand_state"] is not None:
            state = convert.hand_state_from_proto(
                common_pb2.HandState.FromString(bytes(row["hand_state"])), field="hand_state"
            )
            for move in snapshot.moves:
                action = convert.action_from_proto(common_pb2.Action.FromString(move.action))
                state, _events = apply(state, move.seat, action)
        deal: DealInfo | None = None
        if record.hand_id:
            hand = await self.store.hand(record.hand_id)
            if hand is not None:
                deal = DealInfo(
                    hand_id=hand["hand_id"],
                    commitment=hand["commitment"],
                    player_seeds=tuple(_json_list(hand["player_seeds"])),
                    server_seed=hand["server_seed"],
                )
        return record, state, deal

    def _forget_idle(self) -> None:
        """Beyond ``limit`` tables, forget the least recently used ones nobody watches or is
        changing (they are loaded again when next used)."""
        if len(self._tables) <= self.limit:
            return
        idle = sorted(
            (
                live
                for live in self._tables.values()
                if not live.watchers and not live.lock.locked() and not live.holds_timer
            ),
            key=lambda live: live.touched,
        )
        for live in idle[: len(self._tables) - self.limit]:
            del self._tables[live.table_id]


def _json_list(text: str) -> list[str]:
    return [str(item) for item in json.loads(text)]


__all__ = ["EVENTS_KEPT", "LiveTable", "LiveTables"]
