"""The ``okey101`` command line: best-opening and bench solver, in-process and as a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from okey101.cli import main

ROOT = Path(__file__).resolve().parents[2]
HAND_115 = "R10 R11 R12 R13 K13 B13 Y13 K9 K10 K11 R2 B5"
OPENING_115 = ["--indicator", "Y5", *HAND_115.split(" ")]


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("okey101: error: ")
    return lines[0]


def test_best_opening_prints_the_arrangement(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["best-opening", "--rules", "boombala", *OPENING_115]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    out = json.loads(captured.out)
    assert out["value"] == 115
    assert isinstance(out["melds"], list)
    for meld in out["melds"]:
        assert isinstance(meld, list) and all(isinstance(tile, str) for tile in meld)
    assert sorted(sorted(meld) for meld in out["melds"]) == sorted(
        [
            sorted(["R10", "R11", "R12"]),
            sorted(["K9", "K10", "K11"]),
            sorted(["R13", "Y13", "B13", "K13"]),
        ]
    )
    assert out["okeys"] == []
    assert sorted(out["leftover"]) == ["B5", "R2"]


def test_best_opening_lists_the_okeys(capsys: pytest.CaptureFixture[str]) -> None:
    # Indicator Y5: the okey is Y6. R7 R8 Y6 R10 -> R7-R8-Y6(R9)-R10, B2 kept to discard.
    assert main(["best-opening", "--indicator", "Y5", "R7", "R8", "Y6", "R10", "B2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["value"] == 7 + 8 + 9 + 10
    assert out["okeys"] == [{"tile": "Y6", "stands_for": "R9"}]
    assert out["leftover"] == ["B2"]


def test_best_opening_options(capsys: pytest.CaptureFixture[str]) -> None:
    tiles = ["--indicator", "Y5", "R3", "R4", "R5", "B5", "K5"]
    assert main(["best-opening", *tiles]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == 15  # R5-B5-K5, one tile kept
    run = ["--indicator", "Y5", "R3", "R4", "R5"]
    assert main(["best-opening", *run]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == 0  # an opening keeps a tile
    assert main(["best-opening", "--no-keep-one", *run]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == 12
    assert main(["best-opening", "--required", "R3", *tiles]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["value"] == 12
    assert out["melds"] == [["R3", "R4", "R5"]]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["best-opening", "--indicator", "Y5", "R7", "X9"], "'X9' is not a tile"),
        (["best-opening", "--indicator", "Y14", "R7"], "'Y14' is not a tile"),
        # The indicator takes one Y5: a third Y5 is one too many.
        (["best-opening", "--indicator", "Y5", "Y5", "Y5", "R1"], "only two Y5 tiles"),
        (["best-opening", "--indicator", "Y5", "R1", "R1", "R1"], "only two R1 tiles"),
        (["best-opening", "--rules", "nope", "--indicator", "Y5", "R1"], "'nope'"),
        (["best-opening", "--indicator", "FJ", "R1"], "never a false joker"),
        (["best-opening", "--indicator", "Y5", "--required", "K9", "R1"], "K9 is not in the hand"),
        (["bench", "solver", "--hands", "5", "--rules", "oyna,nope"], "'nope'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert words in _one_error_line(captured.err)


def test_errors_in_turkish(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--lang", "tr", "best-opening", "--indicator", "Y5", "R7", "X9"]) == 2
    assert "bir taş değil" in _one_error_line(capsys.readouterr().err)


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["bench"]) == 2
    assert main(["bench", "solver", "--hands", "0"]) == 2
    assert main(["best-opening", "R1"]) == 2  # no --indicator
    assert "Traceback" not in capsys.readouterr().err


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "best-opening" in capsys.readouterr().out
    assert main(["bench", "--help"]) == 0
    assert "solver" in capsys.readouterr().out


def test_bench_solver_json_last_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "solver", "--hands", "20", "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) > 1  # human lines first
    summary = json.loads(lines[-1])
    for key in (
        "mean_ms",
        "p50_ms",
        "p99_ms",
        "reference_mean_ms",
        "reference_p99_ms",
        "speedup_vs_reference",
        "disagreements",
        "hands",
    ):
        assert key in summary, key
    assert summary["hands"] == 20
    assert summary["disagreements"] == 0
    assert 0 < summary["p50_ms"] <= summary["p99_ms"]
    assert summary["mean_ms"] > 0 and summary["reference_mean_ms"] > 0
    assert summary["speedup_vs_reference"] > 0


def test_bench_solver_without_json_prints_only_human_lines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench", "solver", "--hands", "3", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    assert "disagreements: 0" in out
    assert not out.strip().splitlines()[-1].startswith("{")


def test_as_a_process() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    ok = subprocess.run(
        [sys.executable, "-m", "okey101.cli", "best-opening", "--rules", "boombala", *OPENING_115],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["value"] == 115
    bad = subprocess.run(
        [sys.executable, "-m", "okey101.cli", "best-opening", "--indicator", "Y5", "R7", "Q3"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert "'Q3' is not a tile" in _one_error_line(bad.stderr)
