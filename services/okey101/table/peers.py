"""A peer's answer (the bot service's) as the table's own error.

A peer that cannot answer just now is UNAVAILABLE here, with the table's reason (the caller
retries the same request id, or the timer step is tried again); a refusal keeps its code and
parameters (the sentence is rendered again in the caller's language); anything else is a bug of
ours, INTERNAL.
"""

from __future__ import annotations

import grpc
import grpc.aio
import structlog
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from okey101.engine.errors import InvalidInput, OkeyError, RuleViolation
from okey101.platform.errors import Internal
from okey101.table.errors import NotReady

_log = structlog.get_logger("okey101.table")

#: Codes that mean "not just now" (CANCELLED too: a peer that is stopping may cancel a call
#: that raced its shutdown; RESOURCE_EXHAUSTED: a peer refusing for load).
_NOT_NOW = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
)


def peer_error(error: grpc.aio.AioRpcError, unavailable_code: str) -> OkeyError:
    """``error`` as the table's own (module docstring)."""
    code = error.code()
    if code in _NOT_NOW:
        return NotReady(unavailable_code)
    reason, params = "INTERNAL", {}
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    if status is not None:
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                reason, params = info.reason, dict(info.metadata)
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return InvalidInput(reason, **params)
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        return RuleViolation(reason, **params)
    _log.error("unexpected answer from a peer", code=code.name, reason=reason)
    return Internal("INTERNAL")


__all__ = ["peer_error"]
