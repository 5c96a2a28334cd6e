"""``okey101 bench core``: the table's move path alone, in this process, without gRPC.

T tables of four seats are created in a temporary database (PostgreSQL on
``OKEY_TEST_DATABASE_URL``'s server, or a SQLite file with ``--sqlite``) and played for S seconds
through the table core itself (``TableCore.move``: the same plan, seal, one journal write and
publish an ``Act`` makes), each seat's move chosen by the engine's random bot from its view.
Hands are dealt again as they end. What a move costs the table, with no transport around it, is
the process's processor time less the time spent choosing moves, divided by the moves applied:
``table_cpu_us_per_move``. The last line is JSON: ``tables``,
``seconds``, ``database``, ``moves_applied``, ``moves_per_second``, ``table_cpu_us_per_move``,
``deciding_cpu_us_per_move``, ``hands_dealt``, and ``gc``: the garbage collector's work over the
run (collections, full ones, seconds in all, the longest pause), with the collector set as a
service sets it (``platform.collector``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from okey101.bench import load_stack
from okey101.engine.bots.entry_points import fallback_decision
from okey101.engine.hand import Phase
from okey101.engine.rules import RuleSet
from okey101.engine.view import view as engine_view
from okey101.platform import collector, convert
from okey101.platform.database import Database, sqlite_url
from okey101.platform.idempotency import CallKey
from okey101.table.answers import AnswerKey
from okey101.table.core import TableCore
from okey101.table.options import TableOptions
from okey101.table.records import SeatRecord, TableRecord

#: What each move's answer is stored under besides its request id (Act computes a request's
#: fingerprint before it reaches the core; the benchmark has no request to take it from).
_FINGERPRINT = bytes(32)


def _table(table_id: str, rules: RuleSet) -> TableRecord:
    """A new table of four players, not started."""
    return TableRecord.new(
        table_id=table_id,
        match_id=f"m-{table_id}",
        preset=rules.name,
        rules=convert.rules_to_proto(rules).SerializeToString(),
        rules_version="okey101-rules/1",
        seats=[
            SeatRecord(kind="player", player_id=f"p{i}", display_name=f"p{i}") for i in range(4)
        ],
        created_us=1,
    )


async def _play(url: str, tables: int, seconds: float) -> dict[str, Any]:
    database = Database(url)
    await database.migrate("table")
    options = TableOptions(bot_move_seconds=0, next_hand_seconds=0, default_turn_seconds=0)
    core = TableCore.open(database, options=options)
    rules = RuleSet.preset("oyna").with_overrides({"match_end": "fixed_hands", "match_hands": 999})
    table_ids = []
    try:
        for _ in range(tables):
            table_id = f"t-{uuid.uuid4().hex}"
            created = CallKey("CreateTable", "bench", table_id[:60])
            await core.create(_table(table_id, rules), AnswerKey(created, _FINGERPRINT), b"")
            await core.start(table_id)
            table_ids.append(table_id)
        applied = 0
        dealt = 0
        deciding = 0.0
        ends = time.monotonic() + seconds

        async def play(table_id: str) -> None:
            nonlocal applied, dealt, deciding
            while time.monotonic() < ends:
                live = await core.tables.get(table_id)
                state = live.state
                if state is None or state.phase is Phase.ENDED:
                    await core.deal_next(table_id)
                    dealt += 1
                    continue
                seat = state.turn
                began = time.process_time()
                decision = fallback_decision(engine_view(state, seat), state.rules, applied)
                actions = [convert.action_to_proto(action) for action in decision.actions]
                deciding += time.process_time() - began
                key = AnswerKey(CallKey("Act", f"p{seat}", uuid.uuid4().hex), _FINGERPRINT)
                await core.move(
                    table_id, seat, actions, source=1, answer_key=key, back_from_away=True
                )
                applied += len(actions)

        collector.settle()  # as a service does once it is serving
        collections = Collections()
        gc.callbacks.append(collections.callback)
        cpu_began, wall_began = time.process_time(), time.perf_counter()
        try:
            await asyncio.gather(*(play(table_id) for table_id in table_ids))
        finally:
            gc.callbacks.remove(collections.callback)
        cpu = time.process_time() - cpu_began
        wall = time.perf_counter() - wall_began
    finally:
        await core.close()
        await database.dispose()
    return {
        "tables": tables,
        "seconds": round(wall, 1),
        "moves_applied": applied,
        "moves_per_second": round(applied / wall, 1),
        "table_cpu_us_per_move": round((cpu - deciding) * 1e6 / max(applied, 1)),
        "deciding_cpu_us_per_move": round(deciding * 1e6 / max(applied, 1)),
        "hands_dealt": dealt,
        "gc": collections.figures(),
    }


class Collections:
    """The garbage collector's work over the run: how many collections, how many full, the
    seconds in all and the longest pause (a full one walks every live table)."""

    def __init__(self) -> None:
        self.count = self.full = 0
        self.seconds = self.longest = self._began = 0.0

    def callback(self, phase: str, info: dict[str, int]) -> None:
        now = time.perf_counter()
        if phase == "start":
            self._began = now
            return
        pause = now - self._began
        self.count += 1
        self.full += info.get("generation") == 2
        self.seconds += pause
        self.longest = max(self.longest, pause)

    def figures(self) -> dict[str, float]:
        return {
            "collections": self.count,
            "full_collections": self.full,
            "seconds": round(self.seconds, 3),
            "longest_ms": round(self.longest * 1000, 1),
        }


def run(tables: int, seconds: float, *, sqlite: bool, database_url: str | None) -> dict[str, Any]:
    with contextlib.ExitStack() as cleanup:
        if sqlite:
            folder = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="okey-core-")))
            url = sqlite_url(folder / "table.db")
        else:
            base = (
                database_url
                or os.environ.get(load_stack.DATABASE_ENV)
                or load_stack.DEFAULT_DATABASE_URL
            )
            made = cleanup.enter_context(
                load_stack.temporary_databases(base, "okey_core", ("table",))
            )
            url = made["table"]
        figures = asyncio.run(_play(url, tables, seconds))
    figures["database"] = "sqlite" if sqlite else "postgresql"
    return figures


def main(tables: int, seconds: float, sqlite: bool, database_url: str | None, as_json: bool) -> int:
    figures = run(tables, seconds, sqlite=sqlite, database_url=database_url)
    print(
        f"core: {figures['tables']} tables ({figures['database']}), "
        f"{figures['moves_per_second']} moves/s, {figures['table_cpu_us_per_move']} us of the "
        f"table's processor time a move (choosing it: {figures['deciding_cpu_us_per_move']} us)"
    )
    if as_json:
        print(json.dumps(figures, sort_keys=True))
    return 0


__all__ = ["main", "run"]
