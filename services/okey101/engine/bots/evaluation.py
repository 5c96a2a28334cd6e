"""What a plan's position, or keeping a tile, is worth to the seat: the plan's score, a free
discard, the chances of partial melds, the opening's outs, feeding the next seat."""

from __future__ import annotations

from collections.abc import Sequence

from okey101.engine.actions import Discard
from okey101.engine.bots.context import Context
from okey101.engine.bots.levels import TUNING, BotLevel
from okey101.engine.bots.plan import Plan
from okey101.engine.hand import SEATS
from okey101.engine.melds import MeldKind
from okey101.engine.rules import StockOutPolicy
from okey101.engine.seat import OpenedAs
from okey101.engine.solver.arrangement import Arrangement, Hand
from okey101.engine.solver.bounds import quick_value_bound
from okey101.engine.solver.openings import opening_value_bound
from okey101.engine.solver.pairs import best_pairs
from okey101.engine.solver.playability import playable_faces
from okey101.engine.tiles import ALL_TILES, FACE_COUNT, Tile, face_number, face_of


def plan_score(ctx: Context, plan: Plan) -> float:
    """What the plan's position is worth to the seat (points, lower is better)."""
    state = plan.state
    if state.result is not None:
        return float(state.result.scores[ctx.seat])
    me = plan.me
    rack = plan.rack
    if me.opened_as is None:
        return float(ctx.rules.never_opened_points)
    costs = sorted((ctx.points(t) for t in rack if not ctx.wild(t)), reverse=True)
    okeys = sum(1 for t in rack if ctx.wild(t))
    # The discard to come takes the highest tile off.
    hand = sum(costs[1:]) if costs else 0
    # An okey kept is worth keeping (it may finish doubled) but counts if the hand ends.
    okey_cost = okeys * ctx.rules.okey_in_hand_points * (0.6 if not ctx.last_turn else 1.0)
    if me.opened_as is OpenedAs.PAIRS:
        hand *= 2
    forced = 0 if free_discard(ctx, plan) else ctx.rules.penalty_points
    return hand + okey_cost + forced + 0.1 * len(rack)


def free_discard(ctx: Context, plan: Plan) -> bool:
    """Whether the plan can end its turn with a discard that costs no +101."""
    playable = playable_faces(plan.state.table_melds(), ctx.rules)
    return any(
        not ctx.wild(tile) and ctx.face(tile) not in playable and plan.copy().step(Discard(tile))
        for tile in plan.rack
    )


def _representative(ctx: Context, face: int, held: set[int]) -> Tile | None:
    """A tile that plays as ``face`` (a false joker for the okey's face), not in hand."""
    if face == ctx.okey.face:
        options = (ALL_TILES[104], ALL_TILES[105])
    else:
        options = (ALL_TILES[face * 2], ALL_TILES[face * 2 + 1])
    return next((tile for tile in options if tile.id not in held), None)


def opening_outs(ctx: Context, hand: Hand, candidates: Sequence[Tile]) -> dict[int, float]:
    """HARD, unopened: for each candidate discard, the chance that a next tile opens the hand
    (value at least the minimum), counting the copies of each tile still to be had."""
    rules = ctx.rules
    target = rules.opening_min_points
    if not candidates or ctx.best_value(hand).value < target - TUNING.outs_reach:
        return {}
    held = {tile.id for tile in hand.tiles}
    numbers = set()
    places: set[tuple[int, int]] = set()
    for tile in hand.tiles:
        if ctx.wild(tile):
            continue
        face = ctx.face(tile)
        numbers.add(face_number(face))
        places.add((face // 13, face_number(face)))
    faces: list[int] = []
    for face in range(FACE_COUNT):
        if ctx.avail[face] <= 0:
            continue
        colour, number = face // 13, face_number(face)
        near = number in numbers or any(
            (colour, n) in places for n in (number - 2, number - 1, number + 1, number + 2)
        )
        if near:
            faces.append(face)
    # The likeliest and highest first: the solver-call budget (deterministic) may cut the rest.
    faces.sort(key=lambda face: (-ctx.avail[face], -face_number(face), face))
    budget = TUNING.outs_budget
    outs: list[tuple[Tile, float, set[tuple[bool, int]]]] = []
    for face in faces:
        drawn = _representative(ctx, face, held)
        if drawn is None:
            continue
        bigger = hand.with_tile(drawn)
        if quick_value_bound(bigger, rules) < target:
            continue
        if budget <= 0:
            break
        budget -= 1
        if opening_value_bound(bigger, rules, at_least=target) < target:
            continue
        budget -= 1
        spare = {(ctx.wild(t), ctx.face(t)) for t in ctx.best_value(bigger).leftover}
        outs.append((drawn, ctx.avail[face], spare))
    if not outs:
        return {}
    chances: dict[int, float] = {}
    seen: dict[tuple[bool, int], float] = {}
    budget = max(budget, TUNING.outs_budget // 3)
    for tile in sorted(candidates, key=lambda t: (ctx.points(t), t.id)):
        key = (ctx.wild(tile), ctx.face(tile))
        if key not in seen:
            rest = hand.without(tile)
            copies = 0.0
            for out, weight, spare in outs:
                if key in spare:
                    copies += weight  # the out's best arrangement leaves this tile out
                elif budget > 0:
                    budget -= 1
                    if opening_value_bound(rest.with_tile(out), rules, at_least=target) >= target:
                        copies += weight
            seen[key] = ctx.chance(copies)
        chances[tile.id] = seen[key]
    return chances


def aims_at_pairs(ctx: Context, value: int, pair_count: int) -> bool:
    """HARD, unopened: aim at a pairs opening (the runs opening looks further away)."""
    if pair_count >= TUNING.pairs_route_min:
        return value < ctx.rules.opening_min_points - TUNING.pairs_route_gap4
    if pair_count == TUNING.pairs_route_min - 1:
        return value < ctx.rules.opening_min_points - TUNING.pairs_route_gap3
    return False


def meld_loss(ctx: Context, hand: Hand, tile: Tile, opened_as: OpenedAs | None) -> float:
    """What breaking the best arrangement to throw ``tile`` (a meld tile) costs."""
    if opened_as is None:
        whole = ctx.best_value(hand).value
        return float(whole - ctx.best_value(hand.without(tile)).value)
    if opened_as is OpenedAs.RUNS:
        after = _left_points(ctx, ctx.leftover(hand.without(tile)))
        return float(after - _left_points(ctx, ctx.leftover(hand)))
    return 50.0


def _left_points(ctx: Context, arrangement: Arrangement) -> int:
    return sum(ctx.points(tile) for tile in arrangement.leftover)


def keep_values(
    ctx: Context,
    plan: Plan,
    arrangement: Arrangement,
    loose: Sequence[Tile],
    opened_as: OpenedAs | None,
    *,
    pairs_route: bool = False,
) -> dict[int, float]:
    """How much keeping each loose tile is worth, in points: higher keeps it.

    Unopened: the chance it completes a run or set (with another loose tile, or beside a meld
    of the arrangement) times what that meld adds toward the opening, plus a pairs term when
    the hand leans to pairs. Opened: minus the points it is expected to leave in hand (its
    number times the chance it never goes down), so the highest dead tile goes first.
    """
    okey = ctx.okey
    real = [tile for tile in loose if not okey.is_wild(tile)]
    high_one = ctx.rules.run_may_end_12_13_1
    # Chances and gains of partial melds, per tile.
    chances: dict[int, list[tuple[float, float]]] = {tile.id: [] for tile in real}
    faces = {tile.id: okey.plays_as(tile) for tile in real}
    loose_faces = {faces[tile.id] for tile in real}
    for i, a in enumerate(real):
        fa = faces[a.id]
        for b in real[i + 1 :]:
            fb = faces[b.id]
            if fa == fb:
                continue
            needs, gain = _completions(fa, fb, high_one)
            if not needs:
                continue
            copies = sum(ctx.avail[face] for face in needs)
            chance = ctx.chance(copies)
            chances[a.id].append((chance, gain))
            chances[b.id].append((chance, gain))
    # Beside a run of the arrangement or of the table, one tile short.
    runs = [meld for meld in arrangement.melds if meld.kind is MeldKind.RUN]
    table_runs = [m for m in plan.state.table_melds() if m.kind is MeldKind.RUN]
    for tile in real:
        face = faces[tile.id]
        colour, number = face // 13, face_number(face)
        for meld in (*runs, *table_runs):
            if meld.colour is None or int(meld.colour) != colour:
                continue
            for gap, beyond in ((meld.low - 1, meld.low - 2), (meld.high + 1, meld.high + 2)):
                if beyond == number and 1 <= gap <= 13:
                    gap_face = face_of(colour, gap)
                    if gap_face in loose_faces:
                        continue
                    chance = ctx.chance(ctx.avail[gap_face])
                    chances[tile.id].append((chance, number + gap))
    values: dict[int, float] = {}
    pairs_lean = 0.0
    if opened_as is None:
        pair_count = best_pairs(Hand(plan.rack, okey), keep_one=False).pair_count
        if pair_count >= 3:
            pairs_lean = (pair_count - 2) / 3.0
    for tile in real:
        face = faces[tile.id]
        number = face_number(face)
        found = chances[tile.id]
        if pairs_route:
            # Aiming at pairs: a single is worth the chance of its twin (a high one counts
            # double in hand once opened), plus a little of its runs-and-sets promise.
            worth = TUNING.pair_single * ctx.chance(ctx.avail[face]) - 0.3 * number
            worth += TUNING.pair_runs_share * sum(chance * gain for chance, gain in found)
            values[tile.id] = worth
        elif opened_as is None:
            worth = sum(chance * gain for chance, gain in found)
            worth += 0.02 * number  # a lone high tile can still build more
            if pairs_lean:
                twins = sum(1 for other in real if faces[other.id] == face) - 1
                if twins:
                    worth += 30.0 * pairs_lean
                else:
                    worth += 10.0 * pairs_lean * ctx.chance(ctx.avail[face])
            values[tile.id] = worth
        else:
            never = 1.0
            for chance, _gain in found:
                never *= 1.0 - chance
            if opened_as is OpenedAs.PAIRS:
                never *= 1.0 - ctx.chance(ctx.avail[face])
            values[tile.id] = -number * never
            if ctx.level is BotLevel.HARD:
                # Going out: a tile likely to go down is worth keeping whatever its number.
                values[tile.id] += TUNING.finish_keep * (1.0 - never)
    return values


def _completions(fa: int, fb: int, high_one: bool) -> tuple[list[int], float]:
    """The faces that would make a meld of two tiles (faces ``fa`` ``fb``), and its worth."""
    ca, na = fa // 13, face_number(fa)
    cb, nb = fb // 13, face_number(fb)
    if ca != cb:
        if na != nb:
            return [], 0.0
        others = [face_of(c, na) for c in range(4) if c not in (ca, cb)]
        return others, 3.0 * na
    low, high = min(na, nb), max(na, nb)
    places = [(low, high)]
    if high_one and low == 1:
        places.append((high, 14))  # the 1 as the top of 12-13-1
    for lo, hi in places:
        if hi - lo == 1:
            needs = []
            if lo > 1:
                needs.append(face_of(ca, lo - 1))
            top = 14 if high_one else 13
            if hi < top:
                needs.append(face_of(ca, 1 if hi + 1 == 14 else hi + 1))
            return needs, float(lo + hi + (lo - 1 if lo > 1 else hi + 1))
        if hi - lo == 2:
            return [face_of(ca, lo + 1)], float(3 * (lo + 1))
    return [], 0.0


def feeding(ctx: Context, plan: Plan) -> dict[int, float]:
    """HARD: how much a discard could help the next seat (added to the worth of keeping it).

    The next seat may take the discard only if it can use it at once (or, opened, freely where
    the rules say so). Judged from what it picked up (tiles near those are wanted) and threw
    (the same face again is not)."""
    nxt = (ctx.seat + 1) % SEATS
    if plan.state.stock == () and ctx.rules.stock_out is StockOutPolicy.ENDS_ON_LAST_DISCARD:
        return {}
    okey = ctx.okey
    picked = [ALL_TILES[tile_id] for seat, tile_id in ctx.memory.taken if seat == nxt]
    thrown_faces = {
        okey.plays_as(ALL_TILES[tile_id])
        for seat, tile_id in ctx.memory.thrown
        if seat == nxt and not okey.is_wild(ALL_TILES[tile_id])
    }
    other = ctx.view.seats[nxt]
    unopened = other.opened_as is None
    out: dict[int, float] = {}
    for tile in plan.rack:
        if okey.is_wild(tile):
            continue
        face = okey.plays_as(tile)
        colour, number = face // 13, face_number(face)
        risk = 0.0
        for got in picked:
            if okey.is_wild(got):
                continue
            g = okey.plays_as(got)
            near = g // 13 == colour and abs(face_number(g) - number) <= 2 and g != face
            if near or (face_number(g) == number and g // 13 != colour):
                risk += 1.0
        if face in thrown_faces:
            risk -= 1.0
        for dead in (face - 1, face + 1):
            if 0 <= dead < FACE_COUNT and dead // 13 == colour and dead in thrown_faces:
                risk -= 0.3
        weight = TUNING.feeding_unopened if unopened else TUNING.feeding_opened
        out[tile.id] = max(risk, -1.5) * weight
    return out
