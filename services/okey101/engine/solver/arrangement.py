"""What the solver is asked about (``Hand``: the tiles held and the okey) and what it answers
(``Arrangement``: the melds made and the tiles left over)."""

from __future__ import annotations

from dataclasses import dataclass, field

from okey101.engine.melds import Meld, MeldKind
from okey101.engine.tiles import Okey, Tile, face_name


def tile_id(tile: Tile) -> int:
    return tile.id


@dataclass(frozen=True, slots=True)
class Hand:
    """The tiles a player holds and the okey of the hand they are in."""

    tiles: tuple[Tile, ...]
    okey: Okey

    def without(self, tile: Tile) -> Hand:
        return Hand(tuple(t for t in self.tiles if t.id != tile.id), self.okey)

    def with_tile(self, tile: Tile) -> Hand:
        return Hand((*self.tiles, tile), self.okey)


@dataclass(frozen=True, slots=True)
class Arrangement:
    """Melds made from a hand, and the tiles left over.

    ``value`` is the melds' worth toward an opening (runs and sets); for pairs it is 0 and
    ``pair_count`` says how many. ``okeys`` lists each okey used and the face it stands for
    (``None`` where a set leaves its colour open).
    """

    value: int
    melds: tuple[Meld, ...]
    leftover: tuple[Tile, ...]
    okeys: tuple[tuple[Tile, int | None], ...] = field(default=())

    @property
    def pair_count(self) -> int:
        return sum(1 for meld in self.melds if meld.kind is MeldKind.PAIR)

    @property
    def tile_count(self) -> int:
        return sum(len(meld.tiles) for meld in self.melds)

    def to_json(self) -> dict[str, object]:
        return {
            "value": self.value,
            "melds": [meld.names() for meld in self.melds],
            "okeys": [
                {"tile": str(tile), "stands_for": None if face is None else face_name(face)}
                for tile, face in self.okeys
            ],
            "leftover": [str(tile) for tile in self.leftover],
        }


EMPTY_ARRANGEMENT = Arrangement(0, (), ())
