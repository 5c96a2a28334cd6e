"""No stream leaks a hidden tile: every message every seat's (and a spectator's) stream receives
over many bot-played hands is checked against the hand replayed from its record.

While a hand is live a seat may see its own rack and what is face up. So for each event (and
each view) a seat receives, every tile it names must not be, at that moment, in another seat's
rack or in the stock. "That moment" is the state after the call that caused the event, found by
replaying the hand record's moves (the record's deck recomputes from the revealed seed, which
another test checks). Once the hand has ended, every rack is shown to everyone.
"""

from __future__ import annotations

import asyncio
import bisect
from pathlib import Path
from typing import Any

from okey.v1 import common_pb2, table_pb2
from service_stack import Stack, running_stack
from test_table_service import all_bots, create_table, one_hand_rules

from okey101.engine.deal import deal
from okey101.engine.hand import HandState, apply
from okey101.engine.tiles import tile_by_id
from okey101.platform import convert

TABLES = 3
HANDS = 2
LIVE_END = (common_pb2.EVENT_KIND_HAND_ENDED, common_pb2.EVENT_KIND_MATCH_ENDED)


def tiles_named(message: Any) -> set[int]:
    """Every tile id an Event or SeatView names, wherever it sits."""
    found: set[int] = set()
    if isinstance(message, common_pb2.Event):
        found |= {t.id for t in message.tiles} | {t.id for t in message.private_tiles}
        found |= {mt.tile.id for mt in message.meld.tiles}
        for rack in message.revealed_racks:
            found |= {t.id for t in rack.tiles}
        return found
    found |= {item.tile.id for item in message.rack}
    for meld in message.table:
        found |= {mt.tile.id for mt in meld.meld.tiles}
    for seat in message.seats:
        found |= {t.id for t in seat.discards}
    found.add(message.indicator.id)
    if message.HasField("takeable"):
        found.add(message.takeable.id)
    for rack in message.revealed_racks:
        found |= {t.id for t in rack.tiles}
    return found


def face_up(state: HandState) -> set[int]:
    """Tiles everyone can see in ``state``: discards, the table, the indicator (and its twin once
    shown)."""
    shown = {state.okey.indicator.id}
    for seat in state.seats:
        shown |= {tile.id for tile in seat.discards}
    for item in state.table:
        shown |= {tile.id for tile in item.meld.tiles}
    if any(seat.showed_indicator for seat in state.seats):
        shown.add(state.okey.indicator.id ^ 1)  # its twin, shown to score (boombala)
    return shown


def hidden_from(state: HandState, seat: int | None, shown: set[int]) -> set[int]:
    """What ``seat`` may not know in ``state``: the stock and the other racks, except tiles
    that were face up at some point (a taken discard is in a rack, and known)."""
    hidden = {tile.id for tile in state.stock}
    for index, other in enumerate(state.seats):
        if index != seat:
            hidden |= {tile.id for tile in other.rack}
    return hidden - shown


class HandReplay:
    """A hand's states after each call, looked up by event sequence number."""

    def __init__(self, record: table_pb2.HandRecord) -> None:
        rules = convert.rules_from_proto(record.rules)
        state = deal(rules, record.dealer, [tile_by_id(i) for i in record.deck_tile_ids])
        self.starts: list[int] = [0]
        self.states: list[HandState] = [state]
        self.shown: list[set[int]] = [face_up(state)]
        calls: dict[int, list[Any]] = {}
        for move in record.moves:
            calls.setdefault(move.sequence, []).append(move)
        for sequence in sorted(calls):
            for move in calls[sequence]:
                state, _ = apply(state, move.seat, convert.action_from_proto(move.action))
            self.starts.append(sequence)
            self.states.append(state)
            self.shown.append(self.shown[-1] | face_up(state))

    def at(self, sequence: int) -> tuple[HandState, set[int]]:
        """The state after the call that caused event ``sequence``, and every tile shown so far."""
        index = bisect.bisect_right(self.starts, sequence) - 1
        return self.states[index], self.shown[index]


async def watch_all(stack: Stack, table_id: str, seat: int | None, out: list[Any]) -> None:
    request = table_pb2.WatchTableRequest(table_id=table_id, start_with_view=True)
    if seat is not None:
        request.seat = seat
    async for item in stack.table_stub().WatchTable(request, metadata=stack.service_auth()):
        out.append(item.view if item.HasField("view") else item.event)
        if item.HasField("event") and item.event.kind == common_pb2.EVENT_KIND_MATCH_ENDED:
            return


def test_no_seat_or_spectator_ever_receives_a_hidden_tile(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_stack(tmp_path) as stack:
            tables = []
            received: dict[tuple[str, int | None], list[Any]] = {}
            watchers = []
            for index in range(TABLES):
                preset = (
                    common_pb2.RULE_PRESET_OYNA,
                    common_pb2.RULE_PRESET_BOOMBALA,
                    common_pb2.RULE_PRESET_NORTH_SULTAN,
                )[index % 3]
                table = await create_table(
                    stack, one_hand_rules(preset, match_hands=HANDS), seats=all_bots()
                )
                tables.append(table)
                for seat in (0, 1, 2, 3, None):
                    out: list[Any] = []
                    received[(table.table_id, seat)] = out
                    watchers.append(
                        asyncio.ensure_future(watch_all(stack, table.table_id, seat, out))
                    )
            await asyncio.sleep(0.2)
            for table in tables:
                await stack.table_stub().Start(
                    table_pb2.StartRequest(
                        request_id=f"go-{table.table_id}", table_id=table.table_id
                    ),
                    metadata=stack.service_auth(),
                )
            await asyncio.wait_for(asyncio.gather(*watchers), 180)
            replays: dict[str, HandReplay] = {}
            for table in tables:
                for number in range(1, HANDS + 1):
                    hand_id = f"{table.table_id}-h{number}"
                    record = (
                        await stack.table_stub().GetHandRecord(
                            table_pb2.GetHandRecordRequest(hand_id=hand_id),
                            metadata=stack.service_auth(),
                        )
                    ).record
                    replays[hand_id] = HandReplay(record)
        checked = 0
        for (table_id, seat), messages in received.items():
            hand_id = ""
            for message in messages:
                if isinstance(message, common_pb2.SeatView):
                    continue  # sent before the match started: no hand, no tiles
                if message.hand_id:
                    hand_id = message.hand_id
                if not hand_id or message.kind in LIVE_END:
                    continue
                state, shown = replays[hand_id].at(message.sequence)
                if state.result is not None:
                    continue
                leaked = tiles_named(message) & hidden_from(state, seat, shown)
                assert not leaked, (table_id, seat, message.sequence, sorted(leaked))
                if seat is None:
                    assert not message.private_tiles
                checked += 1
        assert checked > TABLES * HANDS * 5 * 50

    asyncio.run(scenario())
