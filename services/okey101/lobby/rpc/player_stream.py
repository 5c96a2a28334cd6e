"""LobbyService's player stream: WatchPlayer, each player's own events (the events are
``lobby.stores.player_events``; docs/lobby.md, A player's own stream).

A stream takes the event it will wait on before it reads (``PlayerWakes.next_wake``), so a wake
between the read and the wait is not missed; it also reads again every ``SAFETY_POLL_SECONDS``
on its own, so a notification lost with a dropped listening connection costs a delay, never an
event. Events go out in sequence order, each once per stream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final

from okey.v1 import lobby_pb2

from okey101.engine.errors import OkeyError
from okey101.lobby.errors import Invalid, NotReady
from okey101.lobby.messages import ticket_message
from okey101.lobby.rpc.base import LobbyCalls, abort_call, log
from okey101.lobby.stores.player_events import KEPT_US
from okey101.platform.errors import request_language
from okey101.platform.handlers import Context
from okey101.platform.waiting import wait_set

#: How often an idle stream reads its player's events on its own (module docstring).
SAFETY_POLL_SECONDS: Final = 15.0
#: Events read at a time.
PAGE: Final = 100


class PlayerStreamCalls(LobbyCalls):
    """WatchPlayer (module docstring)."""

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
                found = await events.after(player_id, after, limit=PAGE)
                for event in found:
                    yield lobby_pb2.WatchPlayerResponse(event=event)
                    after = event.sequence
                if not found:
                    await wait_set(wake, SAFETY_POLL_SECONDS)
        finally:
            wakes.done(player_id)

    async def _snapshot(self, player_id: str) -> lobby_pb2.PlayerSnapshot:
        """Where ``player_id`` is now (``PlayerSnapshot``): the last event is read first, so
        whatever changes after the snapshot's reads comes as an event after it."""
        _oldest, last = await self.repository.player_events.bounds(player_id)
        snapshot = lobby_pb2.PlayerSnapshot(as_of_sequence=last)
        waiting = await self.repository.queue.waiting_ticket(player_id)
        if waiting is not None:
            snapshot.waiting_ticket.CopyFrom(ticket_message(waiting))
        snapshot.tournament_ids.extend(await self.repository.tournaments.registered(player_id))
        return snapshot


__all__ = ["PlayerStreamCalls"]
