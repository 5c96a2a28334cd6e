"""How fast a player may send moves: a token bucket per (player, table), in this pod's memory.

A player's client may call Act ``burst`` times in a row, then ``per_second`` times a second on
average; a call beyond that is refused before the table is read, with RESOURCE_EXHAUSTED
(``RATE_LIMITED``, ``retry_after_ms``: when the next call will be let through, ``action``:
``act``). Calls with a service token (the lobby, this service's own bots and timeouts) are not
counted. A move takes a database read and a rules call even when it is refused, so a client
that floods one table with moves (a bug or an attack) is held to a pace no person reaches, and
every other table keeps its own. A retry of a move (the same request id as one of the last few
the bucket let through, whether it was answered or failed with UNAVAILABLE) is not counted again.

Each pod counts on its own, so behind a per-call load balancer a client reaches at most
(pods x ``per_second``): the limit protects the pods and the database from one client, not the
game, which the rules protect. Buckets of players who stop playing are forgotten, least recently
used first, beyond ``max_buckets``.

Knobs: ``OKEY_TABLE_ACT_BURST`` (default 40) and ``OKEY_TABLE_ACT_PER_SECOND`` (default 20;
``0`` turns the limit off). People make a move every second or two; clients that play as fast
as the table answers (tests, bots on player tokens) stay under the defaults.
"""

from __future__ import annotations

import math
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from okey101.platform.errors import ResourceExhausted

BURST_ENV: Final = "OKEY_TABLE_ACT_BURST"
PER_SECOND_ENV: Final = "OKEY_TABLE_ACT_PER_SECOND"
#: How many of the request ids a bucket let through it remembers (a client retries its latest).
RECENT_REQUESTS: Final = 4


@dataclass(frozen=True)
class ActLimit:
    """A bucket of ``burst`` moves, refilled at ``per_second`` (0: no limit)."""

    burst: int = 40
    per_second: float = 20.0
    max_buckets: int = 100_000

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> ActLimit:
        env = os.environ if environ is None else environ
        default = cls()
        try:
            burst = int(env.get(BURST_ENV) or default.burst)
            per_second = float(env.get(PER_SECOND_ENV) or default.per_second)
        except ValueError:
            raise ValueError(f"{BURST_ENV} and {PER_SECOND_ENV} must be numbers") from None
        if burst < 1 or per_second < 0 or not math.isfinite(per_second):
            raise ValueError(f"{BURST_ENV} must be at least 1 and {PER_SECOND_ENV} at least 0")
        return cls(burst=burst, per_second=per_second)


class ActLimiter:
    """The buckets of one pod (module docstring)."""

    def __init__(
        self, limit: ActLimit | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit if limit is not None else ActLimit.from_environ()
        self._clock = clock
        #: (player, table) -> (tokens left, when they were counted, the latest request ids
        #: let through).
        self._buckets: OrderedDict[tuple[str, str], tuple[float, float, tuple[str, ...]]] = (
            OrderedDict()
        )

    def check(self, player_id: str, table_id: str, request_id: str = "") -> None:
        """Take one move from the player's bucket at the table, or raise RATE_LIMITED; a
        request id the bucket let through lately takes nothing (a call without one always
        counts)."""
        limit = self.limit
        if limit.per_second <= 0:
            return
        key = (player_id, table_id)
        now = self._clock()
        tokens, then, recent = self._buckets.pop(key, (float(limit.burst), now, ()))
        tokens = min(float(limit.burst), tokens + (now - then) * limit.per_second)
        if request_id and request_id in recent:
            self._buckets[key] = (tokens, now, recent)
            return
        if tokens >= 1.0:
            if request_id:
                recent = (*recent, request_id)[-RECENT_REQUESTS:]
            self._buckets[key] = (tokens - 1.0, now, recent)
            while len(self._buckets) > limit.max_buckets:
                self._buckets.popitem(last=False)
            return
        self._buckets[key] = (tokens, now, recent)
        wait_ms = math.ceil((1.0 - tokens) / limit.per_second * 1000)
        raise ResourceExhausted("RATE_LIMITED", retry_after_ms=max(wait_ms, 1), action="act")


__all__ = ["BURST_ENV", "PER_SECOND_ENV", "RECENT_REQUESTS", "ActLimit", "ActLimiter"]
