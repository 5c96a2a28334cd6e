"""The lobby's records: what its stores keep and hand back, as frozen dataclasses of its own
(``messages`` makes ``lobby_pb2`` messages of them), and the states they are in.

Instants are integer microseconds since the epoch (``*_us``), as in the database.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from okey101.lobby import bracket

US: Final = 1_000_000

#: Players.
GUEST: Final = "guest"
ACCOUNT: Final = "account"
#: Quick-match tickets.
WAITING: Final = "waiting"
MATCHED: Final = "matched"
CANCELLED: Final = "cancelled"
#: Tournaments (and ``CANCELLED``).
REGISTERING: Final = "registering"
RUNNING: Final = "running"
FINISHED: Final = "finished"
#: Tournament tables: planned (seating fixed), started (at the table service), finished.
PLANNED: Final = "planned"
STARTED: Final = "started"


def now_us() -> int:
    return int(time.time() * US)


class LeaseLost(Exception):
    """This pod no longer holds the tournament's lease: it stops driving it."""


# --------------------------------------------------------------------------------------------
# Players and tokens


@dataclass(frozen=True)
class PlayerRow:
    """A guest or an account, as ``lobby_players`` keeps it."""

    player_id: str
    kind: str
    display_name: str
    username: str | None
    password_hash: str | None
    device_id: str | None
    guest_secret_hash: str | None
    created_us: int


@dataclass(frozen=True)
class AccessToken:
    token: str
    expires_at: float


#: Signs a player's access token: ``issue(player_id, session_id)``, ``session_id`` the login's
#: id (its refresh tokens' family), which the token carries as ``sid``.
AccessIssuer = Callable[[str, str], AccessToken]


@dataclass(frozen=True)
class Tokens:
    """An access token and a refresh token, and when each expires."""

    access_token: str
    access_expires_us: int
    refresh_token: str
    refresh_expires_us: int


@dataclass(frozen=True)
class Login:
    """What a login or a registration hands back: the player, fresh tokens, and a new guest's
    secret (shown once)."""

    player: PlayerRow
    tokens: Tokens
    guest_secret: str = ""


# --------------------------------------------------------------------------------------------
# Tables and hostings


@dataclass(frozen=True)
class TableEntry:
    """A table the lobby made, as its directory keeps it."""

    table_id: str
    invite_code: str | None
    #: public or private.
    visibility: str
    #: hosted, quick_match or tournament.
    source: str
    preset: str
    host_player_id: str = ""


@dataclass(frozen=True)
class Hosting:
    """A HostTable call not yet done: its two table service requests, as bytes."""

    create_request: bytes
    sit_request: bytes


# --------------------------------------------------------------------------------------------
# Quick match


@dataclass(frozen=True)
class Ticket:
    ticket_id: str
    player_id: str
    display_name: str
    preset: str
    state: str
    enqueue_us: int
    bots_fill_us: int
    table_id: str | None
    seat: int | None
    #: The chips staked a seat (0: none); a queue is a preset and a stake.
    stake: int = 0


@dataclass(frozen=True)
class TicketStatus:
    """A ticket and how many tickets wait in its queue (its preset and stake)."""

    ticket: Ticket
    players_waiting: int


# --------------------------------------------------------------------------------------------
# Tournaments


@dataclass(frozen=True)
class TournamentRow:
    tournament_id: str
    name: str
    #: The okey.v1.RuleSet every table plays, as sent.
    rules: bytes
    preset: str
    max_players: int
    advance_per_table: int
    planned_rounds: int
    bot_level: int
    state: str
    current_round: int
    winner_player_id: str
    creator_player_id: str
    registered: int
    created_us: int
    started_us: int | None
    finished_us: int | None
    #: Chips an entrant pays (0: free).
    entry_fee: int = 0
    #: The prize table (``chips.prizes.prizes_to_json``).
    prizes: str = "[]"
    #: Finished, and its final ranking recorded by the scoring service.
    ranking_reported: bool = False
    #: The no-show policy: times a player's seat may go to a bot in a match (never 0).
    no_show_missed_turns: int = 2
    #: What the organiser says of it, and its category (a slug; "" for none).
    description: str = ""
    category: str = ""
    #: When it starts by itself (None: by hand); when its registration opens (None: at once).
    scheduled_start_us: int | None = None
    registration_opens_us: int | None = None
    #: The check-in window before the scheduled start (0: none), and whether its opening was told.
    check_in_seconds: int = 0
    check_in_told: bool = False
    #: The fewest entrants it starts with; the most substitutes it takes once full.
    min_players: int = 2
    max_substitutes: int = 0
    #: The recurring series it is an occurrence of ("" for none); why it was cancelled.
    series_id: str = ""
    cancel_reason: str = ""
    #: Its pace: a round's time limit and the break between rounds (seconds; 0: none), round 1
    #: seated by rating; paused; the end of the break before the round in play (None: none).
    round_seconds: int = 0
    break_seconds: int = 0
    seed_by_rating: bool = False
    paused: bool = False
    next_round_us: int | None = None

    def check_in_opens_us(self) -> int | None:
        """When its check-in window opens (None: it has none)."""
        if not self.check_in_seconds or self.scheduled_start_us is None:
            return None
        return self.scheduled_start_us - self.check_in_seconds * US


@dataclass(frozen=True)
class RoundTable:
    tournament_id: str
    round: int
    table_index: int
    #: The four seats' players ("" for a bot seat).
    seats: list[str]
    advance: int
    table_id: str | None
    match_id: str | None
    state: str
    #: The round's time limit: the table's match deadline (None: none).
    deadline_us: int | None = None


@dataclass(frozen=True)
class Entrant:
    """A registered player: their standings entry and what else the lobby shows of them."""

    entry: bracket.Entry
    display_name: str
    table_id: str
    matches_won: int
    #: Checked in for the scheduled start; waiting as a substitute (before the start only).
    checked_in: bool = False
    substitute: bool = False
    #: Why the organiser disqualified them ("" if not: ``entry.disqualified`` says whether).
    disqualification_reason: str = ""


__all__ = [
    "ACCOUNT",
    "CANCELLED",
    "FINISHED",
    "GUEST",
    "MATCHED",
    "PLANNED",
    "REGISTERING",
    "RUNNING",
    "STARTED",
    "US",
    "WAITING",
    "AccessIssuer",
    "AccessToken",
    "Entrant",
    "Hosting",
    "LeaseLost",
    "Login",
    "PlayerRow",
    "RoundTable",
    "TableEntry",
    "Ticket",
    "TicketStatus",
    "Tokens",
    "TournamentRow",
    "now_us",
]
