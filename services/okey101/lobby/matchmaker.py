"""Quick-match matching, in the background of every lobby pod (``Matchmaker``).

About four times a second (and at once after a JoinQuickMatch), for each queue (a preset and a
stake) with a group ready
(four waiting tickets, or an oldest ticket past its bots-fill time) it opens one transaction,
claims the oldest waiting tickets with ``FOR UPDATE SKIP LOCKED`` (tickets another pod has claimed
are skipped, so any number of pods share the queue), creates the table through TableService
(players at seats 0.., bots in the rest), seats the players, starts the match, marks the tickets
matched and tells each player (``QUICK_MATCH_SEATED``, their own stream's event), all before
committing. At a staked table each player's stake moves into the table's pot in that same
transaction, before they are seated (``SitRequest.stake_hold_key``); a player whose balance no
longer covers the stake has their ticket cancelled and the others wait on. If anything fails the
transaction rolls back (holding nothing) and the tickets wait on. A table the
failed attempt had made already (created, some players seated) is never left half-made:

- the table service gave no verdict (away, timed out): the table is kept for the same group's
  next attempt, which sends the same derived request ids (``peer_clients``) and is handed back the
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
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Final

from okey.v1 import common_pb2, lobby_pb2, table_pb2
from prometheus_client import Counter, Histogram
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby import bracket
from okey101.lobby.chips import stakes
from okey101.lobby.chips.settings import ChipSettings
from okey101.lobby.messages import PRESETS, table_entry
from okey101.lobby.peer_clients import TableClient, close_table, derived_request_id
from okey101.lobby.records import CANCELLED, US, WAITING, Ticket, now_us
from okey101.lobby.staked_seats import chips_to_stake, hold_key_of
from okey101.lobby.stores import LobbyRepository
from okey101.platform.logs import get_logger
from okey101.platform.peer_calls import PeerError
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


class Matchmaker:
    """Quick-match matching (module docstring)."""

    def __init__(
        self,
        repository: LobbyRepository,
        tables: TableClient,
        *,
        interval: float = 0.25,
        bot_level: int = common_pb2.BOT_LEVEL_UNSPECIFIED,
        chips: ChipSettings | None = None,
    ) -> None:
        self._repository = repository
        self._chips = chips or ChipSettings()
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
        for preset, stake in await self._repository.queue.ready_queues():
            while await self.match_one(preset, stake):
                started += 1
        return started

    async def match_one(self, preset: str, stake: int = 0) -> bool:
        """One table from the queue of ``preset`` and ``stake`` if a group is ready (module
        docstring)."""
        async with self._repository.database.write() as session:
            group = await self._repository.queue.claim_group(session, preset, stake)
            if not group:
                return False
            if len(group) < bracket.SEATS and group[0].bots_fill_us > now_us():
                return False
            if stake:
                short = [
                    ticket.ticket_id
                    for ticket in group
                    if await chips_to_stake(session, self._chips, ticket.player_id, now_us())
                    < stake
                ]
                if short:
                    # Their balance went elsewhere since they joined: the rest wait on.
                    await self._repository.queue.cancel(session, short)
                    _log.info("quick match tickets cancelled: stake not covered", count=len(short))
                    return True
            key = tuple(sorted(ticket.ticket_id for ticket in group))
            for other in [other for other in self.pending if other != key]:
                if set(other) & set(key):  # its group is another now
                    await self._abandon(other, self.pending[other])
            made: list[str] = []
            try:
                table = await self._start(
                    session, preset, stake, group, self._attempts.get(key, 0), made
                )
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
            events = self._repository.player_events
            # In player order, as every writer of players' events takes their cursor rows.
            for ticket, seat in sorted(seated, key=lambda placed: placed[0].player_id):
                await events.append(
                    session,
                    ticket.player_id,
                    lobby_pb2.PlayerEvent(
                        kind=lobby_pb2.PLAYER_EVENT_KIND_QUICK_MATCH_SEATED,
                        table_id=table.table_id,
                        seat=seat,
                        ticket_id=ticket.ticket_id,
                    ),
                )
        self._repository.player_events.wakes.wake(ticket.player_id for ticket in group)
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
        self,
        session: AsyncConnection,
        preset: str,
        stake: int,
        group: Sequence[Ticket],
        attempt: int,
        made: list[str],
    ) -> common_pb2.Table:
        """Create, seat and start the group's table (its id appended to ``made`` once it is
        created). Attempt 0's request ids are the tickets'; a later attempt's add its number.
        At a staked table each player's stake is held (in ``session``, the transaction that
        claims the group: a failed attempt holds nothing) before they are seated."""
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
                stake=stake,
                fee_percent=self._chips.fee_percent if stake else 0,
            )
        )
        made.append(table.table_id)
        for seat, ticket in enumerate(group):
            sit = table_pb2.SitRequest(
                request_id=derived_request_id("quick-match-sit", *key, seat),
                table_id=table.table_id,
                seat=seat,
                player_id=ticket.player_id,
                display_name=ticket.display_name,
            )
            if stake:
                sit.stake_hold_key = hold_key_of(sit.request_id)
                await stakes.hold_stake(
                    session,
                    key=sit.stake_hold_key,
                    player_id=ticket.player_id,
                    table_id=table.table_id,
                    stake=stake,
                    fee_percent=self._chips.fee_percent,
                    now_us=now_us(),
                    starting_grant=self._chips.starting_grant,
                )
            await self._tables.sit(sit)
        return await self._tables.start(
            table_pb2.StartRequest(
                request_id=derived_request_id("quick-match-start", *key),
                table_id=table.table_id,
                fill_with_bots=True,
                bot_level=self._bot_level,  # type: ignore[arg-type]
            )
        )


__all__ = ["Matchmaker"]
