"""RulesService for blocking test clients: served in a thread of its own through the platform
(``ThreadedServer``: its auth, error mapping and interceptors included) on 127.0.0.1 port 0,
verifying tokens signed by ``ISSUER``; and the rich details of a refused call.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from okey101.platform.auth import JwksVerifier, SigningKey, TokenIssuer, jwks_of
from okey101.platform.errors import DOMAIN
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


def details(error: grpc.RpcError) -> tuple[error_details_pb2.ErrorInfo, Any]:
    """The one ErrorInfo and the one LocalizedMessage of a failed call."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None
    infos, messages = [], []
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            infos.append(info)
        elif detail.Is(error_details_pb2.LocalizedMessage.DESCRIPTOR):
            message = error_details_pb2.LocalizedMessage()
            detail.Unpack(message)
            messages.append(message)
    assert len(infos) == 1 and len(messages) == 1
    assert infos[0].domain == DOMAIN
    return infos[0], messages[0]
