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
- GetLeaderboard's default minimum of rated matches is ``DEFAULT_MIN_MATCHES`` (on a seasonal
  board, of rated matches in its window). A seasonal board's window (``seasons``) is the one
  that holds season_time, else the one that holds the service's clock now (``clock``, injected
  by tests). A previous_page_token is a next token's key behind ``BEFORE``; the next tokens of
  the all-time board keep the shape they always had.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Final, TypeVar

import grpc.aio
from google.protobuf.timestamp_pb2 import Timestamp
from okey.v1 import common_pb2, scoring_pb2, scoring_pb2_grpc
from prometheus_client import Counter

from okey101.engine.errors import OkeyError
from okey101.platform import convert, paging
from okey101.platform.auth import Access, AccessPolicy, current_claims, require_claims
from okey101.platform.bot_seats import bot_player_id
from okey101.platform.config import Settings
from okey101.platform.database import Database
from okey101.platform.errors import InvalidArgument, abort_with, request_language
from okey101.platform.handlers import Context
from okey101.platform.ids import check_request_id
from okey101.platform.logs import get_logger
from okey101.platform.server import serve
from okey101.scoring import ratings, seasons
from okey101.scoring.errors import Invalid, Missing, NotReady
from okey101.scoring.messages import PRESETS, rating_message, timestamp
from okey101.scoring.records import now_us
from okey101.scoring.stores import ScoringRepository, leaderboards
from okey101.scoring.validation import (
    check_hand,
    check_id,
    check_match,
    rules_from_json,
    timestamp_us,
)

NAME: Final = "scoring"
SERVICE_NAME: Final = scoring_pb2.DESCRIPTOR.services_by_name["ScoringService"].full_name

#: Page sizes (default, maximum) from scoring.proto.
SHEET_PAGE: Final = (100, 500)
STANDINGS_PAGE: Final = (100, 500)
LEADERBOARD_PAGE: Final = (50, 200)
HISTORY_PAGE: Final = (20, 100)
#: GetLeaderboard's minimum of rated matches when the request says 0.
DEFAULT_MIN_MATCHES: Final = 1
#: A larger min_matches is read as this (no player has more; the column is 32-bit).
MAX_MIN_MATCHES: Final = 2**31 - 1

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
#: GetLeaderboard's windows: None for the all-time board.
_SEASONS: Final[dict[int, seasons.Season | None]] = {
    scoring_pb2.LEADERBOARD_SEASON_UNSPECIFIED: None,
    scoring_pb2.LEADERBOARD_SEASON_ALL_TIME: None,
    scoring_pb2.LEADERBOARD_SEASON_WEEK: seasons.WEEK,
    scoring_pb2.LEADERBOARD_SEASON_MONTH: seasons.MONTH,
}
#: What a previous_page_token's key starts with (a next token's key has no such mark).
BEFORE: Final = "before"


def _preset_filter(value: int, field: str = "preset") -> str | None:
    """A preset's name, or None for RULE_PRESET_UNSPECIFIED (every preset)."""
    if value == common_pb2.RULE_PRESET_UNSPECIFIED:
        return None
    name = _PRESET_NAMES.get(int(value))
    if name is None:
        raise Invalid("BAD_FIELD", field=field, value=str(value))
    return name


def _cursor(token: str, bound: str, shape: Sequence[type]) -> tuple[bool, leaderboards.Key] | None:
    """A leaderboard token's key, and whether it pages up (a previous_page_token); None for
    the first page. A made-up key the database could not compare (an integer beyond 64 bits,
    an infinite or NaN rating, a control character) is PAGE_TOKEN_INVALID like any bad token."""
    try:
        try:
            after = paging.decode_token(token, bound, shape)
            if after is None:
                return None
            up, key = False, after
        except InvalidArgument:
            before = paging.decode_token(token, bound, (str, *shape))
            if before is None or before[0] != BEFORE:
                raise
            up, key = True, before[1:]
    except OverflowError:  # an integer too large for a float
        raise InvalidArgument("PAGE_TOKEN_INVALID") from None
    for value in key:
        if (
            (isinstance(value, int) and not -(2**63) <= value < 2**63)
            or (isinstance(value, float) and not math.isfinite(value))
            or (isinstance(value, str) and not value.isprintable())
        ):
            raise InvalidArgument("PAGE_TOKEN_INVALID")
    return up, key


def _stamp_text(stamp: Timestamp) -> str:
    try:
        return stamp.ToJsonString()
    except ValueError:  # outside what RFC 3339 can write
        return f"{stamp.seconds}s+{stamp.nanos}ns"


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

    def __init__(self, database: Database, clock: Callable[[], float] = time.time) -> None:
        self.database = database
        self.repository = ScoringRepository(database)
        #: Now, in seconds since the epoch: which week or month is the current season.
        self.clock = clock

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
            rules = rules_from_json(match.rules_json)
            sheet = scoring_pb2.ScoreSheet(
                match_id=match.match_id,
                table_id=match.table_id,
                rules=convert.rules_to_proto(rules),
                seats=data.seats,
                rows=data.rows,
                totals=data.totals,
                ended=bool(match.ended),
            )
            if require_claims().kind != "service" and not rules.bots_labelled:
                # Where the table keeps bots unlabelled, so does its sheet (docs/table.md).
                for seat in sheet.seats:
                    if seat.bot and not seat.player_id:
                        seat.bot = False
                        seat.player_id = bot_player_id(match.table_id, seat.seat)
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
            if int(request.season) not in _SEASONS:
                raise Invalid("BAD_FIELD", field="season", value=str(request.season))
            season = _SEASONS[int(request.season)]
            preset = _preset_filter(request.preset) or ratings.ALL_PRESETS
            # Above the largest count stored (a 32-bit column) it is the same empty board.
            minimum = min(request.min_matches or DEFAULT_MIN_MATCHES, MAX_MIN_MATCHES)
            size = paging.page_size(
                request.page_size, default=LEADERBOARD_PAGE[0], maximum=LEADERBOARD_PAGE[1]
            )
            around = check_id(request.around_player_id, "around_player_id", required=False)
            answer = scoring_pb2.GetLeaderboardResponse()
            shape: tuple[type, ...]
            if season is None:
                if request.HasField("season_time"):
                    raise Invalid(
                        "BAD_FIELD", field="season_time", value=_stamp_text(request.season_time)
                    )
                board = leaderboards.all_time(mode, preset, minimum)
                bound = paging.fingerprint("leaderboard", mode, preset, minimum)
                shape = (float, str)
            else:
                window = self._season_window(season, request)
                board = leaderboards.season(mode, preset, minimum, window)
                bound = paging.fingerprint(
                    "leaderboard", mode, preset, minimum, season, window.start_us
                )
                shape = (int, int, str)
                answer.season_start.CopyFrom(timestamp(window.start_us))
                answer.season_end.CopyFrom(timestamp(window.end_us))
            cursor = _cursor(request.page_token, bound, shape)
            store = self.repository.leaderboards
            if cursor is not None:
                up, key = cursor
                page = await (store.page_before if up else store.page)(board, key, size)
            elif around:
                page = await store.around(board, around, size)
            else:
                page = await store.page(board, None, size)
            answer.entries.extend(
                scoring_pb2.LeaderboardEntry(
                    rank=line.rank,
                    player_id=line.player_id,
                    display_name=line.display_name,
                    rating=rating_message(line.rating),
                    wins=line.wins,
                    season_matches=line.season_matches,
                    season_points=line.season_points,
                    season_rating_change=line.season_rating_change,
                )
                for line in page.lines
            )
            if page.next_key is not None:
                answer.next_page_token = paging.encode_token(page.next_key, bound)
            if page.previous_key is not None:
                answer.previous_page_token = paging.encode_token(
                    [BEFORE, *page.previous_key], bound
                )
            return answer

        return await self._answer(request, context, work)

    def _season_window(
        self, season: seasons.Season, request: scoring_pb2.GetLeaderboardRequest
    ) -> seasons.Window:
        """The week or month asked for: the one holding season_time, else the current one."""
        now = int(self.clock() * 1_000_000)
        if not request.HasField("season_time"):
            return seasons.window(season, now)
        stamp = request.season_time
        instant = timestamp_us(stamp)
        if not 0 <= stamp.nanos < 1_000_000_000 or not seasons.in_range(season, instant, now):
            raise Invalid("SEASON_TIME_OUT_OF_RANGE", value=_stamp_text(stamp))
        return seasons.window(season, instant)

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
