"""``okey101 bench bots``: one bot level against another, in duplicate format.

Each seeded deal is played five times through the real engine: four times with the candidate
level in seat s (s = 0..3) and reference bots in the other three seats, and once as a control
with four reference bots. Every run of a deal uses the same deck, the same dealer and the same
bot seeds (a seed per seat, turn and phase), so what differs is the candidate's play. The score
of a deal is the mean over seats of (the candidate's points in seat s - the control's points in
seat s); the 95% confidence interval is over deals (the four seats of a deal are one sample),
by the normal approximation with the sample standard deviation. Negative is better: points are
penalty points.

The bots are driven as a table would drive them: for each step, the seat's ``view`` and its
memory of the events it received, ``decide``, and the actions applied to the real state with
``apply``. An action the real state refuses is a bug: it is counted and reported, and the turn is
finished by the engine's random player so that the deal still ends.

The last line printed is JSON: ``candidate_mean``, ``reference_mean`` (points per hand),
``difference``, ``ci95``, ``opening_rate``, ``finishing_rate``, ``penalties_per_hand`` (+101s
charged to the candidate per hand), ``decision_p50_ms``, ``decision_p99_ms`` (the candidate's
decisions), ``illegal_actions`` (every bot's), ``deals``, and the same rates for the control. A
hand that goes on past any real length is a bug too: it is stopped and counted
(``stuck_hands``).

A long run can be played over several sittings with a journal (``--journal PATH``,
``bots_journal``): each finished deal is appended to it, and a run given the same journal and
arguments plays only the deals it lacks, its figures over all of them (``resumed_deals`` of them
from the journal). The figures are a function of the set of deals, in whatever order they were
played.

``--rule KNOB=VALUE`` (again for more knobs) plays the preset with knobs changed: a measurement
of what another reading of the rules does to the bots (docs/bots.md measures boombala's okey and
pairs readings so). The figures' ``rule_overrides`` and the journal's header record them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from okey101.bench import bots_journal
from okey101.cli.command import rule_override
from okey101.engine.bots.entry_points import decide
from okey101.engine.bots.expert import DEFAULT_BUDGET, ExpertBudget
from okey101.engine.bots.levels import BotLevel
from okey101.engine.bots.memory import BotMemory
from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.errors import OkeyError
from okey101.engine.hand import HandState, Phase, apply
from okey101.engine.legal import legal_actions
from okey101.engine.playout import RandomPlayer
from okey101.engine.result import EndReason
from okey101.engine.rules import RuleSet
from okey101.engine.view import view

# Far more turns than any hand takes (the stock holds 20 tiles; takes are bounded too).
MAX_TURNS = 400
SEATS = 4


@dataclass(slots=True)
class HandRecord:
    """One hand played by four bots: each seat's points and what each seat did."""

    scores: tuple[int, ...]
    opened: tuple[bool, ...]
    finished: tuple[bool, ...]
    penalties: tuple[int, ...]
    # Decision times in ms, per seat (wall clock, and the process's CPU time).
    times: tuple[tuple[float, ...], ...]
    cpu_times: tuple[tuple[float, ...], ...]
    illegal: int
    illegal_examples: list[str] = field(default_factory=list)
    # The hand went on past any real length (a bug): stopped and scored as it stood.
    stuck: bool = False


def _mix(*parts: int) -> int:
    """A seed from several integers (stable across runs and processes)."""
    value = 0x9E3779B97F4A7C15
    for part in parts:
        value = (value ^ (part & 0xFFFFFFFFFFFFFFFF)) * 0x100000001B3 & 0xFFFFFFFFFFFFFFFF
        value ^= value >> 29
    return value


def play_hand(
    rules: RuleSet,
    deck_seed: int,
    dealer: int,
    levels: Sequence[BotLevel],
    bot_seed: int,
    budget: ExpertBudget = DEFAULT_BUDGET,
) -> HandRecord:
    """Play one hand with ``levels[seat]`` in each seat, through the real engine."""
    state = deal(rules, dealer, shuffled_deck(random.Random(deck_seed)))
    memories = [BotMemory(seat) for seat in range(SEATS)]
    times: list[list[float]] = [[] for _ in range(SEATS)]
    cpu_times: list[list[float]] = [[] for _ in range(SEATS)]
    illegal = 0
    examples: list[str] = []
    steps = 0
    while not state.ended:
        steps += 1
        if steps > MAX_TURNS * 3:
            examples.append(f"deal {deck_seed}: the hand did not end ({levels})")
            return HandRecord(
                scores=(0,) * SEATS,
                opened=tuple(s.opened_as is not None for s in state.seats),
                finished=(False,) * SEATS,
                penalties=(0,) * SEATS,
                times=tuple(tuple(t) for t in times),
                cpu_times=tuple(tuple(t) for t in cpu_times),
                illegal=illegal,
                illegal_examples=examples,
                stuck=True,
            )
        seat = state.turn
        seat_view = view(state, seat)
        phase_code = 0 if state.phase is Phase.DRAW else 1
        seed = _mix(bot_seed, seat, state.turn_number, phase_code)
        started = time.perf_counter()
        cpu_started = time.process_time()
        decision = decide(seat_view, rules, levels[seat], seed, memories[seat], budget=budget)
        times[seat].append((time.perf_counter() - started) * 1000.0)
        cpu_times[seat].append((time.process_time() - cpu_started) * 1000.0)
        for action in decision.actions:
            try:
                state, events = apply(state, seat, action)
            except OkeyError as error:
                illegal += 1
                if len(examples) < 5:
                    examples.append(
                        f"deal {deck_seed} seat {seat} {levels[seat]}: {action} refused "
                        f"({error.code}); decision {decision.actions}"
                    )
                state = _recover(state, seat, seed)
                break
            memories = [memory.observe(events) for memory in memories]
            if state.ended:
                break
    result = state.result
    assert result is not None
    finish = result.finish
    return HandRecord(
        scores=result.scores,
        opened=tuple(s.opened_as is not None for s in state.seats),
        finished=tuple(finish is not None and finish.winner == i for i in range(SEATS)),
        penalties=tuple(
            len(s.penalties) if result.reason is not EndReason.VOID else 0 for s in state.seats
        ),
        times=tuple(tuple(t) for t in times),
        cpu_times=tuple(tuple(t) for t in cpu_times),
        illegal=illegal,
        illegal_examples=examples,
    )


def _recover(state: HandState, seat: int, seed: int) -> HandState:
    """Finish a turn a bot got wrong, so that the deal still ends (the error is counted)."""
    try:
        steps = RandomPlayer(random.Random(seed)).turn(state)
        return steps[-1][1] if steps else state
    except (AssertionError, OkeyError):
        pass
    for action in legal_actions(state, seat):
        if type(action).__name__ in ("Discard", "GiveBack", "Draw"):
            return apply(state, seat, action)[0]
    raise AssertionError("no way to finish the turn")


@dataclass(slots=True)
class DealResult:
    """One deal in duplicate: the candidate's and the control's record per seat."""

    number: int
    score: float
    candidate_points: list[int]
    control_points: list[int]
    candidate_opened: int
    candidate_finished: int
    candidate_penalties: int
    control_opened: int
    control_finished: int
    control_penalties: int
    candidate_times: list[float]
    candidate_cpu_times: list[float]
    all_times: list[float]
    illegal: int
    examples: list[str]
    stuck: int

    def to_dict(self) -> dict[str, object]:
        """The deal as JSON values, its decision times rounded to the microsecond (a journal
        line stays compact; the figures are rounded to it anyway)."""
        return {
            "number": self.number,
            "score": self.score,
            "candidate_points": self.candidate_points,
            "control_points": self.control_points,
            "candidate_opened": self.candidate_opened,
            "candidate_finished": self.candidate_finished,
            "candidate_penalties": self.candidate_penalties,
            "control_opened": self.control_opened,
            "control_finished": self.control_finished,
            "control_penalties": self.control_penalties,
            "candidate_times": [round(t, 3) for t in self.candidate_times],
            "candidate_cpu_times": [round(t, 3) for t in self.candidate_cpu_times],
            "all_times": [round(t, 3) for t in self.all_times],
            "illegal": self.illegal,
            "examples": self.examples,
            "stuck": self.stuck,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DealResult:
        """The deal ``to_dict`` gave; KeyError, TypeError or ValueError if ``data`` is none."""
        return cls(
            number=int(data["number"]),
            score=float(data["score"]),
            candidate_points=[int(p) for p in data["candidate_points"]],
            control_points=[int(p) for p in data["control_points"]],
            candidate_opened=int(data["candidate_opened"]),
            candidate_finished=int(data["candidate_finished"]),
            candidate_penalties=int(data["candidate_penalties"]),
            control_opened=int(data["control_opened"]),
            control_finished=int(data["control_finished"]),
            control_penalties=int(data["control_penalties"]),
            candidate_times=[float(t) for t in data["candidate_times"]],
            candidate_cpu_times=[float(t) for t in data["candidate_cpu_times"]],
            all_times=[float(t) for t in data["all_times"]],
            illegal=int(data["illegal"]),
            examples=[str(e) for e in data["examples"]],
            stuck=int(data["stuck"]),
        )


def play_deal(
    number: int,
    seed: int,
    candidate: BotLevel,
    reference: BotLevel,
    preset: str,
    budget: ExpertBudget = DEFAULT_BUDGET,
    rule_overrides: Mapping[str, Any] | None = None,
) -> DealResult:
    """Deal ``number``: the control and the four candidate seats, under ``preset`` with
    ``rule_overrides`` (knobs changed from it, as ``RuleSet.with_overrides`` takes them).

    A level against itself plays the control only: each candidate run would replay it (the
    bots are functions of their seeds; an expert's time budget aside).
    """
    rules = RuleSet.preset(preset).with_overrides(rule_overrides or {})
    deck_seed = _mix(seed, number, 1)
    bot_seed = _mix(seed, number, 2)
    dealer = number % SEATS
    control = play_hand(rules, deck_seed, dealer, [reference] * SEATS, bot_seed, budget)
    candidate_points: list[int] = []
    opened = finished = penalties = 0
    candidate_times: list[float] = []
    candidate_cpu_times: list[float] = []
    all_times = [t for seat_times in control.times for t in seat_times]
    illegal = control.illegal
    stuck = int(control.stuck)
    examples = list(control.illegal_examples)
    for seat in range(SEATS):
        levels = [reference] * SEATS
        levels[seat] = candidate
        record = (
            control
            if candidate is reference
            else play_hand(rules, deck_seed, dealer, levels, bot_seed, budget)
        )
        candidate_points.append(record.scores[seat])
        opened += record.opened[seat]
        finished += record.finished[seat]
        penalties += record.penalties[seat]
        candidate_times.extend(record.times[seat])
        candidate_cpu_times.extend(record.cpu_times[seat])
        all_times.extend(t for seat_times in record.times for t in seat_times)
        illegal += record.illegal
        stuck += int(record.stuck)
        examples.extend(record.illegal_examples)
    control_points = list(control.scores)
    score = sum(c - r for c, r in zip(candidate_points, control_points, strict=True)) / SEATS
    return DealResult(
        number=number,
        score=score,
        candidate_points=candidate_points,
        control_points=control_points,
        candidate_opened=opened,
        candidate_finished=finished,
        candidate_penalties=penalties,
        control_opened=sum(control.opened),
        control_finished=sum(control.finished),
        control_penalties=sum(control.penalties),
        candidate_times=candidate_times,
        candidate_cpu_times=candidate_cpu_times,
        all_times=all_times,
        illegal=illegal,
        examples=examples,
        stuck=stuck,
    )


def _percentile(values: Sequence[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))
    return ordered[index]


def run(
    deals: int,
    candidate: BotLevel,
    reference: BotLevel,
    seed: int,
    *,
    preset: str = "oyna",
    workers: int | None = None,
    budget: ExpertBudget = DEFAULT_BUDGET,
    journal: Path | None = None,
    rule_overrides: Mapping[str, Any] | None = None,
) -> dict[str, object]:
    """Play deals 0 .. ``deals`` - 1 in duplicate; the figures. ``rule_overrides``: knobs
    changed from the preset (a measurement of another reading; the journal records them).

    With ``journal``, the deals it holds are taken from it and not played again, and each deal
    played is appended to it as it finishes (``bots_journal``); ``resumed_deals`` counts the
    former. ``JournalRefused`` if it is not a journal of these deals.
    """
    workers = workers if workers is not None else min(os.cpu_count() or 1, 8)
    started = time.perf_counter()
    results: dict[int, DealResult] = {}
    add: Callable[[Mapping[str, object]], None] | None = None
    with ExitStack() as stack:
        if journal is not None:
            head = bots_journal.header(candidate, reference, preset, seed, budget, rule_overrides)
            held, add = stack.enter_context(
                bots_journal.opened(journal, head, DealResult.from_dict)
            )
            for result in held:
                # Deals past this run's are not in its figures; one written twice counts once.
                if 0 <= result.number < deals:
                    results.setdefault(result.number, result)
        resumed = len(results)
        missing = [number for number in range(deals) if number not in results]
        played = stack.enter_context(
            closing(
                _played(
                    missing,
                    seed,
                    candidate,
                    reference,
                    preset,
                    budget,
                    rule_overrides or {},
                    workers=workers,
                )
            )
        )
        for result in played:
            results[result.number] = result
            if add is not None:
                add(result.to_dict())
    return figures_over(
        list(results.values()),
        candidate,
        reference,
        seed,
        preset=preset,
        budget=budget,
        rule_overrides=rule_overrides,
        resumed=resumed,
        seconds=time.perf_counter() - started,
    )


def _played(
    numbers: Sequence[int],
    seed: int,
    candidate: BotLevel,
    reference: BotLevel,
    preset: str,
    budget: ExpertBudget,
    rule_overrides: Mapping[str, Any],
    *,
    workers: int,
) -> Generator[DealResult, None, None]:
    """The deals ``numbers``, each as soon as it is played (in no set order with workers)."""
    if workers > 1 and len(numbers) > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [
                pool.submit(
                    play_deal, number, seed, candidate, reference, preset, budget, rule_overrides
                )
                for number in numbers
            ]
            try:
                for future in as_completed(futures):
                    yield future.result()
            finally:
                # A run stopped early (an error, Ctrl-C) does not wait for the deals not begun.
                pool.shutdown(cancel_futures=True)
    else:
        for number in numbers:
            yield play_deal(number, seed, candidate, reference, preset, budget, rule_overrides)


def figures_over(
    results: Sequence[DealResult],
    candidate: BotLevel,
    reference: BotLevel,
    seed: int,
    *,
    preset: str,
    budget: ExpertBudget,
    rule_overrides: Mapping[str, Any] | None = None,
    resumed: int = 0,
    seconds: float,
) -> dict[str, object]:
    """The figures over ``results`` (one per deal, in any order), ``run``'s dict: ``resumed``
    of them came from a journal, the others were played in ``seconds``."""
    # In deal order, so that the figures and the first illegal actions do not depend on the
    # order in which workers finished (float sums, the examples' order).
    results = sorted(results, key=lambda r: r.number)
    deals = len(results)
    hands = SEATS * max(deals, 1)
    scores = [r.score for r in results]
    mean = sum(scores) / len(scores) if scores else 0.0
    if len(scores) > 1:
        variance = sum((s - mean) ** 2 for s in scores) / (len(scores) - 1)
        half = 1.96 * math.sqrt(variance / len(scores))
    else:
        half = math.inf
    candidate_times = [t for r in results for t in r.candidate_times]
    candidate_cpu = [t for r in results for t in r.candidate_cpu_times]
    all_times = [t for r in results for t in r.all_times]
    return {
        "candidate": str(candidate),
        "reference": str(reference),
        "preset": preset,
        "rule_overrides": dict(rule_overrides or {}),
        "seed": seed,
        "deals": deals,
        "candidate_mean": round(sum(sum(r.candidate_points) for r in results) / hands, 2),
        "reference_mean": round(sum(sum(r.control_points) for r in results) / hands, 2),
        "difference": round(mean, 2),
        "ci95": [round(mean - half, 2), round(mean + half, 2)],
        "opening_rate": round(sum(r.candidate_opened for r in results) / hands, 3),
        "finishing_rate": round(sum(r.candidate_finished for r in results) / hands, 3),
        "penalties_per_hand": round(sum(r.candidate_penalties for r in results) / hands, 3),
        "reference_opening_rate": round(sum(r.control_opened for r in results) / hands, 3),
        "reference_finishing_rate": round(sum(r.control_finished for r in results) / hands, 3),
        "reference_penalties_per_hand": round(sum(r.control_penalties for r in results) / hands, 3),
        "decision_p50_ms": round(_percentile(candidate_times, 0.50), 3),
        "decision_p99_ms": round(_percentile(candidate_times, 0.99), 3),
        "decision_max_ms": round(max(candidate_times, default=0.0), 3),
        "decision_cpu_p50_ms": round(_percentile(candidate_cpu, 0.50), 3),
        "decision_cpu_p99_ms": round(_percentile(candidate_cpu, 0.99), 3),
        "expert_playouts": budget.playouts,
        "expert_seconds": budget.seconds,
        "all_decisions_p99_ms": round(_percentile(all_times, 0.99), 3),
        "decisions": len(candidate_times),
        "illegal_actions": sum(r.illegal for r in results),
        "stuck_hands": sum(r.stuck for r in results),
        "first_illegal": [e for r in results for e in r.examples][:5],
        "resumed_deals": resumed,
        "seconds": round(seconds, 1),
    }


def main(
    deals: int,
    candidate: str,
    reference: str,
    seed: int,
    as_json: bool,
    *,
    preset: str = "oyna",
    workers: int | None = None,
    budget: ExpertBudget = DEFAULT_BUDGET,
    journal: Path | None = None,
    rule_overrides: Mapping[str, Any] | None = None,
) -> int:
    """Print the figures (the last line JSON with ``as_json``); exit 1 on an illegal action, 2
    (one line on stderr, nothing played) if ``journal`` is not a journal of these deals or a
    rule override is not one of the preset's knobs and values."""
    overrides = dict(rule_overrides or {})
    try:
        RuleSet.preset(preset).with_overrides(overrides)
    except OkeyError as error:
        print(f"okey101: error: {error.message()}", file=sys.stderr)
        return 2
    try:
        figures = run(
            deals,
            BotLevel(candidate),
            BotLevel(reference),
            seed,
            preset=preset,
            workers=workers,
            budget=budget,
            journal=journal,
            rule_overrides=overrides,
        )
    except bots_journal.JournalRefused as error:
        print(f"okey101: error: {error}", file=sys.stderr)  # the command line's form
        return 2
    ci95 = figures["ci95"]
    assert isinstance(ci95, list)
    low, high = ci95
    print(
        f"{figures['candidate']} vs {figures['reference']} ({_rules_shown(preset, overrides)}), "
        f"{deals} deals in "
        f"duplicate: {figures['candidate_mean']} vs {figures['reference_mean']} points per hand, "
        f"difference {figures['difference']} (95% CI {low} .. {high}; negative is better)"
    )
    print(
        f"  candidate: opened {figures['opening_rate']}, finished {figures['finishing_rate']}, "
        f"+101s per hand {figures['penalties_per_hand']}; reference alone: opened "
        f"{figures['reference_opening_rate']}, finished {figures['reference_finishing_rate']}, "
        f"+101s per hand {figures['reference_penalties_per_hand']}"
    )
    resumed_deals = figures["resumed_deals"]
    assert isinstance(resumed_deals, int)
    # The seconds are this sitting's: the deals the journal held cost none of them.
    resumed = (
        f" for the {deals - resumed_deals} deals played now, {resumed_deals} from the journal"
        if resumed_deals
        else ""
    )
    print(
        f"  decisions: p50 {figures['decision_p50_ms']} ms, p99 {figures['decision_p99_ms']} ms, "
        f"max {figures['decision_max_ms']} ms over {figures['decisions']} "
        f"(CPU p50 {figures['decision_cpu_p50_ms']} ms, p99 {figures['decision_cpu_p99_ms']} ms); "
        f"illegal actions {figures['illegal_actions']}, hands that did not end "
        f"{figures['stuck_hands']}; {figures['seconds']} s{resumed}"
    )
    examples = figures["first_illegal"]
    assert isinstance(examples, list)
    for example in examples:
        print(f"  illegal: {example}")
    if as_json:
        print(json.dumps(figures))
    return 1 if figures["illegal_actions"] or figures["stuck_hands"] else 0


def _command_line(argv: Sequence[str] | None = None) -> int:
    """``python -m okey101.bench.bots_bench``, with the arguments ``okey101 bench bots`` takes."""
    parser = argparse.ArgumentParser(prog="python -m okey101.bench.bots_bench")
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--candidate", choices=[level.value for level in BotLevel], default="hard")
    parser.add_argument(
        "--reference", choices=[level.value for level in BotLevel], default="normal"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rules", default="oyna", help="a preset: oyna, boombala, north_sultan")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: CPUs)")
    parser.add_argument(
        "--rule",
        type=rule_override,
        action="append",
        default=[],
        metavar="KNOB=VALUE",
        help="a rule knob changed from the preset (again for more)",
    )
    parser.add_argument("--journal", type=Path, default=None, help="resume from and append to")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    return main(
        args.deals,
        args.candidate,
        args.reference,
        args.seed,
        args.json,
        preset=args.rules,
        workers=args.workers,
        journal=args.journal,
        rule_overrides=dict(args.rule),
    )


def _rules_shown(preset: str, overrides: Mapping[str, Any]) -> str:
    """``boombala``, or ``boombala with may_take_okey_back=true`` when knobs are changed."""
    if not overrides:
        return preset
    changed = ", ".join(
        f"{knob}={value if isinstance(value, str) else json.dumps(value)}"
        for knob, value in sorted(overrides.items())
    )
    return f"{preset} with {changed}"


if __name__ == "__main__":
    raise SystemExit(_command_line())
