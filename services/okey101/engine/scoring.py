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

Each seat's points are made of score lines (``ScoreLine``), in the order they are counted: the
base (FINISHED, NEVER_OPENED, or RACK_SUM and an okey counted inside it), a DOUBLED line for each
doubling (the added half, with why: the seat's own pairs opening, then each of the finish's), a
CAPPED line where the cap cuts, an okey added undoubled, the shown indicator, and one PENALTY line
per +101 with what it was for. The points are the sum of the lines: there is no other count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from okey101.engine.result import Doubling, EndReason, Finish, HandResult, ScoreLine, ScoreLineKind
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


def doubling_reasons(
    rules: RuleSet, *, with_okey: bool, after_pairs: bool, one_go: bool
) -> tuple[Doubling, ...]:
    """The finish's reasons to double that the rule set counts."""
    reasons = []
    if with_okey and rules.double_with_okey:
        reasons.append(Doubling.OKEY_FINISH)
    if after_pairs and rules.double_after_pairs_opening:
        reasons.append(Doubling.PAIRS_FINISH)
    if one_go:
        reasons.append(Doubling.ONE_GO)
    return tuple(reasons)


def finish_doublings(rules: RuleSet, finish: Finish | None) -> tuple[tuple[Doubling, ...], ...]:
    """The doublings a finish brings to every score, each with its reasons: one per reason
    where doublings stack, a single one naming them all where they do not (boombala). As many
    as the finish's multiplier says (a multiplier given with other flags keeps its doublings,
    their reasons as the flags say)."""
    if finish is None:
        return ()
    reasons = doubling_reasons(
        rules, with_okey=finish.with_okey, after_pairs=finish.after_pairs, one_go=finish.one_go
    )
    count = finish.multiplier.bit_length() - 1
    if rules.finish_doublings_stack and len(reasons) == count:
        return tuple((reason,) for reason in reasons)
    return (reasons,) * count


def _doubled(lines: list[ScoreLine], points: int, doublings: Sequence[tuple[Doubling, ...]]) -> int:
    """``points`` doubled once per doubling, a DOUBLED line for each (none for nothing)."""
    for reasons in doublings:
        if points:
            lines.append(ScoreLine(ScoreLineKind.DOUBLED, points, doubled_for=reasons))
        points *= 2
    return points


def loser_lines(
    state: ScoredHand, seat: Seat, doublings: Sequence[tuple[Doubling, ...]]
) -> list[ScoreLine]:
    """What a seat that did not finish scores from its hand (penalties not included)."""
    rules = state.rules
    okey = state.okey
    lines: list[ScoreLine] = []
    if seat.opened_as is None:
        lines.append(ScoreLine(ScoreLineKind.NEVER_OPENED, rules.never_opened_points))
        points = _doubled(lines, rules.never_opened_points, doublings)
        cap = rules.never_opened_cap
        if cap and points > cap:
            lines.append(ScoreLine(ScoreLineKind.CAPPED, cap - points))
        return lines
    counted = [okey.plays_as(tile) for tile in seat.rack if not okey.is_wild(tile)]
    okeys = len(seat.rack) - len(counted)
    hand_sum = sum(face_number(face) for face in counted)
    lines.append(ScoreLine(ScoreLineKind.RACK_SUM, hand_sum, count=len(counted)))
    okey_line = ScoreLine(
        ScoreLineKind.OKEY_IN_HAND, okeys * rules.okey_in_hand_points, count=okeys
    )
    inside = rules.okey_in_losers_hand is OkeyInLosersHand.IN_HAND_SUM
    if inside and okeys:
        lines.append(okey_line)
        hand_sum += okey_line.points
    if seat.opened_as is OpenedAs.PAIRS:
        hand_sum = _doubled(lines, hand_sum, [(Doubling.OPENED_WITH_PAIRS,)])
    _doubled(lines, hand_sum, doublings)
    if not inside and okeys:
        lines.append(okey_line)
    return lines


def seat_penalties(state: ScoredHand, seat: Seat) -> int:
    """The +101s a seat was charged this hand."""
    return len(seat.penalties) * state.rules.penalty_points


def seat_lines(
    state: ScoredHand, index: int, finish: Finish | None, doublings: Sequence[tuple[Doubling, ...]]
) -> tuple[ScoreLine, ...]:
    """A seat's score lines for a hand that was not void (module docstring)."""
    rules = state.rules
    seat = state.seats[index]
    if finish is not None and index == finish.winner:
        lines = [ScoreLine(ScoreLineKind.FINISHED, rules.finish_points)]
        _doubled(lines, rules.finish_points, doublings)
    else:
        lines = loser_lines(state, seat, doublings)
    if seat.showed_indicator and rules.indicator_show_points:
        lines.append(ScoreLine(ScoreLineKind.INDICATOR_SHOWN, rules.indicator_show_points))
    lines.extend(
        ScoreLine(ScoreLineKind.PENALTY, rules.penalty_points, penalty=reason)
        for reason in seat.penalties
    )
    return tuple(lines)


def score_hand(state: ScoredHand, reason: EndReason, finish: Finish | None) -> HandResult:
    """Each seat's points for a hand that ended for ``reason``, and their lines."""
    seats = len(state.seats)
    if reason is EndReason.VOID:
        return HandResult(reason, None, (0,) * seats, (0,) * seats)
    doublings = finish_doublings(state.rules, finish)
    lines = tuple(seat_lines(state, index, finish, doublings) for index in range(seats))
    scores = tuple(sum(line.points for line in seat) for seat in lines)
    penalties = tuple(seat_penalties(state, seat) for seat in state.seats)
    return HandResult(reason, finish, scores, penalties, lines)
