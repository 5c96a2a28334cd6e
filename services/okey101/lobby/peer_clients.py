"""The lobby's calls to the table and scoring services, with the lobby's service token.

Every state-changing call to the table carries a request id *derived* from what the lobby is
doing (``derived_request_id``): the player's own request id for a player's call, the ticket ids of
a quick match, the tournament's round and table for a tournament. A lobby pod that dies half-way
and the pod that repeats the work therefore send the same request ids, and the table answers the
repeat with its first answer instead of making a second table or a second move.

Which answers are the peer's and which mean "not now" is ``platform.peer_calls``' one rule: an error
the table gives (SEAT_TAKEN, BAD_RULE_VALUE, TABLE_NOT_FOUND, ...) reaches the lobby's caller as it
is (``PeerError``, passed on by ``platform.peer_calls.forward``: the same status, ErrorInfo and
sentence, in the language the lobby passed on); a peer that gives no verdict (UNAVAILABLE,
DEADLINE_EXCEEDED, CANCELLED, RESOURCE_EXHAUSTED) is the lobby's UNAVAILABLE ``PEER_UNAVAILABLE``
(retry).

Closing a table for the lobby (``close_table``: a failed quick-match attempt's table, a cancelled
tournament's) is done the same way by every worker that needs it.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

from okey.v1 import common_pb2, scoring_pb2, scoring_pb2_grpc, table_pb2, table_pb2_grpc

from okey101.engine.errors import OkeyError
from okey101.lobby.errors import NotReady
from okey101.platform.logs import get_logger
from okey101.platform.peer_calls import PeerError, call_peer
from okey101.platform.peer_channels import PeerChannels

_log = get_logger(service="lobby")

#: How long one call to a peer may take.
CALL_TIMEOUT: Final = 10.0


def derived_request_id(*parts: object) -> str:
    """A request id for a peer from what the lobby is doing: the same parts, the same id."""
    text = "\0".join(str(part) for part in parts)
    return "lobby-" + hashlib.sha256(text.encode()).hexdigest()[:48]


async def _call(service: str, method: Any, request: Any, metadata: Any) -> Any:
    return await call_peer(
        method,
        request,
        metadata=metadata,
        timeout=CALL_TIMEOUT,
        unavailable=lambda: NotReady("PEER_UNAVAILABLE", service=service),
    )


class TableClient:
    """TableService calls with a service token."""

    def __init__(self, peers: PeerChannels) -> None:
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


async def close_table(tables: TableClient, table_id: str, reason: str) -> bool:
    """Close ``table_id`` for the lobby: True once it is closed (or over, or unknown to the
    table service: nothing is left to close), False if the table service cannot be reached."""
    try:
        await tables.close(table_id, derived_request_id("lobby-close", table_id), reason)
    except PeerError as error:
        if error.reason not in ("TABLE_CLOSED", "TABLE_FINISHED", "TABLE_NOT_FOUND"):
            _log.warning("closing a table refused", table_id=table_id, reason=error.reason)
    except OkeyError as error:
        _log.info("closing a table: not now", table_id=table_id, code=error.code)
        return False
    return True


class ScoringClient:
    """ScoringService reads, and a finished tournament's ranking, with a service token."""

    def __init__(self, peers: PeerChannels) -> None:
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

    async def ordinal(self, player_id: str) -> float | None:
        """The player's free-for-all OpenSkill ordinal (None: unrated, or unknown to scoring)."""
        stub: Any = scoring_pb2_grpc.ScoringServiceStub(self._peers.channel("scoring"))
        try:
            answer = await _call(
                "scoring",
                stub.GetPlayerStats,
                scoring_pb2.GetPlayerStatsRequest(player_id=player_id),
                self._peers.metadata(),
            )
        except PeerError as error:
            if error.reason == "PLAYER_NOT_FOUND":
                return None
            raise
        if not answer.stats.HasField("free_for_all_rating"):
            return None
        return float(answer.stats.free_for_all_rating.ordinal)

    async def record_ranking(
        self, tournament_id: str, places: list[tuple[int, str, str, bool]]
    ) -> None:
        """Record a finished tournament's final ranking, ``(place, player, name, forfeited)``
        each, with
        the scoring service, which serves it from then on (idempotent)."""
        stub: Any = scoring_pb2_grpc.ScoringServiceStub(self._peers.channel("scoring"))
        await _call(
            "scoring",
            stub.RecordTournamentRanking,
            scoring_pb2.RecordTournamentRankingRequest(
                request_id=derived_request_id("tournament-ranking", tournament_id),
                tournament_id=tournament_id,
                places=[
                    scoring_pb2.TournamentPlace(
                        place=place, player_id=player, display_name=name, forfeited=forfeited
                    )
                    for place, player, name, forfeited in places
                ],
            ),
            self._peers.metadata(),
        )


__all__ = [
    "CALL_TIMEOUT",
    "ScoringClient",
    "TableClient",
    "close_table",
    "derived_request_id",
]
