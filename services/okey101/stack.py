"""A stack of the services as processes of their own, and how to tell that one is serving.

``okey101 up`` starts every service on its default ports, or on consecutive ports from
``--base-port`` (``UpPorts``), and waits for each (``wait_serving``);
``local_stack`` starts one on free ports for ``okey101 simulate`` (without ``--lobby``), the
benchmarks and the end-to-end tests: each built service is ``python -m okey101.cli serve NAME``
with its gRPC and metrics ports picked free, the other services' addresses in
``OKEY_<PEER>_ADDRESS``, local mode (SQLite and the development signing key, shared by all,
under one var dir), and its log in ``VAR/logs/NAME.log``. The block waits until every service
reports SERVING on the standard health service; leaving it sends each process SIGTERM (the
graceful drain) and waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from okey101.services import built_services

#: The table's and lobby's knobs for a stack that plays as fast as it can: bots move at once,
#: the next hand is dealt at once, a quick-match ticket gets its bots at once, and the lobby's
#: limits per client address do not hold back its clients, who all come from 127.0.0.1.
FAST: Mapping[str, str] = {
    "OKEY_TABLE_BOT_MOVE_SECONDS": "0",
    "OKEY_TABLE_NEXT_HAND_SECONDS": "0",
    "OKEY_QUICK_MATCH_WAIT_SECONDS": "0",
    "OKEY_NEW_GUEST_LIMIT_PER_ADDRESS_PER_MINUTE": "100000",
    "OKEY_HOST_TABLE_LIMIT_PER_ADDRESS_PER_MINUTE": "100000",
}


#: How many ports ``okey101 up --base-port P`` takes from P on: each service's gRPC port (P to
#: P+4, in ``SERVICE_PORTS``' order: lobby, table, scoring, rules, bot), then their metrics ports
#: (P+5 to P+9), then the lobby's JWKS port (P+10), then the edge's HTTP and metrics ports (P+11,
#: P+12).
UP_PORTS: Final = 13


@dataclass(frozen=True)
class UpPorts:
    """Where ``okey101 up`` starts each service: its (gRPC, metrics) ports, the lobby's JWKS,
    and the edge's (HTTP, metrics) ports."""

    services: dict[str, tuple[int, int]]
    jwks: int
    edge: tuple[int, int]
    #: Whether these are other ports than the defaults (then each service is told its peers').
    moved: bool

    @classmethod
    def of(cls, base: int | None) -> UpPorts:
        """The defaults (``base`` None), or ``UP_PORTS`` consecutive ports from ``base``: the
        services' gRPC ports, their metrics, the JWKS, then the edge's HTTP and metrics."""
        from okey101.platform.config import SERVICE_PORTS

        grpc_services = {name: ports for name, ports in SERVICE_PORTS.items() if name != "edge"}
        if base is None:
            return cls(dict(grpc_services), 9106, SERVICE_PORTS["edge"], moved=False)
        if not 1024 <= base <= 65535 - UP_PORTS + 1:
            raise ValueError(f"a base port is 1024 to {65535 - UP_PORTS + 1}, not {base}")
        count = len(grpc_services)
        services = {
            name: (base + index, base + count + index) for index, name in enumerate(grpc_services)
        }
        jwks = base + 2 * count
        return cls(services, jwks, (jwks + 1, jwks + 2), moved=True)

    def flags(self, name: str) -> list[str]:
        """``okey101 serve NAME``'s flags for these ports (nothing for the defaults)."""
        if not self.moved:
            return []
        port, metrics = self.edge if name == "edge" else self.services[name]
        flags = ["--port", str(port), "--metrics-port", str(metrics)]
        for peer, (peer_port, _metrics) in self.services.items():
            if peer != name:
                flags += [f"--{peer}-address", f"127.0.0.1:{peer_port}"]
        if name == "lobby":
            flags += ["--jwks-port", str(self.jwks)]
        return flags


def free_port() -> int:
    """A port nothing listens on now (the kernel's choice)."""
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` different ports nothing listens on now: each probe is held until all are
    chosen (one at a time, the kernel may hand the same port out twice)."""
    with contextlib.ExitStack() as probes:
        ports = []
        for _ in range(count):
            probe = probes.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            probe.bind(("127.0.0.1", 0))
            ports.append(int(probe.getsockname()[1]))
        return ports


async def wait_serving(target: str, timeout: float = 30.0, service: str = "") -> None:
    """Until the server at ``target`` reports SERVING on the standard health service."""
    deadline = time.monotonic() + timeout
    async with grpc.aio.insecure_channel(target) as channel:
        stub: Any = health_pb2_grpc.HealthStub(channel)
        while True:
            try:
                answer = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=1)
                if answer.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{target} did not report SERVING within {timeout} s")
            await asyncio.sleep(0.1)


def wait_serving_sync(target: str, timeout: float = 30.0) -> None:
    """``wait_serving`` for code without an event loop."""
    asyncio.run(wait_serving(target, timeout))


@dataclass
class Service:
    """One running service."""

    name: str
    port: int
    metrics_port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"


@dataclass
class LocalStack:
    """The services of one stack, by name, and how they were started."""

    var_dir: Path
    #: Each service's (gRPC port, metrics port).
    ports: dict[str, tuple[int, int]]
    #: The environment every service is started with.
    env: dict[str, str]
    services: dict[str, Service] = field(default_factory=dict)

    def address(self, name: str) -> str:
        return f"127.0.0.1:{self.ports[name][0]}"

    def start(self, name: str) -> Service:
        """Start ``name`` on its ports (not waiting for it to serve)."""
        grpc_port, metrics_port = self.ports[name]
        logs = self.var_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        log = logs / f"{name}.log"
        command = [sys.executable, "-m", "okey101.cli", "serve", name]
        command += ["--port", str(grpc_port), "--metrics-port", str(metrics_port)]
        command += ["--var-dir", str(self.var_dir)]
        with open(log, "ab") as handle:  # the child keeps its own copy of the descriptor
            child = subprocess.Popen(
                command,
                env=self.env,
                stdout=handle,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C in a terminal is the caller's to handle
            )
        self.services[name] = Service(name, grpc_port, metrics_port, child, log)
        return self.services[name]

    def logs(self, lines: int = 40) -> str:
        """The end of every service's log (for a failing test's report)."""
        out = []
        for service in self.services.values():
            try:
                text = service.log.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            tail = "\n".join(text.splitlines()[-lines:])
            out.append(f"--- {service.name} (exit {service.process.poll()}) ---\n{tail}")
        return "\n".join(out)

    def stop(self, name: str, timeout: float = 30.0) -> int | None:
        """SIGTERM one service and wait for it (its graceful drain); its exit status."""
        child = self.services[name].process
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        return child.returncode

    def restart(self, name: str, timeout: float = 60.0) -> Service:
        """Stop one service and start it again on the same ports (its clients reconnect)."""
        self.stop(name)
        service = self.start(name)
        asyncio.run(wait_serving(service.address, timeout=timeout))
        return service


@contextlib.contextmanager
def local_stack(
    var_dir: Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    services: tuple[str, ...] | None = None,
    timeout: float = 90.0,
) -> Iterator[LocalStack]:
    """Start the stack (see the module docstring); stop it when the block ends."""
    names = services or tuple(built_services())
    with contextlib.ExitStack() as cleanup:
        if var_dir is None:
            var_dir = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="okey101-")))
        chosen = iter(free_ports(2 * len(names) + 1))
        ports = {name: (next(chosen), next(chosen)) for name in names}
        environment = {
            **os.environ,
            "OKEY_LOG_LEVEL": "warning",
            "OKEY_LOG_FORMAT": "json",
            "OKEY_JWKS_PORT": str(next(chosen)),
            **{
                f"OKEY_{name.upper()}_ADDRESS": f"127.0.0.1:{port}"
                for name, (port, _) in ports.items()
            },
            **(env or {}),
        }
        stack = LocalStack(var_dir, ports, environment)
        try:
            for name in names:
                stack.start(name)
            asyncio.run(_wait_all(stack, timeout))
            yield stack
        finally:
            for service in stack.services.values():  # all drain at once, then wait for each
                if service.process.poll() is None:
                    service.process.send_signal(signal.SIGTERM)
            for name in stack.services:
                stack.stop(name)


def start_edge(stack: LocalStack, env: Mapping[str, str] | None = None) -> Service:
    """Start the edge (``okey101 serve edge``) on free ports in front of ``stack``'s services
    and wait until it is ready (``/readyz``); ``service.port`` is its HTTP port. Leaving the
    stack stops it with the rest."""
    port, metrics_port = free_ports(2)
    stack.ports["edge"] = (port, metrics_port)
    if env:
        stack.env = {**stack.env, **env}
    service = stack.start("edge")
    wait_http(f"http://127.0.0.1:{port}/readyz", timeout=60, process=service.process)
    return service


def wait_http(
    url: str, timeout: float = 30.0, process: subprocess.Popen[bytes] | None = None
) -> None:
    """Until ``url`` answers 200 (the edge's ``/readyz``)."""
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=1) as answer:
                if answer.status == 200:
                    return
        except (OSError, urllib.error.URLError):
            pass
        if process is not None and process.poll() is not None:
            raise TimeoutError(f"{url}: the process exited ({process.returncode})")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{url} did not answer within {timeout} s")
        time.sleep(0.1)


async def _wait_all(stack: LocalStack, timeout: float) -> None:
    for service in stack.services.values():
        try:
            await wait_serving(service.address, timeout=timeout)
        except TimeoutError:
            raise TimeoutError(
                f"{service.name} did not report SERVING within {timeout:.0f} s\n{stack.logs()}"
            ) from None
