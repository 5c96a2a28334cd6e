"""A tournament's schedule, checked, and the start times of a recurring series (pure: the time
is passed in).

``checked_schedule`` turns CreateTournament's start time, registration window, check-in window
and recurrence into a ``Schedule`` or refuses them (INVALID_ARGUMENT: BAD_START_TIME,
BAD_REGISTRATION_WINDOW, BAD_CHECK_IN_WINDOW, BAD_RECURRENCE). ``next_starts`` gives a
recurrence's start times after a moment, in UTC microseconds, from its local time of day in its
time zone (``zoneinfo``): a local time a clock change skips is shifted by the change, one it
repeats is taken at its first occurrence (Python's ``fold=0``), as lobby.proto says.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from okey.v1 import lobby_pb2

from okey101.lobby.errors import Invalid
from okey101.platform import timestamps

US: Final = 1_000_000
#: How far ahead a start may be scheduled, and the longest check-in window.
MAX_AHEAD_US: Final = 366 * 86_400 * US
MAX_CHECK_IN_MINUTES: Final = 1440
#: TournamentRecurrence's limits: registration hours, occurrences ahead (and their default).
MAX_REGISTRATION_HOURS: Final = 336
MAX_OCCURRENCES_AHEAD: Final = 14
DEFAULT_OCCURRENCES_AHEAD: Final = 2
_LOCAL_TIME: Final = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])")


@dataclass(frozen=True)
class Recurrence:
    """A checked TournamentRecurrence."""

    #: ISO weekdays (1 Monday ... 7 Sunday) it is held on; all seven for a daily one.
    weekdays: frozenset[int]
    hour: int
    minute: int
    time_zone: str
    #: Registration opens this long before each start (0: when the occurrence is created).
    registration_us: int
    occurrences_ahead: int


@dataclass(frozen=True)
class Schedule:
    """When a tournament starts and registers (microseconds; None: by hand / at once)."""

    start_us: int | None
    registration_opens_us: int | None
    check_in_seconds: int
    recurrence: Recurrence | None


def _micros(value: object, field_name: str, code: str) -> int:
    """A Timestamp in microseconds; one the type cannot hold is ``code``."""
    seconds, nanos = getattr(value, "seconds", 0), getattr(value, "nanos", 0)
    if not timestamps.holds(value):  # type: ignore[arg-type]
        raise Invalid(code, field=field_name, value=f"{seconds}s {nanos}ns")
    return int(seconds * US + nanos // 1000)


def checked_recurrence(recurrence: lobby_pb2.TournamentRecurrence) -> Recurrence:
    """A recurrence that fires, or INVALID_ARGUMENT BAD_RECURRENCE naming what is wrong."""

    def bad(problem: str) -> Invalid:
        return Invalid("BAD_RECURRENCE", problem=problem)

    days = list(recurrence.weekdays)
    if recurrence.frequency == lobby_pb2.RECURRENCE_FREQUENCY_DAILY:
        if days:
            raise bad("weekdays")
        weekdays = frozenset(range(1, 8))
    elif recurrence.frequency == lobby_pb2.RECURRENCE_FREQUENCY_WEEKLY:
        if not days or any(not 1 <= day <= 7 for day in days) or len(set(days)) != len(days):
            raise bad("weekdays")
        weekdays = frozenset(days)
    else:
        raise bad("frequency")
    matched = _LOCAL_TIME.fullmatch(recurrence.local_time)
    if matched is None:
        raise bad("local_time")
    try:
        if not recurrence.time_zone or recurrence.time_zone != recurrence.time_zone.strip():
            raise ValueError(recurrence.time_zone)
        ZoneInfo(recurrence.time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise bad("time_zone") from None
    if recurrence.registration_hours > MAX_REGISTRATION_HOURS:
        raise bad("registration_hours")
    if recurrence.occurrences_ahead > MAX_OCCURRENCES_AHEAD:
        raise bad("occurrences_ahead")
    return Recurrence(
        weekdays=weekdays,
        hour=int(matched.group(1)),
        minute=int(matched.group(2)),
        time_zone=recurrence.time_zone,
        registration_us=recurrence.registration_hours * 3600 * US,
        occurrences_ahead=recurrence.occurrences_ahead or DEFAULT_OCCURRENCES_AHEAD,
    )


def checked_schedule(request: lobby_pb2.CreateTournamentRequest, now_us: int) -> Schedule:
    """CreateTournament's schedule fields, checked against each other and ``now_us``."""
    check_in_us = request.check_in_minutes * 60 * US
    if request.check_in_minutes > MAX_CHECK_IN_MINUTES:
        raise Invalid(
            "BAD_CHECK_IN_WINDOW",
            minutes=str(request.check_in_minutes),
            window=str(MAX_CHECK_IN_MINUTES),
        )
    if request.HasField("recurrence"):
        if request.HasField("start_time") or request.HasField("registration_open_time"):
            raise Invalid("BAD_RECURRENCE", problem="start_time")
        recurrence = checked_recurrence(request.recurrence)
        if recurrence.registration_us and check_in_us > recurrence.registration_us:
            raise Invalid(
                "BAD_CHECK_IN_WINDOW",
                minutes=str(request.check_in_minutes),
                window=str(recurrence.registration_us // (60 * US)),
            )
        return Schedule(None, None, request.check_in_minutes * 60, recurrence)
    if not request.HasField("start_time"):
        if request.HasField("registration_open_time"):
            raise Invalid("BAD_REGISTRATION_WINDOW", problem="start_time")
        if request.check_in_minutes:
            raise Invalid("BAD_CHECK_IN_WINDOW", minutes=str(request.check_in_minutes), window="0")
        return Schedule(None, None, 0, None)
    start_us = _micros(request.start_time, "start_time", "BAD_START_TIME")
    if not now_us < start_us <= now_us + MAX_AHEAD_US:
        raise Invalid("BAD_START_TIME", field="start_time", value=shown_time(start_us))
    opens_us: int | None = None
    if request.HasField("registration_open_time"):
        opens_us = _micros(
            request.registration_open_time, "registration_open_time", "BAD_REGISTRATION_WINDOW"
        )
        if opens_us >= start_us:
            raise Invalid("BAD_REGISTRATION_WINDOW", problem="registration_open_time")
        if opens_us <= now_us:
            opens_us = None  # open already: open at once
    window_us = start_us - (opens_us if opens_us is not None else now_us)
    if check_in_us > window_us:
        raise Invalid(
            "BAD_CHECK_IN_WINDOW",
            minutes=str(request.check_in_minutes),
            window=str(window_us // (60 * US)),
        )
    return Schedule(start_us, opens_us, request.check_in_minutes * 60, None)


def shown_time(micros: int) -> str:
    return dt.datetime.fromtimestamp(micros / US, tz=dt.UTC).isoformat(timespec="seconds")


def next_starts(recurrence: Recurrence, after_us: int, count: int) -> list[int]:
    """The first ``count`` start times strictly after ``after_us`` (UTC microseconds)."""
    zone = ZoneInfo(recurrence.time_zone)
    day = dt.datetime.fromtimestamp(after_us / US, tz=zone).date() - dt.timedelta(days=1)
    found: list[int] = []
    # A day a week is enough to find one; 8 days past the last start bounds the search.
    while len(found) < count:
        if day.isoweekday() in recurrence.weekdays:
            local = dt.datetime(
                day.year, day.month, day.day, recurrence.hour, recurrence.minute, tzinfo=zone
            )
            # Through UTC and back: a skipped local time comes out shifted by the change.
            start_us = int(local.astimezone(dt.UTC).timestamp()) * US
            if start_us > after_us and (not found or start_us > found[-1]):
                found.append(start_us)
        day += dt.timedelta(days=1)
    return found


def registration_opens(recurrence: Recurrence, start_us: int, now_us: int) -> int | None:
    """When an occurrence starting at ``start_us`` opens registration (None: at once)."""
    if not recurrence.registration_us:
        return None
    opens = start_us - recurrence.registration_us
    return opens if opens > now_us else None


__all__ = [
    "Recurrence",
    "Schedule",
    "checked_recurrence",
    "checked_schedule",
    "next_starts",
    "registration_opens",
    "shown_time",
]
