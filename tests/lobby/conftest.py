"""Fixtures of the lobby's tests. For the chips' (``test_chips_*.py``): a lobby on SQLite or
PostgreSQL (``chips``, ``support.chips``). For the push notifications' (``test_push*.py``): a
lobby running in-process (as ``okey101 serve lobby`` runs it) pointed at local FCM, APNs and webhook
servers (``support.push_servers``), and what the tests do with it: register devices, record
players' events as the table service does, open a WatchPlayer stream, read the outbox."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from okey.v1 import lobby_pb2
from sqlalchemy import select

from okey101.lobby.models import push_devices, push_outbox
from okey101.platform.auth import TokenIssuer, dev_signing_key

from support.chips import ChipsWorld, chips_world, database_for
from support.databases import fresh_database
from support.lobby import Client, bearer, lobby_client, lobby_settings
from support.push_servers import Providers, local_providers

#: Each platform's credentials setting (a test leaves one out to turn its platform off).
CREDENTIALS = {
    "fcm": "push_fcm_credentials_file",
    "apns": "push_apns_key_file",
    "webhook": "push_webhook_secret_file",
}
PLATFORMS = {
    "fcm": lobby_pb2.PUSH_PLATFORM_FCM,
    "apns": lobby_pb2.PUSH_PLATFORM_APNS,
    "webhook": lobby_pb2.PUSH_PLATFORM_WEBHOOK,
}


@dataclass
class PushWorld:
    """A lobby (or several on one database), its local providers, and a service's token (the
    table's, recording events)."""

    clients: list[Client]
    providers: Providers
    service: tuple[tuple[str, str], ...]

    @property
    def client(self) -> Client:
        return self.clients[0]

    @property
    def stub(self) -> Any:
        return self.client.stub

    async def register(self, guest: Any, platform: str, token: str, language: str = "en") -> str:
        answer = await self.stub.RegisterPushDevice(
            lobby_pb2.RegisterPushDeviceRequest(
                request_id=uuid.uuid4().hex,
                platform=PLATFORMS[platform],
                token=token,
                language=language,
            ),
            metadata=bearer(guest.tokens.access_token),
        )
        return str(answer.device_id)

    async def record(
        self,
        player_id: str,
        kind: int = lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED,
        *,
        table_id: str = "t-push",
        deadline_in: float | None = 60.0,
        via: Client | None = None,
    ) -> None:
        """An event of ``player_id``'s as the table's outbox records it (through ``via``)."""
        event = lobby_pb2.PlayerEvent(kind=kind, table_id=table_id, seat=2)
        if deadline_in is not None and kind == lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED:
            event.deadline.FromMicroseconds(int((time.time() + deadline_in) * 1_000_000))
        await (via or self.client).stub.RecordPlayerEvents(
            lobby_pb2.RecordPlayerEventsRequest(
                request_id=uuid.uuid4().hex,
                records=[
                    lobby_pb2.PlayerEventRecord(
                        key=f"push-test/{uuid.uuid4().hex}", player_id=player_id, event=event
                    )
                ],
            ),
            metadata=self.service,
        )

    async def outbox(self) -> list[Any]:
        """Every outbox row, oldest first."""
        async with self.client.lobby.servicer.database.read() as session:
            c = push_outbox.c
            return list(
                (
                    await session.execute(select(push_outbox).order_by(c.created_us, c.sequence))
                ).all()
            )

    async def settled(self, count: int, timeout: float = 20.0) -> list[Any]:
        """The outbox once ``count`` rows are there and none is pending or being sent."""
        async with asyncio.timeout(timeout):
            while True:
                rows = await self.outbox()
                if len(rows) >= count and all(r.state in ("sent", "dropped") for r in rows):
                    return rows
                await asyncio.sleep(0.05)

    async def devices(self) -> list[Any]:
        async with self.client.lobby.servicer.database.read() as session:
            return list((await session.execute(select(push_devices))).all())


def service_auth(var_dir: Path) -> tuple[tuple[str, str], ...]:
    """The table service's token, signed with the local-mode key the lobby uses."""
    return bearer(TokenIssuer(dev_signing_key(var_dir)).issue("service:table", "service"))


@pytest.fixture
def push_world(tmp_path: Path) -> Callable[..., contextlib.AbstractAsyncContextManager[PushWorld]]:
    """``async with push_world(**settings) as world``: a lobby sending through local
    providers (``settings`` change the lobby's: ``without`` platforms left out, another
    database); ``lobbies`` of them on one database."""

    @contextlib.asynccontextmanager
    async def open_world(
        *, without: tuple[str, ...] = (), lobbies: int = 1, **changes: Any
    ) -> AsyncIterator[PushWorld]:
        async with local_providers(tmp_path / "push") as providers:
            configured = providers.settings()
            for name in without:
                configured[CREDENTIALS[name]] = None
            settings = lobby_settings(tmp_path, **{**configured, **changes})
            async with contextlib.AsyncExitStack() as running:
                clients = [
                    await running.enter_async_context(lobby_client(settings))
                    for _ in range(lobbies)
                ]
                yield PushWorld(clients, providers, service_auth(tmp_path))

    return open_world


class Stream:
    """A WatchPlayer stream read in the background."""

    def __init__(self, client: Client, token: str) -> None:
        self.call = client.stub.WatchPlayer(
            lobby_pb2.WatchPlayerRequest(start_with_snapshot=True), metadata=bearer(token)
        )
        self.items: list[lobby_pb2.WatchPlayerResponse] = []
        self._task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for item in self.call:
            self.items.append(item)

    async def until(self, count: int, timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            while len(self.items) < count:
                await asyncio.sleep(0.02)

    async def close(self) -> None:
        self.call.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


@pytest.fixture
def stream() -> Callable[[Client, str], Stream]:
    """``stream(client, access_token)``: a WatchPlayer stream (``Stream``)."""
    return Stream


# ---------------------------------------------------------------------------------------------
# Tournaments (``test_tournament_*.py``)


@pytest.fixture(params=["sqlite", "postgresql"])
def tournament_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The lobby's database for a tournament test: a SQLite file, or a PostgreSQL database of
    this test's own, dropped after it (skipped without ``OKEY_TEST_DATABASE_URL``)."""
    yield from fresh_database(request.param, tmp_path, "lobby")


# ---------------------------------------------------------------------------------------------
# Chips (``test_chips_*.py``; ``support.chips``)


@pytest.fixture(params=["sqlite", "postgresql"])
def chips_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty lobby database: a SQLite file, or a PostgreSQL database of this test's own,
    dropped after it (skipped without ``OKEY_TEST_DATABASE_URL``)."""
    yield from database_for(request.param, tmp_path)


@pytest.fixture
def chips(
    tmp_path: Path, chips_database: str
) -> Callable[..., contextlib.AbstractAsyncContextManager[ChipsWorld]]:
    """``async with chips(**settings) as world``: a lobby on ``chips_database`` with those
    settings (``support.chips.ChipsWorld``)."""

    def open_world(**changes: Any) -> contextlib.AbstractAsyncContextManager[ChipsWorld]:
        return chips_world(tmp_path, chips_database, **changes)

    return open_world
