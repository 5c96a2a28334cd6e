"""The terminal client's modal screens: a yes/no question, picking a meld, the score sheet."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, OptionList, Static
from textual.widgets.option_list import Option

from okey101.client import moves
from okey101.client.i18n import Strings
from okey101.client.model import SheetRow


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question (a discard that costs +101)."""

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

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, id="question")
            yield Static(f"{self.yes}    {self.no}", id="answers")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class PickMeldScreen(ModalScreen[moves.MeldChoice | None]):
    """Which table meld (and which end of a run) a tile goes to."""

    DEFAULT_CSS = """
    PickMeldScreen { align: center middle; }
    PickMeldScreen > Vertical { width: 70; height: auto; max-height: 80%; border: thick $accent;
                                padding: 0 1; background: $surface; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", show=False)]

    def __init__(self, prompt: str, choices: Sequence[tuple[moves.MeldChoice, Text]]) -> None:
        super().__init__()
        self.prompt = prompt
        self.choices = list(choices)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.prompt)
            yield OptionList(
                *(Option(label, id=str(i)) for i, (_, label) in enumerate(self.choices))
            )

    @on(OptionList.OptionSelected)
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.choices[event.option_index][0])

    def action_cancel(self) -> None:
        self.dismiss(None)


class ScoreSheetScreen(ModalScreen[None]):
    """The score sheet after a hand (and the match result once it has ended)."""

    DEFAULT_CSS = """
    ScoreSheetScreen { align: center middle; }
    ScoreSheetScreen > Vertical { width: 96; height: auto; max-height: 90%; border: thick $primary;
                                  padding: 0 1; background: $surface; }
    ScoreSheetScreen DataTable { height: auto; max-height: 20; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,escape,space", "close", show=False),
        Binding("q", "quit_app", show=False),
    ]

    def __init__(
        self,
        title: str,
        names: Sequence[str],
        rows: Sequence[SheetRow],
        strings: Strings,
        notes: Sequence[str] = (),
    ) -> None:
        super().__init__()
        self.title_text = title
        self.names = list(names)
        self.rows = list(rows)
        self.strings = strings
        self.notes = list(notes)

    def compose(self) -> ComposeResult:
        s = self.strings
        with Vertical():
            yield Static(Text(self.title_text, style="bold"))
            table: DataTable[str] = DataTable(show_cursor=False, zebra_stripes=True)
            table.can_focus = False  # Enter closes the sheet rather than selecting a cell
            table.add_column(s("sheet_hand"))
            for name in self.names:
                table.add_column(name)
            table.add_column("")
            for row in self.rows:
                cells = [
                    f"{points:+d} = {total}" if index < len(row.totals) else f"{points:+d}"
                    for index, (points, total) in enumerate(
                        zip(row.points, row.totals or row.points, strict=False)
                    )
                ]
                table.add_row(str(row.hand_number), *cells, row.note)
            if self.rows:
                last = self.rows[-1].totals
                table.add_row(s("sheet_total"), *(str(total) for total in last), "")
            yield table
            for note in self.notes:
                yield Static(note)
            yield Static(Text(s("sheet_continue"), style="dim"))

    def action_close(self) -> None:
        self.dismiss(None)

    def action_quit_app(self) -> None:
        self.app.exit(0)
