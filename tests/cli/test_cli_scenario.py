"""``okey101 scenario run`` and ``scenario check`` (docs/scenarios.md), and ``bench engine``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from okey101.cli import main

ROOT = Path(__file__).resolve().parents[2]
WORKED = ROOT / "tests" / "scenarios" / "oyna" / "worked_example_east_north_west.yaml"

REJECTED_OPENING = """\
rules: oyna
indicator: Y5
turn: 0
phase: play
racks:
  0: [R10, R11, R12, K1, K2, K3, B4, B5, B6, Y9, Y10, Y11, R1]
  1: [R3]
  2: [B2]
  3: [K12]
stock_count: 10
moves:
  - {seat: 0, open: [[R10, R11, R12], [K1, K2, K3], [B4, B5, B6]]}
  - {seat: 1, discard: R3}
  - {seat: 0, discard: R1}
expect:
  moves: [{rejected: OPENING_BELOW_101}, {rejected: NOT_YOUR_TURN}, ok]
  hand: {ended: false}
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_run_json_prints_one_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "opening.yaml", REJECTED_OPENING)
    assert main(["scenario", "run", str(path), "--json"]) == 0
    out = capsys.readouterr().out
    result = json.loads(out)  # one JSON object and nothing else on standard output
    assert set(result) == {"moves", "penalties", "hand", "scores"}
    first, second, third = result["moves"]
    assert first == {
        "seat": 0,
        "move": "open",
        "ok": False,
        "code": "OPENING_BELOW_101",
        "message": "These melds are worth 54; opening needs 101.",
    }
    assert second["code"] == "NOT_YOUR_TURN" and second["ok"] is False
    assert third == {"seat": 0, "move": "discard", "ok": True}
    assert result["hand"] == {"ended": False}
    assert result["scores"] == {}
    assert set(result["penalties"]) == {"0", "1", "2", "3"}


def test_run_worked_example_scores(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", "run", str(WORKED), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["hand"]["ended"] is True and result["hand"]["reason"] == "finished"
    assert [result["scores"][seat] for seat in "0123"] == [-101, 16, 14, 202]


def test_run_without_json_is_readable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "opening.yaml", REJECTED_OPENING)
    assert main(["scenario", "run", str(path)]) == 0
    out = capsys.readouterr().out
    assert "seat 0 open: rejected OPENING_BELOW_101: These melds are worth 54" in out
    assert "seat 0 discard: ok" in out


def test_check_passes_and_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _write(tmp_path, "good.yaml", REJECTED_OPENING)
    bad = _write(tmp_path, "bad.yaml", REJECTED_OPENING.replace("{rejected: NOT_YOUR_TURN}", "ok"))
    assert main(["scenario", "check", str(good)]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "1 passed, 0 failed"
    assert main(["scenario", "check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL {bad}" in out and f"PASS {good}" in out
    assert "moves[1] (discard by seat 1): expected ok, rejected NOT_YOUR_TURN" in out
    assert out.strip().splitlines()[-1] == "1 passed, 1 failed"


def test_check_the_whole_suite() -> None:
    """The shipped suite passes through the command as well as through the test harness."""
    completed = subprocess.run(
        [sys.executable, "-m", "okey101.cli", "scenario", "check", "tests/scenarios"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-2000:]
    last = completed.stdout.strip().splitlines()[-1]
    passed, failed = last.split(", ")
    assert failed == "0 failed" and int(passed.split()[0]) > 150


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (REJECTED_OPENING.replace("R10, R11, R12, K1", "R10, R11, R99, K1"), "'R99' is not a tile"),
        (REJECTED_OPENING.replace("3: [K12]", "3: [R10, R10]"), "only two R10 tiles"),
        (REJECTED_OPENING.replace("rules: oyna", "rules: klasik"), "no rule set called 'klasik'"),
        (REJECTED_OPENING.replace("turn: 0\n", ""), "missing key: turn"),
        ("rules: [oyna\n", "broken YAML"),
        (REJECTED_OPENING.replace("{seat: 1, discard: R3}", "{seat: 1, fold: true}"), "fold"),
        (REJECTED_OPENING.replace("rules: oyna", "rules: oyna\npartners: 2"), "partners"),
    ],
)
def test_malformed_files_get_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    path = _write(tmp_path, "broken.yaml", text)
    assert main(["scenario", "run", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err
    assert lines[0].startswith(f"okey101: error: {path}: ")
    assert message in lines[0]
    assert main(["scenario", "check", str(path)]) == 2


PARTNERS = ROOT / "tests" / "scenarios" / "boombala" / "50_partners_worked_example.yaml"


def test_run_json_adds_team_totals_in_partners(capsys: pytest.CaptureFixture[str]) -> None:
    """Boombala's "101 in partners": opposite seats (0+2, 1+3) add up, as JSON keys "0", "1"."""
    assert main(["scenario", "run", str(PARTNERS), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["scores"] == {"0": -101, "1": 24, "2": 10, "3": 202}
    assert result["teams"] == {"0": -91, "1": 226}
    assert main(["scenario", "run", str(PARTNERS)]) == 0
    assert 'teams: {"0": -91, "1": 226}' in capsys.readouterr().out.splitlines()


def test_teams_without_partners_or_wrong_fail_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = PARTNERS.read_text(encoding="utf-8")
    wrong = _write(tmp_path, "wrong.yaml", text.replace("teams: {0: -91", "teams: {0: -92"))
    assert main(["scenario", "check", str(wrong)]) == 1
    assert "teams.0: expected -92, got -91" in capsys.readouterr().out
    solo = _write(tmp_path, "solo.yaml", text.replace("partners: true\n", ""))
    assert main(["scenario", "check", str(solo)]) == 1
    assert "not played in partners" in capsys.readouterr().out
    # The knob itself does the same as the key.
    knob = text.replace("partners: true\n", "rule_overrides: {partners: true}\n")
    assert main(["scenario", "check", str(_write(tmp_path, "knob.yaml", knob))]) == 0
    capsys.readouterr()
    # Without partners, --json has no teams.
    assert main(["scenario", "run", str(solo), "--json"]) == 0
    assert "teams" not in json.loads(capsys.readouterr().out)


def test_missing_file_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", "run", "no/such/file.yaml"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no/such/file.yaml" in err[0]


def test_bench_engine_last_line_is_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "engine", "--hands", "3", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures["hands"] == 9
    assert figures["invariant_violations"] == 0
    assert figures["hands_per_second"] > 0 and figures["actions_per_second"] > 0
    assert 0.0 <= figures["finished_share"] <= 1.0
