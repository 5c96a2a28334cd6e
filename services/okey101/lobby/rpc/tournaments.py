"""LobbyService's tournaments: CreateTournament, RegisterForTournament,
UnregisterFromTournament, CheckInToTournament, StopTournamentSeries, StartTournament,
PauseTournament, ResumeTournament, DisqualifyFromTournament,
CancelTournament, GetTournament, ListTournaments, GetTournamentStandings (the store is
``lobby.stores.tournaments``, the bracket ``lobby.bracket``, the driving
``lobby.tournament_driver``; docs/lobby.md, Tournaments)."""

from __future__ import annotations

import re
from typing import Final, TypeVar

from okey.v1 import lobby_pb2

from okey101.lobby import bracket
from okey101.lobby.chips import prizes, tournament_chips
from okey101.lobby.errors import Denied, Invalid, NotReady
from okey101.lobby.messages import (
    TOURNAMENT_STATES,
    created_tournament_answer,
    started_tournament_answer,
    tournament_message,
)
from okey101.lobby.records import REGISTERING, TournamentRow, now_us
from okey101.lobby.rpc import checks
from okey101.lobby.rpc.base import LobbyCalls, log
from okey101.lobby.stores import answers
from okey101.lobby.stores.tournaments import Listing, NewTournament
from okey101.lobby.tournament_driver import close_tournament_tables, forfeit_seat
from okey101.lobby.tournament_schedule import checked_schedule
from okey101.platform import paging, timestamps
from okey101.platform.auth import require_claims
from okey101.platform.handlers import Context
from okey101.platform.idempotency import CallKey, Once
from okey101.platform.ids import check_request_id, shown_value
from okey101.platform.names import TITLE_MAX

#: Page sizes (default, maximum) from lobby.proto.
TOURNAMENTS_PAGE: Final = (50, 200)
STANDINGS_PAGE: Final = (100, 500)
#: The fewest registered players a tournament starts with.
MIN_TOURNAMENT_PLAYERS: Final = 2
#: The largest entry fee (chips are int64 in the ledger: far below its limit).
MAX_ENTRY_FEE: Final = 10**12
#: NoShowPolicy.missed_turns: its default (for 0) and its largest value.
DEFAULT_NO_SHOW_MISSED_TURNS: Final = 2
MAX_NO_SHOW_MISSED_TURNS: Final = 10


def _no_show_missed_turns(policy: lobby_pb2.NoShowPolicy) -> int:
    """The policy's missed_turns as in force (0: the default); out of range: BAD_NO_SHOW_POLICY."""
    if policy.missed_turns > MAX_NO_SHOW_MISSED_TURNS:
        raise Invalid(
            "BAD_NO_SHOW_POLICY",
            missed_turns=str(policy.missed_turns),
            maximum=str(MAX_NO_SHOW_MISSED_TURNS),
            default=str(DEFAULT_NO_SHOW_MISSED_TURNS),
        )
    return policy.missed_turns or DEFAULT_NO_SHOW_MISSED_TURNS


#: A tournament's description, in characters, and what a category is.
DESCRIPTION_MAX: Final = 500
CATEGORY: Final = re.compile(r"[a-z0-9-]{0,32}")


def checked_category(value: str, field_name: str) -> str:
    """A category: 0-32 characters of a-z, 0-9 and '-' (INVALID_ARGUMENT BAD_CATEGORY)."""
    if CATEGORY.fullmatch(value) is None:
        raise Invalid("BAD_CATEGORY", field=field_name, value=shown_value(value))
    return value


def checked_description(value: str) -> str:
    """A description without the spaces at its ends: at most 500 characters, printable or
    line breaks (INVALID_ARGUMENT BAD_LENGTH otherwise)."""
    text = value.strip()
    if len(text) > DESCRIPTION_MAX or not text.replace("\n", " ").isprintable():
        raise Invalid("BAD_LENGTH", field="description", minimum=0, maximum=DESCRIPTION_MAX)
    return text


def _bound(request: lobby_pb2.ListTournamentsRequest, field_name: str) -> int | None:
    """A time filter of ListTournaments in microseconds (None when unset); a time the
    Timestamp type cannot hold is INVALID_ARGUMENT BAD_FIELD."""
    if not request.HasField(field_name):
        return None
    value = getattr(request, field_name)
    if not timestamps.holds(value):
        raise Invalid("BAD_FIELD", field=field_name, value=f"{value.seconds}s {value.nanos}ns")
    return int(value.ToMicroseconds())


def _prizes_within_entries(
    prize_table: list[prizes.Prize], entry_fee: int, min_players: int
) -> None:
    """An organiser's prizes are paid by the entries: the fixed amounts and the shares of the
    pool together may not exceed what ``min_players`` entrants bring (INVALID_ARGUMENT
    BAD_PRIZE_OVER_ENTRIES); only an operator (a service token) guarantees more."""
    fixed = sum(prize.amount for prize in prize_table)
    shares = sum(prize.share_percent for prize in prize_table)
    pool = entry_fee * min_players
    if fixed and fixed * 100 + shares * pool > pool * 100:
        raise Invalid(
            "BAD_PRIZE_OVER_ENTRIES",
            fixed=str(fixed),
            shares=str(shares),
            min_players=str(min_players),
            pool=str(pool),
        )


#: TournamentPace's limits: a round's time limit (minutes), a break (seconds).
MAX_ROUND_MINUTES: Final = 600
MAX_BREAK_SECONDS: Final = 3600
#: A disqualification's reason, in characters.
REASON_MAX: Final = 200


def _checked_pace(pace: lobby_pb2.TournamentPace) -> lobby_pb2.TournamentPace:
    """A pace within its limits (INVALID_ARGUMENT BAD_PACE otherwise)."""
    if pace.round_minutes > MAX_ROUND_MINUTES:
        raise Invalid("BAD_PACE", field="round_minutes", value=str(pace.round_minutes))
    if pace.break_seconds > MAX_BREAK_SECONDS:
        raise Invalid("BAD_PACE", field="break_seconds", value=str(pace.break_seconds))
    return pace


_Paused = lobby_pb2.PauseTournamentRequest | lobby_pb2.ResumeTournamentRequest
_PausedAnswer = TypeVar(
    "_PausedAnswer", lobby_pb2.PauseTournamentResponse, lobby_pb2.ResumeTournamentResponse
)


class TournamentCalls(LobbyCalls):
    """Tournaments (module docstring)."""

    async def _tournament_message(self, tournament_id: str) -> lobby_pb2.Tournament:
        row = await self.repository.tournaments.get(tournament_id)
        return await self._message_of(row)

    async def _message_of(self, row: TournamentRow) -> lobby_pb2.Tournament:
        """The Tournament message of ``row``, with its tables, pool, counts and series."""
        tournament_id = row.tournament_id
        tables = await self.repository.tournaments.round_tables(tournament_id)
        pool = 0
        if row.entry_fee:
            async with self.database.read() as session:
                pool = await tournament_chips.prize_pool(session, tournament_id)
        schedules = self.repository.tournament_schedules
        waiting = checked_in = 0
        if row.state == REGISTERING:
            waiting = await schedules.substitute_count(tournament_id)
            if row.check_in_seconds:
                checked_in = await schedules.checked_in_count(tournament_id)
        return tournament_message(
            row,
            tables,
            pool,
            substitutes=waiting,
            checked_in=checked_in,
            recurrence=await schedules.recurrence(row.series_id),
        )

    async def CreateTournament(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.CreateTournamentRequest, context: Context
    ) -> lobby_pb2.CreateTournamentResponse:
        async def work() -> lobby_pb2.CreateTournamentResponse:
            check_request_id(request.request_id)
            claims = require_claims()
            if claims.kind == "player" and not await self.repository.organisers.is_organiser(
                claims.subject
            ):
                raise Denied("NOT_AN_ORGANISER")
            name = checks.name(request.name, "name", required=True, maximum=TITLE_MAX)
            description = checked_description(request.description)
            category = checked_category(request.category, "category")
            preset = checks.rules_preset(request.rules)
            if not 4 <= request.max_players <= 1024:
                raise Invalid("BAD_FIELD", field="max_players", value=str(request.max_players))
            if request.advance_per_table > 3:
                raise Invalid(
                    "BAD_FIELD", field="advance_per_table", value=str(request.advance_per_table)
                )
            if request.rounds > 32:
                raise Invalid("BAD_FIELD", field="rounds", value=str(request.rounds))
            checks.enum_value(request.bot_level, checks.BOT_LEVELS, "bot_level")
            if request.entry_fee > MAX_ENTRY_FEE:
                raise Invalid("BAD_FIELD", field="entry_fee", value=str(request.entry_fee))
            prize_table = prizes.prizes_from_request(request.prizes, request.max_players)
            missed_turns = _no_show_missed_turns(request.no_show_policy)
            if not request.min_players <= request.max_players:
                raise Invalid("BAD_FIELD", field="min_players", value=str(request.min_players))
            if request.max_substitutes > request.max_players:
                raise Invalid(
                    "BAD_FIELD", field="max_substitutes", value=str(request.max_substitutes)
                )
            min_players = max(MIN_TOURNAMENT_PLAYERS, request.min_players)
            if claims.kind == "player":
                _prizes_within_entries(prize_table, request.entry_fee, min_players)
            schedule = checked_schedule(request, now_us())
            pace = _checked_pace(request.pace)
            plan = NewTournament(
                name=name,
                rules=request.rules.SerializeToString(deterministic=True),
                preset=preset,
                max_players=request.max_players,
                advance_per_table=request.advance_per_table or 1,
                planned_rounds=request.rounds,
                bot_level=int(request.bot_level),
                creator_player_id=claims.subject if claims.kind == "player" else "",
                entry_fee=request.entry_fee,
                prizes=prizes.prizes_to_json(prize_table),
                no_show_missed_turns=missed_turns,
                description=description,
                category=category,
                scheduled_start_us=schedule.start_us,
                registration_opens_us=schedule.registration_opens_us,
                check_in_seconds=schedule.check_in_seconds,
                min_players=min_players,
                max_substitutes=request.max_substitutes,
                round_seconds=pace.round_minutes * 60,
                break_seconds=pace.break_seconds,
                seed_by_rating=pace.seed_by_rating,
            )
            call = answers.once(
                "CreateTournament",
                f"{claims.kind}:{claims.subject}",
                request,
                lobby_pb2.CreateTournamentResponse,
            )
            if schedule.recurrence is not None:
                created = await self.repository.tournament_schedules.create_series(
                    plan, request.recurrence, call, created_tournament_answer
                )
            else:
                created = await self.repository.tournaments.create(
                    plan, call, created_tournament_answer
                )
            tournament = await self._tournament_message(created.tournament.tournament_id)
            return lobby_pb2.CreateTournamentResponse(tournament=tournament)

        return await self._answer(request, context, work)

    async def RegisterForTournament(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.RegisterForTournamentRequest, context: Context
    ) -> lobby_pb2.RegisterForTournamentResponse:
        async def work() -> lobby_pb2.RegisterForTournamentResponse:
            check_request_id(request.request_id)
            tournament_id = checks.identifier(request.tournament_id, "tournament_id")
            player = await self._caller()
            call = answers.once(
                "RegisterForTournament",
                f"player:{player.player_id}",
                request,
                lobby_pb2.RegisterForTournamentResponse,
            )

            async def register() -> lobby_pb2.RegisterForTournamentResponse:
                await self.repository.tournaments.register(
                    tournament_id, player, starting_grant=self.options.chips.starting_grant
                )
                tournament = await self._tournament_message(tournament_id)
                return lobby_pb2.RegisterForTournamentResponse(tournament=tournament)

            return await answers.kept_after(self.database, call, register)

        return await self._answer(request, context, work)

    async def UnregisterFromTournament(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.UnregisterFromTournamentRequest, context: Context
    ) -> lobby_pb2.UnregisterFromTournamentResponse:
        async def work() -> lobby_pb2.UnregisterFromTournamentResponse:
            check_request_id(request.request_id)
            tournament_id = checks.identifier(request.tournament_id, "tournament_id")
            player = await self._caller()
            call = answers.once(
                "UnregisterFromTournament",
                f"player:{player.player_id}",
                request,
                lobby_pb2.UnregisterFromTournamentResponse,
            )

            stored = await answers.peek(self.database, call)
            if stored is not None:
                return stored
            return await self.repository.tournaments.unregister(
                tournament_id,
                player.player_id,
                call,
                lambda row, pool: lobby_pb2.UnregisterFromTournamentResponse(
                    tournament=tournament_message(row, [], pool)
                ),
            )

        return await self._answer(request, context, work)

    async def CheckInToTournament(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.CheckInToTournamentRequest, context: Context
    ) -> lobby_pb2.CheckInToTournamentResponse:
        async def work() -> lobby_pb2.CheckInToTournamentResponse:
            check_request_id(request.request_id)
            tournament_id = checks.identifier(request.tournament_id, "tournament_id")
            player = await self._caller()
            call = answers.once(
                "CheckInToTournament",
                f"player:{player.player_id}",
                request,
                lobby_pb2.CheckInToTournamentResponse,
            )
            # Checking in is a state, not a change that adds up: a retry, like the first
            # call, answers the tournament as it is now.
            if await answers.peek(self.database, call) is None:
                await self._check_in(tournament_id, player.player_id, call)
            return lobby_pb2.CheckInToTournamentResponse(
                tournament=await self._tournament_message(tournament_id)
            )

        return await self._answer(request, context, work)

    async def _check_in(
        self,
        tournament_id: str,
        player_id: str,
        call: Once[CallKey, lobby_pb2.CheckInToTournamentResponse],
    ) -> None:
        await self.repository.tournament_schedules.check_in(
            tournament_id,
            player_id,
            call,
            lambda row, pool: lobby_pb2.CheckInToTournamentResponse(
                tournament=tournament_message(row, [], pool)
            ),
        )

    async def StopTournamentSeries(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.StopTournamentSeriesRequest, context: Context
    ) -> lobby_pb2.StopTournamentSeriesResponse:
        async def work() -> lobby_pb2.StopTournamentSeriesResponse:
            check_request_id(request.request_id)
            series_id = checks.identifier(request.series_id, "series_id")
            claims = require_claims()
            caller = claims.subject if claims.kind == "player" else None
            call = answers.once(
                "StopTournamentSeries",
                f"{claims.kind}:{claims.subject}",
                request,
                lobby_pb2.StopTournamentSeriesResponse,
            )

            async def stop() -> lobby_pb2.StopTournamentSeriesResponse:
                changed = await self.repository.tournament_schedules.stop_series(series_id, caller)
                log.info(
                    "tournament series stopped",
                    series_id=series_id,
                    changed=changed,
                    by=claims.kind,
                    reason=request.reason[:200],
                )
                return lobby_pb2.StopTournamentSeriesResponse(changed=changed)

            return await answers.kept_after(self.database, call, stop)

        return await self._answer(request, context, work)

    async def StartTournament(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.StartTournamentRequest, context: Context
    ) -> lobby_pb2.StartTournamentResponse:
        async def work() -> lobby_pb2.StartTournamentResponse:
            check_request_id(request.request_id)
            tournament_id = checks.identifier(request.tournament_id, "tournament_id")
            claims = require_claims()
            call = answers.once(
                "StartTournament",
                f"{claims.kind}:{claims.subject}",
                request,
                lobby_pb2.StartTournamentResponse,
            )
            stored = await answers.peek(self.database, call)
            if stored is not None:
                return stored
            caller = claims.subject if claims.kind == "player" else None
            return await self.repository.tournaments.start(
                tournament_id, caller, MIN_TOURNAMENT_PLAYERS, call, started_tournament_answer
            )

        return await self._answer(request, context, work)

    async def CancelTournament(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.CancelTournamentRequest, context: Context
    ) -> lobby_pb2.CancelTournamentResponse:
        async def work() -> lobby_pb2.CancelTournamentResponse:
            check_request_id(request.request_id)
            tournament_id = checks.identifier(request.tournament_id, "tournament_id")
            claims = require_claims()
            caller = claims.subject if claims.kind == "player" else None
            # Cancelling twice changes nothing: the answer is kept after it, binding the request
            # id to this request (not kept when the tables could not all be closed: the retry
            # closes them).
            call = answers.once(
                "CancelTournament",
                f"{claims.kind}:{claims.subject}",
                request,
                lobby_pb2.CancelTournamentResponse,
            )

            async def cancel() -> lobby_pb2.CancelTournamentResponse:
                row = await self.repository.tournaments.cancel(tournament_id, caller)
                log.info(
                    "tournament cancelled",
                    tournament_id=tournament_id,
                    by=claims.kind,
                    reason=request.reason[:200],
                )
                if not await close_tournament_tables(self.tables, tournament_id):
                    raise NotReady("PEER_UNAVAILABLE", service="table")
                tables = await self.repository.tournaments.round_tables(tournament_id)
                return lobby_pb2.CancelTournamentResponse(
                    tournament=tournament_message(row, tables)
                )

            return await answers.kept_after(self.database, call, cancel)

        return await self._answer(request, context, work)

    async def PauseTournament(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.PauseTournamentRequest, context: Context
    ) -> lobby_pb2.PauseTournamentResponse:
        return await self._answer(
            request,
            context,
            lambda: self._set_paused(
                request, lobby_pb2.PauseTournamentResponse, paused=True, reason=request.reason
            ),
        )

    async def ResumeTournament(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.ResumeTournamentRequest, context: Context
    ) -> lobby_pb2.ResumeTournamentResponse:
        return await self._answer(
            request,
            context,
            lambda: self._set_paused(request, lobby_pb2.ResumeTournamentResponse, paused=False),
        )

    async def _set_paused(
        self, request: _Paused, kind: type[_PausedAnswer], *, paused: bool, reason: str = ""
    ) -> _PausedAnswer:
        """PauseTournament or ResumeTournament (``paused``), answered with a ``kind``."""
        check_request_id(request.request_id)
        tournament_id = checks.identifier(request.tournament_id, "tournament_id")
        claims = require_claims()
        caller = claims.subject if claims.kind == "player" else None
        method = "PauseTournament" if paused else "ResumeTournament"
        call = answers.once(method, f"{claims.kind}:{claims.subject}", request, kind)

        async def change() -> _PausedAnswer:
            row, changed = await self.repository.tournament_control.set_paused(
                tournament_id, caller, paused=paused
            )
            log.info(
                "tournament paused" if paused else "tournament resumed",
                tournament_id=tournament_id,
                changed=changed,
                by=claims.kind,
                reason=reason[:200],
            )
            return kind(tournament=await self._message_of(row))

        return await answers.kept_after(self.database, call, change)

    async def DisqualifyFromTournament(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.DisqualifyFromTournamentRequest, context: Context
    ) -> lobby_pb2.DisqualifyFromTournamentResponse:
        async def work() -> lobby_pb2.DisqualifyFromTournamentResponse:
            check_request_id(request.request_id)
            tournament_id = checks.identifier(request.tournament_id, "tournament_id")
            player_id = checks.identifier(request.player_id, "player_id")
            reason = checks.name(request.reason, "reason", required=True, maximum=REASON_MAX)
            claims = require_claims()
            caller = claims.subject if claims.kind == "player" else None
            call = answers.once(
                "DisqualifyFromTournament",
                f"{claims.kind}:{claims.subject}",
                request,
                lobby_pb2.DisqualifyFromTournamentResponse,
            )
            return await answers.kept_after(
                self.database,
                call,
                lambda: self._disqualify(tournament_id, player_id, reason, claims.kind, caller),
            )

        return await self._answer(request, context, work)

    async def _disqualify(
        self, tournament_id: str, player_id: str, reason: str, by: str, caller: str | None
    ) -> lobby_pb2.DisqualifyFromTournamentResponse:
        changed, table_id = await self.repository.tournament_control.disqualify(
            tournament_id, player_id, reason, caller
        )
        if table_id:
            # A bot plays the seat to the end of the match (it goes on for the others).
            await forfeit_seat(self.tables, tournament_id, player_id, table_id)
        log.info(
            "tournament player disqualified",
            tournament_id=tournament_id,
            player_id=player_id,
            changed=changed,
            by=by,
        )
        return lobby_pb2.DisqualifyFromTournamentResponse(changed=changed)

    async def GetTournament(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.GetTournamentRequest, context: Context
    ) -> lobby_pb2.GetTournamentResponse:
        async def work() -> lobby_pb2.GetTournamentResponse:
            tournament_id = checks.identifier(request.tournament_id, "tournament_id")
            return lobby_pb2.GetTournamentResponse(
                tournament=await self._tournament_message(tournament_id)
            )

        return await self._answer(request, context, work)

    async def ListTournaments(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.ListTournamentsRequest, context: Context
    ) -> lobby_pb2.ListTournamentsResponse:
        async def work() -> lobby_pb2.ListTournamentsResponse:
            names = {int(number): name for name, number in TOURNAMENT_STATES.items()}
            names[lobby_pb2.TOURNAMENT_STATE_UPCOMING] = REGISTERING
            states = [names.get(int(state)) for state in request.states]
            if None in states:
                raise Invalid("BAD_FIELD", field="states", value=str(list(request.states)))
            asked = set(request.states)
            upcoming = lobby_pb2.TOURNAMENT_STATE_UPCOMING in asked
            opened = lobby_pb2.TOURNAMENT_STATE_REGISTERING in asked
            size = paging.page_size(
                request.page_size, default=TOURNAMENTS_PAGE[0], maximum=TOURNAMENTS_PAGE[1]
            )
            listed = Listing(
                category=checked_category(request.category, "category"),
                created_after_us=_bound(request, "created_after"),
                created_before_us=_bound(request, "created_before"),
                started_after_us=_bound(request, "started_after"),
                started_before_us=_bound(request, "started_before"),
                series_id=request.series_id and checks.identifier(request.series_id, "series_id"),
                scheduled_after_us=_bound(request, "scheduled_after"),
                scheduled_before_us=_bound(request, "scheduled_before"),
                registration_open=None if upcoming == opened else opened,
                now_us=now_us(),
            )
            bound = paging.fingerprint(
                "tournaments",
                *request.states,
                *(
                    f"{name}={value}"
                    for name, value in sorted(listed.__dict__.items())
                    if name != "now_us"
                ),
            )
            after = paging.decode_token(request.page_token, bound, (int, str))
            key = None if after is None else (int(after[0]), str(after[1]))
            store = self.repository.tournaments
            rows, next_key = await store.page(
                [state for state in states if state], key, size, listed
            )
            answer = lobby_pb2.ListTournamentsResponse()
            for row in rows:
                answer.tournaments.append(await self._message_of(row))
            if next_key is not None:
                answer.next_page_token = paging.encode_token(list(next_key), bound)
            return answer

        return await self._answer(request, context, work)

    async def GetTournamentStandings(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.GetTournamentStandingsRequest, context: Context
    ) -> lobby_pb2.GetTournamentStandingsResponse:
        async def work() -> lobby_pb2.GetTournamentStandingsResponse:
            tournament_id = checks.identifier(request.tournament_id, "tournament_id")
            size = paging.page_size(
                request.page_size, default=STANDINGS_PAGE[0], maximum=STANDINGS_PAGE[1]
            )
            bound = paging.fingerprint("standings", tournament_id)
            after = paging.decode_token(request.page_token, bound, (int,))
            row = await self.repository.tournaments.get(tournament_id)
            entrants = await self.repository.tournaments.entrants(tournament_id)
            by_player = {entrant.entry.player_id: entrant for entrant in entrants}
            ranked = bracket.standings(
                (entrant.entry for entrant in entrants), started=row.started_us is not None
            )
            # Before the start, substitutes wait below every entrant.
            ranked.sort(key=lambda ranked_entry: by_player[ranked_entry[1].player_id].substitute)
            start = 0 if after is None else int(after[0])
            page = ranked[start : start + size]
            answer = lobby_pb2.GetTournamentStandingsResponse()
            for rank, entry in page:
                entrant = by_player[entry.player_id]
                answer.standings.append(
                    lobby_pb2.TournamentStanding(
                        rank=rank,
                        player_id=entry.player_id,
                        display_name=entrant.display_name,
                        round_reached=entry.round_reached,
                        eliminated=entry.eliminated,
                        table_id=entrant.table_id,
                        match_total=entry.match_total,
                        matches_won=entrant.matches_won,
                        hands_finished=entry.hands_finished,
                        penalty_points=entry.penalty_points,
                        won_last_match=entry.won_last,
                        forfeited=entry.forfeited,
                        checked_in=entrant.checked_in,
                        substitute=entrant.substitute,
                        disqualified=entry.disqualified,
                        disqualification_reason=entrant.disqualification_reason,
                    )
                )
            if start + size < len(ranked):
                answer.next_page_token = paging.encode_token([start + size], bound)
            return answer

        return await self._answer(request, context, work)


__all__ = ["MIN_TOURNAMENT_PLAYERS", "STANDINGS_PAGE", "TOURNAMENTS_PAGE", "TournamentCalls"]
