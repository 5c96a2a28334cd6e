"""The lobby's Alembic environment: its own history, recorded in ``alembic_version_lobby`` (see
``okey101.platform.database``)."""

from __future__ import annotations

from okey101.lobby.models import metadata
from okey101.platform.database import run_env_migrations

run_env_migrations(metadata)
