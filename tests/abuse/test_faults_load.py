"""``okey101 bench load`` and the checks the fault tests share (``okey101.bench.load_stack``).

- the bench, as the command line runs it (SQLite, two tables, a few seconds): the five services
  are processes of their own, moves are made and timed, hands end and all reach scoring, and
  the last line is the JSON docs/performance.md quotes;
- ``Pacer`` holds a table to its pace;
- the audit is not a formality: a hand scoring does not have (deleted from its database after
  the fact) is reported lost, and so is a match scoring does not have as ended.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import grpc
import grpc.aio
import pytest

from okey101.bench.load_stack import (
    Pacer,
    audit,
    drive,
    host_table,
    login_guests,
    stack_environment,
)
from okey101.client.errors import rate_limit_wait
from okey101.platform.errors import ResourceExhausted, Unavailable, to_grpc_status
from okey101.stack import LocalStack, local_stack

from support.faults import SERVICES, client_for, play, rules

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_bench_load_plays_the_whole_stack_and_reports_its_figures() -> None:
    command = [sys.executable, "-m", "okey101.cli", "bench", "load", "--tables", "2"]
    command += ["--minutes", "0.3", "--sqlite", "--json"]
    result = subprocess.run(
        command,
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "OKEY_LOG_LEVEL": "warning"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["database"] == "sqlite" and figures["tables"] == 2
    assert figures["moves"] > 20 and figures["moves_per_second"] > 0
    assert 0 < figures["p50_ms"] <= figures["p99_ms"] <= figures["max_ms"]
    assert figures["errors"] == 0, figures["error_samples"]
    assert figures["hands_completed"] >= 1
    assert figures["lost_hands"] == 0 and figures["sequence_gaps"] == 0
    assert figures["tables_played"] >= 2
    assert set(figures["peak_rss_mb"]) == set(SERVICES)
    assert all(mb > 10 for mb in figures["peak_rss_mb"].values())
    assert figures["cpu_percent"]["table"] > 0
    assert 0 <= figures["slow_moves"] <= figures["moves"]
    assert sum(figures["slow_moves_worst_seconds"].values()) <= figures["slow_moves"]
    assert figures["cpu_steal_percent"] is None or 0 <= figures["cpu_steal_percent"] <= 100
    assert isinstance(figures["throttled"], dict)
    # Every move the tables applied, players' and bots', and each service's time per move.
    assert figures["moves_applied"] >= figures["moves"]
    assert set(figures["cpu_us_per_move"]) == set(SERVICES)
    assert figures["cpu_us_per_move"]["table"] > 0
    # The table's event loop was sampled and its collections counted over the run.
    holdups = figures["table_holdups"]
    assert holdups["collections"] > 0 and holdups["collection_seconds"] > 0
    assert 0 <= holdups["long_collections"] <= holdups["collections"]


@pytest.mark.slow
def test_bench_tournament_runs_a_tournament_to_its_winner() -> None:
    command = [sys.executable, "-m", "okey101.cli", "bench", "tournament", "--players", "8"]
    command += ["--sqlite", "--json"]
    result = subprocess.run(
        command,
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**os.environ, "OKEY_LOG_LEVEL": "warning"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["finished"] and figures["winner_player_id"]
    # Eight players: two tables of four, then the final table of their two winners and bots.
    assert figures["players"] == 8 and figures["rounds"] == 2 and figures["tables_played"] == 3
    assert figures["hands"] == 3 and figures["moves"] > 0
    assert figures["errors"] == 0, figures["error_samples"]
    assert figures["lost_hands"] == 0 and figures["unrecorded_matches"] == 0
    assert figures["unstanded_players"] == 0 and figures["sequence_gaps"] == 0
    assert figures["rankings_agree"]  # lobby and scoring serve one final ranking


def test_a_pacer_holds_a_table_to_its_pace() -> None:
    async def moves(pace: float, seconds: float) -> int:
        pacer = Pacer(pace)
        count = 0
        stop = time.monotonic() + seconds
        while True:
            await pacer.wait()
            if time.monotonic() >= stop:
                return count
            count += 1

    assert 3 <= asyncio.run(moves(10, 0.5)) <= 6
    assert asyncio.run(moves(0, 0.05)) > 100  # no pace: no waiting


@pytest.mark.slow
def test_the_audit_reports_a_hand_and_a_match_scoring_does_not_have(tmp_path: Path) -> None:
    async def scenario(stack: LocalStack) -> None:
        client = client_for(stack)
        guests = await login_guests(client, 4)
        seating = await host_table(client, guests, rules(1))
        assert await asyncio.wait_for(drive(client, seating, play()), 120)
        clean = await audit(client, [seating.table_id], drain_seconds=60)
        assert clean.clean and clean.hands == 1 and clean.matches == 1
        (hand_id,) = clean.logs[seating.table_id].ended_hands
        with sqlite3.connect(tmp_path / "scoring.db") as db:
            db.execute("PRAGMA foreign_keys=OFF")
            for table in ("scoring_hand_seats", "scoring_hands"):
                db.execute(f"DELETE FROM {table} WHERE hand_id = ?", (hand_id,))
            db.execute("UPDATE scoring_matches SET ended = 0")
        lost = await audit(client, [seating.table_id], drain_seconds=1)
        await client.close()
        assert lost.lost == {hand_id: 0}
        assert lost.unrecorded_matches == [clean.logs[seating.table_id].table.match_id]
        assert not lost.clean

    with local_stack(tmp_path, services=SERVICES, env=stack_environment()) as stack:
        asyncio.run(scenario(stack))


def test_a_rate_limit_refusal_is_waited_out_for_as_long_as_it_asks() -> None:
    """The bench's players wait out RATE_LIMITED for its ``retry_after_ms`` (and count it as
    throttled, not as an error); any other refusal is not a wait, a request too large least
    of all."""

    async def refusals() -> list[float | None]:
        errors = [
            ResourceExhausted("RATE_LIMITED", retry_after_ms=250, action="host"),
            Unavailable("SERVER_SHUTTING_DOWN"),
            ResourceExhausted("MESSAGE_TOO_LARGE", size=2_000_000, limit=1_048_576),
        ]

        async def refuse(_request: bytes, context: grpc.aio.ServicerContext) -> bytes:
            await context.abort_with_status(to_grpc_status(errors.pop(0)))
            return b""

        handler = grpc.method_handlers_generic_handler(
            "test.Refuser", {"Refuse": grpc.unary_unary_rpc_method_handler(refuse)}
        )
        server = grpc.aio.server()
        server.add_generic_rpc_handlers((handler,))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        waits: list[float | None] = []
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                call = channel.unary_unary("/test.Refuser/Refuse")
                for _ in range(3):
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await call(b"")
                    waits.append(rate_limit_wait(refused.value))
        finally:
            await server.stop(None)
        return waits

    assert asyncio.run(refusals()) == [0.25, None, None]


def test_bench_core_plays_tables_through_the_table_core_and_reports_their_cost() -> None:
    from okey101.bench import core_bench

    figures = core_bench.run(2, 2.0, sqlite=True, database_url=None)
    assert figures["database"] == "sqlite" and figures["tables"] == 2
    assert figures["moves_applied"] > 20 and figures["moves_per_second"] > 0
    assert figures["table_cpu_us_per_move"] > 0 and figures["deciding_cpu_us_per_move"] > 0
    collections = figures["gc"]
    assert collections["collections"] >= collections["full_collections"] >= 0
    assert collections["collections"] > 0 and collections["longest_ms"] > 0
