"""The lobby for tests: its settings, a client of a lobby running in-process as ``okey101 serve
lobby`` runs it (``start_lobby``), and what a refused call carried.

The lobby tests (``tests/lobby/``) and the stack, abuse and platform tests that need a lobby use
these.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from google.rpc import error_details_pb2, status_pb2
from okey.v1 import lobby_pb2, lobby_pb2_grpc
from sqlalchemy import func, select

from okey101.lobby import Lobby, start_lobby
from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.platform.config import Settings, settings_for_tests


def lobby_settings(var_dir: Path, database_url: str | None = None, **changes: Any) -> Settings:
    return settings_for_tests(
        "lobby",
        var_dir=var_dir,
        database_url=database_url or f"sqlite+aiosqlite:///{var_dir / 'lobby.db'}",
        jwks_port=0,
        log_level="warning",
        **changes,
    )


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@dataclass
class Client:
    """A channel to a running lobby, its stub, and the lobby itself."""

    lobby: Lobby
    channel: grpc.aio.Channel

    @property
    def stub(self) -> Any:
        return lobby_pb2_grpc.LobbyServiceStub(self.channel)

    async def guest(self, device: str | None = None, name: str = "Ayşe") -> Any:
        """A new guest's LoginGuestResponse."""
        return await self.stub.LoginGuest(
            lobby_pb2.LoginGuestRequest(
                request_id=uuid.uuid4().hex,
                device_id=device or f"device-{uuid.uuid4().hex}",
                display_name=name,
            ),
            timeout=30,
        )

    async def count(self, table: Any, *where: Any) -> int:
        async with self.lobby.servicer.database.read() as session:
            query = select(func.count()).select_from(table)
            for condition in where:
                query = query.where(condition)
            return int((await session.execute(query)).scalar_one())


@contextlib.asynccontextmanager
async def lobby_client(settings: Settings, **options: Any) -> AsyncIterator[Client]:
    async with start_lobby(settings, **options) as lobby:
        channel = grpc.aio.insecure_channel(lobby.target)
        try:
            yield Client(lobby, channel)
        finally:
            await channel.close()


def operator_auth(var_dir: Path, subject: str = "operator:test") -> tuple[tuple[str, str], ...]:
    """An operator's service token, signed with the local-mode key a lobby under ``var_dir``
    uses."""
    return bearer(TokenIssuer(dev_signing_key(var_dir)).issue(subject, "service"))


async def make_organiser(stub: Any, guest: Any, operator: tuple[tuple[str, str], ...]) -> None:
    """Make ``guest`` (a LoginGuestResponse) an organiser, who may create tournaments: its
    account registered with its own token (it keeps its id and its tokens), then the role
    granted by ``operator`` (GrantOrganiser)."""
    player_id = guest.player.player_id
    await stub.RegisterAccount(
        lobby_pb2.RegisterAccountRequest(
            request_id=uuid.uuid4().hex,
            username=f"org-{uuid.uuid4().hex[:12]}",
            password="organiser-password",
        ),
        metadata=bearer(guest.tokens.access_token),
        timeout=30,
    )
    await stub.GrantOrganiser(
        lobby_pb2.GrantOrganiserRequest(
            request_id=uuid.uuid4().hex, player_id=player_id, reason="runs test tournaments"
        ),
        metadata=operator,
        timeout=30,
    )


async def until(predicate: Any, timeout: float, what: str) -> Any:
    """``await predicate()`` again every 0.1 s until it is truthy: its value (AssertionError
    naming ``what`` after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while True:
        value = await predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


@dataclass(frozen=True)
class Failure:
    """What a failed call carried: its code, ErrorInfo and sentence."""

    code: grpc.StatusCode
    reason: str
    metadata: dict[str, str]
    message: str
    locale: str


def failure(error: grpc.aio.AioRpcError) -> Failure:
    status = next(
        status_pb2.Status.FromString(value)
        for key, value in (error.trailing_metadata() or ())
        if key == "grpc-status-details-bin" and isinstance(value, bytes)
    )
    info = error_details_pb2.ErrorInfo()
    localized = error_details_pb2.LocalizedMessage()
    assert len(status.details) == 2
    assert status.details[0].Unpack(info) and status.details[1].Unpack(localized)
    assert info.domain == "okey101"
    return Failure(error.code(), info.reason, dict(info.metadata), localized.message,
                   localized.locale)  # fmt: skip


async def refused(call: Any) -> Failure:
    """The failure of an awaited call that must fail."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return failure(caught.value)
