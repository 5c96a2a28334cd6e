"""``okey101 serve`` as a real process: it starts alone, serves, drains on SIGTERM, exits 0."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from okey.v1 import common_pb2, rules_pb2, rules_pb2_grpc

from okey101.cli import main
from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.services import built_services
from okey101.stack import free_port, wait_serving_sync

ROOT = Path(__file__).resolve().parent.parent


def test_rules_is_built() -> None:
    assert "rules" in built_services()


def test_serve_rules_alone_then_sigterm(tmp_path: Path) -> None:
    port, metrics = free_port(), free_port()
    key = dev_signing_key(tmp_path)  # the service finds the same development key
    token = TokenIssuer(key).issue("tester", "player")
    command = [
        sys.executable, "-m", "okey101.cli", "serve", "rules",
        "--port", str(port), "--metrics-port", str(metrics), "--var-dir", str(tmp_path),
    ]  # fmt: skip
    child = subprocess.Popen(
        command, cwd=ROOT, env={**os.environ, "OKEY_LOG_FORMAT": "json"}, stderr=subprocess.PIPE
    )
    try:
        wait_serving_sync(f"127.0.0.1:{port}", timeout=60)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            health: Any = health_pb2_grpc.HealthStub(channel)
            status = health.Check(
                health_pb2.HealthCheckRequest(service="okey.v1.RulesService"), timeout=5
            ).status
            assert status == health_pb2.HealthCheckResponse.SERVING
            stub: Any = rules_pb2_grpc.RulesServiceStub(channel)
            answer = stub.ResolveRuleSet(
                rules_pb2.ResolveRuleSetRequest(
                    rules=common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_NORTH_SULTAN)
                ),
                metadata=(("authorization", f"Bearer {token}"),),
                timeout=5,
            )
            assert answer.rules.turn_seconds == 45
    finally:
        child.send_signal(signal.SIGTERM)
        _out, err = child.communicate(timeout=30)
    assert child.returncode == 0, err.decode()[-2000:]
    lines = err.decode().splitlines()
    events = [json.loads(line)["event"] for line in lines if line.startswith("{")]
    assert "serving" in events and events[-1] == "stopped"


def test_serve_unknown_service(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "klasik"]) == 2
    assert "there is no service called 'klasik'" in capsys.readouterr().err


def test_bench_rules_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "rules", "--seconds", "0.5", "--concurrency", "2", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures["errors"] == 0
    assert figures["calls_per_second"] > 0 and figures["empty_calls_per_second"] > 0
    assert figures["ratio_vs_empty"] > 0
    assert figures["p50_ms"] <= figures["p99_ms"]


def test_wait_serving_gives_up() -> None:
    with pytest.raises(TimeoutError):
        asyncio.run(_wait_nothing())


async def _wait_nothing() -> None:
    from okey101.stack import wait_serving

    await wait_serving(f"127.0.0.1:{free_port()}", timeout=0.5)
