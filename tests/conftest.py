"""Fixtures shared by several test modules (pytest loads this file for every test under tests/).

- ``refusal``: what a failed gRPC call carried, read from its rich status: the status code, the
  ErrorInfo's reason and metadata (checked to be in our domain), and the LocalizedMessage's
  sentence and locale.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2


@dataclass(frozen=True)
class Refusal:
    """What a refused call said."""

    code: grpc.StatusCode
    reason: str
    metadata: dict[str, str]
    message: str
    locale: str


def _refusal(error: grpc.RpcError) -> Refusal:
    raw = next(
        value
        for key, value in (error.trailing_metadata() or ())  # type: ignore[attr-defined]
        if key == "grpc-status-details-bin" and isinstance(value, bytes)
    )
    status = status_pb2.Status.FromString(raw)
    info = error_details_pb2.ErrorInfo()
    localized = error_details_pb2.LocalizedMessage()
    assert len(status.details) == 2
    assert status.details[0].Unpack(info) and status.details[1].Unpack(localized)
    assert info.domain == "okey101"
    code = error.code()  # type: ignore[attr-defined]
    return Refusal(code, info.reason, dict(info.metadata), localized.message, localized.locale)


@pytest.fixture
def refusal() -> Callable[[grpc.RpcError], Refusal]:
    """``refusal(error)``: the ``Refusal`` a failed call's error carries (module docstring)."""
    return _refusal
