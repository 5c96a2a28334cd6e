"""An empty grpc.aio service for ``bench rules``: every call answers with its request, or with
``ANSWER_BYTES`` bytes when given.

    python -m okey101.bench.empty_server PORT [ANSWER_BYTES]

It serves the standard health service (so the bench can wait for it) and ``/okey.bench.Empty/Call``
with no interceptors, no auth and no work: the floor a real service is measured against. With
``ANSWER_BYTES`` (the size of the real service's answer) the floor carries the same traffic as
the service it is compared with. It stops on SIGTERM.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any

import grpc
import grpc.aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc


async def _echo(request: bytes, context: Any) -> bytes:
    return request


def _answering(answer: bytes) -> Any:
    async def call(request: bytes, context: Any) -> bytes:
        return answer

    return call


async def serve(port: int, answer_bytes: int | None = None) -> None:
    server = grpc.aio.server()
    behaviour = _echo if answer_bytes is None else _answering(bytes(answer_bytes))
    handler = grpc.method_handlers_generic_handler(
        "okey.bench.Empty", {"Call": grpc.unary_unary_rpc_method_handler(behaviour)}
    )
    server.add_generic_rpc_handlers((handler,))
    checks = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(checks, server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await checks.set("", health_pb2.HealthCheckResponse.SERVING)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    await stopping.wait()
    await server.stop(1)


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else None))
