"""A match: totals, the deal passing round, void hands, how a match ends and who wins.

oyna: "When a player's total reaches or passes 1,000, the match ends and the lowest total wins.
If the lowest total is shared, more than one player wins." Boombala: "The host picks 1, 3, 5, 7,
9 or 11 hands"; partners: "players sitting opposite each other form a team and their penalties
add up". North Sultan: 11 hands on public tables.
"""

from __future__ import annotations

import pytest

from okey101.engine.errors import InvalidInput
from okey101.engine.match import (
    BOOMBALA_HAND_CHOICES,
    MatchState,
    match_winners,
    new_match,
    record_hand,
)
from okey101.engine.result import EndReason, HandResult
from okey101.engine.rules import RuleSet

OYNA = RuleSet.preset("oyna")
BOOMBALA = RuleSet.preset("boombala")
NORTH_SULTAN = RuleSet.preset("north_sultan")
PARTNERS = BOOMBALA.with_overrides({"partners": True})


def _hand(*scores: int, reason: EndReason = EndReason.FINISHED) -> HandResult:
    assert len(scores) == 4
    return HandResult(reason, None, tuple(scores), (0, 0, 0, 0))


VOID = HandResult(EndReason.VOID, None, (0, 0, 0, 0), (0, 0, 0, 0))


def _record_all(match: MatchState, hands: list[HandResult]) -> MatchState:
    for hand in hands:
        match = record_hand(match, hand)
    return match


def test_record_hand_adds_scores_and_rotates_dealer() -> None:
    match = new_match(OYNA, dealer=2)
    match = record_hand(match, _hand(-101, 16, 14, 202))
    assert match.totals == (-101, 16, 14, 202)
    assert match.dealer == 3
    match = record_hand(match, _hand(30, -202, 404, 50, reason=EndReason.STOCK_OUT))
    assert match.totals == (-71, -186, 418, 252)
    assert match.dealer == 0  # wraps
    match = record_hand(match, _hand(1, 2, 3, 4))
    assert match.dealer == 1
    assert match.hands_played == 3
    assert len(match.hands) == 3
    assert not match.ended
    assert match.winners == ()


@pytest.mark.parametrize("rules", [OYNA, BOOMBALA, NORTH_SULTAN], ids=lambda r: r.name)
def test_void_hand_keeps_dealer_and_does_not_count(rules: RuleSet) -> None:
    match = new_match(rules, dealer=1)
    match = record_hand(match, _hand(10, 20, 30, 40))
    assert match.dealer == 2
    match = record_hand(match, VOID)
    assert match.dealer == 2
    assert match.hands_played == 1
    assert len(match.hands) == 2
    assert match.totals == (10, 20, 30, 40)
    match = record_hand(match, VOID)
    assert match.dealer == 2
    match = record_hand(match, _hand(0, 0, 0, 0))
    assert match.dealer == 3
    assert match.hands_played == 2


def test_oyna_does_not_end_at_999() -> None:
    match = record_hand(new_match(OYNA), _hand(999, 500, -101, 0))
    assert not match.ended
    assert match.winners == ()
    match = record_hand(match, _hand(0, 498, 0, 0))
    assert match.totals == (999, 998, -101, 0)
    assert not match.ended


def test_oyna_ends_when_a_total_reaches_1000() -> None:
    match = record_hand(new_match(OYNA), _hand(999, 500, -101, 0))
    match = record_hand(match, _hand(1, 0, 50, 0))
    assert match.totals == (1000, 500, -51, 0)
    assert match.ended
    assert match.winners == (2,)


def test_oyna_ends_when_a_total_passes_1000_lowest_wins() -> None:
    match = record_hand(new_match(OYNA), _hand(404, 808, 202, 300))
    assert not match.ended
    match = record_hand(match, _hand(404, 808, 202, -101))
    assert match.ended
    assert match.winners == (3,)


def test_oyna_ties_share_the_win() -> None:
    match = record_hand(new_match(OYNA), _hand(1200, 50, 300, 50))
    assert match.ended
    assert match.winners == (1, 3)
    four_way = record_hand(new_match(OYNA), _hand(0, 0, 0, 0))
    assert not four_way.ended


def test_oyna_is_not_a_fixed_number_of_hands() -> None:
    match = _record_all(new_match(OYNA), [_hand(1, 2, 3, 4)] * 30)
    assert not match.ended
    assert match.hands_played == 30
    assert match.totals == (30, 60, 90, 120)


def test_oyna_void_hand_cannot_end_a_match() -> None:
    match = record_hand(new_match(OYNA), _hand(990, 0, 0, 0))
    match = record_hand(match, VOID)
    assert not match.ended


@pytest.mark.parametrize("hands", BOOMBALA_HAND_CHOICES)
def test_boombala_host_choice_ends_after_n_counted_hands(hands: int) -> None:
    rules = BOOMBALA.with_overrides({"match_hands": hands})
    match = new_match(rules)
    for number in range(hands):
        assert not match.ended
        # A void hand between counted ones changes nothing.
        match = record_hand(match, VOID)
        assert not match.ended
        # Big totals do not end a fixed-hands match early.
        match = record_hand(match, _hand(2000, -101, 3 * number, 404))
    assert match.ended
    assert match.hands_played == hands
    assert match.totals == (2000 * hands, -101 * hands, 3 * sum(range(hands)), 404 * hands)
    assert match.winners == (1,)


def test_north_sultan_plays_eleven_hands() -> None:
    assert NORTH_SULTAN.match_hands == 11
    match = new_match(NORTH_SULTAN)
    for _ in range(10):
        match = record_hand(match, _hand(5, 5, 6, 7))
    assert not match.ended
    match = record_hand(match, _hand(0, 0, -1, -2))
    assert match.ended
    assert match.hands_played == 11
    assert match.totals == (50, 50, 59, 68)
    assert match.winners == (0, 1)


def test_fixed_hands_tie_shares() -> None:
    rules = BOOMBALA.with_overrides({"match_hands": 1})
    match = record_hand(new_match(rules), _hand(10, 10, 10, 10))
    assert match.ended
    assert match.winners == (0, 1, 2, 3)


def test_partners_add_opposite_seats_and_both_partners_win() -> None:
    rules = PARTNERS.with_overrides({"match_hands": 3})
    match = new_match(rules)
    match = record_hand(match, _hand(-101, 24, 10, 202))
    match = record_hand(match, _hand(50, -101, 60, 30))
    assert match.team_totals() == (-101 + 10 + 50 + 60, 24 + 202 - 101 + 30)
    assert not match.ended
    # Seats 1 and 3 win together: their team total is the lowest.
    match = record_hand(match, _hand(40, 40, 40, -300))
    assert match.totals == (-11, -37, 110, -68)
    assert match.team_totals() == (99, -105)
    assert match.ended
    assert match.winners == (1, 3)


def test_partners_lowest_team_even_if_not_lowest_seat() -> None:
    rules = PARTNERS.with_overrides({"match_hands": 1})
    match = record_hand(new_match(rules), _hand(-404, 500, 500, 0))
    # Team 0+2: 96; team 1+3: 500. Seat 0 is lowest and so is its team.
    assert match.winners == (0, 2)
    match = record_hand(new_match(rules), _hand(-404, 100, 600, 0))
    # Team 0+2: 196; team 1+3: 100, though seat 0 alone is lowest.
    assert match.winners == (1, 3)


def test_partners_tied_teams_share() -> None:
    rules = PARTNERS.with_overrides({"match_hands": 1})
    match = record_hand(new_match(rules), _hand(10, 20, 30, 20))
    assert match.winners == (0, 1, 2, 3)


def test_without_partners_seats_win_alone() -> None:
    rules = BOOMBALA.with_overrides({"match_hands": 1})
    match = record_hand(new_match(rules), _hand(-404, 100, 600, 0))
    assert match.winners == (0,)
    assert match_winners(match) == (0,)


@pytest.mark.parametrize(
    ("rules", "hands"),
    [
        (OYNA, [_hand(1000, 0, 0, 0)]),
        (BOOMBALA.with_overrides({"match_hands": 1}), [_hand(1, 2, 3, 4)]),
        (NORTH_SULTAN, [_hand(1, 2, 3, 4)] * 11),
        (PARTNERS.with_overrides({"match_hands": 3}), [_hand(1, 2, 3, 4)] * 3),
    ],
    ids=["oyna", "boombala-1", "north_sultan", "partners"],
)
def test_recording_after_the_end_raises_match_over(rules: RuleSet, hands: list[HandResult]) -> None:
    match = _record_all(new_match(rules), hands)
    assert match.ended
    for late in (_hand(0, 0, 0, 0), VOID):
        with pytest.raises(InvalidInput) as excinfo:
            record_hand(match, late)
        assert excinfo.value.code == "MATCH_OVER"


def test_fixed_hands_needs_at_least_one_hand() -> None:
    with pytest.raises(InvalidInput) as excinfo:
        new_match(BOOMBALA.with_overrides({"match_hands": 0}))
    assert excinfo.value.code == "BAD_RULE_VALUE"
