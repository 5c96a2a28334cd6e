"""Rate limits: how many calls a subject may make per window, counted in the database so they
hold across every lobby pod (``lobby_rate_limits``).

A call is counted by one upsert that adds one and returns the count (``RateCounter.hit``), in
the transaction that marks its request id counted (a claimed ``lobby_requests`` key with no
answer, method ``limit:<action>``: ``answers``), so a retry is not counted again. A request the
service refuses loses its mark (``uncount``): sent again, it counts again. Fixed windows: a burst
of up to twice the limit can straddle a window's end, which these limits tolerate.
"""

from __future__ import annotations

import hashlib
import ipaddress
from dataclasses import dataclass, field
from typing import Final

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.models import rate_limits
from okey101.lobby.records import US, now_us
from okey101.lobby.stores.answers import STORE
from okey101.platform.database import Database, dialect_insert
from okey101.platform.idempotency import CallKey

#: How long a window's count is kept.
WINDOWS_KEPT_US: Final = 3600 * US


@dataclass(frozen=True)
class RateLimit:
    """At most ``limit`` calls per ``window_seconds`` (a fixed window)."""

    limit: int
    window_seconds: float


@dataclass(frozen=True)
class Limits:
    """Rate limits per subject, shared by every lobby pod (the database counts); ``serve``
    takes them from the settings (``OKEY_*_LIMIT_PER_MINUTE``, ``OKEY_*_PER_ADDRESS_*``).

    The limits per device and per player alone let one client mint guests with fresh device
    ids, each with budgets of its own; the limits per client address (``address_subject``)
    bound what one address can make: new guests, and tables hosted by all its players."""

    login: RateLimit = field(default_factory=lambda: RateLimit(10, 60.0))
    host_table: RateLimit = field(default_factory=lambda: RateLimit(10, 60.0))
    quick_match: RateLimit = field(default_factory=lambda: RateLimit(20, 60.0))
    new_guest_per_address: RateLimit = field(default_factory=lambda: RateLimit(10, 60.0))
    host_table_per_address: RateLimit = field(default_factory=lambda: RateLimit(30, 60.0))


#: How much of an IPv6 address is one client: a /64 is what one home or phone is given, and
#: it holds more addresses than any limit could count one by one.
IPV6_CLIENT_PREFIX: Final = 64


def address_subject(address: str) -> str:
    """The subject a client address is counted as: ``address:1.2.3.4``, or its /64 for IPv6
    (``address:2001:db8:1:2::/64``); any other text (``unknown``) as it is."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return f"address:{address}"
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:  # ::ffff:1.2.3.4 is the IPv4 client 1.2.3.4
            return f"address:{parsed.ipv4_mapped}"
        network = ipaddress.ip_network(f"{parsed}/{IPV6_CLIENT_PREFIX}", strict=False)
        return f"address:{network}"
    return f"address:{parsed}"


def _counted(action: str, subject: str, request_id: str) -> CallKey:
    """Where a request id counted by ``action``'s limit is marked."""
    return CallKey(f"limit:{action}", subject, request_id)


class RateCounter:
    """The counts of every rate limit (module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def hit(self, action: str, subject: str, limit: RateLimit, request_id: str) -> int | None:
        """Count one request of ``action`` by ``subject``; None if within ``limit`` (or if the
        request id was counted already: a retry is not counted again), else the milliseconds
        until the window ends. A request refused by the limit is not marked, so once the window
        has passed it counts as new."""
        now = now_us()
        window = int(limit.window_seconds * US)
        start = now - now % window
        bucket = hashlib.sha256(f"{action}\0{subject}".encode()).hexdigest()
        marker = _counted(action, subject, request_id)

        async def work(session: AsyncConnection) -> int | None:
            if not await STORE.claim(session, marker):
                return None  # counted before: a retry
            statement = (
                dialect_insert(rate_limits, self.database.dialect)
                .values(bucket=bucket, window_start_us=start, action=action, count=1)
                .on_conflict_do_update(
                    index_elements=["bucket", "window_start_us"],
                    set_={"count": rate_limits.c.count + 1},
                )
                .returning(rate_limits.c.count)
            )
            count = int((await session.execute(statement)).scalar_one())
            if count <= limit.limit:
                return None
            await STORE.forget(session, marker)
            return max(1, (start + window - now) // 1000)

        return await self.database.transaction(work)

    async def uncount(self, action: str, subject: str, request_id: str) -> None:
        """Forget that ``hit`` counted the request id: sent again, it counts again."""
        marker = _counted(action, subject, request_id)
        await self.database.transaction(lambda session: STORE.forget(session, marker))

    @staticmethod
    async def prune(session: AsyncConnection, now: int) -> None:
        """Forget windows long past."""
        await session.execute(
            delete(rate_limits).where(rate_limits.c.window_start_us < now - WINDOWS_KEPT_US)
        )


__all__ = ["IPV6_CLIENT_PREFIX", "Limits", "RateCounter", "RateLimit", "address_subject"]
