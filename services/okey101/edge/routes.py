"""Which RPCs the edge serves to browsers, and which it never does: the one list.

Every RPC of every ``okey.v1`` service is in exactly one of ``PUBLIC``, ``NATIVE_ONLY`` and
``INTERNAL`` (a test checks them against the protos, so a new RPC must be placed). Public: what
a frontend calls with a player token or none (the lobby's logins, tables and wallets, the
table's seats, moves, views and its ``WatchTable`` stream, the rules' hints and checks,
scoring's sheets, standings, leaderboards and stats). Native only: public calls a browser cannot
make (Play, a bidirectional stream). Internal: the calls the backend's services make of one
another, with a service token (``RecordHand``, ``RecordMatch``, ``NextStep``, ``CreateTable``,
``ListTables``, ``ListRevokedLogins``, ``RecordPlayerEvents``, ``RecordTableChips``) or an
operator's (``AdjustChips``, ``GrantOrganiser``, ``RevokeOrganiser``), or as the table's
engine (the rules' ``DealHand``, ``ApplyAction``, ``ViewHand``, ``ScoreHand``). The edge has no
route for the last two kinds, so a browser asking gets HTTP 404, whatever token it holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

#: The services the edge forwards to, by full name: the settings peer whose address it uses.
PEER_OF: Final[Mapping[str, str]] = {
    "okey.v1.LobbyService": "lobby",
    "okey.v1.TableService": "table",
    "okey.v1.RulesService": "rules",
    "okey.v1.ScoringService": "scoring",
    "okey.v1.BotService": "bot",
}

PUBLIC: Final[Mapping[str, tuple[str, ...]]] = {
    "okey.v1.LobbyService": (
        "LoginGuest",
        "RegisterAccount",
        "LoginAccount",
        "RefreshTokens",
        "Logout",
        "GetJwks",
        "GetPlayer",
        "BrowseTables",
        "HostTable",
        "JoinTable",
        "LeaveTable",
        "JoinQuickMatch",
        "LeaveQuickMatch",
        "GetQuickMatchStatus",
        "CreateTournament",
        "RegisterForTournament",
        "UnregisterFromTournament",
        "CheckInToTournament",
        "StopTournamentSeries",
        "PauseTournament",
        "ResumeTournament",
        "DisqualifyFromTournament",
        "StartTournament",
        "CancelTournament",
        "GetTournament",
        "ListTournaments",
        "GetTournamentStandings",
        "WatchPlayer",
        "RegisterPushDevice",
        "UnregisterPushDevice",
        "GetWallet",
        "ListWalletEntries",
        "ClaimDailyChips",
        "ListStakeLevels",
    ),
    "okey.v1.TableService": (
        "GetTable",
        "Sit",
        "Leave",
        "Start",
        "Act",
        "GetSeatView",
        "GetHints",
        "WatchTable",
        "SetDealSeed",
        "GetHandRecord",
        "CloseTable",
    ),
    "okey.v1.RulesService": (
        "ResolveRuleSet",
        "ValidateMelds",
        "ValidateOpening",
        "BestOpening",
        "PlayableTiles",
        "ViewHints",
    ),
    "okey.v1.ScoringService": (
        "GetScoreSheet",
        "GetStandings",
        "GetLeaderboard",
        "GetPlayerStats",
        "GetPlayerHistory",
    ),
}

#: Public RPCs a browser cannot call, so the edge has no route for them (a browser asking gets
#: HTTP 404): bidirectional streams, which Connect and gRPC-Web do not carry over HTTP/1.1.
#: Native clients call them at the services, through the ingress; browsers have the same
#: thing in other calls (Play is WatchTable with ``changes`` and Act).
NATIVE_ONLY: Final[Mapping[str, tuple[str, ...]]] = {
    "okey.v1.TableService": ("Play",),
}

INTERNAL: Final[Mapping[str, tuple[str, ...]]] = {
    "okey.v1.LobbyService": (
        "ListRevokedLogins",
        "RecordPlayerEvents",
        "AdjustChips",
        "RecordTableChips",
        "GrantOrganiser",
        "RevokeOrganiser",
    ),
    "okey.v1.TableService": ("CreateTable", "ListTables"),
    "okey.v1.RulesService": ("DealHand", "ApplyAction", "ViewHand", "ScoreHand"),
    "okey.v1.ScoringService": ("RecordHand", "RecordMatch", "RecordTournamentRanking"),
    "okey.v1.BotService": ("NextStep",),
}


def public_paths() -> list[str]:
    """The URL path of every public RPC (``/okey.v1.LobbyService/LoginGuest``)."""
    return [f"/{service}/{method}" for service, methods in PUBLIC.items() for method in methods]


__all__ = ["INTERNAL", "NATIVE_ONLY", "PEER_OF", "PUBLIC", "public_paths"]
