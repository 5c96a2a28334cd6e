"""The questions asked of the search: the best opening, its value alone, the whole hand down
but one tile, how many tiles can go down, and the arrangement that leaves least in hand."""

from __future__ import annotations

from collections.abc import Iterable

from okey101.engine.rules import RuleSet
from okey101.engine.solver.arrangement import Arrangement, Hand
from okey101.engine.solver.bounds import quick_tiles_bound
from okey101.engine.solver.objective import COUNT_TILES, IMPOSSIBLE, REQUIRED_BONUS
from okey101.engine.solver.search import best_runs_and_sets, problem_alone, solve
from okey101.engine.tiles import Okey, Tile, face_number


def opening_value_bound(
    hand: Hand, rules: RuleSet, *, required: Tile | None = None, at_least: int = 0
) -> int:
    """The best runs-and-sets value of ``hand`` without building it, every tile allowed.

    An upper bound for ``best_opening(...).value`` (which must keep a tile): a quick "no" when a
    caller only needs to know whether an opening can reach the minimum. 0 when ``required``
    cannot be used. With ``at_least``, the search skips whatever cannot reach it: the answer is
    exact when it is ``at_least`` or more, and otherwise only says "less".
    """
    problem = problem_alone(hand, rules, required)
    if required is not None:
        value = solve(problem, floor=_required_floor(at_least)).value
        return value - REQUIRED_BONUS if value >= REQUIRED_BONUS else 0
    return max(solve(problem, floor=at_least - 1).value, 0)


def _required_floor(at_least: int) -> int:
    """The search's floor when a required tile's bonus is in the value: only ``at_least`` and
    more matter."""
    return REQUIRED_BONUS + at_least - 1 if at_least > 0 else IMPOSSIBLE


def best_opening(
    hand: Hand,
    rules: RuleSet,
    *,
    required: Tile | None = None,
    keep_one: bool = True,
) -> Arrangement:
    """The highest-valued runs and sets in ``hand``.

    ``required``: a tile that must be among them (the left discard taken to open with); if no
    arrangement can use it, the empty arrangement. ``keep_one``: leave at least one tile to
    discard, as an opening must.
    """
    arrangement = best_runs_and_sets(hand, rules, required)
    if arrangement is None:
        return Arrangement(0, (), hand.tiles)
    if not keep_one or arrangement.leftover or not hand.tiles:
        return arrangement
    # Every tile was used: the best that keeps one is the best of the hand less some tile.
    best = Arrangement(0, (), hand.tiles)
    tried: set[tuple[bool, int]] = set()
    for tile in hand.tiles:
        wild = hand.okey.is_wild(tile)
        key = (wild, -1 if wild else hand.okey.plays_as(tile))
        if (required is not None and tile.id == required.id) or key in tried:
            continue
        tried.add(key)
        smaller = best_runs_and_sets(hand.without(tile), rules, required)
        if smaller is not None and smaller.value > best.value:
            best = Arrangement(
                smaller.value, smaller.melds, (*smaller.leftover, tile), smaller.okeys
            )
    return best


def least_leftover(hand: Hand, rules: RuleSet) -> Arrangement:
    """The runs and sets that leave the fewest penalty points in hand (for bots).

    Every tile counts its face value in hand and an okey counts 101 (as a loser's would); every
    tile may be used. ``leftover_points`` of the answer is what the hand would score.
    """
    arrangement = best_runs_and_sets(hand, rules, None, okey_worth=rules.okey_in_hand_points)
    return arrangement if arrangement is not None else Arrangement(0, (), hand.tiles)


def leftover_points(tiles: Iterable[Tile], okey: Okey, rules: RuleSet) -> int:
    """What tiles left in hand count: their numbers, a false joker its okey face, an okey 101."""
    total = 0
    for tile in tiles:
        if okey.is_wild(tile):
            total += rules.okey_in_hand_points
        else:
            total += face_number(okey.plays_as(tile))
    return total


def most_tiles_down(
    hand: Hand, rules: RuleSet, *, required: Tile | None = None, at_least: int = 0
) -> int:
    """How many tiles of ``hand`` can go down as runs and sets at once (-1: ``required`` can't).

    With ``at_least`` the answer is exact only when it reaches it (below, with ``required``,
    it may be ``at_least - 1`` rather than -1).
    """
    problem = problem_alone(hand, rules, required, COUNT_TILES)
    if required is not None:
        count = solve(problem, floor=_required_floor(at_least)).value
        return count - REQUIRED_BONUS if count >= REQUIRED_BONUS else -1
    return max(solve(problem, floor=at_least - 1).value, 0)


def lay_down_all_but_one(
    hand: Hand, rules: RuleSet, *, keep: Tile | None = None
) -> Arrangement | None:
    """Runs and sets using every tile of ``hand`` but one (which is then discarded), or None.

    This is the whole-hand finish of a player who has not opened. ``keep``, if given, must be
    the tile left to discard.
    """
    needed = len(hand.tiles) - 1
    if len(hand.tiles) < 4 or quick_tiles_bound(hand, rules) < needed:
        return None
    if most_tiles_down(hand, rules, at_least=needed) < needed:
        return None
    candidates: Iterable[Tile] = [keep] if keep is not None else distinct_tiles(hand)
    for tile in candidates:
        rest = hand.without(tile)
        arrangement = best_runs_and_sets(rest, rules, None, COUNT_TILES)
        if arrangement is not None and not arrangement.leftover:
            return Arrangement(arrangement.value, arrangement.melds, (tile,), arrangement.okeys)
    return None


def whole_hand_opening(
    hand: Hand, rules: RuleSet, required: Tile | None = None
) -> Arrangement | None:
    """Runs and sets of every tile of ``hand`` but one (``lay_down_all_but_one``); with
    ``required`` (the left discard taken to open with), one that lays it down, or None."""
    whole = lay_down_all_but_one(hand, rules)
    if whole is None or required is None or all(t.id != required.id for t in whole.leftover):
        return whole
    for keep in hand.tiles:
        if keep.id != required.id:
            other = lay_down_all_but_one(hand, rules, keep=keep)
            if other is not None:
                return other
    return None


def distinct_tiles(hand: Hand) -> list[Tile]:
    seen: set[tuple[bool, int]] = set()
    out: list[Tile] = []
    for tile in hand.tiles:
        wild = hand.okey.is_wild(tile)
        key = (wild, -1 if wild else hand.okey.plays_as(tile))
        if key not in seen:
            seen.add(key)
            out.append(tile)
    return out
