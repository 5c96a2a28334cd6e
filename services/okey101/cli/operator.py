"""What an operator's command needs to call the lobby (``chips adjust``, ``organisers grant``):
its flags, and one call with a service token signed by the lobby's own key.

The key is found as the lobby finds it (``--signing-key-file``, ``OKEY_SIGNING_KEY_FILE``, else
local mode's development key under the var dir): run the command where that key is (on one
machine, or in a lobby pod). A retry with the same ``--request-id`` is answered as the first.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections.abc import Callable
from typing import Any

from okey101.cli.command import PROG, CommandError

#: The settings the commands read (flags, ``OKEY_LOBBY_*`` and ``OKEY_*`` as ``serve`` does).
KEY_SETTINGS = ("signing_key_file", "local_mode", "var_dir", "lobby_address")
#: The subject of the service token the commands sign.
OPERATOR: str = "operator:okey101-cli"

Metadata = tuple[tuple[str, str], ...]


def add_operator_flags(command: argparse.ArgumentParser) -> None:
    """``--lobby``, ``--request-id``, ``--json`` and where the signing key is."""
    from okey101.platform.config import SETTINGS

    command.add_argument(
        "--lobby", default=None, metavar="ADDR", help="the lobby's gRPC target (OKEY_LOBBY_ADDRESS)"
    )
    command.add_argument(
        "--request-id",
        default=None,
        metavar="ID",
        help="the call's request id (default: a new one); the same id again is a retry",
    )
    command.add_argument("--json", action="store_true", help="the answer as one JSON object")
    for spec in SETTINGS:
        if spec.name in KEY_SETTINGS and spec.name != "lobby_address":
            command.add_argument(spec.flag, dest=spec.name, default=None, help=spec.help)


def request_id(args: argparse.Namespace) -> str:
    """The call's request id: ``--request-id``, else a new one."""
    return str(args.request_id or uuid.uuid4().hex)


def call_lobby(
    args: argparse.Namespace, name: str, call: Callable[[Any, Metadata], Any]
) -> Any | None:
    """``call(stub, metadata)`` on the lobby with an operator's service token: its answer, or
    None once a refusal is printed on stderr as ``PROG name: CODE: sentence``."""
    import grpc
    from okey.v1 import lobby_pb2_grpc

    from okey101.platform.auth import TokenIssuer, signing_key_for
    from okey101.platform.config import ConfigError, load_settings

    try:
        flags = {key: getattr(args, key, None) for key in KEY_SETTINGS}
        flags["lobby_address"] = args.lobby
        settings = load_settings("lobby", flags)
        key = signing_key_for(settings)
    except (ConfigError, OSError, ValueError) as error:
        raise CommandError(str(error)) from None
    if key is None:
        raise CommandError(
            "no signing key: set OKEY_SIGNING_KEY_FILE (the lobby's), or OKEY_LOCAL_MODE=1"
        )
    token = TokenIssuer(key).issue(OPERATOR, "service", ttl_seconds=300)
    with grpc.insecure_channel(settings.lobby_address) as channel:
        try:
            return call(
                lobby_pb2_grpc.LobbyServiceStub(channel),
                (("authorization", f"Bearer {token}"),),
            )
        except grpc.RpcError as error:
            print(f"{PROG} {name}: {error.code().name}: {error.details()}", file=sys.stderr)
            return None


def print_json(answer: Any) -> None:
    """The answer as one JSON object, every field shown."""
    from google.protobuf import json_format

    print(
        json.dumps(
            json_format.MessageToDict(answer, always_print_fields_with_no_presence=True),
            sort_keys=True,
        )
    )


__all__ = [
    "KEY_SETTINGS",
    "OPERATOR",
    "add_operator_flags",
    "call_lobby",
    "print_json",
    "request_id",
]
