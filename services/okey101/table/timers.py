"""Who holds a table's timer, and the timers this pod holds, run from memory when they fall due.

A table has at most one timer, in its row (``TableRecord.timer``): what is due when, and which
pod holds it until when. A change says what the table's timer is from then on
(``Change.timer``: a due timer, None for none, or ``UNCHANGED``); the pod that writes a timer
holds it until its due time plus a lease (``held``), and runs it from memory (``HeldTimers``):
the timer is kept here, in a heap by due time, and its step started when the table service's
clock reaches it. The clock is the service's own (tests turn it by hand), so the loop sleeps
until the next timer is due by that clock but never longer than ``poll_seconds``. Holding a
table's new timer (or none) makes the one before it void, and a void entry is skipped when it
comes up. A step that failed here is held again a little later (``retry``). A timer this pod
lets lapse (it died, or stopped) is the database's again: any pod claims it there once its
lease has run out (``TableStore.claim_due``, which makes the claiming pod its holder).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable
from typing import Final, Protocol

from okey101.platform.waiting import wait_set
from okey101.table.records import TableRecord, TimerRecord


class Unchanged:
    """``Change.timer``'s "the table's timer stays as it is" (None there is "no timer")."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNCHANGED"


UNCHANGED: Final = Unchanged()

#: What a change does to the table's timer: a new one, none (None), or ``UNCHANGED``.
TimerChange = TimerRecord | Unchanged | None


def held(timer: TimerRecord, pod: str, lease_us: int) -> TimerRecord:
    """``timer`` as the pod that writes it holds it: ``pod``'s until its due time plus
    ``lease_us``; any pod may claim it after that."""
    return TimerRecord(timer.kind, timer.due_us, timer.due_us + lease_us, pod)


def holds(timer: TimerRecord | None, pod: str) -> bool:
    """Whether ``pod`` holds ``timer`` (runs it from memory)."""
    return timer is not None and timer.claimed_by == pod


class Holder(Protocol):
    """A live table, as far as its timer goes (``live.LiveTable``)."""

    table_id: str
    record: TableRecord
    #: This pod holds the table's timer: it is in a ``HeldTimers`` (the table is not forgotten).
    holds_timer: bool


class HeldTimers:
    """The timers this pod holds, by due time (module docstring)."""

    def __init__(
        self,
        pod: str,
        now_us: Callable[[], int],
        run: Callable[[str], None],
        *,
        poll_seconds: float,
    ) -> None:
        self.pod = pod
        self._now_us = now_us
        self._run = run
        self._poll = poll_seconds
        self._heap: list[tuple[int, int, str]] = []
        self._due: dict[str, tuple[int, Holder]] = {}
        self._order = itertools.count()
        self._wake = asyncio.Event()

    def __contains__(self, table_id: object) -> bool:
        return table_id in self._due

    def __len__(self) -> int:
        return len(self._due)

    def holds(self, live: Holder) -> bool:
        """Whether this pod holds ``live``'s timer (a table another pod wrote since has it
        another pod's, or none)."""
        return holds(live.record.timer, self.pod)

    def due_in(self, live: Holder) -> float | None:
        """Seconds until this pod should run ``live``'s timer (None: none, or another pod's)."""
        timer = live.record.timer
        if timer is None or not holds(timer, self.pod):
            return None
        return max(0.0, (timer.due_us - self._now_us()) / 1e6)

    def hold(self, live: Holder) -> None:
        """Run ``live``'s timer from memory when it is due, if this pod holds it; else hold
        none for it (its new timer is another pod's, or it has none)."""
        timer = live.record.timer
        self._set(live, timer.due_us if timer is not None and holds(timer, self.pod) else None)

    def retry(self, live: Holder, due_us: int) -> bool:
        """Hold ``live``'s timer again at ``due_us`` (its step failed here) unless it is held
        already (a newer timer of the table's): True if it is held for the retry."""
        if live.holds_timer:
            return False
        self._set(live, due_us)
        return True

    def clear(self) -> None:
        for _due_us, live in self._due.values():
            live.holds_timer = False
        self._due.clear()
        self._heap.clear()

    def _set(self, live: Holder, due_us: int | None) -> None:
        live.holds_timer = due_us is not None
        if due_us is None:
            self._due.pop(live.table_id, None)
            return
        self._due[live.table_id] = (due_us, live)
        earliest = self._heap[0][0] if self._heap else None
        heapq.heappush(self._heap, (due_us, next(self._order), live.table_id))
        if earliest is None or due_us < earliest:
            self._wake.set()

    async def run(self) -> None:
        """Start each timer's step when it falls due, until cancelled."""
        while True:
            now = self._now_us()
            heap = self._heap
            while heap and heap[0][0] <= now:
                due_us, _order, table_id = heapq.heappop(heap)
                entry = self._due.get(table_id)
                if entry is not None and entry[0] == due_us:
                    del self._due[table_id]
                    entry[1].holds_timer = False
                    self._run(table_id)
            wait = self._poll
            if heap:
                wait = min(wait, max(0.0, (heap[0][0] - now) / 1e6))
            self._wake.clear()
            await wait_set(self._wake, wait)


__all__ = ["UNCHANGED", "HeldTimers", "Holder", "TimerChange", "Unchanged", "held", "holds"]
