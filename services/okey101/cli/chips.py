"""``chips adjust``: an operator's grant or take of a player's chips, through the lobby's
``AdjustChips`` (docs/chips.md, Operators), recorded in the ledger with its reason.

    okey101 chips adjust --player ID --amount N --reason TEXT [--lobby ADDR] [--request-id ID]

The call carries an operator's service token (``cli.operator``). A retry with the same
``--request-id`` is answered as the first and moves nothing. Exit status 0 when the
lobby recorded it, 1 when it refused (its reason and sentence on stderr) or cannot be reached,
2 for bad input.
"""

from __future__ import annotations

import argparse

from okey101.cli.command import Commands
from okey101.cli.operator import add_operator_flags, call_lobby, print_json, request_id


def add_chips(commands: Commands) -> None:
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
    add_operator_flags(adjust)
    adjust.set_defaults(handler=_adjust)


def _adjust(args: argparse.Namespace) -> int:
    from okey.v1 import lobby_pb2

    request = lobby_pb2.AdjustChipsRequest(
        request_id=request_id(args),
        player_id=args.player,
        amount=args.amount,
        reason=args.reason,
    )
    answer = call_lobby(
        args,
        "chips adjust",
        lambda stub, metadata: stub.AdjustChips(request, metadata=metadata, timeout=15),
    )
    if answer is None:
        return 1
    if args.json:
        print_json(answer)
    else:
        entry = answer.entry
        print(
            f"{args.player}: {entry.amount:+d} chips ({entry.note}), balance {answer.balance} "
            f"(entry {entry.entry_id}, request {request.request_id})"
        )
    return 0


__all__ = ["add_chips"]
