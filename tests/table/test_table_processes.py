"""The table service as separate processes (``okey101 serve table``), beside the real rules, bot
and scoring services: two table processes sharing one database, and a table process killed with
SIGKILL in the middle of a hand and started again.

Clients here are the test's own: four players who decide with the engine's bot from their view
(seeded by the turn, so a replay decides the same) and act through the public API, retrying a
call that found no server with the same request id, as a real client would.
"""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from okey.v1 import common_pb2, table_pb2, table_pb2_grpc

from okey101.engine.bots.entry_points import decide
from okey101.engine.bots.levels import BotLevel
from okey101.engine.deal import deal
from okey101.engine.hand import apply
from okey101.engine.tiles import tile_by_id
from okey101.platform import convert
from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.stack import wait_serving

from support.databases import TEST_DATABASE_ENV, postgres_database
from support.service_stack import peer_services
from support.status import details
from support.table_process import table_process

pytestmark = pytest.mark.slow
PLAYERS = ("ada", "bea", "cem", "deniz")
BOT = common_pb2.OCCUPANT_KIND_BOT
ACTIVE = (common_pb2.PHASE_FIRST, common_pb2.PHASE_DRAW, common_pb2.PHASE_PLAY)


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'table.db'}"
        return
    with postgres_database("okey_tableproc") as url:
        yield url


@pytest.fixture
def postgres() -> Iterator[str]:
    if not os.environ.get(TEST_DATABASE_ENV):
        pytest.skip(f"{TEST_DATABASE_ENV} is not set: two pods need PostgreSQL")
    with postgres_database("okey_tablepods") as url:
        yield url


@dataclass
class Endpoint:
    """Where clients find a table service now (a load balancer's job in a cluster)."""

    target: str
    channels: dict[str, grpc.aio.Channel] = field(default_factory=dict)

    def stub(self, target: str | None = None) -> Any:
        target = target or self.target
        if target not in self.channels:
            self.channels[target] = grpc.aio.insecure_channel(target)
        return table_pb2_grpc.TableServiceStub(self.channels[target])

    async def close(self) -> None:
        for channel in self.channels.values():
            await channel.close()


class Clients:
    def __init__(self, var_dir: Path) -> None:
        self.issuer = TokenIssuer(dev_signing_key(var_dir))

    def auth(self, subject: str, kind: str = "player") -> Any:
        return (("authorization", f"Bearer {self.issuer.issue(subject, kind)}"),)  # type: ignore[arg-type]


async def retrying(call: Any, request: Any, metadata: Any, endpoint: Endpoint) -> Any:
    """``call`` again (same request) while no table service answers."""
    for _ in range(600):
        try:
            return await call(endpoint.stub())(request, metadata=metadata, timeout=5)
        except grpc.aio.AioRpcError as error:
            if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise
            await asyncio.sleep(0.05)
    raise AssertionError("no table service came back")


def seeded_actions(view: common_pb2.SeatView) -> list[common_pb2.Action]:
    engine_view = convert.seat_view_from_proto(view)
    seed = view.turn_number * 8 + view.phase
    decision = decide(engine_view, convert.rules_from_proto(view.rules), BotLevel.NORMAL, seed)
    return [convert.action_to_proto(action) for action in decision.actions]


async def play_hand(
    endpoint: Endpoint, clients: Clients, table_id: str, seat: int, moved: list[int]
) -> None:
    """Play ``seat`` until hand 1 has ended."""
    auth = clients.auth(PLAYERS[seat])
    while True:
        view = (
            await retrying(
                lambda stub: stub.GetSeatView,
                table_pb2.GetSeatViewRequest(table_id=table_id, seat=seat),
                auth,
                endpoint,
            )
        ).view
        if view.phase == common_pb2.PHASE_ENDED or view.hand_number > 1:
            return
        if view.phase not in ACTIVE or view.turn != seat:
            await asyncio.sleep(0.01)
            continue
        request = table_pb2.ActRequest(
            request_id=uuid.uuid4().hex,
            table_id=table_id,
            seat=seat,
            actions=seeded_actions(view),
            expected_state_version=view.state_version,
        )
        try:
            await retrying(lambda stub: stub.Act, request, auth, endpoint)
            moved.append(seat)
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.ABORTED:
                continue  # the table moved on since the view: look again
            # The view came from the other pod's copy, which had not yet seen another seat end
            # the hand (and so the one-hand match): the move is refused for that, and is done.
            info, _message = details(error)
            if error.code() == grpc.StatusCode.FAILED_PRECONDITION and info.reason == (
                "TABLE_FINISHED"
            ):
                return
            raise


async def new_table(endpoint: Endpoint, clients: Clients, rules: common_pb2.RuleSet) -> str:
    stub = endpoint.stub()
    service = clients.auth("test-lobby", "service")
    table = (
        await stub.CreateTable(
            table_pb2.CreateTableRequest(request_id=uuid.uuid4().hex, rules=rules),
            metadata=service,
        )
    ).table
    for seat, player in enumerate(PLAYERS):
        await stub.Sit(
            table_pb2.SitRequest(request_id=f"sit-{player}", table_id=table.table_id, seat=seat),
            metadata=clients.auth(player),
        )
    await stub.Start(
        table_pb2.StartRequest(request_id="start", table_id=table.table_id), metadata=service
    )
    return table.table_id


def replay_uninterrupted(record: table_pb2.HandRecord) -> tuple[list[tuple[int, bytes]], Any]:
    """The same deal played by the same deciders with nothing killed: its moves and result."""
    rules = convert.rules_from_proto(record.rules)
    state = deal(rules, record.dealer, [tile_by_id(i) for i in record.deck_tile_ids])
    moves: list[tuple[int, bytes]] = []
    while state.result is None:
        seat = state.turn
        view = convert.seat_view_to_proto(state, seat)
        for action in seeded_actions(view):
            moves.append((seat, action.SerializeToString(deterministic=True)))
            state, _ = apply(state, seat, convert.action_from_proto(action))
    return moves, convert.hand_result_to_proto(state.result, state)


async def all_events(
    endpoint: Endpoint, target: str, auth: Any, table_id: str, count: int
) -> list[Any]:
    call = endpoint.stub(target).WatchTable(
        table_pb2.WatchTableRequest(table_id=table_id, after_sequence=0), metadata=auth
    )
    events = []
    try:
        async for item in call:
            events.append(item.event)
            if len(events) == count:
                break
    finally:
        call.cancel()
    return events


def test_a_table_process_killed_mid_hand_loses_nothing(database: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        clients = Clients(tmp_path)
        async with peer_services(tmp_path) as peers:
            with table_process(tmp_path, database, peers) as (first, target):
                await wait_serving(target)
                endpoint = Endpoint(target)
                table_id = await new_table(endpoint, clients, _one_hand())
                moved: list[int] = []
                players = [
                    asyncio.ensure_future(play_hand(endpoint, clients, table_id, seat, moved))
                    for seat in range(4)
                ]
                while len(moved) < 12:
                    await asyncio.sleep(0.01)
                first.send_signal(signal.SIGKILL)
                first.wait()
                await asyncio.sleep(0.3)
                with table_process(tmp_path, database, peers) as (_second, target2):
                    endpoint.target = target2
                    await wait_serving(target2)
                    await asyncio.wait_for(asyncio.gather(*players), 120)
                    service = clients.auth("test-lobby", "service")
                    record = (
                        await endpoint.stub().GetHandRecord(
                            table_pb2.GetHandRecordRequest(hand_id=f"{table_id}-h1"),
                            metadata=service,
                        )
                    ).record
                    table = (
                        await endpoint.stub().GetTable(
                            table_pb2.GetTableRequest(table_id=table_id), metadata=service
                        )
                    ).table
                    events = await all_events(
                        endpoint, target2, service, table_id, table.last_sequence
                    )
                await endpoint.close()
        expected_moves, expected_result = replay_uninterrupted(record)
        played = [(m.seat, m.action.SerializeToString(deterministic=True)) for m in record.moves]
        assert played == expected_moves  # no move lost, none applied twice
        assert record.result == expected_result
        assert [e.sequence for e in events] == list(range(1, table.last_sequence + 1))
        assert len({e.SerializeToString() for e in events}) == len(events)
        assert events[-1].kind in (
            common_pb2.EVENT_KIND_HAND_ENDED,
            common_pb2.EVENT_KIND_MATCH_ENDED,
        )

    asyncio.run(scenario())


def _one_hand() -> common_pb2.RuleSet:
    return common_pb2.RuleSet(
        preset=common_pb2.RULE_PRESET_OYNA,
        match_end=common_pb2.MATCH_END_FIXED_HANDS,
        match_hands=1,
    )


def test_two_table_processes_share_a_table_and_every_watcher_sees_every_event_once(
    postgres: str, tmp_path: Path
) -> None:
    async def scenario() -> None:
        clients = Clients(tmp_path)
        async with peer_services(tmp_path) as peers:
            with (
                table_process(tmp_path, postgres, peers) as (_a, target_a),
                table_process(tmp_path, postgres, peers) as (_b, target_b),
            ):
                await wait_serving(target_a)
                await wait_serving(target_b)
                endpoint = Endpoint(target_a)
                table_id = await new_table(endpoint, clients, _one_hand())
                service = clients.auth("test-lobby", "service")
                # Watchers on both pods, from the start.
                watched: dict[str, list[Any]] = {target_a: [], target_b: []}

                async def watch(target: str) -> None:
                    call = endpoint.stub(target).WatchTable(
                        table_pb2.WatchTableRequest(table_id=table_id, seat=0), metadata=service
                    )
                    async for item in call:
                        watched[target].append(item.event)
                        if item.event.kind == common_pb2.EVENT_KIND_MATCH_ENDED:
                            return

                watchers = [asyncio.ensure_future(watch(t)) for t in (target_a, target_b)]
                # Moves alternate between the pods: each client flips its target every call.
                moved: list[int] = []
                flip = {"n": 0}

                class Alternating(Endpoint):
                    def stub(self, target: str | None = None) -> Any:
                        if target is None:
                            flip["n"] += 1
                            target = (target_a, target_b)[flip["n"] % 2]
                        return super().stub(target)

                alternating = Alternating(target_a)
                await asyncio.wait_for(
                    asyncio.gather(
                        *(play_hand(alternating, clients, table_id, s, moved) for s in range(4))
                    ),
                    120,
                )
                await asyncio.wait_for(asyncio.gather(*watchers), 30)
                await alternating.close()
                await endpoint.close()
        seen_a, seen_b = watched[target_a], watched[target_b]
        assert [e.sequence for e in seen_a] == list(range(1, len(seen_a) + 1))
        assert [e.SerializeToString() for e in seen_a] == [e.SerializeToString() for e in seen_b]
        # Moves went through both pods (a hand may end early, so no more is asked of it).
        assert len(moved) >= 4

    asyncio.run(scenario())


def replayed_result(record: table_pb2.HandRecord) -> Any:
    """The result of the record's moves applied in order from its deal (a move applied twice,
    or one missing, would be refused on the way or give another result)."""
    rules = convert.rules_from_proto(record.rules)
    state = deal(rules, record.dealer, [tile_by_id(i) for i in record.deck_tile_ids])
    for move in record.moves:
        state, _ = apply(state, move.seat, convert.action_from_proto(move.action))
    assert state.result is not None
    return convert.hand_result_to_proto(state.result, state)


def test_the_process_that_served_a_table_from_memory_killed_another_carries_on(
    postgres: str, tmp_path: Path
) -> None:
    """Two table processes on one database. Tables of two players and two of the table's bots
    are created and played through the first, which keeps them live in its memory and holds
    their timers (the bots' steps). It is killed (SIGKILL) mid-hand; the players turn to the
    second, which rebuilds each table from the database (its snapshot and the moves since),
    takes over the timers the dead one held once their lease has run out, and plays on: every
    hand ends, its log numbered with no gap or repeat, its record replaying to its result, and
    every move a player was answered for is in it once."""
    lease = {"OKEY_TABLE_TIMER_LEASE_SECONDS": "1"}
    one_hand = _one_hand()

    async def play_seat(
        endpoint: Endpoint, table_id: str, seat: int, answered: list[bytes]
    ) -> None:
        auth = clients.auth(PLAYERS[seat])
        while True:
            view = (
                await retrying(
                    lambda stub: stub.GetSeatView,
                    table_pb2.GetSeatViewRequest(table_id=table_id, seat=seat),
                    auth,
                    endpoint,
                )
            ).view
            if view.phase == common_pb2.PHASE_ENDED or view.hand_number > 1:
                return
            if view.phase not in ACTIVE or view.turn != seat:
                await asyncio.sleep(0.01)
                continue
            actions = seeded_actions(view)
            request = table_pb2.ActRequest(
                request_id=uuid.uuid4().hex, table_id=table_id, seat=seat, actions=actions,
                expected_state_version=view.state_version,
            )  # fmt: skip
            try:
                await retrying(lambda stub: stub.Act, request, auth, endpoint)
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.ABORTED:
                    raise
                continue
            answered.extend(action.SerializeToString(deterministic=True) for action in actions)

    clients = Clients(tmp_path)

    async def scenario() -> tuple[list[table_pb2.HandRecord], dict[tuple[str, int], list[bytes]]]:
        service = clients.auth("test-lobby", "service")
        async with peer_services(tmp_path) as peers:
            with (
                table_process(tmp_path, postgres, peers, **lease) as (first, target_a),
                table_process(tmp_path, postgres, peers, **lease) as (_second, target_b),
            ):
                await wait_serving(target_a)
                await wait_serving(target_b)
                endpoint = Endpoint(target_a)
                stub = endpoint.stub()
                table_ids = []
                for _ in range(3):
                    table = (
                        await stub.CreateTable(
                            table_pb2.CreateTableRequest(
                                request_id=uuid.uuid4().hex, rules=one_hand,
                                seats=[table_pb2.SeatSetup(seat=s, kind=BOT) for s in (2, 3)],
                            ),
                            metadata=service,
                        )
                    ).table  # fmt: skip
                    for seat in (0, 1):
                        await stub.Sit(
                            table_pb2.SitRequest(
                                request_id=f"sit-{seat}-{table.table_id}",
                                table_id=table.table_id,
                                seat=seat,
                            ),
                            metadata=clients.auth(PLAYERS[seat]),
                        )
                    await stub.Start(
                        table_pb2.StartRequest(
                            request_id=f"go-{table.table_id}", table_id=table.table_id
                        ),
                        metadata=service,
                    )
                    table_ids.append(table.table_id)
                answered = {(t, seat): [] for t in table_ids for seat in (0, 1)}
                players = [
                    asyncio.ensure_future(play_seat(endpoint, t, seat, answered[t, seat]))
                    for t, seat in answered
                ]
                while min(len(moves) for moves in answered.values()) < 3:
                    await asyncio.sleep(0.01)
                first.send_signal(signal.SIGKILL)
                first.wait()
                endpoint.target = target_b
                await asyncio.wait_for(asyncio.gather(*players), 180)
                records = [
                    (
                        await endpoint.stub().GetHandRecord(
                            table_pb2.GetHandRecordRequest(hand_id=f"{t}-h1"), metadata=service
                        )
                    ).record
                    for t in table_ids
                ]
                for table_id in table_ids:
                    table = (
                        await endpoint.stub().GetTable(
                            table_pb2.GetTableRequest(table_id=table_id), metadata=service
                        )
                    ).table
                    events = await all_events(
                        endpoint, target_b, service, table_id, table.last_sequence
                    )
                    assert [e.sequence for e in events] == list(range(1, table.last_sequence + 1))
                    assert len({e.SerializeToString() for e in events}) == len(events)
                await endpoint.close()
        return records, answered

    records, answered = asyncio.run(scenario())
    for record in records:
        assert replayed_result(record) == record.result
        for seat in (0, 1):
            # Every move the seat's player was answered for is in the record, once, in order,
            # and none that was not: a call cut by the kill was retried, and answered, with its
            # id (the two players' answers may arrive in another order than their moves).
            theirs = [
                m.action.SerializeToString(deterministic=True)
                for m in record.moves
                if m.seat == seat
            ]
            assert theirs == answered[record.table_id, seat]
        bots = [m for m in record.moves if m.seat >= 2]
        assert len(bots) > 6  # the bots played too, before and after the kill


def test_a_view_asked_with_min_sequence_is_never_older_than_the_event_seen(
    tmp_path: Path,
) -> None:
    """Two table processes on one SQLite file, where no notification tells one of the other's
    writes (on PostgreSQL one may just be late: issue #32's frozen tables). Process B has a
    table loaded; the seat to move acts on A. Asked plainly, B answers from its copy, a turn
    behind; asked with ``min_sequence`` (the last event the client saw, as a stream-led client
    does), B reads the table again and answers with the move in it; a sequence the table has
    not reached is INVALID_ARGUMENT SEQUENCE_AHEAD."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'table.db'}"

    async def scenario() -> None:
        clients = Clients(tmp_path)
        async with peer_services(tmp_path) as peers:
            with table_process(tmp_path, url, peers) as (_a, target_a):
                await wait_serving(target_a)
                with table_process(tmp_path, url, peers) as (_b, target_b):
                    await wait_serving(target_b)
                    endpoint = Endpoint(target_a)
                    table_id = await new_table(endpoint, clients, _one_hand())
                    first = (
                        await endpoint.stub(target_b).GetSeatView(
                            table_pb2.GetSeatViewRequest(table_id=table_id),
                            metadata=clients.auth("test-lobby", "service"),
                        )
                    ).view
                    seat = first.turn
                    auth = clients.auth(PLAYERS[seat])
                    view = (
                        await endpoint.stub(target_a).GetSeatView(
                            table_pb2.GetSeatViewRequest(table_id=table_id, seat=seat),
                            metadata=auth,
                        )
                    ).view
                    acted = await endpoint.stub(target_a).Act(
                        table_pb2.ActRequest(
                            request_id=uuid.uuid4().hex,
                            table_id=table_id,
                            seat=seat,
                            actions=seeded_actions(view),
                            expected_state_version=view.state_version,
                        ),
                        metadata=auth,
                    )
                    seen = acted.view.as_of_sequence
                    assert seen > first.as_of_sequence

                    async def on_b(min_sequence: int) -> common_pb2.SeatView:
                        answer = await endpoint.stub(target_b).GetSeatView(
                            table_pb2.GetSeatViewRequest(
                                table_id=table_id, seat=seat, min_sequence=min_sequence
                            ),
                            metadata=auth,
                        )
                        return answer.view  # type: ignore[no-any-return]

                    stale = await on_b(0)
                    assert stale.as_of_sequence == first.as_of_sequence
                    fresh = await on_b(seen)
                    assert fresh.as_of_sequence >= seen
                    assert fresh.state_version == acted.view.state_version
                    assert fresh.turn == acted.view.turn
                    with pytest.raises(grpc.aio.AioRpcError) as caught:
                        await on_b(fresh.as_of_sequence + 100)
                    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                    assert details(caught.value)[0].reason == "SEQUENCE_AHEAD"
                    await endpoint.close()

    asyncio.run(scenario())
