"""What every lobby pod does in the background: quick-match matching, tournament driving, and
finishing HostTable calls left half-done.

**Matchmaker.** About four times a second (and at once after a JoinQuickMatch), for each preset
with a group ready (four waiting tickets, or an oldest ticket past its bots-fill time) it opens
one transaction, claims the oldest waiting tickets with ``FOR UPDATE SKIP LOCKED`` (tickets another
pod has claimed are skipped, so any number of pods share the queue), creates the table through
TableService (players at seats 0.., bots in the rest), seats the players, starts the match, and
marks the tickets matched, all before committing. If anything fails the transaction rolls back
and the tickets wait on. A table the failed attempt had made already (created, some players
seated) is never left half-made:

- the table service gave no verdict (away, timed out): the table is kept for the same group's
  next attempt, which sends the same derived request ids (``peers``) and is handed back the
  table and seats already made (by this pod or another: one that claims the group sends the same
  ids, and a table it finishes is the group's, never closed); once the group is another (a
  ticket left or was matched elsewhere, or a newer ticket joined a group short of four) the
  table is closed;
- the table service refused a step (a verdict: trying again would be refused again): the table is
  closed at once.

A close the table service does not take is tried again on every tick. After a close, the group's
next attempt derives new request ids (its attempt number is part of them), so it makes a new
table rather than being handed back the closed one. A pod that dies mid-attempt closes nothing;
the pod that tries the same group next sends attempt 0's request ids and finishes the table the
dead pod began. A LeaveQuickMatch racing a match waits for the claim's transaction and then finds
its ticket matched.

**Tournament driver.** Every half second, for each running tournament, the pod takes or renews its
lease (``lobby_tournament_leases``: holder and expiry, ``--tournament-lease-seconds``); only the
holder drives it, and each of its writes is fenced by the lease in the same transaction. A step:
plan the round's tables if not yet planned; create, seat and start each planned table (derived
request ids, so a new holder repeating the work gets the same tables); note each table whose match
has ended and whose result the scoring service has (the score sheet is the result); once every
table of the round is in, advance the best or finish with the winner (``tournaments``). A pod that
dies stops renewing; once its lease expires another pod's next tick takes the tournament over and
carries on from what the database says. A pod that stops gracefully gives its leases up at once.

**Hosting finisher.** HostTable makes two table service calls (create the table, seat the host;
``host_table_calls``) after committing them as a ``lobby_hostings`` row, which it deletes with
its stored answer. A row left behind (the table service went away between or during the calls,
the pod died, the caller stopped retrying) is finished by any pod: every two seconds, rows older
than a few seconds are made again with the same derived request ids, so the table ends as the
call would have left it (a full ``start_when_full`` table then starts), and a retry of the call
gets that same table. A refusal from the table service ends the row: nothing more is owed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid
from collections.abc import Sequence
from typing import Final

from okey.v1 import common_pb2, table_pb2
from prometheus_client import Counter, Gauge, Histogram

from okey101.engine.errors import OkeyError
from okey101.lobby import bracket
from okey101.lobby.convert import PRESETS, table_entry
from okey101.lobby.peers import ScoringClient, TableClient, derived_request_id
from okey101.lobby.records import (
    CANCELLED,
    FINISHED,
    PLANNED,
    RUNNING,
    STARTED,
    US,
    WAITING,
    LeaseLost,
    RoundTable,
    Ticket,
    TournamentRow,
    now_us,
)
from okey101.lobby.repository import LobbyRepository
from okey101.platform.logs import get_logger
from okey101.platform.peers import PeerError
from okey101.platform.waiting import wait_set

_log = get_logger(service="lobby")

QUICK_MATCHES: Final = Counter(
    "okey_lobby_quick_matches_total",
    "Quick-match tables started, by preset and whether bots filled seats.",
    ("preset", "bots"),
)
QUICK_MATCH_WAIT: Final = Histogram(
    "okey_lobby_quick_match_wait_seconds",
    "How long matched quick-match tickets waited in the queue.",
    buckets=(0.5, 1, 2, 5, 10, 20, 30, 45, 60, 120, 300),
)
HALF_MADE: Final = Counter(
    "okey_lobby_quick_match_attempts_failed_total",
    "Quick-match attempts that failed after making their table (the table is closed).",
)
TOURNAMENT_ROUNDS: Final = Counter(
    "okey_lobby_tournament_rounds_completed_total", "Tournament rounds completed (this pod)."
)
TOURNAMENTS_DRIVEN: Final = Gauge(
    "okey_lobby_tournaments_driven", "Running tournaments whose lease this pod holds."
)
TAKEOVERS: Final = Counter(
    "okey_lobby_tournament_lease_takeovers_total",
    "Tournaments this pod took over from another pod whose lease had expired.",
)


async def close_table(tables: TableClient, table_id: str, reason: str) -> bool:
    """Close ``table_id`` for the lobby: True once it is closed (or over, or unknown to the
    table service: nothing is left to close), False if the table service cannot be reached."""
    try:
        await tables.close(table_id, derived_request_id("lobby-close", table_id), reason)
    except PeerError as error:
        if error.reason not in ("TABLE_CLOSED", "TABLE_FINISHED", "TABLE_NOT_FOUND"):
            _log.warning("closing a table refused", table_id=table_id, reason=error.reason)
    except OkeyError as error:
        _log.info("closing a table: not now", table_id=table_id, code=error.code)
        return False
    return True


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


def pod_name() -> str:
    """This process's name as a lease holder: host, process id and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


async def host_table_calls(
    repository: LobbyRepository,
    tables: TableClient,
    create: table_pb2.CreateTableRequest,
    sit: table_pb2.SitRequest,
) -> tuple[common_pb2.Table, table_pb2.SitResponse]:
    """A HostTable's table service calls: create the table, record it, seat the host. Each
    call's request id is derived from the HostTable's, so making them again (a retry, the
    finisher) repeats nothing. A refusal ends the hosting (nothing more is owed) and is raised."""
    try:
        created = await tables.create(create)
        await repository.directory.record(
            table_entry(created, source="hosted", host_player_id=create.host_player_id)
        )
        seat = table_pb2.SitRequest()
        seat.CopyFrom(sit)
        seat.table_id = created.table_id
        sat = await tables.sit(seat)
    except PeerError:
        await repository.hostings.end(create.request_id)
        raise
    return created, sat


class HostingFinisher:
    """Finishes HostTable calls left half-done (module docstring)."""

    def __init__(
        self,
        repository: LobbyRepository,
        tables: TableClient,
        *,
        interval: float = 2.0,
        after_seconds: float = 5.0,
    ) -> None:
        self._repository = repository
        self._tables = tables
        self._interval = interval
        self._after_us = int(after_seconds * US)

    async def run(self) -> None:
        while True:
            try:
                await self.finish_all()
            except Exception as error:
                _log.warning("finishing hostings failed; retrying", error=str(error)[:300])
            await asyncio.sleep(self._interval)

    async def finish_all(self) -> int:
        """Finish what can be finished now; how many were."""
        finished = 0
        for hosting in await self._repository.hostings.unfinished(now_us() - self._after_us, 20):
            create = table_pb2.CreateTableRequest.FromString(hosting.create_request)
            sit = table_pb2.SitRequest.FromString(hosting.sit_request)
            try:
                created, _sat = await host_table_calls(self._repository, self._tables, create, sit)
            except OkeyError as error:
                _log.info("hosting not finished yet", code=error.code)
                break  # the table service is away: the rest would wait on it too
            except PeerError as error:
                _log.warning("hosting refused by the table service", reason=error.reason)
                continue
            await self._repository.hostings.end(create.request_id)
            finished += 1
            _log.info("hosting finished", table_id=created.table_id)
        return finished


class Matchmaker:
    """Quick-match matching (module docstring)."""

    def __init__(
        self,
        repository: LobbyRepository,
        tables: TableClient,
        *,
        interval: float = 0.25,
        bot_level: int = common_pb2.BOT_LEVEL_UNSPECIFIED,
    ) -> None:
        self._repository = repository
        self._tables = tables
        self._interval = interval
        self._bot_level = bot_level
        self._wake = asyncio.Event()
        #: Failed attempts by group (its sorted ticket ids): the next attempt's number.
        self._attempts: dict[tuple[str, ...], int] = {}
        #: Tables of attempts the table service gave no verdict on, by group: kept for the
        #: group's next attempt, closed once the group is another.
        self.pending: dict[tuple[str, ...], str] = {}
        #: Tables failed attempts made that the table service has not closed yet.
        self.unclosed: set[str] = set()

    def wake(self) -> None:
        self._wake.set()

    async def run(self) -> None:
        while True:
            try:
                await self.match_all()
            except Exception as error:
                _log.warning("quick match failed; retrying", error=str(error)[:300])
            await wait_set(self._wake, self._interval)
            self._wake.clear()

    async def match_all(self) -> int:
        """Start every table whose group is ready; how many were started."""
        for table_id in sorted(self.unclosed):
            if await close_table(self._tables, table_id, "quick match: the attempt failed"):
                self.unclosed.discard(table_id)
        if self.pending:
            tickets = {ticket for key in self.pending for ticket in key}
            states = await self._repository.queue.states_of(sorted(tickets))
            for key, table_id in list(self.pending.items()):
                held = [states.get(ticket, (CANCELLED, None)) for ticket in key]
                if any(table == table_id for _state, table in held):
                    # Another pod repeated the attempt (the same request ids) and finished it.
                    del self.pending[key]
                elif any(state != WAITING for state, _table in held):
                    await self._abandon(key, table_id)  # its group is another now
        started = 0
        for preset in await self._repository.queue.ready_presets():
            while await self.match_one(preset):
                started += 1
        return started

    async def match_one(self, preset: str) -> bool:
        """One table from ``preset``'s queue if a group is ready (module docstring)."""
        async with self._repository.database.write() as session:
            group = await self._repository.queue.claim_group(session, preset)
            if not group:
                return False
            if len(group) < bracket.SEATS and group[0].bots_fill_us > now_us():
                return False
            key = tuple(sorted(ticket.ticket_id for ticket in group))
            for other in [other for other in self.pending if other != key]:
                if set(other) & set(key):  # its group is another now
                    await self._abandon(other, self.pending[other])
            made: list[str] = []
            try:
                table = await self._start(preset, group, self._attempts.get(key, 0), made)
            except PeerError:
                if made:
                    await self._abandon(key, made[0])
                raise
            except Exception:
                if made:
                    self.pending[key] = made[0]
                raise
            self.pending.pop(key, None)
            self._attempts.pop(key, None)
            seated = [(ticket, seat) for seat, ticket in enumerate(group)]
            await self._repository.queue.mark_matched(session, seated, table.table_id)
            await self._repository.directory.record(
                table_entry(table, source="quick_match"), session=session
            )
        bots = "yes" if len(group) < bracket.SEATS else "no"
        QUICK_MATCHES.labels(preset, bots).inc()
        now = now_us()
        for ticket in group:
            QUICK_MATCH_WAIT.observe((now - ticket.enqueue_us) / US)
        _log.info("quick match started", table_id=table.table_id, players=len(group))
        return True

    async def _abandon(self, key: tuple[str, ...], table_id: str) -> None:
        """A failed attempt of ``key``'s group made ``table_id``: close it (or note it, to close
        on later ticks), and number the group's next attempt so that it makes a new table."""
        self.pending.pop(key, None)
        if len(self._attempts) > 10_000:
            self._attempts.clear()  # groups long gone; a repeat makes a new table anyway
        self._attempts[key] = self._attempts.get(key, 0) + 1
        if not await close_table(self._tables, table_id, "quick match: the attempt failed"):
            self.unclosed.add(table_id)
        HALF_MADE.inc()
        _log.warning("quick match attempt failed; its table is closed", table_id=table_id)

    async def _start(
        self, preset: str, group: Sequence[Ticket], attempt: int, made: list[str]
    ) -> common_pb2.Table:
        """Create, seat and start the group's table (its id appended to ``made`` once it is
        created). Attempt 0's request ids are the tickets'; a later attempt's add its number."""
        key: list[object] = [*sorted(ticket.ticket_id for ticket in group)]
        if attempt:
            key.append(f"attempt-{attempt}")
        seats = [
            table_pb2.SeatSetup(
                seat=seat, kind=common_pb2.OCCUPANT_KIND_PLAYER, player_id=ticket.player_id
            )
            for seat, ticket in enumerate(group)
        ]
        seats += [
            table_pb2.SeatSetup(
                seat=seat,
                kind=common_pb2.OCCUPANT_KIND_BOT,
                bot_level=self._bot_level,  # type: ignore[arg-type]
            )
            for seat in range(len(group), bracket.SEATS)
        ]
        table = await self._tables.create(
            table_pb2.CreateTableRequest(
                request_id=derived_request_id("quick-match-create", *key),
                rules=common_pb2.RuleSet(preset=PRESETS[preset]),
                name="Quick match",
                visibility=common_pb2.TABLE_VISIBILITY_PUBLIC,
                seats=seats,
            )
        )
        made.append(table.table_id)
        for seat, ticket in enumerate(group):
            await self._tables.sit(
                table_pb2.SitRequest(
                    request_id=derived_request_id("quick-match-sit", *key, seat),
                    table_id=table.table_id,
                    seat=seat,
                    player_id=ticket.player_id,
                    display_name=ticket.display_name,
                )
            )
        return await self._tables.start(
            table_pb2.StartRequest(
                request_id=derived_request_id("quick-match-start", *key),
                table_id=table.table_id,
                fill_with_bots=True,
                bot_level=self._bot_level,  # type: ignore[arg-type]
            )
        )


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
        if not rows:
            await self._repository.tournaments.plan_round(tournament_id, number, self.holder)
            rows = await self._round(tournament_id, number)
        names = {
            entrant.entry.player_id: entrant.display_name
            for entrant in await self._repository.tournaments.entrants(tournament_id)
        }
        registrations = {
            entrant.entry.player_id: entrant.entry.registration
            for entrant in await self._repository.tournaments.entrants(tournament_id)
        }
        for row in rows:
            if row.state == PLANNED:
                await self._start_table(tournament, row, names)
        rows = await self._round(tournament_id, number)
        started = [row for row in rows if row.state == STARTED]
        if started:
            ended = await self._ended_tables(tournament_id)
            for row in started:
                state = ended.get(row.table_id or "")
                if state is not None:
                    await self._record(row, state, registrations)
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

    async def _round(self, tournament_id: str, number: int) -> list[RoundTable]:
        return [
            row
            for row in await self._repository.tournaments.round_tables(tournament_id)
            if row.round == number
        ]

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

    async def _record(self, row: RoundTable, state: int, registrations: dict[str, int]) -> None:
        players = [(seat, player) for seat, player in enumerate(row.seats) if player]
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
        await self._repository.tournaments.table_finished(row, lines, self.holder)


__all__ = [
    "HostingFinisher",
    "Matchmaker",
    "TournamentDriver",
    "close_table",
    "close_tournament_tables",
    "host_table_calls",
    "pod_name",
]
