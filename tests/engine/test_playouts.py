"""CI-sized random playouts of every preset: invariants, turn order, termination, determinism,
and the final scores recomputed here from the rule texts (independently of ``scoring.py``).
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass

import pytest

from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.hand import HandState, Phase
from okey101.engine.invariants import all_problems, event_problems
from okey101.engine.playout import RandomPlayer, play_out
from okey101.engine.result import EndReason, Finish
from okey101.engine.rules import OkeyInLosersHand, RuleSet
from okey101.engine.seat import OpenedAs
from okey101.engine.tiles import Tile

HANDS = 20
# A hand draws at most 20 tiles from the stock; every other turn takes a discard, which the
# random players do a quarter of the time at most. Far more than any real hand needs.
MAX_TURNS = 200

CONFIGS: dict[str, RuleSet] = {
    "oyna": RuleSet.preset("oyna"),
    "boombala": RuleSet.preset("boombala"),
    "north_sultan": RuleSet.preset("north_sultan"),
    "boombala_partners": RuleSet.preset("boombala").with_overrides({"partners": True}),
}


@dataclass(frozen=True)
class Played:
    final: HandState
    turns: int
    actions: int
    problems: tuple[str, ...]


def _seeds(config: str, number: int) -> tuple[int, list[int]]:
    base = 104729 * (list(CONFIGS).index(config) + 1) + 31 * number
    return base, [base * 4 + seat for seat in range(4)]


def _start(config: str, number: int) -> tuple[HandState, list[RandomPlayer]]:
    deck_seed, player_seeds = _seeds(config, number)
    state = deal(CONFIGS[config], number % 4, shuffled_deck(random.Random(deck_seed)))
    return state, [RandomPlayer(random.Random(seed)) for seed in player_seeds]


@functools.cache
def play(config: str, number: int) -> Played:
    """One hand, checked after every move."""
    state, players = _start(config, number)
    problems: list[str] = [*all_problems(state)]
    turns = actions = 0
    while not state.ended:
        if turns >= MAX_TURNS:
            problems.append(f"no end after {MAX_TURNS} turns")
            break
        seat = state.turn
        turn_number = state.turn_number
        for action, after, events in players[seat].turn(state):
            actions += 1
            problems += [f"after {action}: {p}" for p in all_problems(after)]
            problems += [f"after {action}: {p}" for p in event_problems(events, seat)]
            state = after
        turns += 1
        if not state.ended:
            if state.turn != (seat + 1) % 4:
                problems.append(f"turn went {seat} -> {state.turn}")
            if state.turn_number != turn_number + 1:
                problems.append(f"turn number went {turn_number} -> {state.turn_number}")
            if state.phase is not Phase.DRAW:
                problems.append(f"a turn began in phase {state.phase}")
    return Played(state, turns, actions, tuple(problems))


CASES = [(config, number) for config in CONFIGS for number in range(HANDS)]


@pytest.mark.parametrize(("config", "number"), CASES)
def test_invariants_turn_order_and_end(config: str, number: int) -> None:
    played = play(config, number)
    assert played.problems == ()
    final = played.final
    assert final.ended
    assert final.phase is Phase.ENDED
    assert played.turns <= MAX_TURNS
    result = final.result
    assert result is not None
    assert result.reason in (EndReason.FINISHED, EndReason.STOCK_OUT, EndReason.VOID)
    if result.reason is EndReason.FINISHED:
        assert result.finish is not None
        assert final.seats[result.finish.winner].rack == ()
    else:
        assert result.finish is None
    if result.reason is EndReason.STOCK_OUT:
        assert final.stock == ()
    if result.reason is EndReason.VOID:
        assert all(seat.opened_as is OpenedAs.PAIRS for seat in final.seats)


@pytest.mark.parametrize("config", CONFIGS)
def test_same_seeds_replay_identically(config: str) -> None:
    for number in range(0, HANDS, 4):
        state, players = _start(config, number)
        again, stats = play_out(state, players, max_turns=MAX_TURNS)
        played = play(config, number)
        assert again == played.final
        assert stats.turns == played.turns
        assert stats.actions == played.actions


@pytest.mark.parametrize("config", CONFIGS)
def test_different_seeds_differ(config: str) -> None:
    finals = {play(config, number).final for number in range(HANDS)}
    assert len(finals) == HANDS


def test_playouts_are_varied_enough() -> None:
    """The sample sees finishes as well as empty stocks (else the score checks prove little)."""
    reasons = [play(c, n).final.result.reason for c, n in CASES]  # type: ignore[union-attr]
    assert reasons.count(EndReason.FINISHED) >= 5
    assert reasons.count(EndReason.STOCK_OUT) >= 5
    opened = [seat.opened_as for c, n in CASES for seat in play(c, n).final.seats if seat.opened_as]
    assert OpenedAs.RUNS in opened
    assert OpenedAs.PAIRS in opened


# --- Scores, recomputed from the rule texts ------------------------------------------------------


def _okey_number(state: HandState) -> int:
    number = state.okey.indicator.number
    assert number is not None
    return 1 if number == 13 else number + 1


def _is_okey(state: HandState, tile: Tile) -> bool:
    return (
        not tile.is_false_joker
        and tile.colour == state.okey.indicator.colour
        and tile.number == _okey_number(state)
    )


def _number(state: HandState, tile: Tile) -> int:
    """What a tile left in hand counts: its number; a false joker the okey's number."""
    if tile.is_false_joker:
        return _okey_number(state)
    assert tile.number is not None
    return tile.number


def _multiplier(rules: RuleSet, finish: Finish) -> int:
    m = 1
    if finish.with_okey and rules.double_with_okey:
        m *= 2
    if finish.after_pairs and rules.double_after_pairs_opening:
        m *= 2
    if finish.one_go:
        m *= 2
    if not rules.finish_doublings_stack:
        m = min(m, 2)
    return m


def expected_scores(final: HandState) -> tuple[int, ...]:
    result = final.result
    assert result is not None
    rules = final.rules
    if result.reason is EndReason.VOID:
        return (0, 0, 0, 0)
    finish = result.finish
    m = _multiplier(rules, finish) if finish is not None else 1
    scores = []
    for index, seat in enumerate(final.seats):
        if finish is not None and index == finish.winner:
            points = rules.finish_points * m
        elif seat.opened_as is None:
            points = 202 * m
            if rules.never_opened_cap:
                points = min(points, rules.never_opened_cap)
        else:
            okeys = sum(1 for tile in seat.rack if _is_okey(final, tile))
            hand = sum(_number(final, tile) for tile in seat.rack if not _is_okey(final, tile))
            if rules.okey_in_losers_hand is OkeyInLosersHand.IN_HAND_SUM:
                hand += 101 * okeys
            if seat.opened_as is OpenedAs.PAIRS:
                hand *= 2
            points = hand * m
            if rules.okey_in_losers_hand is OkeyInLosersHand.ADDED_UNDOUBLED:
                points += 101 * okeys
        points += 101 * len(seat.penalties)
        if seat.showed_indicator:
            points += rules.indicator_show_points
        scores.append(points)
    return tuple(scores)


@pytest.mark.parametrize(("config", "number"), CASES)
def test_final_scores_follow_from_the_final_state(config: str, number: int) -> None:
    final = play(config, number).final
    result = final.result
    assert result is not None
    assert result.scores == expected_scores(final)
    if result.reason is EndReason.VOID:
        assert result.penalties == (0, 0, 0, 0)
        return
    assert result.penalties == tuple(101 * len(seat.penalties) for seat in final.seats)
    finish = result.finish
    if finish is not None:
        assert finish.multiplier == _multiplier(final.rules, finish)
        winner = final.seats[finish.winner]
        last = winner.discards[-1]
        assert finish.with_okey == _is_okey(final, last)
        assert finish.after_pairs == (winner.opened_as is OpenedAs.PAIRS)
        if finish.one_go:
            assert winner.opened_as is OpenedAs.RUNS or final.rules.name == "boombala"
            assert winner.opened_on_turn == final.turn_number
        assert result.winner == finish.winner
    else:
        assert result.winner is None


WIDER = 60


@pytest.mark.parametrize("config", CONFIGS)
def test_wider_sample_ends_and_scores_follow(config: str) -> None:
    """More hands, checked only at the end: each ends in bounds and scores as recomputed."""
    for number in range(HANDS, HANDS + WIDER):
        state, players = _start(config, number)
        final, stats = play_out(state, players, max_turns=MAX_TURNS)
        assert stats.turns <= MAX_TURNS
        assert final.result is not None
        assert final.result.scores == expected_scores(final), f"hand {number}"
