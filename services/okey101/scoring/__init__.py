"""The scoring service: score sheets, standings, ratings and leaderboards
(``okey.v1.ScoringService``), over its own database (SQLite in local mode, PostgreSQL via
``OKEY_DATABASE_URL``) with its own Alembic history (``migrations/``).

``okey101 serve scoring [--port P] [--metrics-port M] ...`` starts it; in-process, build a
``ScoringServicer(Database(url))``, register it and ``await servicer.prepare()`` (migrations).
"""

from okey101.scoring.service import (
    ACCESS,
    METHOD_ACCESS,
    SERVICE_NAME,
    ScoringServicer,
    register,
    serve_scoring,
)

__all__ = [
    "ACCESS",
    "METHOD_ACCESS",
    "SERVICE_NAME",
    "ScoringServicer",
    "register",
    "serve_scoring",
]
