"""A recurrence's start times (``lobby.tournament_schedule.next_starts``, pure): weekly days, the
local time in its zone, and the clock changes (a skipped local time shifted by the change, a
repeated one taken at its first occurrence)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from okey.v1 import lobby_pb2

from okey101.lobby.tournament_schedule import Recurrence, checked_recurrence, next_starts

US = 1_000_000


def _us(text: str) -> int:
    return int(dt.datetime.fromisoformat(text).timestamp()) * US


def _utc(micros: int) -> str:
    return dt.datetime.fromtimestamp(micros / US, tz=dt.UTC).isoformat()


def _recurrence(
    frequency: int, local_time: str, zone: str, days: list[int] | None = None
) -> Recurrence:
    return checked_recurrence(
        lobby_pb2.TournamentRecurrence(
            frequency=frequency, weekdays=days or [], local_time=local_time, time_zone=zone
        )
    )


def test_weekly_starts_fall_on_its_days_at_its_local_time() -> None:
    weekly = _recurrence(lobby_pb2.RECURRENCE_FREQUENCY_WEEKLY, "20:30", "Europe/Istanbul", [2, 5])
    # Monday 2026-12-07 09:00 UTC: next Tuesday 20:30 (UTC+3), then Friday.
    starts = next_starts(weekly, _us("2026-12-07T09:00:00+00:00"), 3)
    assert [_utc(start) for start in starts] == [
        "2026-12-08T17:30:00+00:00",
        "2026-12-11T17:30:00+00:00",
        "2026-12-15T17:30:00+00:00",
    ]
    # Strictly after: a start at the very moment is not the next one.
    assert next_starts(weekly, starts[0], 1) == [starts[1]]


def test_a_skipped_local_time_is_shifted_and_a_repeated_one_taken_first() -> None:
    daily = _recurrence(lobby_pb2.RECURRENCE_FREQUENCY_DAILY, "01:30", "Europe/London")
    london = ZoneInfo("Europe/London")
    # 2027-03-28: clocks go from 01:00 GMT to 02:00 BST; 01:30 does not exist that day.
    spring = next_starts(daily, _us("2027-03-27T12:00:00+00:00"), 2)
    assert [_utc(start) for start in spring] == [
        "2027-03-28T01:30:00+00:00",  # 02:30 BST: shifted by the hour the change skips
        "2027-03-29T00:30:00+00:00",  # 01:30 BST
    ]
    # 2027-10-31: 01:30 happens twice (BST, then GMT); the first is taken, once.
    autumn = next_starts(daily, _us("2027-10-30T12:00:00+00:00"), 2)
    assert [_utc(start) for start in autumn] == [
        "2027-10-31T00:30:00+00:00",
        "2027-11-01T01:30:00+00:00",
    ]
    local = dt.datetime.fromtimestamp(autumn[0] / US, tz=london)
    assert (local.hour, local.minute, local.fold) == (1, 30, 0)
