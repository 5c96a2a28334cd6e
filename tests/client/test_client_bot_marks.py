"""The terminal client marks a bot only where the API says the seat is one (issue 38).

Where a table's rules do not label bots (north_sultan), the table service shows every bot as a
player: the client's seat line then carries no bot mark, only what the API says (away, dealer).
"""

from __future__ import annotations

from okey.v1 import common_pb2

from okey101.client.i18n import Strings
from okey101.client.model import TableModel
from okey101.client.widgets import seat_title


def title(occupant: common_pb2.SeatOccupant, language: str = "en", dealer: bool = False) -> str:
    model = TableModel(Strings(language), seat=0)
    return seat_title(occupant, occupant.display_name, model, dealer=dealer).plain


def test_a_seat_the_api_calls_a_bot_is_marked() -> None:
    bot = common_pb2.SeatOccupant(
        seat=2,
        kind=common_pb2.OCCUPANT_KIND_BOT,
        display_name="Zeynep",
        bot_level=common_pb2.BOT_LEVEL_NORMAL,
    )
    assert title(bot) == "Zeynep (bot)"
    assert title(bot, "tr") == "Zeynep (bot)"


def test_an_unlabelled_bot_shown_as_a_player_has_no_mark() -> None:
    # What TableService sends players at a north_sultan table for a bot seat.
    shown = common_pb2.SeatOccupant(
        seat=2,
        kind=common_pb2.OCCUPANT_KIND_PLAYER,
        player_id="p_0123456789abcdef0123456789abcdef",
        display_name="Zeynep",
    )
    assert title(shown) == "Zeynep"
    assert title(shown, dealer=True) == "Zeynep · dealer"
    assert "bot" not in title(shown, "tr")


def test_an_away_player_is_marked_away_and_not_as_a_bot() -> None:
    away = common_pb2.SeatOccupant(
        seat=1, kind=common_pb2.OCCUPANT_KIND_PLAYER, player_id="p_1", display_name="Ali", away=True
    )
    assert title(away) == "Ali (away)"
