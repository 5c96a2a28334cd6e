"""Abuse at the table, over real gRPC (``support.abuse``): acting out of turn, for another
seat, at a finished or closed table, with another table's request id or another player's, on a
stale version, and a flood of moves from one client.

Every refusal is checked as common.proto says refusals end (status, one ErrorInfo, one sentence
in the request's language) and against the state: the tables (every Table message, so
state_version and last_sequence) read the same before and after.

The limiter (``okey101.table.limits``) is tested on its own first, with a clock the test moves.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import pytest
from okey.v1 import common_pb2, table_pb2

from okey101.platform.errors import ResourceExhausted, status_code_of
from okey101.table.limits import (
    BURST_ENV,
    PER_SECOND_ENV,
    RECENT_REQUESTS,
    ActLimit,
    ActLimiter,
)

from support.abuse import Outcome, World, a_discard, act, check_refusal, open_world, view_of
from support.tables import one_hand_rules


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_bucket_lets_a_burst_through_then_the_rate_and_tells_when_to_retry() -> None:
    clock = Clock()
    limiter = ActLimiter(ActLimit(burst=5, per_second=2.0), clock=clock)
    for _ in range(5):
        limiter.check("ada", "t-1")
    with pytest.raises(ResourceExhausted) as caught:
        limiter.check("ada", "t-1")
    error = caught.value
    assert error.code == "RATE_LIMITED" and status_code_of(error).name == "RESOURCE_EXHAUSTED"
    assert error.params == {"retry_after_ms": 500, "action": "act"}
    assert "Too many requests" in error.message("en") and "Çok fazla" in error.message("tr")
    # Other tables and other players have buckets of their own.
    limiter.check("ada", "t-2")
    limiter.check("bea", "t-1")
    # Refused calls do not push the retry further off; the time told is enough.
    clock.now += 0.25
    with pytest.raises(ResourceExhausted) as again:
        limiter.check("ada", "t-1")
    assert again.value.params["retry_after_ms"] == 250
    clock.now += 0.25
    limiter.check("ada", "t-1")
    with pytest.raises(ResourceExhausted):
        limiter.check("ada", "t-1")
    # A long pause refills the bucket to the burst, no further.
    clock.now += 3600
    for _ in range(5):
        limiter.check("ada", "t-1")
    with pytest.raises(ResourceExhausted):
        limiter.check("ada", "t-1")


def test_the_rate_holds_over_time_and_forgotten_buckets_start_full() -> None:
    clock = Clock()
    limiter = ActLimiter(ActLimit(burst=3, per_second=10.0, max_buckets=2), clock=clock)
    let_through = 0
    for _ in range(1000):  # a client trying every millisecond for a second
        clock.now += 0.001
        try:
            limiter.check("ada", "t-1")
            let_through += 1
        except ResourceExhausted:
            pass
    assert 3 + 9 <= let_through <= 3 + 10
    limiter.check("bea", "t-1")
    limiter.check("cem", "t-1")  # ada's bucket, the least recently used, is forgotten
    for _ in range(3):
        limiter.check("ada", "t-1")


def test_a_retried_move_is_not_counted_again() -> None:
    """A client retrying a move (its answer lost, or UNAVAILABLE) sends the same request id:
    the bucket takes nothing for it, however often, while it is one of the last few let
    through. A request the limit refused was not counted, so it is not remembered either."""
    clock = Clock()
    limiter = ActLimiter(ActLimit(burst=2, per_second=1.0), clock=clock)
    limiter.check("ada", "t-1", "move-1")
    for _ in range(10):
        limiter.check("ada", "t-1", "move-1")
    limiter.check("ada", "t-1", "move-2")
    limiter.check("ada", "t-1", "move-1")
    with pytest.raises(ResourceExhausted):
        limiter.check("ada", "t-1", "move-3")
    with pytest.raises(ResourceExhausted):
        limiter.check("ada", "t-1", "move-3")  # refused, so not let through next time
    clock.now += 1.0
    limiter.check("ada", "t-1", "move-3")
    limiter.check("ada", "t-1", "move-2")  # still remembered
    with pytest.raises(ResourceExhausted):
        limiter.check("ada", "t-1", "move-4")
    # Only the latest few are remembered: an old id is a new call.
    for index in range(5, 5 + RECENT_REQUESTS):
        clock.now += 1.0
        limiter.check("ada", "t-1", f"move-{index}")
    with pytest.raises(ResourceExhausted):
        limiter.check("ada", "t-1", "move-1")


def test_the_limit_is_configured_from_the_environment_and_zero_turns_it_off() -> None:
    assert ActLimit.from_environ({}) == ActLimit()
    assert ActLimit.from_environ({BURST_ENV: "7", PER_SECOND_ENV: "1.5"}) == ActLimit(7, 1.5)
    for bad in (
        {BURST_ENV: "0"},
        {PER_SECOND_ENV: "-1"},
        {BURST_ENV: "x"},
        {PER_SECOND_ENV: "inf"},
    ):
        with pytest.raises(ValueError):
            ActLimit.from_environ(bad)
    off = ActLimiter(ActLimit.from_environ({PER_SECOND_ENV: "0"}), clock=Clock())
    for _ in range(10_000):
        off.check("ada", "t-1")


# ---------------------------------------------------------------------------------------------
# Over real gRPC


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with open_world(tmp_path_factory.mktemp("abuse-play")) as opened:
        yield opened


def refused(
    world: World,
    method: str,
    request: Any,
    metadata: tuple[tuple[str, str], ...],
    code: grpc.StatusCode,
    reason: str | None = None,
) -> Outcome:
    """A table call that must be refused with ``code`` (and ``reason``) and change nothing."""
    before = world.snapshot("table")
    outcome = world.call("table", method, request, metadata)
    what = f"{method} {request}"
    assert outcome.code == code, f"{what}: {outcome}"
    if reason is not None:
        assert outcome.reason == reason, f"{what}: {outcome}"
    check_refusal(outcome, request, what)
    assert world.snapshot("table") == before, f"{what}: refused, yet the tables changed"
    return outcome


def test_moves_out_of_turn_are_refused_and_change_nothing(world: World) -> None:
    world.ensure_fixtures()
    live = world.tables["live"]
    turn, _ = world.seat_to_move()
    for seat in range(4):
        if seat == turn:
            continue
        guest = world.guests[seat]
        view = view_of(world, live, seat, guest)
        draw = common_pb2.Action(draw=common_pb2.DrawAction())
        for actions in ([draw], [a_discard(view)], [draw, a_discard(view)]):
            request = act(live, seat, view, actions=actions, locale="tr")
            outcome = refused(
                world, "Act", request, guest.auth, grpc.StatusCode.FAILED_PRECONDITION
            )
            assert outcome.reason == "NOT_YOUR_TURN", outcome
            assert outcome.locale == "tr-TR"


def test_acting_for_or_looking_at_another_seat_is_permission_denied(world: World) -> None:
    world.ensure_fixtures()
    live = world.tables["live"]
    turn, mover = world.seat_to_move()
    mover_view = view_of(world, live, turn, mover)
    denied = grpc.StatusCode.PERMISSION_DENIED
    for seat in range(4):
        guest = world.guests[seat]
        other = (seat + 1) % 4
        if seat != turn:  # the seat to move, played by someone else: their move is valid
            request = act(live, turn, mover_view)
            refused(world, "Act", request, guest.auth, denied, "NOT_YOUR_SEAT")
        view = table_pb2.GetSeatViewRequest(table_id=live, seat=other)
        refused(world, "GetSeatView", view, guest.auth, denied, "NOT_YOUR_SEAT")
        watch = table_pb2.WatchTableRequest(table_id=live, seat=other, start_with_view=True)
        refused(world, "WatchTable", watch, guest.auth, denied, "NOT_YOUR_SEAT")
    stranger = world.guests[4]
    for seat in range(4):
        request = act(live, seat, mover_view)
        refused(world, "Act", request, stranger.auth, denied, "NOT_YOUR_SEAT")
    # The player_id of a Leave is the service's to set: a stranger naming a seated player
    # leaves nobody.
    leave = table_pb2.LeaveRequest(
        request_id=uuid.uuid4().hex, table_id=live, player_id=mover.player_id
    )
    refused(world, "Leave", leave, stranger.auth, grpc.StatusCode.FAILED_PRECONDITION, "NOT_SEATED")
    # Seats off the table are refused, not read.
    for seat in (4, 2**32 - 1):
        request = act(live, seat, mover_view)
        outcome = world.call("table", "Act", request, mover.auth)
        assert outcome.code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND)
        check_refusal(outcome, request, f"seat {seat}")


def test_a_finished_or_closed_or_waiting_table_takes_no_moves_and_no_changes(
    world: World,
) -> None:
    world.ensure_fixtures()
    finished, closed = world.tables["finished"], world.tables["closed"]
    precondition = grpc.StatusCode.FAILED_PRECONDITION
    former = world.guests[0]  # sat at the finished table (and left it to a bot)
    view = view_of(world, world.tables["live"], 0, former)
    for table_id, reason in ((finished, "TABLE_FINISHED"), (closed, "TABLE_CLOSED")):
        version = world.table(table_id).state_version
        request = act(table_id, 0, view, version=version)
        refused(world, "Act", request, world.service_auth(), precondition, reason)
        if table_id == finished:  # its former player; nobody ever sat at the closed one
            refused(world, "Act", request, former.auth, precondition, reason)
        else:
            denied = grpc.StatusCode.PERMISSION_DENIED
            refused(world, "Act", request, former.auth, denied, "NOT_YOUR_SEAT")
        calls: list[tuple[str, Any, Any]] = [
            (
                "Sit",
                table_pb2.SitRequest(request_id=uuid.uuid4().hex, table_id=table_id),
                world.guests[4].auth,
            ),
            (
                "Start",
                table_pb2.StartRequest(
                    request_id=uuid.uuid4().hex, table_id=table_id, fill_with_bots=True
                ),
                world.service_auth(),
            ),
            (
                "CloseTable",
                table_pb2.CloseTableRequest(request_id=uuid.uuid4().hex, table_id=table_id),
                world.service_auth(),
            ),
        ]
        if table_id == finished:
            calls += [
                (
                    "Leave",
                    table_pb2.LeaveRequest(request_id=uuid.uuid4().hex, table_id=table_id),
                    former.auth,
                ),
                (
                    "SetDealSeed",
                    table_pb2.SetDealSeedRequest(
                        request_id=uuid.uuid4().hex, table_id=table_id, deal_seed="ab" * 16
                    ),
                    former.auth,
                ),
            ]
        for method, request, who in calls:
            refused(world, method, request, who, precondition)
    waiting = world.tables["waiting"]
    request = act(waiting, 0, view, version=1)
    refused(world, "Act", request, world.guests[0].auth, precondition, "TABLE_NOT_PLAYING")


def test_another_tables_request_id_is_refused_and_changes_neither_table(world: World) -> None:
    """Request ids are scoped to the caller and the RPC; one answered for one table, sent again
    for another, is INVALID_ARGUMENT REQUEST_ID_REUSED, whichever RPC."""
    world.ensure_fixtures()
    host = world.guests[0]
    service = world.service_auth()

    def new_table(**fields: Any) -> str:
        table = world.background.run(world._table(one_hand_rules(), **fields))
        return table.table_id  # type: ignore[no-any-return]

    first, second = new_table(host_player_id=host.player_id), new_table()
    reused = grpc.StatusCode.INVALID_ARGUMENT
    # Sit, then SetDealSeed and Leave: the host at the first table; the same ids at the second.
    for method, make in (
        ("Sit", lambda rid, table: table_pb2.SitRequest(request_id=rid, table_id=table)),
        (
            "SetDealSeed",
            lambda rid, table: table_pb2.SetDealSeedRequest(
                request_id=rid, table_id=table, deal_seed="cd" * 16
            ),
        ),
        ("Leave", lambda rid, table: table_pb2.LeaveRequest(request_id=rid, table_id=table)),
    ):
        request_id = f"reuse-{method}-{uuid.uuid4().hex[:8]}"
        answer = world.call("table", method, make(request_id, first), host.auth)
        assert answer.ok, f"{method}: {answer}"
        refused(world, method, make(request_id, second), host.auth, reused, "REQUEST_ID_REUSED")
        again = world.call("table", method, make(request_id, first), host.auth)
        assert again.ok and again.response == answer.response, f"{method} retried"
    # Start and CloseTable with a service token; Act at the live table, then the same id at
    # the finished one.
    for method, make in (
        (
            "Start",
            lambda rid, table: table_pb2.StartRequest(
                request_id=rid, table_id=table, fill_with_bots=True
            ),
        ),
        (
            "CloseTable",
            lambda rid, table: table_pb2.CloseTableRequest(request_id=rid, table_id=table),
        ),
    ):
        table_id = new_table()
        request_id = f"reuse-{method}-{uuid.uuid4().hex[:8]}"
        assert world.call("table", method, make(request_id, table_id), service).ok
        world.settle("table")
        refused(world, method, make(request_id, second), service, reused, "REQUEST_ID_REUSED")
    turn, mover = world.seat_to_move()
    live = world.tables["live"]
    request = act(live, turn, view_of(world, live, turn, mover))
    assert world.call("table", "Act", request, mover.auth).ok
    elsewhere = table_pb2.ActRequest()
    elsewhere.CopyFrom(request)
    elsewhere.table_id = world.tables["finished"]
    refused(world, "Act", elsewhere, mover.auth, reused, "REQUEST_ID_REUSED")


def test_no_one_reads_another_players_answer_by_sending_their_request_id(world: World) -> None:
    """An Act's answer holds the mover's rack: request ids are the caller's own, so another
    player sending the same id makes a call of their own and never gets that answer."""
    world.ensure_fixtures()
    live = world.tables["live"]
    turn, mover = world.seat_to_move()
    request = act(live, turn, view_of(world, live, turn, mover))
    answered = world.call("table", "Act", request, mover.auth)
    assert answered.ok
    rack = {item.tile.id for item in answered.response.view.rack}
    for seat in range(4):
        guest = world.guests[seat]
        if seat == turn:
            continue
        same_id = table_pb2.ActRequest()
        same_id.CopyFrom(request)
        outcome = world.call("table", "Act", same_id, guest.auth)
        assert not outcome.ok, f"seat {seat} got the mover's answer back"
        assert outcome.reason == "NOT_YOUR_SEAT", outcome
        own_view = view_of(world, live, seat, guest)
        own = act(
            live, seat, own_view, request_id=request.request_id, actions=[a_discard(own_view)]
        )
        outcome = world.call("table", "Act", own, guest.auth)
        if outcome.ok:  # their own move, if it was theirs to make
            assert {item.tile.id for item in outcome.response.view.rack} != rack
        else:  # not theirs to make: another's turn, or theirs but with a draw owed first
            assert outcome.reason in ("NOT_YOUR_TURN", "STALE_VERSION", "MUST_DRAW_FIRST"), outcome


def test_a_stale_move_is_aborted_and_a_retry_applies_nothing_twice(world: World) -> None:
    world.ensure_fixtures()
    live = world.tables["live"]
    turn, mover = world.seat_to_move()
    view = view_of(world, live, turn, mover)
    for version in {max(view.state_version - 1, 1), view.state_version + 1, 2**63} - {
        view.state_version
    }:
        stale = act(live, turn, view, version=version)
        refused(world, "Act", stale, mover.auth, grpc.StatusCode.ABORTED, "STALE_VERSION")
    request = act(live, turn, view)
    first = world.call("table", "Act", request, mover.auth)
    assert first.ok
    after = world.table(live)
    assert after.state_version == view.state_version + 1
    # The same request again, and the same id with other moves (a client bug): the first
    # answer, nothing applied twice.
    assert world.call("table", "Act", request, mover.auth).response == first.response
    changed = table_pb2.ActRequest()
    changed.CopyFrom(request)
    changed.actions[0].CopyFrom(a_discard(view))
    retried = world.call("table", "Act", changed, mover.auth)
    assert not retried.ok or retried.response == first.response, retried
    assert world.table(live).state_version == after.state_version


def test_a_flood_of_moves_from_one_client_is_rate_limited_and_the_table_plays_on(
    world: World,
) -> None:
    world.ensure_fixtures()
    live = world.tables["live"]
    turn, mover = world.seat_to_move()
    seat = (turn + 1) % 4
    flooder = world.guests[seat]
    view = view_of(world, live, seat, flooder)
    before = world.snapshot("table")
    limit = ActLimit()
    requests = [
        act(live, seat, view, actions=[a_discard(view)], locale="tr")
        for _ in range(limit.burst * 2)
    ]
    request = requests[-1]
    began = time.monotonic()
    # Eight at a time (the channels are thread-safe): on a loaded machine one call after another
    # could each take longer than the bucket takes to refill one move, and never be limited.
    with ThreadPoolExecutor(max_workers=8) as pool:
        flood = [pool.submit(world.call, "table", "Act", one, flooder.auth) for one in requests]
        outcomes: list[Outcome] = [future.result() for future in flood]
    elapsed = time.monotonic() - began
    answered = [o for o in outcomes if o.code == grpc.StatusCode.FAILED_PRECONDITION]
    limited = [o for o in outcomes if o.code == grpc.StatusCode.RESOURCE_EXHAUSTED]
    assert len(answered) + len(limited) == len(outcomes), {o.code for o in outcomes}
    assert all(o.reason == "NOT_YOUR_TURN" for o in answered)
    allowance = limit.burst + elapsed * limit.per_second + 1
    assert limit.burst - 10 <= len(answered) <= allowance, (len(answered), elapsed)
    assert limited, "a flood of moves was never limited"
    for outcome in limited:
        check_refusal(outcome, request, "flood")
        assert outcome.reason == "RATE_LIMITED" and outcome.locale == "tr-TR"
        wait_ms = int(outcome.metadata["retry_after_ms"])
        assert 0 < wait_ms <= 1000 / limit.per_second + 1, outcome
    assert world.snapshot("table") == before, "the flood changed the table"
    # The flooder's other tables, the other players and the service are not held back.
    finished = act(world.tables["finished"], seat, view, version=1)
    assert world.call("table", "Act", finished, flooder.auth).reason == "TABLE_FINISHED"
    mover_view = view_of(world, live, turn, mover)
    assert world.call("table", "Act", act(live, turn, mover_view), mover.auth).ok
    # Once the time it was told has passed, the flooder is answered again.
    time.sleep(int(limited[-1].metadata["retry_after_ms"]) / 1000 + 0.05)
    view = view_of(world, live, seat, flooder)
    again = world.call(
        "table", "Act", act(live, seat, view, actions=[a_discard(view)]), flooder.auth
    )
    assert again.code != grpc.StatusCode.RESOURCE_EXHAUSTED, again
    # A flood with a service token (bots, timeouts, the lobby) is never limited.
    service_view = view_of(world, live, seat, flooder)
    for _ in range(limit.burst + 10):
        request = act(live, seat, service_view, actions=[a_discard(service_view)])
        outcome = world.call("table", "Act", request, world.service_auth())
        assert outcome.reason != "RATE_LIMITED", outcome
