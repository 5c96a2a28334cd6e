"""Who a bot seat is shown as where bots are not labelled (the ``bots_labelled`` knob): a person's
name and an id shaped as the lobby's player ids, both fixed per table and seat, so every service
that shows a seat (the table's answers and events, the lobby's tables, scoring's score sheets)
shows the same one; and a table message (``hide_bots``) as players are shown it, for the table and
for the lobby, which passes on the tables the table service sends it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from typing import Final

from okey.v1 import common_pb2

from okey101.platform import convert

#: The names a bot seat is given (``bot_name``): common Turkish first names, as players pick.
BOT_NAMES: Final[tuple[str, ...]] = (
    "Ayşe", "Mehmet", "Zeynep", "Emre", "Elif", "Mustafa", "Fatma", "Ahmet", "Merve", "Can",
    "Selin", "Burak", "Esra", "Murat", "Deniz", "Hakan", "Gül", "Kemal", "Leyla", "Serkan",
    "Derya", "Onur", "Sevgi", "Tolga", "Yasemin", "Okan", "Nur", "Cem", "Hülya", "Barış",
    "Filiz", "Volkan", "Özlem", "Kaan", "Melek", "Tarık", "Aylin", "Sinan", "Dilek", "Erkan",
    "Pınar", "Levent", "Canan", "Umut", "Sibel", "Oğuz", "Ebru", "Halil", "Gamze", "İsmail",
)  # fmt: skip


def _digest(table_id: str, what: str) -> bytes:
    return hashlib.sha256(f"okey101 bot seat|{what}|{table_id}".encode()).digest()


def bot_name(table_id: str, seat: int, taken: Collection[str] = ()) -> str:
    """The name of a bot seat of this table: the same every time, never the same as another
    bot's at the table (a step coprime with the list's length walks it), nor one of ``taken``
    (the names already at the table: a bot is not a second "Deniz" beside a player's)."""
    start = int.from_bytes(_digest(table_id, "name")[:8], "big") + 7 * seat
    used = {name.casefold() for name in taken}
    for step in range(len(BOT_NAMES)):
        name = BOT_NAMES[(start + step) % len(BOT_NAMES)]
        if name.casefold() not in used:
            return name
    return BOT_NAMES[start % len(BOT_NAMES)]  # every name taken: 4 seats never get here


def seat_names(table_id: str, names: Sequence[str], bots: Collection[int]) -> list[str]:
    """The seats' names with each of the ``bots`` seats named (``bot_name``), in seat order,
    each avoiding the names before it at the table (``names``: the seats' names so far)."""
    named = list(names)
    for seat in sorted(bots):
        named[seat] = bot_name(table_id, seat, [name for name in named if name])
    return named


def bot_player_id(table_id: str, seat: int) -> str:
    """The id a bot seat shows where bots are not labelled: shaped as the lobby's player ids
    (``p_`` and 32 hex digits), fixed per table and seat."""
    return "p_" + _digest(table_id, f"id|{seat}").hex()[:32]


def bots_labelled(rules: common_pb2.RuleSet) -> bool:
    """The rule set labels bots (a table created before the knob reads its preset's value)."""
    return convert.rules_from_proto(rules).bots_labelled


def hide_bot(occupant: common_pb2.SeatOccupant, table_id: str) -> None:
    """``occupant`` (the truth) as players and spectators are shown it where bots are not
    labelled (``okey101.table.disguise``), in place."""
    if occupant.kind == common_pb2.OCCUPANT_KIND_BOT and not occupant.player_id:
        occupant.player_id = bot_player_id(table_id, occupant.seat)
    if occupant.kind in (common_pb2.OCCUPANT_KIND_BOT, common_pb2.OCCUPANT_KIND_PLAYER):
        occupant.kind = common_pb2.OCCUPANT_KIND_PLAYER
        occupant.bot_level = common_pb2.BOT_LEVEL_UNSPECIFIED


def hide_bots_in_result(result: common_pb2.MatchResult) -> None:
    """A match's result as players are shown it where bots are not labelled, in place: a bot
    seat's line (no player id) gets the id its seat shows (``bot_player_id``)."""
    for line in result.seats:
        if not line.player_id:
            line.player_id = bot_player_id(result.table_id, line.seat)


def hide_bots(table: common_pb2.Table) -> None:
    """``table`` as players and spectators are shown it, in place: for a service that passes
    a table it was sent (GetTable, ListTables, Sit...) on to a player (the lobby's directory)."""
    if not bots_labelled(table.rules):
        for occupant in table.seats:
            hide_bot(occupant, table.table_id)
        if table.HasField("match_result"):
            hide_bots_in_result(table.match_result)


__all__ = [
    "BOT_NAMES",
    "bot_name",
    "bot_player_id",
    "bots_labelled",
    "hide_bot",
    "hide_bots",
    "hide_bots_in_result",
    "seat_names",
]
