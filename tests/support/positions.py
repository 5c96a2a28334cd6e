"""Positions to check moves on, and the moves to try there: every state of seeded random
playouts of the three presets, every position the scenario files (``tests/scenarios/``) reach,
and every move of one tile (or none) whatever the rules or the phase.

``tests/engine/test_legal_moves.py`` and ``test_engine_hints.py`` check the engine's move lists
and hints on them; ``tests/table/test_hints_service.py`` the hints over gRPC.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Iterator
from pathlib import Path

import yaml

from okey101.engine.actions import (
    Action,
    Discard,
    Draw,
    End,
    GiveBack,
    LayOff,
    ShowIndicator,
    TakeDiscard,
    TakeOkey,
)
from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.errors import OkeyError
from okey101.engine.hand import HandState, apply
from okey101.engine.playout import RandomPlayer
from okey101.engine.rules import RuleSet
from okey101.engine.scenario import build_action, parse_scenario

PRESETS = ("oyna", "boombala", "north_sultan")
HANDS_PER_PRESET = 4
SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


@functools.cache
def playout_states(preset: str) -> tuple[HandState, ...]:
    """Every state of the preset's seeded random hands (the final ones included)."""
    out: list[HandState] = []
    for number in range(HANDS_PER_PRESET):
        seed = 104_729 * (PRESETS.index(preset) + 1) + number
        state = deal(RuleSet.preset(preset), number % 4, shuffled_deck(random.Random(seed)))
        players = [RandomPlayer(random.Random(seed * 10 + seat)) for seat in range(4)]
        out.append(state)
        while not state.ended:
            for _action, after, _events in players[state.turn].turn(state):
                out.append(after)
                state = after
    return tuple(out)


@functools.cache
def scenario_states() -> tuple[HandState, ...]:
    """Every position the scenario files reach (a refused move leaves the position as it was)."""
    out: list[HandState] = []
    for path in sorted(SCENARIOS.rglob("*.yaml")):
        scenario = parse_scenario(yaml.safe_load(path.read_text(encoding="utf-8")))
        state = scenario.state
        out.append(state)
        for move in scenario.moves:
            try:
                state, _events = apply(state, int(move["seat"]), build_action(state, move))
            except OkeyError:
                continue
            out.append(state)
    return tuple(out)


def single_tile_moves(state: HandState) -> Iterator[Action]:
    """Every move of one tile (or none) there is to try, whatever the rules or the phase."""
    yield from (Draw(), TakeDiscard(), GiveBack(), ShowIndicator())
    rack = state.seats[state.turn].rack
    for tile in rack:
        yield Discard(tile)
    for index, item in enumerate(state.table):
        for tile in rack:
            for end in (None, End.LOW, End.HIGH):
                yield LayOff(tile, index, end)
        if not any(item.meld.wild):
            continue
        for size in (1, 2, 3):
            for tiles in itertools.combinations(rack, size):
                yield TakeOkey(index, tiles)


def applies(state: HandState, action: Action) -> HandState | None:
    try:
        return apply(state, state.turn, action)[0]
    except OkeyError:
        return None
