"""The shadow state: a ``HandState`` rebuilt from what one seat may know, to check its moves on.

The other racks and the stock are filled with placeholder tiles (the tiles the seat cannot see,
in id order), which are not information. No rule of ``apply`` reads another rack or the order of
the stock to decide whether a move is legal (only the stock's size, which the view shows), so a
move that applies to the shadow applies to the real state; the tests check this on thousands of
positions. The shadow's outcome is read only for the bot's own seat (its own score when it
finishes), which depends on public information alone.
"""

from __future__ import annotations

import dataclasses

from okey101.engine.bots.memory import BotMemory
from okey101.engine.errors import InvalidInput
from okey101.engine.hand import RULES_VERSION, SEATS, EventKind, HandState, TableMeld, ThisTurn
from okey101.engine.rules import RuleSet
from okey101.engine.seat import PenaltyReason, Seat
from okey101.engine.tiles import ALL_TILES, Okey
from okey101.engine.view import SeatView


def shadow_state(seat_view: SeatView, rules: RuleSet, memory: BotMemory | None = None) -> HandState:
    """A ``HandState`` built from ``seat_view`` alone, to check moves on.

    The other racks and the stock hold placeholders: the tiles the seat cannot see, in id order
    (stock first, then the racks), so nothing hidden is in it. Everything the legality of the
    seat's moves depends on is public: its own rack, the table, the piles, who opened, the
    stock's size, the takeable tile, the tile taken this turn.
    """
    if seat_view.version != RULES_VERSION:
        raise InvalidInput("UNKNOWN_RULES_VERSION", version=seat_view.version)
    okey = Okey(seat_view.indicator)
    me = seat_view.seat
    seen: set[int] = {tile.id for tile in seat_view.rack}
    seen.add(seat_view.indicator.id)
    for meld, _owner in seat_view.table:
        seen.update(tile.id for tile in meld.tiles)
    for other in seat_view.seats:
        seen.update(tile.id for tile in other.discards)
    unseen = [tile for tile in ALL_TILES if tile.id not in seen]
    needed = seat_view.stock_count + sum(
        other.tile_count for other in seat_view.seats if other.seat != me
    )
    # A well-formed view leaves exactly as many unseen tiles as the others hold and the stock;
    # placeholders repeat only for a malformed one (the shadow's legality never reads them).
    pool = unseen * (needed // max(len(unseen), 1) + 1) if unseen else [seat_view.indicator]
    stock = tuple(pool[: seat_view.stock_count])
    position = seat_view.stock_count
    showed = set(memory.showed) if memory is not None else set()
    starter = (seat_view.dealer + 1) % SEATS
    seats: list[Seat] = []
    for other in seat_view.seats:
        count = other.penalties // rules.penalty_points if rules.penalty_points > 0 else 0
        if other.seat == me:
            rack = seat_view.rack
        else:
            rack = tuple(pool[position : position + other.tile_count])
            position += other.tile_count
        turns_played = sum(
            1 for turn in range(seat_view.turn_number) if (starter + turn) % SEATS == other.seat
        )
        seats.append(
            Seat(
                rack=rack,
                discards=other.discards,
                opened_as=other.opened_as,
                # When it opened (an older view without it: some earlier turn).
                opened_on_turn=(
                    -1
                    if other.opened_as is None
                    else other.opened_on_turn
                    if other.opened_on_turn >= 0
                    else -2
                ),
                penalties=(PenaltyReason.CHARGED_BEFORE,) * count,
                turns_played=turns_played,
                showed_indicator=other.seat in showed,
            )
        )
    # The view carries the seat's own turn so far; a view without it (the start of a phase, or
    # an older client) leaves it to the memory's events.
    this_turn = (
        seat_view.this_turn if seat_view.this_turn != ThisTurn() else _this_turn(seat_view, memory)
    )
    if this_turn.opened:
        seats[me] = dataclasses.replace(seats[me], opened_on_turn=seat_view.turn_number)
    return HandState(
        rules=rules,
        okey=okey,
        dealer=seat_view.dealer,
        turn=seat_view.turn,
        phase=seat_view.phase,
        seats=tuple(seats),
        table=tuple(TableMeld(meld, owner) for meld, owner in seat_view.table),
        stock=stock,
        takeable=seat_view.takeable,
        turn_number=seat_view.turn_number,
        this_turn=this_turn,
        result=seat_view.result,
    )


def _this_turn(seat_view: SeatView, memory: BotMemory | None) -> ThisTurn:
    """What the seat to move has done this turn: the view gives the tile it took; the memory's
    events (when the caller passed them) say whether it opened, laid off, took an okey back or
    gave a tile back. Without them, nothing yet (a bot asked at the start of a phase)."""
    me = seat_view.seat
    taken = seat_view.taken_this_turn
    opened_before = seat_view.seats[me].opened_as is not None
    kinds = [kind for kind, seat in (memory.turn if memory else ()) if seat == me]
    if any(seat != me for _kind, seat in (memory.turn if memory else ())):
        kinds = []  # events of another seat's turn: stale, not this turn's
    gave_back = EventKind.GAVE_BACK in kinds
    if gave_back:
        # A give-back starts the turn afresh (then a draw, and play).
        kinds = kinds[len(kinds) - kinds[::-1].index(EventKind.GAVE_BACK) :]
    opened = EventKind.OPENED in kinds and opened_before
    # Unopened when it took: it has not opened, or opened after the take.
    taken_unopened = taken is not None and (
        not opened_before
        or (
            opened
            and EventKind.TOOK in kinds
            and kinds.index(EventKind.TOOK) < kinds.index(EventKind.OPENED)
        )
    )
    return ThisTurn(
        taken=taken,
        taken_unopened=taken_unopened,
        gave_back=gave_back,
        opened=opened,
        laid_off=kinds.count(EventKind.LAID_OFF),
        took_okey=EventKind.TOOK_OKEY in kinds,
    )
