"""The edge's endpoints: each public RPC forwarded to its service over gRPC.

An endpoint is built from the protos' descriptors (no generated Connect code): its Connect
``MethodInfo`` names the ``okey.v1`` message classes, and its function calls the same method
on the service's gRPC channel. What the service decides stays the service's: the caller's
``Authorization`` (and ``Accept-Language``, trace context) is passed on as metadata, the
call's deadline (``Connect-Timeout-Ms`` or ``grpc-timeout``) becomes the gRPC deadline, and a
gRPC error comes back as the Connect error of the same code with the same message and the same
details (``google.rpc.ErrorInfo``, ``LocalizedMessage``, ...), byte for byte.

Each call is counted under the gRPC servers' metric names (``grpc_server_*``, the edge's own
process) and logged as one ``rpc`` line, as every service does.
"""

from __future__ import annotations

import asyncio
import importlib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Final

import grpc
import grpc.aio
from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import Endpoint
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.rpc import status_pb2
from protobuf.wkt import Any as AnyDetail

from okey101.edge.routes import PEER_OF, PUBLIC
from okey101.engine.errors import OkeyError
from okey101.platform import metrics
from okey101.platform.errors import (
    Language,
    Unavailable,
    language_of,
    rich_status,
    status_code_of,
)
from okey101.platform.logs import ids_of

#: Request headers passed on to the service as gRPC metadata. ``x-forwarded-for`` is the
#: edge's own: ``app.EdgeApp`` replaces whatever the client sent with the client's address.
FORWARDED_HEADERS: Final = (
    "authorization",
    "accept-language",
    "traceparent",
    "tracestate",
    "x-request-id",
    "x-okey-table-id",
    "x-forwarded-for",
)

#: The proto modules holding each service's descriptor.
_MODULES: Final[Mapping[str, str]] = {
    "okey.v1.LobbyService": "okey.v1.lobby_pb2",
    "okey.v1.TableService": "okey.v1.table_pb2",
    "okey.v1.RulesService": "okey.v1.rules_pb2",
    "okey.v1.ScoringService": "okey.v1.scoring_pb2",
    "okey.v1.BotService": "okey.v1.bot_pb2",
}

#: gRPC status codes as Connect codes (the same set; only CANCELLED is spelt differently).
CONNECT_CODE: Final[Mapping[grpc.StatusCode, Code]] = {
    status: (Code.CANCELED if status is grpc.StatusCode.CANCELLED else Code(status.name.lower()))
    for status in grpc.StatusCode
    if status is not grpc.StatusCode.OK
}
_GRPC_NAME: Final[Mapping[Code, str]] = {code: status.name for status, code in CONNECT_CODE.items()}


def method_descriptor(service: str, method: str) -> MethodDescriptor:
    """The descriptor of ``service``'s RPC ``method`` (``okey.v1.LobbyService``, ``LoginGuest``)."""
    module = importlib.import_module(_MODULES[service])
    descriptor: MethodDescriptor = module.DESCRIPTOR.services_by_name[
        service.rpartition(".")[2]
    ].methods_by_name[method]
    return descriptor


def all_methods() -> dict[str, tuple[str, ...]]:
    """Every RPC of every okey.v1 service, from the protos: ``{service: (method, ...)}``."""
    found = {}
    for service, module_name in _MODULES.items():
        module = importlib.import_module(module_name)
        described = module.DESCRIPTOR.services_by_name[service.rpartition(".")[2]]
        found[service] = tuple(method.name for method in described.methods)
    return found


def connect_error(error: grpc.aio.AioRpcError) -> ConnectError:
    """A service's gRPC error as the Connect error of the same code, message and details."""
    code = CONNECT_CODE.get(error.code(), Code.UNKNOWN)
    details: list[ErrorDetail] = []
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            details = [
                ErrorDetail(AnyDetail(type_url=item.type_url, value=item.value))
                for item in status.details
            ]
    return ConnectError(code, error.details() or "", details)


def okey_connect_error(error: OkeyError, language: Language = "en") -> ConnectError:
    """One of our errors (``platform.errors``) as a Connect error, as a service would send it."""
    status = rich_status(error, language)
    details = [
        ErrorDetail(AnyDetail(type_url=item.type_url, value=item.value)) for item in status.details
    ]
    return ConnectError(CONNECT_CODE[status_code_of(error)], status.message, details)


class Forwarder:
    """The channels to the services, and the endpoint of every public RPC."""

    def __init__(
        self,
        addresses: Mapping[str, str],
        log: Any,
        draining: asyncio.Event,
    ) -> None:
        self._addresses = addresses
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._log = log
        self._draining = draining

    def channel(self, peer: str) -> grpc.aio.Channel:
        channel = self._channels.get(peer)
        if channel is None:
            channel = self._channels[peer] = grpc.aio.insecure_channel(self._addresses[peer])
        return channel

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()

    def endpoints(self) -> dict[str, Endpoint[Any, Any]]:
        """``{"/okey.v1.LobbyService/LoginGuest": endpoint, ...}`` for every public RPC."""
        found: dict[str, Endpoint[Any, Any]] = {}
        for service, methods in PUBLIC.items():
            for method in methods:
                found[f"/{service}/{method}"] = self._endpoint(service, method)
        return found

    def _endpoint(self, service: str, method: str) -> Endpoint[Any, Any]:
        descriptor = method_descriptor(service, method)
        request_class = message_factory.GetMessageClass(descriptor.input_type)
        response_class = message_factory.GetMessageClass(descriptor.output_type)
        streaming = descriptor.server_streaming
        info: MethodInfo[Any, Any] = MethodInfo(
            name=method,
            service_name=service,
            input=request_class,
            output=response_class,
            idempotency_level=IdempotencyLevel.UNKNOWN,
            stream_type=StreamType.SERVER_STREAM if streaming else StreamType.UNARY,
        )
        path = f"/{service}/{method}"
        peer = PEER_OF[service]
        kind = "server_stream" if streaming else "unary"
        started = metrics.STARTED.labels(kind, service, method)
        seconds = metrics.HANDLING_SECONDS.labels(kind, service, method)
        sent = metrics.MSG_SENT.labels(kind, service, method)
        log = self._log

        def finish(began: float, code: str, request: Any) -> None:
            elapsed = time.perf_counter() - began
            metrics.HANDLED.labels(kind, service, method, code).inc()
            seconds.observe(elapsed)
            level = log.error if code in ("INTERNAL", "UNKNOWN", "DATA_LOSS") else log.info
            # The request's ids (request_id, table_id, hand_id), as the services log them.
            level(
                "rpc",
                method=path,
                code=code,
                duration_ms=round(elapsed * 1000, 3),
                **ids_of(request),
            )

        def call_options(ctx: RequestContext[Any, Any]) -> dict[str, Any]:
            headers = ctx.request_headers
            metadata = tuple(
                (name, value) for name in FORWARDED_HEADERS if (value := headers.get(name))
            )
            remaining = ctx.timeout_ms
            timeout = None if remaining is None else max(remaining / 1000.0, 0.0)
            return {"metadata": metadata, "timeout": timeout}

        if not streaming:
            unary: Callable[..., Any] | None = None

            async def forward_unary(request: Any, ctx: RequestContext[Any, Any]) -> Any:
                nonlocal unary
                began = time.perf_counter()
                started.inc()
                code = "OK"
                if unary is None:
                    unary = self.channel(peer).unary_unary(
                        path,
                        request_serializer=request_class.SerializeToString,
                        response_deserializer=response_class.FromString,
                    )
                try:
                    return await unary(request, **call_options(ctx))
                except grpc.aio.AioRpcError as error:
                    code = error.code().name
                    raise connect_error(error) from None
                except asyncio.CancelledError:
                    code = "CANCELLED"
                    raise
                finally:
                    finish(began, code, request)

            return Endpoint.unary(info, forward_unary)

        stream: Callable[..., Any] | None = None

        async def forward_stream(request: Any, ctx: RequestContext[Any, Any]) -> AsyncIterator[Any]:
            nonlocal stream
            began = time.perf_counter()
            started.inc()
            code = "OK"
            if stream is None:
                stream = self.channel(peer).unary_stream(
                    path,
                    request_serializer=request_class.SerializeToString,
                    response_deserializer=response_class.FromString,
                )
            call = stream(request, **call_options(ctx))
            draining = asyncio.ensure_future(self._draining.wait())
            try:
                while True:
                    following = asyncio.ensure_future(call.read())
                    await asyncio.wait((following, draining), return_when=asyncio.FIRST_COMPLETED)
                    if not following.done():
                        following.cancel()
                        code = "UNAVAILABLE"
                        raise _shutting_down(ctx)
                    item = following.result()
                    if item is grpc.aio.EOF:
                        return
                    yield item
                    sent.inc()
            except grpc.aio.AioRpcError as error:
                code = error.code().name
                raise connect_error(error) from None
            except asyncio.CancelledError:
                code = "CANCELLED"
                raise
            except GeneratorExit:
                code = "CANCELLED"
                raise
            finally:
                draining.cancel()
                call.cancel()
                finish(began, code, request)

        return Endpoint.server_stream(info, forward_stream)


def _shutting_down(ctx: RequestContext[Any, Any]) -> ConnectError:
    language = language_of([("accept-language", ctx.request_headers.get("accept-language", ""))])
    return okey_connect_error(Unavailable("SERVER_SHUTTING_DOWN"), language)


def grpc_code_name(code: Code) -> str:
    """The gRPC status name of a Connect code (``invalid_argument`` -> ``INVALID_ARGUMENT``)."""
    return _GRPC_NAME.get(code, "UNKNOWN")


__all__ = [
    "CONNECT_CODE",
    "FORWARDED_HEADERS",
    "Forwarder",
    "all_methods",
    "connect_error",
    "grpc_code_name",
    "method_descriptor",
    "okey_connect_error",
]
