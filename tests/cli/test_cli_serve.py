"""``okey101 serve`` as a real process: it starts alone, serves, drains on SIGTERM, exits 0."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from okey.v1 import common_pb2, lobby_pb2, lobby_pb2_grpc, rules_pb2, rules_pb2_grpc

from okey101.cli import main
from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.services import SERVICES, built_services
from okey101.stack import free_port, free_ports, wait_serving_sync

ROOT = Path(__file__).resolve().parents[2]
SERVED_NAMES = {
    "lobby": "okey.v1.LobbyService",
    "table": "okey.v1.TableService",
    "scoring": "okey.v1.ScoringService",
    "rules": "okey.v1.RulesService",
    "bot": "okey.v1.BotService",
}


def test_rules_is_built() -> None:
    assert "rules" in built_services()


def test_serve_rules_alone_then_sigterm(tmp_path: Path) -> None:
    port, metrics = free_ports(2)
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


# --------------------------------------------------------------------------------------------
# okey101 up on other ports


def consecutive_free_ports(count: int) -> int:
    """A base port with ``count`` free ports from it (each probed by binding it), below the
    kernel's ephemeral range: the other tests' servers on port 0 and their clients' sockets
    take ports from that range, and one of them took a probed port before ``okey101 up`` bound
    it (a failure seen on 2026-12-06)."""
    import random
    import socket

    ephemeral_low = 32768
    with contextlib.suppress(OSError, ValueError):
        ephemeral_low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    low, high = 20000, max(ephemeral_low, 20000 + 2 * count)
    for _ in range(200):
        base = random.randrange(low, high - count)
        try:
            with contextlib.ExitStack() as probes:
                for port in range(base, base + count):
                    probe = probes.enter_context(socket.socket())
                    probe.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    raise AssertionError(f"no {count} consecutive free ports found")


def test_up_with_a_base_port_starts_and_health_checks_every_service_on_its_ports(
    tmp_path: Path,
) -> None:
    """``okey101 up --base-port P``: every built service SERVING on P, P+1..., its metrics on
    P+5..., the lobby's JWKS on P+10, the services reaching each other there (a guest hosts a
    table: lobby to table), and SIGTERM stops them all with exit 0."""
    from okey101.stack import UP_PORTS, UpPorts

    base = consecutive_free_ports(UP_PORTS)
    ports = UpPorts.of(base)
    names = built_services()
    child = subprocess.Popen(
        [sys.executable, "-m", "okey101.cli", "up", "--base-port", str(base),
         "--var-dir", str(tmp_path)],
        cwd=ROOT, env={**os.environ, "OKEY_LOG_FORMAT": "json", "OKEY_LOG_LEVEL": "warning"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None
        printed = []
        while not printed or not printed[-1].startswith("Ctrl-C stops them all"):
            line = child.stdout.readline()
            assert line, child.stderr.read() if child.stderr else ""
            printed.append(line.rstrip())
        text = "\n".join(printed)
        for index, name in enumerate(("lobby", "table", "scoring", "rules", "bot")):
            assert ports.services[name] == (base + index, base + 5 + index)
        for name in names:
            port, metrics = ports.services[name]
            assert f"127.0.0.1:{port}   http://127.0.0.1:{metrics}/metrics" in text
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                health: Any = health_pb2_grpc.HealthStub(channel)
                service = SERVED_NAMES[name]
                answer = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
                assert answer.status == health_pb2.HealthCheckResponse.SERVING, name
            with urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=5) as page:
                assert b"grpc_server_started_total" in page.read()
        if "lobby" in names and "table" in names:
            assert f"--lobby 127.0.0.1:{base} --table 127.0.0.1:{base + 1}" in text
            jwks = f"http://127.0.0.1:{base + 10}/.well-known/jwks.json"
            with urllib.request.urlopen(jwks, timeout=5) as page:
                assert json.load(page)["keys"]
            with grpc.insecure_channel(f"127.0.0.1:{base}") as channel:
                lobby: Any = lobby_pb2_grpc.LobbyServiceStub(channel)
                login = lobby.LoginGuest(
                    lobby_pb2.LoginGuestRequest(
                        request_id="up", device_id="device-up-0001", display_name="Up"
                    ),
                    timeout=30,
                )
                hosted = lobby.HostTable(
                    lobby_pb2.HostTableRequest(
                        request_id="host",
                        rules=common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_OYNA),
                    ),
                    metadata=(("authorization", f"Bearer {login.tokens.access_token}"),),
                    timeout=30,
                )
                assert hosted.table.table_id  # made by the table service on P+1
    finally:
        child.send_signal(signal.SIGTERM)
        _out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err[-2000:]


def test_up_refuses_a_base_port_out_of_range(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["up", "--base-port", "80"]) == 2
    assert "base port" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# What a server loads: its own service, never the client or the benchmarks, none of their extras

#: Modules a server must not load: the terminal client, the benchmarks, and the packages of the
#: ``client`` and ``bench`` extras, which the servers' image does not install. (Rich is left
#: out: structlog uses it when it is installed, and does without it in the image.)
NOT_IN_A_SERVER = ("okey101.client", "okey101.bench", "textual", "highspy")

#: Run before the command line: the extras' packages cannot be imported (as in the servers'
#: image), and the modules loaded are written to the file named by OKEY_TEST_MODULES at exit.
WITHOUT_EXTRAS = """
import atexit, json, os, sys
for name in ("textual", "rich", "highspy"):
    sys.modules[name] = None  # `import textual` now raises ImportError

def loaded():
    names = sorted(name for name, module in sys.modules.items() if module is not None)
    with open(os.environ["OKEY_TEST_MODULES"], "w") as out:
        json.dump(names, out)

atexit.register(loaded)
"""


def _forbidden(modules: list[str]) -> list[str]:
    return [
        name
        for name in modules
        if any(name == root or name.startswith(root + ".") for root in NOT_IN_A_SERVER)
    ]


def test_serve_rules_runs_without_the_extras_and_loads_neither_client_nor_bench(
    tmp_path: Path,
) -> None:
    port, metrics = free_ports(2)
    listing = tmp_path / "modules.json"
    program = WITHOUT_EXTRAS + "from okey101.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    command = [
        sys.executable, "-c", program, "serve", "rules",
        "--port", str(port), "--metrics-port", str(metrics), "--var-dir", str(tmp_path),
    ]  # fmt: skip
    env = {**os.environ, "OKEY_LOG_FORMAT": "json", "OKEY_TEST_MODULES": str(listing)}
    child = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE)
    try:
        wait_serving_sync(f"127.0.0.1:{port}", timeout=60)
    finally:
        child.send_signal(signal.SIGTERM)
        _out, err = child.communicate(timeout=30)
    assert child.returncode == 0, err.decode()[-2000:]
    modules = json.loads(listing.read_text())
    assert "okey101.rules.service" in modules and "okey101.platform.server" in modules
    assert _forbidden(modules) == []


@pytest.mark.parametrize("service", [*SERVICES, "edge"])
def test_the_serve_path_of_each_service_loads_that_service_alone(
    service: str, tmp_path: Path
) -> None:
    """What ``okey101 serve SERVICE`` imports before it serves: the command line, the platform
    and the service's serving coroutine, without the extras; no other service, no client, no
    benchmark."""
    modules = _loaded_without_extras(
        "import okey101.cli, okey101.platform.server\n"
        "from okey101.services import serving\n"
        f"serving({service!r})\n",
        tmp_path,
    )
    loaded = {name.split(".")[1] for name in modules if name.startswith("okey101.")}
    assert service in loaded
    # The edge forwards to the services: it loads none of them.
    assert loaded & set(SERVICES) == ({service} if service in SERVICES else set())
    assert _forbidden(modules) == []


def test_the_command_line_needs_no_extra_for_help_and_usage(tmp_path: Path) -> None:
    """``okey101 --help`` (the image checks it at build) and every command's own help work
    without the client's and the benchmarks' packages: commands import what they run."""
    helps = [
        ["--help"], ["serve", "rules", "--help"], ["up", "--help"], ["migrate", "--help"],
        ["play", "--help"], ["watch", "--help"], ["simulate", "--help"], ["bench", "--help"],
        ["bench", "load", "--help"], ["bench", "solver", "--help"], ["scenario", "--help"],
        ["best-opening", "--help"], ["verify-deal", "--help"], ["export-hand", "--help"],
    ]  # fmt: skip
    program = (
        "import contextlib, io\n"
        "from okey101.cli import main\n"
        "for argv in json.loads(sys.argv[1]):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        try:\n"
        "            status = main(argv)\n"
        "        except SystemExit as exit_:\n"
        "            status = exit_.code\n"
        "    assert status == 0, (argv, status)\n"
    )
    assert _forbidden(_loaded_without_extras(program, tmp_path, json.dumps(helps))) == []


def _loaded_without_extras(program: str, tmp_path: Path, *args: str) -> list[str]:
    """Run ``program`` in a Python of its own without the extras' packages (it must exit 0);
    the modules it had loaded when it ended."""
    listing = tmp_path / "modules.json"
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRAS + program, *args],
        check=False,
        cwd=ROOT,
        env={**os.environ, "OKEY_TEST_MODULES": str(listing)},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    names: list[str] = json.loads(listing.read_text())
    return names


def test_every_line_every_service_writes_follows_its_log_format(tmp_path: Path) -> None:
    """``--log-format json``: each service's every line, on standard error or output, is a JSON
    object, from the first (the table says it uses the development signing key before its
    server is built) to the last."""
    dev_signing_key(tmp_path)
    env = {key: value for key, value in os.environ.items() if key != "OKEY_LOG_FORMAT"}
    children: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
    try:
        for name in built_services():
            port = free_port()
            command = [
                sys.executable, "-m", "okey101.cli", "serve", name, "--log-format", "json",
                "--port", str(port), "--metrics-port", "0", "--var-dir", str(tmp_path),
            ]  # fmt: skip
            if name == "lobby":
                command += ["--jwks-port", "0"]
            children[name] = (
                subprocess.Popen(
                    command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
                ),
                port,
            )
        for _child, port in children.values():
            wait_serving_sync(f"127.0.0.1:{port}", timeout=90)
    finally:
        written = {}
        for child, _port in children.values():
            child.send_signal(signal.SIGTERM)
        for name, (child, _port) in children.items():
            out, err = child.communicate(timeout=60)
            written[name] = (out + err).decode()
    assert set(written) == set(built_services())
    for name, text in written.items():
        lines = text.splitlines()
        assert lines, name
        for line in lines:
            entry = json.loads(line)  # not a console line
            assert isinstance(entry, dict), (name, line)
    first_table_events = [json.loads(line)["event"] for line in written["table"].splitlines()]
    assert first_table_events[0] == "using the development signing key (local mode)"
