"""Fixtures of the abuse and fault tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from okey101.bench.load_stack import temporary_databases

from support.databases import TEST_DATABASE_ENV


@pytest.fixture(params=["sqlite", "postgresql"])
def stack_databases(request: pytest.FixtureRequest) -> Iterator[dict[str, str] | None]:
    """None (SQLite files under the var dir), or one PostgreSQL database per stateful service,
    dropped afterwards (skipped without ``OKEY_TEST_DATABASE_URL``)."""
    if request.param == "sqlite":
        yield None
        return
    base = os.environ.get(TEST_DATABASE_ENV)
    if not base:
        pytest.skip(f"{TEST_DATABASE_ENV} is not set: the PostgreSQL run is skipped")
    with temporary_databases(base, "okey_faults") as urls:
        yield urls
