"""The timers this pod holds, run from memory when they fall due.

A table's write that sets its timer makes this pod its holder (``journal``): the timer is then
kept here, in a heap by due time, and its step started when the table service's clock reaches
it. The clock is the service's own (tests turn it by hand), so the loop sleeps until the next
timer is due by that clock but never longer than ``poll_seconds``. A table keeps at most one
timer: holding a new one (or none) makes the one before it void, and a void entry is skipped
when it comes up. A timer this pod lets lapse (it died, or its step kept failing) is the
database's again: any pod claims it there (``TableStore.claim_due``).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable

from okey101.platform.waiting import wait_set


class HeldTimers:
    """Due times of the tables whose timer this pod holds (module docstring)."""

    def __init__(
        self, now_us: Callable[[], int], run: Callable[[str], None], *, poll_seconds: float
    ) -> None:
        self._now_us = now_us
        self._run = run
        self._poll = poll_seconds
        self._heap: list[tuple[int, int, str]] = []
        self._due: dict[str, int] = {}
        self._order = itertools.count()
        self._wake = asyncio.Event()

    def __contains__(self, table_id: object) -> bool:
        return table_id in self._due

    def __len__(self) -> int:
        return len(self._due)

    def hold(self, table_id: str, due_us: int | None) -> None:
        """``table_id``'s timer is due at ``due_us`` (None: this pod holds none for it)."""
        if due_us is None:
            self._due.pop(table_id, None)
            return
        self._due[table_id] = due_us
        earliest = self._heap[0][0] if self._heap else None
        heapq.heappush(self._heap, (due_us, next(self._order), table_id))
        if earliest is None or due_us < earliest:
            self._wake.set()

    def clear(self) -> None:
        self._due.clear()
        self._heap.clear()

    async def run(self) -> None:
        """Start each timer's step when it falls due, until cancelled."""
        while True:
            now = self._now_us()
            heap = self._heap
            while heap and heap[0][0] <= now:
                due_us, _order, table_id = heapq.heappop(heap)
                if self._due.get(table_id) == due_us:
                    del self._due[table_id]
                    self._run(table_id)
            wait = self._poll
            if heap:
                wait = min(wait, max(0.0, (heap[0][0] - now) / 1e6))
            self._wake.clear()
            await wait_set(self._wake, wait)


__all__ = ["HeldTimers"]
