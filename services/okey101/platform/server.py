"""``serve()``: the one way every service starts.

    def register(server: grpc.aio.Server) -> list[str]:
        rules_pb2_grpc.add_RulesServiceServicer_to_server(RulesServicer(), server)
        return ["okey.v1.RulesService"]

    async def serve_rules(settings: Settings) -> None:
        await serve("rules", register, settings, access=ACCESS)

    sys.exit(run_serving("rules", load_settings("rules", args), serve_rules))  # okey101 serve

What a service gets:

- a ``grpc.aio`` server on ``host:port`` (port 0 picks a free one, and the bound port is logged
  and on ``ServerHandle.port``) with keepalive, a maximum connection age (so a scaled-up
  deployment's new pods get connections) and ``SO_REUSEPORT`` off (a taken port is an error);
- interceptors, outermost first: traces (when configured), ``ObservabilityInterceptor``
  (metrics, the log line, error mapping, draining streams), ``AuthInterceptor``;
- the health service: NOT_SERVING until ``register`` and ``ready`` are done, then SERVING for
  ``""`` and for each service name; NOT_SERVING again from the start of a drain;
- reflection as ``grpc.reflection.v1`` and ``v1alpha`` (``platform.reflection``), listing the
  service names, health and both reflection services;
- ``/metrics`` over HTTP on the metrics port;
- where the service asks for it, the lobby's revoked logins followed every
  ``revocation_poll_seconds`` (``platform.revocation_follower``): their tokens refused, their
  streams ended.

On SIGTERM or SIGINT: health goes NOT_SERVING and calls are still accepted for
``drain_seconds`` (load balancers and Kubernetes notice); then open streams are ended with
UNAVAILABLE ``SERVER_SHUTTING_DOWN`` (clients reconnect elsewhere), new calls are refused,
in-flight calls get ``grace_seconds`` to finish, and the process exits 0. A second signal stops
at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from types import TracebackType
from typing import Any

import grpc
import grpc.aio
import uvloop
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from okey101.platform import collector
from okey101.platform.auth import AccessPolicy, AuthInterceptor, JwksVerifier, verifier_for
from okey101.platform.config import ConfigError, Settings
from okey101.platform.handlers import TRANSPORT_METADATA_BYTES, TRANSPORT_RECEIVE_BYTES
from okey101.platform.interceptors import Drain, ObservabilityInterceptor
from okey101.platform.logs import configure_logging, get_logger
from okey101.platform.metrics import (
    GarbageCollectorWatch,
    MetricsServer,
    start_metrics_server,
    watch_event_loop_lag,
)
from okey101.platform.reflection import enable_reflection
from okey101.platform.revocation_follower import RevocationFollower, RevocationSource
from okey101.platform.tracing import Tracing, setup_tracing

#: ``register(server)`` adds a service's servicers and returns their full service names.
Register = Callable[[grpc.aio.Server], Iterable[str]]
#: Awaited after the port is bound and before health turns SERVING (migrations, warm-up).
Ready = Callable[[], Awaitable[object]]

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def server_options(settings: Settings) -> list[tuple[str, Any]]:
    """The channel arguments of every server."""
    options: list[tuple[str, Any]] = [
        ("grpc.so_reuseport", 0),
        ("grpc.keepalive_time_ms", 60_000),
        ("grpc.keepalive_timeout_ms", 20_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_recv_ping_interval_without_data_ms", 10_000),
        ("grpc.http2.max_ping_strikes", 2),
        # Above the platform's own limit, which answers with a reason (``handlers``).
        ("grpc.max_receive_message_length", TRANSPORT_RECEIVE_BYTES),
        ("grpc.max_metadata_size", TRANSPORT_METADATA_BYTES),
        ("grpc.absolute_max_metadata_size", TRANSPORT_METADATA_BYTES),
    ]
    if settings.max_connection_age_seconds > 0:
        options += [
            ("grpc.max_connection_age_ms", int(settings.max_connection_age_seconds * 1000)),
            ("grpc.max_connection_age_grace_ms", int(settings.grace_seconds * 1000)),
        ]
    return options


class ServerHandle:
    """A started service: its ports, its health, and a graceful ``stop``.

    ``serve()`` uses one; tests start one in-process on port 0::

        async with await ServerHandle.start("t", register, settings_for_tests()) as handle:
            channel = grpc.aio.insecure_channel(handle.target)
    """

    def __init__(
        self,
        name: str,
        settings: Settings,
        server: grpc.aio.Server,
        health_servicer: health.aio.HealthServicer,
        drain: Drain,
        tracing: Tracing,
        logger: Any,
    ) -> None:
        self.name = name
        self.settings = settings
        self.server = server
        self.health = health_servicer
        self.service_names: tuple[str, ...] = ()
        self.port = 0
        self.metrics: MetricsServer | None = None
        self._drain = drain
        self._tracing = tracing
        self._log = logger
        self._stopping: asyncio.Task[None] | None = None
        self._lag_watch: asyncio.Task[None] | None = None
        self._gc_watch: GarbageCollectorWatch | None = None
        self._revocations: RevocationFollower | None = None

    @classmethod
    async def start(
        cls,
        name: str,
        register: Register,
        settings: Settings,
        *,
        ready: Ready | None = None,
        access: AccessPolicy | None = None,
        verifier: JwksVerifier | None = None,
        revocations: RevocationSource | None = None,
        routine: frozenset[str] = frozenset(),
    ) -> ServerHandle:
        """Build, bind and start the service; SERVING once ``ready`` has returned. Revoked
        logins are followed from ``revocations`` when given (the lobby's database, or the lobby
        for the table), every ``revocation_poll_seconds`` (never when 0). The ``routine``
        methods (full names) log their calls at debug, as health checks do."""
        configure_logging(settings.log_format, settings.log_level)
        log = get_logger(service=name)
        verifier = verifier if verifier is not None else verifier_for(settings)
        if verifier.key_ids == frozenset():
            await verifier.refresh()
        tracing = setup_tracing(name)
        drain = Drain()
        server = grpc.aio.server(
            interceptors=[
                *tracing.interceptors,
                ObservabilityInterceptor(log, drain, routine),
                AuthInterceptor(access if access is not None else AccessPolicy(), verifier),
            ],
            options=server_options(settings),
        )
        health_servicer = health.aio.HealthServicer()
        await health_servicer.set("", NOT_SERVING)
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        handle = cls(name, settings, server, health_servicer, drain, tracing, log)
        handle.service_names = tuple(register(server))
        enable_reflection([*handle.service_names, health.SERVICE_NAME], server)
        for service in handle.service_names:
            await health_servicer.set(service, NOT_SERVING)
        address = f"{settings.host}:{settings.port}"
        try:
            handle.port = server.add_insecure_port(address)
        except RuntimeError as exc:
            raise ConfigError(f"cannot listen on {address}: {exc}") from None
        try:
            handle.metrics = start_metrics_server(settings.host, settings.metrics_port)
        except OSError as exc:
            raise ConfigError(
                f"cannot serve metrics on {settings.host}:{settings.metrics_port}: {exc}"
            ) from None
        await server.start()
        handle._lag_watch = asyncio.create_task(watch_event_loop_lag(log))
        # Collections while it starts hold up no call: timed, not warned of (``serving``).
        gc_watch = handle._gc_watch = GarbageCollectorWatch(log, warn=False)
        gc_watch.install()
        try:
            if ready is not None:
                await ready()
        except BaseException:
            await handle._shutdown(grace=0)
            raise
        if revocations is not None and settings.revocation_poll_seconds > 0:
            handle._revocations = RevocationFollower.start(
                verifier.revocations, revocations, settings.revocation_poll_seconds, log
            )
        collector.settle()  # what it loaded to start frozen; full collections spaced out
        gc_watch.serving()
        for service in ("", *handle.service_names):
            await health_servicer.set(service, SERVING)
        log.info(
            "serving",
            host=settings.host,
            port=handle.port,
            metrics_port=handle.metrics.port,
            services=list(handle.service_names),
            local_mode=settings.local_mode,
            traces=tracing.enabled,
        )
        return handle

    @property
    def target(self) -> str:
        """Where a client on this machine reaches the server (``127.0.0.1:PORT``)."""
        host = self.settings.host
        if host in ("", "0.0.0.0", "[::]", "::"):
            host = "127.0.0.1"
        return f"{host}:{self.port}"

    @property
    def metrics_port(self) -> int:
        return self.metrics.port if self.metrics is not None else 0

    @property
    def draining(self) -> bool:
        return self._stopping is not None

    def stop(self, grace: float | None = None) -> asyncio.Task[None]:
        """Drain and stop (see the module docstring); the task is the same on every call."""
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._drain_and_stop(grace))
        return self._stopping

    async def stop_now(self) -> None:
        """Stop at once: every call still running is cancelled."""
        if self._lag_watch is not None:
            self._lag_watch.cancel()
        await self.server.stop(None)

    async def wait_stopped(self) -> None:
        """Wait for ``stop()`` to be asked for and to finish."""
        await self.server.wait_for_termination()
        if self._stopping is not None:
            await self._stopping

    async def _drain_and_stop(self, grace: float | None) -> None:
        grace = self.settings.grace_seconds if grace is None else grace
        await self.health.enter_graceful_shutdown()
        self._log.info("draining", drain_seconds=self.settings.drain_seconds, grace_seconds=grace)
        if self.settings.drain_seconds > 0:
            await asyncio.sleep(self.settings.drain_seconds)
        await self._shutdown(grace)
        self._log.info("stopped")

    async def _shutdown(self, grace: float) -> None:
        self._drain.close_streams()
        began = asyncio.get_running_loop().time()
        await self._drain.until_idle(grace)
        left = max(0.0, grace - (asyncio.get_running_loop().time() - began))
        await self.server.stop(left)
        if self._lag_watch is not None:
            self._lag_watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._lag_watch
            self._lag_watch = None
        if self._gc_watch is not None:
            self._gc_watch.remove()
            self._gc_watch = None
        if self._revocations is not None:
            await self._revocations.stop()
            self._revocations = None
        if self.metrics is not None:
            await asyncio.to_thread(self.metrics.close)
            self.metrics = None
        self._tracing.shutdown()

    async def __aenter__(self) -> ServerHandle:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()


async def serve(
    name: str,
    register: Register,
    settings: Settings,
    *,
    ready: Ready | None = None,
    access: AccessPolicy | None = None,
    revocations: RevocationSource | None = None,
) -> None:
    """Run the service until SIGTERM or SIGINT, then drain and stop (module docstring)."""
    handle = await ServerHandle.start(
        name, register, settings, ready=ready, access=access, revocations=revocations
    )
    await until_signalled(handle)


async def until_signalled(
    handle: ServerHandle, stop: Callable[[], Awaitable[object]] | None = None
) -> None:
    """Wait for SIGTERM or SIGINT, then ``stop()`` (by default the handle's drain and stop; a
    service with more to close, such as the lobby, passes its own). A second signal stops the
    handle at once."""
    loop = asyncio.get_running_loop()
    signalled = asyncio.Event()
    pending: set[asyncio.Future[None]] = set()

    def on_signal(number: int) -> None:
        if signalled.is_set():
            handle._log.warning("second signal: stopping now", signal=signal.Signals(number).name)
            pending.add(asyncio.ensure_future(handle.stop_now()))
            return
        handle._log.info("signal received", signal=signal.Signals(number).name)
        signalled.set()

    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, on_signal, number)
    try:
        await signalled.wait()
        await (stop() if stop is not None else handle.stop())
    finally:
        for number in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(ValueError, RuntimeError):
                loop.remove_signal_handler(number)


def run_serving(
    name: str, settings: Settings, serving: Callable[[Settings], Coroutine[Any, Any, None]]
) -> int:
    """``serving(settings)`` (a service's coroutine that ends with ``until_signalled``) in its
    own event loop: the exit status, 0 after a graceful stop, 1 if the service could not start
    (with the reason logged). What ``okey101 serve SERVICE`` runs, for every service."""
    # First: every line the process writes, from the first, follows its log format.
    configure_logging(settings.log_format, settings.log_level)
    # uvloop by default: the same work costs a served process less processor time than on
    # asyncio's own loop (docs/performance.md, issue #35); gRPC, asyncpg and the HTTP servers
    # run on either.
    loop_factory = uvloop.new_event_loop if settings.event_loop == "uvloop" else None
    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(serving(settings))
    except ConfigError as exc:
        get_logger(service=name).error("cannot start", reason=str(exc))
        return 1
    return 0


def run(
    name: str,
    register: Register,
    settings: Settings,
    *,
    ready: Ready | None = None,
    access: AccessPolicy | None = None,
) -> int:
    """``serve()`` in its own event loop (``run_serving``): the exit status."""

    async def serving(settings: Settings) -> None:
        await serve(name, register, settings, ready=ready, access=access)

    return run_serving(name, settings, serving)
