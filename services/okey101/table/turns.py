"""When a table's next step is due: a turn's clock, a bot's step, a full table's start.

A bot's turn keeps the bot pace (``TableOptions.bot_move_seconds`` and the knobs beside it): its
first step (the draw, or the take) comes a varied while after the turn starts, and the rest of the
turn a moment after that, so that people can follow it and a bot's speed does not tell it apart
from a player (``bot_delays_us``). Each turn's delays come from a random generator seeded with the
table, the hand and the turn, so every pod that runs the turn's steps keeps the same pace.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from okey101.table import disguise
from okey101.table.options import TableOptions, us
from okey101.table.records import SeatRecord, TableRecord, TimerRecord


def bot_delays_us(rng: random.Random, options: TableOptions) -> tuple[int, int]:
    """A bot turn's two delays, in microseconds: from the turn's start to its first step, and
    from each step to the next (the discard after the draw). The turn takes between
    ``bot_move_seconds`` and ``bot_move_max_seconds`` in all, the pause after the draw between
    ``bot_discard_seconds`` and ``bot_discard_max_seconds``; no pace at all (0, 0) where
    ``bot_move_seconds`` is 0."""
    if options.bot_move_seconds <= 0:
        return 0, 0
    turn = rng.uniform(
        options.bot_move_seconds, max(options.bot_move_seconds, options.bot_move_max_seconds)
    )
    pause = rng.uniform(
        options.bot_discard_seconds,
        max(options.bot_discard_seconds, options.bot_discard_max_seconds),
    )
    pause = min(pause, turn)
    return us(turn - pause), us(pause)


def turn_rng(record: TableRecord, turn_number: int) -> random.Random:
    """The random generator of one turn's bot pace (module docstring)."""
    return random.Random(f"{record.table_id}|{record.hand_id}|{turn_number}")


def turn_timer(
    record: TableRecord,
    seats: Sequence[SeatRecord],
    seat: int,
    now_us: int,
    options: TableOptions,
    *,
    turn_number: int = 0,
) -> tuple[TimerRecord | None, int | None]:
    """The timer of a turn that starts now, and the deadline players see (None: none): a bot
    (or an away player's bot) takes its first step at the bot pace (``bot_delays_us``); a player
    has the rule set's turn time, or the table's default where the rule set leaves it to the
    table. Where bots are not labelled a bot seat's turn shows a player's deadline."""
    seconds = record.rules_message().turn_seconds or options.default_turn_seconds
    if seats[seat].automatic:
        first, _ = bot_delays_us(turn_rng(record, turn_number), options)
        timer = TimerRecord("bot", now_us + first)
        shown = None
        if (
            seats[seat].kind == "bot"
            and seconds > 0
            and not disguise.bots_labelled(record.rules_message())
        ):
            shown = now_us + us(seconds)
        return timer, shown
    if seconds <= 0:
        return None, None
    deadline = now_us + us(seconds)
    return TimerRecord("turn", deadline), deadline


def next_bot_step(
    record: TableRecord, turn_number: int, now_us: int, options: TableOptions
) -> TimerRecord:
    """The timer of the rest of a bot's turn after a step (the discard after the draw)."""
    _, pause = bot_delays_us(turn_rng(record, turn_number), options)
    return TimerRecord("bot", now_us + pause)


def start_timer(now_us: int, options: TableOptions) -> TimerRecord:
    """The timer a change that fills a ``start_when_full`` table commits: the start is owed
    from then on. The change that filled the table tries it at once; the timer fires only if
    that try failed or its pod died, and is retried until the table has started."""
    return TimerRecord("start", now_us + us(options.peer_timeout_seconds))


__all__ = ["bot_delays_us", "next_bot_step", "start_timer", "turn_rng", "turn_timer"]
