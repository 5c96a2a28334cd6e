"""A match: hands added up until the rule set says it is over.

- ``MatchEnd.TARGET_TOTAL`` (oyna): over once a total reaches the target (1,000).
- ``MatchEnd.FIXED_HANDS`` (Boombala: the host picks 1, 3, 5, 7, 9 or 11; North Sultan: 11).

A match may also be cut short (a table's match deadline, which the caller reads from its own
clock and passes in: the engine reads none): ``record_hand(..., last=True)`` ends it with that
hand, ``end_match`` between hands; it is then ranked by its totals like any match.

The lowest total wins; ties share the win. With partners (Boombala's option) opposite seats
(0 and 2, 1 and 3) add up and both partners of the lowest team win. A void hand counts for
nothing and the same dealer deals again; otherwise the deal passes to the next seat.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from okey101.engine.errors import InvalidInput
from okey101.engine.hand import SEATS
from okey101.engine.result import EndReason, HandResult
from okey101.engine.rules import MatchEnd, RuleSet

BOOMBALA_HAND_CHOICES = (1, 3, 5, 7, 9, 11)


@dataclass(frozen=True, slots=True)
class MatchState:
    """The score sheet of a match so far."""

    rules: RuleSet
    dealer: int = 0
    hands: tuple[HandResult, ...] = ()
    totals: tuple[int, ...] = (0, 0, 0, 0)
    ended: bool = False
    winners: tuple[int, ...] = ()
    #: Ended before its planned length (``last`` or ``end_match``: a deadline), not by its rules.
    cut_short: bool = False

    @property
    def hands_played(self) -> int:
        """Hands that count (void hands do not)."""
        return sum(1 for hand in self.hands if hand.reason is not EndReason.VOID)

    def team_totals(self) -> tuple[int, int]:
        """Partners' totals: seats 0+2 and 1+3."""
        return (self.totals[0] + self.totals[2], self.totals[1] + self.totals[3])


def new_match(rules: RuleSet, dealer: int = 0) -> MatchState:
    if rules.match_end is MatchEnd.FIXED_HANDS and rules.match_hands < 1:
        raise InvalidInput("BAD_RULE_VALUE", rule="match_hands", value=str(rules.match_hands))
    return MatchState(rules=rules, dealer=dealer)


def record_hand(match: MatchState, result: HandResult, *, last: bool = False) -> MatchState:
    """The match after one more hand: totals, next dealer, and whether it is over. ``last``:
    the match ends with this hand whatever its planned length (``cut_short`` if its rules would
    have gone on)."""
    if match.ended:
        raise InvalidInput("MATCH_OVER")
    totals = tuple(total + score for total, score in zip(match.totals, result.scores, strict=True))
    void = result.reason is EndReason.VOID
    dealer = match.dealer if void else (match.dealer + 1) % SEATS
    after = dataclasses.replace(match, hands=(*match.hands, result), totals=totals, dealer=dealer)
    rules = match.rules
    if rules.match_end is MatchEnd.TARGET_TOTAL:
        over = any(total >= rules.match_target for total in totals)
    else:
        over = after.hands_played >= rules.match_hands
    if not over:
        return end_match(after) if last else after
    return dataclasses.replace(after, ended=True, winners=match_winners(after))


def end_match(match: MatchState) -> MatchState:
    """The match ended now, between hands, before its planned length (``cut_short``): its
    winners are the lowest totals so far, as at any match's end."""
    if match.ended:
        raise InvalidInput("MATCH_OVER")
    return dataclasses.replace(match, ended=True, winners=match_winners(match), cut_short=True)


def match_winners(match: MatchState) -> tuple[int, ...]:
    """The seats with the lowest total (or of the lowest team, with partners); ties share."""
    if match.rules.partners:
        teams = match.team_totals()
        best = min(teams)
        return tuple(seat for seat in range(SEATS) if teams[seat % 2] == best)
    best = min(match.totals)
    return tuple(seat for seat, total in enumerate(match.totals) if total == best)
