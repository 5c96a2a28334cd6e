"""Fixtures of the table's tests.

- ``table_url``: a fresh table database, SQLite and (with ``OKEY_TEST_DATABASE_URL``)
  PostgreSQL.
- ``recording_lobby``: a small real LobbyService on 127.0.0.1 that records what a table's
  outbox sends it (RecordTableChips, RecordPlayerEvents), and can be taken down and brought
  back on the same port: ``async with recording_lobby() as lobby: ... lobby.address``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from okey.v1 import lobby_pb2, lobby_pb2_grpc

from support.databases import fresh_database


@pytest.fixture(params=["sqlite", "postgresql"])
def table_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh table database: a SQLite file, or a PostgreSQL database dropped afterwards."""
    yield from fresh_database(request.param, tmp_path, "table")


class RecordingLobby(lobby_pb2_grpc.LobbyServiceServicer):
    """The lobby calls a table makes, answered and recorded; the rest UNIMPLEMENTED."""

    def __init__(self) -> None:
        #: Every RecordTableChips request, in the order they arrived.
        self.chips_calls: list[lobby_pb2.RecordTableChipsRequest] = []
        self.player_records = 0
        self.port = 0
        self._server: grpc.aio.Server | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def chips(self) -> list[lobby_pb2.TableChipsRecord]:
        """Every chips record received, in order (a record sent twice is here twice)."""
        return [record for call in self.chips_calls for record in call.records]

    async def up(self) -> None:
        """Serve (again, on the same port once it has one)."""
        server = grpc.aio.server()
        lobby_pb2_grpc.add_LobbyServiceServicer_to_server(self, server)
        self.port = server.add_insecure_port(self.address)
        await server.start()
        self._server = server

    async def down(self) -> None:
        """Out of reach: calls fail UNAVAILABLE until ``up``."""
        if self._server is not None:
            await self._server.stop(grace=None)
            self._server = None

    async def RecordTableChips(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.RecordTableChipsRequest, context: Any
    ) -> lobby_pb2.RecordTableChipsResponse:
        self.chips_calls.append(request)
        return lobby_pb2.RecordTableChipsResponse()

    async def RecordPlayerEvents(  # noqa: N802
        self, request: lobby_pb2.RecordPlayerEventsRequest, context: Any
    ) -> lobby_pb2.RecordPlayerEventsResponse:
        self.player_records += len(request.records)
        return lobby_pb2.RecordPlayerEventsResponse()

    async def ListRevokedLogins(  # noqa: N802
        self, request: lobby_pb2.ListRevokedLoginsRequest, context: Any
    ) -> lobby_pb2.ListRevokedLoginsResponse:
        return lobby_pb2.ListRevokedLoginsResponse(as_of_us=int(time.time() * 1e6))


@pytest.fixture
def recording_lobby() -> Callable[[], contextlib.AbstractAsyncContextManager[RecordingLobby]]:
    """``async with recording_lobby() as lobby``: a ``RecordingLobby`` serving until the end."""

    @contextlib.asynccontextmanager
    async def serving() -> AsyncIterator[RecordingLobby]:
        lobby = RecordingLobby()
        await lobby.up()
        try:
            yield lobby
        finally:
            await lobby.down()

    return serving
