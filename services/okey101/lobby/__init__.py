"""The lobby service: players and tokens, the table directory, private tables, quick match and
tournaments (``okey.v1.LobbyService``), over its own database (SQLite in local mode, PostgreSQL
via ``OKEY_DATABASE_URL``) with its own Alembic history (``migrations/``). It holds the signing
key and publishes the JWKS every service verifies tokens with.

``okey101 serve lobby`` starts it; in-process, ``async with start_lobby(settings) as lobby: ...``
(``lobby.target``, ``lobby.jwks_url``).
"""

from okey101.lobby.service import (
    ACCESS,
    METHOD_ACCESS,
    SERVICE_NAME,
    Limits,
    Lobby,
    LobbyServicer,
    Options,
    open_lobby,
    serve_lobby,
    start_lobby,
)

__all__ = [
    "ACCESS",
    "METHOD_ACCESS",
    "SERVICE_NAME",
    "Limits",
    "Lobby",
    "LobbyServicer",
    "Options",
    "open_lobby",
    "serve_lobby",
    "start_lobby",
]
