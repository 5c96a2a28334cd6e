"""Leaderboard seasons: which instants a weekly or monthly board covers (pure, no I/O).

A week is an ISO week and a month a calendar month, both read in UTC: a week runs from Monday
00:00 UTC to the next Monday 00:00 UTC, a month from its 1st 00:00 UTC to the next month's 1st.
UTC because the board is one for every player, wherever they are; Türkiye keeps UTC+3 all year
(no summer time since 2016), so a week starts at 03:00 on Monday in Istanbul, every week of the
year. A window is half-open, ``[start_us, end_us)``: a match that ended at a boundary belongs to
the window that starts there. Instants are integer microseconds since the epoch, as stored.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final, Literal

Season = Literal["week", "month"]
WEEK: Final = "week"
MONTH: Final = "month"

#: The earliest instant a season may be asked about: the epoch (stored instants start there).
EARLIEST_US: Final = 0
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_DAY_US: Final = 86_400 * 1_000_000


@dataclass(frozen=True, slots=True)
class Window:
    """A season's instants, ``[start_us, end_us)``."""

    season: Season
    start_us: int
    end_us: int


def _us(moment: datetime) -> int:
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


_FIRST_US: Final = _us(datetime(1, 1, 1, tzinfo=UTC))
_LAST_US: Final = _us(datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC))


def window(season: Season, instant_us: int) -> Window:
    """The week or month (UTC) that holds ``instant_us``. An instant outside the years 1-9999
    (no match's: RecordMatch takes the end the table sends) is read as the nearest of them."""
    moment = _EPOCH + timedelta(microseconds=min(max(instant_us, _FIRST_US), _LAST_US))
    day = datetime(moment.year, moment.month, moment.day, tzinfo=UTC)
    if season == WEEK:
        start = _us(day - timedelta(days=day.weekday()))  # Monday is weekday 0 (ISO)
        return Window(season, start, start + 7 * _DAY_US)
    start = _us(day.replace(day=1))
    days = calendar.monthrange(day.year, day.month)[1]
    return Window(season, start, start + days * _DAY_US)


def in_range(season: Season, instant_us: int, now_us: int) -> bool:
    """Whether a season may be asked about at ``instant_us``: from the epoch to the end of the
    current week or month (a later one has no match yet: asking for it is a client's mistake,
    a clock or a time zone read wrongly, better refused than answered empty)."""
    return EARLIEST_US <= instant_us < window(season, now_us).end_us


__all__ = ["EARLIEST_US", "MONTH", "WEEK", "Season", "Window", "in_range", "window"]
