"""A seat's part of a hand: its rack and discards, how it opened, the +101s it was charged.

``OpenedAs`` and ``PenaltyReason`` are the hand's words for what a seat did; the hand, scoring,
views and the solver's question "can this seat use that tile" all read them, so they live below
all of those.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from okey101.engine.tiles import Tile


class OpenedAs(enum.StrEnum):
    """How a player opened this hand."""

    RUNS = "runs"
    PAIRS = "pairs"


class PenaltyReason(enum.StrEnum):
    OKEY_DISCARDED = "okey_discarded"
    PLAYABLE_DISCARDED = "playable_discarded"
    GAVE_BACK = "gave_back"
    # Charged before the position a scenario starts from.
    CHARGED_BEFORE = "charged_before"


@dataclass(frozen=True, slots=True)
class Seat:
    """One seat's part of a hand."""

    rack: tuple[Tile, ...]
    discards: tuple[Tile, ...] = ()
    opened_as: OpenedAs | None = None
    # The turn number on which the seat opened (-1: not opened).
    opened_on_turn: int = -1
    # Every +101 charged this hand, by reason (never doubled).
    penalties: tuple[PenaltyReason, ...] = ()
    # Turns this seat has completed (0 during its first turn).
    turns_played: int = 0
    # Boombala: the indicator's twin was shown on the first turn.
    showed_indicator: bool = False
