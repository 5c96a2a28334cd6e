"""The lobby's calls to the table and scoring services, with the lobby's service token.

Every state-changing call to the table carries a request id *derived* from what the lobby is
doing (``derived_request_id``): the player's own request id for a player's call, the ticket ids of
a quick match, the tournament's round and table for a tournament. A lobby pod that dies half-way
and the pod that repeats the work therefore send the same request ids, and the table answers the
repeat with its first answer instead of making a second table or a second move.

An error the table gives (SEAT_TAKEN, BAD_RULE_VALUE, TABLE_NOT_FOUND, ...) reaches the lobby's
caller as it is (``PeerError``: the same status, ErrorInfo and sentence, in the language the lobby
passed on); a peer that cannot be reached is UNAVAILABLE ``PEER_UNAVAILABLE`` (retry).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Final

import grpc
import grpc.aio
from okey.v1 import common_pb2, scoring_pb2, scoring_pb2_grpc, table_pb2, table_pb2_grpc

from okey101.lobby.errors import NotReady
from okey101.platform.clients import Peers

#: How long one call to a peer may take.
CALL_TIMEOUT: Final = 10.0
_UNREACHABLE: Final = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED}
)


def derived_request_id(*parts: object) -> str:
    """A request id for a peer from what the lobby is doing: the same parts, the same id."""
    text = "\0".join(str(part) for part in parts)
    return "lobby-" + hashlib.sha256(text.encode()).hexdigest()[:48]


class PeerError(Exception):
    """A peer's definitive error, to be passed on to the lobby's caller as it is."""

    def __init__(self, error: grpc.aio.AioRpcError) -> None:
        super().__init__(error.details())
        self.code = error.code()
        self.details = error.details() or ""
        self.trailing: tuple[tuple[str, str | bytes], ...] = tuple(
            (key, value)
            for key, value in (error.trailing_metadata() or ())
            if key == "grpc-status-details-bin"
        )
        self.reason = _reason(self.trailing)


def _reason(trailing: Sequence[tuple[str, str | bytes]]) -> str:
    from google.rpc import error_details_pb2, status_pb2

    for key, value in trailing:
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return info.reason
    return ""


async def _call(service: str, method: Any, request: Any, metadata: Any) -> Any:
    try:
        return await method(request, metadata=metadata, timeout=CALL_TIMEOUT)
    except grpc.aio.AioRpcError as error:
        if error.code() in _UNREACHABLE:
            raise NotReady("PEER_UNAVAILABLE", service=service) from None
        raise PeerError(error) from None


class TableClient:
    """TableService calls with a service token."""

    def __init__(self, peers: Peers) -> None:
        self._peers = peers

    @property
    def _stub(self) -> Any:
        return table_pb2_grpc.TableServiceStub(self._peers.channel("table"))

    async def create(self, request: table_pb2.CreateTableRequest) -> common_pb2.Table:
        answer = await _call("table", self._stub.CreateTable, request, self._peers.metadata())
        table: common_pb2.Table = answer.table
        return table

    async def sit(self, request: table_pb2.SitRequest) -> table_pb2.SitResponse:
        answer: table_pb2.SitResponse = await _call(
            "table", self._stub.Sit, request, self._peers.metadata()
        )
        return answer

    async def leave(self, request: table_pb2.LeaveRequest) -> common_pb2.Table:
        answer = await _call("table", self._stub.Leave, request, self._peers.metadata())
        table: common_pb2.Table = answer.table
        return table

    async def start(self, request: table_pb2.StartRequest) -> common_pb2.Table:
        answer = await _call("table", self._stub.Start, request, self._peers.metadata())
        table: common_pb2.Table = answer.table
        return table

    async def get(self, table_id: str, locale: str = "") -> common_pb2.Table:
        answer = await _call(
            "table",
            self._stub.GetTable,
            table_pb2.GetTableRequest(table_id=table_id, locale=locale),
            self._peers.metadata(),
        )
        table: common_pb2.Table = answer.table
        return table

    async def list(self, request: table_pb2.ListTablesRequest) -> table_pb2.ListTablesResponse:
        answer: table_pb2.ListTablesResponse = await _call(
            "table", self._stub.ListTables, request, self._peers.metadata()
        )
        return answer

    async def close(self, table_id: str, request_id: str, reason: str) -> None:
        await _call(
            "table",
            self._stub.CloseTable,
            table_pb2.CloseTableRequest(request_id=request_id, table_id=table_id, reason=reason),
            self._peers.metadata(),
        )


class ScoringClient:
    """ScoringService reads with a service token."""

    def __init__(self, peers: Peers) -> None:
        self._peers = peers

    async def score_sheet(self, match_id: str) -> scoring_pb2.ScoreSheet:
        """A match's whole sheet (every page)."""
        stub: Any = scoring_pb2_grpc.ScoringServiceStub(self._peers.channel("scoring"))
        sheet: scoring_pb2.ScoreSheet | None = None
        token = ""
        while True:
            answer = await _call(
                "scoring",
                stub.GetScoreSheet,
                scoring_pb2.GetScoreSheetRequest(
                    match_id=match_id, page_size=500, page_token=token
                ),
                self._peers.metadata(),
            )
            if sheet is None:
                sheet = answer.sheet
            else:
                sheet.rows.extend(answer.sheet.rows)
            token = answer.next_page_token
            if not token:
                assert sheet is not None
                return sheet


__all__ = [
    "CALL_TIMEOUT",
    "PeerError",
    "ScoringClient",
    "TableClient",
    "derived_request_id",
]
