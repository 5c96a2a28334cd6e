"""What one seat may know.

``view(state, seat)`` is the only thing about a hand that leaves the engine for a player: its own
rack, everything face up (the table, discards, the indicator, opened seats, +101s), how many tiles
each other seat holds and how many are in the stock, never another rack or the stock's order.
Once the hand has ended every rack is shown, as at a real table.

The moves it may make now are listed by ``engine.legal``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from okey101.engine.hand import HandState, Phase, ThisTurn
from okey101.engine.melds import Meld
from okey101.engine.result import HandResult
from okey101.engine.seat import OpenedAs
from okey101.engine.solver.playability import playable_faces
from okey101.engine.tiles import ALL_TILES, FACE_COUNT, Okey, Tile, copies_of


@dataclass(frozen=True, slots=True)
class OtherSeat:
    """What a seat can see of another (or its own public side)."""

    seat: int
    tile_count: int
    discards: tuple[Tile, ...]
    opened_as: OpenedAs | None
    penalties: int
    # The turn number on which the seat opened (-1: not opened): opening and finishing in one
    # turn is scored apart, and some lay-offs wait for the turn after the opening.
    opened_on_turn: int = -1


@dataclass(frozen=True, slots=True)
class SeatView:
    """All that ``seat`` may know about the hand."""

    seat: int
    rules_name: str
    version: str
    indicator: Tile
    okey_face: int
    dealer: int
    turn: int
    phase: Phase
    turn_number: int
    rack: tuple[Tile, ...]
    # Tiles of the rack whose discard would cost +101 (the okey included).
    costly_discards: tuple[Tile, ...]
    table: tuple[tuple[Meld, int], ...]
    seats: tuple[OtherSeat, ...]
    stock_count: int
    takeable: Tile | None
    taken_this_turn: Tile | None
    result: HandResult | None
    # Every rack, once the hand has ended (empty while it is live).
    revealed_racks: tuple[tuple[Tile, ...], ...] = ()
    # What the seat has done so far in its own turn (nothing while another seat is to move):
    # the rules of the rest of the turn depend on it (a lay-off in the opening turn, the
    # pairs opener's lay-off limit, a taken tile to use).
    this_turn: ThisTurn = field(default_factory=ThisTurn)


def view(state: HandState, seat: int) -> SeatView:
    """What ``seat`` may know; never another rack or the stock order while the hand is live."""
    me = state.seats[seat]
    costly_ids = _costly_ids(state.okey, playable_faces(state.table_melds(), state.rules))
    costly = tuple(tile for tile in me.rack if tile.id in costly_ids)
    others = tuple(
        OtherSeat(
            seat=index,
            tile_count=len(other.rack),
            discards=other.discards,
            opened_as=other.opened_as,
            penalties=len(other.penalties) * state.rules.penalty_points,
            opened_on_turn=other.opened_on_turn,
        )
        for index, other in enumerate(state.seats)
    )
    return SeatView(
        seat=seat,
        rules_name=state.rules.name,
        version=state.version,
        indicator=state.okey.indicator,
        okey_face=state.okey.face,
        dealer=state.dealer,
        turn=state.turn,
        phase=state.phase,
        turn_number=state.turn_number,
        rack=me.rack,
        costly_discards=costly,
        table=tuple((item.meld, item.owner) for item in state.table),
        seats=others,
        stock_count=len(state.stock),
        takeable=state.takeable,
        taken_this_turn=state.this_turn.taken if state.turn == seat else None,
        result=state.result,
        revealed_racks=tuple(s.rack for s in state.seats) if state.ended else (),
        this_turn=state.this_turn if state.turn == seat else ThisTurn(),
    )


def _costly_ids(okey: Okey, playable: frozenset[int]) -> set[int]:
    """The ids of the tiles whose discard costs +101: those for which ``okey.is_wild(tile) or
    okey.plays_as(tile) in playable``, found face by face rather than tile by tile (a view is
    made on every move): both copies of the okey's face and of each playable face, and the
    false jokers when the okey's face is playable (they play as it)."""
    ids = {tile.id for tile in copies_of(okey.face)}
    for face in playable:
        if 0 <= face < FACE_COUNT:  # a tile plays as a coloured face, or as the okey's
            ids.update(tile.id for tile in copies_of(face))
    if okey.face in playable:
        ids.update(_FALSE_JOKER_IDS)
    return ids


_FALSE_JOKER_IDS: Final = frozenset(tile.id for tile in ALL_TILES if tile.is_false_joker)
