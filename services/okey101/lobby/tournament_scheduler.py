"""Tournaments' schedules kept, in the background of every lobby pod (``TournamentScheduler``).

Every second: each active recurring series gets the occurrences it lacks ahead; each registering
tournament whose check-in window has opened has its registered players told
(TOURNAMENT_CHECK_IN_OPEN), once; each registering tournament whose scheduled start has come is
started, or cancelled with too few entrants (``stores.tournaments.Tournaments.start_scheduled``).
Every one of these is one transaction with the tournament's (or series') row locked, so pods
doing the same at once do it once, and a pod that dies midway leaves either all of a change or
none of it to the next tick of any pod. A round of the tournament is then the driver's
(``lobby.tournament_driver``).
"""

from __future__ import annotations

import asyncio
from typing import Final

from prometheus_client import Counter

from okey101.lobby.records import now_us
from okey101.lobby.stores import LobbyRepository
from okey101.platform.logs import get_logger

_log = get_logger(service="lobby")

SCHEDULED_STARTS: Final = Counter(
    "okey_lobby_tournament_scheduled_starts_total",
    "Scheduled tournament starts this pod carried out, by outcome (running, cancelled).",
    ["outcome"],
)
OCCURRENCES: Final = Counter(
    "okey_lobby_tournament_occurrences_created_total",
    "Occurrences of recurring tournaments this pod created.",
)


class TournamentScheduler:
    """Keeps tournaments' schedules (module docstring)."""

    def __init__(
        self, repository: LobbyRepository, *, minimum_players: int, interval: float = 1.0
    ) -> None:
        self._repository = repository
        self._minimum_players = minimum_players
        self._interval = interval

    async def run(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception as error:
                _log.warning("tournament scheduling failed; retrying", error=str(error)[:300])
            await asyncio.sleep(self._interval)

    async def tick(self) -> None:
        schedules = self._repository.tournament_schedules
        now = now_us()
        for series_id in await schedules.series_to_extend():
            created = await schedules.extend_series(series_id, now)
            if created:
                OCCURRENCES.inc(len(created))
                _log.info(
                    "tournament occurrences created", series_id=series_id, created=len(created)
                )
        for tournament_id in await schedules.due_check_in_notices(now):
            told = await schedules.tell_check_in_open(tournament_id)
            _log.info("tournament check-in open", tournament_id=tournament_id, told=told)
        for tournament_id in await schedules.due_starts(now):
            state = await self._repository.tournaments.start_scheduled(
                tournament_id, self._minimum_players
            )
            if state is not None:
                SCHEDULED_STARTS.labels(outcome=state).inc()
                _log.info("scheduled tournament start", tournament_id=tournament_id, state=state)


__all__ = ["TournamentScheduler"]
