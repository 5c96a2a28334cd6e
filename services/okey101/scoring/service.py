"""ScoringService (protos/okey/v1/scoring.proto): score sheets, standings, ratings, leaderboards.

``ScoringServicer(database)`` answers the RPCs: each reads its request (``validation``), calls the
repository (``stores``) and builds the answer (``messages``); an ``OkeyError`` ends the call with
its mapped status and a sentence in the request's language (``locale``, else ``accept-language``).
Until the database is migrated (``prepare()``, the platform's ``ready`` hook) calls are UNAVAILABLE
SERVICE_STARTING; a database that cannot be reached is UNAVAILABLE DATABASE_UNAVAILABLE (retry),
never INTERNAL.

Decisions where scoring.proto leaves room:

- RecordHand/RecordMatch are idempotent on hand id / match id (the proto's "this call's
  idempotency key as well"); a request id needs no table of its own: the same hand with any
  request id gets the first answer, and an error is not stored (the outbox's retry of a refused
  HANDS_MISSING succeeds once the hands are in).
- GetStandings of a tournament with no recorded match, and GetPlayerHistory of a player with
  nothing recorded, answer empty (scoring cannot tell an unknown tournament or player from one
  that has not finished a match yet; the lobby owns both). GetPlayerStats of a player scoring
  has recorded nothing of (no hand, no match) is NOT_FOUND ``PLAYER_NOT_FOUND``, unless the
  caller asks about themselves (their zeros).
- GetLeaderboard's default minimum of rated matches is ``DEFAULT_MIN_MATCHES``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

import grpc.aio
from okey.v1 import common_pb2, scoring_pb2, scoring_pb2_grpc
from prometheus_client import Counter

from okey101.engine.errors import OkeyError
from okey101.platform import convert, paging
from okey101.platform.auth import Access, AccessPolicy, current_claims
from okey101.platform.config import Settings
from okey101.platform.database import Database
from okey101.platform.errors import abort_with, request_language
from okey101.platform.handlers import Context
from okey101.platform.ids import check_request_id
from okey101.platform.logs import get_logger
from okey101.platform.server import serve
from okey101.scoring import ratings
from okey101.scoring.errors import Invalid, Missing, NotReady
from okey101.scoring.messages import PRESETS, rating_message
from okey101.scoring.records import now_us
from okey101.scoring.stores import ScoringRepository
from okey101.scoring.validation import check_hand, check_id, check_match, rules_from_json

NAME: Final = "scoring"
SERVICE_NAME: Final = scoring_pb2.DESCRIPTOR.services_by_name["ScoringService"].full_name

#: Page sizes (default, maximum) from scoring.proto.
SHEET_PAGE: Final = (100, 500)
STANDINGS_PAGE: Final = (100, 500)
LEADERBOARD_PAGE: Final = (50, 200)
HISTORY_PAGE: Final = (20, 100)
#: GetLeaderboard's minimum of rated matches when the request says 0.
DEFAULT_MIN_MATCHES: Final = 1

_SERVICE: Final[tuple[Access, ...]] = ("service",)
_PLAYER_OR_SERVICE: Final[tuple[Access, ...]] = ("player", "service")
#: Every RPC's "Auth:" line in scoring.proto.
METHOD_ACCESS: Final[dict[str, tuple[Access, ...]]] = {
    "RecordHand": _SERVICE,
    "RecordMatch": _SERVICE,
    "GetScoreSheet": _PLAYER_OR_SERVICE,
    "GetStandings": _PLAYER_OR_SERVICE,
    "RecordTournamentRanking": _SERVICE,
    "GetLeaderboard": _PLAYER_OR_SERVICE,
    "GetPlayerStats": _PLAYER_OR_SERVICE,
    "GetPlayerHistory": _PLAYER_OR_SERVICE,
}


#: Which tokens each call accepts (and the platform's open methods).
ACCESS: Final = AccessPolicy.of_service(SERVICE_NAME, METHOD_ACCESS)

HANDS_RECORDED: Final = Counter(
    "okey_scoring_hands_recorded_total", "Hands recorded (first deliveries only)."
)
MATCHES_RECORDED: Final = Counter(
    "okey_scoring_matches_recorded_total", "Matches recorded (first deliveries only)."
)
DUPLICATE_DELIVERIES: Final = Counter(
    "okey_scoring_duplicate_deliveries_total",
    "Hand and match deliveries answered from what was already recorded.",
)

_log = get_logger(service=NAME)
_R = TypeVar("_R")

_MODES: Final[dict[int, str]] = {
    scoring_pb2.RATING_MODE_UNSPECIFIED: ratings.FREE_FOR_ALL,
    scoring_pb2.RATING_MODE_FREE_FOR_ALL: ratings.FREE_FOR_ALL,
    scoring_pb2.RATING_MODE_PARTNERS: ratings.PARTNERS,
}
_PRESET_NAMES: Final[dict[int, str]] = {int(value): name for name, value in PRESETS.items()}


def _preset_filter(value: int, field: str = "preset") -> str | None:
    """A preset's name, or None for RULE_PRESET_UNSPECIFIED (every preset)."""
    if value == common_pb2.RULE_PRESET_UNSPECIFIED:
        return None
    name = _PRESET_NAMES.get(int(value))
    if name is None:
        raise Invalid("BAD_FIELD", field=field, value=str(value))
    return name


def _player(requested: str) -> str:
    """The player asked about; the caller when empty (a player token only)."""
    if requested:
        return check_id(requested, "player_id")
    claims = current_claims()
    if claims is None or claims.kind != "player":
        raise Invalid("FIELD_REQUIRED", field="player_id")
    return claims.subject


class ScoringServicer(scoring_pb2_grpc.ScoringServiceServicer):
    """okey.v1.ScoringService over one database (module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.repository = ScoringRepository(database)

    async def prepare(self) -> None:
        """Migrate the database to the service's latest schema; calls are served from then."""
        await self.database.migrate_to_serve(NAME)

    async def _answer(
        self, request: object, context: Context, work: Callable[[], Awaitable[_R]]
    ) -> _R:
        language = request_language(request, context.invocation_metadata())
        try:
            with self.database.serving(NotReady, log=_log):
                return await work()
        except OkeyError as error:
            await abort_with(context, error, language)

    # ----------------------------------------------------------------------------------------
    # Recording

    async def RecordHand(  # noqa: N802 (the generated servicer's names)
        self, request: scoring_pb2.RecordHandRequest, context: Context
    ) -> scoring_pb2.RecordHandResponse:
        async def work() -> scoring_pb2.RecordHandResponse:
            answer, first = await self.repository.hands.record(check_hand(request))
            (HANDS_RECORDED if first else DUPLICATE_DELIVERIES).inc()
            return answer

        return await self._answer(request, context, work)

    async def RecordMatch(  # noqa: N802 (the generated servicer's names)
        self, request: scoring_pb2.RecordMatchRequest, context: Context
    ) -> scoring_pb2.RecordMatchResponse:
        async def work() -> scoring_pb2.RecordMatchResponse:
            answer, first = await self.repository.matches.record(check_match(request))
            (MATCHES_RECORDED if first else DUPLICATE_DELIVERIES).inc()
            return answer

        return await self._answer(request, context, work)

    # ----------------------------------------------------------------------------------------
    # Reads

    async def GetScoreSheet(  # noqa: N802 (the generated servicer's names)
        self, request: scoring_pb2.GetScoreSheetRequest, context: Context
    ) -> scoring_pb2.GetScoreSheetResponse:
        async def work() -> scoring_pb2.GetScoreSheetResponse:
            match_id = check_id(request.match_id, "match_id")
            size = paging.page_size(request.page_size, default=SHEET_PAGE[0], maximum=SHEET_PAGE[1])
            bound = paging.fingerprint("sheet", match_id)
            after = paging.decode_token(request.page_token, bound, (int,))
            data = await self.repository.matches.score_sheet(
                match_id, None if after is None else int(after[0]), size
            )
            match = data.match
            sheet = scoring_pb2.ScoreSheet(
                match_id=match.match_id,
                table_id=match.table_id,
                rules=convert.rules_to_proto(rules_from_json(match.rules_json)),
                seats=data.seats,
                rows=data.rows,
                totals=data.totals,
                ended=bool(match.ended),
            )
            if match.partners:
                totals = data.totals
                sheet.team_totals.extend([totals[0] + totals[2], totals[1] + totals[3]])
            if match.ended and match.winner_seats:
                sheet.winner_seats.extend(int(seat) for seat in match.winner_seats.split(","))
            token = "" if data.next_key is None else paging.encode_token([data.next_key], bound)
            return scoring_pb2.GetScoreSheetResponse(sheet=sheet, next_page_token=token)

        return await self._answer(request, context, work)

    async def GetStandings(  # noqa: N802 (the generated servicer's names)
        self, request: scoring_pb2.GetStandingsRequest, context: Context
    ) -> scoring_pb2.GetStandingsResponse:
        async def work() -> scoring_pb2.GetStandingsResponse:
            tournament_id = check_id(request.tournament_id, "tournament_id")
            size = paging.page_size(
                request.page_size, default=STANDINGS_PAGE[0], maximum=STANDINGS_PAGE[1]
            )
            bound = paging.fingerprint("standings", tournament_id, request.round)
            after = paging.decode_token(request.page_token, bound, (int, int, str))
            page, final = await self.repository.standings.page(
                tournament_id, request.round, after, size
            )
            answer = scoring_pb2.GetStandingsResponse(
                final=final,
                standings=[
                    scoring_pb2.Standing(
                        rank=line.rank,
                        player_id=line.player_id,
                        display_name=line.display_name,
                        matches=line.matches,
                        wins=line.wins,
                        total_points=line.total_points,
                        hands=line.hands,
                        hands_finished=line.hands_finished,
                        forfeited=line.forfeited,
                    )
                    for line in page.items
                ],
            )
            if page.next_key is not None:
                answer.next_page_token = paging.encode_token(page.next_key, bound)
            return answer

        return await self._answer(request, context, work)

    async def RecordTournamentRanking(  # noqa: N802 (the generated servicer's names)
        self, request: scoring_pb2.RecordTournamentRankingRequest, context: Context
    ) -> scoring_pb2.RecordTournamentRankingResponse:
        async def work() -> scoring_pb2.RecordTournamentRankingResponse:
            check_request_id(request.request_id)
            tournament_id = check_id(request.tournament_id, "tournament_id")
            places: list[tuple[int, str, str, bool]] = []
            for index, line in enumerate(request.places):
                player_id = check_id(line.player_id, f"places[{index}].player_id")
                if line.place != index + 1:
                    raise Invalid(
                        "BAD_FIELD", field=f"places[{index}].place", value=str(line.place)
                    )
                places.append((line.place, player_id, line.display_name[:256], line.forfeited))
            if not places or len({place[1] for place in places}) != len(places):
                raise Invalid("BAD_FIELD", field="places", value=str(len(places)))
            recorded = await self.repository.standings.record_ranking(
                tournament_id, places, request.request_id, now_us()
            )
            return scoring_pb2.RecordTournamentRankingResponse(places=recorded)

        return await self._answer(request, context, work)

    async def GetLeaderboard(  # noqa: N802 (the generated servicer's names)
        self, request: scoring_pb2.GetLeaderboardRequest, context: Context
    ) -> scoring_pb2.GetLeaderboardResponse:
        async def work() -> scoring_pb2.GetLeaderboardResponse:
            mode = _MODES.get(int(request.mode))
            if mode is None:
                raise Invalid("BAD_FIELD", field="mode", value=str(request.mode))
            preset = _preset_filter(request.preset) or ratings.ALL_PRESETS
            minimum = request.min_matches or DEFAULT_MIN_MATCHES
            size = paging.page_size(
                request.page_size, default=LEADERBOARD_PAGE[0], maximum=LEADERBOARD_PAGE[1]
            )
            bound = paging.fingerprint("leaderboard", mode, preset, minimum)
            after = paging.decode_token(request.page_token, bound, (float, str))
            page = await self.repository.ratings.leaderboard(mode, preset, minimum, after, size)
            answer = scoring_pb2.GetLeaderboardResponse(
                entries=[
                    scoring_pb2.LeaderboardEntry(
                        rank=rank,
                        player_id=row.player_id,
                        display_name=row.display_name,
                        rating=rating_message(ratings.Rating(row.mu, row.sigma, row.matches)),
                        wins=row.wins,
                    )
                    for rank, row in page.items
                ]
            )
            if page.next_key is not None:
                answer.next_page_token = paging.encode_token(page.next_key, bound)
            return answer

        return await self._answer(request, context, work)

    async def GetPlayerStats(  # noqa: N802 (the generated servicer's names)
        self, request: scoring_pb2.GetPlayerStatsRequest, context: Context
    ) -> scoring_pb2.GetPlayerStatsResponse:
        async def work() -> scoring_pb2.GetPlayerStatsResponse:
            player_id = _player(request.player_id)
            data = await self.repository.players.stats(player_id, _preset_filter(request.preset))
            claims = current_claims()
            asks_for_self = claims is not None and claims.subject == player_id
            if (
                not (data.hands or data.matches)
                and not asks_for_self
                and not await self.repository.players.known(player_id)
            ):
                raise Missing("PLAYER_NOT_FOUND", player_id=player_id)
            stats = scoring_pb2.PlayerStats(
                player_id=player_id, hands=data.hands, matches=data.matches, wins=data.wins
            )
            if data.hands:
                stats.points_per_hand = data.points / data.hands
                stats.opening_rate = data.opened / data.hands
                stats.finishing_rate = data.finished / data.hands
                stats.penalties_per_hand = data.penalties / data.hands
            if data.free_for_all is not None:
                stats.free_for_all_rating.CopyFrom(rating_message(data.free_for_all))
            if data.partners is not None:
                stats.partners_rating.CopyFrom(rating_message(data.partners))
            return scoring_pb2.GetPlayerStatsResponse(stats=stats)

        return await self._answer(request, context, work)

    async def GetPlayerHistory(  # noqa: N802 (the generated servicer's names)
        self, request: scoring_pb2.GetPlayerHistoryRequest, context: Context
    ) -> scoring_pb2.GetPlayerHistoryResponse:
        async def work() -> scoring_pb2.GetPlayerHistoryResponse:
            player_id = _player(request.player_id)
            size = paging.page_size(
                request.page_size, default=HISTORY_PAGE[0], maximum=HISTORY_PAGE[1]
            )
            bound = paging.fingerprint("history", player_id)
            after = paging.decode_token(request.page_token, bound, (int, str))
            found, next_key = await self.repository.players.history(player_id, after, size)
            answer = scoring_pb2.GetPlayerHistoryResponse(matches=found)
            if next_key is not None:
                answer.next_page_token = paging.encode_token(next_key, bound)
            return answer

        return await self._answer(request, context, work)


def register(server: grpc.aio.Server, servicer: ScoringServicer | None = None) -> list[str]:
    """Add ScoringService to ``server``; its full service name, for health and reflection.

    Without a servicer, one over the database the environment's settings name (its migrations
    are then the caller's: ``await servicer.prepare()`` or ``run_migrations``)."""
    if servicer is None:
        from okey101.platform.config import load_settings

        servicer = ScoringServicer(Database.for_service(NAME, load_settings(NAME)))
    scoring_pb2_grpc.add_ScoringServiceServicer_to_server(servicer, server)
    return [SERVICE_NAME]


async def serve_scoring(settings: Settings) -> None:
    """Run the scoring service until SIGTERM or SIGINT: the database is migrated before health
    turns SERVING, and closed after the drain."""
    database = Database.for_service(NAME, settings)
    servicer = ScoringServicer(database)
    try:
        await serve(
            NAME,
            lambda server: register(server, servicer),
            settings,
            ready=servicer.prepare,
            access=ACCESS,
        )
    finally:
        await database.dispose()


__all__ = [
    "ACCESS",
    "DEFAULT_MIN_MATCHES",
    "METHOD_ACCESS",
    "SERVICE_NAME",
    "ScoringServicer",
    "register",
    "serve_scoring",
]
