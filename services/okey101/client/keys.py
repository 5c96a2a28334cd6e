"""The terminal client's keys for the moves at the table: which key plays which move, and what
the footer calls it.

One table (``MOVES``) says it all, in the footer's order: the app binds each key from it
(``OkeyApp``), a spectator gets none of them (``MOVE_ACTIONS``), and a popup that a move key
closes passes the key on to be played (``screens.GameKeys`` asks the app's ``is_game_key``).
``q`` (leave) and ``p`` (the score sheet) are not moves: a spectator has them too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from okey101.client.i18n import Strings
from okey101.client.moves import ROW


@dataclass(frozen=True)
class MoveKey:
    """The keys of one move and how the footer shows them."""

    #: The keys, as Textual names them.
    keys: tuple[str, ...]
    #: The app's action (its method ``action_<action>``).
    action: str
    #: The action's argument: how far the cursor or the tile moves (None: no argument).
    step: int | None = None
    #: What the footer says the key does, a catalogue key ("": not in the footer).
    label: str = ""
    #: The footer's name for the key, a catalogue key (``key_space``: boşluk in Turkish)...
    display: str = ""
    #: ...or the text itself (``-``).
    glyph: str = ""

    @property
    def binding(self) -> str:
        """The action as Textual binds it: ``draw``, ``cursor(-15)``."""
        return self.action if self.step is None else f"{self.action}({self.step})"

    @property
    def in_footer(self) -> bool:
        """Whether the footer shows the key (the moves of the cursor and of a tile it does not)."""
        return bool(self.label)

    def description(self, s: Strings) -> str:
        """What the footer says the key does ("" when the footer does not show it)."""
        return s(self.label) if self.label else ""

    def key_display(self, s: Strings) -> str | None:
        """The footer's name for the key (None: Textual's own)."""
        return s(self.display) if self.display else self.glyph or None


#: Every move's keys, in the footer's order.
MOVES: Final[tuple[MoveKey, ...]] = (
    MoveKey(("d",), "draw", label="key_draw"),
    MoveKey(("t",), "take", label="key_take"),
    MoveKey(("space",), "select_tile", label="key_select", display="key_space"),
    MoveKey(("g",), "group", label="key_group"),
    MoveKey(("o",), "open", label="key_open"),
    MoveKey(("m",), "meld", label="key_meld"),
    MoveKey(("l",), "lay_off", label="key_lay_off"),
    MoveKey(("k",), "take_okey", label="key_take_okey"),
    MoveKey(("x",), "discard", label="key_discard"),
    MoveKey(("a",), "best", label="key_best"),
    MoveKey(("c",), "clear", label="key_clear"),
    MoveKey(("s",), "sort", label="key_sort"),
    MoveKey(("b",), "give_back", label="key_give_back"),
    MoveKey(("i",), "show_indicator", label="key_show_indicator"),
    MoveKey(("left",), "cursor", -1),
    MoveKey(("right",), "cursor", 1),
    MoveKey(("up",), "cursor", -ROW),
    MoveKey(("down",), "cursor", ROW),
    MoveKey(("shift+left", "comma"), "shift", -1),
    MoveKey(("shift+right", "full_stop"), "shift", 1),
    MoveKey(("minus",), "insert_gap", label="key_gap", glyph="-"),
    MoveKey(("backspace",), "remove_gap"),
)

#: The moves' actions: a spectator has none, and an open popup passes them on to the table.
MOVE_ACTIONS: Final = frozenset(key.action for key in MOVES)
