"""Prometheus metrics under the gRPC ecosystem's standard names, served on their own port.

The server metrics are those of go-grpc-prometheus / grpc-ecosystem (dashboards for them work):

| metric | labels |
| --- | --- |
| ``grpc_server_started_total`` | grpc_type, grpc_service, grpc_method |
| ``grpc_server_handled_total`` | grpc_type, grpc_service, grpc_method, grpc_code |
| ``grpc_server_handling_seconds`` (histogram) | grpc_type, grpc_service, grpc_method |
| ``grpc_server_msg_sent_total`` | grpc_type, grpc_service, grpc_method |

``grpc_type`` is unary, client_stream, server_stream or bidi_stream; ``grpc_code`` the status
name (``OK``, ``INVALID_ARGUMENT``, ...). Labels are method names and codes only: never a player,
table or hand id (each would be a time series of its own). Game metrics of the services register
on the same default registry and are served by the same endpoint.
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any, Final

import prometheus_client
from prometheus_client import Counter, Histogram

from okey101.platform.http_server import HttpServer, serve_wsgi

LATENCY_BUCKETS: Final = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)  # fmt: skip

_LABELS = ("grpc_type", "grpc_service", "grpc_method")

STARTED: Final = Counter("grpc_server_started_total", "RPCs started on the server.", _LABELS)
HANDLED: Final = Counter(
    "grpc_server_handled_total",
    "RPCs completed on the server, whatever their status.",
    (*_LABELS, "grpc_code"),
)
HANDLING_SECONDS: Final = Histogram(
    "grpc_server_handling_seconds",
    "Time from an RPC's start to its end on the server.",
    _LABELS,
    buckets=LATENCY_BUCKETS,
)
MSG_SENT: Final = Counter(
    "grpc_server_msg_sent_total", "Stream messages sent by the server.", _LABELS
)

EVENT_LOOP_LAG_SECONDS: Final = Histogram(
    "okey_event_loop_lag_seconds",
    "How late the event loop woke a task asked to sleep 0.1 s: time it spent on other work, "
    "blocked, or waiting for a processor. Every call the service answers waits as long.",
    buckets=LATENCY_BUCKETS,
)
GC_PAUSE_SECONDS: Final = Histogram(
    "okey_gc_pause_seconds",
    "How long each of Python's garbage collections held the process, by generation (0, 1, or "
    "2: a full collection, whose cost grows with everything the process keeps).",
    ("generation",),
    buckets=LATENCY_BUCKETS,
)
#: A collection this long (seconds) is logged as a warning: a stall of every call in flight.
GC_WARNING_SECONDS: Final = 0.1

#: Sleep asked for between two readings of the event loop's lag.
LAG_INTERVAL_SECONDS: Final = 0.1
#: A lag this long (seconds) is logged as a warning, with its time: a stall to account for.
LAG_WARNING_SECONDS: Final = 0.5

# The ecosystem's series have no *_created companions.
prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]


#: The server of ``/metrics`` (``start_metrics_server``).
MetricsServer = HttpServer


def start_metrics_server(host: str, port: int) -> MetricsServer:
    """Serve the default registry over HTTP at ``host:port`` in a daemon thread."""
    return serve_wsgi(host, port, prometheus_client.make_wsgi_app(), name="metrics")


class GarbageCollectorWatch:
    """Times each garbage collection into ``okey_gc_pause_seconds`` (a ``gc.callbacks``
    entry), and logs one long enough to be a stall."""

    def __init__(self, log: Any, *, warn: bool = True) -> None:
        self._log = log
        self._began = 0.0
        self._pauses = [GC_PAUSE_SECONDS.labels(str(generation)) for generation in range(3)]
        self._warn = warn

    def serving(self) -> None:
        """Warn of long collections from now on. A watch made with ``warn=False`` only times
        the collections of a service starting (loading modules, migrating, its deliberate full
        collection before it serves): they hold up no call."""
        self._warn = True

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
            return
        pause = time.perf_counter() - self._began
        generation = info.get("generation", 0)
        self._pauses[min(max(generation, 0), 2)].observe(pause)
        if pause >= GC_WARNING_SECONDS and self._warn:
            self._log.warning(
                "garbage collection held up the process",
                generation=generation,
                pause_ms=round(pause * 1000),
                collected=info.get("collected", 0),
            )

    def install(self) -> None:
        gc.callbacks.append(self)

    def remove(self) -> None:
        if self in gc.callbacks:
            gc.callbacks.remove(self)


async def watch_event_loop_lag(log: Any) -> None:
    """Measure the event loop's lag into ``okey_event_loop_lag_seconds`` until cancelled."""
    loop = asyncio.get_running_loop()
    while True:
        asked = loop.time()
        await asyncio.sleep(LAG_INTERVAL_SECONDS)
        lag = max(0.0, loop.time() - asked - LAG_INTERVAL_SECONDS)
        EVENT_LOOP_LAG_SECONDS.observe(lag)
        if lag >= LAG_WARNING_SECONDS:
            log.warning("event loop held up", lag_ms=round(lag * 1000))
