"""What the terminal client's screen needs from its table: ``TablePort`` (``session.TableSession``
provides it over the public API; the tests give it a table of their own)."""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable, Sequence
from typing import Protocol

from okey.v1 import common_pb2, lobby_pb2, rules_pb2, scoring_pb2, table_pb2

from okey101.client.resume import Reconnecting


class TablePort(Protocol):
    """What the screen needs from its table (``session.TableSession`` provides it)."""

    table_id: str
    seat: int | None

    def watch(
        self, *, on_reconnect: Callable[[Reconnecting], None] | None = None
    ) -> AsyncIterable[table_pb2.WatchTableResponse]: ...

    async def act(
        self, actions: Sequence[common_pb2.Action], state_version: int
    ) -> table_pb2.ActResponse: ...

    async def seat_view(self, min_sequence: int = 0) -> common_pb2.SeatView: ...

    async def get_table(self) -> common_pb2.Table: ...

    async def wallet(self) -> lobby_pb2.GetWalletResponse: ...

    async def wallet_entries(self, page_token: str = "") -> lobby_pb2.ListWalletEntriesResponse: ...

    async def validate_melds(
        self, view: common_pb2.SeatView, groups: Sequence[common_pb2.TileGroup]
    ) -> rules_pb2.ValidateMeldsResponse: ...

    async def validate_opening(
        self, view: common_pb2.SeatView, groups: Sequence[common_pb2.TileGroup]
    ) -> rules_pb2.ValidateOpeningResponse: ...

    async def best_opening(self, view: common_pb2.SeatView) -> rules_pb2.BestOpeningResponse: ...

    async def score_sheet_through(
        self, match_id: str, hand_number: int, *, ended: bool = False
    ) -> scoring_pb2.ScoreSheet | None: ...

    async def close(self) -> None: ...


#: Given a way to report progress ("Logging in…"), find a table and return its port.
Connect = Callable[[Callable[[str], None]], Awaitable[TablePort]]
