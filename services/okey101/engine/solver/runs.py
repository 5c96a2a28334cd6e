"""Runs: a dynamic programme over one colour's places.

Its state is the lengths (capped at 3) of the runs being built in the colour and the okeys
left. A colour splits into clusters of tiles the okeys could bridge; each cluster is solved
alone and cached by its shape, and the okeys are shared out between clusters and colours.

Two programmes give the same optimum: ``_cluster_values`` (what the search reads, for every
okey count at once) counts the runs of each length and goes on with complete runs before it
starts new ones; ``_ColourRuns`` lists them slot by slot and is walked back by the trace that
builds the melds. The clusters of a colour are found on its code's bits (``_blocks``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import cache, lru_cache

from okey101.engine.melds import HIGH_ONE
from okey101.engine.solver.objective import COUNT_TILES, IMPOSSIBLE, REQUIRED_BONUS


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
            return gain + REQUIRED_BONUS, True
        return gain, got

    def best(self, place: int, lengths: tuple[int, ...], okeys: int, got: bool) -> int:
        key = (place, lengths, okeys, got)
        cached = self.memo.get(key)
        if cached is not None:
            return cached
        if place > self.last:
            done = okeys == 0 and all(length in (0, 3) for length in lengths)
            result = 0 if done else IMPOSSIBLE
            self.memo[key] = result
            return result
        tiles = self.places[place]
        result = IMPOSSIBLE
        for new, used, wild in _transitions(lengths):
            if used > tiles or wild > okeys:
                continue
            gain, now_got = self._gain(place, used, wild, got)
            rest = self.best(place + 1, new, okeys - wild, now_got)
            if rest == IMPOSSIBLE:
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
                if rest != IMPOSSIBLE and gain + rest == target:
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
def colour_values(
    code: int, high_one: bool, required_place: int, okey_worth: int, okeys: int
) -> tuple[int, ...]:
    """Best run value of one colour with exactly 0..``okeys`` okeys (``IMPOSSIBLE`` if none)."""
    if not okeys and not required_place and not (high_one and code & 3):
        return (_plain_value(code, okey_worth),)
    best = [IMPOSSIBLE] * (okeys + 1)
    for ones_high in _ones_high_choices(code, high_one, okeys):
        totals = _cluster_totals(code, required_place, okey_worth, okeys, ones_high)
        best = [max(have, new) for have, new in zip(best, totals, strict=True)]
    return tuple(best)


# Bit 2(p-1) for every place p 1-14: where a code's two bits for a place start.
_LANES = 0x5555555


def _blocks(lanes: int) -> list[tuple[int, int]]:
    """The (first, last) places of each stretch of consecutive places set in ``lanes``."""
    out: list[tuple[int, int]] = []
    # Each place's bit doubled: consecutive places are then consecutive bits.
    bits = lanes | (lanes << 1)
    while bits:
        lowest = bits & -bits
        block = bits & ~(bits + lowest)
        out.append((lowest.bit_length() // 2 + 1, block.bit_length() // 2))
        bits ^= block
    return out


def _plain_value(code: int, okey_worth: int) -> int:
    """``colour_values`` without okeys, a required tile or a 1 after 13 (the common case, and a
    quick one): each stretch of three or more consecutive places is solved alone, and a shorter
    one holds no run."""
    total = 0
    for first, last in _blocks((code | code >> 1) & _LANES):
        length = last - first + 1
        if length >= 3:
            pattern = (code >> (2 * (first - 1))) & ((1 << (2 * length)) - 1)
            total += _cluster_values(first, pattern, length, 0, okey_worth, 0, 13)[0]
    return total


def _cluster_totals(
    code: int, required_place: int, okey_worth: int, okeys: int, ones_high: int
) -> list[int]:
    """``_merge_clusters``' totals alone (what the search reads; the trace needs the rest):
    the clusters found on the code's bits, their values merged by okeys."""
    if ones_high:
        code = code - ones_high + (ones_high << 26)  # those 1s at place 14
    top = HIGH_ONE if ones_high else 13
    held = (code | code >> 1) & _LANES
    # Places between tiles at most ``okeys`` apart join their cluster (an okey bridges them).
    joined = held
    if okeys >= 1:
        joined |= (held << 2) & (held >> 2)
    if okeys >= 2:
        joined |= ((held << 2) & (held >> 4)) | ((held << 4) & (held >> 2))
    t0, t1, t2 = 0, IMPOSSIBLE, IMPOSSIBLE
    bonus_given = False
    for first, last in _blocks(joined):
        length = last - first + 1
        pattern = (code >> (2 * (first - 1))) & ((1 << (2 * length)) - 1)
        inside = 0
        if (
            not bonus_given
            and required_place
            and (first <= required_place <= last or (required_place == 1 and last == HIGH_ONE))
        ):
            inside, bonus_given = required_place, True
        values = _cluster_values(first, pattern, length, inside, okey_worth, okeys, top)
        v0 = values[0]
        if okeys == 0:
            t0 += v0
            continue
        v1 = values[1]
        if okeys == 1:
            t0, t1 = t0 + v0, max(t0 + v1, t1 + v0)
            continue
        v2 = values[2]
        t0, t1, t2 = t0 + v0, max(t0 + v1, t1 + v0), max(t0 + v2, t1 + v1, t2 + v0)
    # A sum with an impossible part is far below zero, and no possible total is.
    totals = [t0, t1, t2][: okeys + 1]
    return [total if total >= 0 else IMPOSSIBLE for total in totals]


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
    totals: list[int] = [0] + [IMPOSSIBLE] * okeys
    shares: list[list[int]] = [[] for _ in range(okeys + 1)]
    clusters = _clusters(code, okeys, required_place, ones_high)
    top = HIGH_ONE if ones_high else 13
    for cluster in clusters:
        values = _cluster_values(*cluster, okey_worth, okeys, top)
        merged = [IMPOSSIBLE] * (okeys + 1)
        merged_shares: list[list[int]] = [[] for _ in range(okeys + 1)]
        for have, have_value in enumerate(totals):
            if have_value == IMPOSSIBLE:
                continue
            for add, add_value in enumerate(values[: okeys + 1 - have]):
                if add_value != IMPOSSIBLE and have_value + add_value > merged[have + add]:
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
    """Best run values of one cluster (places ``start``.., 2 bits a place) for 0..okeys okeys.

    The same optimum as ``_ColourRuns`` (which the trace walks), found forwards over the
    places in one pass for every okey count: a state is how many runs being built have one
    place, two, and three or more (interchangeable, so counted rather than listed), the okeys
    used, and whether the required tile is down; at each place some complete runs stop, new
    ones start, and every run there takes a tile or an okey.
    """
    low = max(1, start - okeys)
    high = min(top, start + length - 1 + okeys)
    required_places = (required_place, HIGH_ONE) if required_place == 1 else (required_place,)
    tile_gain = 1 if okey_worth == COUNT_TILES else 0
    okey_gain = 1 if okey_worth == COUNT_TILES else okey_worth
    # A state, packed in an int: runs of one place (bits 0-2), of two (3-5), of three or more
    # (6-8), okeys used (9-10), the required tile down (11); its best value so far.
    states: dict[int, int] = {0: 0}
    for place in range(low, high + 1):
        offset = place - start
        tiles = (pattern >> (2 * offset)) & 3 if 0 <= offset < length else 0
        worth = 1 if place == HIGH_ONE else place
        per_tile = tile_gain or worth
        per_okey = okey_gain or worth
        bonus_here = bool(required_place) and place in required_places
        may_start = place + 2 <= high  # a run started here must reach three places
        after: dict[int, int] = {}
        get = after.get
        for state, value in states.items():
            used = state >> 9 & 3
            for runs, used_tiles, wild in _run_steps(
                state & 7, state >> 3 & 7, state >> 6 & 7, tiles, okeys - used, may_start
            ):
                total = value + used_tiles * per_tile + wild * per_okey
                key = runs | (used + wild) << 9 | (state & _GOT)
                if used_tiles and bonus_here and not state & _GOT:
                    total += REQUIRED_BONUS
                    key |= _GOT
                if total > get(key, IMPOSSIBLE):
                    after[key] = total
        states = after
    best = [IMPOSSIBLE] * (okeys + 1)
    for state, value in states.items():
        used = state >> 9 & 3
        if not state & 63 and value > best[used]:
            best[used] = value
    return tuple(best)


_GOT = 1 << 11


@cache
def _run_steps(
    ones: int, twos: int, longer: int, tiles: int, okeys: int, may_start: bool
) -> tuple[tuple[int, int, int], ...]:
    """What the runs being built (``ones`` of one place, ``twos`` of two, ``longer``) can do
    at a place of ``tiles`` tiles with ``okeys`` okeys left: (the runs after it, packed as
    ``_cluster_values`` packs them, tiles used, okeys used). The runs of one and two places go
    on, as many complete runs as the place has room for go on before any new one starts (a run
    stopped where another starts is the two joined: the same tiles, one run), the rest stop,
    new ones may start (``may_start``), and each run there takes a tile or an okey."""
    steps: list[tuple[int, int, int]] = []
    room = tiles + okeys
    forced = ones + twos
    most = room if may_start else min(room, forced + longer)
    for through in range(forced, most + 1):
        going = min(longer, through - forced)
        runs = (through - forced - going) | ones << 3 | (twos + going) << 6
        for used_tiles in range(max(0, through - okeys), min(through, tiles) + 1):
            steps.append((runs, used_tiles, through - used_tiles))
    return tuple(steps)


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


def trace_colour(
    code: int, high_one: bool, required_place: int, okey_worth: int, okeys: int
) -> list[list[tuple[int, bool]]]:
    """The runs of a colour's best solution with exactly ``okeys`` okeys."""
    target = colour_values(code, high_one, required_place, okey_worth, okeys)[okeys]
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


def share_okeys(values: Sequence[tuple[int, ...]], okeys: int) -> tuple[int, tuple[int, ...]]:
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
            if with_one != IMPOSSIBLE and base - values[colour][0] + with_one > best:
                best, best_colour = base - values[colour][0] + with_one, colour
        return best, tuple(1 if c == best_colour else 0 for c in range(4))
    best = IMPOSSIBLE
    best_split: tuple[int, ...] = (0, 0, 0, 0)
    for split in _OKEY_SPLITS[okeys]:
        total = 0
        for colour_values, count in zip(values, split, strict=True):
            value = colour_values[count]
            if value == IMPOSSIBLE:
                total = IMPOSSIBLE
                break
            total += value
        if total > best:
            best, best_split = total, split
    return best, best_split


_OKEY_SPLITS: dict[int, tuple[tuple[int, ...], ...]] = {
    total: tuple(split for split in itertools.product(range(3), repeat=4) if sum(split) <= total)
    for total in range(3)
}
