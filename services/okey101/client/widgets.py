"""The terminal client's widgets: a seat as everyone sees it, and the player's rack."""

from __future__ import annotations

from okey.v1 import common_pb2
from rich.console import Group as RichGroup
from rich.style import Style
from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from okey101.client import moves
from okey101.client.model import TableModel
from okey101.client.render import (
    TILE_WIDTH,
    rack_tile_text,
    tile_text,
)


class SeatBox(Static):
    """One seat as everyone sees it."""

    DEFAULT_CSS = """
    SeatBox { width: 1fr; height: 7; border: round $panel; padding: 0 1; }
    SeatBox.to-move { border: round $warning; }
    SeatBox.mine { background: $boost; }
    """

    def show(self, view: common_pb2.SeatView, model: TableModel, seat: int) -> None:
        s = model.strings
        public = view.seats[seat] if seat < len(view.seats) else common_pb2.SeatPublic(seat=seat)
        occupant = public.occupant
        name = model.name(seat)
        if occupant.kind == common_pb2.OCCUPANT_KIND_EMPTY:
            name = f"{s('seat_label', seat=seat)} ({s('empty_seat')})"
        lines = [seat_title(occupant, name, model, dealer=view.dealer == seat)]
        total = view.match_totals[seat] if seat < len(view.match_totals) else 0
        lines.append(
            Text(f"{s('tile_count', count=public.tile_count)} · {s('match_total', points=total)}")
        )
        line = Text(opened_label(view, seat, model))
        if public.penalty_points:
            line.append(" · ")
            line.append(s("penalty_points", points=public.penalty_points), style="red")
        lines.append(line)
        if public.discards:
            discard = Text(s("last_discard", tile="").rstrip() + " ")
            discard.append_text(tile_text(public.discards[-1], language=s.language))
        else:
            discard = Text(s("no_discard"), style="dim")
        lines.append(discard)
        self.update(RichGroup(*lines))
        to_move = view.turn == seat and view.phase != common_pb2.PHASE_ENDED
        self.set_class(to_move, "to-move")
        self.set_class(view.HasField("seat") and view.seat == seat, "mine")


def seat_title(
    occupant: common_pb2.SeatOccupant, name: str, model: TableModel, *, dealer: bool
) -> Text:
    """A seat's first line: its name, and what the API says of it (a bot, away, the dealer).
    A bot's name is a name ("Mehmet"): only its kind (OCCUPANT_KIND_BOT) marks it, so a table
    whose rules do not label bots (north_sultan), where the API shows every bot as a player,
    shows no mark."""
    s = model.strings
    title = Text(name, style="bold")
    if occupant.kind == common_pb2.OCCUPANT_KIND_BOT:
        title.append(f" ({s('bot')})", style="dim")
    if occupant.away:
        title.append(f" ({s('away')})", style="yellow")
    if dealer:
        title.append(f" · {s('dealer_mark')}", style="dim")
    return title


def opened_label(view: common_pb2.SeatView, seat: int, model: TableModel) -> str:
    """How a seat opened: "opened with 5 pairs" (its pairs on the table), "opened with runs
    (128)" (what its melds on the table are worth), "not opened"."""
    s = model.strings
    public = view.seats[seat] if seat < len(view.seats) else common_pb2.SeatPublic(seat=seat)
    owned = [item.meld for item in view.table if item.owner_seat == seat]
    if public.opened_as == common_pb2.OPENING_KIND_PAIRS:
        pairs = sum(1 for meld in owned if meld.kind == common_pb2.MELD_KIND_PAIR)
        return s("opened_pairs_count", count=pairs) if pairs else s("opened_pairs")
    if public.opened_as == common_pb2.OPENING_KIND_RUNS:
        value = sum(meld.value for meld in owned if meld.kind != common_pb2.MELD_KIND_PAIR)
        return s("opened_runs_value", value=value) if value else s("opened_runs")
    return s("not_opened")


class RackView(Widget):
    """The player's rack in two rows, with the cursor and the selection marks under it."""

    DEFAULT_CSS = """
    RackView { height: 6; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rack = moves.Rack()
        self.view: common_pb2.SeatView | None = None
        self.note = ""
        #: The screen's language ("tr": tiles drawn as numbers in their colour's ink).
        self.language = "en"

    def render(self) -> Text:
        if self.view is None or not self.view.HasField("seat"):
            return Text(self.note, style="dim")
        by_id = {item.tile.id: item for item in self.view.rack}
        marks = self.rack.marks()
        out = Text()
        slots = self.rack.order + [moves.GAP] * (self.rack.slots - len(self.rack.order))
        for start in range(0, len(slots), moves.ROW):
            row = slots[start : start + moves.ROW]
            tiles = Text()
            under = Text()
            for place, tile_id in enumerate(row, start=start):
                item = by_id.get(tile_id)
                if item is None:  # an empty slot of the ıstaka
                    cell = Text("·".ljust(TILE_WIDTH), style="grey39")
                else:
                    cell = rack_tile_text(item, width=TILE_WIDTH, language=self.language)
                if place == self.rack.cursor:
                    cell.stylize(Style(reverse=True))
                tiles.append_text(cell)
                tiles.append(" ")
                mark = marks.get(tile_id, "")
                if place == self.rack.cursor and not mark:
                    mark = "^"
                under.append(mark.ljust(TILE_WIDTH + 1), style="bold green" if mark != "^" else "")
            out.append_text(tiles)
            out.append("\n")
            out.append_text(under)
            out.append("\n")
        return out
