"""Each stateful service's Alembic history against its models, on SQLite and PostgreSQL: run
twice (the second run finds nothing to do), it makes exactly the tables the models describe,
in a version table of the service's own (so services may share one database)."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from okey101.platform.database import Database

from support.databases import fresh_database

#: The head of each service's history: a new migration must be named here too.
HEADS = {
    "lobby": "0009_tournament_schedules",
    "table": "0007_match_deadline",
    "scoring": "0005_season_lines",
}


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def database_url(backend: str, tmp_path: Path, service: str) -> Iterator[str]:
    yield from fresh_database(backend, tmp_path, service)


@pytest.mark.parametrize("service", sorted(HEADS))
def test_migrated_schema_matches_the_models(service: str, database_url: str) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    metadata = importlib.import_module(f"okey101.{service}.models").metadata

    async def scenario() -> tuple[list[Any], str | None]:
        database = Database(database_url)
        try:
            await database.migrate(service)
            await database.migrate(service)
            async with database.engine.connect() as connection:

                def compare(sync_connection: Any) -> tuple[list[Any], str | None]:
                    context = MigrationContext.configure(
                        sync_connection,
                        opts={"version_table": f"alembic_version_{service}", "compare_type": True},
                    )
                    return compare_metadata(context, metadata), context.get_current_revision()

                return await connection.run_sync(compare)
        finally:
            await database.dispose()

    differences, revision = asyncio.run(scenario())
    assert differences == []
    assert revision == HEADS[service]
