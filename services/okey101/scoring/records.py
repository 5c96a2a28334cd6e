"""What the scoring service's stores hand back: recorded hands as read, and the read models of
its lists (pages, score sheets, standings, players' statistics). Instants are integer
microseconds since the epoch (``*_us``), as in the database."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from okey.v1 import scoring_pb2

from okey101.engine.result import EndReason, Finish, HandResult
from okey101.scoring import ratings


def now_us() -> int:
    return time.time_ns() // 1000


@dataclass(frozen=True, slots=True)
class RecordedHand:
    """A recorded hand and its four seats, as read back."""

    row: Any
    seats: tuple[Any, ...]

    @property
    def reason(self) -> EndReason:
        return EndReason(self.row.reason)

    def result(self) -> HandResult:
        """The engine's HandResult of the recorded hand (for the match's replay)."""
        finish = None
        if self.row.winner_seat is not None:
            finish = Finish(
                self.row.winner_seat,
                self.row.with_okey,
                self.row.after_pairs,
                self.row.one_go,
                self.row.multiplier,
            )
        return HandResult(
            self.reason,
            finish,
            tuple(seat.points for seat in self.seats),
            tuple(seat.penalty_points for seat in self.seats),
        )


class AttrRow:
    """A dict read by attribute, like a result row (to build a row before it is stored)."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Any]
    next_key: list[Any] | None


@dataclass(frozen=True, slots=True)
class SheetData:
    match: Any
    seats: list[scoring_pb2.SeatPlayer]
    rows: list[scoring_pb2.ScoreSheetRow]
    totals: list[int]
    next_key: int | None


@dataclass(frozen=True, slots=True)
class StandingLine:
    player_id: str
    display_name: str
    matches: int
    wins: int
    total_points: int
    hands: int
    hands_finished: int
    rank: int = 0
    #: In a tournament's final ranking: forfeited under its no-show policy.
    forfeited: bool = False


@dataclass(frozen=True, slots=True)
class StatsData:
    hands: int
    matches: int
    wins: int
    points: int
    opened: int
    finished: int
    penalties: int
    free_for_all: ratings.Rating | None
    partners: ratings.Rating | None


__all__ = [
    "AttrRow",
    "Page",
    "RecordedHand",
    "SheetData",
    "StandingLine",
    "StatsData",
    "now_us",
]
