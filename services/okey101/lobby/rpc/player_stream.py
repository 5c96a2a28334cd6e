"""LobbyService's player stream: WatchPlayer, each player's own events, and RecordPlayerEvents,
the events other services send it (the events are ``lobby.stores.player_events``; docs/lobby.md,
A player's own stream).

A stream takes the event it will wait on before it reads (``PlayerWakes.next_wake``), so a wake
between the read and the wait is not missed (and a read that found less than a page found
everything: the stream waits at once, one read a wake); it also reads again every
``SAFETY_POLL_SECONDS`` on its own, so a notification lost with a dropped listening connection
costs a delay, never an event. Events go out in sequence order, each once per stream. While a
stream is open the player counts as present on every pod (``push.presence``): their events' push
notifications are not sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Final

from okey.v1 import lobby_pb2
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.engine.errors import OkeyError
from okey101.lobby.errors import Invalid, NotReady
from okey101.lobby.messages import ticket_message
from okey101.lobby.rpc.base import LobbyCalls, abort_call, log
from okey101.lobby.stores import answers
from okey101.lobby.stores.player_events import KEPT_US
from okey101.platform import timestamps
from okey101.platform.auth import require_claims
from okey101.platform.errors import request_language
from okey101.platform.handlers import Context
from okey101.platform.ids import check_id, check_request_id, shown_value
from okey101.platform.waiting import wait_set

#: How often an idle stream reads its player's events on its own (module docstring).
SAFETY_POLL_SECONDS: Final = 15.0
#: Events read at a time.
PAGE: Final = 100
#: The kinds another service may record (the table's), and how many records one call takes.
RECORDED_KINDS: Final = frozenset(
    {
        lobby_pb2.PLAYER_EVENT_KIND_TURN_STARTED,
        lobby_pb2.PLAYER_EVENT_KIND_SEAT_AWAY,
        lobby_pb2.PLAYER_EVENT_KIND_SEAT_BACK,
        lobby_pb2.PLAYER_EVENT_KIND_MATCH_ENDED,
    }
)
RECORDS_MAX: Final = 100
CAUSE_MAX: Final = 255


class PlayerStreamCalls(LobbyCalls):
    """WatchPlayer and RecordPlayerEvents (module docstring)."""

    async def WatchPlayer(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.WatchPlayerRequest, context: Context
    ) -> AsyncIterator[lobby_pb2.WatchPlayerResponse]:
        language = request_language(request, context.invocation_metadata())
        try:
            with self.database.serving(NotReady, log=log):
                player = await self._caller()
                async for item in self._watch(player.player_id, request):
                    yield item
        except OkeyError as error:
            await abort_call(context, error, language)

    async def _watch(
        self, player_id: str, request: lobby_pb2.WatchPlayerRequest
    ) -> AsyncIterator[lobby_pb2.WatchPlayerResponse]:
        events = self.repository.player_events
        wakes = events.wakes
        presence = self.repository.presence
        stream_id = await presence.open(player_id)
        wakes.open(player_id)
        try:
            after = request.after_sequence
            if request.start_with_snapshot:
                snapshot = await self._snapshot(player_id)
                after = snapshot.as_of_sequence
                yield lobby_pb2.WatchPlayerResponse(snapshot=snapshot)
            else:
                oldest, last = await events.bounds(player_id)
                if after > last:
                    raise Invalid("PLAYER_SEQUENCE_AHEAD", after_sequence=after, last_sequence=last)
                if last > after and (oldest == 0 or oldest > after + 1):
                    raise Invalid(
                        "PLAYER_EVENTS_EXPIRED",
                        after_sequence=after,
                        oldest_sequence=oldest or last + 1,
                        kept_hours=KEPT_US // 3_600_000_000,
                    )
            while True:
                wake = wakes.next_wake(player_id)
                found = wakes.recent(player_id, after)
                if found is None:
                    found = await events.after(player_id, after, limit=PAGE)
                for event in found:
                    yield lobby_pb2.WatchPlayerResponse(event=event)
                    after = event.sequence
                # Less than a page: the read found every event committed before it, and one
                # committed since has set ``wake`` (taken before the read), so the stream waits
                # without reading again to find nothing.
                if len(found) < PAGE:
                    await wait_set(wake, SAFETY_POLL_SECONDS)
        finally:
            wakes.done(player_id)
            presence.close(stream_id)

    async def RecordPlayerEvents(  # noqa: N802 (the generated servicer's names)
        self, request: lobby_pb2.RecordPlayerEventsRequest, context: Context
    ) -> lobby_pb2.RecordPlayerEventsResponse:
        async def work() -> lobby_pb2.RecordPlayerEventsResponse:
            check_request_id(request.request_id)
            if len(request.records) > RECORDS_MAX:
                raise Invalid("BAD_FIELD", field="records", value=f"{len(request.records)} records")
            for index, record in enumerate(request.records):
                where = f"records[{index}]"
                if not 0 < len(record.key) <= CAUSE_MAX or not record.key.isprintable():
                    raise Invalid("BAD_FIELD", field=f"{where}.key", value=shown_value(record.key))
                check_id(record.player_id, f"{where}.player_id")
                if record.event.kind not in RECORDED_KINDS:
                    raise Invalid(
                        "BAD_FIELD", field=f"{where}.event.kind", value=str(record.event.kind)
                    )
                for name in ("time", "deadline", "start_time"):
                    stamp = getattr(record.event, name)
                    if record.event.HasField(name) and not timestamps.holds(stamp):
                        raise Invalid(
                            "BAD_FIELD",
                            field=f"{where}.event.{name}",
                            value=f"{stamp.seconds}s {stamp.nanos}ns",
                        )
            events = self.repository.player_events

            async def record_all(
                session: AsyncConnection,
            ) -> list[tuple[str, lobby_pb2.PlayerEvent]]:
                told = []
                for record in request.records:
                    event = lobby_pb2.PlayerEvent()
                    event.CopyFrom(record.event)
                    event.ClearField("sequence")
                    told.append((record.player_id, event, record.key))
                await events.append_many(session, told)
                # Numbered: those not recorded before (a repeat keeps no sequence).
                return [(player, event) for player, event, _key in told if event.sequence]

            async def recorded() -> lobby_pb2.RecordPlayerEventsResponse:
                events.wakes.committed(await self.database.transaction(record_all))
                return lobby_pb2.RecordPlayerEventsResponse()

            # Idempotent on the records' keys; the request id is bound to its request all the
            # same (another request under it is REQUEST_ID_REUSED).
            caller = f"service:{require_claims().subject}"
            call = answers.once(
                "RecordPlayerEvents", caller, request, lobby_pb2.RecordPlayerEventsResponse
            )
            return await answers.kept_after(self.database, call, recorded)

        return await self._answer(request, context, work)

    async def _snapshot(self, player_id: str) -> lobby_pb2.PlayerSnapshot:
        """Where ``player_id`` is now (``PlayerSnapshot``): the last event is read first, so
        whatever changes after the snapshot's reads comes as an event after it."""
        _oldest, last = await self.repository.player_events.bounds(player_id)
        snapshot = lobby_pb2.PlayerSnapshot(as_of_sequence=last)
        waiting = await self.repository.queue.waiting_ticket(player_id)
        if waiting is not None:
            snapshot.waiting_ticket.CopyFrom(ticket_message(waiting))
        tournament_ids = await self.repository.tournaments.registered(player_id)
        snapshot.tournament_ids.extend(tournament_ids)
        told = await self.repository.player_events.of_kinds(player_id, SEAT_KINDS, up_to=last)
        snapshot.seats.extend(seats_held(told, frozenset(tournament_ids)))
        return snapshot


#: The events that say where a player sits (``seats_held``).
SEAT_KINDS: Final = frozenset(
    {
        lobby_pb2.PLAYER_EVENT_KIND_QUICK_MATCH_SEATED,
        lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_SEATED,
        *RECORDED_KINDS,
    }
)


def seats_held(
    events: Iterable[lobby_pb2.PlayerEvent], tournament_ids: frozenset[str]
) -> list[lobby_pb2.PlayerSeat]:
    """The seats a player holds at tables whose match has not ended, from their ``events``
    (``SEAT_KINDS``, in sequence order) and the tournaments they are in that have not finished
    (``PlayerSnapshot.seats``). A table's events may reach the lobby out of the table's order
    (its outbox retries each on its own), so a seat's away state is its latest SEAT_AWAY or
    SEAT_BACK by the table's time, and a MATCH_ENDED ends the table whenever it came."""
    seats: dict[str, lobby_pb2.PlayerSeat] = {}
    latest: dict[str, tuple[int, int]] = {}  # table: (time, sequence) of its latest away/back
    ended: set[str] = set()
    for event in events:
        if not event.table_id:
            continue
        seat = seats.setdefault(
            event.table_id, lobby_pb2.PlayerSeat(table_id=event.table_id, seat=event.seat)
        )
        if event.kind == lobby_pb2.PLAYER_EVENT_KIND_MATCH_ENDED:
            ended.add(event.table_id)
        elif event.kind == lobby_pb2.PLAYER_EVENT_KIND_TOURNAMENT_SEATED:
            seat.tournament_id, seat.round = event.tournament_id, event.round
        elif event.kind in (
            lobby_pb2.PLAYER_EVENT_KIND_SEAT_AWAY,
            lobby_pb2.PLAYER_EVENT_KIND_SEAT_BACK,
        ):
            when = (event.time.ToMicroseconds(), event.sequence)
            if when >= latest.get(event.table_id, (0, 0)):
                latest[event.table_id] = when
                seat.away = event.kind == lobby_pb2.PLAYER_EVENT_KIND_SEAT_AWAY
    return [
        seat
        for table_id, seat in seats.items()
        if table_id not in ended
        and (not seat.tournament_id or seat.tournament_id in tournament_ids)
    ]


__all__ = ["SEAT_KINDS", "PlayerStreamCalls", "seats_held"]
