"""Server reflection as ``grpc.reflection.v1`` and ``grpc.reflection.v1alpha``, one servicer.

grpcio-reflection ships only ``v1alpha``; grpcurl falls back to it, but newer tools (buf curl
with ``--reflect-protocol grpc-v1``, Postman, grpcui's newer releases) ask for ``v1`` only. The
two protocols are the same messages under another package (field for field, number for number),
so the v1alpha servicer answers both: ``enable_reflection`` registers it under both service
names, and puts a ``grpc/reflection/v1/reflection.proto`` descriptor (v1alpha's, renamed) in the
default pool so that a v1 client asking for the file of ``grpc.reflection.v1.ServerReflection``
gets it too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import grpc
import grpc.aio
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2

#: The two reflection services every server answers.
V1ALPHA: Final = reflection.SERVICE_NAME
V1: Final = "grpc.reflection.v1.ServerReflection"
_V1_FILE: Final = "grpc/reflection/v1/reflection.proto"


def v1_file() -> descriptor_pb2.FileDescriptorProto:
    """``grpc/reflection/v1/reflection.proto`` as a descriptor: v1alpha's, renamed."""
    alpha = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(alpha)
    old, new = f".{alpha.package}.", ".grpc.reflection.v1."
    alpha.name = _V1_FILE
    alpha.package = "grpc.reflection.v1"
    alpha.ClearField("options")
    for message in alpha.message_type:
        for field in message.field:
            if field.type_name.startswith(old):
                field.type_name = new + field.type_name[len(old) :]
    for service in alpha.service:
        for method in service.method:
            method.input_type = new + method.input_type[len(old) :]
            method.output_type = new + method.output_type[len(old) :]
    return alpha


def _add_v1_descriptor() -> None:
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(_V1_FILE)
    except KeyError:
        pool.Add(v1_file())


def enable_reflection(service_names: Iterable[str], server: grpc.aio.Server) -> None:
    """Reflection on ``server`` under both names, listing ``service_names`` and both."""
    _add_v1_descriptor()
    servicer = reflection.aio.ReflectionServicer([*service_names, V1, V1ALPHA])
    method = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(name, {"ServerReflectionInfo": method})
            for name in (V1, V1ALPHA)
        ]
    )


__all__ = ["V1", "V1ALPHA", "enable_reflection", "v1_file"]
