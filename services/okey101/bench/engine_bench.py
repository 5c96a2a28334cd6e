"""``okey101 bench engine``: random-agent hands per second, with every invariant checked.

Seeded random players (``okey101.engine.playout.RandomPlayer``) play whole hands from seeded
deals, for each preset in turn, twice: once timed, and once more from the same seeds with the
invariants of ``okey101.engine.invariants`` checked after every move (the second pass must
replay the first exactly: playouts are functions of their seeds). The last line is JSON:
``hands_per_second``, ``actions_per_second``, ``finished_share`` (hands that ended with a finish
rather than an empty stock) and ``invariant_violations``; and, since the wall clock swings with
whatever else the machine runs, the process's CPU time per hand (``cpu_ms_per_hand``) and the
hands per CPU second (``cpu_hands_per_second``) of the timed pass.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence

from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.invariants import all_problems, event_problems
from okey101.engine.playout import RandomPlayer
from okey101.engine.result import EndReason
from okey101.engine.rules import RuleSet


def run(hands: int, seed: int, presets: Sequence[str], *, check: bool = True) -> dict[str, object]:
    """Play ``hands`` hands per preset; figures and every violation found."""
    rng = random.Random(seed)
    totals = {"hands": 0, "actions": 0, "finished": 0, "void": 0}
    violations: list[str] = []
    per_preset: dict[str, dict[str, float]] = {}
    started = time.perf_counter()
    cpu_started = time.process_time()
    for name in presets:
        rules = RuleSet.preset(name)
        players = [RandomPlayer(random.Random(rng.randrange(2**32))) for _ in range(4)]
        preset_started = time.perf_counter()
        preset_actions = 0
        for number in range(hands):
            state = deal(rules, number % 4, shuffled_deck(random.Random(rng.randrange(2**32))))
            turns = 0
            while not state.ended:
                turns += 1
                if turns > 1000:
                    violations.append(f"{name} hand {number}: did not end")
                    break
                seat = state.turn
                for _action, after, events in players[seat].turn(state):
                    preset_actions += 1
                    if check:
                        violations.extend(
                            f"{name} hand {number}: {problem}"
                            for problem in (*all_problems(after), *event_problems(events, seat))
                        )
                    state = after
                if not state.ended and state.turn != (seat + 1) % 4:
                    violations.append(f"{name} hand {number}: turn went {seat} -> {state.turn}")
            result = state.result
            totals["hands"] += 1
            if result is not None and result.reason is EndReason.FINISHED:
                totals["finished"] += 1
            if result is not None and result.reason is EndReason.VOID:
                totals["void"] += 1
        elapsed = time.perf_counter() - preset_started
        totals["actions"] += preset_actions
        per_preset[name] = {
            "hands_per_second": round(hands / elapsed, 1),
            "actions_per_second": round(preset_actions / elapsed, 1),
        }
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    return {
        "hands": totals["hands"],
        "hands_per_second": round(totals["hands"] / elapsed, 1),
        "actions_per_second": round(totals["actions"] / elapsed, 1),
        "cpu_ms_per_hand": round(1000 * cpu / max(totals["hands"], 1), 2),
        "cpu_hands_per_second": round(totals["hands"] / max(cpu, 1e-9), 1),
        "finished_share": round(totals["finished"] / max(totals["hands"], 1), 3),
        "void_hands": totals["void"],
        "invariant_violations": len(violations),
        "checked": check,
        "per_preset": per_preset,
        "first_violations": violations[:5],
    }


def main(hands: int, seed: int, presets: Sequence[str], as_json: bool) -> int:
    figures = run(hands, seed, presets, check=False)
    checked = run(hands, seed, presets, check=True)
    figures["invariant_violations"] = checked["invariant_violations"]
    figures["first_violations"] = checked["first_violations"]
    if checked["finished_share"] != figures["finished_share"]:
        figures["invariant_violations"] = int(str(figures["invariant_violations"])) + 1
        figures["first_violations"] = ["the checked replay ended differently: not deterministic"]
    figures["checked"] = True
    print(
        f"{figures['hands']} hands ({', '.join(presets)}): "
        f"{figures['hands_per_second']} hands/s, {figures['actions_per_second']} actions/s, "
        f"CPU {figures['cpu_ms_per_hand']} ms a hand ({figures['cpu_hands_per_second']} hands "
        f"a CPU second), "
        f"finished {figures['finished_share']}, "
        f"invariant violations {figures['invariant_violations']}"
    )
    for name, per in dict(figures["per_preset"]).items():  # type: ignore[call-overload]
        print(f"  {name}: {per['hands_per_second']} hands/s, {per['actions_per_second']} actions/s")
    if as_json:
        print(json.dumps(figures))
    return 1 if figures["invariant_violations"] else 0
