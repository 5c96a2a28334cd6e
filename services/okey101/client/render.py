"""Tiles, faces and melds as coloured text (Rich ``Text``), read from the API's messages.

A tile is drawn as its notation on a light face in its colour (``R7`` red, ``K13`` black), so
the four colours read as they do on a real rack. In Turkish the letters would mislead (K reads
as *kırmızı*, red), so a Turkish screen draws the number alone in the colour's ink, as the game
sites do, and a Turkish sentence names the colour's word (``siyah 13``); the notation stays in
files and logs. Marks, also in the legend the screen shows:

- ``★`` an okey (one of the two wild tiles of the hand: ``Tile.wild``);
- ``◆`` a false joker (``Tile.false_joker``), which plays as the okey's face;
- underlined: a playable tile (``RackTile.playable``: a run or set on the table could take it);
- ``!`` discarding it costs +101 (``RackTile.costly_discard``: playable, or an okey).

Only the message fields are read, never the engine: a spectator's or another language's client
would draw the same from the same messages.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from okey.v1 import common_pb2
from rich.style import Style
from rich.text import Text

from okey101.engine.sentences import tile_name

#: Each colour's ink on the tile face.
INK: Final[dict[int, str]] = {
    common_pb2.COLOUR_RED: "red3",
    common_pb2.COLOUR_YELLOW: "dark_orange3",
    common_pb2.COLOUR_BLUE: "blue3",
    common_pb2.COLOUR_BLACK: "grey11",
}
FACE: Final = "grey89"
LETTERS: Final[dict[int, str]] = {
    common_pb2.COLOUR_RED: "R",
    common_pb2.COLOUR_YELLOW: "Y",
    common_pb2.COLOUR_BLUE: "B",
    common_pb2.COLOUR_BLACK: "K",
}
OKEY_MARK: Final = "★"
FALSE_JOKER_MARK: Final = "◆"
COSTLY_MARK: Final = "!"
#: Every tile is drawn this wide (mark, notation, cost mark), so racks line up in columns.
TILE_WIDTH: Final = 5


def face_name(face: common_pb2.Face, language: str = "en") -> str:
    """``R7`` for a Face message (``kırmızı 7`` in Turkish); ``?`` for an undecided one."""
    letter = LETTERS.get(face.colour)
    if letter is None or not 1 <= face.number <= 13:
        return "?"
    return tile_name(f"{letter}{face.number}", language)


def _screen_face(face: common_pb2.Face, language: str) -> str:
    """A face as the screen draws it in its ink: ``R7``, or ``7`` in Turkish."""
    if language == "tr" and face.colour in LETTERS and 1 <= face.number <= 13:
        return str(face.number)
    return face_name(face)


def face_text(face: common_pb2.Face, language: str = "en") -> Text:
    return Text(
        _screen_face(face, language),
        style=Style(color=INK.get(face.colour, "grey50"), bold=True),
    )


def tile_label(tile: common_pb2.Tile, language: str = "en") -> str:
    """The tile as the screen draws it, with its okey or false-joker mark (no padding, no
    colour): its notation, or in Turkish its number alone (the ink says the colour)."""
    if tile.false_joker:
        return f"{FALSE_JOKER_MARK}{'SO' if language == 'tr' else 'FJ'}"
    face = tile.notation
    if language == "tr" and tile.number:
        face = str(tile.number)
    return f"{OKEY_MARK}{face}" if tile.wild else face


def tile_plain(tile: common_pb2.Tile, language: str = "en") -> str:
    """The tile as a sentence names it: ``★R7``, or ``★kırmızı 7`` in Turkish."""
    name = tile_name("FJ" if tile.false_joker else tile.notation, language)
    if tile.false_joker:
        return f"{FALSE_JOKER_MARK}{name}"
    return f"{OKEY_MARK}{name}" if tile.wild else name


def tile_style(tile: common_pb2.Tile, *, playable: bool = False, language: str = "en") -> Style:
    if tile.false_joker:
        ink = "magenta"
    elif tile.wild and language != "tr":
        ink = "dark_magenta"  # (in Turkish the okey keeps its colour: the number alone is shown)
    else:
        ink = INK.get(tile.colour, "grey50")
    return Style(color=ink, bgcolor=FACE, bold=True, underline=playable)


def tile_text(
    tile: common_pb2.Tile,
    *,
    playable: bool = False,
    costly: bool = False,
    width: int | None = None,
    language: str = "en",
) -> Text:
    """One tile as coloured text; padded to ``width`` cells when given."""
    label = tile_label(tile, language)
    text = Text(label, style=tile_style(tile, playable=playable, language=language))
    if costly:
        text.append(COSTLY_MARK, style=Style(color="red1", bgcolor=FACE, bold=True))
    if width is not None and text.cell_len < width:
        text.pad_right(width - text.cell_len)
    return text


def rack_tile_text(
    item: common_pb2.RackTile, *, width: int | None = TILE_WIDTH - 1, language: str = "en"
) -> Text:
    return tile_text(
        item.tile,
        playable=item.playable,
        costly=item.costly_discard,
        width=width,
        language=language,
    )


def tiles_text(
    tiles: Iterable[common_pb2.Tile], separator: str = " ", language: str = "en"
) -> Text:
    """Tiles side by side, each in its colour."""
    return Text(separator).join(tile_text(tile, language=language) for tile in tiles)


def tiles_plain(tiles: Iterable[common_pb2.Tile], language: str = "en") -> str:
    """Tiles as a sentence names them: ``R5 R6 ★Y6``; ``kırmızı 5, kırmızı 6, ★sarı 6`` in
    Turkish."""
    return (", " if language == "tr" else " ").join(tile_plain(tile, language) for tile in tiles)


def meld_text(meld: common_pb2.Meld, language: str = "en") -> Text:
    """A meld's tiles in table order; an okey or false joker followed by what it plays as."""
    parts = []
    for item in meld.tiles:
        part = tile_text(item.tile, language=language)
        if (item.tile.wild or item.tile.false_joker) and item.HasField("stands_for"):
            part.append("=", style="grey50")
            part.append_text(face_text(item.stands_for, language))
        elif item.tile.wild and meld.kind == common_pb2.MELD_KIND_SET and meld.number:
            # A set of three: the okey is its number in a colour not decided yet.
            part.append(f"={meld.number}", style="grey50")
        parts.append(part)
    return Text(" ").join(parts)


def meld_plain(meld: common_pb2.Meld, language: str = "en") -> str:
    parts = []
    for item in meld.tiles:
        label = tile_plain(item.tile, language)
        if (item.tile.wild or item.tile.false_joker) and item.HasField("stands_for"):
            label += f"={face_name(item.stands_for, language)}"
        elif item.tile.wild and meld.kind == common_pb2.MELD_KIND_SET and meld.number:
            label += f"={meld.number}"
        parts.append(label)
    return (", " if language == "tr" else " ").join(parts)


def okey_tile(okey: common_pb2.Face) -> common_pb2.Tile:
    """A Tile message showing the okey's face, marked wild (for the legend and the header)."""
    return common_pb2.Tile(
        notation=face_name(okey), colour=okey.colour, number=okey.number, wild=True
    )
