"""A tournament's no-show policy (NoShowPolicy, docs/tournaments.md), pure: from what a player's
table told the lobby of their seat at one match, are they forfeited?

The table's outbox already gives the lobby each player's TURN_STARTED (a turn they are asked to
play), SEAT_AWAY (a turn ran out: a bot keeps the seat until they act again; at a tournament's
tables after one missed turn) and SEAT_BACK (they acted again), committed in the lobby's
``lobby_player_events`` with the table's own event number in each one's cause. In the table's
order, a player is forfeited when their seat went to a bot

- before they had played a turn of the match (their first turn ran out: they missed its start),
- or ``missed_turns`` times in the match,
- or once the match has ended, if it was still a bot's then (they dropped out).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from okey.v1 import lobby_pb2

#: The player events the policy reads.
KINDS: Final = (
    lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED,
    lobby_pb2.PLAYER_EVENT_KIND_SEAT_AWAY,
    lobby_pb2.PLAYER_EVENT_KIND_SEAT_BACK,
    lobby_pb2.PLAYER_EVENT_KIND_MATCH_ENDED,
)


def table_sequence(cause: str, table_id: str) -> int | None:
    """The table's event number in a recorded event's cause (``player/<table>/<n>/<seat>``),
    or None if the event is not from ``table_id``."""
    parts = cause.split("/")
    if len(parts) != 4 or parts[0] != "player" or parts[1] != table_id:
        return None
    try:
        return int(parts[2])
    except ValueError:
        return None


def forfeited(events: Iterable[tuple[int, int]], missed_turns: int, match_over: bool) -> bool:
    """``events``: (the table's event number, PlayerEventKind) of one player at one match's
    table; ``match_over``: its match has ended (module docstring)."""
    asked = 0
    came_back = False
    away = False
    times_away = 0
    for _number, kind in sorted(events):
        if kind == lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED:
            asked += 1
        elif kind == lobby_pb2.PLAYER_EVENT_KIND_SEAT_AWAY:
            away = True
            times_away += 1
            if (asked <= 1 and not came_back) or times_away >= missed_turns:
                return True
        elif kind == lobby_pb2.PLAYER_EVENT_KIND_SEAT_BACK:
            away = False
            came_back = True
    return match_over and away


def match_ended(events: Iterable[tuple[int, int]]) -> bool:
    """The lobby has the table's MATCH_ENDED among ``events``."""
    return any(kind == lobby_pb2.PLAYER_EVENT_KIND_MATCH_ENDED for _number, kind in events)


__all__ = ["KINDS", "forfeited", "match_ended", "table_sequence"]
