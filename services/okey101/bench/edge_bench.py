"""``okey101 bench edge``: what the edge's hop costs a call, against the same call made directly.

Starts the lobby and rules services and the edge on free ports (local mode), logs a guest in,
then makes ``calls`` sequential ``RulesService/ResolveRuleSet`` calls with the player's token
(a cheap call, so the hop's share shows) three ways: straight to the rules service over gRPC,
through the edge as Connect binary (``application/proto``) and as Connect JSON, each over one
kept-alive HTTP/1.1 connection. For each: the median and 99th-percentile latency seen by the
caller, and the CPU time per call of the edge process and of the rules process (from
/proc/PID/stat, so Linux only).
"""

from __future__ import annotations

import http.client
import json
import os
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

import grpc
from okey.v1 import common_pb2, rules_pb2, rules_pb2_grpc

from okey101.stack import LocalStack, local_stack, start_edge

PATH = "/okey.v1.RulesService/ResolveRuleSet"


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rpartition(")")[2].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


def _measure(stack: LocalStack, calls: int, call: Callable[[], None]) -> dict[str, float]:
    for _ in range(min(200, calls)):  # warm up connections and caches
        call()
    edge, rules = stack.services["edge"].process.pid, stack.services["rules"].process.pid
    edge_before, rules_before = _cpu_seconds(edge), _cpu_seconds(rules)
    latencies = []
    for _ in range(calls):
        began = time.perf_counter()
        call()
        latencies.append(time.perf_counter() - began)
    edge_cpu = _cpu_seconds(edge) - edge_before
    rules_cpu = _cpu_seconds(rules) - rules_before
    latencies.sort()
    return {
        "median_us": round(statistics.median(latencies) * 1e6, 1),
        "p99_us": round(latencies[int(len(latencies) * 0.99) - 1] * 1e6, 1),
        "edge_cpu_us_per_call": round(edge_cpu / calls * 1e6, 1),
        "rules_cpu_us_per_call": round(rules_cpu / calls * 1e6, 1),
    }


def run(calls: int) -> dict[str, Any]:
    with local_stack(services=("rules", "lobby")) as stack:
        port = start_edge(stack).port
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        login = json.dumps(
            {"requestId": str(uuid.uuid4()), "deviceId": "bench-edge", "displayName": "Bench"}
        )
        connection.request(
            "POST",
            "/okey.v1.LobbyService/LoginGuest",
            body=login,
            headers={"Content-Type": "application/json"},
        )
        token = json.loads(connection.getresponse().read())["tokens"]["accessToken"]
        request = rules_pb2.ResolveRuleSetRequest(
            rules=common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_OYNA)
        )
        binary = request.SerializeToString()
        as_json = json.dumps({"rules": {"preset": "RULE_PRESET_OYNA"}}).encode()
        headers = {"Authorization": f"Bearer {token}"}

        def over_http(body: bytes, content_type: str) -> Callable[[], None]:
            def call() -> None:
                connection.request(
                    "POST", PATH, body=body, headers={**headers, "Content-Type": content_type}
                )
                answer = connection.getresponse()
                answer.read()
                if answer.status != 200:
                    raise RuntimeError(f"the edge answered {answer.status}")

            return call

        channel = grpc.insecure_channel(stack.address("rules"))
        stub: Any = rules_pb2_grpc.RulesServiceStub(channel)
        metadata = (("authorization", f"Bearer {token}"),)

        def direct() -> None:
            stub.ResolveRuleSet(request, metadata=metadata, timeout=30)

        try:
            figures = {
                "direct_grpc": _measure(stack, calls, direct),
                "edge_connect_proto": _measure(
                    stack, calls, over_http(binary, "application/proto")
                ),
                "edge_connect_json": _measure(stack, calls, over_http(as_json, "application/json")),
            }
        finally:
            channel.close()
            connection.close()
    direct_median = figures["direct_grpc"]["median_us"]
    for name in ("edge_connect_proto", "edge_connect_json"):
        figures[name]["added_median_us"] = round(figures[name]["median_us"] - direct_median, 1)
    return {"calls": calls, "rpc": PATH, **figures}


def main(calls: int, as_json: bool) -> int:
    summary = run(calls)
    print(f"bench edge: {calls} sequential {PATH} calls each way")
    for name in ("direct_grpc", "edge_connect_proto", "edge_connect_json"):
        row = summary[name]
        added = f"  (+{row['added_median_us']} µs)" if "added_median_us" in row else ""
        print(
            f"  {name:<20} median {row['median_us']:>8} µs{added}  p99 {row['p99_us']:>8} µs  "
            f"edge CPU {row['edge_cpu_us_per_call']:>7} µs/call  "
            f"rules CPU {row['rules_cpu_us_per_call']:>7} µs/call"
        )
    if as_json:
        print(json.dumps(summary))
    return 0


__all__ = ["main", "run"]
