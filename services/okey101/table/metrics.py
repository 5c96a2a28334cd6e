"""The table service's game metrics (the gRPC ones are the platform's).

Never labelled by a player, table or hand: labels are the rule preset, the move's kind and who
made it, each a handful of values. The gauges read from the database (live tables, outbox
backlog, stuck tables) are the whole deployment's figures, refreshed by every pod's watchdog:
aggregate them with ``max``, not ``sum``.
"""

from __future__ import annotations

from typing import Final

from prometheus_client import Counter, Gauge

TABLES_LIVE: Final = Gauge(
    "okey_tables_live", "Tables whose match is in play (the whole deployment, from the database)."
)
HANDS_STARTED: Final = Counter("okey_hands_started_total", "Hands dealt.", ("preset",))
HANDS_FINISHED: Final = Counter(
    "okey_hands_finished_total", "Hands that reached their end.", ("preset",)
)
MATCHES_FINISHED: Final = Counter(
    "okey_matches_finished_total", "Matches that reached their end.", ("preset",)
)
MOVES: Final = Counter(
    "okey_moves_total",
    "Moves applied, by kind (draw, take, discard, ...) and source (player, bot, timeout).",
    ("kind", "source"),
)
TURN_TIMEOUTS: Final = Counter(
    "okey_turn_timeouts_total", "Turns whose time ran out and were played for the seat."
)
OUTBOX_BACKLOG: Final = Gauge(
    "okey_outbox_backlog",
    "Finished hands and matches not yet acknowledged by scoring (the whole deployment).",
)
STUCK_TABLES: Final = Gauge(
    "okey_stuck_tables",
    "Tables in play whose turn has not moved for a while past its deadline (the watchdog).",
)
BOT_FALLBACKS: Final = Counter(
    "okey_bot_fallbacks_total",
    "Bot steps played by the engine's local fallback because the bot service was unreachable.",
)
