"""The discard that ends a turn: the rack's tiles ordered best discard first, the first that
applies."""

from __future__ import annotations

from okey101.engine.actions import Discard
from okey101.engine.bots.context import Context
from okey101.engine.bots.evaluation import (
    aims_at_pairs,
    feeding,
    keep_values,
    meld_loss,
    opening_outs,
)
from okey101.engine.bots.levels import TUNING, BotLevel
from okey101.engine.bots.plan import Plan
from okey101.engine.seat import OpenedAs
from okey101.engine.solver.arrangement import Hand
from okey101.engine.solver.pairs import best_pairs
from okey101.engine.solver.playability import playable_faces
from okey101.engine.tiles import Tile


def choose_discard(ctx: Context, plan: Plan) -> Plan | None:
    rack = plan.rack
    if not rack:
        return None
    order = _discard_order(ctx, plan)
    for tile, why in order:
        trial = plan.copy()
        if trial.step(Discard(tile)):
            if trial.ended and trial.state.result is not None and trial.state.result.finish:
                trial.notes.append(f"finished with {tile}")
            else:
                trial.notes.append(f"discarded {tile} ({why})")
            return trial
    return None


def _discard_order(ctx: Context, plan: Plan) -> list[tuple[Tile, str]]:
    """The rack's tiles, best discard first, with a word on why."""
    rack = plan.rack
    okey = ctx.okey
    playable = playable_faces(plan.state.table_melds(), ctx.rules)

    def costly(tile: Tile) -> bool:
        return okey.is_wild(tile) or okey.plays_as(tile) in playable

    opened_as = plan.me.opened_as
    hand = Hand(rack, okey)
    pairs_route = False
    if opened_as is None:
        arrangement = ctx.best_value(hand)
        if ctx.level is BotLevel.HARD:
            pairs = best_pairs(hand, keep_one=False)
            if aims_at_pairs(ctx, arrangement.value, pairs.pair_count):
                arrangement, pairs_route = pairs, True
    elif opened_as is OpenedAs.RUNS:
        arrangement = ctx.leftover(hand)
    else:
        arrangement = best_pairs(hand, keep_one=False)
    in_melds = {tile.id for meld in arrangement.melds for tile in meld.tiles}
    loose = [tile for tile in rack if tile.id not in in_melds]

    if ctx.level is BotLevel.EASY:

        def easy_key(tile: Tile) -> tuple[int, int, int, int]:
            return (
                1 if costly(tile) else 0,
                0 if tile.id not in in_melds else 1,
                -ctx.points(tile) if not okey.is_wild(tile) else 0,
                tile.id,
            )

        ordered = sorted(rack, key=easy_key)
        return [(tile, "highest loose tile") for tile in ordered]

    values = keep_values(ctx, plan, arrangement, loose, opened_as, pairs_route=pairs_route)
    danger = feeding(ctx, plan) if ctx.level is BotLevel.HARD else {}
    if opened_as is None and ctx.level is BotLevel.HARD:
        candidates = [t for t in loose if not costly(t)]
        for tile_id, chance in opening_outs(ctx, hand, candidates).items():
            values[tile_id] = values.get(tile_id, 0.0) - TUNING.outs_weight * chance

    # Which meld to break matters only when at most one loose tile is free to throw (it may be
    # the tile taken from the left, which cannot be thrown back): the solver is asked only then.
    free_loose = sum(1 for t in rack if not costly(t) and t.id not in in_melds)

    def key(tile: Tile) -> tuple[float, float, int]:
        penalty = 0.0
        if costly(tile):
            penalty = 1000.0 + (500.0 if okey.is_wild(tile) else 0.0)
        elif tile.id in in_melds:
            loss = meld_loss(ctx, hand, tile, opened_as) if free_loose <= 1 else 0.0
            penalty = 300.0 + loss
        # values[t]: how much keeping the tile is worth (higher: keep).
        worth = values.get(tile.id, 0.0) + danger.get(tile.id, 0.0)
        return (penalty + worth, -ctx.points(tile), tile.id)

    ordered = sorted(rack, key=key)
    return [(tile, _why(tile, costly(tile), tile.id in in_melds)) for tile in ordered]


def _why(tile: Tile, costly: bool, in_meld: bool) -> str:
    if costly:
        return "no other choice"
    if in_meld:
        return "breaking a meld"
    return "least useful"
