"""A scheduled tournament through the edge, as a browser calls it (Connect JSON over HTTP/1.1),
with the lobby and the edge as ``okey101 serve`` processes: a service creates a weekly series
and a scheduled cup with check-in; a guest finds them listed as upcoming and registering,
registers, is refused check-in before its window with the reason in Turkish, and a bad start
time is refused with nothing written; the organiser's pause and disqualification calls are
routed and answer their own refusals."""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path

import pytest

from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.stack import FAST, local_stack, start_edge

from support.http_calls import error_reason, lobby_json

pytestmark = pytest.mark.slow


def _in(hours: float) -> str:
    moment = dt.datetime.now(dt.UTC) + dt.timedelta(hours=hours)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def test_scheduled_tournaments_through_the_edge(tmp_path: Path) -> None:
    with local_stack(tmp_path / "stack", env=FAST, services=("lobby",)) as stack:
        port = start_edge(stack).port
        # The edge routes a service's token for CreateTournament as it routes an organiser's.
        service = TokenIssuer(dev_signing_key(stack.var_dir)).issue("service:ops", "service")
        status, login = lobby_json(
            port,
            "LoginGuest",
            {"requestId": uuid.uuid4().hex, "deviceId": f"edge-{uuid.uuid4()}",
             "displayName": "Deniz"},
        )  # fmt: skip
        assert status == 200, login
        token = login["tokens"]["accessToken"]

        status, cup = lobby_json(
            port,
            "CreateTournament",
            {"requestId": "cup", "name": "Friday cup", "maxPlayers": 8, "startTime": _in(3),
             "checkInMinutes": 20, "maxSubstitutes": 2},
            service,
        )  # fmt: skip
        assert status == 200, cup
        cup_id = cup["tournament"]["tournamentId"]
        assert cup["tournament"]["state"] == "TOURNAMENT_STATE_REGISTERING"
        assert cup["tournament"]["checkInMinutes"] == 20
        status, series = lobby_json(
            port,
            "CreateTournament",
            {"requestId": "series", "name": "Weekly", "maxPlayers": 8,
             "recurrence": {"frequency": "RECURRENCE_FREQUENCY_WEEKLY", "weekdays": [5],
                            "localTime": "21:00", "timeZone": "Europe/Istanbul",
                            "registrationHours": 24, "occurrencesAhead": 2}},
            service,
        )  # fmt: skip
        assert status == 200, series
        series_id = series["tournament"]["seriesId"]

        status, upcoming = lobby_json(
            port,
            "ListTournaments",
            {"seriesId": series_id, "states": ["TOURNAMENT_STATE_UPCOMING"]},
            token,
        )
        assert status == 200, upcoming
        assert len(upcoming["tournaments"]) == 2
        status, registering = lobby_json(
            port, "ListTournaments", {"states": ["TOURNAMENT_STATE_REGISTERING"]}, token
        )
        assert [t["tournamentId"] for t in registering["tournaments"]] == [cup_id]

        status, registered = lobby_json(
            port, "RegisterForTournament", {"requestId": "r", "tournamentId": cup_id}, token
        )
        assert status == 200, registered
        status, early = lobby_json(
            port,
            "CheckInToTournament",
            {"requestId": "c", "tournamentId": cup_id, "locale": "tr"},
            token,
        )
        assert (status, error_reason(early)) == (400, "CHECK_IN_NOT_OPEN")
        assert "katılım onayı" in early["message"]

        status, past = lobby_json(
            port,
            "CreateTournament",
            {"requestId": "past", "name": "Yesterday", "maxPlayers": 8, "startTime": _in(-24)},
            service,
        )
        assert (status, error_reason(past)) == (400, "BAD_START_TIME")
        status, listed = lobby_json(port, "ListTournaments", {"pageSize": 200}, token)
        assert "Yesterday" not in {t["name"] for t in listed["tournaments"]}

        # The organiser's calls are routed; a guest is not the creator.
        status, paused = lobby_json(
            port, "PauseTournament", {"requestId": "p", "tournamentId": cup_id}, token
        )
        assert (status, error_reason(paused)) == (403, "NOT_TOURNAMENT_CREATOR")
        status, not_running = lobby_json(
            port, "PauseTournament", {"requestId": "p", "tournamentId": cup_id}, service
        )
        assert (status, error_reason(not_running)) == (400, "TOURNAMENT_NOT_RUNNING")
        status, stopped = lobby_json(
            port, "StopTournamentSeries", {"requestId": "s", "seriesId": series_id}, service
        )
        assert (status, stopped) == (200, {"changed": True})
