"""A lobby for the chips' tests (``tests/lobby/test_chips_*.py``): one running in-process as
``okey101 serve lobby`` runs it, on SQLite or on a PostgreSQL database of the test's own, with
what the tests do to its wallets and pots: players, GetWallet, stakes held as the seating flows
hold them (``chips.stakes.hold_stake`` in the lobby's own database), RecordTableChips as the
table's outbox sends it, balances and the audit read from the ledger.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okey.v1 import lobby_pb2
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.chips import accounts, ledger, stakes
from okey101.lobby.chips.audit import Audit, audit_chips, snapshot
from okey101.lobby.records import now_us
from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.platform.database import Database
from okey101.stack import free_port

from support.databases import postgres_database
from support.lobby import Client, bearer, lobby_client, lobby_settings
from support.lobby_peers import lobby_for, peers_running

Auth = tuple[tuple[str, str], ...]
SEAT_FREED = lobby_pb2.TABLE_CHIPS_EVENT_KIND_SEAT_FREED
STARTED = lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_STARTED
ENDED = lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ENDED
ABANDONED = lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ABANDONED


@dataclass(frozen=True)
class Player:
    player_id: str
    auth: Auth


@dataclass
class ChipsWorld:
    """A running lobby, a service's token (the table's), an operator's, and the lobby's own
    database."""

    client: Client
    service: Auth
    operator: Auth
    var_dir: Path

    @property
    def stub(self) -> Any:
        return self.client.stub

    @property
    def database(self) -> Database:
        return self.client.lobby.servicer.database

    @property
    def starting_grant(self) -> int:
        return self.client.lobby.servicer.options.chips.starting_grant

    async def player(self, name: str = "Ayşe") -> Player:
        answer = await self.client.guest(name=name)
        return Player(answer.player.player_id, bearer(answer.tokens.access_token))

    async def wallet(self, player: Player) -> Any:
        return await self.stub.GetWallet(lobby_pb2.GetWalletRequest(), metadata=player.auth)

    async def hold(
        self, player: Player, table_id: str, stake: int = 100, *, key: str = "", fee: int = 5
    ) -> str:
        """The player's stake held at ``table_id`` as the seating flows hold it: its key."""
        key = key or f"stake:{table_id}:{player.player_id}:{uuid.uuid4().hex[:8]}"

        async def work(session: AsyncConnection) -> None:
            await stakes.hold_stake(
                session,
                key=key,
                player_id=player.player_id,
                table_id=table_id,
                stake=stake,
                fee_percent=fee,
                now_us=now_us(),
                starting_grant=self.starting_grant,
            )

        await self.database.transaction(work)
        return key

    async def record(self, *records: lobby_pb2.TableChipsRecord, request_id: str = "") -> Any:
        return await self.stub.RecordTableChips(
            lobby_pb2.RecordTableChipsRequest(
                request_id=request_id or uuid.uuid4().hex, records=list(records)
            ),
            metadata=self.service,
        )

    async def balance(self, account: str) -> int:
        async with self.database.read() as session:
            return await ledger.balance(session, account)

    async def chips_of(self, player: Player) -> int:
        return await self.balance(accounts.player(player.player_id))

    async def hold_state(self, key: str) -> str | None:
        async with self.database.read() as session:
            hold = await stakes.hold_of(session, key)
        return None if hold is None else hold.state

    async def pot_state(self, table_id: str) -> str | None:
        async with self.database.read() as session:
            pot = await stakes.pot_of(session, table_id)
        return None if pot is None else pot.state

    async def audit(self) -> Audit:
        async with snapshot(self.database) as session:
            return await audit_chips(session)


def seat(seat: int, player: Player | None = None, hold_key: str = "", place: int = 0) -> Any:
    """A TableChipsSeat: a player's (with their hold) or, without a player, a bot's."""
    return lobby_pb2.TableChipsSeat(
        seat=seat,
        player_id=player.player_id if player else "",
        hold_key=hold_key,
        place=place,
    )


def record(
    kind: int,
    table_id: str,
    *seats: Any,
    partners: bool = False,
    key: str = "",
    stake: int = 0,
    fee_percent: int = 0,
) -> Any:
    """A TableChipsRecord (its key unique unless given; the table's stake and fee, which the
    lobby checks against the pot's, left out unless given)."""
    return lobby_pb2.TableChipsRecord(
        key=key or f"chips/{table_id}/{uuid.uuid4().hex[:10]}",
        kind=kind,
        table_id=table_id,
        stake=stake,
        fee_percent=fee_percent,
        seats=list(seats),
        partners=partners,
    )


def service_token(var_dir: Path, subject: str) -> Auth:
    """A service's token, signed with the local-mode key the lobby uses."""
    return bearer(TokenIssuer(dev_signing_key(var_dir)).issue(subject, "service"))


def database_for(kind: str, tmp_path: Path) -> Iterator[str]:
    """An empty database of ``kind`` (``sqlite`` or ``postgresql``) for one test."""
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'lobby.db'}"
        return
    with postgres_database("okey_chips") as url:
        yield url


@contextlib.asynccontextmanager
async def chips_world(
    var_dir: Path, database_url: str, **changes: Any
) -> AsyncIterator[ChipsWorld]:
    """A lobby on ``database_url`` (``changes``: its settings, the chips' among them)."""
    settings = lobby_settings(var_dir, database_url, **changes)
    async with lobby_client(settings) as client:
        yield ChipsWorld(
            client,
            service_token(var_dir, "service:table"),
            service_token(var_dir, "operator:test"),
            var_dir,
        )


@contextlib.asynccontextmanager
async def chips_world_with_tables(var_dir: Path, database_url: str) -> AsyncIterator[ChipsWorld]:
    """``chips_world`` with the table and scoring services a tournament starts on (on
    PostgreSQL in the same database, their tables prefixed apart)."""
    port = free_port()
    table_url = None if database_url.startswith("sqlite") else database_url
    async with (
        peers_running(var_dir, table_url, lobby_address=f"127.0.0.1:{port}") as peers,
        lobby_client(lobby_for(var_dir, peers, port=port, database_url=database_url)) as client,
    ):
        yield ChipsWorld(
            client,
            service_token(var_dir, "service:table"),
            service_token(var_dir, "operator:test"),
            var_dir,
        )


__all__ = [
    "ABANDONED",
    "ENDED",
    "SEAT_FREED",
    "STARTED",
    "ChipsWorld",
    "Player",
    "chips_world",
    "chips_world_with_tables",
    "database_for",
    "record",
    "seat",
    "service_token",
]
