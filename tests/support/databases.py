"""Fresh databases for tests: a SQLite file, or a PostgreSQL database made for one test and
dropped after it (``OKEY_TEST_DATABASE_URL`` names the server; without it the PostgreSQL runs
are skipped).

    @pytest.fixture(params=["sqlite", "postgresql"])
    def database_url(request, tmp_path):
        yield from fresh_database(request.param, tmp_path, "lobby")
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from okey101.bench.load_stack import temporary_databases

TEST_DATABASE_ENV = "OKEY_TEST_DATABASE_URL"


def postgres_base() -> str:
    """The PostgreSQL server's URL; the test is skipped when none is given."""
    base = os.environ.get(TEST_DATABASE_ENV)
    if not base:
        pytest.skip(f"{TEST_DATABASE_ENV} is not set: the PostgreSQL runs are skipped")
    return base


@contextlib.contextmanager
def postgres_database(prefix: str = "okey_test") -> Iterator[str]:
    """A new PostgreSQL database (its asyncpg URL), dropped afterwards."""
    with temporary_databases(postgres_base(), prefix, ("test",)) as made:
        yield made["test"]


def fresh_database(kind: str, tmp_path: Path, service: str) -> Iterator[str]:
    """A fixture's empty database of ``kind`` (``sqlite`` or ``postgresql``) for ``service``."""
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / f'{service}.db'}"
        return
    with postgres_database(f"okey_{service}") as url:
        yield url
