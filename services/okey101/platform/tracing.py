"""OpenTelemetry traces across the hops, only when an exporter is configured.

Traces are on when the standard ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set and the OTLP exporter is installed
(``pip install 'okey101[otlp]'``); the exporter reads the other standard ``OTEL_*`` variables
itself. Then the server gets a tracing interceptor (health and reflection left out) and every
``grpc.aio`` channel the service opens carries the trace on to the next service. Otherwise
nothing is instrumented and tracing costs nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import grpc.aio

from okey101.platform.logs import get_logger

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")

_log = get_logger(component="tracing")


@dataclass
class Tracing:
    """The server interceptors tracing adds (none when off) and how to flush it at exit."""

    interceptors: list[grpc.aio.ServerInterceptor] = field(default_factory=list)
    _provider: Any = None

    @property
    def enabled(self) -> bool:
        return self._provider is not None

    def shutdown(self) -> None:
        """Flush the spans still buffered."""
        if self._provider is not None:
            self._provider.shutdown()
            self._provider = None


def setup_tracing(service: str, environ: Mapping[str, str] | None = None) -> Tracing:
    """Tracing for ``service`` as the environment configures it (see the module docstring)."""
    env = os.environ if environ is None else environ
    endpoint = next((env[name] for name in ENDPOINT_VARIABLES if env.get(name)), None)
    if endpoint is None:
        return Tracing()
    try:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # type: ignore[import-not-found,unused-ignore]
            OTLPSpanExporter,
        )
    except ImportError:
        _log.warning(
            "traces are off: OTEL_EXPORTER_OTLP_ENDPOINT is set but the OTLP exporter is not "
            "installed (pip install 'okey101[otlp]')",
            endpoint=endpoint,
        )
        return Tracing()
    from opentelemetry import trace
    from opentelemetry.instrumentation.grpc import (
        GrpcAioInstrumentorClient,
        aio_server_interceptor,
        filters,
    )
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({SERVICE_NAME: env.get("OTEL_SERVICE_NAME") or f"okey101-{service}"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    client = GrpcAioInstrumentorClient()  # type: ignore[no-untyped-call]
    if not client.is_instrumented_by_opentelemetry:
        client.instrument(tracer_provider=provider)
    skip = filters.negate(
        filters.any_of(filters.health_check(), filters.service_prefix("grpc.reflection"))
    )
    _log.info("traces are on", endpoint=endpoint)
    interceptor = aio_server_interceptor(tracer_provider=provider, filter_=skip)  # type: ignore[no-untyped-call]
    return Tracing([interceptor], provider)
