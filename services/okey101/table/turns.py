"""When a table's next step is due: a turn's clock, a bot's step, a full table's start."""

from __future__ import annotations

from collections.abc import Sequence

from okey101.table.options import TableOptions, us
from okey101.table.records import SeatRecord, TableRecord, TimerRecord


def turn_timer(
    record: TableRecord,
    seats: Sequence[SeatRecord],
    seat: int,
    now_us: int,
    options: TableOptions,
) -> tuple[TimerRecord | None, int | None]:
    """The timer of a turn that starts now, and the deadline players see (None: none): a bot
    (or an away player's bot) moves after ``bot_move_seconds``; a player has the rule set's
    turn time, or the table's default where the rule set leaves it to the table."""
    if seats[seat].automatic:
        return TimerRecord("bot", now_us + us(options.bot_move_seconds)), None
    seconds = record.rules_message().turn_seconds or options.default_turn_seconds
    if seconds <= 0:
        return None, None
    deadline = now_us + us(seconds)
    return TimerRecord("turn", deadline), deadline


def start_timer(now_us: int, options: TableOptions) -> TimerRecord:
    """The timer a change that fills a ``start_when_full`` table commits: the start is owed
    from then on. The change that filled the table tries it at once; the timer fires only if
    that try failed or its pod died, and is retried until the table has started."""
    return TimerRecord("start", now_us + us(options.peer_timeout_seconds))


__all__ = ["start_timer", "turn_timer"]
