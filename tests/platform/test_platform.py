"""The service platform over real gRPC: servers on 127.0.0.1 port 0, real stubs, no mocks.

Our own protos are not needed: a probe service is registered with grpc's generic handlers (raw
bytes, or a message type built here from a descriptor), beside the standard health and
reflection services the platform adds.
"""

from __future__ import annotations

import asyncio
import gc
import io
import json
import os
import signal
import string
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import prometheus_client
import pytest
import structlog
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from okey101.engine.errors import InvalidInput, RuleViolation
from okey101.platform import collector
from okey101.platform import sentences as platform_sentences
from okey101.platform.auth import (
    AccessPolicy,
    JwksVerifier,
    SigningKey,
    TokenIssuer,
    current_claims,
    dev_signing_key,
    jwks_of,
    verifier_for,
)
from okey101.platform.config import ConfigError, load_settings, settings_for_tests
from okey101.platform.errors import (
    DOMAIN,
    NotFound,
    Unauthenticated,
    parse_accept_language,
    rich_status,
    status_code_of,
)
from okey101.platform.interceptors import Drain, ObservabilityInterceptor
from okey101.platform.logs import configure_logging, ids_of
from okey101.platform.metrics import GC_WARNING_SECONDS, GarbageCollectorWatch
from okey101.platform.server import ServerHandle

ROOT = Path(__file__).resolve().parents[2]
SERVICE = "okey.test.Probe"


# --------------------------------------------------------------------------------------------
# A probe service


def _probe_request_class() -> Any:
    """A protobuf message with ids and a rack, built from a descriptor (no generated code)."""
    file = descriptor_pb2.FileDescriptorProto(name="okey_test_probe.proto", package="okey.test")
    message = file.message_type.add(name="ProbeRequest")
    string_type = descriptor_pb2.FieldDescriptorProto.TYPE_STRING
    for number, name in enumerate(("request_id", "table_id", "hand_id", "rack"), start=1):
        message.field.add(name=name, number=number, type=string_type, label=1)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("okey.test.ProbeRequest"))


ProbeRequest = _probe_request_class()


async def _echo(request: bytes, context: Any) -> bytes:
    claims = current_claims()
    assert claims is not None
    return f"{claims.kind}:{claims.subject}".encode()


async def _open(request: bytes, context: Any) -> bytes:
    return request


async def _fail(request: bytes, context: Any) -> bytes:
    if request == b"turn":
        raise RuleViolation("NOT_YOUR_TURN", seat=1, turn=2)
    if request == b"tile":
        raise InvalidInput("UNKNOWN_TILE", tile="Z9")
    if request == b"table":
        raise NotFound("TABLE_NOT_FOUND", table_id="t-9")
    raise RuntimeError("secret-internal-detail")


async def _slow(request: bytes, context: Any) -> bytes:
    await asyncio.sleep(float(request.decode() or "1"))
    return b"done"


async def _ticks(request: bytes, context: Any) -> Any:
    number = 0
    while True:
        yield str(number).encode()
        number += 1
        await asyncio.sleep(0.05)


async def _whoami(request: bytes, context: Any) -> Any:
    for _ in range(3):
        claims = current_claims()
        yield (claims.subject if claims else "nobody").encode()
        await asyncio.sleep(0.01)


async def _act(request: Any, context: Any) -> bytes:
    structlog.get_logger().info("handler line")
    return b"acted"


def _register(server: grpc.aio.Server) -> list[str]:
    unary = grpc.unary_unary_rpc_method_handler
    handlers = {
        "Echo": unary(_echo),
        "Internal": unary(_echo),
        "Open": unary(_open),
        "Fail": unary(_fail),
        "Slow": unary(_slow),
        "Ticks": grpc.unary_stream_rpc_method_handler(_ticks),
        "Whoami": grpc.unary_stream_rpc_method_handler(_whoami),
        "Act": unary(_act, request_deserializer=ProbeRequest.FromString),
        "Undeclared": unary(_open),
    }
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(SERVICE, handlers)])
    return [SERVICE]


ACCESS = AccessPolicy(
    {
        f"/{SERVICE}/Echo": ["player"],
        f"/{SERVICE}/Internal": ["service"],
        f"/{SERVICE}/Open": ["none"],
        f"/{SERVICE}/Fail": ["none"],
        f"/{SERVICE}/Slow": ["none"],
        f"/{SERVICE}/Ticks": ["none"],
        f"/{SERVICE}/Whoami": ["player"],
        f"/{SERVICE}/Act": ["player", "service"],
    }
)
KEY = SigningKey.generate()
ISSUER = TokenIssuer(KEY)
VERIFIER = JwksVerifier(jwks_of(KEY))


# --------------------------------------------------------------------------------------------
# Helpers


@pytest.fixture(autouse=True, scope="module")
def _logging() -> None:
    configure_logging("json", "info", force=True)  # whatever an earlier module set


def arun(coroutine: Coroutine[Any, Any, None]) -> None:
    asyncio.run(asyncio.wait_for(coroutine, timeout=20))


Scenario = Callable[[ServerHandle, grpc.aio.Channel], Awaitable[None]]


def with_server(
    scenario: Scenario, tmp_path: Path, *, routine: frozenset[str] = frozenset(), **changes: Any
) -> None:
    async def main() -> None:
        settings = settings_for_tests("probe", var_dir=tmp_path, **changes)
        handle = await ServerHandle.start(
            "probe", _register, settings, access=ACCESS, verifier=VERIFIER, routine=routine
        )
        try:
            async with grpc.aio.insecure_channel(handle.target) as channel:
                await scenario(handle, channel)
        finally:
            await handle.stop(grace=0)

    arun(main())


def call(channel: grpc.aio.Channel, method: str) -> grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]:
    return channel.unary_unary(f"/{SERVICE}/{method}")


def bearer(token: str, *extra: tuple[str, str]) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"), *extra)


async def rejected(awaitable: Awaitable[Any]) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await awaitable
    return caught.value


def details_of(error: grpc.aio.AioRpcError) -> tuple[Any, Any]:
    """The ErrorInfo and LocalizedMessage of an error (each must be there exactly once)."""
    raw = [v for k, v in error.trailing_metadata() or () if k == "grpc-status-details-bin"]
    assert len(raw) == 1
    status = status_pb2.Status.FromString(raw[0])
    assert status.code == error.code().value[0]
    assert status.message == error.details()
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
    assert infos[0].domain == DOMAIN
    return infos[0], messages[0]


async def health_of(channel: grpc.aio.Channel, service: str = "") -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    response = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=2)
    return int(response.status)


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def labels(method: str, **extra: str) -> tuple[tuple[str, str], ...]:
    base = {"grpc_type": "unary", "grpc_service": SERVICE, "grpc_method": method, **extra}
    return tuple(sorted(base.items()))


# --------------------------------------------------------------------------------------------
# Serving: health, reflection, metrics, logs


def test_health_reports_serving_for_the_server_and_each_service(tmp_path: Path) -> None:
    async def scenario(handle: ServerHandle, channel: grpc.aio.Channel) -> None:
        assert handle.port > 0 and handle.metrics_port > 0
        assert await health_of(channel) == health_pb2.HealthCheckResponse.SERVING
        assert await health_of(channel, SERVICE) == health_pb2.HealthCheckResponse.SERVING
        error = await rejected(health_of(channel, "okey.test.Nothing"))
        assert error.code() == grpc.StatusCode.NOT_FOUND

    with_server(scenario, tmp_path)


def test_reflection_lists_the_services(tmp_path: Path) -> None:
    async def scenario(handle: ServerHandle, channel: grpc.aio.Channel) -> None:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        names = set()
        async for response in stub.ServerReflectionInfo(iter([request]), timeout=2):
            names = {s.name for s in response.list_services_response.service}
        assert names == {
            SERVICE,
            "grpc.health.v1.Health",
            "grpc.reflection.v1alpha.ServerReflection",
            "grpc.reflection.v1.ServerReflection",
        }

    with_server(scenario, tmp_path)


def test_reflection_answers_a_v1_client_too(tmp_path: Path) -> None:
    """A client of ``grpc.reflection.v1`` only (the v1 path; its messages are v1alpha's field
    for field) lists the services and gets the descriptor of the v1 reflection service."""

    async def scenario(handle: ServerHandle, channel: grpc.aio.Channel) -> None:
        info = channel.stream_stream(
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )
        requests = [
            reflection_pb2.ServerReflectionRequest(list_services=""),
            reflection_pb2.ServerReflectionRequest(
                file_containing_symbol="grpc.reflection.v1.ServerReflection"
            ),
            reflection_pb2.ServerReflectionRequest(file_containing_symbol="okey.test.Nothing"),
        ]
        answers = [answer async for answer in info(iter(requests), timeout=5)]
        listed, described, unknown = answers
        names = {service.name for service in listed.list_services_response.service}
        assert {SERVICE, "grpc.reflection.v1.ServerReflection", "grpc.health.v1.Health"} <= names
        (raw,) = described.file_descriptor_response.file_descriptor_proto
        file = descriptor_pb2.FileDescriptorProto.FromString(raw)
        assert file.package == "grpc.reflection.v1"
        assert [method.input_type for method in file.service[0].method] == [
            ".grpc.reflection.v1.ServerReflectionRequest"
        ]
        assert unknown.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
        # Without a token: reflection is open, as health is.
        assert "grpc.reflection.v1.ServerReflection" in names

    with_server(scenario, tmp_path)


def test_metrics_count_calls_under_the_standard_names(tmp_path: Path) -> None:
    async def scenario(handle: ServerHandle, channel: grpc.aio.Channel) -> None:
        before = await asyncio.to_thread(scrape, handle.metrics_port)
        for _ in range(3):
            await call(channel, "Open")(b"x", timeout=2)
        await rejected(call(channel, "Fail")(b"turn", timeout=2))
        failed = labels("Fail", grpc_code="FAILED_PRECONDITION")
        # A call is counted as it ends, which may be a moment after its client has the status.
        deadline = asyncio.get_running_loop().time() + 5
        while True:
            after = await asyncio.to_thread(scrape, handle.metrics_port)
            counted = after.get(("grpc_server_handled_total", failed), 0.0)
            if counted > before.get(("grpc_server_handled_total", failed), 0.0):
                break
            assert asyncio.get_running_loop().time() < deadline, "the failed call never counted"
            await asyncio.sleep(0.05)

        def delta(name: str, key: tuple[tuple[str, str], ...]) -> float:
            return after.get((name, key), 0.0) - before.get((name, key), 0.0)

        assert delta("grpc_server_started_total", labels("Open")) == 3
        assert delta("grpc_server_handled_total", labels("Open", grpc_code="OK")) == 3
        assert delta("grpc_server_handling_seconds_count", labels("Open")) == 3
        assert delta("grpc_server_handled_total", failed) == 1
        assert not any(name.endswith("_created") for name, _ in after)

    with_server(scenario, tmp_path)


def test_an_event_loop_held_up_is_measured_and_logged(tmp_path: Path) -> None:
    """A handler (or anything) that blocks the loop shows in okey_event_loop_lag_seconds and,
    from half a second on, as a warning with its length: every call waited that long."""

    async def scenario(handle: ServerHandle, channel: grpc.aio.Channel) -> None:
        name = "okey_event_loop_lag_seconds_bucket"
        await asyncio.sleep(0.3)  # the watch has taken a few readings
        before = await asyncio.to_thread(scrape, handle.metrics_port)
        with structlog.testing.capture_logs() as lines:
            time.sleep(0.7)  # the loop is blocked: nothing else runs
            await asyncio.sleep(0.3)
        after = await asyncio.to_thread(scrape, handle.metrics_port)

        def delta(le: str) -> float:
            key = (("le", le),)
            return after.get((name, key), 0.0) - before.get((name, key), 0.0)

        assert delta("+Inf") >= 1
        assert delta("+Inf") - delta("0.5") >= 1  # one reading at least half a second late
        held = [line for line in lines if line["event"] == "event loop held up"]
        assert len(held) == 1 and 500 <= held[0]["lag_ms"] < 5000

    with_server(scenario, tmp_path)


def test_garbage_collections_are_timed_and_a_long_one_is_logged(tmp_path: Path) -> None:
    """Every collection shows in okey_gc_pause_seconds by its generation; one that holds the
    process a tenth of a second or more is a warning with its length (a stall of every call)."""

    async def scenario(handle: ServerHandle, channel: grpc.aio.Channel) -> None:
        name = "okey_gc_pause_seconds_count"
        before = await asyncio.to_thread(scrape, handle.metrics_port)
        # A heap of cycles only the collector can free, for a full collection to scan.
        heap = [[] for _ in range(200_000)]
        for item in heap:
            item.append(item)
        with structlog.testing.capture_logs() as lines:
            gc.collect()
            del heap
            gc.collect(0)
        after = await asyncio.to_thread(scrape, handle.metrics_port)

        def delta(generation: str) -> float:
            key = (("generation", generation),)
            return after.get((name, key), 0.0) - before.get((name, key), 0.0)

        assert delta("2") >= 1 and delta("0") >= 1
        for line in lines:
            if line["event"] == "garbage collection held up the process":
                assert line["pause_ms"] >= 100 and line["generation"] in (0, 1, 2)

    with_server(scenario, tmp_path)


def test_collections_while_a_service_starts_are_timed_but_not_logged() -> None:
    """A service's collections before it serves (imports, migrations, ``collector.settle``'s
    full one) hold up no call: a watch made with ``warn=False`` times a long one but says
    nothing until ``serving``; then the same one is a warning."""
    lines: list[dict[str, Any]] = []

    class Log:
        def warning(self, event: str, **fields: Any) -> None:
            lines.append({"event": event, **fields})

    watch = GarbageCollectorWatch(Log(), warn=False)
    long_collection = {"generation": 2, "collected": 5}

    def timed() -> float:
        value = prometheus_client.REGISTRY.get_sample_value(
            "okey_gc_pause_seconds_sum", {"generation": "2"}
        )
        return value or 0.0

    def collect() -> None:
        watch("start", long_collection)
        watch._began -= 2 * GC_WARNING_SECONDS  # as if it had begun that long ago
        watch("stop", long_collection)

    before = timed()
    collect()
    assert lines == []
    assert timed() - before >= 2 * GC_WARNING_SECONDS
    watch.serving()
    collect()
    assert [line["event"] for line in lines] == ["garbage collection held up the process"]
    assert lines[0]["pause_ms"] >= 1000 * GC_WARNING_SECONDS


def test_routine_calls_are_not_logged_at_info(tmp_path: Path) -> None:
    """A method the service names routine (a poll other services make every few seconds) logs
    its calls at debug, as health checks do: at info level only the other calls' lines show."""

    async def scenario(handle: ServerHandle, channel: grpc.aio.Channel) -> None:
        token = ISSUER.issue("p-1", "player")
        with structlog.testing.capture_logs() as lines:
            assert await call(channel, "Echo")(b"", metadata=bearer(token), timeout=2)
            await health_of(channel)
            act = call(channel, "Act")
            assert await act(b"", metadata=bearer(token), timeout=2) == b"acted"
        methods = [line["method"] for line in lines if line["event"] == "rpc"]
        assert methods == [f"/{SERVICE}/Act"]

    with_server(scenario, tmp_path, routine=frozenset({f"/{SERVICE}/Echo"}), log_level="info")


def test_a_serving_service_freezes_what_it_loaded_and_spaces_full_collections_out(
    tmp_path: Path,
) -> None:
    """Once serving, what the service loaded is out of the collector's generations and a full
    collection waits for FULL_COLLECTION_AFTER middle ones; the young thresholds are Python's."""
    young, middle, full = gc.get_threshold()
    gc.unfreeze()
    gc.set_threshold(young, middle, 10)

    async def scenario(handle: ServerHandle, channel: grpc.aio.Channel) -> None:
        assert gc.get_freeze_count() > 1_000  # the modules and caches loaded to start
        assert gc.get_threshold() == (young, middle, collector.FULL_COLLECTION_AFTER)

    try:
        with_server(scenario, tmp_path)
    finally:
        gc.unfreeze()
        gc.set_threshold(young, middle, full)


def test_one_log_line_per_call_with_ids_and_never_the_rack(tmp_path: Path) -> None:
    async def scenario(handle: ServerHandle, channel: grpc.aio.Channel) -> None:
        request = ProbeRequest(request_id="r-1", table_id="t-7", hand_id="h-3", rack="R7 R8 R9")
        token = ISSUER.issue("p-1", "player")
        act = channel.unary_unary(
            f"/{SERVICE}/Act", request_serializer=ProbeRequest.SerializeToString
        )
        merge = [structlog.contextvars.merge_contextvars]
        with structlog.testing.capture_logs(processors=merge) as lines:
            assert await act(request, metadata=bearer(token), timeout=2) == b"acted"
        rpc = [line for line in lines if line["event"] == "rpc"]
        assert len(rpc) == 1
        assert rpc[0]["method"] == f"/{SERVICE}/Act"
        assert rpc[0]["code"] == "OK"
        assert rpc[0]["duration_ms"] >= 0
        handler = [line for line in lines if line["event"] == "handler line"]
        for line in (*rpc, *handler):
            assert (line["request_id"], line["table_id"], line["hand_id"]) == ("r-1", "t-7", "h-3")
        assert "R7" not in repr(lines)

    with_server(scenario, tmp_path)


def test_a_logged_traceback_has_frames_but_no_local_variables() -> None:
    buffer = io.StringIO()
    try:
        configure_logging("json", force=True, file=buffer)
        rack = "R7 R8 R9 secret-rack"
        try:
            raise ValueError(f"bad {len(rack)}")
        except ValueError:
            structlog.get_logger().exception("failed")
    finally:
        configure_logging("json", force=True)
    (line,) = [json.loads(raw) for raw in buffer.getvalue().splitlines()]
    assert line["exception"][0]["exc_type"] == "ValueError"
    assert line["exception"][0]["frames"]
    assert "secret-rack" not in buffer.getvalue()


def test_ids_are_read_only_from_protobuf_fields() -> None:
    assert ids_of(ProbeRequest(table_id="t", rack="R1")) == {"table_id": "t"}
    assert ids_of(b"table_id") == {}
    assert ids_of(health_pb2.HealthCheckRequest(service="x")) == {}


# --------------------------------------------------------------------------------------------
# Auth


def test_a_player_token_is_admitted_and_its_claims_reach_the_handler(tmp_path: Path) -> None:
    async def scenario(handle: ServerHandle, channel: grpc.aio.Channel) -> None:
        token = ISSUER.issue("p-42", "player")
        assert await call(channel, "Echo")(b"", metadata=bearer(token), timeout=2) == b"player:p-42"
        service = ISSUER.issue("table", "service")
        reply = await call(channel, "Internal")(b"", metadata=bearer(service), timeout=2)
        assert reply == b"service:table"

    with_server(scenario, tmp_path)


def test_a_stream_checks_its_token_and_keeps_its_claims_throughout(tmp_path: Path) -> None:
    async def scenario(handle: ServerHandle, channel: grpc.aio.Channel) -> None:
        whoami = channel.unary_stream(f"/{SERVICE}/Whoami")
        token = ISSUER.issue("p-7", "player")
        replies = [reply async for reply in whoami(b"", metadata=bearer(token), timeout=2)]
        assert replies == [b"p-7"] * 3
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            async for _ in whoami(b"", timeout=2):
                pass
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert details_of(caught.value)[0].reason == "TOKEN_MISSING"

    with_server(scenario, tmp_path)


@pytest.mark.parametrize(
    ("case", "reason"),
    [("missing", "TOKEN_MISSING"), ("forged", "TOKEN_INVALID"), ("garbage", "TOKEN_INVALID"),
     ("expired", "TOKEN_EXPIRED")],
)  # fmt: skip
def test_bad_tokens_are_unauthenticated(tmp_path: Path, case: str, reason: str) -> None:
    other = TokenIssuer(SigningKey.generate())
    metadata = {
        "missing": (),
        "forged": bearer(other.issue("p-1", "player")),
        "garbage": bearer("not.a.token"),
        "expired": bearer(ISSUER.issue("p-1", "player", now=time.time() - 3600, ttl_seconds=60)),
    }[case]

    async def scenario(handle: ServerHandle, channel: grpc.aio.Channel) -> None:
        error = await rejected(call(channel, "Echo")(b"", metadata=metadata, timeout=2))
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED
        info, _ = details_of(error)
        assert info.reason == reason

    with_server(scenario, tmp_path)


def test_a_token_of_the_wrong_kind_is_permission_denied(tmp_path: Path) -> None:
    async def scenario(handle: ServerHandle, channel: grpc.aio.Channel) -> None:
        service = ISSUER.issue("bot", "service")
        error = await rejected(call(channel, "Echo")(b"", metadata=bearer(service), timeout=2))
        assert error.code() == grpc.StatusCode.PERMISSION_DENIED
        info, _ = details_of(error)
        assert info.reason == "TOKEN_WRONG_KIND"
        assert dict(info.metadata) == {"kind": "service", "accepts": "player"}
        player = ISSUER.issue("p-1", "player")
        error = await rejected(call(channel, "Internal")(b"", metadata=bearer(player), timeout=2))
        assert error.code() == grpc.StatusCode.PERMISSION_DENIED
        error = await rejected(call(channel, "Undeclared")(b"", metadata=bearer(player), timeout=2))
        assert error.code() == grpc.StatusCode.PERMISSION_DENIED
        assert details_of(error)[0].reason == "METHOD_NOT_DECLARED"

    with_server(scenario, tmp_path)


def test_keys_rotate_through_the_jwks() -> None:
    old, new, stranger = SigningKey.generate(), SigningKey.generate(), SigningKey.generate()
    verifier = JwksVerifier(jwks_of(old, new))
    assert verifier.verify(TokenIssuer(old).issue("a", "player")).subject == "a"
    claims = verifier.verify(TokenIssuer(new).issue("b", "service", ttl_seconds=60))
    assert (claims.subject, claims.kind, claims.expires_at - claims.issued_at) == (
        "b",
        "service",
        60,
    )
    with pytest.raises(Unauthenticated) as caught:
        verifier.verify(TokenIssuer(stranger).issue("c", "player"))
    assert caught.value.code == "TOKEN_INVALID"
    jwk = jwks_of(new)["keys"][0]
    assert (jwk["kty"], jwk["crv"], jwk["alg"], jwk["kid"]) == ("OKP", "Ed25519", "EdDSA", new.kid)
    assert "d" not in jwk


def test_the_jwks_is_reread_for_a_new_key() -> None:
    old, new = SigningKey.generate(), SigningKey.generate()
    published = [jwks_of(old)]
    verifier = JwksVerifier({}, fetch=lambda: published[-1], refresh_interval=0)
    token = TokenIssuer(new).issue("p", "player")

    async def main() -> None:
        await verifier.refresh()
        assert verifier.key_ids == {old.kid}
        published.append(jwks_of(old, new))
        assert (await verifier.verify_fresh(token)).subject == "p"

    arun(main())


def test_local_mode_makes_one_development_key(tmp_path: Path) -> None:
    with structlog.testing.capture_logs() as lines:
        first = dev_signing_key(tmp_path / "var")
    assert any("development signing key" in line["event"] for line in lines)
    again = dev_signing_key(tmp_path / "var")
    assert again.kid == first.kid
    assert (tmp_path / "var" / "dev-signing-key.pem").stat().st_mode & 0o077 == 0
    settings = settings_for_tests(var_dir=tmp_path / "var")
    token = TokenIssuer(first).issue("p", "player")
    assert verifier_for(settings).verify(token).subject == "p"
    with pytest.raises(ConfigError):
        verifier_for(settings.replace(local_mode=False))


# --------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    ("request_bytes", "code", "reason", "metadata"),
    [
        (b"turn", grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN", {"seat": "1", "turn": "2"}),
        (b"tile", grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_TILE", {"tile": "Z9"}),
        (b"table", grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND", {"table_id": "t-9"}),
    ],
)
def test_an_okey_error_becomes_its_status_in_the_callers_language(
    tmp_path: Path,
    request_bytes: bytes,
    code: grpc.StatusCode,
    reason: str,
    metadata: dict[str, str],
) -> None:
    async def scenario(handle: ServerHandle, channel: grpc.aio.Channel) -> None:
        english = await rejected(call(channel, "Fail")(request_bytes, timeout=2))
        turkish = await rejected(
            call(channel, "Fail")(
                request_bytes, metadata=(("accept-language", "tr-TR,tr;q=0.9"),), timeout=2
            )
        )
        for error, locale in ((english, "en-US"), (turkish, "tr-TR")):
            assert error.code() == code
            info, message = details_of(error)
            assert (info.reason, dict(info.metadata)) == (reason, metadata)
            assert message.locale == locale
            assert message.message == error.details()
        assert english.details() != turkish.details()

    with_server(scenario, tmp_path)


def test_the_turkish_sentence_is_the_catalogues() -> None:
    status = rich_status(RuleViolation("NOT_YOUR_TURN", seat=1, turn=2), "tr")
    assert status.message == "Sıra sende değil: sıra 2 numaralı koltukta."


def test_an_unexpected_exception_is_internal_and_its_cause_only_logged(tmp_path: Path) -> None:
    async def scenario(handle: ServerHandle, channel: grpc.aio.Channel) -> None:
        with structlog.testing.capture_logs() as lines:
            error = await rejected(call(channel, "Fail")(b"boom", timeout=2))
        assert error.code() == grpc.StatusCode.INTERNAL
        assert details_of(error)[0].reason == "INTERNAL"
        sent = error.details() + repr(error.trailing_metadata()) + repr(error.debug_error_string())
        assert "secret-internal-detail" not in sent and "Traceback" not in sent
        logged = [line for line in lines if "exc_info" in line]
        assert len(logged) == 1 and "secret-internal-detail" in repr(logged[0]["exc_info"])

    with_server(scenario, tmp_path)


def test_the_status_table() -> None:
    assert status_code_of(InvalidInput("UNKNOWN_RULES_VERSION", version="x")) == (
        grpc.StatusCode.FAILED_PRECONDITION
    )
    assert status_code_of(InvalidInput("UNKNOWN_MELD", meld=9)) == grpc.StatusCode.INVALID_ARGUMENT
    assert status_code_of(RuleViolation("SOMETHING_NEW")) == grpc.StatusCode.FAILED_PRECONDITION
    assert status_code_of(NotFound("SOMETHING_MISSING")) == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize(
    ("header", "language"),
    [("tr", "tr"), ("tr-TR,tr;q=0.9,en;q=0.8", "tr"), ("en-GB,tr;q=0.5", "en"),
     ("de-DE,tr;q=0.7,en;q=0.6", "tr"), ("fr", "en"), ("", "en"), ("tr;q=0", "en")],
)  # fmt: skip
def test_the_language_comes_from_accept_language(header: str, language: str) -> None:
    assert parse_accept_language(header) == language


def test_platform_sentences_name_the_same_parameters_in_both_languages() -> None:
    def fields(template: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name}

    for code, entry in platform_sentences.CATALOGUE.items():
        assert set(entry) == {"en", "tr"}, code
        assert fields(entry["en"]) == fields(entry["tr"]), code


# --------------------------------------------------------------------------------------------
# Configuration


def test_settings_come_from_flags_over_service_variables_over_variables() -> None:
    env = {"OKEY_PORT": "7000", "OKEY_RULES_PORT": "7001", "OKEY_METRICS_PORT": "9999",
           "OKEY_LOCAL_MODE": "false", "OKEY_GRACE_SECONDS": "3.5"}  # fmt: skip
    settings = load_settings("rules", None, env)
    assert (settings.port, settings.metrics_port, settings.grace_seconds) == (7001, 9999, 3.5)
    assert settings.host == "[::]" and not settings.local_mode
    assert load_settings("rules", {"port": 7002}, env).port == 7002
    defaults = load_settings("lobby", None, {})
    assert (defaults.port, defaults.metrics_port, defaults.host) == (50051, 9101, "127.0.0.1")
    for bad in ({"OKEY_PORT": "x"}, {"OKEY_PORT": "70000"}, {"OKEY_LOCAL_MODE": "maybe"}):
        with pytest.raises(ConfigError):
            load_settings("rules", None, bad)
    limits = (
        defaults.login_limit_per_minute,
        defaults.host_table_limit_per_minute,
        defaults.quick_match_limit_per_minute,
    )
    assert limits == (10, 10, 20)
    lobby = load_settings("lobby", {"host_table_limit_per_minute": 4},
                          {"OKEY_LOBBY_LOGIN_LIMIT_PER_MINUTE": "3"})  # fmt: skip
    assert (lobby.login_limit_per_minute, lobby.host_table_limit_per_minute) == (3, 4)
    for bad in ({"OKEY_LOGIN_LIMIT_PER_MINUTE": "0"}, {"OKEY_QUICK_MATCH_LIMIT_PER_MINUTE": "x"}):
        with pytest.raises(ConfigError):
            load_settings("lobby", None, bad)


def test_the_configuration_table_documents_every_setting() -> None:
    from okey101.platform.config import SETTINGS

    table = (ROOT / "docs" / "configuration.md").read_text()
    for spec in SETTINGS:
        assert f"OKEY_{spec.name.upper()}" in table and spec.flag in table, spec.name


# --------------------------------------------------------------------------------------------
# Shutdown


def test_a_drain_finishes_calls_in_flight_closes_streams_and_refuses_new_calls(
    tmp_path: Path,
) -> None:
    async def scenario(handle: ServerHandle, channel: grpc.aio.Channel) -> None:
        slow = asyncio.ensure_future(call(channel, "Slow")(b"1.2", timeout=5))
        ticks: list[bytes] = []

        async def watch() -> grpc.aio.AioRpcError:
            stream = channel.unary_stream(f"/{SERVICE}/Ticks")(b"", timeout=5)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                async for tick in stream:
                    ticks.append(tick)
            return caught.value

        watching = asyncio.ensure_future(watch())
        await asyncio.sleep(0.2)
        stopping = handle.stop()
        await asyncio.sleep(0.1)
        # Draining: still answering, but NOT_SERVING, so load balancers move away.
        assert await health_of(channel) == health_pb2.HealthCheckResponse.NOT_SERVING
        assert await health_of(channel, SERVICE) == health_pb2.HealthCheckResponse.NOT_SERVING
        await asyncio.sleep(0.5)
        # Past the drain: new calls are refused; the stream was told to reconnect.
        refused = await rejected(call(channel, "Open")(b"", timeout=1))
        assert refused.code() == grpc.StatusCode.UNAVAILABLE
        closed = await watching
        assert closed.code() == grpc.StatusCode.UNAVAILABLE
        assert details_of(closed)[0].reason == "SERVER_SHUTTING_DOWN"
        assert len(ticks) >= 5
        assert not slow.done()
        assert await slow == b"done"
        await stopping

    with_server(scenario, tmp_path, drain_seconds=0.4, grace_seconds=3.0)


PROGRAM = """
import asyncio, sys, grpc
from okey101.platform.auth import AccessPolicy
from okey101.platform.config import load_settings
from okey101.platform.server import run

async def slow(request, context):
    await asyncio.sleep(float(request.decode()))
    return b"done"

def register(server):
    handler = grpc.unary_unary_rpc_method_handler(slow)
    server.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler("okey.test.Probe", {"Slow": handler})]
    )
    return ["okey.test.Probe"]

access = AccessPolicy({"/okey.test.Probe/Slow": ["none"]})
sys.exit(run("probe", register, load_settings("probe"), access=access))
"""


def test_sigterm_drains_a_real_process_which_exits_0(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "OKEY_PORT": "0",
        "OKEY_METRICS_PORT": "0",
        "OKEY_VAR_DIR": str(tmp_path / "var"),
        "OKEY_LOG_FORMAT": "json",
        "OKEY_DRAIN_SECONDS": "0.3",
        "OKEY_GRACE_SECONDS": "5",
    }
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    process = subprocess.Popen(
        [sys.executable, "-c", PROGRAM],
        cwd=ROOT,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    lines: list[dict[str, Any]] = []
    serving = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for raw in process.stderr:
            try:
                lines.append(json.loads(raw))
            except ValueError:
                lines.append({"event": raw})
            if lines[-1].get("event") == "serving":
                serving.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert serving.wait(15), lines
        port = next(line["port"] for line in lines if line.get("event") == "serving")

        async def main() -> None:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                assert await health_of(channel) == health_pb2.HealthCheckResponse.SERVING
                slow = asyncio.ensure_future(call(channel, "Slow")(b"1.0", timeout=5))
                await asyncio.sleep(0.2)
                process.send_signal(signal.SIGTERM)
                await asyncio.sleep(0.1)
                assert await health_of(channel) == health_pb2.HealthCheckResponse.NOT_SERVING
                assert await slow == b"done"

        arun(main())
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    reader.join(timeout=5)
    events = [line.get("event") for line in lines]
    assert "development signing key" in " ".join(str(e) for e in events)
    assert events.index("draining") < events.index("stopped")


def test_a_stream_cancelled_as_its_handler_returns_reports_no_lost_exception() -> None:
    """The client closes a stream just as its handler returns (every client does so after a
    match's last event): the handler's ordinary end, StopAsyncIteration, is not reported by
    asyncio as an exception nobody retrieved (issue #32 saw such lines at error level)."""
    reported: list[dict[str, Any]] = []

    async def scenario() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, what: reported.append(what))
        gate = asyncio.Event()

        async def responses() -> Any:
            yield b"last event"
            await gate.wait()

        interceptor = ObservabilityInterceptor(structlog.get_logger(), Drain())
        stream = interceptor._until_drained(responses())
        assert await anext(stream) == b"last event"
        reader = asyncio.create_task(anext(stream))
        await asyncio.sleep(0.01)  # the reader waits for the handler's next step
        gate.set()  # the handler returns ...
        reader.cancel()  # ... as the client goes away
        with pytest.raises(asyncio.CancelledError):
            await reader
        await stream.aclose()
        del stream, reader
        gc.collect()
        await asyncio.sleep(0)

    asyncio.run(scenario())
    assert reported == []
