"""Tiles, faces, the indicator and the okey.

A set holds 106 physical tiles: 1-13 in four colours, twice each, and two false jokers. Every
physical tile has a stable id (0-105) so that a hand can be replayed and audited tile by tile.

A *face* is what is printed on a tile (``R7``); two physical tiles share each face. The okey is
the tile one above the indicator in its colour (13 wraps to 1); both okeys are wild. A false
joker is not wild: it plays as the okey's own face.

Faces are small integers so that the solver can index arrays with them: ``colour * 13 + number -
1`` for the 52 coloured faces and ``FALSE_JOKER_FACE`` (52) for the printed false joker.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from okey101.engine.errors import InvalidInput

NUMBERS = range(1, 14)
FACE_COUNT = 52
FALSE_JOKER_FACE = 52
TILE_COUNT = 106
COPIES = 2


class Colour(enum.IntEnum):
    """The four colours, in the order their letters are written."""

    RED = 0
    YELLOW = 1
    BLUE = 2
    BLACK = 3

    @property
    def letter(self) -> str:
        return "RYBK"[self]


def face_of(colour: Colour | int, number: int) -> int:
    """The face index of a coloured tile."""
    return int(colour) * 13 + number - 1


def face_colour(face: int) -> Colour:
    return Colour(face // 13)


def face_number(face: int) -> int:
    return face % 13 + 1


def face_name(face: int) -> str:
    """The notation of a face: ``R7``, ``K13``, ``FJ``."""
    if face == FALSE_JOKER_FACE:
        return "FJ"
    return f"{face_colour(face).letter}{face_number(face)}"


def parse_face(text: str) -> int:
    """Parse ``R7`` / ``K13`` / ``FJ`` into a face index; a clear error otherwise."""
    token = text.strip().upper()
    if token == "FJ":
        return FALSE_JOKER_FACE
    # ASCII digits only: str.isdigit() also accepts "²" (which int() refuses) and "٧".
    digits = token[1:]
    if len(token) >= 2 and token[0] in "RYBK" and digits.isascii() and digits.isdigit():
        number = int(digits)
        if 1 <= number <= 13:
            return face_of("RYBK".index(token[0]), number)
    raise InvalidInput("UNKNOWN_TILE", tile=str(text))


@dataclass(frozen=True, slots=True, order=True)
class Tile:
    """One physical tile. ``id`` is stable: face * 2 + copy, false jokers 104 and 105."""

    id: int

    def __post_init__(self) -> None:
        if not 0 <= self.id < TILE_COUNT:
            raise InvalidInput("UNKNOWN_TILE", tile=str(self.id))

    @property
    def face(self) -> int:
        return self.id // COPIES if self.id < 104 else FALSE_JOKER_FACE

    @property
    def copy(self) -> int:
        return self.id % COPIES

    @property
    def is_false_joker(self) -> bool:
        return self.id >= 104

    @property
    def colour(self) -> Colour | None:
        return None if self.is_false_joker else face_colour(self.face)

    @property
    def number(self) -> int | None:
        return None if self.is_false_joker else face_number(self.face)

    def __str__(self) -> str:
        return face_name(self.face)

    def __repr__(self) -> str:
        return f"Tile({face_name(self.face)}#{self.copy})"


ALL_TILES: tuple[Tile, ...] = tuple(Tile(i) for i in range(TILE_COUNT))


def tile_by_id(tile_id: int) -> Tile:
    if not 0 <= tile_id < TILE_COUNT:
        raise InvalidInput("UNKNOWN_TILE", tile=str(tile_id))
    return ALL_TILES[tile_id]


def copies_of(face: int) -> tuple[Tile, Tile]:
    """Both physical tiles printed with ``face``."""
    first = face * COPIES if face < FACE_COUNT else 104
    return ALL_TILES[first], ALL_TILES[first + 1]


def next_number(number: int) -> int:
    """The number after ``number``, 13 wrapping to 1 (how the okey follows the indicator)."""
    return 1 if number == 13 else number + 1


@dataclass(frozen=True, slots=True)
class Okey:
    """What the indicator makes of the tiles in one hand."""

    indicator: Tile
    # The face of the okey, which a false joker also plays as (derived from the indicator).
    face: int = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if self.indicator.is_false_joker:
            raise InvalidInput("INDICATOR_IS_FALSE_JOKER")
        number = face_number(self.indicator.face)
        colour = face_colour(self.indicator.face)
        object.__setattr__(self, "face", face_of(colour, next_number(number)))

    def is_wild(self, tile: Tile) -> bool:
        """True for the two okeys (never for a false joker)."""
        return tile.id < 104 and tile.id >> 1 == self.face

    def plays_as(self, tile: Tile) -> int:
        """The face a non-wild tile plays as: its own, or the okey's face for a false joker."""
        return self.face if tile.id >= 104 else tile.id >> 1


class TileAllocator:
    """Hands out physical tiles for written faces, each copy at most once.

    Scenarios and the command line write faces (``R7``); the engine works on physical tiles.
    The allocator gives the first free copy and refuses a third one with a clear error.
    """

    def __init__(self, used: Iterable[Tile] = ()) -> None:
        self._used: set[int] = {tile.id for tile in used}

    def take(self, face: int) -> Tile:
        for tile in copies_of(face):
            if tile.id not in self._used:
                self._used.add(tile.id)
                return tile
        raise InvalidInput("TOO_MANY_COPIES", tile=face_name(face))

    def take_all(self, faces: Sequence[int]) -> tuple[Tile, ...]:
        return tuple(self.take(face) for face in faces)

    def take_names(self, names: Sequence[str]) -> tuple[Tile, ...]:
        return tuple(self.take(parse_face(name)) for name in names)

    def remaining(self) -> tuple[Tile, ...]:
        """Every tile not handed out yet, in id order."""
        return tuple(tile for tile in ALL_TILES if tile.id not in self._used)


def tiles_from_names(names: Sequence[str], *, used: Iterable[Tile] = ()) -> tuple[Tile, ...]:
    """Physical tiles for written faces, never more copies than the set has."""
    return TileAllocator(used).take_names(names)
