"""The rules service as operators run it: a process of its own (``okey101 serve rules``).

Reflection, metrics, tokens and SIGTERM, checked against the real process through generated
stubs; the calls themselves are checked in ``test_rules_service.py``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status
from okey.v1 import common_pb2, rules_pb2, rules_pb2_grpc

from okey101.bench.rules_bench import _apply_request
from okey101.platform.auth import SigningKey, TokenIssuer, dev_signing_key
from okey101.stack import free_ports, wait_serving_sync

ROOT = Path(__file__).resolve().parents[2]
SERVICE = "okey.v1.RulesService"


class Running:
    def __init__(self, var_dir: Path) -> None:
        self.port, self.metrics_port = free_ports(2)
        self.issuer = TokenIssuer(dev_signing_key(var_dir))
        command = [
            sys.executable, "-m", "okey101.cli", "serve", "rules",
            "--port", str(self.port), "--metrics-port", str(self.metrics_port),
            "--var-dir", str(var_dir), "--drain-seconds", "1",
        ]  # fmt: skip
        environment = {**os.environ, "OKEY_LOG_FORMAT": "json"}
        self.process = subprocess.Popen(command, cwd=ROOT, env=environment, stderr=subprocess.PIPE)
        wait_serving_sync(self.target, timeout=60)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def auth(self, kind: str = "service") -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.issuer.issue('tester', kind)}"),)  # type: ignore[arg-type]

    def stop(self) -> tuple[int, str]:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        _out, err = self.process.communicate(timeout=30)
        return self.process.returncode, err.decode()


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    service = Running(tmp_path)
    try:
        yield service
    finally:
        service.stop()


def scrape(port: int) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """The metrics endpoint's samples: (name, labels) -> value."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
        text = answer.read().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_reflection_lists_the_rules_service(running: Running) -> None:
    with grpc.insecure_channel(running.target) as channel:
        stub: Any = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        (answer,) = list(stub.ServerReflectionInfo(iter([request]), timeout=5))
    names = {service.name for service in answer.list_services_response.service}
    assert SERVICE in names and "grpc.health.v1.Health" in names


BUF = ROOT / ".venv" / "bin" / "buf"


@pytest.mark.skipif(not BUF.exists(), reason="buf is installed by make install")
def test_a_reflection_v1_client_lists_and_calls_the_rules_service(running: Running) -> None:
    """buf curl told to speak ``grpc.reflection.v1`` only (no fallback to v1alpha) lists the
    services and the rules service's methods, and calls one from the reflected schema."""
    base = [str(BUF), "curl", "--protocol", "grpc", "--http2-prior-knowledge"]
    v1 = ["--reflect-protocol", "grpc-v1"]
    url = f"http://{running.target}"

    def buf(*args: str) -> str:
        done = subprocess.run(
            [*base, *v1, *args], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    services = buf("--list-services", url).split()
    assert {SERVICE, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"} <= set(
        services
    )
    methods = buf("--list-methods", url).split()
    assert f"{SERVICE}/ResolveRuleSet" in methods
    token = running.auth()[0][1]
    answer = json.loads(
        buf(
            "-H",
            f"authorization: {token}",
            "-d",
            '{"rules": {"preset": "RULE_PRESET_BOOMBALA"}}',
            f"{url}/{SERVICE}/ResolveRuleSet",
        )
    )
    assert answer["rules"]["preset"] == "RULE_PRESET_BOOMBALA"


def test_metrics_count_the_calls(running: Running) -> None:
    key = (
        "grpc_server_handled_total",
        frozenset(
            {
                ("grpc_type", "unary"),
                ("grpc_service", SERVICE),
                ("grpc_method", "ResolveRuleSet"),
                ("grpc_code", "OK"),
            }
        ),
    )
    before = scrape(running.metrics_port).get(key, 0.0)
    with grpc.insecure_channel(running.target) as channel:
        stub: Any = rules_pb2_grpc.RulesServiceStub(channel)
        for _ in range(4):
            stub.ResolveRuleSet(
                rules_pb2.ResolveRuleSetRequest(), metadata=running.auth(), timeout=5
            )
    assert scrape(running.metrics_port)[key] - before == 4


@pytest.mark.parametrize("case", ["missing", "forged", "expired"])
def test_bad_tokens_are_unauthenticated(running: Running, case: str) -> None:
    metadata: tuple[tuple[str, str], ...] = ()
    if case == "forged":
        forged = TokenIssuer(SigningKey.generate()).issue("tester", "service")
        metadata = (("authorization", f"Bearer {forged}"),)
    elif case == "expired":
        old = running.issuer.issue("tester", "service", now=time.time() - 3600, ttl_seconds=60)
        metadata = (("authorization", f"Bearer {old}"),)
    with grpc.insecure_channel(running.target) as channel:
        stub: Any = rules_pb2_grpc.RulesServiceStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            stub.ResolveRuleSet(rules_pb2.ResolveRuleSetRequest(), metadata=metadata, timeout=5)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    status = rpc_status.from_call(caught.value)
    assert status is not None
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    expected = {"missing": "TOKEN_MISSING", "forged": "TOKEN_INVALID", "expired": "TOKEN_EXPIRED"}
    assert (info.reason, info.domain) == (expected[case], "okey101")


def test_sigterm_drains_calls_then_exits_0(running: Running) -> None:
    """During the drain health reads NOT_SERVING while calls still complete; after it new calls
    are refused; the process exits 0 and no call failed any other way."""
    request = _apply_request(1)
    outcomes: list[str] = []
    done = threading.Event()

    def caller() -> None:
        with grpc.insecure_channel(running.target) as channel:
            stub: Any = rules_pb2_grpc.RulesServiceStub(channel)
            while not done.is_set():
                try:
                    stub.ApplyAction(request, metadata=running.auth(), timeout=5)
                    outcomes.append("ok")
                except grpc.RpcError as error:
                    outcomes.append(error.code().name)
                    if error.code() == grpc.StatusCode.UNAVAILABLE:
                        return

    thread = threading.Thread(target=caller)
    thread.start()
    while "ok" not in outcomes:
        time.sleep(0.01)
    running.process.send_signal(signal.SIGTERM)
    saw_not_serving = False
    with grpc.insecure_channel(running.target) as channel:
        health: Any = health_pb2_grpc.HealthStub(channel)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not saw_not_serving:
            try:
                status = health.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=1)
            except grpc.RpcError:
                break
            saw_not_serving = status.status == health_pb2.HealthCheckResponse.NOT_SERVING
    served_during_drain = len(outcomes)
    time.sleep(0.3)
    assert len(outcomes) > served_during_drain, "calls stopped completing during the drain"
    code, log = running.stop()
    done.set()
    thread.join(timeout=10)
    assert saw_not_serving
    assert code == 0, log[-2000:]
    # Every call completed or was refused as UNAVAILABLE (retry elsewhere), but for at most one
    # that raced gRPC's own stop in transit (the server never saw it: CANCELLED by the core).
    failures = [outcome for outcome in outcomes if outcome != "ok"]
    assert failures in (["UNAVAILABLE"], ["CANCELLED", "UNAVAILABLE"], []), outcomes[-5:]
    events = [json.loads(line)["event"] for line in log.splitlines() if line.startswith("{")]
    assert events[-1] == "stopped"


def test_starts_alone_without_other_services(running: Running) -> None:
    """No lobby, table, scoring or bot runs here, and rules answers anyway."""
    with grpc.insecure_channel(running.target) as channel:
        stub: Any = rules_pb2_grpc.RulesServiceStub(channel)
        answer = stub.ResolveRuleSet(
            rules_pb2.ResolveRuleSetRequest(
                rules=common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_BOOMBALA)
            ),
            metadata=running.auth("player"),
            timeout=5,
        )
    assert answer.rules.run_may_end_12_13_1
