"""Cheap upper bounds, without solving: a quick "no" for the many hands that cannot open or
lay down."""

from __future__ import annotations

from okey101.engine.melds import HIGH_ONE
from okey101.engine.rules import RuleSet
from okey101.engine.solver.arrangement import Hand
from okey101.engine.tiles import FACE_COUNT


def meldable_faces(hand: Hand, rules: RuleSet) -> tuple[int, list[tuple[int, int]]]:
    """The okeys held, and (face, count) of every face that could be in some meld at all: in
    reach of a run given the okeys held, or on a number with enough colours for a set."""
    okey_face = hand.okey.face
    okeys = 0
    counts = [0] * FACE_COUNT
    present = [0, 0, 0, 0]  # per colour, bit p set when place p (1-14) is held
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
        counts[face] += 1
        present[face // 13] |= 1 << (face % 13 + 1)
    high_one = rules.run_may_end_12_13_1
    if high_one:
        for colour in range(4):
            if present[colour] & 2:
                present[colour] |= 1 << HIGH_ONE
    top = HIGH_ONE if high_one else 13
    red, yellow, blue, black = present
    colours_at = [
        (red >> number & 1) + (yellow >> number & 1) + (blue >> number & 1) + (black >> number & 1)
        for number in range(14)
    ]
    meldable: list[tuple[int, int]] = []
    for face in range(FACE_COUNT):
        count = counts[face]
        if not count:
            continue
        colour, number = face // 13, face % 13 + 1
        if colours_at[number] + okeys >= 3:
            meldable.append((face, count))
            continue
        held = present[colour]
        places = (number, HIGH_ONE) if number == 1 and high_one else (number,)
        for place in places:
            for low in range(max(1, place - 2), min(place, top - 2) + 1):
                # The other two places of the window low..low+2.
                others = (held >> low & 1) + (held >> (low + 1) & 1) + (held >> (low + 2) & 1) - 1
                if 2 - others <= okeys:
                    meldable.append((face, count))
                    break
            else:
                continue
            break
    return okeys, meldable


def quick_value_bound(hand: Hand, rules: RuleSet) -> int:
    """A cheap upper bound on any runs-and-sets value of ``hand``, without solving: the tiles
    that could be in some meld at all, and every okey at 13. A quick "no" for the many hands
    that cannot open."""
    okeys, meldable = meldable_faces(hand, rules)
    return okeys * 13 + sum(count * (face % 13 + 1) for face, count in meldable)


def quick_tiles_bound(hand: Hand, rules: RuleSet) -> int:
    """A cheap upper bound on how many tiles of ``hand`` can go down as runs and sets."""
    okeys, meldable = meldable_faces(hand, rules)
    return okeys + sum(count for _face, count in meldable)
