"""A stream lives no longer than its token, over real gRPC: WatchTable opened with a token that
expires is ended with UNAUTHENTICATED ``TOKEN_EXPIRED`` when the token runs out (its ``exp`` plus
the leeway every call gets), even while it waits for events, and the client resumes with a
fresh token from the last sequence number it saw, missing nothing."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import grpc
import grpc.aio
from okey.v1 import table_pb2

from okey101.platform.auth import TOKEN_LEEWAY_SECONDS

from support.service_stack import running_stack
from support.tables import PLAYERS, error_of, get_table, run, started_table


def test_a_watch_outliving_its_token_ends_token_expired_and_resumes_with_a_fresh_one(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path) as stack:
            table_id = await started_table(stack)
            stub = stack.table_stub()
            player = PLAYERS[0]
            # A token that runs out (leeway included) about two seconds from now.
            now = time.time()
            lasts = 2.0
            token = stack.issuer.issue(
                player, "player", ttl_seconds=10, now=now - 10 - TOKEN_LEEWAY_SECONDS + lasts
            )
            expires = int(now - 10 - TOKEN_LEEWAY_SECONDS + lasts) + 10 + TOKEN_LEEWAY_SECONDS
            stream = stub.WatchTable(
                table_pb2.WatchTableRequest(table_id=table_id, seat=0, start_with_view=True),
                metadata=(("authorization", f"Bearer {token}"),),
            )
            first = await stream.read()
            seen = first.view.as_of_sequence
            assert seen > 0
            # Nothing moves at the table (every seat a person, no timer runs out in time):
            # the stream is waiting for events when the token runs out.
            try:
                while True:
                    message = await asyncio.wait_for(stream.read(), timeout=lasts + 10)
                    if message is grpc.aio.EOF:
                        raise AssertionError("the stream ended without a status")
                    seen = message.event.sequence or seen
            except grpc.aio.AioRpcError as error:
                ended = time.time()
                code, reason, sentence = error_of(error)
            assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_EXPIRED")
            assert sentence
            assert expires - 0.5 <= ended <= expires + 1.5, (expires, ended)
            # The table keeps no watcher for it.
            live = await stack.servicer.core.tables.get(table_id)
            assert live.watchers == 0
            # An expired token opens nothing.
            again = stub.WatchTable(
                table_pb2.WatchTableRequest(table_id=table_id, seat=0, after_sequence=seen),
                metadata=(("authorization", f"Bearer {token}"),),
            )
            try:
                await again.read()
                raise AssertionError("an expired token opened a stream")
            except grpc.aio.AioRpcError as error:
                assert error_of(error)[:2] == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_EXPIRED")
            # A fresh token resumes from the sequence seen: the events logged since, no gap.
            table = await get_table(stack, table_id)
            await stub.Leave(
                table_pb2.LeaveRequest(request_id="step-out", table_id=table_id),
                metadata=stack.player_auth(PLAYERS[2]),
            )
            resumed = stub.WatchTable(
                table_pb2.WatchTableRequest(table_id=table_id, seat=0, after_sequence=seen),
                metadata=stack.player_auth(player),
            )
            event = (await asyncio.wait_for(resumed.read(), timeout=10)).event
            assert event.sequence == seen + 1 and seen == table.last_sequence
            resumed.cancel()

    run(scenario())
