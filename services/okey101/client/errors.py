"""A failed call as the client shows it: the status code, the stable reason and the sentence.

Every okey101 service ends a failed call with a ``google.rpc.Status`` in the
``grpc-status-details-bin`` trailer holding one ``ErrorInfo`` (reason, domain ``okey101``,
parameters) and one ``LocalizedMessage`` in the request's language (common.proto, ERRORS). The
client switches on the reason and shows the sentence; when a call failed before reaching a
service (no connection, a deadline), there is no rich status and the gRPC details are shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import grpc
import grpc.aio
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

#: Codes worth retrying with the same request_id (common.proto: "UNAVAILABLE and
#: DEADLINE_EXCEEDED are not answers, so such a call may be retried"). CANCELLED is not an
#: answer either when this client did not cancel (it would see asyncio.CancelledError): a
#: server stopping can cancel a call that was in transit as its listener closed.
RETRYABLE: Final = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED}
)


@dataclass(frozen=True)
class Rejection:
    """What a failed call said."""

    code: grpc.StatusCode
    reason: str
    message: str
    params: Mapping[str, str] = field(default_factory=dict)
    locale: str = ""

    @property
    def retryable(self) -> bool:
        return self.code in RETRYABLE

    @property
    def retry_after(self) -> float | None:
        """Seconds a rate limit's refusal (RESOURCE_EXHAUSTED ``RATE_LIMITED``) asks the caller
        to wait before sending the same request again (its ``retry_after_ms``, at least 50 ms);
        None for any other refusal, which waiting does not fix (a request too large, say)."""
        if self.code != grpc.StatusCode.RESOURCE_EXHAUSTED or self.reason != "RATE_LIMITED":
            return None
        try:
            return max(0.05, int(self.params.get("retry_after_ms", "1000")) / 1000)
        except ValueError:
            return 1.0

    @staticmethod
    def of(error: grpc.aio.AioRpcError | grpc.RpcError) -> Rejection:
        """The rejection a failed call carries (its rich status when it has one)."""
        code = _code(error)
        details = _details(error)
        status = None
        try:
            status = rpc_status.from_call(error)  # type: ignore[arg-type]
        except ValueError:
            # A status whose code or message disagrees with the call's: use the call's own.
            status = None
        return Rejection._read(code, details, status)

    @staticmethod
    def of_status(status: status_pb2.Status) -> Rejection:
        """The rejection a ``google.rpc.Status`` carries (a Play stream's act outcome)."""
        code = next((c for c in grpc.StatusCode if c.value[0] == status.code), None)
        return Rejection._read(code or grpc.StatusCode.UNKNOWN, status.message, status)

    @staticmethod
    def _read(code: grpc.StatusCode, details: str, status: Any) -> Rejection:
        reason, message, locale = "", details, ""
        params: dict[str, str] = {}
        if status is not None:
            for detail in status.details:
                if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    detail.Unpack(info)
                    reason = info.reason
                    params = dict(info.metadata)
                elif detail.Is(error_details_pb2.LocalizedMessage.DESCRIPTOR):
                    localized = error_details_pb2.LocalizedMessage()
                    detail.Unpack(localized)
                    message = localized.message
                    locale = localized.locale
        return Rejection(code, reason, message or code.name, params, locale)


def rate_limit_wait(error: grpc.aio.AioRpcError | grpc.RpcError) -> float | None:
    """Seconds a rate limit's refusal asks the caller to wait; None for any other failure."""
    if _code(error) is not grpc.StatusCode.RESOURCE_EXHAUSTED:
        return None
    return Rejection.of(error).retry_after


def _code(error: grpc.aio.AioRpcError | grpc.RpcError) -> grpc.StatusCode:
    code = getattr(error, "code", None)
    value = code() if callable(code) else None
    return value if isinstance(value, grpc.StatusCode) else grpc.StatusCode.UNKNOWN


def _details(error: grpc.aio.AioRpcError | grpc.RpcError) -> str:
    details = getattr(error, "details", None)
    value = details() if callable(details) else None
    return value if isinstance(value, str) else ""
