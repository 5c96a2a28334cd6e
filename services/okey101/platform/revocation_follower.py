"""Following the lobby's list of revoked logins into this process's ``RevokedLogins``.

Every ``revocation_poll_seconds`` (``OKEY_REVOCATION_POLL_SECONDS``, default 2 s) a service
asks ``LobbyService.ListRevokedLogins`` for the logins revoked since its last answer, less an
overlap (a revocation committed late carries an earlier time; one seen twice is harmless), and
adds them: the auth interceptor then refuses their tokens and ends their streams
(``revocations``). The services that follow are those where a player's token changes or
watches something: the table (its seats, moves and streams), through ``lobby_source``, and the
lobby itself, from its own database. The rules service's and scoring's player calls read what
is public (hints for a view the caller sends, sheets, standings): a revoked login's token works
there until it expires. A lobby that cannot be reached is logged once, and asked again at the
same pace: until it answers, revoked logins' tokens live until they expire, as they would
without this.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Final

from okey.v1 import lobby_pb2, lobby_pb2_grpc
from prometheus_client import Gauge

from okey101.platform.peer_channels import PeerChannels
from okey101.platform.revocations import RevokedLogin, RevokedLogins

#: How far before the last answer's time the next question starts.
OVERLAP_US: Final = 30_000_000
#: How long one question may take.
ASK_TIMEOUT_SECONDS: Final = 5.0
_US: Final = 1_000_000

REVOKED_LOGINS: Final = Gauge(
    "okey_auth_revoked_logins",
    "Revoked logins this process knows of whose tokens could still be live.",
)

#: Asks for the logins revoked at or after a time (microseconds since the epoch).
RevocationSource = Callable[[int], Awaitable[lobby_pb2.ListRevokedLoginsResponse]]


def lobby_source(peers: PeerChannels) -> RevocationSource:
    """Ask the lobby over gRPC, with this service's token."""
    stub = lobby_pb2_grpc.LobbyServiceStub(peers.channel("lobby"))

    async def ask(since_us: int) -> lobby_pb2.ListRevokedLoginsResponse:
        answer: lobby_pb2.ListRevokedLoginsResponse = await stub.ListRevokedLogins(
            lobby_pb2.ListRevokedLoginsRequest(since_us=since_us),
            metadata=peers.metadata(),
            timeout=ASK_TIMEOUT_SECONDS,
        )
        return answer

    return ask


async def catch_up(revoked: RevokedLogins, source: RevocationSource, since_us: int) -> int:
    """Add every login revoked since ``since_us`` (page after page); the next ``since_us``."""
    while True:
        answer = await source(since_us)
        revoked.add(
            RevokedLogin(login.session_id, login.forget_after_us / _US) for login in answer.logins
        )
        REVOKED_LOGINS.set(len(revoked))
        if answer.more and answer.logins and answer.logins[-1].revoked_us > since_us:
            since_us = answer.logins[-1].revoked_us
            continue
        return max(0, answer.as_of_us - OVERLAP_US)


async def follow(
    revoked: RevokedLogins, source: RevocationSource, interval: float, log: Any
) -> None:
    """Keep ``revoked`` up to date from ``source`` until cancelled."""
    since_us = 0
    failing = False
    while True:
        try:
            since_us = await catch_up(revoked, source, since_us)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if not failing:
                log.warning("cannot read the revoked logins: retrying", error=str(error)[:300])
            failing = True
        else:
            if failing:
                log.info("revoked logins read again")
            failing = False
        await asyncio.sleep(interval)


class RevocationFollower:
    """``follow`` as a task of a server's life."""

    def __init__(self, task: asyncio.Task[None]) -> None:
        self._task = task

    @classmethod
    def start(
        cls, revoked: RevokedLogins, source: RevocationSource, interval: float, log: Any
    ) -> RevocationFollower:
        return cls(asyncio.create_task(follow(revoked, source, interval, log)))

    async def stop(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


__all__ = [
    "OVERLAP_US",
    "REVOKED_LOGINS",
    "RevocationFollower",
    "RevocationSource",
    "catch_up",
    "follow",
    "lobby_source",
]
