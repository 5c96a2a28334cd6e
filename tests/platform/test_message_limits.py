"""Requests over the size limits, over real gRPC (a real rules server as ``okey101 serve`` starts
it): a message over ``MAX_REQUEST_BYTES`` or metadata over ``MAX_METADATA_BYTES`` is refused with
RESOURCE_EXHAUSTED and one ErrorInfo (``MESSAGE_TOO_LARGE``, ``METADATA_TOO_LARGE``: size and
limit) and a sentence in the caller's language, on unary calls and streams alike; only beyond
gRPC's own limits, a little above (``TRANSPORT_*``), is the refusal gRPC's bare one."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import grpc.aio
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status
from okey.v1 import rules_pb2, rules_pb2_grpc

from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.platform.config import settings_for_tests
from okey101.platform.handlers import (
    MAX_METADATA_BYTES,
    MAX_REQUEST_BYTES,
    TRANSPORT_METADATA_BYTES,
    TRANSPORT_RECEIVE_BYTES,
)
from okey101.platform.server import ServerHandle
from okey101.rules import service as rules_service


def _refusal(error: grpc.aio.AioRpcError) -> tuple[grpc.StatusCode, str, dict[str, str], str]:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    if status is None:
        return error.code(), "", {}, ""
    infos, messages = [], []
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            infos.append(info)
        elif detail.Is(error_details_pb2.LocalizedMessage.DESCRIPTOR):
            message = error_details_pb2.LocalizedMessage()
            detail.Unpack(message)
            messages.append(message)
    assert len(infos) == 1 and len(messages) == 1
    return error.code(), infos[0].reason, dict(infos[0].metadata), messages[0].message


def test_the_limits_leave_room_between_ours_and_grpcs() -> None:
    assert MAX_REQUEST_BYTES < TRANSPORT_RECEIVE_BYTES
    assert MAX_METADATA_BYTES < TRANSPORT_METADATA_BYTES


def test_requests_over_the_limits_are_refused_with_a_reason(tmp_path: Path) -> None:
    async def scenario() -> None:
        handle = await ServerHandle.start(
            "rules",
            rules_service.register,
            settings_for_tests("rules", var_dir=tmp_path),
            access=rules_service.ACCESS,
        )
        token = TokenIssuer(dev_signing_key(tmp_path)).issue("p-limits", "player")
        auth = (("authorization", f"Bearer {token}"),)
        options = [("grpc.max_send_message_length", 64 << 20)]
        try:
            async with grpc.aio.insecure_channel(handle.target, options=options) as channel:
                stub = rules_pb2_grpc.RulesServiceStub(channel)
                small = rules_pb2.ValidateMeldsRequest()
                assert await stub.ValidateMelds(small, metadata=auth, timeout=10) is not None
                # A message over our limit, under gRPC's: refused with a reason, in Turkish.
                big = rules_pb2.ValidateMeldsRequest(locale="x" * (MAX_REQUEST_BYTES + 1))
                turkish = (*auth, ("accept-language", "tr"))
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await stub.ValidateMelds(big, metadata=turkish, timeout=10)
                code, reason, params, sentence = _refusal(caught.value)
                assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "MESSAGE_TOO_LARGE")
                assert params == {"size": str(big.ByteSize()), "limit": str(MAX_REQUEST_BYTES)}
                assert "çok büyük" in sentence
                # Metadata over our limit: refused with a reason, on a unary call and a stream.
                heavy = (*auth, ("x-padding", "y" * MAX_METADATA_BYTES))
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await stub.ValidateMelds(small, metadata=heavy, timeout=10)
                code, reason, params, sentence = _refusal(caught.value)
                assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "METADATA_TOO_LARGE")
                assert params["limit"] == str(MAX_METADATA_BYTES)
                assert int(params["size"]) > MAX_METADATA_BYTES and "too large" in sentence
                health = health_pb2_grpc.HealthStub(channel)
                watch = health.Watch(health_pb2.HealthCheckRequest(), metadata=heavy)
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await asyncio.wait_for(watch.read(), timeout=10)
                code, reason, _params, _sentence = _refusal(caught.value)
                assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "METADATA_TOO_LARGE")
                # Beyond gRPC's own limits: gRPC's refusal, before any code of ours runs.
                huge = rules_pb2.ValidateMeldsRequest(locale="x" * (TRANSPORT_RECEIVE_BYTES + 1))
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await stub.ValidateMelds(huge, metadata=auth, timeout=10)
                assert _refusal(caught.value)[:2] == (grpc.StatusCode.RESOURCE_EXHAUSTED, "")
                # The server still serves.
                assert await stub.ValidateMelds(small, metadata=auth, timeout=10) is not None
        finally:
            await handle.stop(grace=0)

    asyncio.run(scenario())
