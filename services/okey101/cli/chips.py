"""``chips adjust``: an operator's grant or take of a player's chips, through the lobby's
``AdjustChips`` (docs/chips.md, Operators), recorded in the ledger with its reason.

    okey101 chips adjust --player ID --amount N --reason TEXT [--lobby ADDR] [--request-id ID]

The call carries a service token signed with the lobby's own signing key, found as the lobby
finds it (``--signing-key-file``, ``OKEY_SIGNING_KEY_FILE``, else local mode's development key
under the var dir): run it where that key is (on one machine, or in a lobby pod). A retry with
the same ``--request-id`` is answered as the first and moves nothing. Exit status 0 when the
lobby recorded it, 1 when it refused (its reason and sentence on stderr) or cannot be reached,
2 for bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid

from okey101.cli.command import PROG, CommandError, Commands

#: The settings the command reads (flags, ``OKEY_LOBBY_*`` and ``OKEY_*`` as ``serve`` does).
_KEY_SETTINGS = ("signing_key_file", "local_mode", "var_dir", "lobby_address")
#: The subject of the service token the command signs.
OPERATOR: str = "operator:okey101-cli"


def add_chips(commands: Commands) -> None:
    from okey101.platform.config import SETTINGS

    parser = commands.add_parser(
        "chips",
        help="an operator's grants and takes of chips (okey101 chips adjust)",
        description="Operators' changes to players' chips, through the lobby.",
    )
    actions = parser.add_subparsers(dest="chips", metavar="ACTION", required=True)
    adjust = actions.add_parser(
        "adjust",
        help="grant (a positive amount) or take (a negative one) a player's chips",
        description="Grant or take a player's chips with LobbyService.AdjustChips, the reason "
        "recorded in the ledger. A take beyond the balance is refused.",
    )
    adjust.add_argument("--player", required=True, metavar="ID", help="the player's id")
    adjust.add_argument(
        "--amount",
        required=True,
        type=int,
        metavar="N",
        help="chips to grant (positive) or take (negative), not 0",
    )
    adjust.add_argument("--reason", required=True, metavar="TEXT", help="why (1-500 characters)")
    adjust.add_argument(
        "--lobby", default=None, metavar="ADDR", help="the lobby's gRPC target (OKEY_LOBBY_ADDRESS)"
    )
    adjust.add_argument(
        "--request-id",
        default=None,
        metavar="ID",
        help="the call's request id (default: a new one); the same id again is a retry",
    )
    adjust.add_argument("--json", action="store_true", help="the answer as one JSON object")
    for spec in SETTINGS:
        if spec.name in _KEY_SETTINGS and spec.name != "lobby_address":
            adjust.add_argument(spec.flag, dest=spec.name, default=None, help=spec.help)
    adjust.set_defaults(handler=_adjust)


def _adjust(args: argparse.Namespace) -> int:
    import grpc
    from google.protobuf import json_format
    from okey.v1 import lobby_pb2, lobby_pb2_grpc

    from okey101.platform.auth import TokenIssuer, signing_key_for
    from okey101.platform.config import ConfigError, load_settings

    try:
        flags = {name: getattr(args, name, None) for name in _KEY_SETTINGS}
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
    request = lobby_pb2.AdjustChipsRequest(
        request_id=args.request_id or uuid.uuid4().hex,
        player_id=args.player,
        amount=args.amount,
        reason=args.reason,
    )
    with grpc.insecure_channel(settings.lobby_address) as channel:
        stub = lobby_pb2_grpc.LobbyServiceStub(channel)
        try:
            answer = stub.AdjustChips(
                request, metadata=(("authorization", f"Bearer {token}"),), timeout=15
            )
        except grpc.RpcError as error:
            code = error.code()
            details = error.details()
            print(f"{PROG} chips adjust: {code.name}: {details}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(json_format.MessageToDict(answer), sort_keys=True))
    else:
        entry = answer.entry
        print(
            f"{args.player}: {entry.amount:+d} chips ({entry.note}), balance {answer.balance} "
            f"(entry {entry.entry_id}, request {request.request_id})"
        )
    return 0


__all__ = ["OPERATOR", "add_chips"]
