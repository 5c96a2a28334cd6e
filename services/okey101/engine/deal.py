"""Dealing a hand from a deck order.

The deck order comes from outside (randomness is injected): ``shuffled_deck(rng)`` for tests,
bots and simulations, and the table's provably fair shuffle for real play. ``deal`` is then a
documented function of that order:

1. The seat after the dealer gets the first 22 tiles, then each following seat 21, in order of
   play (tiles 0-21, 22-42, 43-63, 64-84).
2. The indicator is the first tile of the 21 that remain that is not a false joker; it leaves
   play.
3. The other 20 tiles are the stock, drawn from the front.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from okey101.engine.errors import InvalidInput
from okey101.engine.hand import SEATS, HandState, Phase
from okey101.engine.rules import RuleSet
from okey101.engine.seat import Seat
from okey101.engine.tiles import ALL_TILES, TILE_COUNT, Okey, Tile

FIRST_RACK = 22
RACK = 21
STOCK = 20


def shuffled_deck(rng: random.Random) -> tuple[Tile, ...]:
    """All 106 tiles in an order drawn from ``rng``."""
    deck = list(ALL_TILES)
    rng.shuffle(deck)
    return tuple(deck)


def deal(rules: RuleSet, dealer: int, deck: Sequence[Tile]) -> HandState:
    """The opening state of a hand dealt by ``dealer`` from ``deck`` (all 106 tiles)."""
    if sorted(tile.id for tile in deck) != list(range(TILE_COUNT)):
        raise InvalidInput("BAD_DECK")
    if not 0 <= dealer < SEATS:
        raise InvalidInput("UNKNOWN_SEAT", seat=dealer)
    starter = (dealer + 1) % SEATS
    racks: dict[int, tuple[Tile, ...]] = {}
    position = 0
    for offset in range(SEATS):
        seat = (starter + offset) % SEATS
        size = FIRST_RACK if offset == 0 else RACK
        racks[seat] = tuple(deck[position : position + size])
        position += size
    rest = list(deck[position:])
    indicator = next(tile for tile in rest if not tile.is_false_joker)
    rest.remove(indicator)
    return HandState(
        rules=rules,
        okey=Okey(indicator),
        dealer=dealer,
        turn=starter,
        phase=Phase.FIRST,
        seats=tuple(Seat(rack=racks[seat]) for seat in range(SEATS)),
        stock=tuple(rest),
    )
