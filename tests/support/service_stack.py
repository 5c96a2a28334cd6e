"""The real rules, bot, scoring and table services in-process, on 127.0.0.1 port 0, for tests.

    async with running_stack(tmp_path, table_url) as stack:
        table = stack.table_stub()
        await table.CreateTable(request, metadata=stack.service_auth())

Every service is started as ``okey101 serve`` starts it (the platform's ``ServerHandle`` with its
auth, interceptors and health), verifying tokens with the local-mode development key in
``var_dir``; the table reaches its peers through their real ports. Only the process differs.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from okey.v1 import rules_pb2_grpc, scoring_pb2_grpc, table_pb2_grpc

from okey101.bot import service as bot_service
from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.platform.config import Settings, settings_for_tests
from okey101.platform.database import Database
from okey101.platform.server import ServerHandle
from okey101.rules import service as rules_service
from okey101.scoring import ACCESS as SCORING_ACCESS
from okey101.scoring import ScoringServicer
from okey101.scoring import register as register_scoring
from okey101.table.runtime import start_table
from okey101.table.service import TableOptions, TableServicer

#: Table knobs for tests: bots move and hands are dealt at once; timers polled often.
FAST: TableOptions = TableOptions(
    bot_move_seconds=0.0, next_hand_seconds=0.0, poll_seconds=0.05, watchdog_seconds=0.2
)


class ManualClock:
    """Time that moves only when a test says so (seconds since the epoch)."""

    def __init__(self, start: float | None = None) -> None:
        self.now = time.time() if start is None else start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Stack:
    var_dir: Path
    settings: Settings
    table: ServerHandle
    servicer: TableServicer
    rules: ServerHandle
    bot: ServerHandle
    scoring: ServerHandle
    channels: list[grpc.aio.Channel] = field(default_factory=list)

    _issuer: TokenIssuer | None = None

    @property
    def issuer(self) -> TokenIssuer:
        if self._issuer is None:
            self._issuer = TokenIssuer(dev_signing_key(self.var_dir))
        return self._issuer

    def player_auth(self, player_id: str) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.issuer.issue(player_id, 'player')}"),)

    def service_auth(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.issuer.issue('test-lobby', 'service')}"),)

    def channel(self, target: str) -> grpc.aio.Channel:
        channel = grpc.aio.insecure_channel(target)
        self.channels.append(channel)
        return channel

    def table_stub(self) -> Any:
        return table_pb2_grpc.TableServiceStub(self.channel(self.table.target))

    def scoring_stub(self) -> Any:
        return scoring_pb2_grpc.ScoringServiceStub(self.channel(self.scoring.target))

    def rules_stub(self) -> Any:
        return rules_pb2_grpc.RulesServiceStub(self.channel(self.rules.target))


@contextlib.asynccontextmanager
async def peer_services(
    var_dir: Path, scoring_url: str | None = None
) -> AsyncIterator[tuple[ServerHandle, ServerHandle, ServerHandle]]:
    """Rules, bot and scoring, started and stopped together."""
    rules = await ServerHandle.start(
        "rules", rules_service.register, settings_for_tests("rules", var_dir=var_dir),
        access=rules_service.ACCESS,
    )  # fmt: skip
    bot = await ServerHandle.start(
        "bot", bot_service.register, settings_for_tests("bot", var_dir=var_dir),
        access=bot_service.ACCESS,
    )  # fmt: skip
    database = Database(scoring_url or f"sqlite+aiosqlite:///{var_dir / 'scoring.db'}")
    scoring_servicer = ScoringServicer(database)
    scoring = await ServerHandle.start(
        "scoring",
        lambda server: register_scoring(server, scoring_servicer),
        settings_for_tests("scoring", var_dir=var_dir),
        ready=scoring_servicer.prepare,
        access=SCORING_ACCESS,
    )
    try:
        yield rules, bot, scoring
    finally:
        for handle in (scoring, bot, rules):
            await handle.stop(grace=0)
        await database.dispose()


def table_settings(
    var_dir: Path,
    table_url: str | None,
    peers: tuple[ServerHandle, ...],
    *,
    lobby_address: str | None = None,
) -> Settings:
    """The table's settings beside ``peers`` (rules, bot, scoring), and the lobby its outbox
    tells of players' turns if one is given."""
    rules, bot, scoring = peers
    return settings_for_tests(
        "table",
        var_dir=var_dir,
        database_url=table_url or f"sqlite+aiosqlite:///{var_dir / 'table.db'}",
        rules_address=rules.target,
        bot_address=bot.target,
        scoring_address=scoring.target,
        **({"lobby_address": lobby_address} if lobby_address else {}),
    )


@contextlib.asynccontextmanager
async def running_stack(
    var_dir: Path,
    table_url: str | None = None,
    *,
    options: TableOptions = FAST,
    clock: Callable[[], float] | None = None,
    lobby_address: str | None = None,
) -> AsyncIterator[Stack]:
    """Rules, bot, scoring and a table service in-process (the table telling the lobby at
    ``lobby_address`` of its players' turns, if given: without one, those outbox rows wait)."""
    async with peer_services(var_dir) as peers:
        settings = table_settings(var_dir, table_url, peers, lobby_address=lobby_address)
        async with start_table(settings, options=options, clock=clock) as (handle, servicer):
            stack = Stack(var_dir, settings, handle, servicer, *peers)
            try:
                yield stack
            finally:
                for channel in stack.channels:
                    await channel.close()
