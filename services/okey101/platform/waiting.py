"""Waiting for an event with a time limit, cancellably.

``asyncio.wait_for(event.wait(), timeout)`` runs the wait as a task of its own, and on Python
3.11 a cancellation that arrives as that task finishes (the event set, as a stopping service
sets its loops' events) is lost: ``wait_for`` returns the result instead of raising, and a loop
built on it never stops (the table's held timers hung a test's shutdown that way under load).
``asyncio.timeout`` waits in the caller's own task, so a cancellation always propagates.
"""

from __future__ import annotations

import asyncio


async def wait_set(event: asyncio.Event, timeout: float) -> bool:
    """Whether ``event`` is set within ``timeout`` seconds; cancelling the caller cancels it."""
    try:
        async with asyncio.timeout(timeout):
            await event.wait()
    except TimeoutError:
        return False
    return True


__all__ = ["wait_set"]
