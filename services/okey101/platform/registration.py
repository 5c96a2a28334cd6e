"""Adding a servicer to a grpc.aio server, with answers that may be sent as already serialized.

The generated ``add_*Servicer_to_server`` functions serialize every response message. A method
named in ``sent_as_written`` instead returns (or, streaming, yields) the response's bytes, built
from serialized parts it keeps (a table's stored answer, a view's cached bytes, an event as the
log holds it): gRPC sends them unchanged, with nothing parsed and serialized again. Requests are
parsed as the generated code parses them, and both the generic and the registered handlers are
added, as the generated code adds them.
"""

from __future__ import annotations

from collections.abc import Set
from types import ModuleType
from typing import Any

import grpc
import grpc.aio


def _as_written(answer: bytes) -> bytes:
    return answer


def add_servicer(
    server: grpc.aio.Server,
    servicer: Any,
    module: ModuleType,
    service: str,
    *,
    sent_as_written: Set[str] = frozenset(),
) -> str:
    """Add ``servicer``'s methods for ``service`` (its short name in the ``_pb2`` ``module``) to
    ``server``; the service's full name, for health and reflection."""
    descriptor = module.DESCRIPTOR.services_by_name[service]
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for method in descriptor.methods:
        if method.client_streaming and not method.server_streaming:
            raise ValueError(f"{descriptor.full_name}.{method.name}: client streaming only")
        request_type = getattr(module, method.input_type.name)
        response_type = getattr(module, method.output_type.name)
        serializer = (
            _as_written if method.name in sent_as_written else response_type.SerializeToString
        )
        make = (
            grpc.stream_stream_rpc_method_handler
            if method.client_streaming
            else grpc.unary_stream_rpc_method_handler
            if method.server_streaming
            else grpc.unary_unary_rpc_method_handler
        )
        handlers[method.name] = make(
            getattr(servicer, method.name),
            request_deserializer=request_type.FromString,
            response_serializer=serializer,
        )
    name: str = descriptor.full_name
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
    server.add_registered_method_handlers(name, handlers)
    return name


__all__ = ["add_servicer"]
