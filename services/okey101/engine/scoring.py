"""Scoring a hand: penalty points per seat (lower is better).

After a finish, with ``m`` the finish's multiplier (x2 for each of: the okey thrown last, a
pairs opener finishing, going out in one go / a hand finish, as the rule set says):

- the finisher scores ``finish_points * m`` (-101, -202, -404);
- a seat that never opened scores ``never_opened_points * m`` (202, 404, 808), capped where the
  rule set caps it (North Sultan: 808);
- a seat that opened scores H, the numbers of the tiles left in its hand (a false joker counts
  the okey's face), twice that if it opened with pairs, times ``m``. An okey left in hand adds
  101 outside the multiplication (oyna: "never doubled") or counts 101 inside H (Boombala,
  North Sultan);
- every +101 charged during the hand is added, never doubled; Boombala's shown indicator -101
  likewise.

With the stock out there is no finisher and ``m`` is 1. A void hand scores nothing and wipes the
+101s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from okey101.engine.result import EndReason, Finish, HandResult
from okey101.engine.rules import OkeyInLosersHand, RuleSet
from okey101.engine.seat import OpenedAs, Seat
from okey101.engine.tiles import Okey, face_number


class ScoredHand(Protocol):
    """What scoring reads of a hand (``HandState`` is one): the rules, the okey and the
    seats. Scoring names no more of it, so that the hand may call scoring when it ends."""

    @property
    def rules(self) -> RuleSet: ...

    @property
    def okey(self) -> Okey: ...

    @property
    def seats(self) -> Sequence[Seat]: ...


def seat_penalties(state: ScoredHand, seat: Seat) -> int:
    """The +101s a seat was charged this hand."""
    return len(seat.penalties) * state.rules.penalty_points


def loser_points(state: ScoredHand, seat: Seat, multiplier: int) -> int:
    """What a seat that did not finish scores from its hand (penalties not included)."""
    rules = state.rules
    okey = state.okey
    if seat.opened_as is None:
        points = rules.never_opened_points * multiplier
        if rules.never_opened_cap:
            points = min(points, rules.never_opened_cap)
        return points
    okeys = sum(1 for tile in seat.rack if okey.is_wild(tile))
    hand_sum = sum(face_number(okey.plays_as(tile)) for tile in seat.rack if not okey.is_wild(tile))
    inside = rules.okey_in_losers_hand is OkeyInLosersHand.IN_HAND_SUM
    if inside:
        hand_sum += okeys * rules.okey_in_hand_points
    if seat.opened_as is OpenedAs.PAIRS:
        hand_sum *= 2
    points = hand_sum * multiplier
    if not inside:
        points += okeys * rules.okey_in_hand_points
    return points


def score_hand(state: ScoredHand, reason: EndReason, finish: Finish | None) -> HandResult:
    """Each seat's points for a hand that ended for ``reason``."""
    penalties = tuple(seat_penalties(state, seat) for seat in state.seats)
    if reason is EndReason.VOID:
        return HandResult(reason, None, (0,) * len(state.seats), (0,) * len(state.seats))
    multiplier = finish.multiplier if finish is not None else 1
    scores = []
    for index, seat in enumerate(state.seats):
        if finish is not None and index == finish.winner:
            points = state.rules.finish_points * multiplier
        else:
            points = loser_points(state, seat, multiplier)
        if seat.showed_indicator:
            points += state.rules.indicator_show_points
        scores.append(points + penalties[index])
    return HandResult(reason, finish, tuple(scores), penalties)
