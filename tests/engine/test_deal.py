"""Dealing a hand: rack sizes, the stock, the indicator, the deck checks and the first turn.

The README's "Common to all three": 21 tiles each, 22 for the player after the dealer, who starts
by discarding without drawing; 20 tiles stay in the stock; the indicator is never a false joker.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

import pytest

from okey101.engine.actions import Discard, Draw, TakeDiscard
from okey101.engine.deal import deal, shuffled_deck
from okey101.engine.errors import InvalidInput, RuleViolation
from okey101.engine.hand import EventKind, Phase, apply
from okey101.engine.invariants import tile_locations
from okey101.engine.rules import RuleSet
from okey101.engine.tiles import ALL_TILES, TILE_COUNT, Tile

PRESETS = ("oyna", "boombala", "north_sultan")
FALSE_JOKERS = (Tile(104), Tile(105))


def _deck(seed: int) -> tuple[Tile, ...]:
    return shuffled_deck(random.Random(seed))


def _deck_with(front_of_rest: list[Tile], seed: int = 7) -> tuple[Tile, ...]:
    """A deck whose 86th tile onwards (the first candidates for the indicator) start with
    ``front_of_rest``; every other tile in a shuffled order."""
    chosen = {tile.id for tile in front_of_rest}
    others = [tile for tile in _deck(seed) if tile.id not in chosen]
    deck = [*others[:85], *front_of_rest, *others[85:]]
    assert len(deck) == TILE_COUNT
    return tuple(deck)


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("dealer", range(4))
def test_deal_sizes_phase_and_turn(preset: str, dealer: int) -> None:
    rules = RuleSet.preset(preset)
    state = deal(rules, dealer, _deck(100 + dealer))
    starter = (dealer + 1) % 4
    sizes = [len(seat.rack) for seat in state.seats]
    assert sizes[starter] == 22
    assert all(size == 21 for seat, size in enumerate(sizes) if seat != starter)
    assert len(state.stock) == 20
    assert state.phase is Phase.FIRST
    assert state.turn == starter
    assert state.dealer == dealer
    assert state.rules == rules
    assert state.table == ()
    assert state.takeable is None
    assert state.result is None
    assert all(seat.discards == () and seat.opened_as is None for seat in state.seats)
    assert not state.okey.indicator.is_false_joker


@pytest.mark.parametrize("seed", range(12))
def test_every_tile_is_placed_once(seed: int) -> None:
    state = deal(RuleSet.preset("oyna"), seed % 4, _deck(seed))
    placed = Counter(tile.id for tile in tile_locations(state))
    assert sorted(placed) == list(range(TILE_COUNT))
    assert set(placed.values()) == {1}
    # Independently of the invariants module: racks + stock + indicator.
    ids = [state.okey.indicator.id, *(t.id for s in state.seats for t in s.rack)]
    ids += [tile.id for tile in state.stock]
    assert sorted(ids) == list(range(TILE_COUNT))


@pytest.mark.parametrize("dealer", range(4))
def test_deal_follows_the_documented_order(dealer: int) -> None:
    deck = _deck(40 + dealer)
    state = deal(RuleSet.preset("oyna"), dealer, deck)
    position = 0
    for offset in range(4):
        seat = (dealer + 1 + offset) % 4
        size = 22 if offset == 0 else 21
        assert state.seats[seat].rack == deck[position : position + size]
        position += size
    assert position == 85
    rest = [tile for tile in deck[85:] if tile != state.okey.indicator]
    assert state.stock == tuple(rest)


def test_indicator_skips_a_false_joker() -> None:
    ordinary = Tile(2 * 13 * 2 + 4 * 2)  # a blue tile
    deck = _deck_with([FALSE_JOKERS[0], ordinary])
    assert deck[85].is_false_joker
    state = deal(RuleSet.preset("oyna"), 0, deck)
    assert state.okey.indicator == ordinary
    # The skipped false joker stays in play: first in the stock.
    assert state.stock[0] == FALSE_JOKERS[0]
    assert len(state.stock) == 20


def test_indicator_skips_both_false_jokers() -> None:
    ordinary = Tile(10)
    deck = _deck_with([FALSE_JOKERS[1], FALSE_JOKERS[0], ordinary])
    state = deal(RuleSet.preset("boombala"), 2, deck)
    assert state.okey.indicator == ordinary
    assert state.stock[:2] == (FALSE_JOKERS[1], FALSE_JOKERS[0])
    assert len(state.stock) == 20


@pytest.mark.parametrize("seed", range(30))
def test_indicator_is_never_a_false_joker(seed: int) -> None:
    # Put a false joker first among the candidates in half the decks.
    deck = _deck_with([FALSE_JOKERS[seed % 2]], seed) if seed % 3 == 0 else _deck(seed)
    state = deal(RuleSet.preset("north_sultan"), seed % 4, deck)
    assert not state.okey.indicator.is_false_joker


def _code(excinfo: pytest.ExceptionInfo[Exception]) -> str:
    return getattr(excinfo.value, "code", "")


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda deck: deck[:-1], id="short"),
        pytest.param(lambda deck: deck[:85], id="very-short"),
        pytest.param(lambda deck: (), id="empty"),
        pytest.param(lambda deck: (*deck[:-1], deck[0]), id="duplicate"),
        pytest.param(lambda deck: (*deck, deck[3]), id="long-duplicate"),
    ],
)
def test_bad_deck_is_refused(make: Callable[[tuple[Tile, ...]], tuple[Tile, ...]]) -> None:
    bad = make(_deck(3))
    with pytest.raises(InvalidInput) as excinfo:
        deal(RuleSet.preset("oyna"), 0, bad)
    assert _code(excinfo) == "BAD_DECK"


@pytest.mark.parametrize("foreign_id", [106, 107, -1, 500])
def test_a_tile_that_is_not_in_the_set_cannot_be_made(foreign_id: int) -> None:
    """A tile id outside 0-105 is no tile of the set: it is refused where it is made, so no
    deck (or rack) can hold one."""
    with pytest.raises(InvalidInput) as excinfo:
        Tile(foreign_id)
    assert _code(excinfo) == "UNKNOWN_TILE"


@pytest.mark.parametrize("foreign_id", [106, 107, -1, 500])
def test_deck_with_a_tile_that_is_not_in_the_set_is_refused(foreign_id: int) -> None:
    """106 distinct ids are not enough: the deck must be the 106 tiles of the set. A forged
    tile (made without the check) in place of the first tile dealt is refused by the deal."""
    deck = list(_deck(3))
    forged = object.__new__(Tile)
    object.__setattr__(forged, "id", foreign_id)
    deck[0] = forged
    assert len({tile.id for tile in deck}) == TILE_COUNT
    with pytest.raises(InvalidInput) as excinfo:
        deal(RuleSet.preset("oyna"), 0, deck)
    assert _code(excinfo) == "BAD_DECK"


@pytest.mark.parametrize("dealer", [-1, 4, 5, 100])
def test_bad_dealer_is_refused(dealer: int) -> None:
    with pytest.raises(InvalidInput) as excinfo:
        deal(RuleSet.preset("oyna"), dealer, _deck(4))
    assert _code(excinfo) == "UNKNOWN_SEAT"


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("dealer", range(4))
def test_starting_player_cannot_draw_and_discards_to_pass(preset: str, dealer: int) -> None:
    state = deal(RuleSet.preset(preset), dealer, _deck(200 + dealer))
    starter = state.turn
    for action in (Draw(), TakeDiscard()):
        with pytest.raises(RuleViolation) as excinfo:
            apply(state, starter, action)
        assert _code(excinfo) == "NO_DRAW_ON_FIRST_TURN"
    # A tile that costs nothing: not the okey (nothing on the table is playable yet).
    tile = next(t for t in state.seats[starter].rack if not state.okey.is_wild(t))
    after, events = apply(state, starter, Discard(tile))
    assert after.turn == (starter + 1) % 4
    assert after.phase is Phase.DRAW
    assert after.takeable == tile
    assert after.seats[starter].discards == (tile,)
    assert len(after.seats[starter].rack) == 21
    assert tile not in after.seats[starter].rack
    assert after.seats[starter].penalties == ()
    assert after.stock == state.stock
    assert [event.kind for event in events] == [EventKind.DISCARDED]
    # The next player now draws normally: the top of the stock.
    drawn, _ = apply(after, after.turn, Draw())
    assert drawn.seats[after.turn].rack[-1] == state.stock[0]
    assert len(drawn.seats[after.turn].rack) == 22
    assert drawn.phase is Phase.PLAY


def test_shuffled_deck_is_a_function_of_its_seed() -> None:
    for seed in range(10):
        first = shuffled_deck(random.Random(seed))
        assert first == shuffled_deck(random.Random(seed))
        assert sorted(first) == list(ALL_TILES)
    decks = {shuffled_deck(random.Random(seed)) for seed in range(10)}
    assert len(decks) == 10
    assert shuffled_deck(random.Random(1)) != tuple(ALL_TILES)


def test_same_seed_same_deal() -> None:
    rules = RuleSet.preset("oyna")
    assert deal(rules, 1, _deck(5)) == deal(rules, 1, _deck(5))
    assert deal(rules, 1, _deck(5)) != deal(rules, 1, _deck(6))
