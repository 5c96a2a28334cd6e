"""``okey101 bench solver``: the meld solver's speed, and its answers checked against the ILP.

Random hands are drawn from real deals: the 106 tiles are shuffled, the hand is dealt from the
top and the indicator is the next tile that is not a false joker (as at a table, where a false
joker turned up is put back). Okeys and false jokers come as the deal brings them: the timing
figures (``mean_ms``, ``p50_ms``, ``p99_ms``) are over these natural hands. So that exactness is
also checked where okeys make the search hardest, half as many hands again are forced to hold
one or two okeys (an okey of the stock swapped in for a tile of the hand); they are checked
against the reference and timed apart (``okey_heavy_*``).

Every hand is solved once by ``best_opening`` and once by the integer programme of
``ilp_reference``, each call timed as it comes (``time.perf_counter``), the solver over all the
hands first and then the reference, so neither times the other's garbage or cache misses. The
solver's caches warm up over the run exactly as they would in a server, and no hand is solved
before it is timed.
"""

from __future__ import annotations

import json
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from okey101.bench.ilp_reference import reference_best_value
from okey101.engine.rules import RuleSet
from okey101.engine.solver.arrangement import Hand
from okey101.engine.solver.openings import best_opening
from okey101.engine.tiles import ALL_TILES, Okey, Tile

HAND_SIZE = 22
DEFAULT_PRESETS = ("oyna", "boombala")


def deal_hand(
    rng: random.Random,
    size: int = HAND_SIZE,
    *,
    okeys: int | None = None,
    false_jokers: int | None = None,
) -> Hand:
    """A hand of ``size`` tiles from a freshly shuffled 106-tile set, and its okey.

    ``okeys`` / ``false_jokers``: force that many okeys / false jokers into the hand (swapping
    tiles with the undealt rest of the set); ``None`` leaves what the deal brought.
    """
    if not 1 <= size <= 104:
        raise ValueError(f"a hand holds 1 to 104 tiles, not {size}")
    deck = list(ALL_TILES)
    rng.shuffle(deck)
    hand = deck[:size]
    rest = deck[size:]
    indicator = next(tile for tile in rest if not tile.is_false_joker)
    rest.remove(indicator)
    okey = Okey(indicator)
    if okeys is not None:
        _force(rng, hand, rest, okeys, okey.is_wild, keep=lambda tile: False)
    if false_jokers is not None:
        _force(
            rng,
            hand,
            rest,
            false_jokers,
            lambda tile: tile.is_false_joker,
            keep=okey.is_wild if okeys is not None else (lambda tile: False),
        )
    return Hand(tuple(hand), okey)


def _force(
    rng: random.Random,
    hand: list[Tile],
    rest: list[Tile],
    wanted: int,
    kind: Callable[[Tile], bool],
    keep: Callable[[Tile], bool],
) -> None:
    """Swap tiles between ``hand`` and ``rest`` until ``hand`` holds ``wanted`` of ``kind``."""
    if not 0 <= wanted <= 2:
        raise ValueError(f"a hand holds 0 to 2 okeys or false jokers, not {wanted}")
    while sum(1 for tile in hand if kind(tile)) < wanted:
        incoming = rng.choice([tile for tile in rest if kind(tile)])
        outgoing_index = rng.choice(
            [index for index, tile in enumerate(hand) if not kind(tile) and not keep(tile)]
        )
        rest.remove(incoming)
        rest.append(hand[outgoing_index])
        hand[outgoing_index] = incoming
    while sum(1 for tile in hand if kind(tile)) > wanted:
        outgoing_index = rng.choice([index for index, tile in enumerate(hand) if kind(tile)])
        incoming = rng.choice([tile for tile in rest if not kind(tile) and not keep(tile)])
        rest.remove(incoming)
        rest.append(hand[outgoing_index])
        hand[outgoing_index] = incoming


def bench_hands(count: int, seed: int, presets: Sequence[str]) -> list[tuple[Hand, RuleSet, bool]]:
    """``count`` natural 22-tile hands and ``count // 2`` forced to hold one or two okeys,
    interleaved, the rule sets cycling through ``presets``; the flag marks the forced ones."""
    rng = random.Random(seed)
    rule_sets = [RuleSet.preset(name) for name in presets]
    hands: list[tuple[Hand, RuleSet, bool]] = []
    for index in range(count + count // 2):
        forced = index % 3 == 2
        okeys = rng.choice((1, 2)) if forced else None
        rules = rule_sets[index % len(rule_sets)]
        hands.append((deal_hand(rng, HAND_SIZE, okeys=okeys), rules, forced))
    return hands


@dataclass(frozen=True, slots=True)
class Disagreement:
    rules: str
    indicator: str
    tiles: tuple[str, ...]
    solver: int
    reference: int

    def to_json(self) -> dict[str, object]:
        return {
            "rules": self.rules,
            "indicator": self.indicator,
            "tiles": list(self.tiles),
            "solver": self.solver,
            "reference": self.reference,
        }

    def __str__(self) -> str:
        return (
            f"{self.rules}: indicator {self.indicator}, tiles {' '.join(self.tiles)}: "
            f"solver {self.solver}, reference {self.reference}"
        )


@dataclass(slots=True)
class BenchResult:
    hands: int
    seed: int
    presets: tuple[str, ...]
    solver_ms: list[float] = field(default_factory=list)
    reference_ms: list[float] = field(default_factory=list)
    heavy_solver_ms: list[float] = field(default_factory=list)
    heavy_reference_ms: list[float] = field(default_factory=list)
    okey_counts: dict[int, int] = field(default_factory=dict)
    false_joker_hands: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        solver_mean = statistics.fmean(self.solver_ms) if self.solver_ms else 0.0
        reference_mean = statistics.fmean(self.reference_ms) if self.reference_ms else 0.0
        return {
            "hands": self.hands,
            "seed": self.seed,
            "rules": list(self.presets),
            "mean_ms": round(solver_mean, 4),
            "p50_ms": round(percentile(self.solver_ms, 50), 4),
            "p99_ms": round(percentile(self.solver_ms, 99), 4),
            "max_ms": round(max(self.solver_ms, default=0.0), 4),
            "reference_mean_ms": round(reference_mean, 4),
            "reference_p99_ms": round(percentile(self.reference_ms, 99), 4),
            "speedup_vs_reference": round(reference_mean / solver_mean, 2) if solver_mean else 0.0,
            "okey_heavy_hands": len(self.heavy_solver_ms),
            "okey_heavy_mean_ms": round(statistics.fmean(self.heavy_solver_ms or [0.0]), 4),
            "okey_heavy_p99_ms": round(percentile(self.heavy_solver_ms, 99), 4),
            "okey_heavy_reference_mean_ms": round(
                statistics.fmean(self.heavy_reference_ms or [0.0]), 4
            ),
            "disagreements": len(self.disagreements),
            "hands_by_okeys": {str(k): v for k, v in sorted(self.okey_counts.items())},
            "hands_with_false_jokers": self.false_joker_hands,
            "examples": [example.to_json() for example in self.disagreements[:5]],
        }


def percentile(samples: Sequence[float], percent: float) -> float:
    """The nearest-rank percentile (0.0 for no samples)."""
    if not samples:
        return 0.0
    ordered = sorted(samples)
    rank = max(1, math.ceil(percent / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def run_bench(count: int, seed: int = 0, presets: Sequence[str] = DEFAULT_PRESETS) -> BenchResult:
    """Time ``best_opening`` and the reference on ``count`` random hands; compare their values."""
    import highspy  # noqa: F401  (loaded before timing: the import is not part of a solve)

    hands = bench_hands(count, seed, presets)
    result = BenchResult(count, seed, tuple(presets))
    clock = time.perf_counter
    for hand, _rules, forced in hands:
        if not forced:
            wild = sum(1 for tile in hand.tiles if hand.okey.is_wild(tile))
            result.okey_counts[wild] = result.okey_counts.get(wild, 0) + 1
            if any(tile.is_false_joker for tile in hand.tiles):
                result.false_joker_hands += 1
    # Two passes over the same hands, so that neither times the other's garbage and caches.
    values: list[int] = []
    for hand, rules, forced in hands:
        start = clock()
        values.append(best_opening(hand, rules).value)
        elapsed = (clock() - start) * 1000
        (result.heavy_solver_ms if forced else result.solver_ms).append(elapsed)
    for (hand, rules, forced), value in zip(hands, values, strict=True):
        start = clock()
        reference = reference_best_value(hand, rules)
        elapsed = (clock() - start) * 1000
        (result.heavy_reference_ms if forced else result.reference_ms).append(elapsed)
        if value != reference:
            result.disagreements.append(
                Disagreement(
                    rules.name,
                    str(hand.okey.indicator),
                    tuple(str(tile) for tile in hand.tiles),
                    value,
                    reference,
                )
            )
    return result


def report_lines(result: BenchResult) -> list[str]:
    """The human-readable report of a run."""
    summary = result.summary()
    okeys = ", ".join(f"{k} okey(s): {v}" for k, v in sorted(result.okey_counts.items()))
    lines = [
        f"solver bench: {result.hands} hands of {HAND_SIZE} tiles, "
        f"rules {', '.join(result.presets)}, seed {result.seed}",
        f"  hands by okeys held: {okeys}; with a false joker: {result.false_joker_hands}",
        f"  best_opening:  mean {summary['mean_ms']} ms, p50 {summary['p50_ms']} ms, "
        f"p99 {summary['p99_ms']} ms, max {summary['max_ms']} ms",
        f"  ILP reference: mean {summary['reference_mean_ms']} ms, "
        f"p99 {summary['reference_p99_ms']} ms",
        f"  speedup vs reference: {summary['speedup_vs_reference']}x",
        f"  okey-heavy hands ({summary['okey_heavy_hands']}, forced to hold 1-2 okeys): "
        f"mean {summary['okey_heavy_mean_ms']} ms, p99 {summary['okey_heavy_p99_ms']} ms, "
        f"reference mean {summary['okey_heavy_reference_mean_ms']} ms",
        f"  disagreements: {len(result.disagreements)}",
    ]
    lines.extend(f"    {example}" for example in result.disagreements[:20])
    if len(result.disagreements) > 20:
        lines.append(f"    ... and {len(result.disagreements) - 20} more")
    return lines


def main(hands: int, seed: int, presets: Sequence[str], as_json: bool) -> int:
    """Run the bench and print the report (the JSON summary last, with ``as_json``).

    Returns 0, or 1 if the solver and the reference disagreed on any hand.
    """
    result = run_bench(hands, seed, presets)
    for line in report_lines(result):
        print(line)
    if as_json:
        print(json.dumps(result.summary(), sort_keys=True))
    return 1 if result.disagreements else 0
