"""Tournament driving, in the background of every lobby pod (``TournamentDriver``), and the closing
of a cancelled tournament's tables (``close_tournament_tables``).

Every half second, for each running tournament, the pod takes or renews its lease
(``lobby_tournament_leases``: holder and expiry, ``--tournament-lease-seconds``); only the
holder drives it, and each of its writes is fenced by the lease in the same transaction. A step:
plan the round's tables if not yet planned (round 1 seeded by rating if the pace says so);
create, seat and start each planned table (derived request ids, so a new holder repeating the
work gets the same tables; there a bot takes a player's seat after one missed turn, and the
round's time limit is the table's match deadline) unless the tournament is paused or in a break
between rounds; forfeit the players the no-show policy says (``no_shows``, from the seat events
the table's outbox gave the lobby); note each table whose match has ended and whose result the
scoring service has (the score sheet is the result); once every table of the round is in,
advance the best or finish with the winner (``stores.tournaments``). A pod that dies stops
renewing; once its lease expires another pod's next tick takes the tournament over and carries
on from what the database says. A pod that stops gracefully gives its leases up at once. Once a
tournament has finished, any pod's tick gives its final ranking to the scoring service
(RecordTournamentRanking) until it is recorded, so scoring serves the lobby's one ranking.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid
from typing import Final

from google.protobuf.timestamp_pb2 import Timestamp
from okey.v1 import common_pb2, table_pb2
from prometheus_client import Counter, Gauge

from okey101.engine.errors import OkeyError
from okey101.lobby import bracket, no_shows
from okey101.lobby.messages import table_entry
from okey101.lobby.peer_clients import ScoringClient, TableClient, close_table, derived_request_id
from okey101.lobby.records import (
    CANCELLED,
    FINISHED,
    PLANNED,
    RUNNING,
    STARTED,
    US,
    LeaseLost,
    RoundTable,
    TournamentRow,
    now_us,
)
from okey101.lobby.stores import LobbyRepository
from okey101.platform.logs import get_logger
from okey101.platform.peer_calls import PeerError

_log = get_logger(service="lobby")

TOURNAMENT_ROUNDS: Final = Counter(
    "okey_lobby_tournament_rounds_completed_total", "Tournament rounds completed (this pod)."
)
TOURNAMENTS_DRIVEN: Final = Gauge(
    "okey_lobby_tournaments_driven", "Running tournaments whose lease this pod holds."
)
#: How many of a round's tables the driver starts at once.
TABLE_STARTS_AT_ONCE: Final = 16
#: The turns a player may miss at a tournament's table before a bot keeps their seat.
TOURNAMENT_MISSED_TURNS_BEFORE_AWAY: Final = 1

TAKEOVERS: Final = Counter(
    "okey_lobby_tournament_lease_takeovers_total",
    "Tournaments this pod took over from another pod whose lease had expired.",
)


async def close_tournament_tables(tables: TableClient, tournament_id: str) -> bool:
    """Close every table of ``tournament_id`` still waiting or in play: True once none is
    left open, False if the table service could not be reached for some."""
    open_tables: list[str] = []
    token = ""
    while True:
        page = await tables.list(
            table_pb2.ListTablesRequest(
                tournament_id=tournament_id,
                states=[common_pb2.TABLE_STATE_WAITING, common_pb2.TABLE_STATE_PLAYING],
                page_size=200,
                page_token=token,
            )
        )
        open_tables += [table.table_id for table in page.tables]
        token = page.next_page_token
        if not token:
            break
    closed = [
        await close_table(tables, table_id, f"tournament {tournament_id} cancelled")
        for table_id in open_tables
    ]
    return all(closed)


def _events_since(tournament: TournamentRow) -> int:
    """Where a tournament's seat events start: its start, less a minute for the clocks of other
    pods (the events' times are the table's)."""
    return max(0, (tournament.started_us or 0) - 60 * 1_000_000)


async def forfeit_seat(
    tables: TableClient, tournament_id: str, player_id: str, table_id: str
) -> None:
    """A bot plays the forfeited ``player_id``'s seat to the end of the match, marked forfeited
    (``LeaveRequest.forfeit``; the same request id for every try, so it is done once). A match
    already over has no seat left to hand over."""
    try:
        await tables.leave(
            table_pb2.LeaveRequest(
                request_id=derived_request_id("tournament-forfeit", tournament_id, player_id),
                table_id=table_id,
                player_id=player_id,
                forfeit=True,
            )
        )
    except PeerError as error:
        if error.reason not in _MATCH_OVER:
            raise


#: The table's answers to a Leave once its match is over (nothing to hand over).
_MATCH_OVER: Final = frozenset({"TABLE_FINISHED", "TABLE_CLOSED", "NOT_SEATED"})


def _deadline(row: RoundTable) -> Timestamp | None:
    """The round's time limit as the table's match deadline: at least a second ahead (a table
    started after its round's limit plays one hand), None without a limit. A table created
    again with the same request id gets its stored answer, whatever this says."""
    if row.deadline_us is None:
        return None
    stamp = Timestamp()
    stamp.FromMicroseconds(max(row.deadline_us, now_us() + US))
    return stamp


def pod_name() -> str:
    """This process's name as a lease holder: host, process id and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class TournamentDriver:
    """Drives running tournaments under a lease (module docstring)."""

    def __init__(
        self,
        repository: LobbyRepository,
        tables: TableClient,
        scoring: ScoringClient,
        *,
        holder: str | None = None,
        interval: float = 0.5,
    ) -> None:
        self._repository = repository
        self._tables = tables
        self._scoring = scoring
        self.holder = holder or pod_name()
        self._interval = interval
        self._held: set[str] = set()

    async def run(self) -> None:
        _log.info("tournament driver running", holder=self.holder)
        while True:
            try:
                await self.tick()
            except Exception as error:
                _log.warning("tournament driving failed; retrying", error=str(error)[:300])
            await asyncio.sleep(self._interval)

    async def release(self) -> None:
        """Give up every lease (a graceful stop)."""
        with contextlib.suppress(Exception):
            await self._repository.tournaments.release_leases(self.holder)

    async def tick(self) -> None:
        held: set[str] = set()
        for tournament_id in await self._repository.tournaments.running():
            if not await self._repository.tournaments.acquire_lease(tournament_id, self.holder):
                continue
            held.add(tournament_id)
            if tournament_id not in self._held:
                lease = await self._repository.tournaments.lease(tournament_id)
                if lease is not None and lease[2] > 1:
                    TAKEOVERS.inc()
                _log.info(
                    "driving tournament",
                    tournament_id=tournament_id,
                    holder=self.holder,
                    generation=lease[2] if lease else 0,
                )
            try:
                await self.step(tournament_id)
            except LeaseLost:
                held.discard(tournament_id)
                _log.warning("tournament lease lost", tournament_id=tournament_id)
                await self._closed_if_cancelled(tournament_id)
            except (PeerError, OkeyError) as error:
                _log.warning(
                    "tournament step failed; retrying",
                    tournament_id=tournament_id,
                    error=str(error)[:300],
                )
        self._held = held
        TOURNAMENTS_DRIVEN.set(len(held))
        await self._report_rankings()

    async def _report_rankings(self) -> None:
        """Give the scoring service each finished tournament's final ranking, until it has
        recorded it (the flag is committed state: a pod that dies first leaves it to the next
        tick of any pod; recording is idempotent, so two pods doing it at once is harmless)."""
        for tournament_id in await self._repository.tournaments.unreported_rankings():
            places = await self._repository.tournaments.final_ranking(tournament_id)
            try:
                if places:
                    await self._scoring.record_ranking(tournament_id, places)
            except PeerError as error:
                _log.warning(
                    "tournament ranking not reported; retrying",
                    tournament_id=tournament_id,
                    error=str(error)[:300],
                )
                continue
            await self._repository.tournaments.ranking_reported(tournament_id)

    async def _closed_if_cancelled(self, tournament_id: str) -> None:
        """Cancelled while this driver was mid-step (which is how it lost the lease): a table it
        was starting may have been missed by CancelTournament's closing, so close them too."""
        with contextlib.suppress(PeerError, OkeyError):
            if (await self._repository.tournaments.get(tournament_id)).state == CANCELLED:
                await close_tournament_tables(self._tables, tournament_id)

    async def step(self, tournament_id: str) -> None:
        """Everything that can be done for the tournament now (module docstring)."""
        tournament = await self._repository.tournaments.get(tournament_id)
        if tournament.state != RUNNING:
            return
        number = tournament.current_round
        rows = await self._round(tournament_id, number)
        held = tournament.paused or (
            tournament.next_round_us is not None and now_us() < tournament.next_round_us
        )
        if not rows and not held:
            seeding = await self._seeding(tournament) if number == 1 else []
            await self._repository.tournaments.plan_round(
                tournament_id, number, self.holder, seeding
            )
            rows = await self._round(tournament_id, number)
        names = {
            entrant.entry.player_id: entrant.display_name
            for entrant in await self._repository.tournaments.entrants(tournament_id)
        }
        registrations = {
            entrant.entry.player_id: entrant.entry.registration
            for entrant in await self._repository.tournaments.entrants(tournament_id)
        }
        planned = [row for row in rows if row.state == PLANNED]
        if planned and not held:
            await self._start_tables(tournament, planned, names)
        rows = await self._round(tournament_id, number)
        started = [row for row in rows if row.state == STARTED]
        if started:
            await self._forfeit_no_shows(tournament, started)
            ended = await self._ended_tables(tournament_id)
            for row in started:
                state = ended.get(row.table_id or "")
                if state is not None:
                    await self._record(tournament, row, state, registrations)
            rows = await self._round(tournament_id, number)
        if rows and all(row.state == FINISHED for row in rows):
            finished = await self._repository.tournaments.complete_round(
                tournament_id, number, self.holder
            )
            TOURNAMENT_ROUNDS.inc()
            _log.info(
                "tournament round completed",
                tournament_id=tournament_id,
                round=number,
                finished=finished,
            )

    async def _seeding(self, tournament: TournamentRow) -> list[str]:
        """Round 1's order when the pace seeds by rating: the entrants by their OpenSkill
        ordinal, highest first (unrated after, in registration order: ``plan_round``)."""
        if not tournament.seed_by_rating:
            return []
        entrants = await self._repository.tournaments.entrants(tournament.tournament_id)
        limit = asyncio.Semaphore(16)

        async def rated(player_id: str) -> tuple[str, float | None]:
            async with limit:
                return player_id, await self._scoring.ordinal(player_id)

        ratings = await asyncio.gather(*(rated(e.entry.player_id) for e in entrants))
        known = [(ordinal, player) for player, ordinal in ratings if ordinal is not None]
        return [player for _, player in sorted(known, key=lambda pair: (-pair[0], pair[1]))]

    async def _round(self, tournament_id: str, number: int) -> list[RoundTable]:
        return [
            row
            for row in await self._repository.tournaments.round_tables(tournament_id)
            if row.round == number
        ]

    async def _start_tables(
        self, tournament: TournamentRow, rows: list[RoundTable], names: dict[str, str]
    ) -> None:
        """Start the round's planned tables, ``TABLE_STARTS_AT_ONCE`` at a time (one after
        another, 256 tables held a 1,024-player round's last table up by up to 29 s). Each is
        started whatever befalls the others; the first failure is raised once all are done."""
        limit = asyncio.Semaphore(TABLE_STARTS_AT_ONCE)

        async def start(row: RoundTable) -> None:
            async with limit:
                await self._start_table(tournament, row, names)

        outcomes = await asyncio.gather(*(start(row) for row in rows), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    async def _start_table(
        self, tournament: TournamentRow, row: RoundTable, names: dict[str, str]
    ) -> None:
        key = (tournament.tournament_id, row.round, row.table_index)
        seats = [
            table_pb2.SeatSetup(seat=seat, kind=common_pb2.OCCUPANT_KIND_PLAYER, player_id=player)
            if player
            else table_pb2.SeatSetup(
                seat=seat,
                kind=common_pb2.OCCUPANT_KIND_BOT,
                bot_level=tournament.bot_level,  # type: ignore[arg-type]
            )
            for seat, player in enumerate(row.seats)
        ]
        table = await self._tables.create(
            table_pb2.CreateTableRequest(
                request_id=derived_request_id("tournament-create", *key),
                rules=common_pb2.RuleSet.FromString(tournament.rules),
                name=f"{tournament.name}: round {row.round}, table {row.table_index + 1}"[:64],
                visibility=common_pb2.TABLE_VISIBILITY_PUBLIC,
                seats=seats,
                tournament_id=tournament.tournament_id,
                tournament_round=row.round,
                # A no-show holds the table up for one turn, not two (docs/tournaments.md).
                missed_turns_before_away=TOURNAMENT_MISSED_TURNS_BEFORE_AWAY,
                match_deadline=_deadline(row),
            )
        )
        for seat, player in enumerate(row.seats):
            if player:
                await self._tables.sit(
                    table_pb2.SitRequest(
                        request_id=derived_request_id("tournament-sit", *key, seat),
                        table_id=table.table_id,
                        seat=seat,
                        player_id=player,
                        display_name=names.get(player, ""),
                    )
                )
        started = await self._tables.start(
            table_pb2.StartRequest(
                request_id=derived_request_id("tournament-start", *key),
                table_id=table.table_id,
                bot_level=tournament.bot_level,  # type: ignore[arg-type]
            )
        )
        await self._repository.directory.record(table_entry(started, source="tournament"))
        await self._repository.tournaments.table_started(
            row, started.table_id, started.match_id, self.holder
        )

    async def _ended_tables(self, tournament_id: str) -> dict[str, int]:
        """The tournament's tables whose match has ended or that were closed: their states."""
        ended: dict[str, int] = {}
        token = ""
        while True:
            page = await self._tables.list(
                table_pb2.ListTablesRequest(
                    tournament_id=tournament_id,
                    states=[common_pb2.TABLE_STATE_FINISHED, common_pb2.TABLE_STATE_CLOSED],
                    page_size=200,
                    page_token=token,
                )
            )
            for table in page.tables:
                ended[table.table_id] = table.state
            token = page.next_page_token
            if not token:
                return ended

    async def _forfeit_no_shows(self, tournament: TournamentRow, started: list[RoundTable]) -> None:
        """Forfeit, as soon as the lobby has the table's word for it, each player of the round's
        tables in play who missed the start of their match or lost their seat to a bot too
        often (``lobby.no_shows``)."""
        forfeited = {
            entrant.entry.player_id
            for entrant in await self._repository.tournaments.entrants(tournament.tournament_id)
            if entrant.entry.forfeited
        }
        tables = {
            player: row.table_id or ""
            for row in started
            for player in row.seats
            if player and player not in forfeited
        }
        events = await self._repository.tournaments.seat_events(tables, _events_since(tournament))
        missed = [
            player
            for player, seen in events.items()
            if no_shows.forfeited(seen, tournament.no_show_missed_turns, match_over=False)
        ]
        if missed:
            _log.info(
                "tournament players forfeited",
                tournament_id=tournament.tournament_id,
                players=len(missed),
            )
        # The seats first: a step that fails between the two forfeits them again next time.
        for player in missed:
            await forfeit_seat(self._tables, tournament.tournament_id, player, tables[player])
        await self._repository.tournaments.forfeit(tournament.tournament_id, missed, self.holder)

    async def _record(
        self,
        tournament: TournamentRow,
        row: RoundTable,
        state: int,
        registrations: dict[str, int],
    ) -> None:
        players = [(seat, player) for seat, player in enumerate(row.seats) if player]
        events = await self._repository.tournaments.seat_events(
            {player: row.table_id or "" for _, player in players}, _events_since(tournament)
        )
        finished = state == common_pb2.TABLE_STATE_FINISHED
        told = [seen for seen in events.values() if seen]
        if finished and told and not any(no_shows.match_ended(seen) for seen in told):
            return  # the table's outbox has not delivered its players' last events yet
        forfeited = [
            player
            for player, seen in events.items()
            if no_shows.forfeited(seen, tournament.no_show_missed_turns, match_over=finished)
        ]
        lines: list[bracket.MatchLine]
        if state == common_pb2.TABLE_STATE_FINISHED:
            try:
                sheet = await self._scoring.score_sheet(row.match_id or "")
            except PeerError as error:
                if error.reason == "MATCH_NOT_FOUND":
                    return  # the table's outbox has not delivered it yet
                raise
            if not sheet.ended:
                return
            lines = [
                bracket.MatchLine(
                    player_id=player,
                    registration=registrations.get(player, 0),
                    winner=seat in sheet.winner_seats,
                    total=sheet.totals[seat] if seat < len(sheet.totals) else 0,
                    hands_finished=sum(
                        1
                        for hand in sheet.rows
                        if hand.HasField("winner_seat") and hand.winner_seat == seat
                    ),
                    penalty_points=sum(
                        hand.scores[seat].penalty_points
                        for hand in sheet.rows
                        if seat < len(hand.scores)
                    ),
                )
                for seat, player in players
            ]
        else:
            # Closed before its match ended: nobody won; the order falls to registration.
            lines = [
                bracket.MatchLine(player, registrations.get(player, 0), False, 0, 0, 0)
                for _, player in players
            ]
        await self._repository.tournaments.table_finished(row, lines, self.holder, forfeited)


__all__ = ["TournamentDriver", "close_tournament_tables", "forfeit_seat", "pod_name"]
