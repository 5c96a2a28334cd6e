"""The table service's clients for tests: tables made, seated, read and played through the
public API with the players' own tokens (``service_stack``'s in-process services), and what a
refused call carried.

Players decide with the engine's bots (``decide_for``: what an app's player would do) and act
through TableService.Act, as ``tests/table/test_table_service.py`` and the other table, lobby
and abuse tests do.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import grpc
import grpc.aio
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from okey.v1 import common_pb2, table_pb2

from okey101.engine.bots.entry_points import decide
from okey101.engine.bots.levels import BotLevel
from okey101.platform import convert

from support.service_stack import Stack

PLAYERS = ("ada", "bea", "cem", "deniz")


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def one_hand_rules(preset: int = common_pb2.RULE_PRESET_OYNA, **knobs: Any) -> common_pb2.RuleSet:
    return common_pb2.RuleSet(
        preset=preset,  # type: ignore[arg-type]
        match_end=common_pb2.MATCH_END_FIXED_HANDS,
        match_hands=knobs.pop("match_hands", 1),
        **knobs,
    )


def all_bots() -> list[table_pb2.SeatSetup]:
    return [table_pb2.SeatSetup(seat=s, kind=common_pb2.OCCUPANT_KIND_BOT) for s in range(4)]


async def create_table(stack: Stack, rules: common_pb2.RuleSet, **fields: Any) -> common_pb2.Table:
    answer = await stack.table_stub().CreateTable(
        table_pb2.CreateTableRequest(request_id=uuid.uuid4().hex, rules=rules, **fields),
        metadata=stack.service_auth(),
    )
    return answer.table


async def seat_players(stack: Stack, table_id: str, players: tuple[str, ...] = PLAYERS) -> None:
    stub = stack.table_stub()
    for seat, player in enumerate(players):
        await stub.Sit(
            table_pb2.SitRequest(
                request_id=f"sit-{player}-{table_id}", table_id=table_id, seat=seat
            ),
            metadata=stack.player_auth(player),
        )


async def get_table(stack: Stack, table_id: str) -> common_pb2.Table:
    return (
        await stack.table_stub().GetTable(
            table_pb2.GetTableRequest(table_id=table_id), metadata=stack.service_auth()
        )
    ).table


async def view_of(stack: Stack, table_id: str, player: str, seat: int) -> common_pb2.SeatView:
    answer = await stack.table_stub().GetSeatView(
        table_pb2.GetSeatViewRequest(table_id=table_id, seat=seat),
        metadata=stack.player_auth(player),
    )
    return answer.view


def my_turn(view: common_pb2.SeatView) -> bool:
    return (
        view.hand_id != ""
        and view.phase in (common_pb2.PHASE_FIRST, common_pb2.PHASE_DRAW, common_pb2.PHASE_PLAY)
        and view.turn == view.seat
    )


def decide_for(view: common_pb2.SeatView, level: BotLevel = BotLevel.NORMAL) -> list[Any]:
    engine_view = convert.seat_view_from_proto(view)
    rules = convert.rules_from_proto(view.rules)
    decision = decide(engine_view, rules, level, view.state_version)
    return [convert.action_to_proto(action) for action in decision.actions]


async def play_as(stack: Stack, table_id: str, player: str, seat: int, *, until_hand: int) -> int:
    """Play ``seat`` as a client until hand ``until_hand`` has ended (or the match); the moves
    made."""
    stub = stack.table_stub()
    auth = stack.player_auth(player)
    moves = 0
    for _ in range(20_000):
        view = await view_of(stack, table_id, player, seat)
        table = await get_table(stack, table_id)
        if table.state == common_pb2.TABLE_STATE_FINISHED:
            return moves
        if view.hand_number > until_hand or (
            view.hand_number == until_hand and view.phase == common_pb2.PHASE_ENDED
        ):
            return moves
        if not my_turn(view):
            await asyncio.sleep(0.01)
            continue
        try:
            await stub.Act(
                table_pb2.ActRequest(
                    request_id=uuid.uuid4().hex,
                    table_id=table_id,
                    seat=seat,
                    actions=decide_for(view),
                    expected_state_version=view.state_version,
                ),
                metadata=auth,
            )
            moves += 1
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.ABORTED:
                raise
    raise AssertionError("the hand did not end")


async def read_stream(
    stack: Stack, table_id: str, *, auth: Any, seat: int | None, after: int, count: int
) -> list[common_pb2.Event]:
    """The next ``count`` events after ``after`` from WatchTable."""
    request = table_pb2.WatchTableRequest(table_id=table_id, after_sequence=after)
    if seat is not None:
        request.seat = seat
    call = stack.table_stub().WatchTable(request, metadata=auth)
    events: list[common_pb2.Event] = []
    try:
        async for item in call:
            events.append(item.event)
            if len(events) == count:
                break
    finally:
        call.cancel()
    return events


def error_of(error: grpc.aio.AioRpcError) -> tuple[grpc.StatusCode, str, str]:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None
    info = error_details_pb2.ErrorInfo()
    message = error_details_pb2.LocalizedMessage()
    for detail in status.details:
        if detail.Is(info.DESCRIPTOR):
            detail.Unpack(info)
        elif detail.Is(message.DESCRIPTOR):
            detail.Unpack(message)
    return error.code(), info.reason, message.message


async def refused(call: Any, request: Any, metadata: Any) -> tuple[grpc.StatusCode, str, str]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call(request, metadata=metadata)
    return error_of(caught.value)


async def wait_for(check: Any, timeout: float = 30.0) -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await check()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.05)


async def started_table(stack: Stack, rules: common_pb2.RuleSet | None = None) -> str:
    table = await create_table(stack, rules or one_hand_rules(match_hands=2))
    await seat_players(stack, table.table_id)
    await stack.table_stub().Start(
        table_pb2.StartRequest(request_id=f"start-{table.table_id}", table_id=table.table_id),
        metadata=stack.service_auth(),
    )
    return table.table_id


async def finished_table(stack: Stack, table_id: str) -> common_pb2.Table | None:
    table = await get_table(stack, table_id)
    return table if table.state == common_pb2.TABLE_STATE_FINISHED else None
