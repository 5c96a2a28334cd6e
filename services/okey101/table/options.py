"""The table service's own knobs (``OKEY_TABLE_*`` variables; see docs/configuration.md)."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TableOptions:
    """The table service's own knobs (``OKEY_TABLE_*`` variables; see docs/configuration.md)."""

    #: The bot pace (``turns.bot_delays_us``): the shortest a bot's turn (or an away player's
    #: bot's) takes, from its start to its discard, so people can follow and a bot does not give
    #: itself away by its speed. 0: bots play at once, the other pace knobs unread (tests, benches).
    bot_move_seconds: float = 1.5
    #: The longest a bot's turn takes: each turn takes a varied time between the two.
    bot_move_max_seconds: float = 4.0
    #: The shortest pause between a bot's draw (or take) and the rest of its turn.
    bot_discard_seconds: float = 0.3
    #: The longest such pause.
    bot_discard_max_seconds: float = 0.9
    #: The pause between a hand's end and the next deal (the score sheet is on screen).
    next_hand_seconds: float = 5.0
    #: A player's turn time where the rule set leaves it to the table (turn_seconds 0); 0: none.
    default_turn_seconds: int = 60
    #: Turns in a row a player may miss before a bot keeps the seat until they are back.
    missed_turns_before_away: int = 2
    #: How often the timer worker looks for due timers when nothing wakes it.
    poll_seconds: float = 0.5
    #: How long a claimed timer is this pod's before another may take it over.
    timer_lease_seconds: float = 15.0
    #: No pod alive for longer than this: the gap is not charged to players' turns.
    outage_seconds: float = 5.0
    #: A timer overdue by more than this counts as a stuck table.
    stuck_seconds: float = 60.0
    #: Deadline of each call to the rules and bot services.
    peer_timeout_seconds: float = 3.0
    #: How often the watchdog refreshes the deployment-wide gauges.
    watchdog_seconds: float = 5.0
    #: How long WatchTable holds a MATCH_ENDED event back until scoring has recorded the match
    #: (so that the score sheet is there when the event arrives); past this it is sent anyway.
    match_end_hold_seconds: float = 10.0

    @classmethod
    def from_environ(cls, environ: dict[str, str] | None = None) -> TableOptions:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for spec in dataclasses.fields(cls):
            raw = env.get(f"OKEY_TABLE_{spec.name.upper()}")
            if raw is None or not raw.strip():
                continue
            try:
                number = float(raw) if spec.type == "float" else int(raw)
            except ValueError:
                raise ValueError(
                    f"OKEY_TABLE_{spec.name.upper()} must be a number, not {raw!r}"
                ) from None
            if number < 0:
                raise ValueError(f"OKEY_TABLE_{spec.name.upper()} must not be negative")
            values[spec.name] = number
        return cls(**values)


def us(seconds: float) -> int:
    """Seconds as integer microseconds (every instant the table keeps is one)."""
    return round(seconds * 1_000_000)


__all__ = ["TableOptions", "us"]
