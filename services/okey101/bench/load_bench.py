"""``okey101 bench load``: the whole stack, five processes, played by many tables at once.

The lobby, table, scoring, rules and bot services run as ``okey101 serve`` processes of their
own on free ports (``okey101.stack``), local mode, with one temporary PostgreSQL
database per stateful service on ``OKEY_TEST_DATABASE_URL``'s server (default
``postgresql://postgres@127.0.0.1:5432/test``; dropped afterwards), or SQLite files with
``--sqlite``. The table's bots move at once and the next hand is dealt at once.

Everything the players do goes through the public API (``load_stack``), as native apps do
it: ``4 * tables`` guests log in through the lobby (LoginGuest) and each keeps their own
WatchPlayer stream open; half the tables are quick matches (JoinQuickMatch, seated by the
stream's QUICK_MATCH_SEATED: no GetQuickMatchStatus; the oyna preset, a match to 1,000
points), half are hosted (HostTable, public, the three others JoinTable; oyna, one to three
hands a match by table, so that matches do not all end, and their players all seat themselves
again, at the same moment). Each table is played from outside by its four players, each
playing their seat over one TableService.Play stream, as a native app does (``--client
browser``: following the seat's WatchTable stream with ``changes`` and moving with
TableService.Act, the calls a browser makes); either way a change's events come with the
seat's view in one message, so no GetSeatView. Each decides in this process from that view
(the engine's bot at ``--level``, easy by default; its processor time is reported apart,
``decide_cpu_us``); with ``--pace P``, at most P moves a second per table
(``--pace 0.5``: one move every 2 s, a person's pace), else as fast as the answers come. When
a match ends its players find a table again the same way.
At a set pace the tables are seated one after another over about a hand's length (60 moves,
at most three minutes: ``ramp_seconds``), as tables come and go in a real room, rather than
all at once: hands that start together end together, and a few dozen hands ending and being
dealt within the same seconds hold every move up (docs/performance.md says by how much).

A move ("Act" in the figures' descriptions) is timed from sending it (Play's act, or the Act
call) to its outcome, over ``minutes`` of play after every table has been seated. The last line
is JSON: ``moves_per_second`` (moves answered per second, all tables), ``p50_ms``/``p99_ms``/
``max_ms`` of a move, ``slow_moves`` (slower than 100 ms) and
``slow_moves_worst_seconds`` (the five seconds of the run, counted from its start, that
answered the most of them: a stall shows as one second holding most), ``errors`` (failed
calls of any kind other than a stale or refused move; ``errors_by_code`` and a few
``error_samples``), ``streams_reopened`` (players' and seats' streams opened again after a
service closed their connection at its age limit, ``OKEY_MAX_CONNECTION_AGE_SECONDS``, by
method: not errors), ``throttled`` (calls a lobby or table rate limit refused, by method, which
the players waited out as the API asks: at full speed, hosts whose one-hand matches end every
few seconds host more tables than the lobby lets a player host in a minute),
``hands_completed`` and ``matches_completed`` (HAND_ENDED and MATCH_ENDED in the tables' own
event logs, read back with WatchTable), ``lost_hands`` (hands ended at a table that are not on
their score sheet in scoring exactly once, checked after the outbox has had up to a minute to
drain), ``sequence_gaps`` (tables whose event log is not numbered 1, 2, 3...), ``peak_rss_mb``
and ``cpu_percent`` (of one core, over the measured minutes) per service from ``/proc``,
``moves_applied`` (every move the tables applied over those minutes, players', bots' and
timeouts', from the table service's ``okey_moves_total``) and ``cpu_us_per_move`` (each
service's processor time, user and system, divided by ``moves_applied``),
``table_holdups`` (what held the table process's event loop over those minutes, from its
metrics: garbage collections, their seconds, those of 100 ms or more and the full ones; the
event-loop lag samples of 100 ms or more and the seconds late in all: set beside
``slow_moves``, they say whether a stall was the table's own),
``client_cpu_percent`` (this process, the players: a client that cannot keep up shows here),
``client_cpu_us_per_move`` (the same, a move) and ``decide_cpu_us`` (of it, the mean processor
time of one decision), ``seatings`` (players seated at a table over those minutes: quick-match
tickets matched, hosts and joiners) and ``lobby_cpu_us_per_seating`` (the lobby's processor
time over those minutes divided by them: it also carries the players' streams),
``login_seconds`` and ``seating_seconds`` (logging every guest in, then until every table was
seated: the lobby's part), the load average before and after, and ``cpu_stalled_percent``:
the share of the measured time some task on the machine waited for a processor (Linux's
pressure stall information), which says whether the figures were taken on a busy machine,
and ``cpu_steal_percent``: the share of the processors' time a hypervisor gave to other
virtual machines (on a shared host, the part of a slow run nothing here could help).
Exit status 1 on any error or lost hand.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import json
import os
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okey.v1 import common_pb2
from prometheus_client.parser import text_string_to_metric_families

from okey101.bench import load_stack
from okey101.bench.load_stack import Figures, Guest, Play, PlayerStream, Seating, StackClient
from okey101.bench.rules_bench import cpu_seconds
from okey101.bench.solver_bench import percentile
from okey101.platform import collector

SERVICES = ("rules", "bot", "scoring", "table", "lobby")


#: A move slower than this (ms) is counted in ``slow_moves``, by the second it was answered in.
SLOW_MS = 100.0
#: About how many moves a hand takes, and the longest the tables' start is spread over.
HAND_MOVES = 60
RAMP_CAP_SECONDS = 180.0


#: What each player is granted at a stake (AdjustChips), in stakes: enough that nobody runs out
#: over a run, which would be the players' error, not the stack's.
CHIPS_FUNDED_STAKES = 100


def hosted_rules(index: int) -> common_pb2.RuleSet:
    """oyna, one to three hands a match (by table), so that matches do not all end at once."""
    return common_pb2.RuleSet(
        preset=common_pb2.RULE_PRESET_OYNA,
        match_end=common_pb2.MATCH_END_FIXED_HANDS,
        match_hands=1 + index % 3,
    )


class GcPauses:
    """The client's own garbage-collection pauses over 50 ms, as (second of the run, ms): a
    pause here holds up every call in flight, which would be charged to the servers."""

    def __init__(self, began: float) -> None:
        self.began = began
        self.started = 0.0
        self.long: list[tuple[int, float]] = []

    def callback(self, phase: str, _info: dict[str, int]) -> None:
        now = time.perf_counter()
        if phase == "start":
            self.started = now
        elif (now - self.started) * 1000 > 50:
            self.long.append((int(now - self.began), round((now - self.started) * 1000, 1)))


class Tables:
    """Every table the run has played at, and the drivers of the quick-match ones (a table's
    players arrive one ticket at a time; the first to arrive starts its driver)."""

    def __init__(
        self, client: StackClient, guests: list[Guest], play: Play, stake: int = 0
    ) -> None:
        self.client = client
        self.play = play
        #: The chips each seat stakes (0: none).
        self.stake = stake
        self.by_player = {guest.player_id: guest for guest in guests}
        self.seen: list[str] = []
        self.drivers: dict[str, asyncio.Task[bool]] = {}
        self.stop = asyncio.Event()
        self.seated = 0
        #: Players seated at a table while the figures are recorded.
        self.seatings = 0

    def count_seated(self, players: int) -> None:
        if self.client.figures.recording:
            self.seatings += players

    def note(self, table_id: str) -> None:
        if table_id not in self.seen:
            self.seen.append(table_id)
            self.seated += 1

    async def quick_match_driver(self, table_id: str, guest: Guest) -> asyncio.Task[bool]:
        if table_id not in self.drivers:
            self.drivers[table_id] = asyncio.create_task(self._drive_quick(table_id, guest))
        return self.drivers[table_id]

    async def _drive_quick(self, table_id: str, guest: Guest) -> bool:
        from okey.v1 import table_pb2

        table = (
            await self.client.rpc(
                lambda c: c.table.GetTable,
                table_pb2.GetTableRequest(table_id=table_id),
                guest.auth,
                name="GetTable",
            )
        ).table
        seating = Seating(table_id)
        for index, occupant in enumerate(table.seats):
            ours = self.by_player.get(occupant.player_id)
            if ours is not None:
                seating.seats[index] = ours
        self.note(table_id)
        return await load_stack.follow(self.client, seating, self.play, self.stop)


async def _quick_matcher(tables: Tables, guest: Guest, delay: float) -> None:
    """One player: quick match, wait for the table's match to end, again."""
    await asyncio.sleep(delay)
    while not tables.stop.is_set():
        try:
            table_id, _seat = await load_stack.quick_match(tables.client, guest, stake=tables.stake)
            tables.count_seated(1)
            driver = await tables.quick_match_driver(table_id, guest)
            await asyncio.shield(driver)
        except Exception as error:  # counted; the player tries again
            tables.client.figures.failures[("quick_match", type(error).__name__)] += 1
            await asyncio.sleep(1.0)


async def _host(
    tables: Tables, group: list[Guest], rules: common_pb2.RuleSet, delay: float
) -> None:
    """Four players: one hosts, three join; play the match; again."""
    await asyncio.sleep(delay)
    while not tables.stop.is_set():
        try:
            seating = await load_stack.host_table(tables.client, group, rules, stake=tables.stake)
            tables.count_seated(len(group))
            tables.note(seating.table_id)
            await load_stack.follow(tables.client, seating, tables.play, tables.stop)
        except Exception as error:
            tables.client.figures.failures[("host_table", type(error).__name__)] += 1
            await asyncio.sleep(1.0)


async def _play(
    stack: Any,
    var_dir: Path,
    count: int,
    minutes: float,
    pace: float,
    level: str,
    client_kind: str,
    stake: int = 0,
    lobby_url: str = "",
) -> dict[str, Any]:
    figures = Figures(recording=False)
    addresses = {name: stack.address(name) for name in SERVICES}
    client = StackClient(addresses, var_dir, figures)
    pids = {name: stack.services[name].process.pid for name in SERVICES}
    streams: list[PlayerStream] = []
    try:
        login_began = time.monotonic()
        guests = await load_stack.login_guests(client, 4 * count)
        if stake:
            await load_stack.fund(client, guests, CHIPS_FUNDED_STAKES * stake)
        login = round(time.monotonic() - login_began, 1)
        streams.extend(PlayerStream.open(client, guest) for guest in guests)
        # The players hold thousands of streams' objects: as the services do, what is held
        # now is frozen and full collections are spaced out (a full one held this process,
        # and so every move in flight, for up to 1.6 s at 600 tables).
        collector.settle()
        decisions: list[float] = []
        play = Play(
            decide=load_stack.engine_decider(level, decisions),
            pace=pace,
            over_play=client_kind == "native",
        )
        tables = Tables(client, guests, play, stake)
        groups = [guests[4 * index : 4 * index + 4] for index in range(count)]
        ramp = min(RAMP_CAP_SECONDS, HAND_MOVES / pace) if pace else 0.0
        players: list[asyncio.Task[None]] = []
        for index, group in enumerate(groups):
            delay = ramp * index / count
            if index % 2 == 0:
                players.extend(
                    asyncio.create_task(_quick_matcher(tables, guest, delay)) for guest in group
                )
            else:
                rules = hosted_rules(index // 2)
                players.append(asyncio.create_task(_host(tables, group, rules, delay)))
        # Measured once every table is seated (or three minutes after the last was due to be).
        seating_began = time.monotonic()
        deadline = seating_began + ramp + 180
        while tables.seated < count and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        seating = round(time.monotonic() - seating_began, 1)
        cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        applied_before = moves_applied(stack.ports["table"][1])
        holdups_before = Holdups.read(stack.ports["table"][1])
        client_before = time.process_time()
        decisions_before = len(decisions)
        stall_before = load_stack.cpu_stall_us()
        times_before = load_stack.cpu_times()
        figures.recording = True
        began = time.perf_counter()
        pauses = GcPauses(began)
        gc.callbacks.append(pauses.callback)
        await asyncio.sleep(minutes * 60)
        elapsed = time.perf_counter() - began
        figures.recording = False
        cpu_after = {name: cpu_seconds(pid) for name, pid in pids.items()}
        applied = moves_applied(stack.ports["table"][1]) - applied_before
        holdups = Holdups.read(stack.ports["table"][1]).since(holdups_before)
        client_used = time.process_time() - client_before
        client_cpu = round(client_used / elapsed * 100, 1)
        decided = decisions[decisions_before:]
        lobby_used = None
        if cpu_before.get("lobby") is not None and cpu_after.get("lobby") is not None:
            lobby_used = cpu_after["lobby"] - cpu_before["lobby"]  # type: ignore[operator]
        seatings = tables.seatings
        stall_after = load_stack.cpu_stall_us()
        times_after = load_stack.cpu_times()
        stolen = None
        if times_before is not None and times_after is not None:
            total = times_after[0] - times_before[0]
            stolen = round((times_after[1] - times_before[1]) / max(total, 1) * 100, 1)
        stalled = None
        if stall_before is not None and stall_after is not None:
            stalled = round((stall_after - stall_before) / 1e6 / elapsed * 100, 1)
        gc.callbacks.remove(pauses.callback)
        latencies = list(figures.latencies)
        # Whether slow moves come spread out or all in the same few seconds (a stall).
        slow_seconds = collections.Counter(
            int(answered - began)
            for answered, latency in zip(figures.answered, latencies, strict=True)
            if latency > SLOW_MS
        )
        moves = figures.moves
        tables.stop.set()
        _done, pending = await asyncio.wait([*players, *tables.drivers.values()], timeout=60)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        checked = await load_stack.audit(client, tables.seen, drain_seconds=60)
        chips = await load_stack.chips_audit(lobby_url) if stake else {}
        peak = {name: load_stack.peak_rss_mb(pid) for name, pid in pids.items()}
        player_events = sum(stream.events for stream in streams)
    finally:
        for stream in streams:
            await stream.close()
        await client.close()
    cpu: dict[str, float | None] = {}
    per_move: dict[str, float | None] = {}
    for name in SERVICES:
        before, after = cpu_before.get(name), cpu_after.get(name)
        used = None if before is None or after is None else after - before
        cpu[name] = None if used is None else round(used / elapsed * 100, 1)
        per_move[name] = None if used is None or not applied else round(used * 1e6 / applied)
    return {
        "moves_per_second": round(moves / elapsed, 1),
        "p50_ms": round(percentile(latencies, 50), 2) if latencies else None,
        "p99_ms": round(percentile(latencies, 99), 2) if latencies else None,
        "max_ms": round(max(latencies), 2) if latencies else None,
        "slow_moves": sum(slow_seconds.values()),
        "slow_moves_worst_seconds": dict(slow_seconds.most_common(5)),
        "client_gc_pauses_over_50_ms": pauses.long,
        "table_holdups": holdups,
        "moves": moves,
        "moves_applied": applied,
        "cpu_us_per_move": per_move,
        "errors": figures.errors,
        "errors_by_code": figures.codes(),
        "error_samples": figures.samples[:5],
        "throttled": dict(figures.throttled),
        "streams_reopened": dict(figures.reopened),
        "hands_completed": checked.hands,
        "matches_completed": checked.matches,
        "lost_hands": len(checked.lost),
        "unrecorded_matches": len(checked.unrecorded_matches),
        "sequence_gaps": len(checked.gaps),
        "tables_played": len(tables.seen),
        "login_seconds": login,
        "seating_seconds": seating,
        "ramp_seconds": round(ramp, 1),
        "peak_rss_mb": peak,
        "cpu_percent": cpu,
        "client_cpu_percent": client_cpu,
        "client_cpu_us_per_move": round(client_used * 1e6 / moves) if moves else None,
        "decide_cpu_us": round(sum(decided) * 1e6 / len(decided)) if decided else None,
        "level": level,
        "client": client_kind,
        "seatings": seatings,
        "lobby_cpu_us_per_seating": (
            round(lobby_used * 1e6 / seatings) if lobby_used is not None and seatings else None
        ),
        "player_events": player_events,
        "cpu_stalled_percent": stalled,
        "cpu_steal_percent": stolen,
        "stake": stake,
        **chips,
    }


def _samples(metrics_port: int) -> list[Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as page:
        text = page.read().decode()
    return [sample for family in text_string_to_metric_families(text) for sample in family.samples]


def moves_applied(metrics_port: int) -> int:
    """Every move the table service has applied (``okey_moves_total``: players', bots' and
    timeouts'), read from its metrics."""
    return round(
        sum(float(s.value) for s in _samples(metrics_port) if s.name == "okey_moves_total")
    )


@dataclass(frozen=True)
class Holdups:
    """What held a service's event loop, from its metrics: garbage collections (count, seconds,
    those of 100 ms or more, full ones) and the event loop's lag samples of 100 ms or more with
    the seconds they were late in all. Read before and after, their difference lines up with
    the client's slow moves."""

    collections: float
    collection_seconds: float
    long_collections: float
    full_collections: float
    late_wakeups: float
    late_seconds: float

    @staticmethod
    def read(metrics_port: int) -> Holdups:
        figures = collections.Counter[str]()
        for sample in _samples(metrics_port):
            le = sample.labels.get("le")
            if sample.name == "okey_gc_pause_seconds_count":
                figures["collections"] += sample.value
                if sample.labels.get("generation") == "2":
                    figures["full"] += sample.value
            elif sample.name == "okey_gc_pause_seconds_sum":
                figures["collection_seconds"] += sample.value
            elif sample.name == "okey_gc_pause_seconds_bucket" and le == "0.1":
                figures["short_collections"] += sample.value  # 0.1 s is a bucket's bound
            elif sample.name == "okey_event_loop_lag_seconds_count":
                figures["wakeups"] += sample.value
            elif sample.name == "okey_event_loop_lag_seconds_bucket" and le == "0.1":
                figures["prompt_wakeups"] += sample.value
            elif sample.name == "okey_event_loop_lag_seconds_sum":
                figures["late_seconds"] += sample.value
        return Holdups(
            collections=figures["collections"],
            collection_seconds=figures["collection_seconds"],
            long_collections=figures["collections"] - figures["short_collections"],
            full_collections=figures["full"],
            late_wakeups=figures["wakeups"] - figures["prompt_wakeups"],
            late_seconds=figures["late_seconds"],
        )

    def since(self, before: Holdups) -> dict[str, float]:
        return {
            name: round(getattr(self, name) - getattr(before, name), 3)
            for name in self.__dataclass_fields__
        }


def run(
    tables: int,
    minutes: float,
    pace: float = 0.0,
    *,
    level: str = "easy",
    client: str = "native",
    sqlite: bool = False,
    database_url: str | None = None,
    stake: int = 0,
) -> dict[str, Any]:
    """Start the stack, play, audit, stop; the figures (module docstring)."""
    from okey101.stack import local_stack

    load_before = load_stack.load_average()
    base = (
        database_url or os.environ.get(load_stack.DATABASE_ENV) or load_stack.DEFAULT_DATABASE_URL
    )
    with contextlib.ExitStack() as cleanup:
        var_dir = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="okey101-load-")))
        databases = None
        if not sqlite:
            databases = cleanup.enter_context(load_stack.temporary_databases(base, "okey_load"))
        env = load_stack.stack_environment(databases)
        stack = cleanup.enter_context(local_stack(var_dir, env=env, services=SERVICES))
        lobby_url = load_stack.lobby_database_url(var_dir, databases)
        figures = asyncio.run(
            _play(stack, var_dir, tables, minutes, pace, level, client, stake, lobby_url)
        )
    figures.update(
        tables=tables,
        minutes=minutes,
        pace=pace or None,
        database="sqlite" if sqlite else "postgresql",
        load_before=load_before,
        load_after=load_stack.load_average(),
    )
    return figures


def main(
    tables: int,
    minutes: float,
    pace: float,
    sqlite: bool,
    database_url: str | None,
    as_json: bool,
    *,
    level: str = "easy",
    client: str = "native",
    stake: int = 0,
) -> int:
    figures = run(
        tables,
        minutes,
        pace,
        level=level,
        client=client,
        sqlite=sqlite,
        database_url=database_url,
        stake=stake,
    )
    paced = f"{pace} moves/s a table" if pace else "full speed"
    print(
        f"load: {tables} tables ({paced}, {figures['database']}): "
        f"{figures['moves_per_second']} moves/s, Act p50 {figures['p50_ms']} ms, "
        f"p99 {figures['p99_ms']} ms, max {figures['max_ms']} ms; {figures['errors']} errors; "
        f"{figures['hands_completed']} hands, {figures['lost_hands']} lost; "
        f"table {figures['cpu_us_per_move']['table']} us a move; "
        f"peak RSS MB {figures['peak_rss_mb']}; load {figures['load_before']} -> "
        f"{figures['load_after']}"
    )
    if as_json:
        print(json.dumps(figures, sort_keys=True))
    balanced = figures.get("chips_balanced", True)
    return 0 if figures["errors"] == 0 and figures["lost_hands"] == 0 and balanced else 1
