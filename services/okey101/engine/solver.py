"""The meld solver: the best way a hand splits into runs and sets, exactly.

How it works (an exact method, after van Rijn, Takes and Vis's dynamic programme for Rummikub):

1. Sets live on one number, runs on one colour. For every number the hand could make a set of,
   the search tries every choice of tiles (and okeys) to put in sets there, including none.
2. What is left of each colour is solved by a dynamic programme over the places 1..13 (14 for the
   1 of 12-13-1 where allowed) whose state is the length of the (at most two) runs being built in
   that colour, capped at 3, and the okeys left. Its answer, for 0, 1 and 2 okeys, is cached by
   the colour's tile counts, so most colours of most hands are solved once per process.
3. The okeys left after the sets are shared out between the colours' runs.

A tile that must be used (the left discard, taken to open with) earns a bonus larger than any
hand's value, so the best arrangement uses it whenever any arrangement can. An opening must keep a
tile to discard: if the best arrangement uses every tile, the best of the hand less each distinct
tile is taken instead (any arrangement that keeps a tile is an arrangement of such a hand).

The solver's only promise is exactness, checked against an independent integer programme in the
tests and in ``okey101 bench solver``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache

from okey101.engine.melds import HIGH_ONE, Meld, MeldKind, make_pair
from okey101.engine.rules import RuleSet
from okey101.engine.seat import OpenedAs
from okey101.engine.tiles import (
    FACE_COUNT,
    Colour,
    Okey,
    Tile,
    face_colour,
    face_name,
    face_number,
    face_of,
)


def _tile_id(tile: Tile) -> int:
    return tile.id


# Larger than any hand's value (22 tiles x 13 < 300): marks the required tile as used.
_REQUIRED_BONUS = 10_000
_IMPOSSIBLE = -(10**9)
# An objective: every tile and okey in a meld earns 1 (how many tiles can go down).
COUNT_TILES = -1


@dataclass(frozen=True, slots=True)
class Hand:
    """The tiles a player holds and the okey of the hand they are in."""

    tiles: tuple[Tile, ...]
    okey: Okey

    def without(self, tile: Tile) -> Hand:
        return Hand(tuple(t for t in self.tiles if t.id != tile.id), self.okey)

    def with_tile(self, tile: Tile) -> Hand:
        return Hand((*self.tiles, tile), self.okey)


@dataclass(frozen=True, slots=True)
class Arrangement:
    """Melds made from a hand, and the tiles left over.

    ``value`` is the melds' worth toward an opening (runs and sets); for pairs it is 0 and
    ``pair_count`` says how many. ``okeys`` lists each okey used and the face it stands for
    (``None`` where a set leaves its colour open).
    """

    value: int
    melds: tuple[Meld, ...]
    leftover: tuple[Tile, ...]
    okeys: tuple[tuple[Tile, int | None], ...] = field(default=())

    @property
    def pair_count(self) -> int:
        return sum(1 for meld in self.melds if meld.kind is MeldKind.PAIR)

    @property
    def tile_count(self) -> int:
        return sum(len(meld.tiles) for meld in self.melds)

    def to_json(self) -> dict[str, object]:
        return {
            "value": self.value,
            "melds": [meld.names() for meld in self.melds],
            "okeys": [
                {"tile": str(tile), "stands_for": None if face is None else face_name(face)}
                for tile, face in self.okeys
            ],
            "leftover": [str(tile) for tile in self.leftover],
        }


EMPTY_ARRANGEMENT = Arrangement(0, (), ())


# --------------------------------------------------------------------------------------------
# Sets: which (per-colour counts, okeys) on one number split into valid sets, and how.


def _split_into_sets(
    counts: tuple[int, ...], okeys: int
) -> tuple[tuple[tuple[int, ...], int], ...] | None:
    """A way to split ``counts[colour]`` tiles and ``okeys`` okeys into sets of 3-4 colours."""
    if sum(counts) == 0 and okeys == 0:
        return ()
    present = [colour for colour in range(4) if counts[colour] > 0]
    if not present:
        return None
    # The first present colour is in some set: choose that set's other colours and okeys.
    first = present[0]
    others = [colour for colour in present if colour != first]
    for size in range(len(others), -1, -1):
        for chosen in itertools.combinations(others, size):
            colours = (first, *chosen)
            for wild in range(min(okeys, 4 - len(colours)), -1, -1):
                if not 3 <= len(colours) + wild <= 4:
                    continue
                rest = list(counts)
                for colour in colours:
                    rest[colour] -= 1
                tail = _split_into_sets(tuple(rest), okeys - wild)
                if tail is not None:
                    return ((colours, wild), *tail)
    return None


# For every count vector (each 0-2) and okey count (0-2): the set split, if there is one.
_SET_SPLITS: dict[tuple[tuple[int, ...], int], tuple[tuple[tuple[int, ...], int], ...]] = {}
for _counts in itertools.product(range(3), repeat=4):
    for _okeys in range(3):
        _split = _split_into_sets(_counts, _okeys)
        if _split and (sum(_counts) > 0):
            _SET_SPLITS[(_counts, _okeys)] = _split


@lru_cache(maxsize=4096)
def _set_options(available: tuple[int, ...], okeys: int) -> tuple[tuple[tuple[int, ...], int], ...]:
    """Every (taken counts, okeys) on one number that splits into sets, most tiles first."""
    options = [
        (taken, wild)
        for taken in itertools.product(*(range(count + 1) for count in available))
        for wild in range(okeys + 1)
        if (taken, wild) in _SET_SPLITS
    ]
    options.sort(key=lambda option: -(sum(option[0]) + option[1]))
    return tuple(options)


def _room(taken: tuple[int, ...], wild: int) -> int:
    """How many more okeys can top up the sets of (taken, wild), one at a time."""
    room = 0
    while (taken, wild + room + 1) in _SET_SPLITS:
        room += 1
    return room


_SET_ROOM: dict[tuple[tuple[int, ...], int], int] = {key: _room(*key) for key in _SET_SPLITS}


@lru_cache(maxsize=4096)
def _lean_set_options(
    available: tuple[int, ...], okeys: int
) -> tuple[tuple[tuple[int, ...], int], ...]:
    """The set options the search must branch on when the leaves handle the rest.

    Left out: an okey that only tops up a set the tiles make anyway (the leaf adds it), and a
    single tile with two okeys (the leaf tries it for every tile).
    """
    return tuple(
        (taken, wild)
        for taken, wild in _set_options(available, okeys)
        if sum(taken) >= 2 and (wild == 0 or (taken, wild - 1) not in _SET_SPLITS)
    )


# --------------------------------------------------------------------------------------------
# Runs: a dynamic programme over one colour's places.


# A colour has at most two tiles at a place, so at most two runs pass through it, plus one for
# each okey standing there: the programme tracks 2 + okeys runs ("slots") at once.
def _slot_moves(length: int) -> list[tuple[int, int, int]]:
    """What one slot can do at a place: (new length, tiles used, okeys used).

    A length is capped at 3 ("complete"); a run may stop only when complete.
    """
    moves: list[tuple[int, int, int]] = []
    if length in (0, 3):
        moves.append((0, 0, 0))
    grown = min(length + 1, 3)
    moves.append((grown, 1, 0))
    moves.append((grown, 0, 1))
    return moves


@cache
def _transitions(lengths: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], int, int], ...]:
    """Every (new sorted lengths, tiles, okeys) from sorted ``lengths``, most tiles first."""
    seen: set[tuple[tuple[int, ...], int, int]] = set()
    for moves in itertools.product(*(_slot_moves(length) for length in lengths)):
        new = tuple(sorted(move[0] for move in moves))
        seen.add((new, sum(move[1] for move in moves), sum(move[2] for move in moves)))
    return tuple(sorted(seen, key=lambda move: (-move[1], -move[2], move[0])))


class _ColourRuns:
    """Best run value in one colour for exactly k okeys; keeps its memo for tracing."""

    def __init__(
        self, places: tuple[int, ...], required_place: int, okey_worth: int, okeys: int = 2
    ) -> None:
        # places[p] = tiles at place p (index 0 unused); the last index is the final place.
        self.places = places
        self.last = len(places) - 1
        self.start = (0,) * (2 + okeys)
        # The required tile's place; a required 1 may also be the 1 of 12-13-1.
        self.required_places = (
            (required_place, HIGH_ONE) if required_place == 1 else (required_place,)
        )
        # What a tile and an okey earn where they are placed (0: the place's number).
        self.tile_gain = 1 if okey_worth == COUNT_TILES else 0
        self.okey_gain = 1 if okey_worth == COUNT_TILES else okey_worth
        self.memo: dict[tuple[int, tuple[int, ...], int, bool], int] = {}

    def solve(self, first: int, okeys: int) -> int:
        return self.best(first, self.start, okeys, False)

    def _gain(self, place: int, used: int, wild: int, got: bool) -> tuple[int, bool]:
        """What placing ``used`` tiles and ``wild`` okeys at ``place`` earns; whether the
        required tile is down after it (its bonus is earned once, even with both copies)."""
        worth = 1 if place == HIGH_ONE else place
        gain = used * (self.tile_gain or worth) + wild * (self.okey_gain or worth)
        if used and not got and place in self.required_places:
            return gain + _REQUIRED_BONUS, True
        return gain, got

    def best(self, place: int, lengths: tuple[int, ...], okeys: int, got: bool) -> int:
        key = (place, lengths, okeys, got)
        cached = self.memo.get(key)
        if cached is not None:
            return cached
        if place > self.last:
            done = okeys == 0 and all(length in (0, 3) for length in lengths)
            result = 0 if done else _IMPOSSIBLE
            self.memo[key] = result
            return result
        tiles = self.places[place]
        result = _IMPOSSIBLE
        for new, used, wild in _transitions(lengths):
            if used > tiles or wild > okeys:
                continue
            gain, now_got = self._gain(place, used, wild, got)
            rest = self.best(place + 1, new, okeys - wild, now_got)
            if rest == _IMPOSSIBLE:
                continue
            result = max(result, gain + rest)
        self.memo[key] = result
        return result

    def trace(self, okeys: int, first: int = 1) -> list[list[tuple[int, bool]]]:
        """The runs of the best solution with ``okeys`` okeys: lists of (place, is_okey)."""
        runs: list[list[tuple[int, bool]]] = []
        slots: list[list[tuple[int, bool]] | None] = [None] * len(self.start)
        lengths = list(self.start)
        got = False
        for place in range(first, self.last + 1):
            target = self.best(place, tuple(sorted(lengths)), okeys, got)
            chosen = None
            for moves in itertools.product(*(_slot_moves(length) for length in lengths)):
                used = sum(move[1] for move in moves)
                wild = sum(move[2] for move in moves)
                if used > self.places[place] or wild > okeys:
                    continue
                gain, now_got = self._gain(place, used, wild, got)
                new = tuple(sorted(move[0] for move in moves))
                rest = self.best(place + 1, new, okeys - wild, now_got)
                if rest != _IMPOSSIBLE and gain + rest == target:
                    chosen = moves
                    got = now_got
                    break
            assert chosen is not None, "run trace lost its way"
            for slot, (new_length, _used, wild) in enumerate(chosen):
                current = slots[slot]
                if new_length == 0:
                    if current is not None:
                        runs.append(current)
                    slots[slot] = None
                else:
                    if current is None:
                        current = []
                        slots[slot] = current
                    current.append((place, wild == 1))
                lengths[slot] = new_length
            okeys -= sum(move[2] for move in chosen)
        runs.extend(slot for slot in slots if slot is not None)
        return runs


@lru_cache(maxsize=1 << 16)
def _colour_values(
    code: int, high_one: bool, required_place: int, okey_worth: int, okeys: int
) -> tuple[int, ...]:
    """Best run value of one colour with exactly 0..``okeys`` okeys (``_IMPOSSIBLE`` if none)."""
    best = [_IMPOSSIBLE] * (okeys + 1)
    for ones_high in _ones_high_choices(code, high_one, okeys):
        totals = _merge_clusters(code, required_place, okey_worth, okeys, ones_high)[0]
        best = [max(have, new) for have, new in zip(best, totals, strict=True)]
    return tuple(best)


def _ones_high_choices(code: int, high_one: bool, okeys: int) -> range:
    """How many of a colour's 1s may be tried as the 1 of 12-13-1 (place 14).

    Only where a 12 and a 13 (or okeys standing for them) could come before it.
    """
    ones = code & 3
    twelve_thirteen = bool((code >> 22) & 3) + bool((code >> 24) & 3)
    if high_one and ones and twelve_thirteen + okeys >= 2:
        return range(ones + 1)
    return range(1)


def _clusters(
    code: int, okeys: int, required_place: int, ones_high: int
) -> list[tuple[int, int, int, int]]:
    """A colour's clusters: (first place, pattern, length, the required place if inside, else 0).

    Places run 1..13, and to 14 when ``ones_high`` of the colour's 1s are tried there. A
    required 1 counts at place 1 and at 14: its bonus is earned once, in the first cluster
    that holds either (the solver tries every split of the 1s, so no solution is missed).
    """
    counts = [0] + [(code >> (2 * (number - 1))) & 3 for number in range(1, 14)]
    counts[1] -= ones_high
    if ones_high:
        counts.append(ones_high)
    groups: list[list[int]] = []
    for place in range(1, len(counts)):
        if not counts[place]:
            continue
        if groups and place - groups[-1][-1] - 1 <= okeys:
            groups[-1].append(place)
        else:
            groups.append([place])
    out = []
    bonus_given = False
    for group in groups:
        first, last = group[0], group[-1]
        pattern = 0
        for place in group:
            pattern |= counts[place] << (2 * (place - first))
        inside = 0
        if not bonus_given and required_place:
            holds = first <= required_place <= last or (required_place == 1 and last == HIGH_ONE)
            if holds:
                inside, bonus_given = required_place, True
        out.append((first, pattern, last - first + 1, inside))
    return out


def _merge_clusters(
    code: int, required_place: int, okey_worth: int, okeys: int, ones_high: int = 0
) -> tuple[tuple[int, ...], list[tuple[int, int, int, int]], list[list[int]]]:
    """Best totals for exactly 0..okeys okeys over a colour's clusters; the clusters; and for
    each total, the okeys each cluster gets (to trace it).

    No run crosses a gap wider than the okeys there are, so each cluster (with ``okeys`` places
    of room on each side) is solved alone, cached by its shape, and the okeys shared out.
    """
    totals: list[int] = [0] + [_IMPOSSIBLE] * okeys
    shares: list[list[int]] = [[] for _ in range(okeys + 1)]
    clusters = _clusters(code, okeys, required_place, ones_high)
    top = HIGH_ONE if ones_high else 13
    for cluster in clusters:
        values = _cluster_values(*cluster, okey_worth, okeys, top)
        merged = [_IMPOSSIBLE] * (okeys + 1)
        merged_shares: list[list[int]] = [[] for _ in range(okeys + 1)]
        for have, have_value in enumerate(totals):
            if have_value == _IMPOSSIBLE:
                continue
            for add, add_value in enumerate(values[: okeys + 1 - have]):
                if add_value != _IMPOSSIBLE and have_value + add_value > merged[have + add]:
                    merged[have + add] = have_value + add_value
                    merged_shares[have + add] = [*shares[have], add]
        totals, shares = merged, merged_shares
    return tuple(totals), clusters, shares


def _cluster_runs(
    start: int,
    pattern: int,
    length: int,
    required_place: int,
    okey_worth: int,
    okeys: int,
    top: int,
) -> tuple[_ColourRuns, int]:
    """The run programme of one cluster, and the place it starts from."""
    low = max(1, start - okeys)
    high = min(top, start + length - 1 + okeys)
    places = [0] * (high + 1)
    for offset in range(length):
        places[start + offset] = (pattern >> (2 * offset)) & 3
    return _ColourRuns(tuple(places), required_place, okey_worth, okeys), low


@lru_cache(maxsize=1 << 15)
def _cluster_values(
    start: int,
    pattern: int,
    length: int,
    required_place: int,
    okey_worth: int,
    okeys: int,
    top: int,
) -> tuple[int, ...]:
    """Best run values of one cluster (places ``start``.., 2 bits a place) for 0..okeys okeys."""
    runs, low = _cluster_runs(start, pattern, length, required_place, okey_worth, okeys, top)
    return tuple(runs.solve(low, count) for count in range(okeys + 1))


@lru_cache(maxsize=1 << 14)
def _cluster_trace(
    start: int,
    pattern: int,
    length: int,
    required_place: int,
    okey_worth: int,
    okeys: int,
    top: int,
    used: int,
) -> tuple[tuple[tuple[int, bool], ...], ...]:
    """The runs of a cluster's best solution with exactly ``used`` of ``okeys`` okeys."""
    runs, low = _cluster_runs(start, pattern, length, required_place, okey_worth, okeys, top)
    runs.solve(low, used)
    return tuple(tuple(run) for run in runs.trace(used, first=low))


def _trace_colour(
    code: int, high_one: bool, required_place: int, okey_worth: int, okeys: int
) -> list[list[tuple[int, bool]]]:
    """The runs of a colour's best solution with exactly ``okeys`` okeys."""
    target = _colour_values(code, high_one, required_place, okey_worth, okeys)[okeys]
    for ones_high in _ones_high_choices(code, high_one, okeys):
        totals, clusters, shares = _merge_clusters(
            code, required_place, okey_worth, okeys, ones_high
        )
        if totals[okeys] == target:
            top = HIGH_ONE if ones_high else 13
            return [
                list(run)
                for cluster, used in zip(clusters, shares[okeys], strict=True)
                for run in _cluster_trace(*cluster, okey_worth, okeys, top, used)
            ]
    raise AssertionError("colour trace found no solution")


def _share_okeys(values: Sequence[tuple[int, ...]], okeys: int) -> tuple[int, tuple[int, ...]]:
    """Best total over the colours with at most ``okeys`` okeys, and how many each colour gets.

    A colour with no okeys never fails (it may make no run), so ``values[c][0]`` is a number.
    """
    base = values[0][0] + values[1][0] + values[2][0] + values[3][0]
    if okeys == 0:
        return base, (0, 0, 0, 0)
    if okeys == 1:
        best, best_colour = base, -1
        for colour in range(4):
            with_one = values[colour][1]
            if with_one != _IMPOSSIBLE and base - values[colour][0] + with_one > best:
                best, best_colour = base - values[colour][0] + with_one, colour
        return best, tuple(1 if c == best_colour else 0 for c in range(4))
    best = _IMPOSSIBLE
    best_split: tuple[int, ...] = (0, 0, 0, 0)
    for split in _OKEY_SPLITS[okeys]:
        total = 0
        for colour_values, count in zip(values, split, strict=True):
            value = colour_values[count]
            if value == _IMPOSSIBLE:
                total = _IMPOSSIBLE
                break
            total += value
        if total > best:
            best, best_split = total, split
    return best, best_split


_OKEY_SPLITS: dict[int, tuple[tuple[int, ...], ...]] = {
    total: tuple(split for split in itertools.product(range(3), repeat=4) if sum(split) <= total)
    for total in range(3)
}


# --------------------------------------------------------------------------------------------
# The search over sets.


@dataclass(slots=True)
class _Best:
    value: int = _IMPOSSIBLE
    sets: tuple[tuple[int, tuple[int, ...], int], ...] = ()
    codes: tuple[int, ...] = ()
    okey_split: tuple[int, ...] = ()
    required_colour: int = -1


@dataclass(frozen=True, slots=True)
class _Problem:
    counts: tuple[int, ...]  # per face 0-51
    okeys: int
    high_one: bool
    required_face: int  # -1: none; a face; or -2: an okey
    # 0: an okey is worth the place it stands for (opening value); else this fixed worth
    # (least leftover: an okey kept in hand costs 101).
    okey_worth: int = 0


def _solve(problem: _Problem, floor: int = _IMPOSSIBLE) -> _Best:
    """The best arrangement's value and how to build it.

    ``floor``: the caller only cares about values above it, so the search may cut any branch
    that cannot beat it (the answer is then exact if above ``floor``, else ``floor``).
    """
    counts = problem.counts
    codes = [0, 0, 0, 0]
    for face in range(FACE_COUNT):
        if counts[face]:
            codes[face // 13] += counts[face] << (2 * (face % 13))
    required_colour = problem.required_face // 13 if problem.required_face >= 0 else -1
    required_number = problem.required_face % 13 + 1 if problem.required_face >= 0 else 0

    # Numbers where a set could be made. Where no tile there could be in a run (no okeys, no
    # neighbours), putting as many of them as possible into sets is best: no choice to explore.
    candidates: list[tuple[int, bool]] = []
    for number in range(1, 14):
        available = tuple(counts[face_of(colour, number)] for colour in range(4))
        if sum(1 for count in available if count) + problem.okeys >= 3:
            forced = problem.okeys == 0 and not any(
                count and _in_reach_of_a_run(counts, colour, number, problem.high_one)
                for colour, count in enumerate(available)
            )
            candidates.append((number, forced))
    candidates.reverse()  # high numbers first: their sets are worth most

    best = _Best(value=floor)
    chosen: list[tuple[int, tuple[int, ...], int]] = []
    high_one = problem.high_one
    okey_worth = problem.okey_worth
    # Without a required tile the search leaves two okey choices to the leaves, where they are
    # cheap: an okey topping up a set already made (it earns the set's number) and a set of one
    # tile with both okeys. With a required tile it tries every set option (a rare, small case).
    lean = problem.required_face == -1

    def tile_gain(number: int) -> int:
        return 1 if okey_worth == COUNT_TILES else number

    def okey_gain(number: int) -> int:
        return 1 if okey_worth == COUNT_TILES else (okey_worth or number)

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
            _colour_values(
                codes_now[colour],
                high_one,
                required_number if (colour == required_colour and not required_done) else 0,
                okey_worth,
                okeys_left,
            )
            for colour in range(4)
        ]
        # Okeys topping up sets already made, the rest shared out among the runs.
        units: list[tuple[int, int]] = []
        if lean and okeys_left:
            for index, (number, taken, wild) in enumerate(chosen):
                room = _SET_ROOM[(taken, wild)]
                units.extend((okey_gain(number), index) for _ in range(min(room, okeys_left)))
            units.sort(reverse=True)
        topped_gain = 0
        for topped in range(min(okeys_left, len(units)) + 1):
            if topped:
                topped_gain += units[topped - 1][0]
            run_value, split = _share_okeys(values, okeys_left - topped)
            if run_value == _IMPOSSIBLE:
                continue
            total = set_value + topped_gain + run_value
            if problem.required_face == -2 and (okeys_left - sum(split)) < problem.okeys:
                total += _REQUIRED_BONUS
            record(total, codes_now, split, required_done, [i for _, i in units[:topped]])
        if lean and okeys_left == 2:
            # Both okeys in a set with one tile left over from the runs' colour.
            base = sum(colour_values[0] for colour_values in values)
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
                    without = _colour_values(less, high_one, 0, okey_worth, 0)[0]
                    total = set_value + base - values[colour][0] + without + gain
                    split = (0, 0, 0, 0)
                    record(total, codes_now, split, required_done, (), (colour, number))

    # future_tiles[k][i]: the most real tiles sets could take at candidate i and after it with
    # k okeys to help, as sets count them (sets at earlier numbers take no tile from later ones).
    future_tiles = [[0] * (len(candidates) + 1) for _ in range(problem.okeys + 1)]
    for okeys_there in range(problem.okeys + 1):
        row = future_tiles[okeys_there]
        for position in range(len(candidates) - 1, -1, -1):
            later = candidates[position][0]
            available = tuple(counts[face_of(colour, later)] for colour in range(4))
            options = _set_options(available, okeys_there)
            most = max((sum(taken) for taken, _wild in options), default=0)
            row[position] = row[position + 1] + most * tile_gain(later)

    def bound(index: int, codes_now: list[int], okeys_left: int) -> int:
        """At least what any leaf below can add to the sets made so far.

        Runs only lose tiles further down, so the runs as the tiles stand (with every okey left)
        bound them; a tile at a number still to come may go into a set instead, so it counts
        again; every okey may earn a set's number instead; and a set of one tile with two okeys
        may use a tile no run uses.
        """
        values = [
            _colour_values(codes_now[colour], high_one, 0, okey_worth, okeys_left)
            for colour in range(4)
        ]
        # j okeys in runs, the others in sets at 13 at most (with two okeys in a set of one
        # tile, that tile too).
        most = 0
        for in_runs in range(okeys_left + 1):
            runs, _split = _share_okeys(values, in_runs)
            in_sets = okeys_left - in_runs
            extra = in_sets * okey_gain(13) + (tile_gain(13) if in_sets == 2 else 0)
            most = max(most, runs + extra)
        return most + future_tiles[okeys_left][index]

    def search(
        index: int, codes_now: list[int], okeys_left: int, set_value: int, required_done: bool
    ) -> None:
        if index == len(candidates):
            leaf(codes_now, okeys_left, set_value, required_done)
            return
        number, forced = candidates[index]
        shift = 2 * (number - 1)
        current = tuple((codes_now[colour] >> shift) & 3 for colour in range(4))
        options = (_lean_set_options if lean else _set_options)(current, okeys_left)
        if (
            lean
            and best.value > 0
            and set_value + bound(index, codes_now, okeys_left) <= best.value
        ):
            return  # nothing below can beat the best found
        skip = not (forced and options)
        if not skip:
            options = options[:1]
        for taken, wild in options:
            new_codes = [codes_now[colour] - (taken[colour] << shift) for colour in range(4)]
            gain = sum(taken) * tile_gain(number) + wild * okey_gain(number)
            done = required_done or (
                number == required_number and required_colour >= 0 and taken[required_colour] > 0
            )
            if done and not required_done:
                gain += _REQUIRED_BONUS
            chosen.append((number, taken, wild))
            search(index + 1, new_codes, okeys_left - wild, set_value + gain, done)
            chosen.pop()
        # Sets first, then none here: good arrangements come early and the bound cuts more.
        if skip:
            search(index + 1, codes_now, okeys_left, set_value, required_done)

    search(0, codes, problem.okeys, 0, False)
    return best


def _in_reach_of_a_run(counts: Sequence[int], colour: int, number: int, high_one: bool) -> bool:
    """Whether the tile ``colour``/``number`` has the neighbours to be in a run (no okeys)."""

    def has(place: int) -> bool:
        if place == HIGH_ONE and high_one:
            return counts[face_of(colour, 1)] > 0
        return 1 <= place <= 13 and counts[face_of(colour, place)] > 0

    places = [number] + ([HIGH_ONE] if number == 1 and high_one else [])
    return any(
        (has(p - 1) and (has(p - 2) or has(p + 1))) or (has(p + 1) and has(p + 2)) for p in places
    )


def _problem(
    hand: Hand, rules: RuleSet, required: Tile | None, okey_worth: int = 0
) -> tuple[_Problem, list[Tile], dict[int, list[Tile]]]:
    okey = hand.okey
    counts = [0] * FACE_COUNT
    wild: list[Tile] = []
    pools: dict[int, list[Tile]] = {}
    for tile in sorted(hand.tiles, key=_tile_id):
        if okey.is_wild(tile):
            wild.append(tile)
            continue
        face = okey.plays_as(tile)
        counts[face] += 1
        pools.setdefault(face, []).append(tile)
    required_face = -1
    if required is not None:
        required_face = -2 if okey.is_wild(required) else okey.plays_as(required)
        # Put the required copy first so that it is the one laid down.
        if required_face >= 0:
            pool = pools[required_face]
            pool.sort(key=lambda tile: tile.id != required.id)
        else:
            wild.sort(key=lambda tile: tile.id != required.id)
    problem = _Problem(
        tuple(counts), len(wild), rules.run_may_end_12_13_1, required_face, okey_worth
    )
    return problem, wild, pools


def _build(
    best: _Best,
    problem: _Problem,
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
        values = _colour_values(code, problem.high_one, required_place, problem.okey_worth, count)
        if values[count] == 0:
            continue  # no runs in this colour
        for run in _trace_colour(code, problem.high_one, required_place, problem.okey_worth, count):
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
        split = _SET_SPLITS[(taken, okey_count)]
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


def _best_runs_and_sets(
    hand: Hand, rules: RuleSet, required: Tile | None, okey_worth: int = 0
) -> Arrangement | None:
    problem, wild, pools = _problem(hand, rules, required, okey_worth)
    best = _solve(problem)
    if best.value == _IMPOSSIBLE:
        return None
    if required is not None and best.value < _REQUIRED_BONUS:
        return None
    return _build(best, problem, hand, rules, wild, pools)


def _meldable_faces(hand: Hand, rules: RuleSet) -> tuple[int, list[tuple[int, int]]]:
    """The okeys held, and (face, count) of every face that could be in some meld at all: in
    reach of a run given the okeys held, or on a number with enough colours for a set."""
    okey = hand.okey
    okeys = 0
    counts = [0] * FACE_COUNT
    present = [0, 0, 0, 0]  # per colour, bit p set when place p (1-14) is held
    for tile in hand.tiles:
        if okey.is_wild(tile):
            okeys += 1
            continue
        face = okey.plays_as(tile)
        counts[face] += 1
        present[face // 13] |= 1 << (face % 13 + 1)
    high_one = rules.run_may_end_12_13_1
    if high_one:
        for colour in range(4):
            if present[colour] & 2:
                present[colour] |= 1 << HIGH_ONE
    top = HIGH_ONE if high_one else 13
    colours_at = [sum(1 for c in range(4) if present[c] >> number & 1) for number in range(14)]
    meldable: list[tuple[int, int]] = []
    for face in range(FACE_COUNT):
        count = counts[face]
        if not count:
            continue
        colour, number = face // 13, face % 13 + 1
        if colours_at[number] + okeys >= 3:
            meldable.append((face, count))
            continue
        held = present[colour]
        places = (number, HIGH_ONE) if number == 1 and high_one else (number,)
        for place in places:
            for low in range(max(1, place - 2), min(place, top - 2) + 1):
                # The other two places of the window low..low+2.
                others = (held >> low & 1) + (held >> (low + 1) & 1) + (held >> (low + 2) & 1) - 1
                if 2 - others <= okeys:
                    meldable.append((face, count))
                    break
            else:
                continue
            break
    return okeys, meldable


def quick_value_bound(hand: Hand, rules: RuleSet) -> int:
    """A cheap upper bound on any runs-and-sets value of ``hand``, without solving: the tiles
    that could be in some meld at all, and every okey at 13. A quick "no" for the many hands
    that cannot open."""
    okeys, meldable = _meldable_faces(hand, rules)
    return okeys * 13 + sum(count * (face % 13 + 1) for face, count in meldable)


def quick_tiles_bound(hand: Hand, rules: RuleSet) -> int:
    """A cheap upper bound on how many tiles of ``hand`` can go down as runs and sets."""
    okeys, meldable = _meldable_faces(hand, rules)
    return okeys + sum(count for _face, count in meldable)


def opening_value_bound(
    hand: Hand, rules: RuleSet, *, required: Tile | None = None, at_least: int = 0
) -> int:
    """The best runs-and-sets value of ``hand`` without building it, every tile allowed.

    An upper bound for ``best_opening(...).value`` (which must keep a tile): a quick "no" when a
    caller only needs to know whether an opening can reach the minimum. 0 when ``required``
    cannot be used. With ``at_least``, the search skips whatever cannot reach it: the answer is
    exact when it is ``at_least`` or more, and otherwise only says "less".
    """
    problem, _wild, _pools = _problem(hand, rules, required)
    if required is not None:
        value = _solve(problem).value
        return value - _REQUIRED_BONUS if value >= _REQUIRED_BONUS else 0
    return max(_solve(problem, floor=at_least - 1).value, 0)


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
    arrangement = _best_runs_and_sets(hand, rules, required)
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
        smaller = _best_runs_and_sets(hand.without(tile), rules, required)
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
    arrangement = _best_runs_and_sets(hand, rules, None, okey_worth=rules.okey_in_hand_points)
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

    With ``at_least`` (and no ``required``) the answer is exact only when it reaches it.
    """
    problem, _wild, _pools = _problem(hand, rules, required, COUNT_TILES)
    if required is not None:
        count = _solve(problem).value
        return count - _REQUIRED_BONUS if count >= _REQUIRED_BONUS else -1
    return max(_solve(problem, floor=at_least - 1).value, 0)


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
    candidates: Iterable[Tile] = [keep] if keep is not None else _distinct(hand)
    for tile in candidates:
        rest = hand.without(tile)
        arrangement = _best_runs_and_sets(rest, rules, None, COUNT_TILES)
        if arrangement is not None and not arrangement.leftover:
            return Arrangement(arrangement.value, arrangement.melds, (tile,), arrangement.okeys)
    return None


def _distinct(hand: Hand) -> list[Tile]:
    seen: set[tuple[bool, int]] = set()
    out: list[Tile] = []
    for tile in hand.tiles:
        wild = hand.okey.is_wild(tile)
        key = (wild, -1 if wild else hand.okey.plays_as(tile))
        if key not in seen:
            seen.add(key)
            out.append(tile)
    return out


def best_pairs(hand: Hand, *, required: Tile | None = None, keep_one: bool = True) -> Arrangement:
    """As many pairs as the hand holds (okeys partner singles, then each other).

    ``required`` must be in a pair (else the empty arrangement); ``keep_one`` leaves a tile to
    discard.
    """
    okey = hand.okey
    by_face: dict[int, list[Tile]] = {}
    wild: list[Tile] = []
    for tile in sorted(hand.tiles, key=_tile_id):
        if okey.is_wild(tile):
            wild.append(tile)
        else:
            by_face.setdefault(okey.plays_as(tile), []).append(tile)
    if required is not None:
        if okey.is_wild(required):
            wild.sort(key=lambda tile: tile.id != required.id)
        else:
            by_face[okey.plays_as(required)].sort(key=lambda tile: tile.id != required.id)
    pairs: list[tuple[Tile, Tile]] = []
    singles: list[Tile] = []
    for face in sorted(by_face, key=lambda face: -face_number(face)):
        tiles = by_face[face]
        for index in range(0, len(tiles) - 1, 2):
            pairs.append((tiles[index], tiles[index + 1]))
        if len(tiles) % 2:
            singles.append(tiles[-1])
    # The required single (if any) gets an okey first; then the highest singles.
    singles.sort(
        key=lambda tile: (required is None or tile.id != required.id, -okey.plays_as(tile) % 13)
    )
    for single in singles:
        if not wild:
            break
        pairs.append((single, wild.pop(0)))
    while len(wild) >= 2:
        pairs.append((wild.pop(0), wild.pop(0)))
    if required is not None and not any(required in pair for pair in pairs):
        return Arrangement(0, (), hand.tiles)
    if keep_one:
        while pairs and 2 * len(pairs) >= len(hand.tiles):
            # Drop a pair without the required tile.
            for index in range(len(pairs) - 1, -1, -1):
                if required is None or required not in pairs[index]:
                    del pairs[index]
                    break
            else:
                return Arrangement(0, (), hand.tiles)
    melds = tuple(make_pair(pair, okey) for pair in pairs)
    used = {tile.id for pair in pairs for tile in pair}
    leftover = tuple(tile for tile in hand.tiles if tile.id not in used)
    okeys = tuple(
        (tile, face)
        for meld in melds
        for tile, face in zip(meld.tiles, meld.stands_for, strict=True)
        if okey.is_wild(tile)
    )
    return Arrangement(0, melds, leftover, okeys)


# --------------------------------------------------------------------------------------------
# Playable tiles (işlek) and whether a taken tile can be used.


def playable_faces(table: Iterable[Meld], rules: RuleSet) -> frozenset[int]:
    """Every face a run or set on the table could take: discarding one costs +101.

    - A run takes the tile below its low end (not below 1) and above its high end (not past 13;
      past 13 the 1, where 12-13-1 is a run). The tile an okey stands for inside a run is not
      playable for that run.
    - A three-tile set takes every missing colour (an okey in it does not close a colour). A
      four-tile set takes nothing: the colour its okey stands for is not playable.
    - Pairs take nothing.
    """
    faces: set[int] = set()
    for meld in table:
        if meld.kind is MeldKind.RUN:
            colour = meld.colour
            assert colour is not None
            if meld.low > 1:
                faces.add(face_of(colour, meld.low - 1))
            if meld.high < 13 or (meld.high == 13 and rules.run_may_end_12_13_1):
                faces.add(face_of(colour, 1 if meld.high == 13 else meld.high + 1))
        elif meld.kind is MeldKind.SET and len(meld.tiles) == 3:
            # An okey in a three-tile set closes no colour: the set can still take a fourth.
            shown = {
                face_colour(face)
                for face, wild in zip(meld.stands_for, meld.wild, strict=True)
                if face is not None and not wild
            }
            for colour in Colour:
                if colour not in shown:
                    faces.add(face_of(colour, meld.number))
    return frozenset(faces)


def is_playable(tile: Tile, okey: Okey, table: Iterable[Meld], rules: RuleSet) -> bool:
    """Whether discarding ``tile`` costs +101 because a meld on the table could take it.

    The okey itself is not "playable" here (its own +101 is charged separately).
    """
    if okey.is_wild(tile):
        return False
    return okey.plays_as(tile) in playable_faces(table, rules)


def playable_tiles(table: Iterable[Meld], rules: RuleSet) -> frozenset[str]:
    """The faces (``R7``...) whose discard costs +101 at this table, as names."""
    return frozenset(face_name(face) for face in playable_faces(table, rules))


def can_use(
    tile: Tile,
    hand: Hand,
    table: Sequence[Meld],
    opened_as: OpenedAs | None,
    rules: RuleSet,
    *,
    pairs_on_table: bool = False,
) -> bool:
    """Whether a taken tile can go on the table this turn (the rule for the tile on your left).

    ``hand`` is the rack before taking ``tile``. Unopened: open with it (runs and sets worth the
    minimum, or the minimum of pairs) or lay the whole hand down with it. Opened: lay it off
    (after other tiles from the hand, as R8 then R9 on R5-6-7), put it in the place of an okey on
    the table, or make a new meld or pair with it where the opener may. A tile must always be
    left to discard.
    """
    okey = hand.okey
    full = hand.with_tile(tile)
    if opened_as is None:
        minimum = rules.opening_min_points
        if (
            quick_value_bound(full, rules) >= minimum
            and opening_value_bound(full, rules, required=tile) >= minimum
            and best_opening(full, rules, required=tile).value >= minimum
        ):
            return True
        if best_pairs(full, required=tile).pair_count >= rules.opening_min_pairs:
            return True
        # The whole hand laid down with it, another tile kept to discard.
        if quick_tiles_bound(full, rules) < len(full.tiles) - 1:
            return False
        down = most_tiles_down(full, rules, required=tile)
        if down == len(full.tiles) - 1:
            return True
        return down == len(full.tiles) and any(
            most_tiles_down(full.without(keep), rules, required=tile) == len(hand.tiles)
            for keep in _distinct(full)
            if keep.id != tile.id
        )
    may_pair = opened_as is OpenedAs.PAIRS or (
        rules.runs_openers_may_pair_after_pairs_opening and pairs_on_table
    )
    if may_pair and _pairs_with(tile, hand):
        return True
    if opened_as is OpenedAs.RUNS and _in_a_new_meld(tile, hand, rules):
        return True
    if opened_as is OpenedAs.PAIRS and not rules.pairs_opener_may_lay_off:
        return False
    if rules.may_take_okey_back and _replaces_okey(tile, hand, table, rules):
        return True
    return _lays_off(tile, hand, table, rules, okey)


def _in_a_new_meld(tile: Tile, hand: Hand, rules: RuleSet) -> bool:
    """Whether ``tile`` and two or three tiles of ``hand`` make a run or a set, keeping a tile.

    Any arrangement that uses the tile holds a meld with it, and a meld of three (four for a
    set of four) needs no more than the tiles around the tile's own place or number.
    """
    if len(hand.tiles) < 3:
        return False
    okey = hand.okey
    if okey.is_wild(tile):
        return _okey_meld_with(hand, rules)
    face = okey.plays_as(tile)
    _okeys, meldable = _meldable_faces(hand.with_tile(tile), rules)
    return any(meldable_face == face for meldable_face, _count in meldable)


def _okey_meld_with(hand: Hand, rules: RuleSet) -> bool:
    """Whether an okey and two tiles of ``hand`` make a run or a set."""
    okey = hand.okey
    if any(okey.is_wild(tile) for tile in hand.tiles):
        return True  # okey, okey and any tile
    top = HIGH_ONE if rules.run_may_end_12_13_1 else 13
    faces = sorted({okey.plays_as(tile) for tile in hand.tiles})
    for index, first in enumerate(faces):
        for second in faces[index + 1 :]:
            if first % 13 == second % 13:
                return True  # two colours of one number and the okey
            if first // 13 != second // 13:
                continue
            for low, high in _places_pairs(first % 13 + 1, second % 13 + 1, top):
                gap = high - low
                if gap == 2 or (gap == 1 and (low > 1 or high < top)):
                    return True
    return False


def _places_pairs(a: int, b: int, top: int) -> list[tuple[int, int]]:
    """The places two numbers of one colour can take in a run (a 1 may also be place 14)."""
    firsts = [a] + ([HIGH_ONE] if a == 1 and top == HIGH_ONE else [])
    seconds = [b] + ([HIGH_ONE] if b == 1 and top == HIGH_ONE else [])
    return [(min(x, y), max(x, y)) for x in firsts for y in seconds if x != y]


def _pairs_with(tile: Tile, hand: Hand) -> bool:
    okey = hand.okey
    if okey.is_wild(tile):
        return len(hand.tiles) >= 2
    face = okey.plays_as(tile)
    partners = [t for t in hand.tiles if okey.is_wild(t) or okey.plays_as(t) == face]
    return bool(partners) and len(hand.tiles) >= 2


def _replaces_okey(tile: Tile, hand: Hand, table: Sequence[Meld], rules: RuleSet) -> bool:
    okey = hand.okey
    if okey.is_wild(tile):
        return False
    face = okey.plays_as(tile)
    for meld in table:
        for stands, wild in zip(meld.stands_for, meld.wild, strict=True):
            if not wild:
                continue
            if meld.kind is MeldKind.SET and len(meld.tiles) == 3:
                if not rules.okey_back_from_three_set:
                    continue
                # Only by completing the set to all four colours: the other missing colour too.
                shown = {
                    face_colour(f)
                    for f, w in zip(meld.stands_for, meld.wild, strict=True)
                    if not w and f is not None
                }
                missing = [face_of(c, meld.number) for c in Colour if c not in shown]
                if face in missing and len(missing) == 2:
                    other = next(f for f in missing if f != face)
                    if any(not okey.is_wild(t) and okey.plays_as(t) == other for t in hand.tiles):
                        return len(hand.tiles) >= 2
                continue
            if stands == face:
                return True
    return False


def _lays_off(tile: Tile, hand: Hand, table: Sequence[Meld], rules: RuleSet, okey: Okey) -> bool:
    """Lay ``tile`` off, after as many hand tiles as it takes to reach it, keeping one."""
    wild = okey.is_wild(tile)
    spare_okeys = sum(1 for t in hand.tiles if okey.is_wild(t))
    hand_faces = {okey.plays_as(t) for t in hand.tiles if not okey.is_wild(t)}
    budget = len(hand.tiles) - 1  # hand tiles that may go down with it
    for meld in table:
        if meld.kind is MeldKind.SET:
            if len(meld.tiles) == 3:
                if wild:
                    return True
                shown = {
                    face_colour(f)
                    for f, w in zip(meld.stands_for, meld.wild, strict=True)
                    if not w and f is not None
                }
                face = okey.plays_as(tile)
                # Any colour its real tiles lack (an okey in a three-tile set closes none).
                if face_number(face) == meld.number and face_colour(face) not in shown:
                    return True
            continue
        if meld.kind is not MeldKind.RUN:
            continue
        colour = meld.colour
        assert colour is not None
        top = 13 + (1 if rules.run_may_end_12_13_1 else 0)
        if wild:
            if meld.low > 1 or meld.high < top:
                return True
            continue
        face = okey.plays_as(tile)
        if face_colour(face) != colour:
            continue
        number = face_number(face)
        targets = [number]
        if number == 1 and rules.run_may_end_12_13_1:
            targets.append(HIGH_ONE)
        for place in targets:
            if place > meld.high and place <= top:
                between = range(meld.high + 1, place)
            elif place < meld.low:
                between = range(place + 1, meld.low)
            else:
                continue
            missing = sum(1 for p in between if _place_face(colour, p) not in hand_faces)
            if len(between) <= budget and missing <= spare_okeys:
                return True
    return False


def _place_face(colour: Colour, place: int) -> int:
    return face_of(colour, 1 if place == HIGH_ONE else place)
