"""The terminal client never prints a control character it received (issue #32).

Names and sentences come from the server, which got them from other players. ``client.shown``
is the one helper that makes such text safe where it is drawn: each character that does not
draw as itself (ESC, newline, NUL, bidi overrides, zero-width and odd spaces) becomes U+FFFD.
These tests send the client hostile names the way a table would (a view, a seat-taken event, a
score sheet, a refusal's sentence) and read what it draws, down to the score sheet rendered by
Textual, where a name is never read as markup either.
"""

from __future__ import annotations

import asyncio
import unicodedata

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from okey.v1 import common_pb2
from rich.text import Text
from textual.app import App
from textual.widgets import DataTable

from okey101.client.errors import Rejection
from okey101.client.i18n import Strings
from okey101.client.model import SheetRow, TableModel
from okey101.client.screens import ScoreSheetScreen
from okey101.client.shown import REPLACEMENT, shown
from okey101.platform.names import UNSHOWN_CATEGORIES

HOSTILE = "\x1b[2J\x1b]0;pwned\x07Ali\nVeli\x00\u202e\u200b\u2028\u00a0\x7f\u0085"


def unshown(text: str) -> list[str]:
    """The characters of ``text`` a terminal would not draw as themselves."""
    return [
        f"U+{ord(c):04X}"
        for c in text
        if c != " " and unicodedata.category(c) in UNSHOWN_CATEGORIES
    ]


def test_shown_replaces_each_character_that_does_not_draw_and_keeps_the_rest() -> None:
    assert unshown(HOSTILE)  # the test's own premise
    safe = shown(HOSTILE)
    assert unshown(safe) == []
    assert len(safe) == len(HOSTILE)  # one stand-in each: a reader sees something was there
    assert safe.count(REPLACEMENT) == len(unshown(HOSTILE))
    assert "[2J" in safe and "Ali" in safe and "Veli" in safe
    for name in ("Ayşe", "Çağrı Öztürk", "李雷", "Zoë 🙂", "[/] [bold]x", "a  b"):
        assert shown(name) == name


def test_names_and_sentences_from_the_table_are_drawn_safe() -> None:
    strings = Strings("en")
    model = TableModel(strings, seat=0)
    view = common_pb2.SeatView(
        seats=[
            common_pb2.SeatPublic(
                seat=seat,
                occupant=common_pb2.SeatOccupant(
                    seat=seat, kind=common_pb2.OCCUPANT_KIND_PLAYER, display_name=HOSTILE
                ),
            )
            for seat in range(4)
        ]
    )
    model.on_view(view)
    for seat in (1, 2, 3):
        name = model.name(seat)
        assert unshown(name) == [] and "Ali" in name
    model.on_event(
        common_pb2.Event(
            sequence=2,
            kind=common_pb2.EVENT_KIND_SEAT_TAKEN,
            occupant=common_pb2.SeatOccupant(
                seat=2, kind=common_pb2.OCCUPANT_KIND_PLAYER, display_name="Bob\x1b[31m\n"
            ),
        )
    )
    assert model.log, "a seat taken is worth a line"
    assert all(unshown(line) == [] for line in model.log)
    # Every sentence the client fills in with the server's values.
    assert unshown(strings("rejected", message=HOSTILE)) == []
    assert unshown(Strings("tr")("logged_in", name=HOSTILE)) == []


def test_a_refusals_sentence_is_drawn_safe() -> None:
    """A server's sentence may quote its input (BAD_FIELD's value): it reaches the message line
    through ``shown`` too."""
    localized = any_pb2.Any()
    localized.Pack(error_details_pb2.LocalizedMessage(locale="en-US", message=f"Bad {HOSTILE}"))
    status = status_pb2.Status(code=3, message="bad", details=[localized])

    class Refused(grpc.RpcError):
        def code(self) -> grpc.StatusCode:
            return grpc.StatusCode.INVALID_ARGUMENT

        def details(self) -> str:
            return "bad"

        def trailing_metadata(self) -> tuple[tuple[str, bytes], ...]:
            return (("grpc-status-details-bin", status.SerializeToString()),)

    message = Rejection.of(Refused()).message
    assert unshown(message)  # kept as received...
    assert unshown(shown(message)) == []  # ...and drawn safe
    assert unshown(Strings("en")("rejected", message=message)) == []


def test_the_score_sheet_draws_hostile_names_as_text() -> None:
    """Textual's DataTable reads a string as markup: a name "[/]" would crash every other seat's
    score sheet, and an ESC would reach the terminal. Drawn, the sheet holds neither."""
    names = [HOSTILE, "[/]", "[bold]Bold", "Ayşe"]
    rows = [SheetRow(1, f"finished by {HOSTILE}", (10, -5, 0, 3), (10, -5, 0, 3))]
    screen = ScoreSheetScreen("Sheet", names, rows, Strings("en"), notes=[f"[/] {HOSTILE}"])

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(screen)

    async def main() -> None:
        app = Host()
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.pause()
            table = screen.query_one(DataTable)
            labels = [column.label for column in table.columns.values()]
            assert all(isinstance(label, Text) for label in labels)
            plain = [label.plain for label in labels]
            assert "[/]" in plain and "[bold]Bold" in plain  # as sent, not as markup
            assert all(unshown(label) == [] for label in plain)
            drawn = app.export_screenshot()
            assert "\x1b" not in drawn and "\u202e" not in drawn and "\x00" not in drawn
            assert "[/]" in drawn

    asyncio.run(main())
