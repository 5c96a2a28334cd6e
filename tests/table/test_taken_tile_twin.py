"""The tile taken from the left is a face, not a copy (issue #33), on the live path: a real table
service over gRPC, where a seat that holds one K11, takes the other from its left and opens with
the copy it held plays on.

The deal is made to order: the table's shuffle (``deck_order``, as ``table.dealing`` calls it)
is replaced by a fixed deck for the test's process, so the position needs no luck.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from okey.v1 import common_pb2, table_pb2

from okey101.engine.actions import Action, Discard, Group, Open, TakeDiscard
from okey101.engine.tiles import Tile, TileAllocator, parse_face
from okey101.engine.view import SeatView
from okey101.platform import convert
from okey101.table import dealing

from support.service_stack import Stack, running_stack

PLAYERS = ("ada", "bea", "cem", "deniz")

# The starter (22 tiles) throws the first K11; the next seat holds the other K11 and an opening
# worth 115 with "a K11": R10-R13 (46), the 13s (39), K9-K10-K11 (30). The indicator is B1.
STARTER = ["K11", "R1", "R2", "R3", "Y4", "Y5", "Y6", "B7", "B8", "B9", "K1", "K2", "K3"]
NEXT = ["K11", "R10", "R11", "R12", "R13", "K13", "B13", "Y13", "K9", "K10", "Y1"]
INDICATOR = "B1"


def made_deck() -> tuple[Tile, ...]:
    """All 106 tiles: the starter's 22, the next seat's 21, the other two racks' 42, the
    indicator first of the rest (``engine.deal``'s order), then the stock."""
    allocator = TileAllocator()
    starter = list(allocator.take_names(STARTER))
    following = list(allocator.take_names(NEXT))
    indicator = allocator.take(parse_face(INDICATOR))
    # Fillers in id order; the false jokers last, in the stock.
    pool = sorted(allocator.remaining(), key=lambda tile: tile.is_false_joker)
    starter += pool[: 22 - len(starter)]
    pool = pool[22 - len(STARTER) :]
    following += pool[: 21 - len(following)]
    pool = pool[21 - len(NEXT) :]
    deck = (*starter, *following, *pool[:42], indicator, *pool[42:])
    assert sorted(tile.id for tile in deck) == list(range(106))
    return deck


def _one_hand_rules() -> common_pb2.RuleSet:
    return common_pb2.RuleSet(
        preset=common_pb2.RULE_PRESET_OYNA,
        match_end=common_pb2.MATCH_END_FIXED_HANDS,
        match_hands=1,
    )


async def _view(stack: Stack, table_id: str, seat: int) -> common_pb2.SeatView:
    answer = await stack.table_stub().GetSeatView(
        table_pb2.GetSeatViewRequest(table_id=table_id, seat=seat),
        metadata=stack.player_auth(PLAYERS[seat]),
    )
    return answer.view


async def _act(stack: Stack, table_id: str, seat: int, actions: list[Action]) -> Any:
    view = await _view(stack, table_id, seat)
    return await stack.table_stub().Act(
        table_pb2.ActRequest(
            request_id=uuid.uuid4().hex,
            table_id=table_id,
            seat=seat,
            actions=[convert.action_to_proto(action) for action in actions],
            expected_state_version=view.state_version,
        ),
        metadata=stack.player_auth(PLAYERS[seat]),
    )


async def _started_table(stack: Stack) -> str:
    stub = stack.table_stub()
    table = (
        await stub.CreateTable(
            table_pb2.CreateTableRequest(request_id=uuid.uuid4().hex, rules=_one_hand_rules()),
            metadata=stack.service_auth(),
        )
    ).table
    for seat, player in enumerate(PLAYERS):
        await stub.Sit(
            table_pb2.SitRequest(request_id=f"sit-{player}", table_id=table.table_id, seat=seat),
            metadata=stack.player_auth(player),
        )
    await stub.Start(
        table_pb2.StartRequest(request_id=f"start-{table.table_id}", table_id=table.table_id),
        metadata=stack.service_auth(),
    )
    return str(table.table_id)


def _engine_view(view: common_pb2.SeatView) -> SeatView:
    return convert.seat_view_from_proto(view)


def _pick(view: SeatView, names: list[str]) -> tuple[Tile, ...]:
    """Tiles of the rack with these faces, the first copy of each on the rack."""
    free = list(view.rack)
    out: list[Tile] = []
    for name in names:
        face = parse_face(name)
        tile = next(tile for tile in free if tile.face == face)
        free.remove(tile)
        out.append(tile)
    return tuple(out)


def test_a_seat_that_takes_a_tile_and_opens_with_its_twin_plays_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deck = made_deck()
    monkeypatch.setattr(dealing, "deck_order", lambda *_args, **_kwargs: deck)

    async def scenario() -> None:
        async with running_stack(tmp_path) as stack:
            table_id = await _started_table(stack)
            first = _engine_view(await _view(stack, table_id, 0))
            starter = first.turn
            taker = (starter + 1) % 4
            # The starter throws its K11 (the first copy: id 2 * face).
            thrown = _pick(_engine_view(await _view(stack, table_id, starter)), ["K11"])[0]
            await _act(stack, table_id, starter, [Discard(thrown)])

            before = _engine_view(await _view(stack, table_id, taker))
            assert before.takeable == thrown
            held = _pick(before, ["K11"])[0]
            assert held.id != thrown.id and held.face == thrown.face
            runs, thirteens, blacks = (
                _pick(before, ["R10", "R11", "R12", "R13"]),
                _pick(before, ["K13", "B13", "Y13"]),
                _pick(before, ["K9", "K10"]),
            )
            opening = Open((Group(runs), Group(thirteens), Group((*blacks, held))))
            (last,) = _pick(before, ["Y1"])
            # Taken, opened with the copy it held, a tile thrown: all accepted at once.
            await _act(stack, table_id, taker, [TakeDiscard(), opening, Discard(last)])

            after = _engine_view(await _view(stack, table_id, taker))
            assert after.turn == (taker + 1) % 4  # it played on: the turn has passed
            me = after.seats[taker]
            assert me.opened_as is not None
            assert me.discards[-1] == last
            # The taken copy is still on the rack; the one held before went down.
            assert thrown in after.rack and held not in after.rack
            assert any(held in meld.tiles for meld, _owner in after.table)

    asyncio.run(scenario())
