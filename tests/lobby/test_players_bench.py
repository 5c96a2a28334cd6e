"""``okey101 bench players``, as the command line runs it at a tiny size (SQLite, 20 streams, 50
events): the lobby runs alone as a process, every stream opens, every event reaches its stream
once, and the last line is the JSON docs/performance.md quotes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_bench_players_opens_the_streams_and_delivers_every_event_once() -> None:
    command = [sys.executable, "-m", "okey101.cli", "bench", "players", "--players", "20"]
    command += ["--events", "50", "--idle-seconds", "1", "--streams-per-channel", "8"]
    command += ["--sqlite", "--json"]
    result = subprocess.run(
        command,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "OKEY_LOG_LEVEL": "warning"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[-2].startswith("players (sqlite): 20/20 streams open on 3 channels")
    figures = json.loads(lines[-1])
    assert figures["database"] == "sqlite" and figures["players"] == 20
    assert figures["streams_open"] == 20 and figures["channels"] == 3
    assert figures["stream_failures"] == {} and figures["errors"] == 0
    assert figures["events"] == 50 and figures["record_calls"] == 1
    assert figures["events_delivered"] == 50
    assert figures["events_lost"] == 0 and figures["events_duplicated"] == 0
    assert figures["events_stray"] == 0 and figures["sequence_gaps"] == 0
    assert 0 < figures["delivery_p50_ms"] <= figures["delivery_p99_ms"]
    assert figures["delivery_p99_ms"] <= figures["delivery_max_ms"]
    assert figures["rss_mb_open"] > figures["rss_mb_before"] > 10
    assert figures["kb_per_stream"] > 0
    for name in ("idle_cpu_percent", "cpu_us_per_event", "client_cpu_us_per_event"):
        assert isinstance(figures[name], int | float), name
    # PostgreSQL's statistics only: none on SQLite.
    assert figures["db_transactions_per_event"] is None
    assert figures["open_files_limit"] > 0
