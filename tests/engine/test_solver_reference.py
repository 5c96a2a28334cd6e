"""The solver against an independent integer programme (``okey101.bench.ilp_reference``).

Random hands of 14-22 tiles come from real shuffled deals (the indicator never a false joker);
hands are forced to hold 0, 1 or 2 okeys and false jokers in turn, under oyna (no 12-13-1) and
boombala (12-13-1), with and without ``keep_one``, a third of them with a ``required`` tile
(often an okey or a false joker where the hand has one). For every hand the solver's value must
be the programme's, and its arrangement must be one the hand can really lay down.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from okey101.bench.ilp_reference import reference_best_value, reference_solve
from okey101.bench.solver_bench import deal_hand
from okey101.engine.melds import MeldKind, make_meld
from okey101.engine.rules import RuleSet
from okey101.engine.solver.arrangement import Arrangement, Hand
from okey101.engine.solver.openings import best_opening
from okey101.engine.tiles import (
    ALL_TILES,
    Okey,
    Tile,
    copies_of,
    face_colour,
    face_name,
    face_number,
    parse_face,
    tiles_from_names,
)

SEED = 101
HANDS_PER_CASE = 300
PRESETS = ("oyna", "boombala")


def _hands(preset: str, keep_one: bool) -> list[tuple[Hand, Tile | None]]:
    rng = random.Random(f"{SEED}-{preset}-{keep_one}")
    hands: list[tuple[Hand, Tile | None]] = []
    for index in range(HANDS_PER_CASE):
        okeys = (None, 0, 1, 2)[index % 4]
        false_jokers = (None, 0, 1, 2)[(index // 4) % 4]
        hand = deal_hand(rng, rng.randint(14, 22), okeys=okeys, false_jokers=false_jokers)
        required: Tile | None = None
        if index % 3 == 0:
            special = [
                tile for tile in hand.tiles if tile.is_false_joker or hand.okey.is_wild(tile)
            ]
            required = rng.choice(special if special and rng.random() < 0.5 else hand.tiles)
        hands.append((hand, required))
    return hands


def _describe(hand: Hand, rules: RuleSet, required: Tile | None, keep_one: bool) -> str:
    return (
        f"{rules.name}, indicator {hand.okey.indicator}, tiles "
        f"{' '.join(str(tile) for tile in hand.tiles)}, required {required}, keep_one {keep_one}"
    )


def _problems(
    hand: Hand, rules: RuleSet, arrangement: Arrangement, required: Tile | None, keep_one: bool
) -> list[str]:
    """What is wrong with ``arrangement`` as runs and sets laid from ``hand`` (empty: nothing)."""
    problems: list[str] = []
    okey = hand.okey
    hand_ids = Counter(tile.id for tile in hand.tiles)
    meld_ids = [tile.id for meld in arrangement.melds for tile in meld.tiles]
    if len(set(meld_ids)) != len(meld_ids):
        problems.append("a tile is in two melds")
    if not set(meld_ids) <= set(hand_ids):
        problems.append("a meld holds a tile that is not in the hand")
    if Counter(meld_ids) + Counter(tile.id for tile in arrangement.leftover) != hand_ids:
        problems.append("melds and leftover are not the hand")
    if sum(meld.value for meld in arrangement.melds) != arrangement.value:
        problems.append("the melds' values do not add up to the value")
    if keep_one and hand.tiles and not arrangement.leftover:
        problems.append("no tile kept to discard")
    if required is not None and arrangement.melds and required.id not in meld_ids:
        problems.append("the required tile is not used")
    for meld in arrangement.melds:
        if meld.kind not in (MeldKind.RUN, MeldKind.SET):
            problems.append(f"{meld} is not a run or a set")
            continue
        again = make_meld(meld.tiles, okey, rules)
        if again.value != meld.value:
            problems.append(f"{meld} is worth {again.value}, not {meld.value}")
    used_okeys = sorted(
        tile.id for meld in arrangement.melds for tile in meld.tiles if okey.is_wild(tile)
    )
    if sorted(tile.id for tile, _ in arrangement.okeys) != used_okeys:
        problems.append("okeys does not list the okeys used")
    return problems


@pytest.mark.parametrize("keep_one", [True, False], ids=["keep_one", "use_all"])
@pytest.mark.parametrize("preset", PRESETS)
def test_solver_matches_the_integer_programme(preset: str, keep_one: bool) -> None:
    rules = RuleSet.preset(preset)
    failures: list[str] = []
    for hand, required in _hands(preset, keep_one):
        arrangement = best_opening(hand, rules, required=required, keep_one=keep_one)
        expected = reference_best_value(hand, rules, required=required, keep_one=keep_one)
        where = _describe(hand, rules, required, keep_one)
        if arrangement.value != expected:
            failures.append(f"{where}: solver {arrangement.value}, reference {expected}")
        failures.extend(
            f"{where}: {problem}"
            for problem in _problems(hand, rules, arrangement, required, keep_one)
        )
    assert not failures, f"{len(failures)} problem(s):\n" + "\n".join(failures[:20])


def test_the_sample_mixes_okeys_and_false_jokers() -> None:
    okeys: Counter[int] = Counter()
    false_jokers: Counter[int] = Counter()
    required: Counter[str] = Counter()
    for preset in PRESETS:
        for keep_one in (True, False):
            for hand, tile in _hands(preset, keep_one):
                okeys[sum(1 for t in hand.tiles if hand.okey.is_wild(t))] += 1
                false_jokers[sum(1 for t in hand.tiles if t.is_false_joker)] += 1
                if tile is not None:
                    kind = (
                        "okey"
                        if hand.okey.is_wild(tile)
                        else "false joker"
                        if tile.is_false_joker
                        else "tile"
                    )
                    required[kind] += 1
                assert not hand.okey.indicator.is_false_joker
                assert len({t.id for t in hand.tiles}) == len(hand.tiles)
                assert hand.okey.indicator not in hand.tiles
                assert 14 <= len(hand.tiles) <= 22
    assert all(okeys[count] >= 50 for count in (0, 1, 2)), okeys
    assert all(false_jokers[count] >= 50 for count in (0, 1, 2)), false_jokers
    assert all(required[kind] >= 10 for kind in ("okey", "false joker", "tile")), required


# --------------------------------------------------------------------------------------------
# Hands worked out by hand: the reference must find them, and so must the solver.


def _hand(indicator: str, names: str) -> Hand:
    """``names`` as physical tiles (``OK``: an okey), the indicator's copy taken first."""
    indicator_tile = copies_of(parse_face(indicator))[0]
    okey = Okey(indicator_tile)
    words = [face_name(okey.face) if name == "OK" else name for name in names.split()]
    return Hand(tiles_from_names(words, used=[indicator_tile]), okey)


WORKED = [
    # The opening worth 115 in the boombala text.
    pytest.param(
        "boombala",
        "Y5",
        "R10 R11 R12 R13 K13 B13 Y13 K9 K10 K11 R2 B5",
        None,
        True,
        115,
        id="boombala-115",
    ),
    # Three runs side by side in one colour: R9-R10-OK(R11) and R11-R12-R13 twice = 30 + 72.
    pytest.param(
        "oyna",
        "Y5",
        "R9 R10 R11 R11 R12 R12 R13 R13 OK B2",
        None,
        True,
        102,
        id="three-runs-in-one-colour",
    ),
    # Two okeys and a lone 1: OK(R12)-OK(R13)-R1 where 12-13-1 is a run; else B3-OK-OK as
    # 3-4-5 beats R1-OK-OK as 1-2-3.
    pytest.param("boombala", "Y5", "R1 OK OK B3", None, True, 26, id="okeys-make-12-13-1"),
    pytest.param("oyna", "Y5", "R1 OK OK B3", None, True, 12, id="okeys-no-12-13-1"),
    # A required 1 that can only be laid as the 1 of 12-13-1.
    pytest.param("boombala", "Y5", "R12 R13 R1 B3", "R1", True, 26, id="required-high-one"),
    pytest.param("oyna", "Y5", "R12 R13 R1 B3", "R1", True, 0, id="required-one-oyna"),
    # Both R1s, one required: R1-R2-R3-R4 and R11-R12-R13 (46) beats R1-R2-R3 and
    # R11-R12-R13-R1 (43), though the latter lays both 1s.
    pytest.param(
        "boombala", "Y5", "R1 R1 R3 R11 R12 R4 R2 R13", "R1", True, 46, id="required-one-twice"
    ),
    # R1-R2-R3-R4 and R1-B1-K1 use every tile; keeping one, the other R1 is the one to keep
    # (R2-R3-R4 and R1-B1-K1 = 12), though the required R1 is of the same face.
    pytest.param(
        "oyna", "Y5", "R1 R2 R3 R4 R1 B1 K1", "R1", True, 12, id="keep-one-twin-of-required"
    ),
    pytest.param("oyna", "Y5", "R1 R2 R3 R4 R1 B1 K1", "R1", False, 13, id="use-all-with-required"),
]


def _required_tile(hand: Hand, name: str | None) -> Tile | None:
    if name is None:
        return None
    return next(tile for tile in hand.tiles if str(tile) == name)


WORKED_ARGS = ("preset", "indicator", "names", "required", "keep_one", "value")


@pytest.mark.parametrize(WORKED_ARGS, WORKED)
def test_reference_on_worked_hands(
    preset: str, indicator: str, names: str, required: str | None, keep_one: bool, value: int
) -> None:
    hand = _hand(indicator, names)
    tile = _required_tile(hand, required)
    solution = reference_solve(hand, RuleSet.preset(preset), required=tile, keep_one=keep_one)
    assert solution.value == value, solution


@pytest.mark.parametrize(WORKED_ARGS, WORKED)
def test_solver_on_worked_hands(
    preset: str, indicator: str, names: str, required: str | None, keep_one: bool, value: int
) -> None:
    rules = RuleSet.preset(preset)
    hand = _hand(indicator, names)
    tile = _required_tile(hand, required)
    arrangement = best_opening(hand, rules, required=tile, keep_one=keep_one)
    assert arrangement.value == value, [meld.names() for meld in arrangement.melds]
    assert _problems(hand, rules, arrangement, tile, keep_one) == []


# --------------------------------------------------------------------------------------------
# The reference itself, against a brute force over every way to group a small hand.


def _group_value(faces: list[int], okeys: int, high_one: bool) -> int | None:
    """The most a group of real faces and okeys is worth as a run or a set (None: neither)."""
    size = len(faces) + okeys
    if size < 3 or not faces:
        return None
    numbers = [face_number(face) for face in faces]
    colours = {face_colour(face) for face in faces}
    best: int | None = None
    if len(colours) == 1:
        spans = [(low, low + size - 1) for low in range(1, 15 - size)]
        if high_one and size <= 13:
            spans.append((15 - size, 14))  # ends 12-13-1, the 1 counting 1
        for low, high in spans:
            wanted = Counter(1 if place == 14 else place for place in range(low, high + 1))
            if not Counter(numbers) - wanted:  # every real tile has its own place
                value = sum(wanted.elements())
                best = value if best is None else max(best, value)
    if size <= 4 and len(set(numbers)) == 1 and len(colours) == len(faces):
        best = max(best or 0, numbers[0] * size)
    return best


def _brute_force(hand: Hand, rules: RuleSet, required: Tile | None, keep_one: bool) -> int:
    okey = hand.okey
    tiles = [(None if okey.is_wild(t) else okey.plays_as(t), t.id) for t in hand.tiles]
    best = 0

    def search(rest: list[tuple[int | None, int]], used: int, value: int, done: bool) -> None:
        nonlocal best
        if not rest:
            if (not keep_one or used < len(tiles)) and (required is None or done):
                best = max(best, value)
            return
        first, others = rest[0], rest[1:]
        search(others, used, value, done)  # the first tile is left over
        for size in range(2, len(others) + 1):
            for chosen in itertools.combinations(range(len(others)), size):
                group = [first, *(others[index] for index in chosen)]
                faces = [face for face, _ in group if face is not None]
                worth = _group_value(faces, len(group) - len(faces), rules.run_may_end_12_13_1)
                if worth is None:
                    continue
                left = [tile for index, tile in enumerate(others) if index not in chosen]
                has_required = required is not None and any(i == required.id for _, i in group)
                search(left, used + len(group), value + worth, done or has_required)

    search(tiles, 0, 0, False)
    return best


def test_reference_matches_a_brute_force_on_small_hands() -> None:
    rng = random.Random(SEED)
    for _ in range(300):
        # Few numbers in two colours, near both ends, so that runs, sets and 12-13-1 are common.
        indicator = rng.choice([tile for tile in ALL_TILES if not tile.is_false_joker])
        okey = Okey(indicator)
        colours = rng.sample(range(4), 2)
        pool = [
            tile
            for tile in ALL_TILES
            if tile != indicator
            and (
                tile.is_false_joker
                or (
                    not okey.is_wild(tile)
                    and face_colour(tile.face) in colours
                    and face_number(tile.face) in (1, 2, 3, 10, 11, 12, 13)
                )
            )
        ]
        wild = [tile for tile in ALL_TILES if okey.is_wild(tile)][: rng.choice((0, 1, 2))]
        tiles = rng.sample(pool, rng.randint(5, 9) - len(wild)) + wild
        rng.shuffle(tiles)
        hand = Hand(tuple(tiles), okey)
        rules = RuleSet.preset(rng.choice(PRESETS))
        keep_one = rng.random() < 0.5
        required = rng.choice(tiles) if rng.random() < 0.3 else None
        expected = _brute_force(hand, rules, required, keep_one)
        solution = reference_solve(hand, rules, required=required, keep_one=keep_one)
        assert solution.value == expected, (
            _describe(hand, rules, required, keep_one),
            solution,
        )
