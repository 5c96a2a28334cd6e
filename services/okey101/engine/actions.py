"""The moves a player can make, as values.

One frozen dataclass per kind of move. Tiles are physical tiles (``Tile``); melds on the table are
referred to by their index in ``HandState.table`` (the order they were laid).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from okey101.engine.tiles import Tile


class End(enum.StrEnum):
    """The end of a run a tile is laid off at."""

    LOW = "low"
    HIGH = "high"


@dataclass(frozen=True, slots=True)
class Draw:
    """Draw from the stock (with the stock out, where the next player may take the last discard:
    decline it)."""


@dataclass(frozen=True, slots=True)
class TakeDiscard:
    """Take the last tile the left-hand neighbour discarded."""


@dataclass(frozen=True, slots=True)
class GiveBack:
    """Return a taken discard that cannot be used (where the rules allow it, for +101)."""


@dataclass(frozen=True, slots=True)
class Group:
    """A group of tiles to put down, and (optionally) what its okeys stand for."""

    tiles: tuple[Tile, ...]
    okey_as: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class Open:
    """Open with runs and sets (worth the minimum, or the whole hand but one tile)."""

    groups: tuple[Group, ...]


@dataclass(frozen=True, slots=True)
class OpenPairs:
    """Open with pairs (at least the minimum number)."""

    pairs: tuple[tuple[Tile, Tile], ...]


@dataclass(frozen=True, slots=True)
class LayDown:
    """New melds or pairs after opening."""

    groups: tuple[Group, ...]


@dataclass(frozen=True, slots=True)
class LayOff:
    """Add one tile to a run (at an end) or a three-tile set on the table."""

    tile: Tile
    meld: int
    end: End | None = None


@dataclass(frozen=True, slots=True)
class TakeOkey:
    """Put the tile(s) an okey on the table stands for in its place and take the okey."""

    meld: int
    tiles: tuple[Tile, ...]


@dataclass(frozen=True, slots=True)
class ShowIndicator:
    """Show the indicator's twin from the hand on one's first turn (where the rules score it)."""


@dataclass(frozen=True, slots=True)
class Discard:
    """Discard a tile, ending the turn (the last tile finishes the hand)."""

    tile: Tile


Action = (
    Draw
    | TakeDiscard
    | GiveBack
    | Open
    | OpenPairs
    | LayDown
    | LayOff
    | TakeOkey
    | ShowIndicator
    | Discard
)


def action_name(action: Action) -> str:
    """The move's name as scenario files and the API write it."""
    return _NAMES[type(action)]


_NAMES: dict[type, str] = {
    Draw: "draw",
    TakeDiscard: "take",
    GiveBack: "give_back",
    Open: "open",
    OpenPairs: "open_pairs",
    LayDown: "meld",
    LayOff: "lay_off",
    TakeOkey: "take_okey",
    ShowIndicator: "show_indicator",
    Discard: "discard",
}
