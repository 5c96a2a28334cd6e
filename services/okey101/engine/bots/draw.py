"""The draw phase: draw from the stock, or take the left discard when the turn it starts then
opens, finishes or puts the tile down."""

from __future__ import annotations

from okey101.engine.actions import Draw, GiveBack, TakeDiscard
from okey101.engine.bots.context import Context
from okey101.engine.bots.levels import BotLevel, Decision
from okey101.engine.bots.plan import Plan
from okey101.engine.bots.play import plan_turn
from okey101.engine.hand import HandState
from okey101.engine.rules import StockOutPolicy


def draw_decision(ctx: Context, state: HandState) -> Decision:
    seat = ctx.seat
    takeable = state.takeable
    if takeable is None:
        return _draw(ctx, state, "drew: nothing to take")
    if ctx.level is BotLevel.EASY:
        return _draw(ctx, state, "drew from the stock")
    take = Plan(state, seat)
    if not take.step(TakeDiscard()):
        return _draw(ctx, state, f"drew: {takeable} cannot be taken")
    plan = plan_turn(ctx, take)
    if plan is None or any(isinstance(action, GiveBack) for action in plan.actions):
        return _draw(ctx, state, f"drew: no use for {takeable}")
    if plan.ended:
        return Decision((TakeDiscard(),), f"took {takeable}: finishes with it", ctx.level)
    if len(plan.me.penalties) > len(state.seats[seat].penalties):
        return _draw(ctx, state, f"drew: taking {takeable} would cost +101")
    if plan.state.this_turn.opened:
        return Decision((TakeDiscard(),), f"took {takeable}: opens with it", ctx.level)
    # An opened seat takes a tile it puts down, when its rack ends the turn smaller than it
    # began (a sure tile down rather than a drawn gamble). Strictly smaller: with the stock
    # out (where the next seat may take the last discard) the hand then cannot go round for
    # ever.
    # Used: the rack ends the turn with no more tiles of its face than it began with (either
    # copy put down is the taken tile).
    used = sum(t.face == takeable.face for t in plan.rack) <= sum(
        t.face == takeable.face for t in state.seats[seat].rack
    )
    shrinks = len(plan.rack) < len(state.seats[seat].rack)
    if state.seats[seat].opened_as is not None and used and shrinks:
        return Decision((TakeDiscard(),), f"took {takeable}: puts it down", ctx.level)
    return _draw(ctx, state, f"drew: {takeable} does not help enough")


def _draw(ctx: Context, state: HandState, reason: str) -> Decision:
    if not state.stock and ctx.rules.stock_out is StockOutPolicy.NEXT_MAY_TAKE_LAST_DISCARD:
        reason = "declined the last discard: the hand ends"
    return Decision((Draw(),), reason, ctx.level)
