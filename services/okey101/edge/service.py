"""``okey101 serve edge``: the edge's process (uvicorn serving ``app.EdgeApp``).

It listens on ``host:port`` (8080 by default; 0 picks a free port, logged in the ``serving``
line with the bound port), serves ``/metrics`` on its metrics port (9107) under the gRPC
servers' metric names, and forwards every public RPC to its service (``forward.Forwarder``).

Its HTTP server is bounded (``connections``): the time to send a request's headers and body,
an idle keep-alive connection's life, the connections held at once (``http_*`` settings).

On SIGTERM or SIGINT: ``/readyz`` turns 503 and calls are still accepted for
``drain_seconds`` (load balancers notice); then open streams end with UNAVAILABLE
``SERVER_SHUTTING_DOWN`` (clients reconnect elsewhere, as from a draining table), the listener
closes, calls in flight get ``grace_seconds`` to finish, and the process exits 0. A second
signal stops at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import signal
from collections.abc import Iterator
from typing import Any

import uvicorn

from okey101.edge.app import EdgeApp, Origins
from okey101.edge.connections import HttpLimits, bounded_protocol
from okey101.edge.forward import Forwarder
from okey101.platform import collector
from okey101.platform.addresses import TrustedProxies
from okey101.platform.config import PEERS, ConfigError, Settings
from okey101.platform.logs import get_logger
from okey101.platform.metrics import (
    GarbageCollectorWatch,
    start_metrics_server,
    watch_event_loop_lag,
)

NAME = "edge"


class _Server(uvicorn.Server):
    """uvicorn without its own signal handling: the drain below is ours."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve_edge(settings: Settings) -> None:
    """Serve until SIGTERM or SIGINT, then drain and stop (module docstring)."""
    log = get_logger(service=NAME)
    draining = asyncio.Event()
    addresses = {peer: getattr(settings, f"{peer}_address") for peer in PEERS}
    try:
        trusted = TrustedProxies.from_env()
    except ValueError as error:
        raise ConfigError(str(error)) from None
    forwarder = Forwarder(addresses, log, draining)
    app = EdgeApp(
        forwarder.endpoints(),
        Origins(settings.cors_origins, local_mode=settings.local_mode),
        settings.web_dir,
        ready=lambda: not draining.is_set(),
        trusted=trusted,
    )
    server = _Server(uvicorn_config(app, settings))
    metrics_server = start_metrics_server(settings.host, settings.metrics_port)
    watch = GarbageCollectorWatch(log, warn=False)  # warned of once serving
    watch.install()
    lag = asyncio.ensure_future(watch_event_loop_lag(log))
    serving = asyncio.ensure_future(server.serve())
    try:
        while not server.started:
            if serving.done():
                serving.result()  # the reason it could not start (a taken port)
                return
            await asyncio.sleep(0.02)
        collector.settle()
        watch.serving()
        port = _bound_port(server)
        log.info(
            "serving",
            port=port,
            metrics_port=metrics_server.port,
            url=f"http://{settings.host}:{port}",
        )
        await _until_signalled(log, server)
        draining.set()
        log.info("draining", seconds=settings.drain_seconds)
        await asyncio.sleep(settings.drain_seconds)
        server.should_exit = True
        await serving
        log.info("stopped")
    finally:
        lag.cancel()
        watch.remove()
        await forwarder.close()
        metrics_server.close()


def uvicorn_config(app: EdgeApp, settings: Settings) -> uvicorn.Config:
    """uvicorn's configuration of the edge: its address, its bounds, no logging of its own."""
    host = settings.host.strip("[]") or "0.0.0.0"
    limits = HttpLimits(
        header_seconds=settings.http_header_timeout_seconds,
        body_seconds=settings.http_body_timeout_seconds,
        max_connections=settings.http_max_connections,
    )
    return uvicorn.Config(
        app,
        host="::" if host == "::" else host,
        port=settings.port,
        log_config=None,
        access_log=False,
        lifespan="off",
        # Not uvicorn's X-Forwarded-For reading (it believes 127.0.0.1 by default): the
        # client's address is EdgeApp's, from OKEY_TRUSTED_PROXIES.
        proxy_headers=False,
        # httptools, the C parser (pinned): h11's pure Python costs ~0.5 ms a call. Bounded
        # with the limits uvicorn lacks (``connections``).
        http=bounded_protocol(limits),
        timeout_graceful_shutdown=max(math.ceil(settings.grace_seconds), 1),
        # uvicorn's own idle keep-alive bound (whole seconds).
        timeout_keep_alive=max(math.ceil(settings.http_keep_alive_seconds), 1),
    )


def _bound_port(server: uvicorn.Server) -> int:
    for listener in server.servers:
        for sock in listener.sockets:
            return int(sock.getsockname()[1])
    return 0


async def _until_signalled(log: Any, server: uvicorn.Server) -> None:
    loop = asyncio.get_running_loop()
    signalled = asyncio.Event()

    def on_signal(number: int) -> None:
        if signalled.is_set():
            log.warning("second signal: stopping now", signal=signal.Signals(number).name)
            server.force_exit = True
            server.should_exit = True
            return
        log.info("signal received", signal=signal.Signals(number).name)
        signalled.set()

    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, on_signal, number)
    await signalled.wait()


__all__ = ["NAME", "serve_edge"]
