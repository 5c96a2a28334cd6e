"""The rich status of a failed call, as every service sends it: one ErrorInfo and one
LocalizedMessage (``platform.errors``)."""

from __future__ import annotations

from typing import Any

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from okey101.platform.errors import DOMAIN


def details(error: grpc.RpcError) -> tuple[error_details_pb2.ErrorInfo, Any]:
    """The one ErrorInfo and the one LocalizedMessage of a failed call."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None
    infos, messages = [], []
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            infos.append(info)
        elif detail.Is(error_details_pb2.LocalizedMessage.DESCRIPTOR):
            message = error_details_pb2.LocalizedMessage()
            detail.Unpack(message)
            messages.append(message)
    assert len(infos) == 1 and len(messages) == 1
    assert infos[0].domain == DOMAIN
    return infos[0], messages[0]


__all__ = ["details"]
