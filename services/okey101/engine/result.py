"""How a hand ended: why (``EndReason``), how it was finished (``Finish``), and each seat's
points (``HandResult``).

The hand ends itself and scoring scores it: both read these, and neither imports the other.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class EndReason(enum.StrEnum):
    FINISHED = "finished"
    STOCK_OUT = "stock_out"
    VOID = "void"


@dataclass(frozen=True, slots=True)
class Finish:
    """How a finished hand was finished, and the multiplier it brings."""

    winner: int
    with_okey: bool
    after_pairs: bool
    one_go: bool
    multiplier: int


@dataclass(frozen=True, slots=True)
class HandResult:
    """A hand that has ended: why, how, and each seat's points (+101s included)."""

    reason: EndReason
    finish: Finish | None
    scores: tuple[int, ...]
    penalties: tuple[int, ...]

    @property
    def winner(self) -> int | None:
        return self.finish.winner if self.finish else None
