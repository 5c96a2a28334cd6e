"""``okey101 bench rules``: ApplyAction over real gRPC, beside an empty gRPC service.

Both servers run as processes of their own on free ports: the rules service as ``okey101 serve
rules`` starts it (local mode, a temporary var dir), and an empty grpc.aio service
(``empty_server``) that answers every call with as many bytes as the rules service's answer. The
same client (grpc.aio, ``concurrency`` calls in flight) calls each for ``seconds``: the rules
service with a real ApplyAction (a dealt hand, the starting player's discard, a service token),
the empty one with a request of the same size. The client does the same work for both: it sends
the request's bytes and takes the answer as bytes (ApplyAction's first answer is parsed and
checked, the rest are not parsed: parsing them would be client work the empty run does not do,
taking the processor from the server on a small machine).

The two are measured in alternating windows (``WINDOW_SECONDS`` or shorter, rules then empty, then
empty then rules, ...) so that both meet the same load from whatever else the machine runs: one
after the other, each rate met the load of its own seconds.

The last line is JSON: ``calls_per_second``, ``p50_ms``, ``p99_ms``, ``empty_calls_per_second``,
``ratio_vs_empty``, ``errors``; and, because the rates swing with whatever else the machine runs,
what each server process spent on the processor per call while it was measured
(``server_cpu_us_per_call``, ``empty_server_cpu_us_per_call``, their ``cpu_ratio_vs_empty``; read
from ``/proc``, null where there is none), the share of a processor each spent
(``server_busy``, ``empty_server_busy``: once a server's share stops growing with more calls in
flight it is saturated) and the load average before and after (``load_before``, ``load_after``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import grpc.aio

from okey101.bench.solver_bench import percentile
from okey101.engine.actions import Discard
from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.rules import RuleSet
from okey101.stack import free_port, wait_serving

EMPTY_METHOD = "/okey.bench.Empty/Call"


@contextlib.contextmanager
def process(
    args: list[str], env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """A child process, stopped with SIGTERM (then killed) when the block ends."""
    child = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield child
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def cpu_seconds(pid: int) -> float | None:
    """The processor time (user and system) process ``pid`` has used so far, from ``/proc``;
    None where it cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Fields 14 and 15 (utime, stime), counted after the command name's closing parenthesis.
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure_cpu(
    pid: int, call: Callable[[], Awaitable[Any]], concurrency: int, seconds: float
) -> tuple[int, list[float], int, float | None]:
    """``measure``, and the microseconds of processor time process ``pid`` spent per call."""
    before = cpu_seconds(pid)
    count, latencies, errors = await measure(call, concurrency, seconds)
    after = cpu_seconds(pid)
    if before is None or after is None or not count:
        return count, latencies, errors, None
    return count, latencies, errors, (after - before) / count * 1e6


def _load() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


async def measure(
    call: Callable[[], Awaitable[Any]], concurrency: int, seconds: float
) -> tuple[int, list[float], int]:
    """Calls completed, their latencies (ms) and errors, with ``concurrency`` calls in flight."""
    latencies: list[float] = []
    errors = 0
    stop_at = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal errors
        while time.perf_counter() < stop_at:
            began = time.perf_counter()
            try:
                await call()
            except grpc.aio.AioRpcError:
                errors += 1
                continue
            latencies.append((time.perf_counter() - began) * 1000)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return len(latencies), latencies, errors


def _apply_request(seed: int) -> Any:
    from okey.v1 import rules_pb2

    from okey101.platform import convert

    state = deal(RuleSet.preset("oyna"), 0, shuffled_deck(random.Random(seed)))
    discard = Discard(state.seats[state.turn].rack[0])
    return rules_pb2.ApplyActionRequest(
        state=convert.hand_state_to_proto(state),
        seat=state.turn,
        actions=[convert.action_to_proto(discard)],
    )


#: The longest window one server is measured in before the other one's turn.
WINDOW_SECONDS: Final = 0.5

APPLY_ACTION_METHOD: Final = "/okey.v1.RulesService/ApplyAction"


class _Tally:
    """One server's calls, latencies, errors and processor time over its windows."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.count = 0
        self.latencies: list[float] = []
        self.errors = 0
        self.cpu: float | None = 0.0

    async def window(
        self, call: Callable[[], Awaitable[Any]], concurrency: int, seconds: float
    ) -> None:
        before = cpu_seconds(self.pid)
        count, latencies, errors = await measure(call, concurrency, seconds)
        after = cpu_seconds(self.pid)
        self.count += count
        self.latencies.extend(latencies)
        self.errors += errors
        if before is None or after is None or self.cpu is None:
            self.cpu = None
        else:
            self.cpu += after - before

    def cpu_us_per_call(self) -> float | None:
        if self.cpu is None or not self.count:
            return None
        return self.cpu / self.count * 1e6

    def busy(self, seconds: float) -> float | None:
        return None if self.cpu is None else self.cpu / seconds


async def _run(seconds: float, concurrency: int, seed: int) -> dict[str, object]:
    from okey.v1 import rules_pb2

    from okey101.platform.auth import TokenIssuer, dev_signing_key

    request = _apply_request(seed)
    payload = request.SerializeToString()
    windows = max(1, math.ceil(seconds / WINDOW_SECONDS))
    window = seconds / windows
    with tempfile.TemporaryDirectory(prefix="okey101-bench-") as var_dir:
        key = dev_signing_key(Path(var_dir))  # the service finds and uses this same key
        token = TokenIssuer(key).issue("bench", "service", ttl_seconds=3600)
        metadata = (("authorization", f"Bearer {token}"),)
        rules_port, metrics_port, empty_port = free_port(), free_port(), free_port()
        env = {**os.environ, "OKEY_LOG_LEVEL": "warning"}
        rules_args = [
            sys.executable, "-m", "okey101.cli", "serve", "rules",
            "--port", str(rules_port), "--metrics-port", str(metrics_port),
            "--var-dir", var_dir,
        ]  # fmt: skip
        rules_target = f"127.0.0.1:{rules_port}"
        empty_target = f"127.0.0.1:{empty_port}"
        with process(rules_args, env) as rules_process:
            await wait_serving(rules_target)
            async with grpc.aio.insecure_channel(rules_target) as rules_channel:
                # Bytes in, bytes out, as the empty call: the answer is not parsed.
                apply: Any = rules_channel.unary_unary(APPLY_ACTION_METHOD)
                first = await apply(payload, metadata=metadata, timeout=5)
                answer = rules_pb2.ApplyActionResponse.FromString(first)
                if answer.state.turn == request.state.turn:
                    raise RuntimeError("ApplyAction did not pass the turn: the bench is wrong")
                empty_args = [
                    sys.executable, "-m", "okey101.bench.empty_server",
                    str(empty_port), str(len(first)),
                ]  # fmt: skip
                with process(empty_args, env) as empty:
                    await wait_serving(empty_target)
                    async with grpc.aio.insecure_channel(empty_target) as empty_channel:
                        echo: Any = empty_channel.unary_unary(EMPTY_METHOD)

                        async def apply_action() -> Any:
                            return await apply(payload, metadata=metadata, timeout=5)

                        async def empty_call() -> Any:
                            return await echo(payload, metadata=metadata, timeout=5)

                        rules = _Tally(rules_process.pid)
                        floor = _Tally(empty.pid)
                        await empty_call()
                        load_before = _load()
                        for index in range(windows):
                            turns = [(rules, apply_action), (floor, empty_call)]
                            for tally, call in turns if index % 2 == 0 else turns[::-1]:
                                await tally.window(call, concurrency, window)
                        load_after = _load()
    cpu_us = rules.cpu_us_per_call()
    empty_cpu_us = floor.cpu_us_per_call()
    calls_per_second = rules.count / seconds
    empty_per_second = floor.count / seconds
    return {
        "calls_per_second": round(calls_per_second, 1),
        "p50_ms": round(percentile(rules.latencies, 50), 3),
        "p99_ms": round(percentile(rules.latencies, 99), 3),
        "empty_calls_per_second": round(empty_per_second, 1),
        "ratio_vs_empty": round(calls_per_second / empty_per_second, 3) if empty_per_second else 0,
        "errors": rules.errors + floor.errors,
        "concurrency": concurrency,
        "seconds": seconds,
        "windows": windows,
        "request_bytes": len(payload),
        "answer_bytes": len(first),
        "server_cpu_us_per_call": _rounded(cpu_us),
        "empty_server_cpu_us_per_call": _rounded(empty_cpu_us),
        "cpu_ratio_vs_empty": (
            round(empty_cpu_us / cpu_us, 3) if cpu_us and empty_cpu_us is not None else None
        ),
        "server_busy": _share(rules.busy(seconds)),
        "empty_server_busy": _share(floor.busy(seconds)),
        "load_before": load_before,
        "load_after": load_after,
    }


def _share(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def main(seconds: float, concurrency: int, seed: int, as_json: bool) -> int:
    figures = asyncio.run(_run(seconds, concurrency, seed))
    print(
        f"rules ApplyAction: {figures['calls_per_second']} calls/s, p50 {figures['p50_ms']} ms, "
        f"p99 {figures['p99_ms']} ms ({figures['concurrency']} in flight, "
        f"{figures['seconds']} s in {figures['windows']} windows, {figures['request_bytes']} "
        f"bytes a request, {figures['answer_bytes']} an answer)"
    )
    print(
        f"empty gRPC service: {figures['empty_calls_per_second']} calls/s; "
        f"ratio {figures['ratio_vs_empty']}; errors {figures['errors']}"
    )
    print(
        f"server processor time a call: rules {figures['server_cpu_us_per_call']} us, "
        f"empty {figures['empty_server_cpu_us_per_call']} us (ratio "
        f"{figures['cpu_ratio_vs_empty']}); busy {figures['server_busy']} and "
        f"{figures['empty_server_busy']} of a processor; load average "
        f"{figures['load_before']} before, {figures['load_after']} after"
    )
    if as_json:
        print(json.dumps(figures))
    return 1 if figures["errors"] else 0
