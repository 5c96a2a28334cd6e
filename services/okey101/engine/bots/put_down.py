"""After opening: laying down, laying off, taking an okey back, using the tile taken from the
left."""

from __future__ import annotations

from okey101.engine.actions import Discard, End, Group, LayDown, LayOff, TakeOkey
from okey101.engine.bots.context import Context
from okey101.engine.bots.evaluation import plan_score
from okey101.engine.bots.levels import RANK, BotLevel
from okey101.engine.bots.plan import Plan
from okey101.engine.melds import HIGH_ONE, Meld, MeldKind
from okey101.engine.seat import OpenedAs
from okey101.engine.solver.arrangement import Hand
from okey101.engine.solver.openings import best_opening, lay_down_all_but_one
from okey101.engine.solver.pairs import best_pairs
from okey101.engine.solver.playability import playable_faces
from okey101.engine.tiles import Tile, face_of


def best_put_down(ctx: Context, plan: Plan) -> Plan:
    """HARD also weighs taking an okey back: the put-down that leaves least wins."""
    base = put_down(ctx, plan.copy())
    if ctx.level is not BotLevel.HARD or not ctx.rules.may_take_okey_back:
        return base
    best = base
    best_score = plan_score(ctx, base)
    for action in okey_takes(ctx, plan):
        trial = plan.copy()
        if not trial.step(action):
            continue
        trial.notes.append(f"took the okey back from meld {action.meld}")
        done = put_down(ctx, trial)
        score = plan_score(ctx, done)
        if score < best_score - 0.5:
            best, best_score = done, score
    return best


def okey_takes(ctx: Context, plan: Plan) -> list[TakeOkey]:
    out: list[TakeOkey] = []
    by_face: dict[int, Tile] = {}
    for tile in plan.rack:
        if not ctx.wild(tile):
            by_face.setdefault(ctx.face(tile), tile)
    for index, item in enumerate(plan.state.table):
        meld = item.meld
        if not any(meld.wild):
            continue
        if meld.kind is MeldKind.SET and len(meld.tiles) == 3:
            shown = {
                face // 13
                for face, wild in zip(meld.stands_for, meld.wild, strict=True)
                if face is not None and not wild
            }
            missing = [face_of(c, meld.number) for c in range(4) if c not in shown]
            tiles = [by_face[f] for f in missing if f in by_face]
            if len(tiles) == len(missing) == 2:
                out.append(TakeOkey(index, tuple(tiles)))
            continue
        for stands, wild in zip(meld.stands_for, meld.wild, strict=True):
            if wild and stands is not None and stands in by_face:
                out.append(TakeOkey(index, (by_face[stands],)))
    return out


def put_down(ctx: Context, plan: Plan) -> Plan:
    """Lay down and lay off what the level lays down, finishing where it can."""
    me = plan.me
    if me.opened_as is None or plan.ended:
        return plan
    if plan.state.this_turn.opened and not ctx.rules.lay_off_in_opening_turn:
        return plan
    if me.opened_as is OpenedAs.RUNS:
        _lay_down_runs(ctx, plan)
    _lay_offs(ctx, plan, okeys=False)
    _lay_down_pairs(ctx, plan)
    _lay_offs(ctx, plan, okeys=False)
    rack = plan.rack
    real = [tile for tile in rack if not ctx.wild(tile)]
    finishing = len(rack) >= 2 and len(real) <= 1
    if finishing or (ctx.last_turn and ctx.level is BotLevel.HARD):
        # Only okeys (and one tile) left, or the last turn: the okeys go down too.
        _lay_offs(ctx, plan, okeys=True)
    if len(plan.rack) == 1:
        last = plan.rack[0]
        if plan.step(Discard(last)):
            plan.notes.append(f"finished with {last}")
    return plan


def _lay_down_runs(ctx: Context, plan: Plan) -> None:
    hand = Hand(plan.rack, ctx.okey)
    arrangement = ctx.leftover(hand)
    if not arrangement.melds:
        return
    if not arrangement.leftover:
        # Everything fits in melds: all but one goes down, the one left finishes (an okey if
        # one can be kept: a finish with the okey doubles).
        keeps: list[Tile | None] = [*[t for t in hand.tiles if ctx.wild(t)][:1], None]
        for keep in keeps:
            found = lay_down_all_but_one(hand, ctx.rules, keep=keep)
            if found is not None:
                trial = plan.copy()
                if trial.step(LayDown(tuple(Group(m.tiles) for m in found.melds))):
                    trial.notes.append(f"laid down {len(found.melds)} melds")
                    plan.state, plan.actions, plan.notes = (
                        trial.state,
                        trial.actions,
                        trial.notes,
                    )
                    return
    laid = 0
    for meld in arrangement.melds:
        if plan.step(LayDown((Group(meld.tiles),))):
            laid += 1
    if laid:
        plan.notes.append(f"laid down {laid} meld{'s' if laid > 1 else ''}")


def _lay_down_pairs(ctx: Context, plan: Plan) -> None:
    me = plan.me
    may_pair = me.opened_as is OpenedAs.PAIRS or (
        ctx.rules.runs_openers_may_pair_after_pairs_opening and plan.state.pairs_on_table()
    )
    if not may_pair:
        return
    pairs = best_pairs(Hand(plan.rack, ctx.okey))
    laid = 0
    for meld in pairs.melds:
        # An okey is worth more in a run or set than beside one tile (but for the last turn).
        keep_okey = ctx.rank >= RANK[BotLevel.NORMAL] and not ctx.last_turn
        if keep_okey and me.opened_as is OpenedAs.RUNS and any(ctx.wild(t) for t in meld.tiles):
            continue
        if plan.step(LayDown((Group(meld.tiles),))):
            laid += 1
    if laid:
        plan.notes.append(f"laid down {laid} pair{'s' if laid > 1 else ''}")


def accepts(ctx: Context, meld: Meld) -> list[tuple[int, End | None]]:
    """(face, end) of every real tile the meld takes now."""
    out: list[tuple[int, End | None]] = []
    if meld.kind is MeldKind.RUN:
        colour = meld.colour
        assert colour is not None
        if meld.low > 1:
            out.append((face_of(colour, meld.low - 1), End.LOW))
        top = HIGH_ONE if ctx.rules.run_may_end_12_13_1 else 13
        if meld.high < top:
            out.append(
                (face_of(colour, 1 if meld.high + 1 == HIGH_ONE else meld.high + 1), End.HIGH)
            )
    elif meld.kind is MeldKind.SET and len(meld.tiles) == 3:
        out.extend((face, None) for face in playable_faces((meld,), ctx.rules))
    return out


def _lay_offs(ctx: Context, plan: Plan, *, okeys: bool) -> None:
    laid: list[str] = []
    progress = True
    while progress and len(plan.rack) > 1:
        progress = False
        targets: dict[int, list[tuple[int, End | None]]] = {}
        open_spots: list[tuple[int, End | None]] = []
        for index, item in enumerate(plan.state.table):
            for face, end in accepts(ctx, item.meld):
                targets.setdefault(face, []).append((index, end))
                open_spots.append((index, end))
        rack = sorted(plan.rack, key=lambda tile: (-ctx.points(tile), tile.id))
        for tile in rack:
            if ctx.wild(tile):
                if not okeys:
                    continue
                spots = open_spots
            else:
                spots = targets.get(ctx.face(tile), [])
            for index, end in spots:
                if plan.step(LayOff(tile, index, end)):
                    laid.append(str(tile))
                    progress = True
                    break
            if progress:
                break
    if laid:
        plan.notes.append("laid off " + " ".join(laid))


def use_taken(ctx: Context, plan: Plan, taken: Tile) -> None:
    """Put the tile taken from the left down somehow: laid off, in place of an okey, in a new
    meld or pair."""
    if plan.me.opened_as is None:
        return
    for index, item in enumerate(plan.state.table):
        for face, end in accepts(ctx, item.meld):
            if (ctx.wild(taken) or face == ctx.face(taken)) and plan.step(
                LayOff(taken, index, end)
            ):
                plan.notes.append(f"laid off {taken}")
                return
    for action in okey_takes(ctx, plan):
        if any(t.face == taken.face for t in action.tiles) and plan.step(action):
            plan.notes.append(f"put {taken} in place of an okey")
            return
    hand = Hand(plan.rack, ctx.okey)
    with_it = best_opening(hand, ctx.rules, required=taken)
    for meld in with_it.melds:
        if any(t.face == taken.face for t in meld.tiles) and plan.step(
            LayDown((Group(meld.tiles),))
        ):
            plan.notes.append(f"melded {taken}")
            return
    pairs = best_pairs(hand, required=taken)
    for meld in pairs.melds:
        if any(t.face == taken.face for t in meld.tiles) and plan.step(
            LayDown((Group(meld.tiles),))
        ):
            plan.notes.append(f"paired {taken}")
            return
