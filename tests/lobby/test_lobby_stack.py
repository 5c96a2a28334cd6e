"""The lobby with the real table, scoring, rules and bot services, over real gRPC.

The four peers run in-process on 127.0.0.1 port 0 (``service_stack``: each started as ``okey101
serve`` starts it); the lobby runs in-process (``start_lobby``) or, where two lobby pods must
share a queue or one must die, as real ``okey101 serve lobby`` processes. Every service verifies
tokens with the local-mode development key of the test's var dir, so a token the lobby signs is
one the table accepts. Players play their own seats as a client would: each reads its seat's
view and plays the engine's random level (``fallback_decision``) through TableService.Act.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from okey.v1 import (
    common_pb2,
    lobby_pb2,
    lobby_pb2_grpc,
    scoring_pb2,
    scoring_pb2_grpc,
    table_pb2,
    table_pb2_grpc,
)
from sqlalchemy import select

from okey101.lobby.matchmaker import Matchmaker
from okey101.lobby.models import queue, tournament_leases, tournament_tables
from okey101.lobby.peer_clients import TableClient
from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.platform.database import Database
from okey101.platform.peer_channels import PeerChannels
from okey101.stack import free_port, wait_serving
from okey101.table.disguise import seat_names
from okey101.table.service import TableOptions

from support.databases import TEST_DATABASE_ENV, postgres_database
from support.lobby import (
    Client,
    bearer,
    lobby_client,
    lobby_settings,
    make_organiser,
    refused,
    run,
)
from support.lobby_peers import Peers, lobby_for, peers_running, play_seat
from support.service_stack import peer_services

ROOT = Path(__file__).resolve().parents[2]
ONE_HAND = common_pb2.RuleSet(
    preset=common_pb2.RULE_PRESET_BOOMBALA,
    match_end=common_pb2.MATCH_END_FIXED_HANDS,
    match_hands=1,
)


async def until(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


# ---------------------------------------------------------------------------------------------
# A guest, a private table, a finished match


def test_a_guest_hosts_a_private_table_is_joined_and_plays_a_match_to_its_end(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with (
            peers_running(tmp_path) as peers,
            lobby_client(lobby_for(tmp_path, peers)) as client,
        ):
            stub = client.stub
            host, friend, stranger = [
                await client.guest(name=name) for name in ("Host", "Friend", "Stranger")
            ]
            hosted = await stub.HostTable(
                lobby_pb2.HostTableRequest(
                    request_id="host-1", rules=ONE_HAND, name="Evening table",
                    visibility=common_pb2.TABLE_VISIBILITY_PRIVATE, host_seat=0,
                    bots=[lobby_pb2.BotSeat(seat=1, level=common_pb2.BOT_LEVEL_RANDOM),
                          lobby_pb2.BotSeat(seat=2, level=common_pb2.BOT_LEVEL_RANDOM)],
                    start_when_full=True,
                ),
                metadata=bearer(host.tokens.access_token),
            )  # fmt: skip
            table = hosted.table
            assert hosted.seat == 0 and table.invite_code
            assert table.host_player_id == host.player.player_id
            assert table.seats[0].player_id == host.player.player_id
            assert table.state == common_pb2.TABLE_STATE_WAITING
            # A retry of HostTable makes no second table.
            again = await stub.HostTable(
                lobby_pb2.HostTableRequest(
                    request_id="host-1", rules=ONE_HAND, name="Evening table",
                    visibility=common_pb2.TABLE_VISIBILITY_PRIVATE, host_seat=0,
                    bots=[lobby_pb2.BotSeat(seat=1, level=common_pb2.BOT_LEVEL_RANDOM),
                          lobby_pb2.BotSeat(seat=2, level=common_pb2.BOT_LEVEL_RANDOM)],
                    start_when_full=True,
                ),
                metadata=bearer(host.tokens.access_token),
            )  # fmt: skip
            assert again.table.table_id == table.table_id
            stranger_auth = bearer(stranger.tokens.access_token)
            # A private table is not listed, and its id alone does not let anyone in.
            listed = await stub.BrowseTables(
                lobby_pb2.BrowseTablesRequest(), metadata=stranger_auth
            )
            assert table.table_id not in [item.table_id for item in listed.tables]
            by_id = await refused(
                stub.JoinTable(
                    lobby_pb2.JoinTableRequest(request_id="j0", table_id=table.table_id),
                    metadata=stranger_auth,
                )
            )
            assert (by_id.code, by_id.reason) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")
            bad_code = await refused(
                stub.JoinTable(
                    lobby_pb2.JoinTableRequest(request_id="j1", invite_code="NOPE-NOPE"),
                    metadata=stranger_auth,
                )
            )
            assert (bad_code.code, bad_code.reason) == (
                grpc.StatusCode.NOT_FOUND,
                "BAD_INVITE_CODE",
            )
            # The host's seat is someone else's: the table's own answer comes through.
            taken = await refused(
                stub.JoinTable(
                    lobby_pb2.JoinTableRequest(
                        request_id="j2", invite_code=table.invite_code, seat=0
                    ),
                    metadata=stranger_auth,
                )
            )
            assert (taken.code, taken.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SEAT_TAKEN")
            joined = await stub.JoinTable(
                lobby_pb2.JoinTableRequest(request_id="j3", invite_code=table.invite_code),
                metadata=bearer(friend.tokens.access_token),
            )
            assert joined.seat == 3

            # The fourth seat held: the match starts by itself.
            async def playing() -> bool:
                found = await peers.tables.GetTable(
                    table_pb2.GetTableRequest(table_id=table.table_id),
                    metadata=bearer(host.tokens.access_token),
                )
                return bool(found.table.state == common_pb2.TABLE_STATE_PLAYING)

            await until(playing, 20, "the match to start")
            # A player may not act for another player's seat.
            view = (
                await peers.tables.GetSeatView(
                    table_pb2.GetSeatViewRequest(table_id=table.table_id, seat=0),
                    metadata=bearer(host.tokens.access_token),
                )
            ).view
            foreign = await refused(
                peers.tables.Act(
                    table_pb2.ActRequest(
                        request_id="foreign", table_id=table.table_id, seat=0,
                        actions=[common_pb2.Action(draw=common_pb2.DrawAction())],
                        expected_state_version=view.state_version,
                    ),
                    metadata=bearer(friend.tokens.access_token),
                )
            )  # fmt: skip
            assert (foreign.code, foreign.reason) == (
                grpc.StatusCode.PERMISSION_DENIED,
                "NOT_YOUR_SEAT",
            )
            await asyncio.wait_for(
                asyncio.gather(
                    play_seat(peers, host.tokens.access_token, table.table_id, 0, 1),
                    play_seat(peers, friend.tokens.access_token, table.table_id, 3, 1000),
                ),
                timeout=90,
            )
            final = await peers.tables.GetTable(
                table_pb2.GetTableRequest(table_id=table.table_id),
                metadata=bearer(host.tokens.access_token),
            )
            assert final.table.state == common_pb2.TABLE_STATE_FINISHED
            # The match reaches the score sheet (through the table's outbox).
            scoring: Any = scoring_pb2_grpc.ScoringServiceStub(peers.channel_to_scoring)

            async def recorded() -> Any:
                with contextlib.suppress(grpc.aio.AioRpcError):
                    answer = await scoring.GetScoreSheet(
                        scoring_pb2.GetScoreSheetRequest(match_id=final.table.match_id),
                        metadata=bearer(host.tokens.access_token),
                    )
                    if answer.sheet.ended:
                        return answer.sheet
                return None

            sheet = await until(recorded, 20, "the match on the score sheet")
            assert len(sheet.rows) == 1 and list(sheet.totals) == list(final.table.match_totals)
            # The table's own refusal comes through the lobby as the table gave it.
            over = await refused(
                stub.LeaveTable(
                    lobby_pb2.LeaveTableRequest(request_id="bye", table_id=table.table_id),
                    metadata=bearer(friend.tokens.access_token),
                )
            )
            assert over.code == grpc.StatusCode.FAILED_PRECONDITION and over.reason

    run(scenario())


def test_browse_lists_public_tables_waiting_first_and_pages(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with (
            peers_running(tmp_path) as peers,
            lobby_client(lobby_for(tmp_path, peers)) as client,
        ):
            stub = client.stub
            hosts = [await client.guest(name=f"Host {index}") for index in range(3)]
            ids = []
            for index, host in enumerate(hosts):
                hosted = await stub.HostTable(
                    lobby_pb2.HostTableRequest(
                        request_id=f"h{index}", rules=ONE_HAND, name=f"Table {index}",
                        bots=[lobby_pb2.BotSeat(seat=seat, level=common_pb2.BOT_LEVEL_RANDOM)
                              for seat in (1, 2, 3)] if index == 0 else [],
                        start_when_full=index == 0,
                    ),
                    metadata=bearer(host.tokens.access_token),
                )  # fmt: skip
                ids.append(hosted.table.table_id)
            reader = bearer(hosts[1].tokens.access_token)

            async def started() -> bool:
                found = await peers.tables.GetTable(
                    table_pb2.GetTableRequest(table_id=ids[0]), metadata=reader
                )
                return bool(found.table.state != common_pb2.TABLE_STATE_WAITING)

            await until(started, 20, "the full table to start")
            first = await stub.BrowseTables(
                lobby_pb2.BrowseTablesRequest(page_size=2), metadata=reader
            )
            second = await stub.BrowseTables(
                lobby_pb2.BrowseTablesRequest(page_size=2, page_token=first.next_page_token),
                metadata=reader,
            )
            seen = [table.table_id for table in [*first.tables, *second.tables]]
            # Waiting tables (newest first) before the one in play.
            assert seen[:2] == [ids[2], ids[1]]
            assert ids[0] in seen[2:] or second.next_page_token
            assert all(not table.invite_code for table in [*first.tables, *second.tables])
            bad = await refused(
                stub.BrowseTables(
                    lobby_pb2.BrowseTablesRequest(
                        page_size=2, page_token=first.next_page_token,
                        preset=common_pb2.RULE_PRESET_OYNA,
                    ),
                    metadata=reader,
                )
            )  # fmt: skip
            assert bad.reason == "PAGE_TOKEN_INVALID"

    run(scenario())


# ---------------------------------------------------------------------------------------------
# Quick match


def test_quick_match_seats_four_at_once_and_fills_with_bots_after_the_wait(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with (
            peers_running(tmp_path) as peers,
            lobby_client(lobby_for(tmp_path, peers, quick_match_wait_seconds=1.0)) as client,
        ):
            stub = client.stub
            four = [await client.guest(name=f"Q{index}") for index in range(4)]
            tickets = []
            for index, guest in enumerate(four):
                joined = await stub.JoinQuickMatch(
                    lobby_pb2.JoinQuickMatchRequest(
                        request_id=f"four-{index}", preset=common_pb2.RULE_PRESET_NORTH_SULTAN
                    ),
                    metadata=bearer(guest.tokens.access_token),
                )
                tickets.append(joined.ticket.ticket_id)
            statuses = await _matched(client, four, tickets)
            assert len({status.table_id for status in statuses}) == 1
            assert sorted(status.seat for status in statuses) == [0, 1, 2, 3]
            table = (
                await peers.tables.GetTable(
                    table_pb2.GetTableRequest(table_id=statuses[0].table_id),
                    metadata=bearer(four[0].tokens.access_token),
                )
            ).table
            assert table.state == common_pb2.TABLE_STATE_PLAYING
            assert table.rules.preset == common_pb2.RULE_PRESET_NORTH_SULTAN
            assert {seat.player_id for seat in table.seats} == {g.player.player_id for g in four}

            two = [await client.guest(name=f"B{index}") for index in range(2)]
            began = time.monotonic()
            waiting = []
            for index, guest in enumerate(two):
                joined = await stub.JoinQuickMatch(
                    lobby_pb2.JoinQuickMatchRequest(request_id=f"two-{index}"),
                    metadata=bearer(guest.tokens.access_token),
                )
                assert joined.ticket.state == lobby_pb2.QUICK_MATCH_STATE_WAITING
                waiting.append(joined.ticket.ticket_id)
            statuses = await _matched(client, two, waiting)
            assert time.monotonic() - began >= 0.9  # the configured wait
            table = (
                await peers.tables.GetTable(
                    table_pb2.GetTableRequest(table_id=statuses[0].table_id),
                    metadata=bearer(two[0].tokens.access_token),
                )
            ).table
            kinds = [seat.kind for seat in table.seats]
            assert kinds.count(common_pb2.OCCUPANT_KIND_PLAYER) == 2
            assert kinds.count(common_pb2.OCCUPANT_KIND_BOT) == 2
            assert table.state == common_pb2.TABLE_STATE_PLAYING
            # Matched stays matched: leaving the queue now changes nothing.
            left = await stub.LeaveQuickMatch(
                lobby_pb2.LeaveQuickMatchRequest(request_id="late", ticket_id=waiting[0]),
                metadata=bearer(two[0].tokens.access_token),
            )
            assert left.ticket.state == lobby_pb2.QUICK_MATCH_STATE_MATCHED

    run(scenario())


class TableProxy:
    """A real gRPC server between the lobby and the table service: every TableService call is
    passed on as it is (bytes, metadata, the answer or the error), except that ``cut(method,
    after, times)`` makes ``times`` calls of ``method``, after its next ``after``, fail with
    UNAVAILABLE as an outage would (the lobby's channel retries UNAVAILABLE up to 4 times)."""

    def __init__(self, target: str) -> None:
        self._channel = grpc.aio.insecure_channel(target)
        self._cuts: dict[str, list[int]] = {}
        self.calls: list[str] = []
        self.server = grpc.aio.server()
        self.server.add_generic_rpc_handlers([self])
        self.port = self.server.add_insecure_port("127.0.0.1:0")

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def cut(self, method: str, *, after: int, times: int) -> None:
        self._cuts[method] = [after, times]

    def service(self, details: Any) -> Any:
        method = details.method.rsplit("/", 1)[-1]

        async def pass_on(request: bytes, context: Any) -> bytes:
            self.calls.append(method)
            cut = self._cuts.get(method)
            if cut is not None:
                if cut[0] > 0:
                    cut[0] -= 1
                elif cut[1] > 0:
                    cut[1] -= 1
                    await context.abort(grpc.StatusCode.UNAVAILABLE, "cut by the test's proxy")
            try:
                answer: bytes = await self._channel.unary_unary(details.method)(
                    request, metadata=context.invocation_metadata(), timeout=10
                )
            except grpc.aio.AioRpcError as error:
                await context.abort(error.code(), error.details() or "", error.trailing_metadata())
            return answer

        return grpc.unary_unary_rpc_method_handler(pass_on)

    async def __aenter__(self) -> TableProxy:
        await self.server.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.server.stop(0)
        await self._channel.close()


def test_a_quick_match_attempt_that_fails_half_way_closes_its_table_and_bots_are_named(
    tmp_path: Path,
) -> None:
    """The table service goes away after the quick match's table is made and its first player
    seated (every later Sit fails, retries included), and closes fail too; meanwhile one of the
    four leaves the queue and a fifth joins, so the next group is another. Once the table
    service is back the lobby closes every table its failed attempts made and seats the new
    group at a new table: no half-made table is left waiting with a player in it. Bots filling
    seats are named as players are ("Zeynep", fixed per table and seat); their kind says they
    are bots."""

    async def scenario() -> None:
        async with peers_running(tmp_path) as peers, TableProxy(peers.table.target) as proxy:
            settings = lobby_settings(
                tmp_path, table_address=proxy.target, scoring_address=peers.scoring.target,
                quick_match_wait_seconds=1.0,
            )  # fmt: skip
            async with lobby_client(settings) as client:
                service = _service_auth(tmp_path)
                matchmaker = client.lobby.servicer.matchmaker
                proxy.cut("Sit", after=1, times=10**6)
                proxy.cut("CloseTable", after=0, times=10**6)
                five = [await client.guest(name=f"Q{index}") for index in range(5)]
                tickets = {}
                for index, guest in enumerate(five[:4]):
                    joined = await client.stub.JoinQuickMatch(
                        lobby_pb2.JoinQuickMatchRequest(request_id=f"q-{index}"),
                        metadata=bearer(guest.tokens.access_token),
                    )
                    tickets[index] = joined.ticket.ticket_id

                async def failed_once() -> bool:
                    return proxy.calls.count("Sit") >= 5  # seat 0's, then 4 tries of seat 1's

                await until(failed_once, 30, "a quick-match attempt to fail half-way")
                left = await client.stub.LeaveQuickMatch(
                    lobby_pb2.LeaveQuickMatchRequest(request_id="go", ticket_id=tickets[3]),
                    metadata=bearer(five[3].tokens.access_token),
                )
                assert left.ticket.state == lobby_pb2.QUICK_MATCH_STATE_CANCELLED
                joined = await client.stub.JoinQuickMatch(
                    lobby_pb2.JoinQuickMatchRequest(request_id="q-4"),
                    metadata=bearer(five[4].tokens.access_token),
                )
                tickets[4] = joined.ticket.ticket_id
                proxy.cut("Sit", after=0, times=0)
                proxy.cut("CloseTable", after=0, times=0)
                group = [five[index] for index in (0, 1, 2, 4)]
                statuses = await _matched(client, group, [tickets[i] for i in (0, 1, 2, 4)])

                (table_id,) = {status.table_id for status in statuses}

                async def tables() -> dict[str, Any]:
                    listed = await peers.tables.ListTables(
                        table_pb2.ListTablesRequest(page_size=200), metadata=service
                    )
                    return {table.table_id: table for table in listed.tables}

                async def all_closed() -> dict[str, Any] | None:
                    made = await tables()
                    others = [made[t].state for t in made if t != table_id]
                    return made if set(others) == {common_pb2.TABLE_STATE_CLOSED} else None

                made = await until(all_closed, 30, "the half-made tables to be closed")
                half_made = set(made) - {table_id}
                assert not matchmaker.unclosed and not matchmaker.pending
                first = min(half_made, key=lambda t: made[t].create_time.ToNanoseconds())
                assert made[first].seats[0].player_id == five[0].player.player_id
                assert made[table_id].state == common_pb2.TABLE_STATE_PLAYING
                players = {seat.player_id for seat in made[table_id].seats}
                assert players == {guest.player.player_id for guest in group}

                two = [await client.guest(name=f"B{index}") for index in range(2)]
                waiting = []
                for index, guest in enumerate(two):
                    joined = await client.stub.JoinQuickMatch(
                        lobby_pb2.JoinQuickMatchRequest(request_id=f"two-{index}"),
                        metadata=bearer(guest.tokens.access_token),
                    )
                    waiting.append(joined.ticket.ticket_id)
                statuses = await _matched(client, two, waiting)
                table = (
                    await peers.tables.GetTable(
                        table_pb2.GetTableRequest(table_id=statuses[0].table_id),
                        metadata=service,
                    )
                ).table
                bots = [seat for seat in table.seats if seat.kind == common_pb2.OCCUPANT_KIND_BOT]
                players = [s.display_name if s.seat < 2 else "" for s in table.seats]
                named = seat_names(table.table_id, players, [2, 3])
                assert [(seat.seat, seat.display_name) for seat in bots] == [
                    (2, named[2]),
                    (3, named[3]),
                ]
                assert all("bot" not in seat.display_name.lower() for seat in table.seats)

    run(scenario())


def test_a_half_made_quick_match_table_another_pod_finishes_is_never_closed(
    tmp_path: Path,
) -> None:
    """This lobby's attempts keep failing half-way (every Sit after the first is cut between it
    and the table service), so it keeps the half-made table for the group's next attempt. A
    second matchmaker, as another pod would, reaching the table service directly, claims the
    same group: the same derived request ids hand it the same table, which it seats and starts.
    The first lobby then drops the table from what it owes, and never closes it."""

    async def scenario() -> None:
        async with peers_running(tmp_path) as peers, TableProxy(peers.table.target) as proxy:
            settings = lobby_settings(
                tmp_path, table_address=proxy.target, scoring_address=peers.scoring.target
            )
            async with lobby_client(settings) as client:
                matchmaker = client.lobby.servicer.matchmaker
                proxy.cut("Sit", after=1, times=10**6)
                four = [await client.guest(name=f"P{index}") for index in range(4)]
                tickets = []
                for index, guest in enumerate(four):
                    joined = await client.stub.JoinQuickMatch(
                        lobby_pb2.JoinQuickMatchRequest(request_id=f"p-{index}"),
                        metadata=bearer(guest.tokens.access_token),
                    )
                    tickets.append(joined.ticket.ticket_id)

                async def kept() -> bool:
                    return bool(matchmaker.pending)

                await until(kept, 30, "a half-made table kept for the group")
                (half_made,) = matchmaker.pending.values()
                other_pod = PeerChannels(settings.replace(table_address=peers.table.target))
                try:
                    other = Matchmaker(client.lobby.servicer.repository, TableClient(other_pod))
                    assert await other.match_all() == 1
                finally:
                    await other_pod.close()
                statuses = await _matched(client, four, tickets)
                assert {status.table_id for status in statuses} == {half_made}

                async def dropped() -> bool:
                    return not matchmaker.pending

                await until(dropped, 30, "the first lobby to drop the table")
                await asyncio.sleep(0.5)  # two more ticks
                table = (
                    await peers.tables.GetTable(
                        table_pb2.GetTableRequest(table_id=half_made),
                        metadata=_service_auth(tmp_path),
                    )
                ).table
                assert table.state == common_pb2.TABLE_STATE_PLAYING
                assert "CloseTable" not in proxy.calls and not matchmaker.unclosed

    run(scenario())


async def _matched(client: Client, guests: list[Any], tickets: list[str]) -> list[Any]:
    async def statuses() -> list[Any] | None:
        found = []
        for guest, ticket in zip(guests, tickets, strict=True):
            answer = await client.stub.GetQuickMatchStatus(
                lobby_pb2.GetQuickMatchStatusRequest(ticket_id=ticket),
                metadata=bearer(guest.tokens.access_token),
            )
            if answer.ticket.state != lobby_pb2.QUICK_MATCH_STATE_MATCHED:
                return None
            found.append(answer.ticket)
        return found

    result: list[Any] = await until(statuses, 30, "the tickets to be matched")
    return result


# ---------------------------------------------------------------------------------------------
# Lobby processes


@contextlib.asynccontextmanager
async def lobby_process(
    var_dir: Path, peers: Peers, database_url: str, **env: str
) -> AsyncIterator[Any]:
    """``okey101 serve lobby`` as a process of its own; yields (process, gRPC target)."""
    port = free_port()
    environment = {
        **os.environ,
        "OKEY_LOG_FORMAT": "json",
        "OKEY_LOG_LEVEL": "warning",
        "OKEY_VAR_DIR": str(var_dir),
        "OKEY_LOBBY_DATABASE_URL": database_url,
        "OKEY_LOBBY_TABLE_ADDRESS": peers.table.target,
        "OKEY_LOBBY_SCORING_ADDRESS": peers.scoring.target,
        "OKEY_LOBBY_METRICS_PORT": "0",
        "OKEY_LOBBY_JWKS_PORT": "0",
        # Every player of these tests calls from 127.0.0.1 (64 guests in a tournament).
        "OKEY_NEW_GUEST_LIMIT_PER_ADDRESS_PER_MINUTE": "100000",
        "OKEY_HOST_TABLE_LIMIT_PER_ADDRESS_PER_MINUTE": "100000",
        **env,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "okey101.cli", "serve", "lobby", "--port", str(port)],
        cwd=ROOT,
        env=environment,
        stderr=subprocess.DEVNULL,
    )
    try:
        await wait_serving(f"127.0.0.1:{port}", timeout=60)
        yield process, f"127.0.0.1:{port}"
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(process.wait, 30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_two_lobby_processes_share_one_queue_on_postgresql(tmp_path: Path) -> None:
    if not os.environ.get(TEST_DATABASE_ENV):
        pytest.skip(f"{TEST_DATABASE_ENV} is not set: the PostgreSQL runs are skipped")
    with postgres_database() as url:

        async def scenario() -> None:
            async with (
                peers_running(tmp_path) as peers,
                lobby_process(tmp_path, peers, url) as (_one, first),
                lobby_process(tmp_path, peers, url) as (_two, second),
            ):
                channels = [grpc.aio.insecure_channel(target) for target in (first, second)]
                stubs = [lobby_pb2_grpc.LobbyServiceStub(channel) for channel in channels]
                try:
                    guests = []
                    for index in range(12):
                        stub = stubs[index % 2]
                        guest = await stub.LoginGuest(
                                lobby_pb2.LoginGuestRequest(
                                    request_id=f"g{index}", device_id=f"device-shared-{index}",
                                    display_name=f"S{index}",
                                ),
                                timeout=30,
                            )  # fmt: skip
                        guests.append(guest)
                    joins = [
                        stubs[index % 2].JoinQuickMatch(
                            lobby_pb2.JoinQuickMatchRequest(request_id=f"j{index}"),
                            metadata=bearer(guest.tokens.access_token),
                            timeout=30,
                        )
                        for index, guest in enumerate(guests)
                    ]
                    tickets = [answer.ticket.ticket_id for answer in await asyncio.gather(*joins)]
                    database = Database(url)
                    try:

                        async def all_matched() -> list[Any] | None:
                            async with database.read() as session:
                                rows = list(await session.execute(select(queue)))
                            if any(row.state != "matched" for row in rows):
                                return None
                            return rows

                        rows = await until(all_matched, 40, "every ticket to be matched")
                    finally:
                        await database.dispose()
                    assert sorted(row.ticket_id for row in rows) == sorted(tickets)
                    by_table: dict[str, list[Any]] = {}
                    for row in rows:
                        by_table.setdefault(row.table_id, []).append(row)
                    # Three tables of four players, each ticket in exactly one, no bots.
                    assert sorted(len(group) for group in by_table.values()) == [4, 4, 4]
                    for table_id, group in by_table.items():
                        assert sorted(row.seat for row in group) == [0, 1, 2, 3]
                        found = await peers.tables.GetTable(
                            table_pb2.GetTableRequest(table_id=table_id),
                            metadata=_service_auth(tmp_path),
                        )
                        held = {seat.player_id for seat in found.table.seats}
                        assert held == {row.player_id for row in group}
                    listed = await peers.tables.ListTables(
                        table_pb2.ListTablesRequest(page_size=50),
                        metadata=_service_auth(tmp_path),
                    )
                    assert len(listed.tables) == 3
                finally:
                    for channel in channels:
                        await channel.close()

        run(scenario())


def _service_auth(var_dir: Path) -> tuple[tuple[str, str], ...]:
    token = TokenIssuer(dev_signing_key(var_dir)).issue("service:test", "service")
    return bearer(token)


# ---------------------------------------------------------------------------------------------
# A 64-player tournament


def test_a_64_player_tournament_reaches_its_winner_though_its_driver_is_killed(
    tmp_path: Path,
) -> None:
    """64 guests register; nobody plays, so after one missed turn each a bot keeps every seat
    (1-second turns); 16, then 4, then 1 table of one-hand matches. Half-way the lobby process
    holding the tournament's lease is killed (SIGKILL); the other takes over once the lease
    expires and finishes the tournament, with no table made twice."""
    base = os.environ.get(TEST_DATABASE_ENV)
    context = postgres_database() if base else contextlib.nullcontext(
        f"sqlite+aiosqlite:///{tmp_path / 'lobby.db'}"
    )  # fmt: skip
    rules = common_pb2.RuleSet()
    rules.CopyFrom(ONE_HAND)
    rules.turn_seconds = 1
    options = TableOptions(
        bot_move_seconds=0.0, next_hand_seconds=0.0, poll_seconds=0.05, watchdog_seconds=0.5,
        missed_turns_before_away=1,
    )  # fmt: skip
    with context as url:

        async def scenario() -> None:
            async with peers_running(tmp_path, options=options) as peers:
                env = {"OKEY_LOBBY_TOURNAMENT_LEASE_SECONDS": "2"}
                async with (
                    lobby_process(tmp_path, peers, url, **env) as (one, first),
                    lobby_process(tmp_path, peers, url, **env) as (two, second),
                ):
                    channel = grpc.aio.insecure_channel(first)
                    spare = grpc.aio.insecure_channel(second)
                    try:
                        await _tournament(
                            tmp_path, url, peers, rules,
                            {one.pid: one, two.pid: two}, {one.pid: channel, two.pid: spare},
                        )  # fmt: skip
                    finally:
                        await channel.close()
                        await spare.close()

        run(scenario())


async def _tournament(
    var_dir: Path,
    url: str,
    peers: Peers,
    rules: common_pb2.RuleSet,
    processes: dict[int, subprocess.Popen[bytes]],
    channels: dict[int, grpc.aio.Channel],
) -> None:
    stub: Any = lobby_pb2_grpc.LobbyServiceStub(next(iter(channels.values())))
    began = time.monotonic()
    logins = [
        stub.LoginGuest(
            lobby_pb2.LoginGuestRequest(
                request_id=f"g{index}",
                device_id=f"device-cup-{index:03}",
                display_name=f"Player {index}",
            ),
            timeout=60,
        )
        for index in range(64)
    ]
    guests = await asyncio.gather(*logins)
    service = _service_auth(var_dir)
    created = await stub.CreateTournament(
        lobby_pb2.CreateTournamentRequest(
            request_id="cup", name="Cup of 64", rules=rules, max_players=64,
            advance_per_table=1, bot_level=common_pb2.BOT_LEVEL_RANDOM,
        ),
        metadata=service,
    )  # fmt: skip
    tid = created.tournament.tournament_id
    assert created.tournament.creator_player_id == ""
    await asyncio.gather(
        *(
            stub.RegisterForTournament(
                lobby_pb2.RegisterForTournamentRequest(request_id="reg", tournament_id=tid),
                metadata=bearer(guest.tokens.access_token),
                timeout=60,
            )
            for guest in guests
        )
    )
    started = await stub.StartTournament(
        lobby_pb2.StartTournamentRequest(request_id="go", tournament_id=tid), metadata=service
    )
    assert started.tournament.state == lobby_pb2.TOURNAMENT_STATE_RUNNING
    database = Database(url)
    try:

        async def lease() -> Any:
            async with database.read() as session:
                return (
                    await session.execute(
                        select(tournament_leases).where(tournament_leases.c.tournament_id == tid)
                    )
                ).one_or_none()

        async def round_two() -> bool:
            answer = await stub.GetTournament(
                lobby_pb2.GetTournamentRequest(tournament_id=tid), metadata=service
            )
            return bool(answer.tournament.current_round >= 2)

        await until(round_two, 90, "round 1 to end")
        held = await lease()
        assert held is not None and held.holder
        victim = int(held.holder.split(":")[1])
        processes[victim].send_signal(signal.SIGKILL)
        processes[victim].wait(timeout=10)
        killed_at = time.monotonic()
        # Whatever the victim served, the other lobby serves now.
        survivor: Any = lobby_pb2_grpc.LobbyServiceStub(
            next(served for pid, served in channels.items() if pid != victim)
        )

        async def finished() -> Any:
            answer = await survivor.GetTournament(
                lobby_pb2.GetTournamentRequest(tournament_id=tid), metadata=service
            )
            if answer.tournament.state == lobby_pb2.TOURNAMENT_STATE_FINISHED:
                return answer.tournament
            return None

        tournament = await until(finished, 120, "the tournament to finish")
        taken = await lease()
        async with database.read() as session:
            tables = list(
                await session.execute(
                    select(tournament_tables).where(tournament_tables.c.tournament_id == tid)
                )
            )
    finally:
        await database.dispose()
    assert taken is None  # a finished tournament holds no lease
    # Only the survivor can have finished it: the victim is dead.
    assert processes[victim].returncode == -signal.SIGKILL
    assert all(process.poll() is None for pid, process in processes.items() if pid != victim)
    assert time.monotonic() - killed_at < 120
    assert [len(item.table_ids) for item in tournament.rounds] == [16, 4, 1]
    assert [item.tables_finished for item in tournament.rounds] == [16, 4, 1]
    ids = [table_id for item in tournament.rounds for table_id in item.table_ids]
    assert len(set(ids)) == 21
    assert all(row.state == "finished" for row in tables) and len(tables) == 21
    # The table service made exactly these tables for the tournament: none twice.
    listed = await peers.tables.ListTables(
        table_pb2.ListTablesRequest(tournament_id=tid, page_size=200), metadata=service
    )
    assert sorted(table.table_id for table in listed.tables) == sorted(ids)
    players = {guest.player.player_id for guest in guests}
    assert tournament.winner_player_id in players
    standings = await survivor.GetTournamentStandings(
        lobby_pb2.GetTournamentStandingsRequest(tournament_id=tid, page_size=500),
        metadata=service,
    )
    lines = standings.standings
    assert [line.rank for line in lines] == list(range(1, 65))
    assert lines[0].player_id == tournament.winner_player_id
    assert [line.round_reached for line in lines[:4]] == [3, 3, 3, 3]
    assert sum(1 for line in lines if line.round_reached == 2) == 12
    assert sum(1 for line in lines if line.round_reached == 1) == 48
    assert sum(1 for line in lines if not line.eliminated) == 1
    # The final table: its seats were the four players who won their round-2 tables.
    final = await peers.tables.GetTable(
        table_pb2.GetTableRequest(table_id=tournament.rounds[2].table_ids[0]), metadata=service
    )
    assert {seat.player_id for seat in final.table.seats} == {line.player_id for line in lines[:4]}
    # Scoring knows each table's round: its standings of round 3 are the final table's players.
    scoring: Any = scoring_pb2_grpc.ScoringServiceStub(peers.channel_to_scoring)
    by_round = await scoring.GetStandings(
        scoring_pb2.GetStandingsRequest(tournament_id=tid, round=3), metadata=service
    )
    finalists = {line.player_id for line in by_round.standings if line.player_id}
    assert finalists == {line.player_id for line in lines[:4]}
    assert time.monotonic() - began < 240


# ---------------------------------------------------------------------------------------------
# Cancelling a tournament


def test_cancel_tournament_closes_its_tables_keeps_its_standings_and_only_its_creator_may(
    tmp_path: Path,
) -> None:
    """Five guests in a tournament of three-hand matches; round 1 seats them at two tables, which
    stay in play (nobody moves). Another player may not cancel it; its creator does: both tables
    are closed by the table service, no round 2 is ever planned, the standings still answer as
    they stood, and cancelling again changes nothing. A service cancels a tournament still
    registering; bad and unknown ids are refused."""
    rules = common_pb2.RuleSet(
        preset=common_pb2.RULE_PRESET_BOOMBALA,
        match_end=common_pb2.MATCH_END_FIXED_HANDS,
        match_hands=3,
    )

    async def scenario() -> None:
        async with (
            peers_running(tmp_path) as peers,
            lobby_client(lobby_for(tmp_path, peers)) as client,
        ):
            stub = client.stub
            service = _service_auth(tmp_path)
            guests = [await client.guest(name=f"T{index}") for index in range(5)]
            await make_organiser(stub, guests[0], service)
            creator, other = (
                bearer(guests[0].tokens.access_token),
                bearer(guests[1].tokens.access_token),
            )
            created = await stub.CreateTournament(
                lobby_pb2.CreateTournamentRequest(
                    request_id="cup", name="Cup", rules=rules, max_players=8
                ),
                metadata=creator,
            )
            tid = created.tournament.tournament_id
            for guest in guests:
                await stub.RegisterForTournament(
                    lobby_pb2.RegisterForTournamentRequest(request_id="r", tournament_id=tid),
                    metadata=bearer(guest.tokens.access_token),
                )
            await stub.StartTournament(
                lobby_pb2.StartTournamentRequest(request_id="go", tournament_id=tid),
                metadata=creator,
            )

            async def seated() -> Any:
                answer = await stub.GetTournament(
                    lobby_pb2.GetTournamentRequest(tournament_id=tid), metadata=service
                )
                rounds = answer.tournament.rounds
                return list(rounds[0].table_ids) if rounds and len(rounds[0].table_ids) == 2 else []

            table_ids = await until(seated, 30, "round 1's tables to start")

            async def states() -> list[int]:
                return [
                    (
                        await peers.tables.GetTable(
                            table_pb2.GetTableRequest(table_id=table_id), metadata=service
                        )
                    ).table.state
                    for table_id in table_ids
                ]

            assert await states() == [common_pb2.TABLE_STATE_PLAYING] * 2
            before = await stub.GetTournamentStandings(
                lobby_pb2.GetTournamentStandingsRequest(tournament_id=tid), metadata=service
            )

            denied = await refused(
                stub.CancelTournament(
                    lobby_pb2.CancelTournamentRequest(request_id="no", tournament_id=tid),
                    metadata=other,
                )
            )
            assert (denied.code, denied.reason) == (
                grpc.StatusCode.PERMISSION_DENIED,
                "NOT_TOURNAMENT_CREATOR",
            )
            assert denied.message and await states() == [common_pb2.TABLE_STATE_PLAYING] * 2

            cancelled = await stub.CancelTournament(
                lobby_pb2.CancelTournamentRequest(
                    request_id="stop", tournament_id=tid, reason="the venue closed"
                ),
                metadata=creator,
            )
            assert cancelled.tournament.state == lobby_pb2.TOURNAMENT_STATE_CANCELLED
            assert list(cancelled.tournament.rounds[0].table_ids) == table_ids
            assert await states() == [common_pb2.TABLE_STATE_CLOSED] * 2
            await asyncio.sleep(1.5)  # three driver ticks: nothing more is planned or made
            listed = await peers.tables.ListTables(
                table_pb2.ListTablesRequest(tournament_id=tid, page_size=50), metadata=service
            )
            assert sorted(table.table_id for table in listed.tables) == sorted(table_ids)
            after = await stub.GetTournament(
                lobby_pb2.GetTournamentRequest(tournament_id=tid), metadata=service
            )
            assert after.tournament.state == lobby_pb2.TOURNAMENT_STATE_CANCELLED
            assert after.tournament.current_round == 1 and len(after.tournament.rounds) == 1
            kept = await stub.GetTournamentStandings(
                lobby_pb2.GetTournamentStandingsRequest(tournament_id=tid), metadata=service
            )
            assert kept == before and len(kept.standings) == 5
            assert {line.round_reached for line in kept.standings} == {1}
            listed_cancelled = await stub.ListTournaments(
                lobby_pb2.ListTournamentsRequest(states=[lobby_pb2.TOURNAMENT_STATE_CANCELLED]),
                metadata=service,
            )
            assert [t.tournament_id for t in listed_cancelled.tournaments] == [tid]
            again = await stub.CancelTournament(
                lobby_pb2.CancelTournamentRequest(request_id="stop-2", tournament_id=tid),
                metadata=service,
            )
            assert again.tournament == cancelled.tournament
            registering = await stub.CreateTournament(
                lobby_pb2.CreateTournamentRequest(
                    request_id="later", name="Later", rules=rules, max_players=4
                ),
                metadata=service,
            )
            gone = await stub.CancelTournament(
                lobby_pb2.CancelTournamentRequest(
                    request_id="x", tournament_id=registering.tournament.tournament_id
                ),
                metadata=service,
            )
            assert gone.tournament.state == lobby_pb2.TOURNAMENT_STATE_CANCELLED
            late = await refused(
                stub.RegisterForTournament(
                    lobby_pb2.RegisterForTournamentRequest(
                        request_id="r-late", tournament_id=registering.tournament.tournament_id
                    ),
                    metadata=other,
                )
            )
            assert late.reason == "TOURNAMENT_NOT_REGISTERING"
            for tournament_id, code, reason in (
                ("", grpc.StatusCode.INVALID_ARGUMENT, "FIELD_REQUIRED"),
                ("t-nothing", grpc.StatusCode.NOT_FOUND, "TOURNAMENT_NOT_FOUND"),
            ):
                bad = await refused(
                    stub.CancelTournament(
                        lobby_pb2.CancelTournamentRequest(
                            request_id="bad", tournament_id=tournament_id
                        ),
                        metadata=service,
                    )
                )
                assert (bad.code, bad.reason) == (code, reason) and bad.message

    run(scenario())


# ---------------------------------------------------------------------------------------------
# One lobby, two table processes


def test_a_lobby_given_two_table_processes_hosts_tables_while_one_is_down(
    tmp_path: Path,
) -> None:
    """``--table-address ipv4:127.0.0.1:A,127.0.0.1:B`` names two table processes on one
    PostgreSQL database (docs/configuration.md), which the lobby's channel balances over: with
    the first killed (SIGKILL) HostTable goes on being served by the other, each call answered
    the first time or after a retry with its request id, with one table each, started. (Given
    only the first address, the same run fails: nothing serves the lobby.)"""
    from support.table_process import table_process

    if not os.environ.get(TEST_DATABASE_ENV):
        pytest.skip(f"{TEST_DATABASE_ENV} is not set: two table processes need PostgreSQL")

    async def host(client: Client, guest: Any) -> str:
        request = lobby_pb2.HostTableRequest(
            request_id=uuid.uuid4().hex,
            rules=ONE_HAND,
            bots=[lobby_pb2.BotSeat(seat=seat) for seat in (1, 2, 3)],
            start_when_full=True,
        )
        for _attempt in range(20):
            try:
                answer = await client.stub.HostTable(
                    request, metadata=bearer(guest.tokens.access_token), timeout=30
                )
                return str(answer.table.table_id)
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
                await asyncio.sleep(0.5)
        raise AssertionError("HostTable was never served")

    async def scenario() -> None:
        async with peer_services(tmp_path) as services:
            with (
                table_process(tmp_path, url, services) as (first, one),
                table_process(tmp_path, url, services) as (_second, two),
            ):
                await wait_serving(one, timeout=60)
                await wait_serving(two, timeout=60)
                target = f"ipv4:{one},{two}"
                settings = lobby_settings(
                    tmp_path, table_address=target, scoring_address=services[2].target
                )
                async with lobby_client(settings) as client:
                    guests = [await client.guest(name=f"Host {index}") for index in range(6)]
                    tables = [await host(client, guest) for guest in guests[:2]]
                    first.send_signal(signal.SIGKILL)
                    await asyncio.to_thread(first.wait, 10)
                    tables += [await host(client, guest) for guest in guests[2:]]
                    service = _service_auth(tmp_path)
                    async with grpc.aio.insecure_channel(two) as channel:
                        survivor: Any = table_pb2_grpc.TableServiceStub(channel)
                        for guest, table_id in zip(guests, tables, strict=True):
                            listed = await survivor.ListTables(
                                table_pb2.ListTablesRequest(player_id=guest.player.player_id),
                                metadata=service,
                            )
                            assert [table.table_id for table in listed.tables] == [table_id]
                            assert listed.tables[0].state != common_pb2.TABLE_STATE_WAITING

    with postgres_database("okey_twotables") as url:
        run(scenario())
