"""``RANDOM``: the engine's ``RandomPlayer`` played on the shadow (also the table's local
fallback when the bot service is unreachable)."""

from __future__ import annotations

import random

from okey101.engine.actions import Action, Discard, Draw, GiveBack, ShowIndicator, TakeDiscard
from okey101.engine.bots.levels import BotLevel, Decision
from okey101.engine.errors import RuleViolation
from okey101.engine.hand import HandState, Phase, apply, taken_unused
from okey101.engine.legal import legal_actions
from okey101.engine.playout import RandomPlayer, _Step


def random_decision(state: HandState, seat: int, seed: int, level: BotLevel) -> Decision:
    player = RandomPlayer(random.Random(seed))
    if state.phase is Phase.DRAW:
        # A whole turn on the shadow (a take only if the rest of the turn then works out); the
        # draw phase answers its first step.
        log = player.turn(state)
        first = log[0][0]
        reason = (
            "random: took the left discard"
            if isinstance(first, TakeDiscard)
            else ("random: drew from the stock")
        )
        return Decision((first,), reason, level)
    step = _Step(state, seat)
    after_take = taken_unused(state.this_turn, state.seats[seat].rack) is not None
    ok = player._finish_turn(seat, step, after_take=after_take)
    actions = [action for action, _state, _events in step.log]
    if any(isinstance(action, GiveBack) for action in actions):
        cut = next(i for i, action in enumerate(actions) if isinstance(action, GiveBack))
        return Decision(tuple(actions[: cut + 1]), "random: gave the taken tile back", level)
    if not ok:
        found = _search_turn(state, seat)
        if found is None:
            raise RuleViolation("NO_LEGAL_DISCARD")
        return Decision(found, "random: the only way to end the turn", level)
    return Decision(tuple(actions), "random: a random legal turn", level)


def _search_turn(state: HandState, seat: int) -> tuple[Action, ...] | None:
    """A last resort: some legal way to end the turn (or give a taken tile back)."""

    def search(current: HandState, depth: int) -> tuple[Action, ...] | None:
        actions = legal_actions(current, seat)
        for action in actions:
            if isinstance(action, (Discard, GiveBack)):
                return (action,)
        if depth == 0:
            return None
        for action in actions:
            if isinstance(action, (ShowIndicator, Draw, TakeDiscard)):
                continue
            after, _events = apply(current, seat, action)
            rest = search(after, depth - 1)
            if rest is not None:
                return (action, *rest)
        return None

    return search(state, 3)
