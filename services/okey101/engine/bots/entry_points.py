"""The bots' entry points: ``decide`` (the seat's actions for the current phase, and why) and
``fallback_decision`` (the table's local fallback)."""

from __future__ import annotations

import time

from okey101.engine.bots.context import build_context
from okey101.engine.bots.draw import draw_decision
from okey101.engine.bots.expert import DEFAULT_BUDGET, ExpertBudget, expert_decision
from okey101.engine.bots.levels import BotLevel, Decision
from okey101.engine.bots.memory import BotMemory
from okey101.engine.bots.play import play_decision
from okey101.engine.bots.random_level import random_decision
from okey101.engine.bots.shadow import shadow_state
from okey101.engine.errors import InvalidInput, RuleViolation
from okey101.engine.hand import SEATS, Phase
from okey101.engine.rules import RuleSet
from okey101.engine.view import SeatView


def decide(
    view: SeatView,
    rules: RuleSet,
    level: BotLevel,
    seed: int,
    memory: BotMemory | None = None,
    *,
    budget: ExpertBudget = DEFAULT_BUDGET,
) -> Decision:
    """The bot's actions for the current phase of ``view`` (the seat to move) and why.

    ``budget``: how much ``EXPERT`` may search (its rollouts, and seconds from this call).
    """
    started = time.perf_counter()
    _check_view(view)
    known = (memory or BotMemory(view.seat)).observe_view(view)
    state = shadow_state(view, rules, known)
    if level is BotLevel.RANDOM:
        return random_decision(state, view.seat, seed, BotLevel.RANDOM)
    expert = level is BotLevel.EXPERT
    ctx = build_context(view, rules, BotLevel.HARD if expert else level, known)
    decision = draw_decision(ctx, state) if view.phase is Phase.DRAW else play_decision(ctx, state)
    if expert:
        return expert_decision(state, view.seat, known, decision, seed, budget, started=started)
    return decision


def fallback_decision(view: SeatView, rules: RuleSet, seed: int) -> Decision:
    """The table's local fallback when the bot service cannot be reached: the random level."""
    return decide(view, rules, BotLevel.RANDOM, seed)


def _check_view(view: SeatView) -> None:
    if view.result is not None or view.phase is Phase.ENDED:
        raise RuleViolation("HAND_OVER")
    if view.turn != view.seat:
        raise RuleViolation("NOT_YOUR_TURN", seat=view.seat, turn=view.turn)
    if not 0 <= view.seat < SEATS or len(view.seats) != SEATS:
        raise InvalidInput("UNKNOWN_SEAT", seat=view.seat)
