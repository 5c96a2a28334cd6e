"""Cheap upper bounds, without solving: a quick "no" for the many hands that cannot open or
lay down."""

from __future__ import annotations

from okey101.engine.melds import HIGH_ONE
from okey101.engine.rules import RuleSet
from okey101.engine.solver.arrangement import Hand


def _masks(hand: Hand, rules: RuleSet) -> tuple[int, list[int], list[int], list[int]]:
    """The okeys held and, per colour, bit p set for place p (1-13): the places held, those
    held twice, and those whose tiles could be in some meld at all: in reach of a run given the
    okeys held, or on a number with enough colours for a set."""
    okey_face = hand.okey.face
    okeys = 0
    held = [0, 0, 0, 0]
    twice = [0, 0, 0, 0]
    for tile in hand.tiles:
        # Okey.is_wild and Okey.plays_as, inlined: this runs for every unopened turn.
        tile_id = tile.id
        if tile_id >= 104:
            face = okey_face  # a false joker plays as the okey's face
        elif tile_id >> 1 == okey_face:
            okeys += 1
            continue
        else:
            face = tile_id >> 1
        colour = face // 13
        bit = 2 << (face - 13 * colour)
        if held[colour] & bit:
            twice[colour] |= bit
        held[colour] |= bit
    red, yellow, blue, black = held
    # Numbers held in enough colours for a set with the okeys.
    if okeys >= 2:
        sets = red | yellow | blue | black
    elif okeys == 1:
        sets = (red | yellow) & (blue | black) | (red & yellow) | (blue & black)
    else:
        sets = (red & yellow & (blue | black)) | (blue & black & (red | yellow))
    high_one = rules.run_may_end_12_13_1
    lows = _HIGH_ONE_LOWS if high_one else _LOWS
    meldable = [0, 0, 0, 0]
    for colour in range(4):
        places = held[colour]
        if not places:
            continue
        if high_one and places & 2:
            places |= 1 << HIGH_ONE  # a 1 may also be the 1 of 12-13-1
        # Bit ``low``: the window low..low+2 holds enough tiles for a run with the okeys.
        first, second, third = places, places >> 1, places >> 2
        if okeys >= 2:
            windows = first | second | third
        elif okeys == 1:
            windows = (first & second) | (first & third) | (second & third)
        else:
            windows = first & second & third
        windows &= lows
        reach = windows | (windows << 1) | (windows << 2)
        if reach >> HIGH_ONE & 1:
            reach |= 2
        meldable[colour] = (reach | sets) & held[colour]
    return okeys, held, twice, meldable


# The windows' first places a run can have: 1-11, or 1-12 where a run may end 12-13-1.
_LOWS = sum(1 << low for low in range(1, 12))
_HIGH_ONE_LOWS = sum(1 << low for low in range(1, 13))
# The sum of the places set in a mask of bits 1-13.
_PLACE_SUMS = [0] * (1 << 14)
for _mask in range(1, 1 << 14):
    _lowest = _mask & -_mask
    _PLACE_SUMS[_mask] = _PLACE_SUMS[_mask ^ _lowest] + _lowest.bit_length() - 1


def meldable_faces(hand: Hand, rules: RuleSet) -> tuple[int, list[tuple[int, int]]]:
    """The okeys held, and (face, count) of every face that could be in some meld at all: in
    reach of a run given the okeys held, or on a number with enough colours for a set."""
    okeys, _held, twice, meldable = _masks(hand, rules)
    return okeys, [
        (13 * colour + place - 1, 2 if twice[colour] >> place & 1 else 1)
        for colour in range(4)
        for place in range(1, 14)
        if meldable[colour] >> place & 1
    ]


def quick_value_bound(hand: Hand, rules: RuleSet) -> int:
    """A cheap upper bound on any runs-and-sets value of ``hand``, without solving: the tiles
    that could be in some meld at all, and every okey at 13. A quick "no" for the many hands
    that cannot open."""
    okeys, _held, twice, meldable = _masks(hand, rules)
    sums = _PLACE_SUMS
    total = okeys * 13
    for colour in range(4):
        places = meldable[colour]
        if places:
            total += sums[places] + sums[places & twice[colour]]
    return total


def quick_tiles_bound(hand: Hand, rules: RuleSet) -> int:
    """A cheap upper bound on how many tiles of ``hand`` can go down as runs and sets."""
    okeys, _held, twice, meldable = _masks(hand, rules)
    return okeys + sum(
        (meldable[colour]).bit_count() + (meldable[colour] & twice[colour]).bit_count()
        for colour in range(4)
    )
