"""The cluster's shape on one machine: two table processes behind nginx (Debian's package,
``grpc_pass``, which balances each call, as ingress-nginx does in k8s/ when a client sends no
table-id header), one bot and one scoring process, one PostgreSQL; the services run as the
manifests run them (not local mode, the signing key and the JWKS from files, the peers'
addresses from settings).

Four bots play a hand through nginx, each a client deciding with the engine's bot from its own
view (seeded by the turn, so a replay decides the same), retrying with the same request id a
call that found no server, as a real client would; a spectator watches through nginx and
resumes from the last sequence number it saw. The table process holding the spectator's stream
is killed (SIGKILL) mid-hand. Play goes on through the other: the hand's record is exactly the
uninterrupted replay of the same deal (no move lost, none applied twice), the spectator saw every
event once and in order, and scoring recorded the hand. Both table processes answered calls that
came over single connections: nginx balanced each call, and a table served by a process that
did not hold it in memory was read from the database first. The tables apply moves with the
engine they ship, so no rules process is part of this shape.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import grpc.aio
import pytest
from okey.v1 import common_pb2, table_pb2, table_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.engine import make_url

from okey101.engine.bots.entry_points import decide
from okey101.engine.bots.levels import BotLevel
from okey101.engine.deal import deal
from okey101.engine.hand import apply
from okey101.engine.tiles import tile_by_id
from okey101.platform import convert
from okey101.platform.auth import TokenIssuer, load_signing_key
from okey101.stack import free_ports, wait_serving

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TEST_DATABASE_ENV = "OKEY_TEST_DATABASE_URL"
PLAYERS = ("ada", "bea", "cem", "deniz")
ACTIVE = (common_pb2.PHASE_FIRST, common_pb2.PHASE_DRAW, common_pb2.PHASE_PLAY)
RETRIED = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
#: A stream is also resumed after INTERNAL: when the server behind nginx dies, nginx resets the
#: client's stream (RST_STREAM INTERNAL_ERROR), which gRPC reports as INTERNAL "Stream removed".
RESUMED = (*RETRIED, grpc.StatusCode.INTERNAL)

NGINX_CONF = """
daemon off;
master_process off;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 512; }}
http {{
    access_log off;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    # Round-robin over the servers for each call; a server that refuses connections is
    # skipped (and the call tried on the other) until it comes back.
    upstream table {{
{table_servers}
        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{table_port} http2;
        location / {{
            grpc_pass grpc://table;
            grpc_next_upstream error timeout;
            grpc_read_timeout 300s;
            grpc_send_timeout 300s;
        }}
    }}
}}
"""


def _nginx_binary() -> str:
    for candidate in (
        shutil.which("nginx"),
        "/usr/sbin/nginx",
        str(ROOT / "build" / "nginx" / "usr" / "sbin" / "nginx"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    message = "nginx not found: .ci/run unpacks Debian's nginx package into build/nginx"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def databases() -> Iterator[tuple[str, str]]:
    """Two fresh PostgreSQL databases (table, scoring), dropped afterwards."""
    base = os.environ.get(TEST_DATABASE_ENV)
    if not base:
        message = f"{TEST_DATABASE_ENV} is not set: two table processes need PostgreSQL"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    url = make_url(base)
    admin = url.set(drivername="postgresql").render_as_string(hide_password=False)
    names = [f"okey_k8s_{kind}_{uuid.uuid4().hex[:10]}" for kind in ("table", "scoring")]

    async def run(*statements: str) -> None:
        connection = await asyncpg.connect(admin)
        try:
            for statement in statements:
                await connection.execute(statement)
        finally:
            await connection.close()

    asyncio.run(run(*(f'CREATE DATABASE "{name}"' for name in names)))
    try:
        table, scoring = (
            url.set(drivername="postgresql", database=name).render_as_string(hide_password=False)
            for name in names
        )
        yield table, scoring
    finally:
        asyncio.run(run(*(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)' for name in names)))


class Processes:
    """Child processes with their output in files, stopped (SIGTERM, then SIGKILL) at the end."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.children: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        log = (self.folder / f"{name}.log").open("wb")
        child = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.children[name] = child
        return child

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}"
            for path in sorted(self.folder.glob("*.log"))
        )

    def stop(self) -> None:
        for child in self.children.values():
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in self.children.values():
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def _serve(service: str, port: int, metrics: int, keys: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "okey101.cli", "serve", service,
        "--local-mode", "0", "--host", "127.0.0.1", "--port", str(port),
        "--metrics-port", str(metrics), "--jwks-file", str(keys / "jwks.json"),
        "--log-format", "json", "--drain-seconds", "0", "--grace-seconds", "2", *extra,
    ]  # fmt: skip


def _handled(metrics_port: int, method: str) -> float:
    """Calls of ``method`` a process has answered, from its /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as answer:
        text = answer.read().decode()
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "grpc_server_handled"
        for sample in family.samples
        if sample.labels.get("grpc_method") == method
    )


def _started(metrics_port: int, method: str) -> float:
    """Calls of ``method`` a process has begun (a stream still open is begun, not handled)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as answer:
        text = answer.read().decode()
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "grpc_server_started"
        for sample in family.samples
        if sample.labels.get("grpc_method") == method
    )


def _counter(metrics_port: int, name: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as answer:
        text = answer.read().decode()
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name
    )


# --------------------------------------------------------------------------------------------
# The players and the spectator, all through nginx


class Client:
    def __init__(self, target: str, keys: Path) -> None:
        self.channel = grpc.aio.insecure_channel(target)
        self.stub: Any = table_pb2_grpc.TableServiceStub(self.channel)
        self.issuer = TokenIssuer(load_signing_key(keys / "signing-key.pem"))

    def auth(self, subject: str, kind: str = "player") -> tuple[tuple[str, str], ...]:
        token = self.issuer.issue(subject, kind)  # type: ignore[arg-type]
        return (("authorization", f"Bearer {token}"),)

    async def call(self, method: str, request: Any, metadata: Any) -> Any:
        """``method`` again (the same request) while no table service answers."""
        deadline = time.monotonic() + 60
        while True:
            try:
                return await getattr(self.stub, method)(request, metadata=metadata, timeout=5)
            except grpc.aio.AioRpcError as error:
                if error.code() not in RETRIED or time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.05)


def seeded_actions(view: common_pb2.SeatView) -> list[common_pb2.Action]:
    engine_view = convert.seat_view_from_proto(view)
    seed = view.turn_number * 8 + view.phase
    decision = decide(engine_view, convert.rules_from_proto(view.rules), BotLevel.NORMAL, seed)
    return [convert.action_to_proto(action) for action in decision.actions]


async def play(client: Client, table_id: str, seat: int, moves: list[float]) -> None:
    """Play ``seat`` until the first hand has ended."""
    auth = client.auth(PLAYERS[seat])
    while True:
        request = table_pb2.GetSeatViewRequest(table_id=table_id, seat=seat)
        view = (await client.call("GetSeatView", request, auth)).view
        if view.phase == common_pb2.PHASE_ENDED or view.hand_number > 1:
            return
        if view.phase not in ACTIVE or view.turn != seat:
            await asyncio.sleep(0.01)
            continue
        act = table_pb2.ActRequest(
            request_id=uuid.uuid4().hex,
            table_id=table_id,
            seat=seat,
            actions=seeded_actions(view),
            expected_state_version=view.state_version,
        )
        try:
            await client.call("Act", act, auth)
            moves.append(time.monotonic())
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.ABORTED:
                raise


async def spectate(client: Client, table_id: str, events: list[Any], reconnects: list[int]) -> None:
    """Every event of the table, resuming after the last one seen whenever the stream breaks."""
    auth = client.auth("service:spectator", "service")
    while True:
        after = events[-1].sequence if events else 0
        call = client.stub.WatchTable(
            table_pb2.WatchTableRequest(table_id=table_id, after_sequence=after), metadata=auth
        )
        try:
            async for item in call:
                if item.HasField("event"):
                    events.append(item.event)
            return
        except grpc.aio.AioRpcError as error:
            if error.code() not in RESUMED:
                raise
            reconnects.append(events[-1].sequence if events else 0)
            await asyncio.sleep(0.05)


def replay_uninterrupted(record: table_pb2.HandRecord) -> tuple[list[tuple[int, bytes]], Any]:
    """The same deal played by the same deciders with nothing killed: its moves and result."""
    rules = convert.rules_from_proto(record.rules)
    state = deal(rules, record.dealer, [tile_by_id(i) for i in record.deck_tile_ids])
    moves: list[tuple[int, bytes]] = []
    while state.result is None:
        seat = state.turn
        for action in seeded_actions(convert.seat_view_to_proto(state, seat)):
            moves.append((seat, action.SerializeToString(deterministic=True)))
            state, _ = apply(state, seat, convert.action_from_proto(action))
    return moves, convert.hand_result_to_proto(state.result, state)


# --------------------------------------------------------------------------------------------


def test_bots_play_through_nginx_and_a_killed_table_process_loses_nothing(
    databases: tuple[str, str], tmp_path: Path
) -> None:
    nginx_binary = _nginx_binary()
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location(
        "make_secrets", ROOT / "k8s" / "overlays" / "dev" / "make_secrets.py"
    )
    assert spec is not None and spec.loader is not None
    make_secrets = module_from_spec(spec)
    spec.loader.exec_module(make_secrets)
    keys = tmp_path / "keys"
    make_secrets.generate(keys)  # the signing key and its JWKS, as the dev overlay makes them

    table_url, scoring_url = databases
    names = ("table1", "table2", "bot", "scoring")
    numbers = free_ports(2 * len(names) + 1)
    ports = {name: (numbers[2 * i], numbers[2 * i + 1]) for i, name in enumerate(names)}
    nginx_table = numbers[-1]
    env = {key: value for key, value in os.environ.items() if not key.startswith("OKEY_")}
    env |= {
        "OKEY_LOG_LEVEL": "warning",
        "OKEY_TABLE_BOT_MOVE_SECONDS": "0",
        "OKEY_TABLE_NEXT_HAND_SECONDS": "0",
        "OKEY_TABLE_POLL_SECONDS": "0.05",
        "OKEY_TABLE_WATCHDOG_SECONDS": "0.5",
    }
    folder = tmp_path / "nginx"
    folder.mkdir()
    (folder / "nginx.conf").write_text(
        NGINX_CONF.format(
            folder=folder,
            table_servers="\n".join(
                f"        server 127.0.0.1:{ports[name][0]} max_fails=1 fail_timeout=30s;"
                for name in ("table1", "table2")
            ),
            table_port=nginx_table,
        )
    )
    processes = Processes(tmp_path)
    try:
        processes.start(
            "nginx", [nginx_binary, "-e", "stderr", "-p", str(folder), "-c", "nginx.conf"], env
        )
        processes.start("bot", _serve("bot", *ports["bot"], keys), env)
        processes.start(
            "scoring",
            _serve("scoring", *ports["scoring"], keys, "--database-url", scoring_url),
            env,
        )
        peers = [
            "--database-url", table_url, "--signing-key-file", str(keys / "signing-key.pem"),
            "--bot-address", f"127.0.0.1:{ports['bot'][0]}",
            "--scoring-address", f"127.0.0.1:{ports['scoring'][0]}",
        ]  # fmt: skip
        # The second table process starts once the first has migrated the database.
        processes.start("table1", _serve("table", *ports["table1"], keys, *peers), env)
        asyncio.run(wait_serving(f"127.0.0.1:{ports['table1'][0]}", timeout=90))
        processes.start("table2", _serve("table", *ports["table2"], keys, *peers), env)

        async def everyone_serving() -> None:
            await asyncio.gather(
                *(wait_serving(f"127.0.0.1:{port}", timeout=90) for port, _ in ports.values()),
                wait_serving(f"127.0.0.1:{nginx_table}", timeout=30),
            )

        asyncio.run(everyone_serving())
        asyncio.run(_scenario(processes, ports, nginx_table, keys))
    except BaseException:
        print(processes.logs())
        raise
    finally:
        processes.stop()


async def _scenario(
    processes: Processes, ports: dict[str, tuple[int, int]], nginx_table: int, keys: Path
) -> None:
    client = Client(f"127.0.0.1:{nginx_table}", keys)
    service = client.auth("service:lobby", "service")
    one_hand = common_pb2.RuleSet(
        preset=common_pb2.RULE_PRESET_OYNA,
        match_end=common_pb2.MATCH_END_FIXED_HANDS,
        match_hands=1,
    )
    create = table_pb2.CreateTableRequest(request_id=uuid.uuid4().hex, rules=one_hand)
    table_id = (await client.call("CreateTable", create, service)).table.table_id
    for seat, player in enumerate(PLAYERS):
        sit = table_pb2.SitRequest(request_id=f"sit-{player}", table_id=table_id, seat=seat)
        await client.call("Sit", sit, client.auth(player))
    events: list[Any] = []
    reconnects: list[int] = []
    spectator = asyncio.ensure_future(spectate(client, table_id, events, reconnects))
    start = table_pb2.StartRequest(request_id="start", table_id=table_id)
    await client.call("Start", start, service)

    moves: list[float] = []
    players = [asyncio.ensure_future(play(client, table_id, seat, moves)) for seat in range(4)]
    while len(moves) < 12:
        await asyncio.sleep(0.01)
        for task in players:
            if task.done():
                task.result()  # a player's failure, now
        if all(task.done() for task in players):
            ended = (
                await client.call(
                    "GetHandRecord",
                    table_pb2.GetHandRecordRequest(hand_id=f"{table_id}-h1"),
                    service,
                )
            ).record
            sources = collections.Counter(
                table_pb2.MoveSource.Name(move.source) for move in ended.moves
            )
            pytest.fail(f"the hand ended before the kill: {len(moves)} moves acted, {sources}")
    # Over one connection, nginx has sent calls to both table processes.
    for name in ("table1", "table2"):
        assert _handled(ports[name][1], "GetSeatView") > 0, f"{name} got no call"
    # Kill the one that holds the spectator's stream (so it must resume elsewhere).
    (victim,) = [
        name
        for name in ("table1", "table2")
        if _started(ports[name][1], "WatchTable") > _handled(ports[name][1], "WatchTable")
    ]
    processes.children[victim].send_signal(signal.SIGKILL)
    processes.children[victim].wait()
    killed_at = time.monotonic()
    seen_at_kill = len(events)

    await asyncio.wait_for(asyncio.gather(*players), 180)
    assert any(moment > killed_at for moment in moves), "play went on"
    record = (
        await client.call(
            "GetHandRecord", table_pb2.GetHandRecordRequest(hand_id=f"{table_id}-h1"), service
        )
    ).record
    table = (
        await client.call("GetTable", table_pb2.GetTableRequest(table_id=table_id), service)
    ).table
    deadline = time.monotonic() + 60
    while (not events or events[-1].sequence < table.last_sequence) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    spectator.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await spectator

    # No move lost, none applied twice: the record is the uninterrupted replay of its deal.
    expected_moves, expected_result = replay_uninterrupted(record)
    played = [(m.seat, m.action.SerializeToString(deterministic=True)) for m in record.moves]
    assert played == expected_moves
    assert record.result == expected_result
    # The spectator's stream broke with the process; it resumed from its last event through
    # nginx and saw every event once, in order.
    assert reconnects and reconnects[0] > 0, (reconnects, seen_at_kill, victim)
    assert [event.sequence for event in events] == list(range(1, table.last_sequence + 1))
    # The hand reached scoring through the outbox, whichever table process sent it.
    deadline = time.monotonic() + 60
    while _counter(ports["scoring"][1], "okey_scoring_hands_recorded_total") < 1:
        assert time.monotonic() < deadline, "scoring never recorded the hand"
        await asyncio.sleep(0.2)
    await client.channel.close()
    after = sum(1 for moment in moves if moment > killed_at)
    print(
        f"{len(moves)} moves, {after} after the kill; {len(events)} events; the spectator "
        f"resumed {len(reconnects)} times (after {reconnects}); hand record of {len(played)} moves"
    )
