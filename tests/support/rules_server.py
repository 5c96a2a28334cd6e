"""RulesService for blocking test clients: served in a thread of its own through the platform
(``ThreadedServer``: its auth, error mapping and interceptors included) on 127.0.0.1 port 0,
verifying tokens signed by ``ISSUER``; and the rich details of a refused call.
"""

from __future__ import annotations

from typing import Any

from okey101.platform.auth import JwksVerifier, SigningKey, TokenIssuer, jwks_of
from okey101.rules import ACCESS, register

from support.threaded_server import ThreadedServer

KEY = SigningKey.generate()
ISSUER = TokenIssuer(KEY)
# Made as the module is collected: a day long, so a slow run's last tests still hold a live one.
SERVICE_TOKEN = ISSUER.issue("table", "service", ttl_seconds=24 * 3600)
PLAYER_TOKEN = ISSUER.issue("player-1", "player", ttl_seconds=24 * 3600)
AUTH = (("authorization", f"Bearer {SERVICE_TOKEN}"),)


def start_server(var_dir: Any) -> ThreadedServer:
    return ThreadedServer("rules", register, ACCESS, JwksVerifier(jwks_of(KEY)), var_dir)
