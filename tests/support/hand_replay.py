"""What a seat may know: the tiles a stream's message names, and a hand's states replayed from
its record (``HandReplay``), with what was face up at each. The leak scans of
``tests/table/test_table_leaks.py`` and ``tests/abuse/test_abuse_leaks.py`` check every
message against them.
"""

from __future__ import annotations

import bisect
from typing import Any

from okey.v1 import common_pb2, table_pb2

from okey101.engine.deal import deal
from okey101.engine.hand import HandState, apply
from okey101.engine.tiles import tile_by_id
from okey101.platform import convert

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
