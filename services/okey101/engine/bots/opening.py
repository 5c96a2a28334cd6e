"""Whether and how to open: runs and sets (by value or by least left), pairs, or the whole hand
down at once."""

from __future__ import annotations

from collections.abc import Sequence

from okey101.engine.actions import Discard, Group, Open, OpenPairs
from okey101.engine.bots.context import Context
from okey101.engine.bots.evaluation import free_discard, plan_score
from okey101.engine.bots.finish import finish
from okey101.engine.bots.levels import RANK, TUNING, BotLevel
from okey101.engine.bots.plan import Plan
from okey101.engine.bots.put_down import put_down
from okey101.engine.melds import Meld
from okey101.engine.solver.arrangement import Hand
from okey101.engine.solver.bounds import quick_tiles_bound, quick_value_bound
from okey101.engine.solver.openings import lay_down_all_but_one, opening_value_bound
from okey101.engine.solver.pairs import best_pairs
from okey101.engine.tiles import Tile


def choose_opening(ctx: Context, plan: Plan) -> Plan | None:
    """The opening to make now (with what it lays down after), or None to stay closed."""
    rules = ctx.rules
    required = plan.taken_unused() if plan.state.this_turn.taken_unopened else None
    hand = Hand(plan.rack, ctx.okey)
    whole = _whole_hand(ctx, plan, hand, required)
    if whole is not None:
        return whole
    options: list[tuple[str, Plan]] = []
    minimum = rules.opening_min_points
    if (
        quick_value_bound(hand, rules) >= minimum
        and opening_value_bound(hand, rules, required=required, at_least=minimum) >= minimum
    ):
        arrangements = [ctx.opening(hand, required)]
        if ctx.rank >= RANK[BotLevel.NORMAL]:
            least = ctx.leftover(hand)
            if (
                least.value >= minimum
                and least.leftover
                and (
                    required is None
                    or any(t.face == required.face for m in least.melds for t in m.tiles)
                )
            ):
                arrangements.append(least)
        for arrangement in arrangements:
            if arrangement.value < minimum or not arrangement.melds:
                continue
            opened = _open_with(ctx, plan, arrangement.melds)
            if opened is None:
                continue
            options.append(("runs", opened))
            if ctx.rank >= RANK[BotLevel.NORMAL] and not opened.ended:
                # Where the opening turn allows no lay-off, what it leaves may all be playable
                # on its own melds: a smaller opening that keeps a tile free to throw.
                if free_discard(ctx, opened):
                    continue
                for index in range(len(arrangement.melds)):
                    fewer = arrangement.melds[:index] + arrangement.melds[index + 1 :]
                    if sum(meld.value for meld in fewer) < minimum:
                        continue
                    smaller = _open_with(ctx, plan, fewer)
                    if smaller is not None:
                        options.append(("runs", smaller))
    pairs = best_pairs(hand, required=required)
    if pairs.pair_count >= rules.opening_min_pairs:
        trial = plan.copy()
        if trial.step(OpenPairs(tuple((m.tiles[0], m.tiles[1]) for m in pairs.melds))):
            trial.notes.append(f"opened with {pairs.pair_count} pairs")
            options.append(("pairs", put_down(ctx, trial)))
    if not options:
        return None
    if ctx.level is BotLevel.EASY:
        return options[0][1]
    scored = sorted(options, key=lambda option: plan_score(ctx, option[1]))
    kind, best = scored[0]
    if (
        required is None
        and not best.ended
        and not ctx.last_turn
        and not _stock_low(ctx, best)
        and not free_discard(ctx, best)
    ):
        # Every opening would end the turn with a +101 discard: wait a turn (the hand holds).
        return None
    if (
        kind == "pairs"
        and ctx.level is BotLevel.HARD
        and required is None
        and _hold_pairs(ctx, hand)
    ):
        return None
    return best


def _open_with(ctx: Context, plan: Plan, melds: Sequence[Meld]) -> Plan | None:
    """The plan after opening with ``melds`` and putting down what follows, or None."""
    trial = plan.copy()
    if not trial.step(Open(tuple(Group(meld.tiles) for meld in melds))):
        return None
    value = sum(meld.value for meld in melds)
    trial.notes.append(f"opened with {len(melds)} melds worth {value}")
    if ctx.level is BotLevel.HARD and ctx.rules.lay_off_in_opening_turn:
        finished = finish(ctx, trial)
        if finished is not None:
            return finished
    return put_down(ctx, trial)


def _hold_pairs(ctx: Context, hand: Hand) -> bool:
    """HARD: keep a pairs opening in hand while a runs opening is near and time remains (a
    pairs opener's hand counts double, and it may then only add pairs and lay off)."""
    if ctx.horizon < 1.5 or _danger(ctx):
        return False
    value = ctx.best_value(hand).value
    return value >= ctx.rules.opening_min_points - TUNING.hold_pairs_reach


def _stock_low(ctx: Context, best: Plan) -> bool:
    """HARD: the stock is nearly out (about one draw left before the hand ends) and opening
    now, +101 discard and all, costs less than the 202 of never opening."""
    return (
        ctx.level is BotLevel.HARD
        and ctx.horizon < TUNING.stock_low_horizon
        and plan_score(ctx, best) < ctx.rules.never_opened_points
    )


def _danger(ctx: Context) -> bool:
    """Someone may finish soon: an opened seat with few tiles left."""
    return any(
        other.seat != ctx.seat and other.opened_as is not None and other.tile_count <= 5
        for other in ctx.view.seats
    )


def _whole_hand(ctx: Context, plan: Plan, hand: Hand, required: Tile | None) -> Plan | None:
    """Lay the whole hand down but one tile and discard it (a finish), if the hand allows."""
    if len(hand.tiles) < 4 or quick_tiles_bound(hand, ctx.rules) < len(hand.tiles) - 1:
        return None
    arrangement = lay_down_all_but_one(hand, ctx.rules)
    if arrangement is None:
        return None
    keeps: list[Tile | None] = [None]
    # Finishing with an okey doubles: keep one to throw last if the rest still goes down.
    keeps[:0] = [tile for tile in hand.tiles if ctx.wild(tile)][:1]
    keeps.extend(tile for tile in hand.tiles if required is None or tile.id != required.id)
    tried = 0
    for keep in keeps:
        if tried > 6:
            break
        found = arrangement if keep is None else lay_down_all_but_one(hand, ctx.rules, keep=keep)
        tried += 1
        if found is None or len(found.leftover) != 1:
            continue
        trial = plan.copy()
        last = found.leftover[0]
        if trial.step(Open(tuple(Group(m.tiles) for m in found.melds))) and trial.step(
            Discard(last)
        ):
            trial.notes.append(f"laid the whole hand down and finished with {last}")
            return trial
    return None
