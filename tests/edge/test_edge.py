"""The edge over real HTTP: the real services and ``okey101 serve edge`` on 127.0.0.1, called
as a browser or curl would (http.client, no Connect client of ours): Connect JSON and binary,
gRPC-Web, a server stream over HTTP/1.1, error details, CORS, internal RPCs and bad bodies."""

from __future__ import annotations

import base64
import http.client
import json
import re
import struct
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from google.rpc import error_details_pb2
from okey.v1 import lobby_pb2, table_pb2

from okey101.edge.forward import all_methods
from okey101.edge.routes import INTERNAL, NATIVE_ONLY, PUBLIC
from okey101.platform.auth import AccessPolicy
from okey101.stack import FAST, LocalStack, local_stack, start_edge

from support.http_calls import grpc_web_frames, post

pytestmark = pytest.mark.slow

ORIGIN_OK = "http://localhost:5173"
ORIGIN_BAD = "https://evil.example"


@pytest.fixture(scope="module")
def edge() -> Iterator[tuple[LocalStack, int]]:
    with local_stack(env=FAST) as stack:
        service = start_edge(stack, env={"OKEY_EDGE_CORS_ORIGINS": "https://okey.example"})
        yield stack, service.port


def _json(port: int, path: str, message: dict[str, Any], **headers: str) -> tuple[int, Any]:
    status, _headers, body = post(
        port, path, json.dumps(message).encode(), "application/json", **headers
    )
    return status, json.loads(body) if body else None


def _login(port: int) -> dict[str, Any]:
    status, answer = _json(
        port,
        "/okey.v1.LobbyService/LoginGuest",
        {"requestId": str(uuid.uuid4()), "deviceId": f"edge-{uuid.uuid4()}", "displayName": "Ayşe"},
    )
    assert status == 200, answer
    return answer


def _bearer(login: dict[str, Any]) -> str:
    return f"Bearer {login['tokens']['accessToken']}"


def _connect_stream(
    port: int, path: str, message: dict[str, Any], login: dict[str, Any]
) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    """A server stream opened as a browser opens it: Connect, JSON, HTTP/1.1 (the connection,
    to close, and its response, to read the enveloped messages from)."""
    request = json.dumps(message).encode()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    connection._http_vsn_str = "HTTP/1.1"
    connection.request(
        "POST",
        path,
        body=struct.pack(">BI", 0, len(request)) + request,
        headers={
            "Content-Type": "application/connect+json",
            "Connect-Protocol-Version": "1",
            "Authorization": _bearer(login),
        },
    )
    return connection, connection.getresponse()


def test_every_rpc_is_public_or_internal_and_service_only_ones_are_internal() -> None:
    described = all_methods()
    assert set(described) == set(INTERNAL)
    for service, methods in described.items():
        public = set(PUBLIC.get(service, ()))
        native = set(NATIVE_ONLY.get(service, ()))
        internal = set(INTERNAL[service])
        assert not public & internal and not native & (public | internal), service
        assert public | native | internal == set(methods), (
            f"{service}: unlisted {set(methods) - public - native - internal}"
        )
    # A method only the backend may call (a service token alone) is never public.
    from okey101.bot.service import ACCESS as BOT
    from okey101.lobby.service import ACCESS as LOBBY
    from okey101.rules.service import ACCESS as RULES
    from okey101.scoring.service import ACCESS as SCORING
    from okey101.table.service import ACCESS as TABLE

    policies: list[AccessPolicy] = [BOT, LOBBY, RULES, SCORING, TABLE]
    for policy in policies:
        for method, accepts in policy.methods.items():
            service, _, name = method.strip("/").partition("/")
            if accepts == {"service"} and service in PUBLIC:
                assert name not in PUBLIC[service], method


def test_connect_json_login_and_an_authorised_call(edge: tuple[LocalStack, int]) -> None:
    _stack, port = edge
    login = _login(port)
    assert login["player"]["displayName"] == "Ayşe"
    player_id = login["player"]["playerId"]
    status, answer = _json(
        port,
        "/okey.v1.LobbyService/GetPlayer",
        {"playerId": player_id},
        Authorization=_bearer(login),
    )
    assert status == 200, answer
    assert answer["player"]["playerId"] == player_id


def test_the_connect_prefix_serves_the_same_rpcs(edge: tuple[LocalStack, int]) -> None:
    _stack, port = edge
    status, answer = _json(port, "/connect/okey.v1.LobbyService/GetJwks", {})
    assert status == 200, answer
    assert answer["keys"]
    status, _answer = _json(port, "/connect/okey.v1.BotService/NextStep", {})
    assert status == 404


def test_connect_binary(edge: tuple[LocalStack, int]) -> None:
    _stack, port = edge
    request = lobby_pb2.LoginGuestRequest(
        request_id=str(uuid.uuid4()), device_id=f"edge-{uuid.uuid4()}", display_name="Mehmet"
    )
    status, headers, body = post(
        port, "/okey.v1.LobbyService/LoginGuest", request.SerializeToString(), "application/proto"
    )
    assert status == 200
    assert headers["content-type"] == "application/proto"
    answer = lobby_pb2.LoginGuestResponse.FromString(body)
    assert answer.player.display_name == "Mehmet"
    assert answer.tokens.access_token


def test_grpc_web(edge: tuple[LocalStack, int]) -> None:
    _stack, port = edge
    request = lobby_pb2.LoginGuestRequest(
        request_id=str(uuid.uuid4()), device_id=f"edge-{uuid.uuid4()}", display_name="Zeynep"
    )
    payload = request.SerializeToString()
    framed = struct.pack(">BI", 0, len(payload)) + payload
    status, _headers, body = post(
        port,
        "/okey.v1.LobbyService/LoginGuest",
        framed,
        "application/grpc-web+proto",
        X_Grpc_Web="1",
    )
    assert status == 200
    messages, trailers = grpc_web_frames(body)
    assert trailers["grpc-status"] == "0"
    assert lobby_pb2.LoginGuestResponse.FromString(messages[0]).player.display_name == "Zeynep"


def test_grpc_web_error_carries_the_status_details(edge: tuple[LocalStack, int]) -> None:
    _stack, port = edge
    payload = lobby_pb2.GetPlayerRequest(player_id="nobody").SerializeToString()
    status, headers, body = post(
        port,
        "/okey.v1.LobbyService/GetPlayer",
        struct.pack(">BI", 0, len(payload)) + payload,
        "application/grpc-web+proto",
    )
    assert status == 200
    _messages, trailers = grpc_web_frames(body)
    found = {**headers, **trailers}
    assert found["grpc-status"] == "16"  # UNAUTHENTICATED: no token
    from google.rpc import status_pb2

    raw = found["grpc-status-details-bin"]
    details = status_pb2.Status.FromString(base64.b64decode(raw + "=" * (-len(raw) % 4)))
    info = error_details_pb2.ErrorInfo()
    assert details.details[0].Unpack(info)
    assert info.reason == "TOKEN_MISSING"


def test_connect_error_details_decode(edge: tuple[LocalStack, int]) -> None:
    _stack, port = edge
    status, answer = _json(
        port, "/okey.v1.LobbyService/LoginGuest", {"deviceId": "x"}, Accept_Language="tr"
    )
    assert status == 400
    assert answer["code"] == "invalid_argument"
    by_type = {detail["type"]: detail["value"] for detail in answer["details"]}
    raw = by_type["google.rpc.ErrorInfo"]
    info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(raw + "=" * (-len(raw) % 4)))
    assert info.reason == "FIELD_REQUIRED"
    assert info.domain == "okey101"
    raw = by_type["google.rpc.LocalizedMessage"]
    localized = error_details_pb2.LocalizedMessage.FromString(
        base64.b64decode(raw + "=" * (-len(raw) % 4))
    )
    assert localized.locale.startswith("tr")
    assert localized.message == answer["message"]


@pytest.mark.parametrize("protocol", ["CONNECT", "GRPC_WEB"])
def test_the_official_connect_client_gets_the_answer_and_the_error_details(
    edge: tuple[LocalStack, int], protocol: str
) -> None:
    """connectrpc's own client (Connect and gRPC-Web, google.protobuf messages): an answer, then
    an error whose code, sentence and ErrorInfo the client decodes."""
    from connectrpc.client import ConnectClientSync
    from connectrpc.code import Code
    from connectrpc.compat import google_protobuf_binary_codec
    from connectrpc.errors import ConnectError
    from connectrpc.protocol import ProtocolType

    from okey101.edge.forward import Forwarder

    _stack, port = edge
    methods = {
        path: endpoint.method for path, endpoint in Forwarder({}, None, None).endpoints().items()
    }
    with ConnectClientSync(
        f"http://127.0.0.1:{port}",
        codec=google_protobuf_binary_codec(),
        protocol=ProtocolType[protocol],
    ) as client:
        answer = client.execute_unary(
            request=lobby_pb2.LoginGuestRequest(
                request_id=str(uuid.uuid4()), device_id=f"edge-{uuid.uuid4()}", display_name="Can"
            ),
            method=methods["/okey.v1.LobbyService/LoginGuest"],
        )
        assert answer.player.display_name == "Can"
        with pytest.raises(ConnectError) as raised:
            client.execute_unary(
                request=lobby_pb2.GetPlayerRequest(player_id=answer.player.player_id),
                method=methods["/okey.v1.LobbyService/GetPlayer"],
                headers={"authorization": "Bearer not-a-token", "accept-language": "tr"},
            )
    error = raised.value
    assert error.code is Code.UNAUTHENTICATED
    by_type = {detail.type_name: detail.message_bytes for detail in error.details}
    info = error_details_pb2.ErrorInfo.FromString(by_type["google.rpc.ErrorInfo"])
    assert info.reason.startswith("TOKEN_")
    localized = error_details_pb2.LocalizedMessage.FromString(
        by_type["google.rpc.LocalizedMessage"]
    )
    assert localized.locale.startswith("tr") and localized.message == error.message


def test_a_server_stream_over_http_1_1(edge: tuple[LocalStack, int]) -> None:
    _stack, port = edge
    login = _login(port)
    status, hosted = _json(
        port,
        "/okey.v1.LobbyService/HostTable",
        {"requestId": str(uuid.uuid4()), "name": "edge", "hostSeat": 0},
        Authorization=_bearer(login),
    )
    assert status == 200, hosted
    table_id = hosted["table"]["tableId"]
    connection, answer = _connect_stream(
        port,
        "/okey.v1.TableService/WatchTable",
        {"tableId": table_id, "seat": 0, "startWithView": True},
        login,
    )
    try:
        assert answer.status == 200
        assert answer.version == 11
        assert answer.getheader("content-type") == "application/connect+json"
        flags, length = struct.unpack(">BI", answer.read(5))
        assert flags == 0
        first = json.loads(answer.read(length))
        assert first["view"]["tableId"] == table_id
        decoded = table_pb2.WatchTableResponse()
        from google.protobuf import json_format

        json_format.ParseDict(first, decoded)
        assert decoded.view.table_id == table_id
    finally:
        connection.close()


def test_a_players_own_stream_seats_them_through_the_edge(edge: tuple[LocalStack, int]) -> None:
    """WatchPlayer as a browser opens it (Connect, JSON, HTTP/1.1): the snapshot first, then
    QUICK_MATCH_SEATED when the matchmaker seats the player (bots fill at once here)."""
    _stack, port = edge
    login = _login(port)
    connection, answer = _connect_stream(
        port, "/okey.v1.LobbyService/WatchPlayer", {"startWithSnapshot": True}, login
    )
    try:
        assert answer.status == 200

        def message() -> Any:
            flags, length = struct.unpack(">BI", answer.read(5))
            assert flags == 0
            return json.loads(answer.read(length))

        assert "snapshot" in message()
        status, joined = _json(
            port,
            "/okey.v1.LobbyService/JoinQuickMatch",
            {"requestId": str(uuid.uuid4())},
            Authorization=_bearer(login),
        )
        assert status == 200, joined
        event = message()["event"]
        assert event["kind"] == "PLAYER_EVENT_KIND_QUICK_MATCH_SEATED"
        assert event["sequence"] == "1" and event["ticketId"] == joined["ticket"]["ticketId"]
        assert event["tableId"].startswith("t-")
    finally:
        connection.close()


def test_cors_preflight_allowed_and_refused(edge: tuple[LocalStack, int]) -> None:
    _stack, port = edge
    for origin in (ORIGIN_OK, "https://okey.example", f"http://127.0.0.1:{port}"):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request(
            "OPTIONS",
            "/okey.v1.LobbyService/LoginGuest",
            headers={
                "Origin": origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type, authorization",
            },
        )
        answer = connection.getresponse()
        answer.read()
        connection.close()
        assert answer.status == 204, origin
        assert answer.getheader("access-control-allow-origin") == origin
        allowed = answer.getheader("access-control-allow-headers", "").lower()
        assert {"content-type", "authorization", "connect-protocol-version"} <= set(
            re.split(r",\s*", allowed)
        )
        assert "grpc-status-details-bin" in answer.getheader("access-control-expose-headers", "")
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request(
        "OPTIONS",
        "/okey.v1.LobbyService/LoginGuest",
        headers={"Origin": ORIGIN_BAD, "Access-Control-Request-Method": "POST"},
    )
    answer = connection.getresponse()
    answer.read()
    connection.close()
    assert answer.status == 403
    assert answer.getheader("access-control-allow-origin") is None
    # The call itself from a refused origin is refused before it reaches the lobby.
    status, headers, _body = post(
        port,
        "/okey.v1.LobbyService/LoginGuest",
        b"{}",
        "application/json",
        Origin=ORIGIN_BAD,
    )
    assert status == 403
    assert "access-control-allow-origin" not in headers
    # An allowed origin's call is answered with the headers it may read exposed.
    status, headers, _body = post(
        port,
        "/okey.v1.LobbyService/LoginGuest",
        json.dumps(
            {"requestId": str(uuid.uuid4()), "deviceId": f"edge-{uuid.uuid4()}", "displayName": "A"}
        ).encode(),
        "application/json",
        Origin=ORIGIN_OK,
    )
    assert status == 200, _body
    assert headers["access-control-allow-origin"] == ORIGIN_OK


@pytest.mark.parametrize(
    "path",
    [
        "/okey.v1.ScoringService/RecordHand",
        "/okey.v1.TableService/CreateTable",
        "/okey.v1.BotService/NextStep",
        "/okey.v1.RulesService/ApplyAction",
        "/okey.v1.LobbyService/NoSuchMethod",
    ],
)
def test_an_internal_rpc_is_not_served(edge: tuple[LocalStack, int], path: str) -> None:
    _stack, port = edge
    login = _login(port) if path.endswith("RecordHand") else None
    extra = {"Authorization": _bearer(login)} if login else {}
    status, _headers, _body = post(port, path, b"{}", "application/json", **extra)
    assert status == 404


def test_a_bad_body_is_refused_with_invalid_argument(edge: tuple[LocalStack, int]) -> None:
    _stack, port = edge
    for body, content_type in (
        (b"{not json", "application/json"),
        (b"\xff\xff\xff", "application/proto"),
    ):
        status, headers, answer = post(port, "/okey.v1.LobbyService/LoginGuest", body, content_type)
        assert status == 400
        assert headers["content-type"] == "application/json"
        error = json.loads(answer)
        assert error["code"] == "invalid_argument"
        assert "LoginGuestRequest" in error["message"]
        raw = error["details"][0]["value"]
        info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(raw + "=" * (-len(raw) % 4)))
        assert info.reason == "MALFORMED_REQUEST"


def test_deadline_passes_through(edge: tuple[LocalStack, int]) -> None:
    _stack, port = edge
    status, answer = _json(
        port,
        "/okey.v1.LobbyService/LoginGuest",
        {"requestId": str(uuid.uuid4()), "deviceId": f"edge-{uuid.uuid4()}"},
        Connect_Timeout_Ms="0",
    )
    assert status == 504 or answer["code"] == "deadline_exceeded", answer


def test_health_metrics_and_static(edge: tuple[LocalStack, int]) -> None:
    stack, port = edge
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    for path, expected in (("/healthz", 200), ("/readyz", 200), ("/", 200)):
        connection.request("GET", path)
        answer = connection.getresponse()
        answer.read()
        assert answer.status == expected, path
    connection.close()
    _login(port)
    metrics = http.client.HTTPConnection("127.0.0.1", stack.ports["edge"][1], timeout=10)
    metrics.request("GET", "/metrics")
    text = metrics.getresponse().read().decode()
    metrics.close()
    assert re.search(
        r'grpc_server_handled_total\{grpc_code="OK",grpc_method="LoginGuest",'
        r'grpc_service="okey.v1.LobbyService",grpc_type="unary"\} [1-9]',
        text,
    ), text[:2000]


def test_a_drain_ends_open_streams_with_unavailable_and_exits_0(
    edge: tuple[LocalStack, int], tmp_path: Any
) -> None:
    """SIGTERM: /readyz turns 503 while calls are still answered, then an open WatchTable
    stream ends with unavailable (SERVER_SHUTTING_DOWN: reconnect), and the process exits 0."""
    import signal
    import subprocess
    import sys
    import time

    from okey101.stack import free_ports, wait_http

    stack, shared_port = edge
    login = _login(shared_port)
    _status, hosted = _json(
        shared_port,
        "/okey.v1.LobbyService/HostTable",
        {"requestId": str(uuid.uuid4()), "name": "drain", "hostSeat": 0},
        Authorization=_bearer(login),
    )
    table_id = hosted["table"]["tableId"]
    port, metrics_port = free_ports(2)
    env = {**stack.env, "OKEY_DRAIN_SECONDS": "1.5", "OKEY_LOG_LEVEL": "info"}
    command = [sys.executable, "-m", "okey101.cli", "serve", "edge"]
    command += ["--port", str(port), "--metrics-port", str(metrics_port)]
    with open(tmp_path / "edge.log", "wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_http(f"http://127.0.0.1:{port}/readyz", timeout=60, process=process)
        logged_id = str(uuid.uuid4())
        status, _answer = _json(
            port,
            "/okey.v1.LobbyService/LoginGuest",
            {"requestId": logged_id, "deviceId": f"edge-{uuid.uuid4()}", "displayName": "Log"},
        )
        assert status == 200
        request = json.dumps({"tableId": table_id, "seat": 0, "startWithView": True}).encode()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        connection.request(
            "POST",
            "/okey.v1.TableService/WatchTable",
            body=struct.pack(">BI", 0, len(request)) + request,
            headers={
                "Content-Type": "application/connect+json",
                "Authorization": _bearer(login),
                "Accept-Language": "tr",
            },
        )
        answer = connection.getresponse()
        flags, length = struct.unpack(">BI", answer.read(5))
        assert flags == 0 and json.loads(answer.read(length))["view"]["tableId"] == table_id
        process.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        probe = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        probe.request("GET", "/readyz")
        assert probe.getresponse().status == 503
        probe.close()
        status, _answer = _json(port, "/okey.v1.LobbyService/GetJwks", {})
        assert status == 200, "calls are still answered while draining"
        while True:  # events may come first; the stream's end carries the error
            flags, length = struct.unpack(">BI", answer.read(5))
            body = json.loads(answer.read(length))
            if flags & 0x02:
                break
        connection.close()
        assert body["error"]["code"] == "unavailable"
        raw = body["error"]["details"][0]["value"]
        info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(raw + "=" * (-len(raw) % 4)))
        assert info.reason == "SERVER_SHUTTING_DOWN"
        assert process.wait(timeout=30) == 0
        # One structured line a call, with the request's id, never a token.
        lines = [json.loads(line) for line in (tmp_path / "edge.log").read_text().splitlines()]
        (login_line,) = [line for line in lines if line.get("request_id") == logged_id]
        assert login_line["event"] == "rpc" and login_line["code"] == "OK"
        assert login_line["method"] == "/okey.v1.LobbyService/LoginGuest"
        assert "eyJ" not in (tmp_path / "edge.log").read_text()
        assert any(line["event"] == "stopped" for line in lines)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize(
    ("fields", "path", "value"),
    [
        (
            {"visibility": "TABLE_VISIBILITY_PRIVATE_TYPO"},
            "visibility",
            "TABLE_VISIBILITY_PRIVATE_TYPO",
        ),
        ({"rules": {"preset": "RULE_PRESET_EVIL"}}, "rules.preset", "RULE_PRESET_EVIL"),
        ({"bots": [{"seat": 1, "level": "BOT_LEVEL_GOD"}]}, "bots.level", "BOT_LEVEL_GOD"),
        ({"visibility": 9}, "visibility", "9"),
    ],
)
def test_an_unknown_enum_name_is_refused_not_read_as_the_default(
    edge: tuple[LocalStack, int], fields: dict[str, Any], path: str, value: str
) -> None:
    """HostTable through the edge with an enum value its enum lacks: INVALID_ARGUMENT BAD_FIELD
    naming the field, not a public table or the oyna preset."""
    _stack, port = edge
    login = _login(port)
    request = {"requestId": str(uuid.uuid4()), "name": "typo", "hostSeat": 0, **fields}
    status, answer = _json(
        port, "/okey.v1.LobbyService/HostTable", request, Authorization=_bearer(login)
    )
    assert status == 400, answer
    assert answer["code"] == "invalid_argument"
    raw = {detail["type"]: detail["value"] for detail in answer["details"]}["google.rpc.ErrorInfo"]
    info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(raw + "=" * (-len(raw) % 4)))
    assert info.reason == "BAD_FIELD"
    assert dict(info.metadata) == {"field": path, "value": value}


def test_an_unknown_enum_number_is_refused_alike_over_grpc_and_the_edge(
    edge: tuple[LocalStack, int],
) -> None:
    """The same number, binary over the edge and over gRPC to the lobby: the same refusal."""
    import grpc
    from google.rpc import status_pb2
    from okey.v1 import lobby_pb2_grpc

    stack, port = edge
    login = _login(port)
    request = lobby_pb2.HostTableRequest(request_id=str(uuid.uuid4()), name="typo", host_seat=0)
    request.visibility = 7  # type: ignore[assignment]  # an open enum: any number goes on the wire
    status, _headers, body = post(
        port,
        "/okey.v1.LobbyService/HostTable",
        request.SerializeToString(),
        "application/proto",
        Authorization=_bearer(login),
    )
    assert status == 400
    raw = json.loads(body)["details"][0]["value"]
    over_edge = error_details_pb2.ErrorInfo.FromString(
        base64.b64decode(raw + "=" * (-len(raw) % 4))
    )
    with grpc.insecure_channel(stack.address("lobby")) as channel:
        stub = lobby_pb2_grpc.LobbyServiceStub(channel)
        with pytest.raises(grpc.RpcError) as raised:
            stub.HostTable(request, metadata=(("authorization", _bearer(login)),), timeout=10)
    error: Any = raised.value
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    (trailer,) = [v for k, v in error.trailing_metadata() if k == "grpc-status-details-bin"]
    over_grpc = error_details_pb2.ErrorInfo()
    assert status_pb2.Status.FromString(trailer).details[0].Unpack(over_grpc)
    assert over_edge.reason == over_grpc.reason == "BAD_FIELD"
    assert over_edge.metadata["field"] == over_grpc.metadata["field"] == "visibility"
    assert over_edge.metadata["value"] == over_grpc.metadata["value"] == "7"


def test_a_seasonal_leaderboard_and_around_me_through_the_edge(
    edge: tuple[LocalStack, int],
) -> None:
    """GetLeaderboard's season, season_time and around_player_id come through Connect JSON: a
    month's board names its window, and a player with no line on the week's board is NOT_FOUND
    PLAYER_NOT_RANKED."""
    _stack, port = edge
    login = _login(port)
    path = "/okey.v1.ScoringService/GetLeaderboard"
    status, answer = _json(
        port,
        path,
        {"season": "LEADERBOARD_SEASON_MONTH", "seasonTime": "2025-02-10T12:00:00Z"},
        Authorization=_bearer(login),
    )
    assert status == 200, answer
    assert answer["seasonStart"] == "2025-02-01T00:00:00Z"
    assert answer["seasonEnd"] == "2025-03-01T00:00:00Z"
    status, answer = _json(
        port,
        path,
        {"season": "LEADERBOARD_SEASON_WEEK", "aroundPlayerId": login["player"]["playerId"]},
        Authorization=_bearer(login),
    )
    assert status == 404, answer
    assert answer["code"] == "not_found"
    raw = {detail["type"]: detail["value"] for detail in answer["details"]}["google.rpc.ErrorInfo"]
    info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(raw + "=" * (-len(raw) % 4)))
    assert info.reason == "PLAYER_NOT_RANKED"
