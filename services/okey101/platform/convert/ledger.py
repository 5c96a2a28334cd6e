"""``TileLedger``: no physical tile named in two places of one request."""

from __future__ import annotations

from collections.abc import Sequence

from okey101.engine.errors import InvalidInput
from okey101.engine.tiles import ALL_TILES, Tile


class TileLedger:
    """Checks that no physical tile is named in two places of one request.

    The indicator, once known, is a place of its own: naming its tile again is TOO_MANY_COPIES
    ("there are only two ... the indicator counts").
    """

    def __init__(self, indicator: Tile | None = None) -> None:
        self._ids: set[int] = set()
        # Where tiles were named, in order: (field, index or -1, ids) for one tile, or (field,
        # None, ids) for a list whose tile ``i`` is at ``field[i]``; read only for an error.
        self._places: list[tuple[str, int | None, Sequence[int]]] = []
        self._indicator = indicator
        if indicator is not None:
            self._ids.add(indicator.id)
            self._places.append(("indicator", -1, (indicator.id,)))

    def add(self, tile: Tile, field: str, index: int = -1) -> None:
        if tile.id in self._ids:
            raise self._repeated(tile, _field_path(field, index))
        self._ids.add(tile.id)
        self._places.append((field, index, (tile.id,)))

    def add_all(self, tiles: Sequence[Tile], field: str) -> None:
        self.add_ids([tile.id for tile in tiles], field)

    def add_ids(self, tile_ids: Sequence[int], field: str) -> None:
        """``add_all`` for the tiles of valid ids (as ``tiles_from_ids`` checked them)."""
        fresh = set(tile_ids)
        # Set operations check a whole list at once; tile by tile only to name a repeat.
        if len(fresh) == len(tile_ids) and self._ids.isdisjoint(fresh):
            self._ids |= fresh
            self._places.append((field, None, tile_ids))
            return
        for index, tile_id in enumerate(tile_ids):
            self.add(ALL_TILES[tile_id], field, index)

    def _repeated(self, tile: Tile, where: str) -> InvalidInput:
        if self._indicator is not None and tile.id == self._indicator.id:
            return InvalidInput("TOO_MANY_COPIES", tile=str(tile), field=where)
        return InvalidInput(
            "DUPLICATE_TILE_ID",
            tile=str(tile),
            tile_id=tile.id,
            field=where,
            first_field=self._first_place(tile.id),
        )

    def _first_place(self, tile_id: int) -> str:
        for field, index, ids in self._places:
            if tile_id in ids:
                return _field_path(field, list(ids).index(tile_id) if index is None else index)
        raise AssertionError(f"tile {tile_id} was never named")


def _field_path(field: str, index: int) -> str:
    return field if index < 0 else f"{field}[{index}]"
