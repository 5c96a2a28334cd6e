"""A played hand as a scenario file (docs/scenarios.md): the deal and every move, with what the
engine computed as the ``expect``. ``okey101 export-hand`` writes one from a table's hand record
so that any dispute can be replayed with ``okey101 scenario run``.

The scenario starts from the deal itself: every rack, the indicator, the stock in draw order,
the dealer and the starting seat in its first turn. Moves name tiles by face (``R7``, ``FJ``);
where a rack holds both copies of a face either copy plays the same, so the file means exactly
the hand that was played.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from okey101.engine.actions import (
    Action,
    Discard,
    Draw,
    GiveBack,
    Group,
    LayDown,
    LayOff,
    Open,
    OpenPairs,
    ShowIndicator,
    TakeDiscard,
    TakeOkey,
    action_name,
)
from okey101.engine.deal import deal
from okey101.engine.errors import OkeyError
from okey101.engine.hand import HandState, apply
from okey101.engine.rules import RuleSet
from okey101.engine.scenario import MoveOutcome, ScenarioResult
from okey101.engine.tiles import Tile, face_name


def _name(tile: Tile) -> str:
    return str(tile)


def _group(group: Group) -> list[str]:
    return [_name(tile) for tile in group.tiles]


def move_of(seat: int, action: Action) -> dict[str, Any]:
    """One scenario move for an engine action."""
    if isinstance(action, Draw):
        return {"seat": seat, "draw": True}
    if isinstance(action, TakeDiscard):
        return {"seat": seat, "take": True}
    if isinstance(action, GiveBack):
        return {"seat": seat, "give_back": True}
    if isinstance(action, ShowIndicator):
        return {"seat": seat, "show_indicator": True}
    if isinstance(action, Discard):
        return {"seat": seat, "discard": _name(action.tile)}
    if isinstance(action, Open | LayDown):
        groups: list[Any] = []
        for group in action.groups:
            if group.okey_as:
                groups.append(
                    {"tiles": _group(group), "okey_as": [face_name(f) for f in group.okey_as]}
                )
            else:
                groups.append(_group(group))
        return {"seat": seat, "open" if isinstance(action, Open) else "meld": groups}
    if isinstance(action, OpenPairs):
        return {"seat": seat, "open_pairs": [[_name(a), _name(b)] for a, b in action.pairs]}
    if isinstance(action, LayOff):
        lay_off: dict[str, Any] = {"tile": _name(action.tile), "meld": action.meld}
        if action.end is not None:
            lay_off["end"] = action.end.value
        return {"seat": seat, "lay_off": lay_off}
    if isinstance(action, TakeOkey):
        return {
            "seat": seat,
            "take_okey": {"meld": action.meld, "with": [_name(t) for t in action.tiles]},
        }
    raise TypeError(f"not a move: {action!r}")


def rule_overrides(rules: RuleSet) -> dict[str, Any]:
    """The knobs where ``rules`` differs from its preset."""
    preset = RuleSet.preset(rules.name).knobs()
    return {
        key: value
        for key, value in rules.knobs().items()
        if key != "name" and preset.get(key) != value
    }


def hand_scenario(
    rules: RuleSet,
    dealer: int,
    deck: Sequence[Tile],
    moves: Sequence[tuple[int, Action]],
) -> dict[str, Any]:
    """The scenario of a hand dealt from ``deck`` by ``dealer`` and played with ``moves``; its
    ``expect`` is what the engine computes (a move it rejects is expected rejected)."""
    state: HandState = deal(rules, dealer, deck)
    start = state
    outcomes: list[MoveOutcome] = []
    written: list[dict[str, Any]] = []
    for seat, action in moves:
        written.append(move_of(seat, action))
        try:
            state, _ = apply(state, seat, action)
        except OkeyError as error:
            outcomes.append(MoveOutcome(seat, action_name(action), False, error.code, ""))
            continue
        outcomes.append(MoveOutcome(seat, action_name(action), True))
    result = ScenarioResult(state, tuple(outcomes))
    scenario: dict[str, Any] = {
        "rules": rules.name,
        "rule_overrides": rule_overrides(rules),
        "indicator": _name(start.okey.indicator),
        "dealer": dealer,
        "turn": start.turn,
        "phase": start.phase.value,
        "racks": {seat: [_name(t) for t in start.seats[seat].rack] for seat in range(4)},
        "stock": [_name(t) for t in start.stock],
        "moves": written,
    }
    expect: dict[str, Any] = {
        "moves": ["ok" if o.ok else {"rejected": o.code} for o in result.moves],
        "penalties": result.penalties(),
        "hand": result.hand(),
    }
    scores = result.scores()
    if scores:
        expect["scores"] = scores
    scenario["expect"] = expect
    return scenario
