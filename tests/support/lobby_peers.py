"""A lobby's peers for tests: rules, bot, scoring and a table service running in-process, as
``okey101 serve`` starts each, the lobby's settings pointing at them, and a seat played as its
player would play it."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from okey.v1 import common_pb2, table_pb2, table_pb2_grpc

from okey101.engine.bots.entry_points import fallback_decision
from okey101.platform import convert
from okey101.platform.server import ServerHandle
from okey101.table.runtime import start_table
from okey101.table.service import TableOptions

from support.lobby import bearer, lobby_settings
from support.service_stack import FAST, peer_services, table_settings


@dataclass
class Peers:
    table: ServerHandle
    scoring: ServerHandle
    channel: grpc.aio.Channel
    channel_to_scoring: grpc.aio.Channel

    @property
    def tables(self) -> Any:
        return table_pb2_grpc.TableServiceStub(self.channel)


@contextlib.asynccontextmanager
async def peers_running(
    var_dir: Path,
    table_url: str | None = None,
    options: TableOptions = FAST,
    *,
    lobby_address: str | None = None,
) -> AsyncIterator[Peers]:
    """Rules, bot, scoring and table, as ``okey101 serve`` starts each (the table telling the
    lobby at ``lobby_address`` of its players' turns, if given)."""
    async with peer_services(var_dir) as services:
        settings = table_settings(var_dir, table_url, services, lobby_address=lobby_address)
        async with start_table(settings, options=options) as (table, _servicer):
            channel = grpc.aio.insecure_channel(table.target)
            scoring = grpc.aio.insecure_channel(services[2].target)
            try:
                yield Peers(table, services[2], channel, scoring)
            finally:
                await channel.close()
                await scoring.close()


def lobby_for(var_dir: Path, peers: Peers, **changes: Any) -> Any:
    return lobby_settings(
        var_dir, table_address=peers.table.target, scoring_address=peers.scoring.target, **changes
    )


async def play_seat(peers: Peers, token: str, table_id: str, seat: int, seed: int) -> None:
    """Play ``seat`` as its player would until the table's match has ended."""
    auth = bearer(token)
    tables = peers.tables
    while True:
        table = (
            await tables.GetTable(table_pb2.GetTableRequest(table_id=table_id), metadata=auth)
        ).table
        if table.state in (common_pb2.TABLE_STATE_FINISHED, common_pb2.TABLE_STATE_CLOSED):
            return
        if table.state != common_pb2.TABLE_STATE_PLAYING:
            await asyncio.sleep(0.05)
            continue
        view = (
            await tables.GetSeatView(
                table_pb2.GetSeatViewRequest(table_id=table_id, seat=seat), metadata=auth
            )
        ).view
        playing = view.phase in (
            common_pb2.PHASE_FIRST,
            common_pb2.PHASE_DRAW,
            common_pb2.PHASE_PLAY,
        )
        if view.turn != seat or not playing or view.HasField("result"):
            await asyncio.sleep(0.02)
            continue
        decision = fallback_decision(
            convert.seat_view_from_proto(view), convert.rules_from_proto(view.rules), seed
        )
        seed += 1
        with contextlib.suppress(grpc.aio.AioRpcError):  # stale: read the view again
            await tables.Act(
                table_pb2.ActRequest(
                    request_id=uuid.uuid4().hex,
                    table_id=table_id,
                    seat=seat,
                    actions=[convert.action_to_proto(action) for action in decision.actions],
                    expected_state_version=view.state_version,
                ),
                metadata=auth,
            )


__all__ = ["Peers", "lobby_for", "peers_running", "play_seat"]
