"""The bots' finish planning (``okey101.engine.bots.finish``): positions where the greedy put-down
does not go out and the search does, and that what it finds applies to the real state and ends
the hand with the seat's finish; the stronger levels play it.

Positions are written as rule scenarios (docs/scenarios.md) and read with the engine's parser.
"""

from __future__ import annotations

from typing import Any

import pytest

from okey101.engine.bots.context import build_context
from okey101.engine.bots.entry_points import decide
from okey101.engine.bots.expert import ExpertBudget
from okey101.engine.bots.finish import finish
from okey101.engine.bots.levels import BotLevel
from okey101.engine.bots.memory import BotMemory
from okey101.engine.bots.plan import Plan
from okey101.engine.bots.put_down import put_down
from okey101.engine.bots.shadow import shadow_state
from okey101.engine.hand import HandState, apply
from okey101.engine.scenario import parse_scenario
from okey101.engine.view import view

BUDGET = ExpertBudget(playouts=12, seconds=None)

# Oyna, the okey Y10 (indicator Y9). Seat 0 opened with runs, seat 1 with pairs (so seat 0 may
# put pairs down). Seat 0 has drawn and holds R5 R6 and the okey: neither real tile goes on any
# meld, so only a pair of the okey with one of them leaves one tile to throw (the greedy
# put-down keeps the okey out of pairs).
PAIR_WITH_THE_OKEY: dict[str, Any] = {
    "rules": "oyna",
    "indicator": "Y9",
    "turn": 0,
    "phase": "play",
    "racks": {
        0: ["R5", "R6", "Y10"],
        1: ["K1", "K2", "K3", "B1", "B2", "B3", "Y1", "Y2", "Y3"],
        2: ["R9", "R11", "K9", "K11", "B9", "B11"],
        3: ["Y12", "Y13", "K12", "K13", "B12", "B13"],
    },
    "table": [
        {"owner": 0, "tiles": ["B5", "B6", "B7"]},
        {"owner": 0, "tiles": ["K5", "K6", "K7"]},
        {"owner": 1, "tiles": ["R1", "R1"]},
    ],
    "opened": {0: "runs", 1: "pairs"},
    "stock_count": 12,
}

# Oyna, the okey Y6 (indicator Y5). Seat 0 opened with runs and holds the okey, R7 and B9,
# R4-R6 and B10-B12 on the table: both real tiles lay off and the okey is thrown last (the
# finish doubles).
OKEY_LAST: dict[str, Any] = {
    "rules": "oyna",
    "indicator": "Y5",
    "turn": 0,
    "phase": "play",
    "racks": {
        0: ["Y6", "R7", "B9"],
        1: ["K1", "K2", "K3", "B1", "B2", "B3"],
        2: ["R9", "R11", "K9", "K11", "B3", "B4"],
        3: ["Y12", "Y13", "K12", "K13", "B6", "B7"],
    },
    "table": [
        {"owner": 0, "tiles": ["R4", "R5", "R6"]},
        {"owner": 0, "tiles": ["B10", "B11", "B12"]},
    ],
    "opened": {0: "runs"},
    "stock_count": 12,
}


def _position(data: dict[str, Any]) -> HandState:
    return parse_scenario(data).state


def _shadow_plan(state: HandState) -> tuple[Plan, Any]:
    seen = view(state, state.turn)
    memory = BotMemory(state.turn).observe_view(seen)
    ctx = build_context(seen, state.rules, BotLevel.HARD, memory)
    return Plan(shadow_state(seen, state.rules, memory), state.turn), ctx


def _play(state: HandState, actions: tuple[Any, ...]) -> HandState:
    for action in actions:
        state, _events = apply(state, state.turn, action)  # raises on an illegal action
        if state.ended:
            break
    return state


def test_the_search_pairs_the_okey_where_the_greedy_put_down_does_not_go_out() -> None:
    state = _position(PAIR_WITH_THE_OKEY)
    plan, ctx = _shadow_plan(state)
    greedy = put_down(ctx, plan.copy())
    assert not greedy.ended  # the okey stays out of pairs: no finish
    found = finish(ctx, plan)
    assert found is not None
    after = _play(state, tuple(found.actions))
    assert after.result is not None and after.result.finish is not None
    assert after.result.finish.winner == 0


def test_the_search_throws_the_okey_last_where_it_can() -> None:
    state = _position(OKEY_LAST)
    plan, ctx = _shadow_plan(state)
    found = finish(ctx, plan)
    assert found is not None
    after = _play(state, tuple(found.actions))
    assert after.result is not None and after.result.finish is not None
    assert after.result.finish.with_okey
    assert after.result.scores[0] == 2 * state.rules.finish_points


def test_the_search_finds_nothing_where_no_finish_exists() -> None:
    data = dict(OKEY_LAST)
    data["racks"] = {**OKEY_LAST["racks"], 0: ["K2", "R10", "B2", "Y1"]}
    state = _position(data)
    plan, ctx = _shadow_plan(state)
    assert finish(ctx, plan) is None


@pytest.mark.parametrize("level", [BotLevel.HARD, BotLevel.EXPERT])
def test_hard_and_expert_go_out_with_the_okey_in_a_pair(level: BotLevel) -> None:
    state = _position(PAIR_WITH_THE_OKEY)
    decision = decide(view(state, 0), state.rules, level, 1, budget=BUDGET)
    after = _play(state, decision.actions)
    assert after.result is not None and after.result.finish is not None
    assert after.result.finish.winner == 0
