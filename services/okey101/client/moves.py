"""The rack as the player arranges it, what they select on it, and the moves that follow.

Pure: no I/O, no widgets. The screen keeps a ``Rack`` (the player's own order of their tiles,
a cursor, the tiles selected and the groups closed so far) and asks it for the Action messages
of a move; the messages are built from the engine's moves with ``platform.convert`` (the same
conversion every service uses), so the client cannot build a move the API reads differently.

A group's tiles keep the order they were selected in: a run with an okey is written low to high
with the okey where it stands (TileGroup.tile_ids), so the player selects it that way; a group
without okeys may be selected in any order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from okey.v1 import common_pb2

from okey101.engine.actions import (
    Discard,
    Draw,
    End,
    GiveBack,
    Group,
    LayDown,
    LayOff,
    Open,
    OpenPairs,
    ShowIndicator,
    TakeDiscard,
    TakeOkey,
)
from okey101.engine.tiles import tile_by_id
from okey101.platform.convert import action_to_proto

#: Slots per row of the rack on screen (a real ıstaka has two rows, with room for gaps).
ROW: int = 15
#: The rack's slots: a tile or a gap each, as on the sites' racks.
SLOTS: int = 2 * ROW
#: An empty slot in ``Rack.order`` (the player's gap between groups of tiles).
GAP: int = -1


@dataclass
class Rack:
    """The player's tiles in the slots they put them in (``GAP`` an empty slot), and their
    selection. The cursor goes over every slot, empty ones too, so a tile can be moved into a
    gap or to a slot past the last tile."""

    order: list[int] = field(default_factory=list)
    cursor: int = 0
    #: Groups closed so far (``g``), each in selection order.
    groups: list[list[int]] = field(default_factory=list)
    #: The group being selected.
    selected: list[int] = field(default_factory=list)

    # Keeping in step with the view ----------------------------------------------------------

    def sync(self, tile_ids: Sequence[int]) -> None:
        """Follow the rack of a new view: a tile that left leaves its slot empty (and the
        selection), new tiles go after the last tile, the rest stay where the player put them."""
        present = set(tile_ids)
        self.order = [tile if tile in present else GAP for tile in self.order]
        known = set(self.order)
        new = [tile for tile in tile_ids if tile not in known]
        while self.order and self.order[-1] == GAP:
            self.order.pop()
        self.order.extend(new)
        while len(self.order) > SLOTS and GAP in self.order:  # room for the new tiles
            self.order.remove(GAP)
        self.selected = [tile for tile in self.selected if tile in present]
        self.groups = [
            kept for group in self.groups if (kept := [t for t in group if t in present])
        ]
        self.cursor = max(0, min(self.cursor, self.slots - 1))

    # The cursor and arranging -----------------------------------------------------------------

    @property
    def slots(self) -> int:
        return max(SLOTS, len(self.order))

    @property
    def tiles(self) -> list[int]:
        """The tiles in the player's order, without the gaps."""
        return [tile for tile in self.order if tile != GAP]

    @property
    def at_cursor(self) -> int | None:
        """The tile under the cursor (``None`` on an empty slot)."""
        if 0 <= self.cursor < len(self.order) and self.order[self.cursor] != GAP:
            return self.order[self.cursor]
        return None

    def move(self, step: int) -> None:
        if self.order:
            self.cursor = max(0, min(self.slots - 1, self.cursor + step))

    def shift(self, step: int) -> None:
        """Move the tile under the cursor ``step`` slots, into a gap or past the last tile, or
        swapping with the tile there (arranging the rack by hand)."""
        target = self.cursor + step
        if self.at_cursor is None or not 0 <= target < self.slots:
            return
        while len(self.order) <= target:
            self.order.append(GAP)
        self.order[self.cursor], self.order[target] = self.order[target], self.order[self.cursor]
        self.cursor = target
        self._trim()

    def insert_gap(self) -> None:
        """An empty slot at the cursor, the tiles from there one slot on (where there is room:
        a gap further on closes up, else the rack is full)."""
        if self.cursor >= len(self.order):
            return
        after = [place for place in range(self.cursor, len(self.order)) if self.order[place] == GAP]
        if after:
            del self.order[after[0]]
        elif len(self.order) >= SLOTS:
            return
        self.order.insert(self.cursor, GAP)
        self._trim()

    def remove_gap(self) -> None:
        """Close the empty slot under the cursor (the tiles after it one slot back)."""
        if 0 <= self.cursor < len(self.order) and self.order[self.cursor] == GAP:
            del self.order[self.cursor]
            self._trim()

    def _trim(self) -> None:
        while self.order and self.order[-1] == GAP:
            self.order.pop()

    def arrangement(self) -> list[int]:
        """The slots as they are (tile ids and ``GAP``s), to keep across a restart."""
        return list(self.order)

    def restore(self, arrangement: Sequence[int], tile_ids: Sequence[int]) -> None:
        """Put the tiles back in a kept arrangement (tiles gone dropped, new ones at the end)."""
        self.order = [tile for tile in arrangement if isinstance(tile, int)]
        self.sync(tile_ids)

    def sort(self, by_number: bool = False) -> None:
        """Colour then number (or number then colour); false jokers and okeys at the end."""

        def key(tile_id: int) -> tuple[int, int, int]:
            tile = tile_by_id(tile_id)
            if tile.colour is None or tile.number is None:
                return (2, 0, tile_id)
            if by_number:
                return (0, tile.number * 4 + int(tile.colour), tile_id)
            return (0, int(tile.colour) * 13 + tile.number, tile_id)

        current = self.at_cursor
        self.order = sorted(self.tiles, key=key)
        if current is not None:
            self.cursor = self.order.index(current)

    def sort_wild_last(self, wild: Iterable[int]) -> None:
        """Okeys after every other tile (called after ``sort`` with the hand's okeys)."""
        okeys = set(wild)
        self.order = sorted(self.tiles, key=lambda tile: tile in okeys)

    # Selecting --------------------------------------------------------------------------------

    def toggle(self) -> None:
        """Select the tile under the cursor, or unselect it."""
        tile = self.at_cursor
        if tile is None:
            return
        if tile in self.selected:
            self.selected.remove(tile)
            return
        for group in self.groups:
            if tile in group:
                group.remove(tile)
        self.groups = [group for group in self.groups if group]
        self.selected.append(tile)

    def close_group(self) -> None:
        if self.selected:
            self.groups.append(self.selected)
            self.selected = []

    def clear(self) -> None:
        self.groups = []
        self.selected = []

    def all_groups(self) -> list[list[int]]:
        """The closed groups and, if any tile is selected, the open one as the last."""
        return [*self.groups, *([self.selected] if self.selected else [])]

    def set_groups(self, groups: Iterable[Iterable[int]]) -> None:
        """Select ``groups`` (an arrangement the rules service suggested)."""
        present = set(self.tiles)
        self.groups = [kept for group in groups if (kept := [t for t in group if t in present])]
        self.selected = []

    def single(self) -> int | None:
        """The one tile a move on one tile is about: the only one selected, else the cursor's."""
        chosen = self.all_groups()
        flat = [tile for group in chosen for tile in group]
        if len(flat) == 1:
            return flat[0]
        if not flat:
            return self.at_cursor
        return None

    def marks(self) -> dict[int, str]:
        """What to show under each selected tile: ``+n`` in the open group (its place in it),
        ``gN`` in the N-th closed group."""
        out: dict[int, str] = {}
        for number, group in enumerate(self.groups, start=1):
            for tile in group:
                out[tile] = f"g{number}"
        for place, tile in enumerate(self.selected, start=1):
            out[tile] = f"+{place}"
        return out


# --------------------------------------------------------------------------------------------
# The moves, as Action messages


def tile_group(tile_ids: Sequence[int]) -> common_pb2.TileGroup:
    return common_pb2.TileGroup(tile_ids=list(tile_ids))


def draw() -> common_pb2.Action:
    return action_to_proto(Draw())


def take() -> common_pb2.Action:
    return action_to_proto(TakeDiscard())


def give_back() -> common_pb2.Action:
    return action_to_proto(GiveBack())


def show_indicator() -> common_pb2.Action:
    return action_to_proto(ShowIndicator())


def discard(tile_id: int) -> common_pb2.Action:
    return action_to_proto(Discard(tile_by_id(tile_id)))


def _group(tile_ids: Sequence[int]) -> Group:
    return Group(tuple(tile_by_id(tile) for tile in tile_ids))


def open_with(groups: Sequence[Sequence[int]]) -> common_pb2.Action:
    """Open: with pairs when every group is two tiles, else with runs and sets (a mix is the
    rules service's to refuse, with its reason)."""
    if groups and all(len(group) == 2 for group in groups):
        pairs = tuple((tile_by_id(a), tile_by_id(b)) for a, b in groups)
        return action_to_proto(OpenPairs(pairs))
    return action_to_proto(Open(tuple(_group(group) for group in groups)))


def meld(groups: Sequence[Sequence[int]]) -> common_pb2.Action:
    """New melds (or pairs) after opening."""
    return action_to_proto(LayDown(tuple(_group(group) for group in groups)))


def lay_off(tile_id: int, meld_index: int, end: End | None = None) -> common_pb2.Action:
    return action_to_proto(LayOff(tile_by_id(tile_id), meld_index, end))


def take_okey(meld_index: int, tile_ids: Sequence[int]) -> common_pb2.Action:
    return action_to_proto(TakeOkey(meld_index, tuple(tile_by_id(tile) for tile in tile_ids)))


# --------------------------------------------------------------------------------------------
# Questions about a view


def rack_ids(view: common_pb2.SeatView) -> list[int]:
    return [item.tile.id for item in view.rack]


def rack_tile(view: common_pb2.SeatView, tile_id: int) -> common_pb2.RackTile | None:
    return next((item for item in view.rack if item.tile.id == tile_id), None)


def is_costly_discard(view: common_pb2.SeatView, tile_id: int) -> bool:
    """Discarding ``tile_id`` now costs +101: the rack marks it so and it is not the finishing
    discard (the last tile in the rack, which is exempt)."""
    item = rack_tile(view, tile_id)
    return item is not None and item.costly_discard and len(view.rack) > 1


def my_turn(view: common_pb2.SeatView) -> bool:
    return view.HasField("seat") and view.turn == view.seat and view.phase != common_pb2.PHASE_ENDED


def has_opened(view: common_pb2.SeatView) -> bool:
    if not view.HasField("seat") or view.seat >= len(view.seats):
        return False
    opened = view.seats[view.seat].opened_as
    return opened in (common_pb2.OPENING_KIND_RUNS, common_pb2.OPENING_KIND_PAIRS)


def melds_with_okey(view: common_pb2.SeatView) -> list[common_pb2.TableMeld]:
    return [item for item in view.table if any(t.tile.wild for t in item.meld.tiles)]


@dataclass(frozen=True)
class MeldChoice:
    """One entry of the "which meld?" list: a table meld, and for an okey laid off on a run,
    which end."""

    meld_index: int
    end: End | None = None


def lay_off_choices(view: common_pb2.SeatView, tile_id: int) -> list[MeldChoice]:
    """Where a tile might go: every run and set on the table (never a pair), and both ends of a
    run when the tile is an okey (the API needs the end named when an okey fits both)."""
    wild = any(item.tile.id == tile_id and item.tile.wild for item in view.rack)
    choices: list[MeldChoice] = []
    for item in view.table:
        kind = item.meld.kind
        if kind == common_pb2.MELD_KIND_PAIR:
            continue
        if kind == common_pb2.MELD_KIND_RUN and wild:
            choices.append(MeldChoice(item.index, End.LOW))
            choices.append(MeldChoice(item.index, End.HIGH))
        else:
            choices.append(MeldChoice(item.index))
    return choices
