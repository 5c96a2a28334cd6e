"""Calling a peer and reading its answer: one rule for which failures mean "not now".

**The rule.** A peer call that ends with UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED or
RESOURCE_EXHAUSTED (``UNREACHABLE``) did not get a verdict on the request: the peer is down,
draining, slow, stopping (a peer that stops may cancel a call that raced its shutdown), or out of
capacity. None of these is the caller's fault and each is worth a retry with the same request id
later, so the call is raised as the caller's own UNAVAILABLE (``unavailable()``: the lobby's
``PEER_UNAVAILABLE``, the table's ``RULES_UNAVAILABLE``), or answered by a fallback (the table's
engine bots when the bot service cannot answer). RESOURCE_EXHAUSTED is among them because a peer
that refuses for load refuses the calling *service*, not the person behind it: passing it on would
blame the player for the deployment's load, and a worker that takes a refusal as final (the
lobby's hosting finisher ends a hosting the table refused) would give up work still owed.

Any other status is the peer's **definitive answer** (``PeerError``, with its status, ErrorInfo
reason and parameters): a caller either passes it on as it is (``forward``: the lobby, whose
table errors reach its callers unchanged, in the language they asked in), or raises it again as
its own coded error (``PeerError.rebuilt``: INVALID_ARGUMENT and FAILED_PRECONDITION, to be
rendered again in the caller's language; any other status from a peer is one the caller did not
expect, which it logs and answers INTERNAL).

Channels and service tokens are ``platform.peer_channels.PeerChannels``:

    answer = await call_peer(
        stub.ApplyAction, request, metadata=peers.metadata(), timeout=2.0,
        unavailable=lambda: NotReady("RULES_UNAVAILABLE"),
    )
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, NoReturn

import grpc
import grpc.aio
from google.rpc import error_details_pb2, status_pb2

from okey101.engine.errors import InvalidInput, OkeyError, RuleViolation
from okey101.platform.handlers import Context

#: Statuses that mean the peer gave no verdict (module docstring).
UNREACHABLE: Final = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
)
_DETAILS: Final = "grpc-status-details-bin"


def unreachable(error: grpc.aio.AioRpcError) -> bool:
    """Whether a peer's error is one of ``UNREACHABLE`` (module docstring)."""
    return error.code() in UNREACHABLE


class PeerError(Exception):
    """A peer's definitive answer (module docstring): its status, sentence and rich status as
    the peer sent them, and the ErrorInfo's reason and parameters."""

    def __init__(self, error: grpc.aio.AioRpcError) -> None:
        super().__init__(error.details())
        self.code: grpc.StatusCode = error.code()
        self.details: str = error.details() or ""
        self.trailing: tuple[tuple[str, str | bytes], ...] = tuple(
            (key, value) for key, value in (error.trailing_metadata() or ()) if key == _DETAILS
        )
        self.reason, self.params = _error_info(self.trailing)

    def rebuilt(self) -> OkeyError | None:
        """The refusal as the same coded error here, to be rendered again in the caller's
        language: INVALID_ARGUMENT as ``InvalidInput``, FAILED_PRECONDITION as
        ``RuleViolation``; None for any other status (one the caller did not expect)."""
        reason = self.reason or "INTERNAL"
        if self.code == grpc.StatusCode.INVALID_ARGUMENT:
            return InvalidInput(reason, **self.params)
        if self.code == grpc.StatusCode.FAILED_PRECONDITION:
            return RuleViolation(reason, **self.params)
        return None


def _error_info(trailing: Sequence[tuple[str, str | bytes]]) -> tuple[str, dict[str, str]]:
    for key, value in trailing:
        if key == _DETAILS and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return info.reason, dict(info.metadata)
    return "", {}


async def call_peer(
    method: Any,
    request: Any,
    *,
    metadata: Sequence[tuple[str, str]],
    timeout: float,
    unavailable: Callable[[], Exception],
) -> Any:
    """``method(request)`` on a peer's stub: its answer; ``unavailable()`` if the peer gave no
    verdict (``UNREACHABLE``), else ``PeerError``."""
    try:
        return await method(request, metadata=metadata, timeout=timeout)
    except grpc.aio.AioRpcError as error:
        if unreachable(error):
            raise unavailable() from None
        raise PeerError(error) from None


async def forward(context: Context, error: PeerError) -> NoReturn:
    """End the call with a peer's definitive answer as the peer gave it."""
    await context.abort(error.code, error.details, error.trailing)
    raise AssertionError("abort returned")


__all__ = ["UNREACHABLE", "PeerError", "call_peer", "forward", "unreachable"]
