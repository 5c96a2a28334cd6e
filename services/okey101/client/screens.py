"""The terminal client's modal screens: a yes/no question, picking a meld, the score sheet, the
wallet's history.

None of them eats a turn: a game key a popup has no use of (``d`` draw, ``x`` discard, the
cursor...) closes it and is played at the table as if it had not been open (``GameKeys``), so a
score sheet left open when the next hand's turn comes, or a question, never costs the timer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import ClassVar, Generic, TypeVar

import grpc.aio
from okey.v1 import lobby_pb2
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, OptionList, Static
from textual.widgets.option_list import Option

from okey101.client.chips import entry_text, wallet_line
from okey101.client.errors import Rejection
from okey101.client.i18n import Strings
from okey101.client.model import SheetRow
from okey101.client.shown import shown

T = TypeVar("T")

#: Plays a key at the table (the app's ``play_key``): whether the key is a game key.
PlayKey = Callable[[str], bool]


class GameKeys:
    """A popup's keys: its own (``OWN``), and any game key, which closes it (as "no") and is
    played at the table."""

    OWN: ClassVar[frozenset[str]] = frozenset()

    def _close_and_play(self, screen: ModalScreen[T], cancel: T, event: events.Key) -> None:
        play: PlayKey | None = getattr(screen.app, "play_key", None)
        probe: Callable[[str], bool] | None = getattr(screen.app, "is_game_key", None)
        if event.key in self.OWN or play is None or probe is None or not probe(event.key):
            return
        event.stop()
        event.prevent_default()
        key = event.key

        def closed(_result: object = None) -> None:
            play(key)

        screen.dismiss(cancel)
        screen.app.call_later(closed)


class ConfirmScreen(GameKeys, ModalScreen[bool]):
    """A yes/no question (a discard that costs +101, leaving a live table)."""

    OWN = frozenset({"y", "e", "enter", "n", "h", "escape"})

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 60; height: auto; border: thick $warning; padding: 1 2;
                               background: $surface; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,e,enter", "answer(True)", show=False),
        Binding("n,h,escape", "answer(False)", show=False),
    ]

    def __init__(self, question: str, yes: str, no: str) -> None:
        super().__init__()
        self.question, self.yes, self.no = question, yes, no
        #: The question is whether to leave the table (a second q answers yes).
        self.leaving = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.question), id="question")
            yield Static(f"{self.yes}    {self.no}", id="answers")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    def on_key(self, event: events.Key) -> None:
        if event.key == "q":  # leave: asked about in its turn (a second q is the yes)
            event.stop()
            self.dismiss(self.leaving)
            if not self.leaving:
                self.app.call_later(self.app.run_action, "quit_client")
            return
        self._close_and_play(self, False, event)


class PickMeldScreen(GameKeys, ModalScreen[T | None], Generic[T]):
    """Which table meld (and which end of a run) a tile goes to; or which plan of several
    tiles' lay-offs."""

    OWN = frozenset({"up", "down", "enter", "escape", "home", "end", "pageup", "pagedown"})

    DEFAULT_CSS = """
    PickMeldScreen { align: center middle; }
    PickMeldScreen > Vertical { width: 70; height: auto; max-height: 80%; border: thick $accent;
                                padding: 0 1; background: $surface; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", show=False)]

    def __init__(self, prompt: str, choices: Sequence[tuple[T, Text]]) -> None:
        super().__init__()
        self.prompt = prompt
        self.choices = list(choices)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.prompt))
            yield OptionList(
                *(Option(label, id=str(i)) for i, (_, label) in enumerate(self.choices))
            )

    @on(OptionList.OptionSelected)
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.choices[event.option_index][0])

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_key(self, event: events.Key) -> None:
        self._close_and_play(self, None, event)


class ScoreSheetScreen(GameKeys, ModalScreen[None]):
    """The reveal after a hand (every rack, why each seat scored what it did, the match's
    totals and its target), the score sheet under it; the match result once it has ended."""

    OWN = frozenset({"enter", "escape", "q", "p"})

    DEFAULT_CSS = """
    ScoreSheetScreen { align: center middle; }
    ScoreSheetScreen > Vertical { width: 96; height: auto; max-height: 90%; border: thick $primary;
                                  padding: 0 1; background: $surface; }
    ScoreSheetScreen DataTable { height: auto; max-height: 20; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,escape", "close", show=False),
        Binding("q", "quit_app", show=False),
    ]

    def __init__(
        self,
        title: str,
        names: Sequence[str],
        rows: Sequence[SheetRow],
        strings: Strings,
        notes: Sequence[str] = (),
        reveal: Sequence[Text] = (),
        *,
        final: bool = False,
        payout: Text | None = None,
    ) -> None:
        super().__init__()
        self.reveal = list(reveal)
        self.final = final
        #: A staked match's result: what the seat got from the pot (``show_payout`` updates it).
        self.payout = payout
        self.title_text = title
        self.names = list(names)
        self.rows = list(rows)
        self.strings = strings
        self.notes = list(notes)

    def compose(self) -> ComposeResult:
        s = self.strings
        with Vertical():
            yield Static(Text(self.title_text, style="bold"))
            for line in self.reveal:
                yield Static(line, classes="reveal")
            table: DataTable[str | Text] = DataTable(show_cursor=False, zebra_stripes=True)
            table.can_focus = False  # Enter closes the sheet rather than selecting a cell
            table.add_column(s("sheet_hand"))
            for name in self.names:
                # Text, not a string: DataTable reads a string as markup ("[/]" would crash).
                table.add_column(Text(shown(name)))
            table.add_column("")
            for row in self.rows:
                cells = [
                    f"{points:+d} = {total}" if index < len(row.totals) else f"{points:+d}"
                    for index, (points, total) in enumerate(
                        zip(row.points, row.totals or row.points, strict=False)
                    )
                ]
                table.add_row(str(row.hand_number), *cells, Text(shown(row.note)))
            if self.rows:
                last = self.rows[-1].totals
                table.add_row(s("sheet_total"), *(str(total) for total in last), "")
            yield table
            for note in self.notes:
                yield Static(Text(shown(note)))
            if self.final:
                yield Static(self.payout or "", id="payout")
            yield Static(Text(s("sheet_continue"), style="dim"))

    def show_payout(self, payout: Text) -> None:
        """The result's line about the pot, once the wallet says it."""
        self.payout = payout
        if self.is_mounted:
            self.query_one("#payout", Static).update(payout)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_quit_app(self) -> None:
        if self.final:  # the match is over: nothing to leave a bot to
            self.app.exit(0)
            return
        self.dismiss(None)
        self.app.call_later(self.app.run_action, "quit_client")

    def on_key(self, event: events.Key) -> None:
        self._close_and_play(self, None, event)


#: A page of the wallet's entries after a page token ("" for the newest).
EntryPages = Callable[[str], Awaitable[lobby_pb2.ListWalletEntriesResponse]]


class WalletScreen(GameKeys, ModalScreen[None]):
    """The wallet's history: the balance, then the entries newest first (when, why, the chips
    in or out, the balance after, the table or tournament); ``n`` adds the next page."""

    OWN = frozenset(
        {"enter", "escape", "w", "n", "up", "down", "pageup", "pagedown", "home", "end"}
    )

    DEFAULT_CSS = """
    WalletScreen { align: center middle; }
    WalletScreen > Vertical { width: 100; height: auto; max-height: 90%; border: thick $primary;
                              padding: 0 1; background: $surface; }
    WalletScreen DataTable { height: auto; max-height: 24; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,escape,w", "close", show=False),
        Binding("n", "more", show=False),
    ]

    def __init__(
        self,
        pages: EntryPages,
        wallet: lobby_pb2.GetWalletResponse | None,
        strings: Strings,
    ) -> None:
        super().__init__()
        self.pages = pages
        self.wallet = wallet
        self.strings = strings
        self.next_token = ""
        #: Every entry shown, in order (the tests read them).
        self.entries: list[lobby_pb2.WalletEntry] = []
        self.loaded = False

    def compose(self) -> ComposeResult:
        s = self.strings
        with Vertical():
            yield Static(Text(s("wallet_title"), style="bold"))
            yield Static(Text(wallet_line(self.wallet, s)), id="wallet-balance")
            table: DataTable[str | Text] = DataTable(show_cursor=False, zebra_stripes=True)
            table.can_focus = False
            for key in ("col_when", "col_what", "col_amount", "col_after", "col_for"):
                table.add_column(s(key))
            yield table
            yield Static("", id="wallet-note")
            yield Static(Text(s("wallet_keys"), style="dim"))

    def on_mount(self) -> None:
        self._load("")

    @work(group="wallet-page", exclusive=True, exit_on_error=False)
    async def _load(self, token: str) -> None:
        s = self.strings
        note = self.query_one("#wallet-note", Static)
        try:
            answer = await self.pages(token)
        except grpc.aio.AioRpcError as error:
            note.update(Text(shown(Rejection.of(error).message), style="red"))
            return
        table: DataTable[str | Text] = self.query_one(DataTable)
        for entry in answer.entries:
            self.entries.append(entry)
            cells = entry_text(entry, s)
            style = "green" if entry.amount > 0 else "red"
            table.add_row(
                cells[0], Text(shown(cells[1])), Text(cells[2], style=style), cells[3],
                Text(shown(cells[4])),
            )  # fmt: skip
        self.next_token = answer.next_page_token
        self.loaded = True
        if not self.entries:
            note.update(Text(s("wallet_empty")))
        else:
            note.update(Text(s("wallet_more") if self.next_token else "", style="dim"))

    def action_more(self) -> None:
        if self.next_token:
            self._load(self.next_token)

    def action_close(self) -> None:
        self.dismiss(None)

    def on_key(self, event: events.Key) -> None:
        self._close_and_play(self, None, event)
