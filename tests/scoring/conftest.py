"""Fixtures the scoring service's tests share (``test_scoring_service``,
``test_score_lines_service``, ``test_leaderboard_seasons``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from support.databases import fresh_database


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database: a SQLite file, or a PostgreSQL database dropped afterwards."""
    yield from fresh_database(request.param, tmp_path, "scoring")


class SeasonClock:
    """The scoring service's now (``ScoringServicer(clock=...)``), which the test moves: which
    week or month a seasonal leaderboard calls current. Starts on Wednesday 9 December 2026,
    12:00 UTC (ISO week 50: Monday 7 to Monday 14 December)."""

    def __init__(self) -> None:
        self.now = datetime(2026, 12, 9, 12, tzinfo=UTC)

    def __call__(self) -> float:
        return self.now.timestamp()


@pytest.fixture
def season_clock() -> SeasonClock:
    return SeasonClock()
