"""Hints over real gRPC: TableService.GetHints on live tables (the table, rules, bot and scoring
services started in-process on 127.0.0.1, players with their own tokens) and
RulesService.ViewHints on seat views of seeded playouts.

Hands of each preset are played through the API by clients that choose every move from their
hints (the way a frontend would draw its turn): at every position each seat's GetHints is the
engine's hints of the table's real state, every hinted move ``apply`` accepts on that state with
the cost it says, and every single-tile move ``apply`` accepts is hinted.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from okey.v1 import common_pb2, rules_pb2, rules_pb2_grpc, table_pb2

from okey101.engine.actions import Action, LayOff, ShowIndicator
from okey101.engine.hand import EventKind, HandState, apply
from okey101.engine.hints import seat_hints
from okey101.engine.sentences import render
from okey101.platform import convert

from support.positions import applies, playout_states, single_tile_moves
from support.rules_server import AUTH, PLAYER_TOKEN, start_server
from support.service_stack import ManualClock, Stack, running_stack
from support.status import details
from support.tables import (
    PLAYERS,
    create_table,
    decide_for,
    one_hand_rules,
    refused,
    seat_players,
    view_of,
)

PRESETS = {
    "oyna": common_pb2.RULE_PRESET_OYNA,
    "boombala": common_pb2.RULE_PRESET_BOOMBALA,
    "north_sultan": common_pb2.RULE_PRESET_NORTH_SULTAN,
}
#: Positions and hinted moves checked per preset at least: one-hand tables are played until both
#: are reached and an opening was hinted, as a hand's length is the server's fair shuffle's (a
#: hand is some fifty positions).
POSITIONS_AT_LEAST = 80
MOVES_AT_LEAST = 800
#: One-hand tables played per preset at most, to reach the floors above.
TABLES_AT_MOST = 6


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def hinted_moves(hints: common_pb2.SeatHints) -> list[tuple[str, common_pb2.Action]]:
    """Every move the hints offer, named by what it is."""
    moves: list[tuple[str, common_pb2.Action]] = []
    if hints.can_draw:
        moves.append(("draw", common_pb2.Action(draw=common_pb2.DrawAction())))
    if hints.HasField("take") and hints.take.allowed:
        moves.append(("take", common_pb2.Action(take=common_pb2.TakeAction())))
    if hints.can_give_back:
        moves.append(("give_back", common_pb2.Action(give_back=common_pb2.GiveBackAction())))
    moves.extend(("lay_off", hint.action) for hint in hints.lay_offs)
    moves.extend(("take_back", hint.action) for hint in hints.take_backs)
    moves.extend(("discard", hint.action) for hint in hints.discards)
    moves.extend(("open", move) for move in hints.opening.moves)
    return moves


def check_against_apply(state: HandState, seat: int, hints: common_pb2.SeatHints) -> int:
    """Every hinted move applies to the real state at its cost; every single-tile move that
    applies is hinted. The number of moves checked."""
    assert hints == convert.seat_hints_to_proto(seat_hints(state, seat), state.okey)
    moves = hinted_moves(hints)
    if state.ended or seat != state.turn:
        assert moves == [] and not hints.to_move
        return 0
    hinted: dict[Action, HandState] = {}
    costs = {hint.action.discard.tile_id: hint.penalty_points for hint in hints.discards}
    for kind, message in moves:
        action = convert.action_from_proto(message)
        after, events = apply(state, seat, action)  # raises if the hint is wrong
        if kind == "discard":
            charged = sum(e.points for e in events if e.kind is EventKind.PENALTY)
            assert costs[message.discard.tile_id] == charged
        hinted[action] = after
    for action in single_tile_moves(state):
        after = applies(state, action)
        if after is None or isinstance(action, ShowIndicator) or action in hinted:
            continue
        assert isinstance(action, LayOff), f"{action} applies but is not hinted"
        assert any(
            isinstance(other, LayOff) and other.meld == action.meld and result == after
            for other, result in hinted.items()
        ), f"{action} applies but is not hinted"
    return len(moves)


def choose(
    hints: common_pb2.SeatHints, view: common_pb2.SeatView, rng: random.Random
) -> list[common_pb2.Action]:
    """A move chosen from the hints alone, as a simple frontend player would."""
    named = hinted_moves(hints)
    by_kind: dict[str, list[common_pb2.Action]] = {}
    for kind, action in named:
        by_kind.setdefault(kind, []).append(action)
    take = hints.take
    useful_take = take.allowed and bool(take.lay_offs or take.take_backs or take.opening.moves)
    if "take" in by_kind and useful_take and rng.random() < 0.6:
        return by_kind["take"]
    if "draw" in by_kind:
        return by_kind["draw"]
    if "open" in by_kind:
        return [rng.choice(by_kind["open"])]
    taken = view.turn_progress.taken.id if view.turn_progress.HasField("taken") else None
    own = [hint.action for hint in hints.lay_offs if hint.tile.id == taken]
    if own:
        return [own[0]]
    if "take_back" in by_kind and rng.random() < 0.5:
        return [rng.choice(by_kind["take_back"])]
    if "lay_off" in by_kind and rng.random() < 0.7:
        return [rng.choice(by_kind["lay_off"])]
    free = [hint.action for hint in hints.discards if hint.penalty_points == 0]
    if free or hints.discards:
        return [rng.choice(free or [hint.action for hint in hints.discards])]
    if "give_back" in by_kind:
        return by_kind["give_back"]
    return decide_for(view)  # a move the hints do not list (a new meld): the bot's


async def get_hints(
    stack: Stack, table_id: str, player: str, seat: int, locale: str = ""
) -> table_pb2.GetHintsResponse:
    return await stack.table_stub().GetHints(
        table_pb2.GetHintsRequest(table_id=table_id, seat=seat, locale=locale),
        metadata=stack.player_auth(player),
    )


async def started(stack: Stack, preset: int) -> str:
    table = await create_table(stack, one_hand_rules(preset))
    await seat_players(stack, table.table_id)
    await stack.table_stub().Start(
        table_pb2.StartRequest(request_id=f"start-{table.table_id}", table_id=table.table_id),
        metadata=stack.service_auth(),
    )
    return table.table_id


async def play_one_hand(
    stack: Stack, preset: int, rng: random.Random, counts: dict[str, int]
) -> None:
    """A one-hand table played to its end by clients choosing from their hints, every seat's
    hints checked against ``apply`` at every position."""
    table_id = await started(stack, preset)
    stub = stack.table_stub()
    live = stack.servicer.core.tables.cached(table_id)
    assert live is not None
    for _step in range(600):
        state = live.state
        assert state is not None
        answers = [await get_hints(stack, table_id, p, s) for s, p in enumerate(PLAYERS)]
        for seat, answer in enumerate(answers):
            assert answer.hints.seat == seat
            assert answer.state_version == live.record.state_version
            counts["moves"] += check_against_apply(state, seat, answer.hints)
        counts["positions"] += 1
        if state.ended:
            break
        seat = state.turn
        hints = answers[seat].hints
        # Asked again, the same answer (cached for the revision).
        assert (await get_hints(stack, table_id, PLAYERS[seat], seat)).hints == hints
        if hints.HasField("take") and not hints.take.allowed:
            counts["refused takes"] += 1
            refusal = hints.take.refusal
            assert refusal.code and refusal.message
            turkish = await get_hints(stack, table_id, PLAYERS[seat], seat, "tr")
            params = dict(turkish.hints.take.refusal.params)
            assert turkish.hints.take.refusal.message == render(refusal.code, "tr", params)
        counts["openings"] += len(hints.opening.moves)
        view = await view_of(stack, table_id, PLAYERS[seat], seat)
        await stub.Act(
            table_pb2.ActRequest(
                request_id=uuid.uuid4().hex,
                table_id=table_id,
                seat=seat,
                actions=choose(hints, view, rng),
                expected_state_version=answers[seat].state_version,
            ),
            metadata=stack.player_auth(PLAYERS[seat]),
        )
    assert live.state is not None and live.state.ended, counts


@pytest.mark.parametrize("preset", PRESETS)
def test_get_hints_against_apply_through_hands_played_from_the_hints(
    preset: str, tmp_path: Path
) -> None:
    async def scenario() -> None:
        rng = random.Random(f"hints-{preset}")
        counts = {"positions": 0, "moves": 0, "refused takes": 0, "openings": 0}
        async with running_stack(tmp_path, clock=ManualClock()) as stack:
            for _table in range(TABLES_AT_MOST):
                await play_one_hand(stack, PRESETS[preset], rng, counts)
                if (
                    counts["positions"] >= POSITIONS_AT_LEAST
                    and counts["moves"] >= MOVES_AT_LEAST
                    and counts["openings"] > 0
                ):
                    break
        assert counts["positions"] >= POSITIONS_AT_LEAST, counts
        assert counts["moves"] >= MOVES_AT_LEAST, counts
        assert counts["openings"] > 0, counts

    run(scenario())


def test_get_hints_is_for_the_callers_own_seat(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path, clock=ManualClock()) as stack:
            stub = stack.table_stub()
            waiting = await create_table(stack, one_hand_rules())
            await seat_players(stack, waiting.table_id)
            # Before the first deal: no hints, the seat named.
            answer = await get_hints(stack, waiting.table_id, PLAYERS[1], 1)
            assert answer.hints == common_pb2.SeatHints(seat=1)
            table_id = await started(stack, common_pb2.RULE_PRESET_OYNA)
            before = await get_hints(stack, table_id, PLAYERS[0], 0)
            for request, player in (
                (table_pb2.GetHintsRequest(table_id=table_id, seat=1), PLAYERS[0]),
                (table_pb2.GetHintsRequest(table_id=table_id, seat=0), "stranger"),
                (table_pb2.GetHintsRequest(table_id=table_id, seat=7), PLAYERS[0]),
                (table_pb2.GetHintsRequest(table_id="no-such-table", seat=0), PLAYERS[0]),
                (table_pb2.GetHintsRequest(table_id="", seat=0), PLAYERS[0]),
            ):
                got = await refused(stub.GetHints, request, stack.player_auth(player))
                view_request = table_pb2.GetSeatViewRequest(
                    table_id=request.table_id, seat=request.seat
                )
                expected = await refused(stub.GetSeatView, view_request, stack.player_auth(player))
                assert got[:2] == expected[:2] and got[2], (request, got)
            code, reason, message = await refused(
                stub.GetHints,
                table_pb2.GetHintsRequest(table_id=table_id, seat=1),
                stack.player_auth(PLAYERS[0]),
            )
            assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT")
            assert message
            code, reason, _ = await refused(
                stub.GetHints,
                table_pb2.GetHintsRequest(table_id="no-such-table", seat=0),
                stack.player_auth(PLAYERS[0]),
            )
            assert code == grpc.StatusCode.NOT_FOUND
            # Nothing changed; a service may ask for any seat.
            assert (await get_hints(stack, table_id, PLAYERS[0], 0)) == before
            service = await stub.GetHints(
                table_pb2.GetHintsRequest(table_id=table_id, seat=2),
                metadata=stack.service_auth(),
            )
            assert service.hints.seat == 2

    run(scenario())


# ---------------------------------------------------------------------------------------------
# RulesService.ViewHints


@pytest.fixture(scope="module")
def rules_stub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    running = start_server(tmp_path_factory.mktemp("rules-hints"))
    try:
        with grpc.insecure_channel(running.handle.target) as opened:
            yield rules_pb2_grpc.RulesServiceStub(opened)
    finally:
        running.close()


@pytest.mark.parametrize("preset", PRESETS)
def test_view_hints_are_the_engines_from_the_view(rules_stub: Any, preset: str) -> None:
    rng = random.Random(f"view-hints-{preset}")
    states = playout_states(preset)
    moves = 0
    for state in rng.sample(states, 25):
        for seat in range(4):
            view = convert.seat_view_to_proto(state, seat)
            answer = rules_stub.ViewHints(rules_pb2.ViewHintsRequest(view=view), metadata=AUTH)
            assert answer.hints == convert.seat_hints_to_proto(seat_hints(state, seat), state.okey)
            moves += check_against_apply(state, seat, answer.hints)
    assert moves > 100


def test_view_hints_refuses_a_view_that_does_not_hold_together(rules_stub: Any) -> None:
    state = next(s for s in playout_states("oyna") if not s.ended and s.turn_number > 4)
    seat = state.turn
    view = convert.seat_view_to_proto(state, seat)
    spectator = convert.seat_view_to_proto(state, None)
    twice = common_pb2.SeatView()
    twice.CopyFrom(view)
    twice.rack.add().CopyFrom(view.rack[0])
    twice.seats[seat].tile_count += 1
    old = common_pb2.SeatView()
    old.CopyFrom(view)
    old.rules_version = "okey101-rules/0"
    for bad, code, reason, field in (
        (spectator, grpc.StatusCode.INVALID_ARGUMENT, "BAD_FIELD", "view.seat"),
        (twice, grpc.StatusCode.INVALID_ARGUMENT, "DUPLICATE_TILE_ID", None),
        (old, grpc.StatusCode.FAILED_PRECONDITION, "UNKNOWN_RULES_VERSION", "view.rules_version"),
        (common_pb2.SeatView(), grpc.StatusCode.INVALID_ARGUMENT, "BAD_FIELD", None),
    ):
        with pytest.raises(grpc.RpcError) as caught:
            rules_stub.ViewHints(
                rules_pb2.ViewHintsRequest(view=bad, locale="tr"), metadata=AUTH, timeout=10
            )
        error = caught.value
        info, message = details(error)
        assert (error.code(), info.reason) == (code, reason), error
        if field is not None:
            assert info.metadata["field"] == field
        assert message.locale.startswith("tr") and message.message
    # A player's token is enough.
    player = (("authorization", f"Bearer {PLAYER_TOKEN}"),)
    answer = rules_stub.ViewHints(rules_pb2.ViewHintsRequest(view=view), metadata=player)
    assert answer.hints.to_move and answer.hints.seat == seat
