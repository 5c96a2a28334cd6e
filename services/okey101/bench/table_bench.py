"""``okey101 bench table``: bots playing many tables at once through the real services.

The rules, bot, scoring and table services run as processes of their own on free ports, as
``okey101 serve`` starts them, over a temporary SQLite database (or ``--database-url``). For
each of ``tables`` tables the bench seats four players and plays every seat as a bot would from
outside: it reads the seat's view (TableService.GetSeatView), asks the bot service for the step
(BotService.NextStep, level easy) and plays it (TableService.Act, with the view's
state_version). A table whose match ends is replaced by a new one. Moves are timed from the Act
call to its answer: what a player's app waits for.

The last line is JSON: ``moves_per_second`` (Act calls answered per second, all tables),
``p50_ms``/``p99_ms``/``max_ms`` of Act, ``errors`` (calls that failed other than a stale
version), ``hands_completed``, ``memory_per_table_kb`` (the table process's resident memory
grown per table, from ``/proc``; null where there is none), ``tables``, ``seconds``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

from okey101.bench.rules_bench import process
from okey101.bench.solver_bench import percentile
from okey101.stack import free_port, wait_serving

ACTIVE_PHASES = (1, 2, 3)  # PHASE_FIRST, PHASE_DRAW, PHASE_PLAY


def _rss_kb(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class _Figures:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors = 0
        self.hands = 0


async def _play_table(
    table: Any, bot: Any, service: Any, figures: _Figures, stop: asyncio.Event, rules: Any
) -> None:
    """Seat four players at a new table and play it as bots until ``stop``; again on end."""
    from okey.v1 import bot_pb2, common_pb2, table_pb2

    while not stop.is_set():
        created = await table.CreateTable(
            table_pb2.CreateTableRequest(request_id=uuid.uuid4().hex, rules=rules),
            metadata=service,
        )
        table_id = created.table.table_id
        for seat in range(4):
            await table.Sit(
                table_pb2.SitRequest(
                    request_id=uuid.uuid4().hex, table_id=table_id, seat=seat,
                    player_id=f"bench-{uuid.uuid4().hex[:8]}",
                ),
                metadata=service,
            )  # fmt: skip
        await table.Start(
            table_pb2.StartRequest(request_id=uuid.uuid4().hex, table_id=table_id),
            metadata=service,
        )
        seat, hand = 0, 1
        while not stop.is_set():
            view = (
                await table.GetSeatView(
                    table_pb2.GetSeatViewRequest(table_id=table_id, seat=seat), metadata=service
                )
            ).view
            if view.hand_number != hand:
                figures.hands += view.hand_number - hand
                hand = view.hand_number
            if view.phase not in ACTIVE_PHASES:
                if view.result.reason:  # the match ended with this hand
                    status = await table.GetTable(
                        table_pb2.GetTableRequest(table_id=table_id), metadata=service
                    )
                    if status.table.state == common_pb2.TABLE_STATE_FINISHED:
                        figures.hands += 1
                        break
                await asyncio.sleep(0.01)
                continue
            if view.turn != seat:
                seat = view.turn
                continue
            step = await bot.NextStep(
                bot_pb2.NextStepRequest(
                    view=view, phase=view.phase, level=common_pb2.BOT_LEVEL_EASY,
                    seed=view.state_version,
                ),
                metadata=service,
            )  # fmt: skip
            began = time.perf_counter()
            try:
                await table.Act(
                    table_pb2.ActRequest(
                        request_id=uuid.uuid4().hex, table_id=table_id, seat=seat,
                        actions=step.actions, expected_state_version=view.state_version,
                    ),
                    metadata=service,
                )  # fmt: skip
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.ABORTED:
                    figures.errors += 1
                continue
            figures.latencies.append((time.perf_counter() - began) * 1000)


async def _run(tables: int, seconds: float, database_url: str | None) -> dict[str, Any]:
    from okey.v1 import bot_pb2_grpc, common_pb2, table_pb2_grpc

    from okey101.platform.auth import TokenIssuer, dev_signing_key

    load_before = round(os.getloadavg()[0], 2)
    with tempfile.TemporaryDirectory(prefix="okey101-bench-table-") as var:
        var_dir = Path(var)
        key = dev_signing_key(var_dir)
        token = TokenIssuer(key).issue("bench", "service", ttl_seconds=7200)
        service = (("authorization", f"Bearer {token}"),)
        ports = {name: free_port() for name in ("rules", "bot", "scoring", "table")}
        env = {
            **os.environ,
            "OKEY_LOG_LEVEL": "warning",
            "OKEY_VAR_DIR": var,
            "OKEY_TABLE_BOT_MOVE_SECONDS": "0",
            "OKEY_TABLE_NEXT_HAND_SECONDS": "0",
            **{f"OKEY_{name.upper()}_ADDRESS": f"127.0.0.1:{port}" for name, port in ports.items()},
        }
        if database_url:
            env["OKEY_TABLE_DATABASE_URL"] = database_url

        def args(name: str) -> list[str]:
            return [
                sys.executable, "-m", "okey101.cli", "serve", name,
                "--port", str(ports[name]), "--metrics-port", "0",
            ]  # fmt: skip

        with (
            process(args("rules"), env),
            process(args("bot"), env),
            process(args("scoring"), env),
            process(args("table"), env) as table_process,
        ):
            for port in ports.values():
                await wait_serving(f"127.0.0.1:{port}")
            rules = common_pb2.RuleSet(preset=common_pb2.RULE_PRESET_OYNA)
            async with (
                grpc.aio.insecure_channel(f"127.0.0.1:{ports['table']}") as table_channel,
                grpc.aio.insecure_channel(f"127.0.0.1:{ports['bot']}") as bot_channel,
            ):
                table = table_pb2_grpc.TableServiceStub(table_channel)
                bot = bot_pb2_grpc.BotServiceStub(bot_channel)
                before = _rss_kb(table_process.pid)
                figures = _Figures()
                stop = asyncio.Event()
                players = [
                    asyncio.create_task(_play_table(table, bot, service, figures, stop, rules))
                    for _ in range(tables)
                ]
                # Memory once every table is dealt and playing.
                await asyncio.sleep(min(2.0, seconds / 4))
                during = _rss_kb(table_process.pid)
                began = time.perf_counter()
                figures.latencies.clear()
                await asyncio.sleep(seconds)
                elapsed = time.perf_counter() - began
                answered = len(figures.latencies)
                latencies = list(figures.latencies)
                stop.set()
                await asyncio.gather(*players, return_exceptions=True)
    memory = None
    if before is not None and during is not None:
        memory = round(max(0, during - before) / tables, 1)
    return {
        "moves_per_second": round(answered / elapsed, 1),
        "p50_ms": round(percentile(latencies, 50), 3),
        "p99_ms": round(percentile(latencies, 99), 3),
        "max_ms": round(max(latencies, default=0.0), 3),
        "errors": figures.errors,
        "hands_completed": figures.hands,
        "memory_per_table_kb": memory,
        "tables": tables,
        "seconds": seconds,
        "database": "postgresql" if database_url else "sqlite",
        "load_before": load_before,
        "load_after": round(os.getloadavg()[0], 2),
    }


def main(tables: int, seconds: float, database_url: str | None, as_json: bool) -> int:
    figures = asyncio.run(_run(tables, seconds, database_url))
    print(
        f"table: {figures['moves_per_second']} moves/s over {tables} tables, Act p50 "
        f"{figures['p50_ms']} ms, p99 {figures['p99_ms']} ms, {figures['errors']} errors, "
        f"{figures['hands_completed']} hands, {figures['memory_per_table_kb']} kB a table"
    )
    if as_json:
        print(json.dumps(figures, sort_keys=True))
    return 0 if figures["errors"] == 0 else 1
