"""``organisers grant|revoke``: an operator gives a registered account the organiser role (it may
then create tournaments) or takes it away, through the lobby's ``GrantOrganiser`` and
``RevokeOrganiser`` (docs/tournaments.md, Who may organise), recorded with its reason.

    okey101 organisers grant --player ID --reason TEXT [--lobby ADDR] [--request-id ID]
    okey101 organisers revoke --player ID --reason TEXT [--lobby ADDR] [--request-id ID]

The call carries an operator's service token (``cli.operator``). Granting an organiser again,
or revoking a player who is none, changes nothing; a retry with the same ``--request-id`` is
answered as the first. Exit status 0 when the lobby answered, 1 when it refused (its reason and
sentence on stderr) or cannot be reached, 2 for bad input.
"""

from __future__ import annotations

import argparse

from okey101.cli.command import Commands
from okey101.cli.operator import add_operator_flags, call_lobby, print_json, request_id


def add_organisers(commands: Commands) -> None:
    parser = commands.add_parser(
        "organisers",
        help="who may create tournaments (okey101 organisers grant|revoke)",
        description="An operator's grants and revocations of the organiser role, through the "
        "lobby.",
    )
    actions = parser.add_subparsers(dest="organisers", metavar="ACTION", required=True)
    for action, text in (
        ("grant", "make a registered account an organiser (it may create tournaments)"),
        ("revoke", "take the organiser role away (the player creates no more tournaments)"),
    ):
        command = actions.add_parser(action, help=text, description=text[0].upper() + text[1:])
        command.add_argument("--player", required=True, metavar="ID", help="the player's id")
        command.add_argument(
            "--reason", required=True, metavar="TEXT", help="why (1-500 characters)"
        )
        add_operator_flags(command)
        command.set_defaults(handler=_change, action=action)


def _change(args: argparse.Namespace) -> int:
    from okey.v1 import lobby_pb2

    request_id_ = request_id(args)
    if args.action == "grant":
        grant = lobby_pb2.GrantOrganiserRequest(
            request_id=request_id_, player_id=args.player, reason=args.reason
        )
        answer = call_lobby(
            args,
            "organisers grant",
            lambda stub, metadata: stub.GrantOrganiser(grant, metadata=metadata, timeout=15),
        )
    else:
        revoke = lobby_pb2.RevokeOrganiserRequest(
            request_id=request_id_, player_id=args.player, reason=args.reason
        )
        answer = call_lobby(
            args,
            "organisers revoke",
            lambda stub, metadata: stub.RevokeOrganiser(revoke, metadata=metadata, timeout=15),
        )
    if answer is None:
        return 1
    if args.json:
        print_json(answer)
    else:
        state = "an organiser" if answer.player.organiser else "not an organiser"
        change = "" if answer.changed else " (unchanged)"
        print(f"{args.player}: {state}{change} (request {request_id_})")
    return 0


__all__ = ["add_organisers"]
