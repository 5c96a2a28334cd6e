"""Python's garbage collector, set for a service that keeps many live objects.

A full collection walks every object the process tracks, and a table process keeps every live
table's record, hand state and views: with 600 tables, one full collection held the process for
a quarter to nearly a second, and Python's default (a full collection after every ten
collections of the middle generation, once a quarter of the old objects are new) ran one about
every three seconds under load (``okey101 bench core --tables 600``: 11 in 30 s, 3.6 s in all;
docs/performance.md). What a hand makes and drops is freed by reference counting the moment it
is dropped; the collector is only for cycles, which a service makes few of. So:

- what the service loaded to start (modules, settings, warmed caches) is frozen out of the
  generations once it is serving: no collection walks it again;
- a full collection waits for a hundred times as many middle-generation ones
  (``FULL_COLLECTION_AFTER``): in that same run, none in 20 s, the worst pause 56 ms, a
  quarter of the time in the collector. The young generations keep Python's thresholds.

``okey_gc_pause_seconds`` (platform.metrics) shows what the collector still takes.
"""

from __future__ import annotations

import gc
from typing import Final

#: Collections of the middle generation before a full one (Python's default: 10).
FULL_COLLECTION_AFTER: Final = 1_000


def settle() -> None:
    """Freeze what the process holds now, and space full collections out."""
    gc.collect()
    gc.freeze()
    young, middle, _full = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_AFTER)
