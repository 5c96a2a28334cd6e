"""Every rule scenario under ``tests/scenarios/`` plays as its ``expect`` says.

The files follow the scenario format of ``docs/scenarios.md`` and live in one folder per preset
(``oyna``, ``boombala``, ``north_sultan``). Each file is a test of its own: it is read with
``yaml.safe_load``, parsed, played, and every difference from its ``expect`` is a failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from okey101.engine.match import new_match, record_hand
from okey101.engine.result import EndReason
from okey101.engine.scenario import (
    ScenarioError,
    ScenarioResult,
    check_expectations,
    parse_scenario,
    run_scenario,
)

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
PRESETS = ("oyna", "boombala", "north_sultan")
FILES = sorted(SCENARIOS.rglob("*.yaml"))


def _load(path: Path) -> Mapping[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, Mapping), f"{path.name}: a scenario is a mapping"
    return data


def _play(path: Path) -> ScenarioResult:
    return run_scenario(parse_scenario(_load(path)))


@pytest.mark.parametrize("path", FILES, ids=lambda path: str(path.relative_to(SCENARIOS)))
def test_scenario(path: Path) -> None:
    data = _load(path)
    expect = data.get("expect")
    assert isinstance(expect, Mapping) and "moves" in expect, (
        f"{path.name}: every scenario needs an `expect` with at least `moves`"
    )
    folder = path.relative_to(SCENARIOS).parts[0]
    if folder in PRESETS:
        assert data["rules"] == folder, f"{path.name} is under {folder}/ but plays {data['rules']}"
    assert path.read_text(encoding="utf-8").startswith("#"), (
        f"{path.name}: start with a comment quoting the rule it checks"
    )
    scenario = parse_scenario(data)
    result = run_scenario(scenario)
    problems = check_expectations(result, scenario.expect)
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)


def test_oyna_has_scenarios() -> None:
    assert sorted((SCENARIOS / "oyna").glob("*.yaml")), "tests/scenarios/oyna/ holds no scenarios"


def test_every_preset_folder_holds_scenarios() -> None:
    folders = [SCENARIOS / preset for preset in PRESETS if (SCENARIOS / preset).is_dir()]
    for folder in folders:
        assert sorted(folder.rglob("*.yaml")), f"tests/scenarios/{folder.name}/ is empty"


def test_runner_refuses_a_third_copy_the_indicator_counted() -> None:
    data = {
        "rules": "oyna",
        "indicator": "Y5",
        "turn": 0,
        "phase": "play",
        "racks": {0: ["Y5", "Y5", "K2"]},
        "expect": {"moves": []},
    }
    with pytest.raises(ScenarioError, match="only two Y5"):
        parse_scenario(data)


def test_void_hand_is_dealt_again_by_the_same_dealer() -> None:
    # "If all four players open with pairs, the hand is void ... The same player deals again."
    result = _play(SCENARIOS / "oyna" / "void_all_four_pairs.yaml")
    assert result.state.result is not None
    assert result.state.result.reason is EndReason.VOID
    match = new_match(result.state.rules, dealer=result.state.dealer)
    after = record_hand(match, result.state.result)
    assert after.dealer == match.dealer
    assert after.totals == (0, 0, 0, 0)


def test_stock_out_hand_counts_and_the_deal_passes_on() -> None:
    # "The hand counts as played, and the next player deals the next hand."
    result = _play(SCENARIOS / "oyna" / "stock_out_ends_on_last_discard.yaml")
    assert result.state.result is not None
    assert result.state.result.reason is EndReason.STOCK_OUT
    match = new_match(result.state.rules, dealer=result.state.dealer)
    after = record_hand(match, result.state.result)
    assert after.dealer == (match.dealer + 1) % 4
    assert after.hands_played == 1
