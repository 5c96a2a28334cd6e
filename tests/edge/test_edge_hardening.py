"""The edge against a hostile client (issue #32): unknown enum values, NUL bytes in paths, gRPC
over HTTP/1.1, look-alike origins, forged X-Forwarded-For, half-sent requests and too many
connections. One ``okey101 serve edge`` process with short bounds, in front of a recording
RulesService on 127.0.0.1 port 0 (what reached "the service" is what it recorded)."""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import socket
import struct
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from okey.v1 import common_pb2, lobby_pb2, rules_pb2

from okey101.edge import enums
from okey101.edge.app import EdgeApp, Origins
from okey101.platform.addresses import TrustedProxies
from okey101.platform.config import ConfigError
from okey101.stack import LocalStack, Service, start_edge

from support.http_calls import grpc_web_frames, post

pytestmark = pytest.mark.slow

RESOLVE = "/okey.v1.RulesService/ResolveRuleSet"
HEADER_SECONDS = 1.0
BODY_SECONDS = 1.5
MAX_CONNECTIONS = 6


@dataclass
class Recorder:
    """A RulesService whose ResolveRuleSet echoes the rules and keeps each call's metadata."""

    calls: list[tuple[rules_pb2.ResolveRuleSetRequest, dict[str, str]]] = field(
        default_factory=list
    )
    lock: threading.Lock = field(default_factory=threading.Lock)

    def resolve(
        self, request: rules_pb2.ResolveRuleSetRequest, context: grpc.ServicerContext
    ) -> rules_pb2.ResolveRuleSetResponse:
        with self.lock:
            self.calls.append(
                (request, {key: str(value) for key, value in context.invocation_metadata()})
            )
        return rules_pb2.ResolveRuleSetResponse(rules=request.rules)

    def taken(self) -> list[tuple[rules_pb2.ResolveRuleSetRequest, dict[str, str]]]:
        with self.lock:
            calls, self.calls = self.calls, []
        return calls


@dataclass
class Edge:
    port: int
    metrics_port: int
    service: Service
    recorder: Recorder

    def errors_logged(self) -> list[str]:
        """Lines of the edge's log at error level, or with a traceback."""
        found = []
        for line in self.service.log.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                record = {}
            level = str(record.get("level", "")).lower()
            if level in ("error", "critical") or "Traceback" in line:
                found.append(line)
        return found


@pytest.fixture(scope="module")
def edge() -> Iterator[Edge]:
    recorder = Recorder()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    handler = grpc.method_handlers_generic_handler(
        "okey.v1.RulesService",
        {
            "ResolveRuleSet": grpc.unary_unary_rpc_method_handler(
                recorder.resolve,
                request_deserializer=rules_pb2.ResolveRuleSetRequest.FromString,
                response_serializer=rules_pb2.ResolveRuleSetResponse.SerializeToString,
            )
        },
    )
    server.add_generic_rpc_handlers((handler,))
    rules_port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    with tempfile.TemporaryDirectory(prefix="okey101-edge-") as directory:
        var_dir = Path(directory)
        web = var_dir / "web"
        web.mkdir()
        (web / "index.html").write_text("<!doctype html><title>okey</title>\n")
        env = {
            **os.environ,
            "OKEY_LOG_FORMAT": "json",
            "OKEY_LOG_LEVEL": "info",
            "OKEY_RULES_ADDRESS": f"127.0.0.1:{rules_port}",
            "OKEY_TRUSTED_PROXIES": "",
            "OKEY_EDGE_CORS_ORIGINS": "https://okey.example",
            "OKEY_EDGE_WEB_DIR": str(web),
            "OKEY_EDGE_HTTP_HEADER_TIMEOUT_SECONDS": str(HEADER_SECONDS),
            "OKEY_EDGE_HTTP_BODY_TIMEOUT_SECONDS": str(BODY_SECONDS),
            "OKEY_EDGE_HTTP_KEEP_ALIVE_SECONDS": "30",
            "OKEY_EDGE_HTTP_MAX_CONNECTIONS": str(MAX_CONNECTIONS),
        }
        stack = LocalStack(var_dir, {}, env)
        try:
            service = start_edge(stack)
            yield Edge(service.port, service.metrics_port, service, recorder)
        finally:
            if "edge" in stack.services:
                stack.stop("edge")
            server.stop(grace=None)


def _unb64(raw: str) -> bytes:
    return base64.b64decode(raw + "=" * (-len(raw) % 4))


def _error_info(details: list[Any]) -> error_details_pb2.ErrorInfo:
    by_type = {detail["type"]: detail["value"] for detail in details}
    return error_details_pb2.ErrorInfo.FromString(_unb64(by_type["google.rpc.ErrorInfo"]))


def _grpc_web(message: bytes) -> bytes:
    return struct.pack(">BI", 0, len(message)) + message


def _preset_number(number: int) -> bytes:
    """ResolveRuleSetRequest{rules{preset: number}} in binary (an open enum keeps any number)."""
    request = rules_pb2.ResolveRuleSetRequest(rules=common_pb2.RuleSet())
    request.rules.preset = number
    return request.SerializeToString()


@pytest.mark.parametrize(
    ("body", "content_type", "value"),
    [
        (b'{"rules": {"preset": "RULE_PRESET_EVIL"}}', "application/json", "RULE_PRESET_EVIL"),
        (b'{"rules": {"preset": 77}}', "application/json", "77"),
        (b'{"rules": {"preset": "77"}}', "application/json", "77"),
        (_preset_number(77), "application/proto", "77"),
    ],
    ids=["json-name", "json-number", "json-number-string", "binary-number"],
)
def test_an_unknown_enum_value_is_refused_at_the_edge(
    edge: Edge, body: bytes, content_type: str, value: str
) -> None:
    edge.recorder.taken()
    status, _headers, answer = post(edge.port, RESOLVE, body, content_type, Accept_Language="tr")
    assert status == 400, answer
    error = json.loads(answer)
    assert error["code"] == "invalid_argument"
    info = _error_info(error["details"])
    assert info.reason == "BAD_FIELD"
    assert dict(info.metadata) == {"field": "rules.preset", "value": value}
    assert "alanı" in error["message"]  # the Turkish sentence, as asked
    assert edge.recorder.taken() == []  # nothing reached the service


@pytest.mark.parametrize("codec", ["proto", "json"])
def test_an_unknown_enum_value_is_refused_over_grpc_web(edge: Edge, codec: str) -> None:
    edge.recorder.taken()
    json_body = b'{"rules": {"preset": "RULE_PRESET_99"}}'
    message = _preset_number(99) if codec == "proto" else json_body
    status, headers, body = post(
        edge.port, RESOLVE, _grpc_web(message), f"application/grpc-web+{codec}", X_Grpc_Web="1"
    )
    assert status == 200
    found = {**headers, **grpc_web_frames(body)[1]}
    assert found["grpc-status"] == "3"  # INVALID_ARGUMENT
    from google.rpc import status_pb2

    details = status_pb2.Status.FromString(_unb64(found["grpc-status-details-bin"]))
    info = error_details_pb2.ErrorInfo()
    assert details.details[0].Unpack(info)
    assert info.reason == "BAD_FIELD" and info.metadata["field"] == "rules.preset"
    assert edge.recorder.taken() == []


def test_known_enum_names_and_unknown_fields_still_pass(edge: Edge) -> None:
    edge.recorder.taken()
    body = json.dumps(
        {"rules": {"preset": "RULE_PRESET_BOOMBALA"}, "aFieldOfANewerClient": "TYPO"}
    ).encode()
    status, _headers, answer = post(edge.port, RESOLVE, body, "application/json")
    assert status == 200, answer
    ((request, _metadata),) = edge.recorder.taken()
    assert request.rules.preset == common_pb2.RULE_PRESET_BOOMBALA


def _host_table(**fields: Any) -> Message:
    return lobby_pb2.HostTableRequest(**fields)


def test_the_enum_check_covers_nested_repeated_and_map_fields() -> None:
    described = lobby_pb2.HostTableRequest.DESCRIPTOR
    bots = {"bots": [{"seat": 1, "level": "BOT_LEVEL_HARD"}, {"level": "BOT_LEVEL_GOD"}]}
    assert enums.unknown_name(bots, described) == ("bots.level", "BOT_LEVEL_GOD")
    assert enums.unknown_name({"visibility": "TABLE_VISIBILITY_PRIVATE"}, described) is None
    seats = [lobby_pb2.BotSeat(level=common_pb2.BOT_LEVEL_EASY), lobby_pb2.BotSeat(level=42)]
    assert enums.unknown_number(_host_table(bots=seats)) == ("bots.level", "42")
    assert enums.unknown_number(_host_table(visibility=common_pb2.TABLE_VISIBILITY_PRIVATE)) is None


# -- 3. A NUL in a static path ---------------------------------------------------------------


def test_a_nul_in_a_static_path_is_a_400_and_no_error(edge: Edge) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", edge.port, timeout=10)
    try:
        for path in ("/a%00b", "/index.html%00.js", "/assets/%00"):
            connection.request("GET", path)
            answer = connection.getresponse()
            answer.read()
            assert answer.status == 400, path
        connection.request("GET", "/" + "a" * 400)  # a name too long for the OS: not a file
        answer = connection.getresponse()
        assert answer.status == 200 and b"<title>okey" in answer.read()
    finally:
        connection.close()
    time.sleep(0.2)
    assert edge.errors_logged() == []


# -- 4. gRPC over HTTP/1.1 -------------------------------------------------------------------


@pytest.mark.parametrize("content_type", ["application/grpc", "application/grpc+proto"])
def test_grpc_over_http_1_1_is_a_415_that_says_where_grpc_goes(
    edge: Edge, content_type: str
) -> None:
    edge.recorder.taken()
    status, _headers, body = post(
        edge.port, RESOLVE, _grpc_web(_preset_number(1)), content_type, TE="trailers"
    )
    assert status == 415
    assert b"services directly or through the ingress" in body
    assert edge.recorder.taken() == []
    time.sleep(0.2)
    assert edge.errors_logged() == []


# -- 5. CORS compares whole origins ----------------------------------------------------------


def _preflight(port: int, origin: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(
            "OPTIONS", RESOLVE, headers={"Origin": origin, "Access-Control-Request-Method": "POST"}
        )
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost:5173.evil.example",
        "http://evil.example@localhost:5173",
        "http://localhost:5173/evil",
        "https://okey.example.evil.example",
        "https://okey.example@evil.example",
        "https://okey.example/evil",
        "http://okey.example",
        "https://okey.example:8443",
        "ftp://localhost:5173",
        "null",
    ],
)
def test_a_look_alike_origin_is_refused(edge: Edge, origin: str) -> None:
    assert _preflight(edge.port, origin) == 403
    status, headers, _body = post(edge.port, RESOLVE, b"{}", "application/json", Origin=origin)
    assert status == 403 and "access-control-allow-origin" not in headers


@pytest.mark.parametrize(
    "origin",
    [
        "https://okey.example",
        "https://okey.example:443",
        "http://localhost:5173",
        "http://[::1]:3000",
    ],
)
def test_an_allowed_origin_is_allowed(edge: Edge, origin: str) -> None:
    assert _preflight(edge.port, origin) == 204


def test_a_configured_origin_that_is_not_one_stops_the_edge_from_starting() -> None:
    with pytest.raises(ConfigError, match=r"okey\.example/app"):
        Origins(["https://okey.example/app"], local_mode=False)
    assert not Origins(["https://okey.example"], local_mode=False).allows("http://localhost:1")


# -- 6. The client's address -----------------------------------------------------------------


def test_the_service_is_told_the_peer_not_a_forged_forwarded_for(edge: Edge) -> None:
    edge.recorder.taken()
    for forged in ({"X_Forwarded_For": "203.0.113.9"}, {}):
        status, _headers, answer = post(edge.port, RESOLVE, b"{}", "application/json", **forged)
        assert status == 200, answer
    calls = edge.recorder.taken()
    assert [metadata.get("x-forwarded-for") for _request, metadata in calls] == [
        "127.0.0.1",
        "127.0.0.1",
    ]


def test_a_trusted_proxy_s_forwarded_for_is_believed() -> None:
    app = EdgeApp(
        {}, Origins((), local_mode=True), None, lambda: True, TrustedProxies.parse("10.0.0.0/8")
    )
    scope = {
        "client": ("10.1.2.3", 5000),
        "headers": [(b"x-forwarded-for", b"198.51.100.7, 10.9.9.9"), (b"accept", b"*/*")],
    }
    headers = app._client_forwarded_for(scope)
    assert headers == [(b"accept", b"*/*"), (b"x-forwarded-for", b"198.51.100.7")]
    scope["client"] = ("192.0.2.1", 5000)  # not a proxy we trust: its header is ignored
    assert app._client_forwarded_for(scope)[-1] == (b"x-forwarded-for", b"192.0.2.1")


# -- 7. Bounds on connections ----------------------------------------------------------------


def _closed_after(sock: socket.socket, limit: float) -> tuple[float, bytes]:
    """Seconds until the edge closed ``sock`` (at most ``limit``), and what it sent."""
    began = time.monotonic()
    sock.settimeout(limit)
    received = b""
    while True:
        chunk = sock.recv(4096)
        if not chunk:
            return time.monotonic() - began, received
        received += chunk


def test_a_half_sent_request_is_closed_after_the_header_timeout(edge: Edge) -> None:
    with (
        socket.create_connection(("127.0.0.1", edge.port)) as half,
        socket.create_connection(("127.0.0.1", edge.port)) as silent,
    ):
        half.sendall(b"POST " + RESOLVE.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Ty")
        elapsed, sent = _closed_after(half, 10 * HEADER_SECONDS)
        assert HEADER_SECONDS * 0.8 <= elapsed < HEADER_SECONDS + 3, elapsed
        assert sent.startswith(b"HTTP/1.1 408")
        elapsed, sent = _closed_after(silent, 10 * HEADER_SECONDS)  # connected, never a byte
        assert elapsed < HEADER_SECONDS + 3 and sent.startswith(b"HTTP/1.1 408")


def test_a_half_sent_body_is_closed_after_the_body_timeout(edge: Edge) -> None:
    edge.recorder.taken()
    with socket.create_connection(("127.0.0.1", edge.port)) as half:
        half.sendall(
            b"POST " + RESOLVE.encode() + b" HTTP/1.1\r\nHost: x\r\n"
            b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"rules"'
        )
        began = time.monotonic()
        elapsed, _sent = _closed_after(half, 10 * BODY_SECONDS)
        assert elapsed < BODY_SECONDS + 3, elapsed
        assert time.monotonic() - began >= BODY_SECONDS * 0.8
    assert edge.recorder.taken() == []
    time.sleep(0.2)
    assert edge.errors_logged() == []


def _held(port: int) -> socket.socket:
    """A connection that has been answered once (so the edge counts it) and is kept alive."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    answer = sock.recv(4096)
    if not answer.startswith(b"HTTP/1.1 200"):
        sock.close()
        raise ConnectionError(answer[:40].decode(errors="replace"))
    return sock


def test_a_connection_past_the_limit_is_refused(edge: Edge) -> None:
    held: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 10
        while len(held) < MAX_CONNECTIONS:
            try:
                held.append(_held(edge.port))
            except ConnectionError:  # earlier tests' connections may not be gone yet
                assert time.monotonic() < deadline, "the edge stayed at its limit"
                time.sleep(0.2)
        with socket.create_connection(("127.0.0.1", edge.port), timeout=10) as extra:
            _elapsed, sent = _closed_after(extra, 5)
        assert sent.startswith(b"HTTP/1.1 503"), sent
        held.pop().close()
        time.sleep(0.3)
        held.append(_held(edge.port))  # a place freed is a place taken
    finally:
        for sock in held:
            sock.close()
    metrics = http.client.HTTPConnection("127.0.0.1", edge.metrics_port, timeout=10)
    metrics.request("GET", "/metrics")
    text = metrics.getresponse().read().decode()
    metrics.close()
    refused = re.search(r'okey_edge_connections_closed_total\{reason="limit"\} ([0-9.]+)', text)
    assert refused is not None and float(refused.group(1)) >= 1
