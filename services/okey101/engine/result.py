"""How a hand ended: why (``EndReason``), how it was finished (``Finish``), and each seat's
points (``HandResult``) with the lines they are made of (``ScoreLine``).

The hand ends itself and scoring scores it: both read these, and neither imports the other.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from okey101.engine.seat import PenaltyReason


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


class ScoreLineKind(enum.StrEnum):
    """What a line of a seat's hand score is for."""

    # The finisher's finish_points (-101).
    FINISHED = "finished"
    # A seat that never opened: never_opened_points (202).
    NEVER_OPENED = "never_opened"
    # A seat that opened: the numbers of the tiles left in its rack (okeys apart).
    RACK_SUM = "rack_sum"
    # 101 for each okey left in a loser's rack (inside the doubling or outside it, as the rule
    # set says: the line stands where it is counted).
    OKEY_IN_HAND = "okey_in_hand"
    # The points above it doubled: this line is the added half (``doubled_for`` says why).
    DOUBLED = "doubled"
    # The never-opened points cut down to the rule set's cap (North Sultan: 808).
    CAPPED = "capped"
    # Boombala: the indicator's twin shown on the first turn (-101).
    INDICATOR_SHOWN = "indicator_shown"
    # A +101 charged during the hand (``penalty`` says for what); never doubled.
    PENALTY = "penalty"


class Doubling(enum.StrEnum):
    """Why points were doubled."""

    # The finisher's last discard was an okey.
    OKEY_FINISH = "okey_finish"
    # The finisher had opened with pairs.
    PAIRS_FINISH = "pairs_finish"
    # The finisher opened and finished in one go (as the rule set defines it).
    ONE_GO = "one_go"
    # This seat opened with pairs: its own rack counts double.
    OPENED_WITH_PAIRS = "opened_with_pairs"


@dataclass(frozen=True, slots=True)
class ScoreLine:
    """One line of a seat's points for a hand; a seat's lines add up to its points.

    ``count``: on RACK_SUM the tiles counted, on OKEY_IN_HAND the okeys (0 otherwise).
    ``doubled_for``: on DOUBLED, why (one reason; several where a rule set doubles once however
    many apply: Boombala). ``penalty``: on PENALTY, what it was charged for."""

    kind: ScoreLineKind
    points: int
    count: int = 0
    doubled_for: tuple[Doubling, ...] = ()
    penalty: PenaltyReason | None = None


@dataclass(frozen=True, slots=True)
class HandResult:
    """A hand that has ended: why, how, and each seat's points (+101s included).

    ``lines`` holds each seat's score lines, in seat order, each seat's adding up to its score;
    empty for a void hand, and where the result was read from a message without them."""

    reason: EndReason
    finish: Finish | None
    scores: tuple[int, ...]
    penalties: tuple[int, ...]
    lines: tuple[tuple[ScoreLine, ...], ...] = ()

    @property
    def winner(self) -> int | None:
        return self.finish.winner if self.finish else None
