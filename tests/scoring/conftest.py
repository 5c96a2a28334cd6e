"""Fixtures the scoring service's tests share (``test_scoring_service``,
``test_score_lines_service``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.databases import fresh_database


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database: a SQLite file, or a PostgreSQL database dropped afterwards."""
    yield from fresh_database(request.param, tmp_path, "scoring")
