"""Servers end every connection after its maximum age (``--max-connection-age-seconds``, 300 s
by default; docs/integration.md, Connection age): an open WatchTable stream then ends with
UNAVAILABLE, and the shipped terminal client resumes it from its last sequence number without
telling the player anything.

The real lobby, table, scoring, rules and bot services over real gRPC on 127.0.0.1, the table
with a one-second maximum age; the client is the terminal client's own session and resumable
stream (``okey101.client``), as ``okey101 play`` uses them.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import grpc
from okey.v1 import common_pb2, lobby_pb2

from okey101.client.resume import Reconnecting
from okey101.client.session import Endpoints, Player
from okey101.table.runtime import start_table

from support.lobby import lobby_client, lobby_settings, run
from support.service_stack import FAST, peer_services, table_settings


def test_a_stream_ended_by_the_connections_age_is_resumed_without_a_word(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with peer_services(tmp_path) as peers:
            settings = table_settings(tmp_path, None, peers).replace(
                max_connection_age_seconds=1.0, grace_seconds=0.5
            )
            async with start_table(settings, options=FAST) as (table, _servicer):
                lobby = lobby_settings(
                    tmp_path, table_address=table.target, scoring_address=peers[2].target
                )
                async with lobby_client(lobby) as client:
                    endpoints = Endpoints(
                        lobby=client.lobby.target,
                        table=table.target,
                        scoring=peers[2].target,
                        rules=peers[0].target,
                    )
                    async with Player(endpoints) as player:
                        await player.login_guest(None, "Aged")
                        hosted = await player.lobby.HostTable(
                            lobby_pb2.HostTableRequest(
                                request_id="host",
                                rules=common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_OYNA),
                                host_seat=0,
                            ),
                            metadata=await player.metadata(),
                        )
                        session = player.session(hosted.table.table_id, 0)
                        reconnects: list[Reconnecting] = []
                        items: list[Any] = []

                        async def follow() -> None:
                            async for item in session.watch(on_reconnect=reconnects.append):
                                items.append(item)

                        began = time.monotonic()
                        following = asyncio.ensure_future(follow())
                        while len(reconnects) < 3 and time.monotonic() - began < 20:
                            await asyncio.sleep(0.1)
                        # The stream still answers after its ends: a guest sits, the event comes.
                        guest = Player(endpoints)
                        await guest.login_guest(None, "Late")
                        await guest.lobby.JoinTable(
                            lobby_pb2.JoinTableRequest(
                                request_id="join", table_id=hosted.table.table_id
                            ),
                            metadata=await guest.metadata(),
                        )
                        await guest.close()
                        while len(items) < 2 and time.monotonic() - began < 30:
                            await asyncio.sleep(0.1)
                        following.cancel()
        assert len(reconnects) >= 3, reconnects  # a 1 s age: the stream ended every ~1.5 s
        assert {state.rejection.code for state in reconnects} == {grpc.StatusCode.UNAVAILABLE}
        # Each end was resumed at the first try: nothing a screen shows.
        seen = [(state.failures, state.rejection.message) for state in reconnects]
        assert all(state.failures == 1 and not state.worth_showing for state in reconnects), seen
        assert items[0].HasField("view")
        assert items[1].event.kind == common_pb2.EVENT_KIND_SEAT_TAKEN
        assert items[1].event.sequence == items[0].view.as_of_sequence + 1

    run(scenario())
