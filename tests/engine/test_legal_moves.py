"""``legal_moves`` / ``legal_actions`` against ``apply``.

On every position of seeded playouts of the three presets, and on every position the scenario
files play through: each listed move applies (and changes nothing), its cost is what ``apply``
charges and what the discard rule says, and every single-tile move ``apply`` accepts (a draw, a
take, a give-back, showing the indicator, each discard, each lay-off at each end, each okey
take-back with one, two or three rack tiles) is listed, tried exhaustively.
"""

from __future__ import annotations

import copy
from collections import Counter

import pytest

from okey101.engine.actions import (
    Action,
    Discard,
    GiveBack,
    LayDown,
    LayOff,
    Open,
    OpenPairs,
    TakeOkey,
)
from okey101.engine.hand import HandState
from okey101.engine.legal import LegalMove, legal_actions, legal_moves, suggested_melds
from okey101.engine.solver.playability import is_playable

from support.positions import PRESETS, applies, playout_states, scenario_states, single_tile_moves


def discard_cost(state: HandState, move: LegalMove) -> int:
    """The discard rule, independently: +101 for the okey or a playable tile, not for the
    discard that finishes."""
    assert isinstance(move.action, Discard)
    tile = move.action.tile
    if len(state.seats[state.turn].rack) == 1:
        return 0
    okey = state.okey
    if okey.is_wild(tile) or is_playable(tile, okey, state.table_melds(), state.rules):
        return state.rules.penalty_points
    return 0


def check(state: HandState, counts: Counter[str]) -> None:
    for seat in range(4):
        if state.ended or seat != state.turn:
            assert legal_moves(state, seat) == ()
            assert legal_actions(state, seat) == []
    if state.ended:
        return
    seat = state.turn
    snapshot = copy.deepcopy(state)
    moves = legal_moves(state, seat)
    assert legal_actions(state, seat) == [move.action for move in moves]
    assert suggested_melds(state, seat) == [move.action for move in moves if move.suggested]
    listed: dict[Action, HandState] = {}
    for move in moves:
        after = applies(state, move.action)
        assert after is not None, f"listed {move.action} does not apply"
        listed[move.action] = after
        charged = len(after.seats[seat].penalties) - len(state.seats[seat].penalties)
        assert move.penalty == charged * state.rules.penalty_points, move
        assert move.suggested == isinstance(move.action, (Open, OpenPairs, LayDown)), move
        if isinstance(move.action, Discard):
            assert move.penalty == discard_cost(state, move), move
            counts["costly discards"] += move.penalty > 0
        if isinstance(move.action, GiveBack):
            assert move.penalty == state.rules.penalty_points
    assert len(listed) == len(moves), "a move is listed twice"
    for action in single_tile_moves(state):
        after = applies(state, action)
        if after is None:
            continue
        counts[type(action).__name__] += 1
        if isinstance(action, TakeOkey) and len(action.tiles) > 1:
            counts["okeys taken by completing a set"] += 1
        if action in listed:
            continue
        # The same lay-off written another way: a run's end left unnamed where only one fits,
        # a set's end named (a set has none).
        assert isinstance(action, LayOff), f"{action} applies but is not listed"
        assert any(
            isinstance(other, LayOff)
            and (other.tile, other.meld) == (action.tile, action.meld)
            and result == after
            for other, result in listed.items()
        ), f"{action} applies but is not listed"
    assert state == snapshot


@pytest.mark.parametrize("preset", PRESETS)
def test_legal_moves_of_seeded_playouts(preset: str) -> None:
    counts: Counter[str] = Counter()
    for state in playout_states(preset):
        check(state, counts)
    assert counts["Draw"] >= 50 and counts["Discard"] >= 500, counts
    assert counts["LayOff"] > 0 and counts["TakeDiscard"] > 0, counts
    assert counts["costly discards"] > 0, counts


def test_legal_moves_of_the_scenarios() -> None:
    """The scenarios hold the rarer positions: okeys to take back (from a run, a pair, a set of
    three by completing it), give-backs, the indicator shown, the stock out."""
    counts: Counter[str] = Counter()
    for state in scenario_states():
        check(state, counts)
    assert counts["TakeOkey"] >= 3 and counts["GiveBack"] > 0, counts
    assert counts["okeys taken by completing a set"] > 0, counts
    assert counts["ShowIndicator"] > 0 and counts["LayOff"] >= 10, counts
