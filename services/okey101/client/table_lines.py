"""The table in the screen's lines above the rack: the title (the table, its rules, the hand and
the match's target), the state line (whose turn in which phase, the seconds left, the stock,
the indicator and the okey, the tile that may be taken) and the melds on the table with their
owners; and a meld on the table as the picker offers it (``#2 Ayla: R5 R6 R7``, as the list of
melds names it).

Read from the seat's view and the ``TableModel`` (the seats' names, the turn's deadline) only:
the app puts each into its widget.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from okey.v1 import common_pb2
from rich.console import Group as RichGroup
from rich.console import RenderableType
from rich.text import Text

from okey101.client import layoff, moves
from okey101.client.i18n import Strings
from okey101.client.model import TableModel, view_target
from okey101.client.render import meld_text, okey_tile, tile_text
from okey101.client.session import PRESET_NAMES
from okey101.engine.actions import End

_PHASE_KEYS = {
    common_pb2.PHASE_FIRST: "phase_first",
    common_pb2.PHASE_DRAW: "phase_draw",
    common_pb2.PHASE_PLAY: "phase_play",
    common_pb2.PHASE_ENDED: "phase_ended",
}


def title_text(view: common_pb2.SeatView, s: Strings, table_id: str, *, spectator: bool) -> Text:
    """The title: the table, its rules, the hand and the match's target."""
    rules = PRESET_NAMES.get(view.rules.preset, "oyna")
    key = "subtitle_watch" if spectator else "subtitle_table"
    title = f"{s('title')} · {s(key, table=table_id, rules=rules, hand=view.hand_number)}"
    target = view_target(s, view)
    return Text(f"{title} · {target}" if target else title)


def state_text(view: common_pb2.SeatView, model: TableModel, now: datetime) -> Text:
    """Whose turn in which phase and the seconds left, the stock, the indicator and the okey,
    and the tile that may be taken."""
    s = model.strings
    phase = s(_PHASE_KEYS.get(view.phase, "phase_ended"))
    if view.phase == common_pb2.PHASE_ENDED:
        turn = Text(s("hand_over"), style="bold")
    elif view.HasField("seat") and view.turn == view.seat:
        turn = Text("▶ " + s("turn_you", phase=phase), style="bold yellow")
    else:
        turn = Text(s("turn_other", name=model.name(view.turn), phase=phase))
    seconds = model.seconds_left(now)
    if seconds is not None and view.phase != common_pb2.PHASE_ENDED:
        turn.append(" · ")
        turn.append(
            s("seconds_left", seconds=seconds), style="bold red" if seconds <= 10 else "bold"
        )
    line = Text()
    line.append_text(turn)
    line.append(" │ " + s("stock", count=view.stock_count))
    line.append(" │ " + s("indicator", tile="").rstrip() + " ")
    line.append_text(tile_text(view.indicator, language=s.language))
    line.append(" " + s("okey_is", face="").rstrip() + " ")
    line.append_text(tile_text(okey_tile(view.okey), language=s.language))
    if view.HasField("takeable"):
        line.append(" │ " + s("takeable", tile="").rstrip() + " ")
        line.append_text(tile_text(view.takeable, language=s.language))
    return line


def table_melds(view: common_pb2.SeatView, model: TableModel) -> RenderableType:
    """The melds on the table, one a line: its number, its owner, its tiles and its value."""
    s = model.strings
    if not view.table:
        return Text(s("table_empty"), style="dim")
    lines = []
    for item in view.table:
        line = Text(f"#{item.index} {model.name(item.owner_seat)}: ", style="bold")
        line.append_text(meld_text(item.meld, s.language))
        if item.meld.value:
            line.append(" " + s("meld_value", value=item.meld.value), style="dim")
        lines.append(line)
    return RichGroup(*lines)


def plan_labels(
    view: common_pb2.SeatView, plans: Sequence[layoff.Plan], model: TableModel
) -> list[tuple[layoff.Plan, Text]]:
    """Each way to lay the tiles off, as the picker offers it: each tile, the meld it goes on
    and at which end."""
    by_index = {item.index: item for item in view.table}
    by_id = {item.tile.id: item.tile for item in view.rack}
    language = model.strings.language
    out = []
    for plan in plans:
        label = Text()
        for number, placement in enumerate(plan):
            item = by_index[placement.meld_index]
            if number:
                label.append(" · ")
            if placement.tile_id in by_id:
                label.append_text(tile_text(by_id[placement.tile_id], language=language))
            label.append(f" → #{item.index} {model.name(item.owner_seat)}: ")
            label.append_text(meld_text(item.meld, language))
            _append_end(label, placement.end, model.strings)
        out.append((plan, label))
    return out


def choice_labels(
    view: common_pb2.SeatView, choices: Sequence[moves.MeldChoice], model: TableModel
) -> list[tuple[moves.MeldChoice, Text]]:
    """Each meld to choose, as the picker offers it (and at which end)."""
    by_index = {item.index: item for item in view.table}
    out = []
    for choice in choices:
        item = by_index[choice.meld_index]
        label = Text(f"#{item.index} {model.name(item.owner_seat)}: ")
        label.append_text(meld_text(item.meld, model.strings.language))
        _append_end(label, choice.end, model.strings)
        out.append((choice, label))
    return out


def _append_end(label: Text, end: End | None, s: Strings) -> None:
    if end is not None:
        key = "end_low" if end is End.LOW else "end_high"
        label.append(f"  ({s(key)})", style="dim")
