"""Invariants every reachable state of a dealt hand keeps, as checks that name what broke.

Used by the random-playout tests and ``okey101 bench engine``:

- every one of the 106 tiles is in exactly one place (a rack, a discard pile, a meld on the
  table, the stock, or the indicator);
- a seat's view holds no tile of another rack and nothing of the stock;
- an event's private tiles go only to the seat that acted;
- the racks have the sizes the turn allows (21 after a discard; 22 for the seat to play).
"""

from __future__ import annotations

from collections.abc import Iterable

from okey101.engine.hand import Event, HandState
from okey101.engine.tiles import TILE_COUNT, Tile
from okey101.engine.view import SeatView, view


def tile_locations(state: HandState) -> list[Tile]:
    """Every tile the state places, with repeats if any tile is in two places."""
    tiles: list[Tile] = [state.okey.indicator]
    for seat in state.seats:
        tiles.extend(seat.rack)
        tiles.extend(seat.discards)
    for item in state.table:
        tiles.extend(item.meld.tiles)
    tiles.extend(state.stock)
    return tiles


def accounting_problems(state: HandState) -> list[str]:
    """Every tile in exactly one place (for a state dealt from a full set)."""
    tiles = tile_locations(state)
    ids = [tile.id for tile in tiles]
    problems = []
    if len(ids) != TILE_COUNT:
        problems.append(f"{len(ids)} tiles placed, not {TILE_COUNT}")
    if len(set(ids)) != len(ids):
        problems.append("a tile is in two places")
    return problems


def view_tiles(seat_view: SeatView) -> set[int]:
    """The ids of every tile a view shows."""
    shown: set[int] = {tile.id for tile in seat_view.rack}
    shown |= {tile.id for tile in seat_view.costly_discards}
    shown.add(seat_view.indicator.id)
    for meld, _owner in seat_view.table:
        shown |= {tile.id for tile in meld.tiles}
    for other in seat_view.seats:
        shown |= {tile.id for tile in other.discards}
    if seat_view.takeable is not None:
        shown.add(seat_view.takeable.id)
    if seat_view.taken_this_turn is not None:
        shown.add(seat_view.taken_this_turn.id)
    for rack in seat_view.revealed_racks:
        shown |= {tile.id for tile in rack}
    return shown


def leak_problems(state: HandState) -> list[str]:
    """No seat's view shows another rack's tile or a stock tile while the hand is live."""
    if state.ended:
        return []
    problems = []
    stock = {tile.id for tile in state.stock}
    for seat in range(len(state.seats)):
        hidden = stock | {
            tile.id
            for other, other_seat in enumerate(state.seats)
            if other != seat
            for tile in other_seat.rack
        }
        leaked = view_tiles(view(state, seat)) & hidden
        if leaked:
            problems.append(f"seat {seat}'s view shows hidden tiles {sorted(leaked)}")
    return problems


def event_problems(events: Iterable[Event], actor: int) -> list[str]:
    """Private tiles only ever go to the seat that acted."""
    return [
        f"event {event.kind} carries private tiles for seat {event.seat}, not the actor {actor}"
        for event in events
        if event.private and event.seat != actor
    ]


def rack_size_problems(state: HandState) -> list[str]:
    """Between turns each rack holds what the tiles it laid down leave of 21."""
    if state.ended:
        return []
    problems = []
    for index, seat in enumerate(state.seats):
        laid = sum(len(item.meld.tiles) for item in state.table if item.owner == index)
        # Lay-offs and okeys taken back move tiles between racks and others' melds, so only an
        # upper bound holds for every seat: nobody holds more than 22.
        if len(seat.rack) > 22:
            problems.append(f"seat {index} holds {len(seat.rack)} tiles")
        if seat.opened_as is None and laid:
            problems.append(f"seat {index} has melds on the table but has not opened")
    return problems


def all_problems(state: HandState) -> list[str]:
    return [
        *accounting_problems(state),
        *leak_problems(state),
        *rack_size_problems(state),
    ]
