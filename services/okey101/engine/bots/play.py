"""The play phase: the rest of the turn, from showing the indicator to the discard that ends
it (or the single give-back)."""

from __future__ import annotations

from okey101.engine.actions import GiveBack, ShowIndicator
from okey101.engine.bots.context import Context
from okey101.engine.bots.discard import choose_discard
from okey101.engine.bots.finish import finish
from okey101.engine.bots.levels import BotLevel, Decision
from okey101.engine.bots.opening import choose_opening
from okey101.engine.bots.plan import Plan
from okey101.engine.bots.put_down import best_put_down, use_taken
from okey101.engine.bots.random_level import random_decision
from okey101.engine.hand import HandState, taken_tile_way_down
from okey101.engine.rules import LeftDiscardPolicy


def play_decision(ctx: Context, state: HandState) -> Decision:
    plan = plan_turn(ctx, Plan(state, ctx.seat))
    if plan is None:
        fallback = random_decision(state, ctx.seat, 0, ctx.level)
        return Decision(fallback.actions, "no plan found: " + fallback.reason, ctx.level)
    return Decision(tuple(plan.actions), "; ".join(plan.notes) or "played", ctx.level)


def plan_turn(ctx: Context, start: Plan) -> Plan | None:
    """The rest of the turn from a play-phase position: a plan ending with the discard (or a
    finish, or the single give-back), or None if the bot finds no way to end the turn."""
    plan = start.copy()
    _show_indicator(ctx, plan)
    if plan.me.opened_as is None:
        opened = choose_opening(ctx, plan)
        if opened is not None:
            plan = opened
    else:
        if ctx.level is BotLevel.HARD:
            finished = finish(ctx, plan)
            if finished is not None:
                return finished
        plan = best_put_down(ctx, plan)
    if plan.ended:
        return plan
    taken = plan.taken_unused()
    if taken is not None and _must_use_taken(ctx, plan):
        use_taken(ctx, plan, taken)
        if plan.taken_unused() is not None:
            back = start.copy()
            if back.step(GiveBack()):
                back.notes.append(f"gave {taken} back: no use for it")
                return back
            # Refused while the tile can still go down: the engine's way down, from here.
            way = taken_tile_way_down(plan.state, plan.seat)
            if way is None or not all(plan.step(action) for action in way.actions):
                return None
            plan.notes.append(f"put {taken} down ({way.code})")
            if plan.state.result is not None:  # a fourth pairs opening voids the hand
                return plan
    return choose_discard(ctx, plan)


def _must_use_taken(ctx: Context, plan: Plan) -> bool:
    policy = ctx.rules.left_discard
    if policy is LeftDiscardPolicy.OPENED_TAKE_FREELY:
        return plan.state.this_turn.taken_unopened and plan.me.opened_as is None
    return True


def _show_indicator(ctx: Context, plan: Plan) -> None:
    if ctx.rules.indicator_show_points < 0 and plan.step(ShowIndicator()):
        plan.notes.append(f"showed the indicator's twin ({ctx.rules.indicator_show_points})")
