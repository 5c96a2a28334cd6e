"""``okey101 bench bots --journal PATH`` (``okey101.bench.bots_journal``): a run split over
sittings, resumed after a kill or cut short by ``--deals``, gives the figures a one-shot run of
the same deals gives; a journal of other deals is refused and left as it is.

Cheap levels (easy against random, hard against easy) and a dozen deals at most. Decision times
are wall and processor clocks, different in every run: the figures are compared without them
against a one-shot run, and with them against a run over the same journaled deals.
"""

from __future__ import annotations

import argparse
import fcntl
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import okey101.engine
from okey101.bench import bots_bench, bots_journal
from okey101.cli import main
from okey101.cli.command import rule_override
from okey101.engine.bots.expert import DEFAULT_BUDGET
from okey101.engine.bots.levels import BotLevel

SEED = 5
DEALS = 8


def _untimed(figures: dict[str, object]) -> dict[str, object]:
    """The figures without what a clock measured this run, and without ``resumed_deals``."""
    return {
        key: value
        for key, value in figures.items()
        if not key.endswith("_ms") and key not in ("seconds", "resumed_deals")
    }


def _timed(figures: dict[str, object]) -> dict[str, object]:
    return {key: value for key, value in figures.items() if key != "seconds"}


@functools.cache
def _one_shot(deals: int, candidate: BotLevel, reference: BotLevel) -> dict[str, object]:
    figures = bots_bench.run(deals, candidate, reference, SEED, workers=1)
    assert figures["resumed_deals"] == 0
    assert figures["illegal_actions"] == 0
    return _untimed(figures)


def _run(path: Path, deals: int = DEALS, workers: int = 1) -> dict[str, object]:
    return bots_bench.run(
        deals, BotLevel.EASY, BotLevel.RANDOM, SEED, workers=workers, journal=path
    )


def _numbers(path: Path) -> list[int]:
    """The deals in the journal, in the order of its lines, every one of which must be whole."""
    data = path.read_bytes()
    assert data.endswith(b"\n")
    header, *deals = (json.loads(line) for line in data.splitlines())
    assert header["journal"] == bots_journal.KIND
    numbers: list[int] = [deal["number"] for deal in deals]
    return numbers


def test_a_run_over_two_sittings_gives_the_one_shot_figures(tmp_path: Path) -> None:
    journal = tmp_path / "bench.jsonl"
    first = _run(journal, deals=3)
    assert first["resumed_deals"] == 0
    assert sorted(_numbers(journal)) == [0, 1, 2]
    second = _run(journal)
    assert second["resumed_deals"] == 3  # only the other five were played
    assert sorted(_numbers(journal)) == list(range(DEALS))
    assert _untimed(second) == _one_shot(DEALS, BotLevel.EASY, BotLevel.RANDOM)
    # Nothing left to play: the same figures, times too (the journal keeps each deal's
    # decision times, to the microsecond the figures are rounded to).
    third = _run(journal)
    assert third["resumed_deals"] == DEALS
    assert third["decisions"] == second["decisions"]
    assert _timed(third) == {**_timed(second), "resumed_deals": DEALS}
    assert len(_numbers(journal)) == DEALS


def test_fewer_deals_than_the_journal_holds_are_figures_over_those_only(tmp_path: Path) -> None:
    journal = tmp_path / "bench.jsonl"
    _run(journal)
    before = journal.read_bytes()
    fewer = _run(journal, deals=5)
    assert fewer["resumed_deals"] == 5
    assert fewer["deals"] == 5
    assert _untimed(fewer) == _one_shot(5, BotLevel.EASY, BotLevel.RANDOM)
    assert journal.read_bytes() == before


def test_a_line_cut_short_is_dropped_and_its_deal_played_again(tmp_path: Path) -> None:
    journal = tmp_path / "bench.jsonl"
    whole = _run(journal)
    data = journal.read_bytes()
    last_line = data[data.rindex(b"\n", 0, len(data) - 1) + 1 :]
    journal.write_bytes(data[: -len(last_line) // 2])  # killed halfway through the last write
    resumed = _run(journal)
    assert resumed["resumed_deals"] == DEALS - 1
    assert sorted(_numbers(journal)) == list(range(DEALS))  # every line whole again
    assert _untimed(resumed) == _untimed(whole) == _one_shot(DEALS, BotLevel.EASY, BotLevel.RANDOM)


def test_a_header_cut_short_begins_the_journal_again(tmp_path: Path) -> None:
    journal = tmp_path / "bench.jsonl"
    _run(journal, deals=1)
    header = journal.read_bytes().split(b"\n")[0]
    journal.write_bytes(header[:40])
    figures = _run(journal, deals=2)
    assert figures["resumed_deals"] == 0
    assert sorted(_numbers(journal)) == [0, 1]


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (["--rules", "boombala"], "preset"),
        (["--seed", str(SEED + 1)], "seed"),
        (["--reference", "easy"], "reference"),
        (["--expert-playouts", "12"], "budget.playouts"),
        (["--expert-seconds", "0"], "budget.seconds"),
        (["--rule", "may_take_okey_back=false"], "rules.may_take_okey_back"),
    ],
)
def test_a_journal_of_other_deals_is_refused_and_left_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], named: str
) -> None:
    journal = tmp_path / "bench.jsonl"
    _run(journal, deals=2)
    before = journal.read_bytes()
    capsys.readouterr()
    command = ["bench", "bots", "--deals", "3", "--candidate", "easy", "--reference", "random"]
    command += ["--seed", str(SEED), "--journal", str(journal), *arguments]
    assert main(command) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing played
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("okey101: error: ") and named in line
    assert journal.read_bytes() == before


def test_a_run_with_a_rule_changed_plays_it_and_its_journal_keeps_to_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--rule KNOB=VALUE``: the deals are played under the changed knob, the figures and the
    journal's header say so, and the journal resumes only a run with the same knobs."""
    overrides = {"never_opened_points": 303}
    # Random players do not read the score table, so the hands are the same and only a
    # never-opened seat's points tell the two apart: 202 under the preset, 303 so.
    for number in range(20):
        plain = bots_bench.play_deal(number, SEED, BotLevel.RANDOM, BotLevel.RANDOM, "oyna")
        if 202 in plain.control_points:
            break
    else:
        raise AssertionError("no seat of 20 random hands never opened")
    changed = bots_bench.play_deal(
        number, SEED, BotLevel.RANDOM, BotLevel.RANDOM, "oyna", rule_overrides=overrides
    )
    assert changed.control_points == [
        303 if points == 202 else points for points in plain.control_points
    ]
    journal = tmp_path / "bench.jsonl"
    figures = bots_bench.run(
        2,
        BotLevel.EASY,
        BotLevel.RANDOM,
        SEED,
        workers=1,
        journal=journal,
        rule_overrides=overrides,
    )
    assert figures["rule_overrides"] == overrides
    assert json.loads(journal.read_bytes().split(b"\n", 1)[0])["rules"] == overrides
    before = journal.read_bytes()
    # Without the knob, the journal's deals are another run's: refused, named, left as it is.
    command = ["bench", "bots", "--deals", "3", "--candidate", "easy", "--reference", "random"]
    command += ["--seed", str(SEED), "--journal", str(journal), "--workers", "1"]
    capsys.readouterr()
    assert main(command) == 2
    assert "rules.never_opened_points 303, not unset" in capsys.readouterr().err
    assert journal.read_bytes() == before
    # With it, the run resumes.
    assert main([*command, "--rule", "never_opened_points=303", "--json"]) == 0
    out = capsys.readouterr().out
    assert "(oyna with never_opened_points=303)" in out
    resumed = json.loads(out.strip().splitlines()[-1])
    assert resumed["resumed_deals"] == 2 and resumed["deals"] == 3


@pytest.mark.parametrize(
    ("rule", "sentence"),
    [
        ("nope=1", "There is no rule called 'nope'."),
        ("may_take_okey_back=7", "The rule 'may_take_okey_back' cannot be set to '7'."),
    ],
)
def test_a_rule_the_preset_has_not_is_refused_before_anything_is_played(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rule: str, sentence: str
) -> None:
    journal = tmp_path / "bench.jsonl"
    command = ["bench", "bots", "--deals", "2", "--candidate", "easy", "--reference", "random"]
    assert main([*command, "--rule", rule, "--journal", str(journal)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and not journal.exists()
    assert captured.err.strip() == f"okey101: error: {sentence}"


def test_a_journal_written_by_other_engine_code_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = tmp_path / "bench.jsonl"
    _run(journal, deals=2)
    header, rest = journal.read_bytes().split(b"\n", 1)
    fingerprint = bots_journal.engine_fingerprint()
    assert json.loads(header)["engine"] == fingerprint
    journal.write_bytes(header.replace(fingerprint.encode(), b"0" * 64) + b"\n" + rest)
    before = journal.read_bytes()
    code = bots_bench.main(
        3, "easy", "random", SEED, True, workers=1, budget=DEFAULT_BUDGET, journal=journal
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "engine" in err and "000000000000" in err
    assert journal.read_bytes() == before


@pytest.mark.parametrize(
    "content",
    [b"some notes\n", b"notes without a newline", b'{"a": 1}\n', None],
    ids=["text", "text-no-newline", "other-json", "bad-deal-line"],
)
def test_a_file_that_is_not_a_journal_is_refused_and_left_as_it_is(
    tmp_path: Path, content: bytes | None
) -> None:
    journal = tmp_path / "bench.jsonl"
    if content is None:  # a whole line in the middle that is no deal: not a write cut short
        _run(journal, deals=2)
        header, _, second = journal.read_bytes().splitlines(keepends=True)
        content = header + b'{"number": 7}\n' + second
    journal.write_bytes(content)
    with pytest.raises(bots_journal.JournalRefused):
        _run(journal)
    assert journal.read_bytes() == content


def test_the_fingerprint_is_the_engine_codes_wherever_it_lies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fingerprint = bots_journal.engine_fingerprint()
    real = Path(okey101.engine.__file__).parent
    copy = tmp_path / "engine"
    shutil.copytree(real, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(okey101.engine, "__file__", str(copy / "__init__.py"))
    assert bots_journal.engine_fingerprint() == fingerprint  # relative paths, not where
    (copy / "notes.txt").write_text("not code")
    assert bots_journal.engine_fingerprint() == fingerprint
    expert = copy / "bots" / "expert.py"
    code = expert.read_bytes()
    expert.write_bytes(code.replace(b"margin: float = 8.0", b"margin: float = 8.5"))
    assert bots_journal.engine_fingerprint() != fingerprint  # the code plays otherwise
    expert.write_bytes(code)
    expert.rename(copy / "bots" / "expert2.py")
    assert bots_journal.engine_fingerprint() != fingerprint


def test_the_fingerprint_ignores_comments_docstrings_and_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A journal holds hours of deals: editing what no deal depends on must not refuse it.
    fingerprint = bots_journal.engine_fingerprint()
    copy = tmp_path / "engine"
    shutil.copytree(
        Path(okey101.engine.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__")
    )
    monkeypatch.setattr(okey101.engine, "__file__", str(copy / "__init__.py"))
    expert = copy / "bots" / "expert.py"
    code = expert.read_text()
    docstring = '"""``EXPERT``: '
    assert code.startswith(docstring)
    edited = (
        code.replace(docstring, '"""An edited module docstring.\n\n``EXPERT``: ', 1)
        .replace('    """How much an expert decision may search."""', '    """Edited."""', 1)
        .replace("    playouts: int = 96\n", "    playouts: int = 96  # a new comment\n\n", 1)
    )
    assert edited.count("Edited") == 1 and "a new comment" in edited
    expert.write_text(edited + "\n# a comment at the end\n")
    assert bots_journal.engine_fingerprint() == fingerprint
    # A string that is not a docstring is code: changing it changes the fingerprint.
    expert.write_text(code.replace('"expert: finishes; "', '"expert: goes out; "', 1))
    assert bots_journal.engine_fingerprint() != fingerprint


def test_two_workers_journal_every_deal_once(tmp_path: Path) -> None:
    journal = tmp_path / "bench.jsonl"
    figures = _run(journal, workers=2)
    assert sorted(_numbers(journal)) == list(range(DEALS))
    assert _untimed(figures) == _one_shot(DEALS, BotLevel.EASY, BotLevel.RANDOM)


def test_a_killed_run_keeps_the_deals_it_finished(tmp_path: Path) -> None:
    """A run in its own process, killed once its first deal is in the journal: the deals are
    there while it runs, and the run resumed plays only the others."""
    # Far more deals than are played before the kill, so that the run is still going when its
    # first deal is written however slow the machine; resumed, the figures of the first few.
    journal = tmp_path / "bench.jsonl"
    command = [sys.executable, "-m", "okey101.cli", "bench", "bots", "--deals", "200"]
    command += ["--candidate", "hard", "--reference", "easy", "--seed", str(SEED)]
    command += ["--workers", "2", "--journal", str(journal)]
    errors = tmp_path / "stderr"
    with errors.open("wb") as stderr:
        process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 120
        while _whole_lines(journal) < 2:  # the header and a deal
            assert process.poll() is None, errors.read_text()
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert process.poll() is None  # still playing: the deal was written as it finished
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # its session: the run and its workers
        process.wait()
        _until_unlocked(journal)
    # The whole lines after the header (the kill may have cut the last one short).
    kept = [json.loads(line)["number"] for line in journal.read_bytes().split(b"\n")[1:-1]]
    assert 1 <= len(kept) < 200
    # Two workers may finish deal 1 before deal 0: resumed up to one past the last it kept.
    deals = max(kept) + 2
    figures = bots_bench.run(deals, BotLevel.HARD, BotLevel.EASY, SEED, workers=1, journal=journal)
    assert figures["resumed_deals"] == len(kept)
    assert sorted(_numbers(journal)) == list(range(deals))
    assert _untimed(figures) == _one_shot(deals, BotLevel.HARD, BotLevel.EASY)


def _until_unlocked(path: Path) -> None:
    """Until no process holds the journal's lock: the killed run's workers (forked, so sharing
    their parent's open journal) may be a moment behind it in exiting."""
    deadline = time.monotonic() + 30
    with path.open("rb") as file:
        while True:
            try:
                fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                assert time.monotonic() < deadline, "the killed run still holds its journal"
                time.sleep(0.01)
                continue
            fcntl.flock(file.fileno(), fcntl.LOCK_UN)
            return


def _whole_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_a_journal_being_written_is_refused_to_a_second_run(tmp_path: Path) -> None:
    """While one run holds the journal (from reading it to the end of its appends), another
    run given it is refused (exit status 2, one line) and cuts nothing back; once the first
    is done, the journal is free."""
    journal = tmp_path / "bench.jsonl"
    _run(journal, deals=2)
    head = bots_journal.header(BotLevel.EASY, BotLevel.RANDOM, "oyna", SEED, DEFAULT_BUDGET)
    with bots_journal.opened(journal, head, bots_bench.DealResult.from_dict) as (held, _add):
        assert len(held) == 2
        with journal.open("ab") as file:
            file.write(b'{"number": 2, "cut short')  # as a run mid-write leaves it
        before = journal.read_bytes()
        command = [sys.executable, "-m", "okey101.cli", "bench", "bots", "--deals", "3"]
        command += ["--candidate", "easy", "--reference", "random", "--seed", str(SEED)]
        command += ["--workers", "1", "--journal", str(journal)]
        second = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert second.returncode == 2, second.stderr
        assert "being written by another run" in second.stderr
        assert second.stdout == ""
        assert journal.read_bytes() == before
    # The first run has ended: its lock went with it.
    figures = _run(journal, deals=3)
    assert figures["resumed_deals"] == 2


def test_a_rule_overrides_value_is_read_as_json_or_as_the_enums_string() -> None:
    assert rule_override("may_take_okey_back=true") == ("may_take_okey_back", True)
    assert rule_override("never_opened_points=303") == ("never_opened_points", 303)
    assert rule_override("left_discard=use_this_turn") == ("left_discard", "use_this_turn")
    for text in ("may_take_okey_back", "=true"):
        with pytest.raises(argparse.ArgumentTypeError, match="not KNOB=VALUE"):
            rule_override(text)
