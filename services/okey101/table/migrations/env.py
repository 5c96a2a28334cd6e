"""The table service's Alembic environment: its own history, recorded in
``alembic_version_table`` (see ``okey101.platform.database``)."""

from __future__ import annotations

from okey101.platform.database import run_env_migrations
from okey101.table.models import metadata

run_env_migrations(metadata)
