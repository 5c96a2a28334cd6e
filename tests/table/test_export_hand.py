"""A played hand written as a scenario file replays to the same end: engine hands played by
bots, and a hand played at the real table service exported with ``okey101 export-hand``."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from okey101.engine.bots.entry_points import decide
from okey101.engine.bots.levels import BotLevel
from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.export import hand_scenario
from okey101.engine.hand import apply
from okey101.engine.rules import RuleSet
from okey101.engine.scenario import check_expectations, parse_scenario, run_scenario
from okey101.engine.view import view

from support.service_stack import running_stack
from support.tables import all_bots, create_table, finished_table, one_hand_rules, wait_for


def bot_hand(rules: RuleSet, seed: int) -> tuple[Any, list[tuple[int, Any]], Any]:
    rng = random.Random(seed)
    deck = shuffled_deck(rng)
    dealer = seed % 4
    state = deal(rules, dealer, deck)
    moves = []
    while state.result is None and len(moves) < 2000:
        seat = state.turn
        decision = decide(view(state, seat), rules, BotLevel.EASY, rng.randrange(2**32))
        for action in decision.actions:
            moves.append((seat, action))
            state, _ = apply(state, seat, action)
    return deck, moves, state


@pytest.mark.parametrize("preset", ["oyna", "boombala", "north_sultan"])
@pytest.mark.parametrize("seed", range(4))
def test_an_exported_hand_replays_to_the_same_end(preset: str, seed: int) -> None:
    rules = RuleSet.preset(preset)
    deck, moves, final = bot_hand(rules, seed)
    scenario = hand_scenario(rules, seed % 4, deck, moves)
    # Through YAML text, as the file is read.
    parsed = parse_scenario(yaml.safe_load(yaml.safe_dump(scenario, sort_keys=False)))
    result = run_scenario(parsed)
    assert check_expectations(result, scenario["expect"]) == []
    assert all(outcome.ok for outcome in result.moves)
    assert result.state.result == final.result
    assert scenario["expect"]["hand"]["ended"] is True


def test_a_changed_move_no_longer_matches_its_expect() -> None:
    rules = RuleSet.preset("oyna")
    deck, moves, _final = bot_hand(rules, 7)
    scenario = hand_scenario(rules, 3, deck, moves)
    scenario["moves"] = scenario["moves"][:-1]  # the finishing discard dropped
    result = run_scenario(parse_scenario(scenario))
    assert check_expectations(result, scenario["expect"]) != []


def test_export_hand_writes_a_table_hand_that_scenario_check_accepts(tmp_path: Path) -> None:
    from okey101.cli import main

    async def play() -> tuple[str, str]:
        async with running_stack(tmp_path) as stack:
            table = await create_table(
                stack, one_hand_rules(), seats=all_bots(), start_when_full=True
            )
            await wait_for(lambda: finished_table(stack, table.table_id))
            out = tmp_path / "hand.yaml"
            target = stack.table.target
            status = await asyncio.to_thread(
                main,
                ["export-hand", f"{table.table_id}-h1", "--table", target,
                 "--var-dir", str(tmp_path), "--out", str(out)],
            )  # fmt: skip
            assert status == 0
            missing = await asyncio.to_thread(
                main, ["export-hand", "t-none-h1", "--table", target, "--var-dir", str(tmp_path)]
            )
            assert missing == 2  # NOT_FOUND, said in one line
            return str(out), target

    out, _target = asyncio.run(play())
    assert main(["scenario", "check", out]) == 0
    text = Path(out).read_text(encoding="utf-8")
    assert text.startswith("# Hand t-") and "server seed" in text
