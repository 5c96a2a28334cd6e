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
from pathlib import Path
from typing import Any

from okey.v1 import common_pb2, table_pb2

from support.hand_replay import LIVE_END, HandReplay, hidden_from, tiles_named
from support.service_stack import Stack, running_stack
from support.tables import all_bots, create_table, one_hand_rules

TABLES = 3
HANDS = 2


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
            hands_checked: set[str] = set()
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
                hands_checked.add(hand_id)
            # Every viewer's stream was checked through every hand of its table (how many events
            # a hand has depends on the deal: a hand may end early).
            assert len(hands_checked) == HANDS, (table_id, seat, sorted(hands_checked))
        assert checked > TABLES * HANDS * 5 * 10

    asyncio.run(scenario())
