"""RegisterPushDevice and UnregisterPushDevice through the edge, as a browser or curl calls
them (Connect JSON over HTTP/1.1), with the lobby and the edge as ``okey101 serve`` processes:
the device it registers gets the player's next turn at a real webhook receiver, in Turkish."""

from __future__ import annotations

import asyncio
import base64
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from okey.v1 import lobby_pb2, lobby_pb2_grpc

from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.stack import FAST, local_stack, start_edge

from support.http_calls import lobby_json
from support.push_servers import HttpServer, WebhookReceiver

pytestmark = pytest.mark.slow


class ReceiverThread:
    """A webhook receiver on 127.0.0.1, in an event loop of its own thread."""

    def __init__(self, secret: bytes) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.receiver = WebhookReceiver(secret)
        self.receiver.server = HttpServer(self.receiver.handle)
        asyncio.run_coroutine_threadsafe(self.receiver.server.start(), self.loop).result(10)

    def until(self, count: int) -> list[dict[str, Any]]:
        future = asyncio.run_coroutine_threadsafe(self.receiver.until(count), self.loop)
        return [request.json() for request in future.result(30)]

    def close(self) -> None:
        assert self.receiver.server is not None
        asyncio.run_coroutine_threadsafe(self.receiver.server.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture
def receiver() -> Iterator[ReceiverThread]:
    running = ReceiverThread(uuid.uuid4().hex.encode() * 2)
    try:
        yield running
    finally:
        running.close()


def _detail(answer: dict[str, Any], kind: type[Any]) -> Any:
    by_type = {detail["type"]: detail["value"] for detail in answer["details"]}
    raw = by_type[kind.DESCRIPTOR.full_name]
    return kind.FromString(base64.b64decode(raw + "=" * (-len(raw) % 4)))


def test_a_device_registered_through_the_edge_gets_the_players_turn(
    tmp_path: Path, receiver: ReceiverThread
) -> None:
    secret_file = tmp_path / "webhook-secret"
    secret_file.write_bytes(receiver.receiver.secret + b"\n")
    env = {
        **FAST,
        "OKEY_LOBBY_PUSH_WEBHOOK_SECRET_FILE": str(secret_file),
        "OKEY_LOBBY_PUSH_WEBHOOK_ALLOW_LOOPBACK": "1",
    }
    with local_stack(tmp_path / "stack", env=env, services=("lobby",)) as stack:
        port = start_edge(stack).port
        status, login = lobby_json(
            port,
            "LoginGuest",
            {
                "requestId": uuid.uuid4().hex,
                "deviceId": f"edge-{uuid.uuid4()}",
                "displayName": "Zeynep",
            },
        )
        assert status == 200, login
        token = login["tokens"]["accessToken"]
        player_id = login["player"]["playerId"]
        url = f"http://127.0.0.1:{receiver.receiver.server.port}/hook/edge"  # type: ignore[union-attr]
        register = {
            "requestId": "push-1",
            "platform": "PUSH_PLATFORM_WEBHOOK",
            "token": url,
            "language": "tr",
        }
        status, answer = lobby_json(port, "RegisterPushDevice", register, token)
        assert status == 200, answer
        device_id = answer["deviceId"]
        assert lobby_json(port, "RegisterPushDevice", register, token) == (200, answer)  # a retry

        status, refused = lobby_json(
            port,
            "RegisterPushDevice",
            {**register, "requestId": "push-2", "language": "de", "locale": "tr"},
            token,
        )
        assert (status, refused["code"]) == (400, "invalid_argument")
        info = _detail(refused, error_details_pb2.ErrorInfo)
        assert (info.reason, dict(info.metadata)) == ("BAD_PUSH_LANGUAGE", {"language": "de"})
        localized = _detail(refused, error_details_pb2.LocalizedMessage)
        assert localized.locale == "tr-TR" and "Türkçe" in localized.message
        status, refused = lobby_json(
            port,
            "RegisterPushDevice",
            {**register, "requestId": "push-3", "platform": 2, "token": "ab" * 32},
            token,
        )
        assert _detail(refused, error_details_pb2.ErrorInfo).reason == (
            "PUSH_PLATFORM_NOT_CONFIGURED"
        )

        # The table's outbox records the player's turn (a service token, straight to the lobby).
        service = TokenIssuer(dev_signing_key(stack.var_dir)).issue("service:table", "service")
        with grpc.insecure_channel(stack.address("lobby")) as channel:
            event = lobby_pb2.PlayerEvent(
                kind=lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED, table_id="t-edge", seat=1
            )
            lobby_pb2_grpc.LobbyServiceStub(channel).RecordPlayerEvents(
                lobby_pb2.RecordPlayerEventsRequest(
                    request_id="rec-1",
                    records=[
                        lobby_pb2.PlayerEventRecord(key="edge/1", player_id=player_id, event=event)
                    ],
                ),
                metadata=(("authorization", f"Bearer {service}"),),
                timeout=10,
            )
        (document,) = receiver.until(1)
        assert (document["device_id"], document["player_id"]) == (device_id, player_id)
        assert (document["kind"], document["title"]) == ("TURN_STARTED", "Sıra sende")
        assert document["data"]["table_id"] == "t-edge"
        assert receiver.receiver.violations == []

        status, answer = lobby_json(
            port, "UnregisterPushDevice", {"requestId": "un-1", "deviceId": device_id}, token
        )
        assert (status, answer) == (200, {"removed": True})
