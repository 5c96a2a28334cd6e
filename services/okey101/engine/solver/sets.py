"""Sets: which per-colour counts and okeys on one number split into valid sets, and how.

The table of splits is built once at import: every count vector (0-2 tiles of each colour) with
0-2 okeys that makes sets of three or four colours.
"""

from __future__ import annotations

import itertools
from functools import lru_cache


def _split_into_sets(
    counts: tuple[int, ...], okeys: int
) -> tuple[tuple[tuple[int, ...], int], ...] | None:
    """A way to split ``counts[colour]`` tiles and ``okeys`` okeys into sets of 3-4 colours."""
    if sum(counts) == 0 and okeys == 0:
        return ()
    present = [colour for colour in range(4) if counts[colour] > 0]
    if not present:
        return None
    # The first present colour is in some set: choose that set's other colours and okeys.
    first = present[0]
    others = [colour for colour in present if colour != first]
    for size in range(len(others), -1, -1):
        for chosen in itertools.combinations(others, size):
            colours = (first, *chosen)
            for wild in range(min(okeys, 4 - len(colours)), -1, -1):
                if not 3 <= len(colours) + wild <= 4:
                    continue
                rest = list(counts)
                for colour in colours:
                    rest[colour] -= 1
                tail = _split_into_sets(tuple(rest), okeys - wild)
                if tail is not None:
                    return ((colours, wild), *tail)
    return None


# For every count vector (each 0-2) and okey count (0-2): the set split, if there is one.
SET_SPLITS: dict[tuple[tuple[int, ...], int], tuple[tuple[tuple[int, ...], int], ...]] = {}
for _counts in itertools.product(range(3), repeat=4):
    for _okeys in range(3):
        _split = _split_into_sets(_counts, _okeys)
        if _split and (sum(_counts) > 0):
            SET_SPLITS[(_counts, _okeys)] = _split


@lru_cache(maxsize=4096)
def set_options(available: tuple[int, ...], okeys: int) -> tuple[tuple[tuple[int, ...], int], ...]:
    """Every (taken counts, okeys) on one number that splits into sets, most tiles first."""
    options = [
        (taken, wild)
        for taken in itertools.product(*(range(count + 1) for count in available))
        for wild in range(okeys + 1)
        if (taken, wild) in SET_SPLITS
    ]
    options.sort(key=lambda option: -(sum(option[0]) + option[1]))
    return tuple(options)


def _room(taken: tuple[int, ...], wild: int) -> int:
    """How many more okeys can top up the sets of (taken, wild), one at a time."""
    room = 0
    while (taken, wild + room + 1) in SET_SPLITS:
        room += 1
    return room


SET_ROOM: dict[tuple[tuple[int, ...], int], int] = {key: _room(*key) for key in SET_SPLITS}


@lru_cache(maxsize=4096)
def lean_set_options(
    available: tuple[int, ...], okeys: int
) -> tuple[tuple[tuple[int, ...], int], ...]:
    """The set options the search must branch on when the leaves handle the rest.

    Left out: an okey that only tops up a set the tiles make anyway (the leaf adds it), and a
    single tile with two okeys (the leaf tries it for every tile).
    """
    return tuple(
        (taken, wild)
        for taken, wild in set_options(available, okeys)
        if sum(taken) >= 2 and (wild == 0 or (taken, wild - 1) not in SET_SPLITS)
    )


@lru_cache(maxsize=4096)
def most_set_tiles(available: tuple[int, ...], okeys: int) -> int:
    """The most real tiles sets on one number can take (0 if none): the search's bound."""
    return max((sum(taken) for taken, _wild in set_options(available, okeys)), default=0)
