"""The search over sets, with the runs' programme at its leaves.

For every number where a set could be made the search tries every choice of tiles and okeys to
put in sets there (including none); what each choice leaves of every colour is solved by the
runs' programme, and the okeys left are shared out. ``best_runs_and_sets`` builds the melds of
the best solution.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from okey101.engine.melds import HIGH_ONE, Meld, MeldKind
from okey101.engine.rules import RuleSet
from okey101.engine.solver.arrangement import Arrangement, Hand, tile_id
from okey101.engine.solver.objective import COUNT_TILES, IMPOSSIBLE, REQUIRED_BONUS
from okey101.engine.solver.runs import colour_values, share_okeys, trace_colour
from okey101.engine.solver.sets import (
    SET_ROOM,
    SET_SPLITS,
    lean_set_options,
    most_set_tiles,
    set_options,
)
from okey101.engine.tiles import Colour, Tile, face_of


@dataclass(slots=True)
class _Best:
    value: int = IMPOSSIBLE
    sets: tuple[tuple[int, tuple[int, ...], int], ...] = ()
    codes: tuple[int, ...] = ()
    okey_split: tuple[int, ...] = ()
    required_colour: int = -1


@dataclass(frozen=True, slots=True)
class Problem:
    # Per colour, the tiles held at each place 1-13, two bits a place (place p at bit 2(p-1)).
    codes: tuple[int, int, int, int]
    okeys: int
    high_one: bool
    required_face: int  # -1: none; a face; or -2: an okey
    # 0: an okey is worth the place it stands for (opening value); else this fixed worth
    # (least leftover: an okey kept in hand costs 101).
    okey_worth: int = 0


# Answers of recent searches, by problem: (the floor searched with, the answer). A turn asks
# the same question several times (whether the left discard can be used, then the opening made
# with it), and a bound then the arrangement. Bounded: cleared when full.
_MEMO: dict[Problem, tuple[int, _Best]] = {}
_MEMO_SIZE = 4096


def solve(problem: Problem, floor: int = IMPOSSIBLE) -> _Best:
    """The best arrangement's value and how to build it.

    ``floor``: the caller only cares about values above it, so the search may cut any branch
    that cannot beat it (the answer is then exact if above ``floor``, else ``floor``).

    Remembered: an answer above the floor it was searched with is the exact one (the search
    finds the first best arrangement in its order whatever the floor: a floor only cuts
    branches that cannot reach the best), so it answers any floor; an answer at its floor
    answers any higher floor. The answer must not be changed by the caller.
    """
    known = _MEMO.get(problem)
    if known is not None:
        known_floor, known_best = known
        if known_best.value > known_floor:
            return known_best if known_best.value > floor else _Best(value=floor)
        if floor >= known_floor:
            return _Best(value=floor)
    best = _search(problem, floor)
    if len(_MEMO) >= _MEMO_SIZE:
        _MEMO.clear()
    _MEMO[problem] = (floor, best)
    return best


def _search(problem: Problem, floor: int) -> _Best:
    okeys = problem.okeys
    high_one = problem.high_one
    okey_worth = problem.okey_worth
    required_face = problem.required_face
    required_colour = required_face // 13 if required_face >= 0 else -1
    required_number = required_face % 13 + 1 if required_face >= 0 else 0
    count_tiles = okey_worth == COUNT_TILES
    codes = list(problem.codes)
    c0, c1, c2, c3 = codes
    # Per colour, bit 2(p-1) set when place p holds a tile.
    h0, h1, h2, h3 = (
        (c0 | c0 >> 1) & _LANES,
        (c1 | c1 >> 1) & _LANES,
        (c2 | c2 >> 1) & _LANES,
        (c3 | c3 >> 1) & _LANES,
    )
    # Numbers held in enough colours for a set with the okeys.
    if okeys >= 2:
        settable = h0 | h1 | h2 | h3
    elif okeys == 1:
        settable = (h0 | h1) & (h2 | h3) | (h0 & h1) | (h2 & h3)
    else:
        settable = (h0 & h1 & (h2 | h3)) | (h2 & h3 & (h0 | h1))
    # Where no okeys are held: the places whose tile has the neighbours to be in a run (p-1
    # with p-2 or p+1, or p+1 with p+2; the 1 also as the 1 of 12-13-1, place 14).
    runnable = 0
    if okeys == 0:
        for lanes in (h0, h1, h2, h3):
            held = lanes | (1 << 26 if high_one and lanes & 1 else 0)
            reach = ((held << 2) & ((held << 4) | (held >> 2))) | ((held >> 2) & (held >> 4))
            runnable |= reach & held
        if runnable >> 26 & 1:
            runnable |= 1

    # Numbers where a set could be made. Where no tile there could be in a run (no okeys, no
    # neighbours), putting as many of them as possible into sets is best: no choice to explore.
    # Each candidate: (number, forced, the shift of its place in a code, its tiles per colour).
    candidates: list[tuple[int, bool, int, tuple[int, int, int, int]]] = []
    for number in range(13, 0, -1):  # high numbers first: their sets are worth most
        shift = 2 * (number - 1)
        if not settable >> shift & 1:
            continue
        available = ((c0 >> shift) & 3, (c1 >> shift) & 3, (c2 >> shift) & 3, (c3 >> shift) & 3)
        forced = okeys == 0 and not runnable >> shift & 1
        candidates.append((number, forced, shift, available))
    last = len(candidates)

    best = _Best(value=floor)
    chosen: list[tuple[int, tuple[int, ...], int]] = []
    # Without a required tile the search leaves two okey choices to the leaves, where they are
    # cheap: an okey topping up a set already made (it earns the set's number) and a set of one
    # tile with both okeys. With a required tile it tries every set option (a rare, small case).
    lean = required_face == -1
    options_of = lean_set_options if lean else set_options
    values_of = _values_table(high_one, okey_worth)

    def tile_gain(number: int) -> int:
        return 1 if count_tiles else number

    def okey_gain(number: int) -> int:
        return 1 if count_tiles else (okey_worth or number)

    def colour_runs(code: int, okeys_left: int) -> tuple[int, ...]:
        key = code << 2 | okeys_left
        values = values_of.get(key)
        if values is None:
            values = colour_values(code, high_one, 0, okey_worth, okeys_left)
            if len(values_of) >= _VALUES_SIZE:
                values_of.clear()
            values_of[key] = values
        return values

    def record(
        total: int,
        codes_now: Sequence[int],
        split: tuple[int, ...],
        required_done: bool,
        topped: Sequence[int] = (),
        pair_set: tuple[int, int] | None = None,
    ) -> None:
        if total <= best.value:
            return
        sets = list(chosen)
        for index in topped:
            number, taken, wild = sets[index]
            sets[index] = (number, taken, wild + 1)
        final_codes = list(codes_now)
        if pair_set is not None:
            colour, number = pair_set
            taken = tuple(1 if c == colour else 0 for c in range(4))
            sets.append((number, taken, 2))
            final_codes[colour] -= 1 << (2 * (number - 1))
        best.value = total
        best.sets = tuple(sets)
        best.codes = tuple(final_codes)
        best.okey_split = split
        best.required_colour = required_colour if not required_done else -1

    def leaf(codes_now: list[int], okeys_left: int, set_value: int, required_done: bool) -> None:
        values = [
            colour_values(codes_now[colour], high_one, required_number, okey_worth, okeys_left)
            if colour == required_colour and not required_done
            else colour_runs(codes_now[colour], okeys_left)
            for colour in range(4)
        ]
        # Okeys topping up sets already made, the rest shared out among the runs.
        units: list[tuple[int, int]] = []
        if lean and okeys_left:
            for index, (number, taken, wild) in enumerate(chosen):
                room = SET_ROOM[(taken, wild)]
                units.extend((okey_gain(number), index) for _ in range(min(room, okeys_left)))
            units.sort(reverse=True)
        topped_gain = 0
        for topped in range(min(okeys_left, len(units)) + 1):
            if topped:
                topped_gain += units[topped - 1][0]
            run_value, split = share_okeys(values, okeys_left - topped)
            if run_value == IMPOSSIBLE:
                continue
            total = set_value + topped_gain + run_value
            if required_face == -2 and (okeys_left - sum(split)) < okeys:
                total += REQUIRED_BONUS
            record(total, codes_now, split, required_done, [i for _, i in units[:topped]])
        if lean and okeys_left == 2:
            # Both okeys in a set with one tile left over from the runs' colour.
            base = values[0][0] + values[1][0] + values[2][0] + values[3][0]
            for colour in range(4):
                code = codes_now[colour]
                if not code:
                    continue
                for number in range(13, 0, -1):
                    if not (code >> (2 * (number - 1))) & 3:
                        continue
                    gain = tile_gain(number) + 2 * okey_gain(number)
                    if set_value + base + gain <= best.value:
                        break  # lower numbers gain less still
                    less = code - (1 << (2 * (number - 1)))
                    without = colour_runs(less, 0)[0]
                    total = set_value + base - values[colour][0] + without + gain
                    split = (0, 0, 0, 0)
                    record(total, codes_now, split, required_done, (), (colour, number))

    # future_tiles[k][i]: the most real tiles sets could take at candidate i and after it with
    # k okeys in sets between them, as sets count them (sets at earlier numbers take no tile
    # from later ones): what sets take without okeys everywhere, and what the k okeys add where
    # they add most (one okey helps one set).
    future_tiles = [[0] * (last + 1) for _ in range(okeys + 1)]
    plain_sum = 0
    one_best = one_next = two_best = 0  # the best two gains of one okey, the best of two
    for position in range(last - 1, -1, -1):
        later, _forced, _shift, available = candidates[position]
        per_tile = tile_gain(later)
        without = most_set_tiles(available, 0)
        plain_sum += without * per_tile
        future_tiles[0][position] = plain_sum
        if okeys >= 1:
            one = (most_set_tiles(available, 1) - without) * per_tile
            if one > one_best:
                one_best, one_next = one, one_best
            elif one > one_next:
                one_next = one
            future_tiles[1][position] = plain_sum + one_best
        if okeys >= 2:
            two_best = max(two_best, (most_set_tiles(available, 2) - without) * per_tile)
            future_tiles[2][position] = plain_sum + max(two_best, one_best + one_next)
    # What an okey in a set and a tile with two okeys in a set can earn at most (at 13).
    okey_in_set = okey_gain(13)
    tile_in_set = tile_gain(13)
    run_bounds = _run_bounds_table(high_one, okey_worth)

    def bound(index: int, codes_now: list[int], okeys_left: int) -> int:
        """At least what any leaf below can add to the sets made so far.

        Runs only lose tiles further down, so the runs as the tiles stand (with the okeys not
        in sets) bound them; a tile at a number still to come may go into a set instead, so it
        counts again, with the okeys in sets helping; every okey in a set may earn a set's
        number; and a set of one tile with two okeys may use a tile no run uses.
        """
        key = (codes_now[0], codes_now[1], codes_now[2], codes_now[3], okeys_left)
        by_okeys_in_sets = run_bounds.get(key)
        if by_okeys_in_sets is None:
            # colour_runs, its hits read here without a call.
            values = [
                values_of.get(code << 2 | okeys_left) or colour_runs(code, okeys_left)
                for code in codes_now
            ]
            # For each count of okeys in sets (at 13 at most; with two okeys in a set of one
            # tile, that tile too), the runs with the others.
            by_okeys_in_sets = tuple(
                share_okeys(values, okeys_left - in_sets)[0]
                + in_sets * okey_in_set
                + (tile_in_set if in_sets == 2 else 0)
                for in_sets in range(okeys_left + 1)
            )
            if len(run_bounds) >= _VALUES_SIZE:
                run_bounds.clear()
            run_bounds[key] = by_okeys_in_sets
        if okeys_left == 0:
            return by_okeys_in_sets[0] + future_tiles[0][index]
        if okeys_left == 1:
            return max(
                by_okeys_in_sets[0] + future_tiles[0][index],
                by_okeys_in_sets[1] + future_tiles[1][index],
            )
        return max(
            by_okeys_in_sets[0] + future_tiles[0][index],
            by_okeys_in_sets[1] + future_tiles[1][index],
            by_okeys_in_sets[2] + future_tiles[2][index],
        )

    def search(
        index: int, codes_now: list[int], okeys_left: int, set_value: int, required_done: bool
    ) -> None:
        if index == last:
            leaf(codes_now, okeys_left, set_value, required_done)
            return
        number, forced, shift, _available = candidates[index]
        current = (
            (codes_now[0] >> shift) & 3,
            (codes_now[1] >> shift) & 3,
            (codes_now[2] >> shift) & 3,
            (codes_now[3] >> shift) & 3,
        )
        options = options_of(current, okeys_left)
        if best.value > 0:
            # A required tile not yet down may still earn its bonus below.
            owed = REQUIRED_BONUS if required_face != -1 and not required_done else 0
            if set_value + owed + bound(index, codes_now, okeys_left) <= best.value:
                return  # nothing below can beat the best found
        skip = not (forced and options)
        if not skip:
            options = options[:1]
        per_tile = tile_gain(number)
        per_okey = okey_gain(number)
        for taken, wild in options:
            new_codes = [
                codes_now[0] - (taken[0] << shift),
                codes_now[1] - (taken[1] << shift),
                codes_now[2] - (taken[2] << shift),
                codes_now[3] - (taken[3] << shift),
            ]
            gain = (taken[0] + taken[1] + taken[2] + taken[3]) * per_tile + wild * per_okey
            done = required_done or (
                number == required_number and required_colour >= 0 and taken[required_colour] > 0
            )
            if done and not required_done:
                gain += REQUIRED_BONUS
            chosen.append((number, taken, wild))
            search(index + 1, new_codes, okeys_left - wild, set_value + gain, done)
            chosen.pop()
        # Sets first, then none here: good arrangements come early and the bound cuts more.
        if skip:
            search(index + 1, codes_now, okeys_left, set_value, required_done)

    search(0, codes, okeys, 0, False)
    return best


# Bit 2(p-1) for every place p 1-13: where a code's two bits for a place start.
_LANES = 0x1555555


# The runs' values of a colour (``colour_values`` without a required place) and the runs' part
# of the search's bound, by objective: read at every node of every search, so kept in plain
# dicts keyed by small ints and tuples rather than behind ``lru_cache``'s argument handling.
# Bounded: cleared when full.
_VALUES_SIZE = 1 << 16
_VALUES: dict[tuple[bool, int], dict[int, tuple[int, ...]]] = {}
_RunBounds = dict[tuple[int, int, int, int, int], tuple[int, ...]]
_RUN_BOUNDS: dict[tuple[bool, int], _RunBounds] = {}


def _values_table(high_one: bool, okey_worth: int) -> dict[int, tuple[int, ...]]:
    return _VALUES.setdefault((high_one, okey_worth), {})


def _run_bounds_table(high_one: bool, okey_worth: int) -> _RunBounds:
    return _RUN_BOUNDS.setdefault((high_one, okey_worth), {})


def problem_of(
    hand: Hand, rules: RuleSet, required: Tile | None, okey_worth: int = 0
) -> tuple[Problem, list[Tile], dict[int, list[Tile]]]:
    okey = hand.okey
    wild: list[Tile] = []
    pools: dict[int, list[Tile]] = {}
    for tile in sorted(hand.tiles, key=tile_id):
        if okey.is_wild(tile):
            wild.append(tile)
            continue
        pools.setdefault(okey.plays_as(tile), []).append(tile)
    required_face = -1
    if required is not None:
        required_face = -2 if okey.is_wild(required) else okey.plays_as(required)
        # Put the required copy first so that it is the one laid down.
        if required_face >= 0:
            pool = pools[required_face]
            pool.sort(key=lambda tile: tile.id != required.id)
        else:
            wild.sort(key=lambda tile: tile.id != required.id)
    return problem_alone(hand, rules, required, okey_worth), wild, pools


def problem_alone(
    hand: Hand, rules: RuleSet, required: Tile | None, okey_worth: int = 0
) -> Problem:
    """``problem_of``'s problem without the tiles to build it from: for the questions that
    only need a value."""
    okey_face = hand.okey.face
    codes = [0, 0, 0, 0]
    okeys = 0
    for tile in hand.tiles:
        # Okey.is_wild and Okey.plays_as, inlined.
        tile_id = tile.id
        if tile_id >= 104:
            face = okey_face  # a false joker plays as the okey's face
        elif tile_id >> 1 == okey_face:
            okeys += 1
            continue
        else:
            face = tile_id >> 1
        colour = face // 13
        codes[colour] += 1 << (2 * (face - 13 * colour))
    required_face = -1
    if required is not None:
        required_id = required.id
        if required_id < 104 and required_id >> 1 == okey_face:
            required_face = -2
        else:
            required_face = okey_face if required_id >= 104 else required_id >> 1
    return Problem(
        (codes[0], codes[1], codes[2], codes[3]),
        okeys,
        rules.run_may_end_12_13_1,
        required_face,
        okey_worth,
    )


def _build(
    best: _Best,
    problem: Problem,
    hand: Hand,
    rules: RuleSet,
    wild: list[Tile],
    pools: dict[int, list[Tile]],
) -> Arrangement:
    okey = hand.okey
    pools = {face: list(tiles) for face, tiles in pools.items()}
    wild = list(wild)
    melds: list[Meld] = []
    okeys_used: list[tuple[Tile, int | None]] = []
    required_number = problem.required_face % 13 + 1 if problem.required_face >= 0 else 0
    # Runs first, so that the required copy goes where the trace put it.
    for colour in range(4):
        count = best.okey_split[colour] if best.okey_split else 0
        code = best.codes[colour]
        if not code and not count:
            continue
        required_place = required_number if colour == best.required_colour else 0
        values = colour_values(code, problem.high_one, required_place, problem.okey_worth, count)
        if values[count] == 0:
            continue  # no runs in this colour
        for run in trace_colour(code, problem.high_one, required_place, problem.okey_worth, count):
            tiles: list[Tile] = []
            stands: list[int | None] = []
            wilds: list[bool] = []
            for place, is_okey in run:
                face = face_of(colour, 1 if place == HIGH_ONE else place)
                tiles.append(wild.pop(0) if is_okey else pools[face].pop(0))
                stands.append(face)
                wilds.append(is_okey)
            # Built as the search laid it out (parsing could read it another way).
            melds.append(
                Meld(
                    MeldKind.RUN,
                    tuple(tiles),
                    tuple(stands),
                    run[0][0],
                    Colour(colour),
                    tuple(wilds),
                )
            )
    for number, taken, okey_count in best.sets:
        split = SET_SPLITS[(taken, okey_count)]
        for colours, set_okeys in split:
            tiles = [pools[face_of(colour, number)].pop(0) for colour in colours]
            tiles.extend(wild.pop(0) for _ in range(set_okeys))
            missing = [face_of(c, number) for c in range(4) if c not in colours]
            set_stands: list[int | None] = [face_of(colour, number) for colour in colours]
            # An okey in a set of three stands for a colour not yet decided.
            decided = len(colours) + set_okeys == 4
            set_stands.extend(missing[i] if decided else None for i in range(set_okeys))
            wild_flags = (False,) * len(colours) + (True,) * set_okeys
            melds.append(
                Meld(MeldKind.SET, tuple(tiles), tuple(set_stands), number, None, wild_flags)
            )
    for meld in melds:
        for tile, stands_for in zip(meld.tiles, meld.stands_for, strict=True):
            if okey.is_wild(tile):
                okeys_used.append((tile, stands_for))
    used = {tile.id for meld in melds for tile in meld.tiles}
    leftover = tuple(tile for tile in hand.tiles if tile.id not in used)
    value = sum(meld.value for meld in melds)
    return Arrangement(value, tuple(melds), leftover, tuple(okeys_used))


def best_runs_and_sets(
    hand: Hand, rules: RuleSet, required: Tile | None, okey_worth: int = 0
) -> Arrangement | None:
    problem, wild, pools = problem_of(hand, rules, required, okey_worth)
    best = solve(problem)
    if best.value == IMPOSSIBLE:
        return None
    if required is not None and best.value < REQUIRED_BONUS:
        return None
    return _build(best, problem, hand, rules, wild, pools)
