"""``audit chips``: the lobby's chip ledger proven from its entries alone (``lobby.chips.audit``,
docs/chips.md, The audit), and with ``--pairs`` the pairs of players whose chips flow one way.

    okey101 audit chips [--json] [--pairs [--min-matches N]] [--database-url URL]

It reads the lobby's database as ``okey101 serve lobby`` finds it (``--database-url``,
``OKEY_LOBBY_DATABASE_URL``, ``OKEY_DATABASE_URL``, else local mode's SQLite file under the var
dir) and changes nothing. Exit status 0 if the books balance, 1 if any difference was found or
the database cannot be read, 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from okey101.cli.command import PROG, CommandError, Commands, positive_int

if TYPE_CHECKING:
    from okey101.lobby.chips.audit import Audit

#: The settings the audit reads (flags, ``OKEY_LOBBY_*`` and ``OKEY_*`` as ``serve`` does).
_DATABASE_SETTINGS = ("database_url", "local_mode", "var_dir")


def add_audit(commands: Commands) -> None:
    from okey101.platform.config import SETTINGS

    parser = commands.add_parser(
        "audit",
        help="prove the lobby's books (okey101 audit chips)",
        description="Audits of the lobby's records; nothing is changed.",
    )
    audits = parser.add_subparsers(dest="audit", metavar="AUDIT", required=True)
    chips = audits.add_parser(
        "chips",
        help="the chip ledger, from its entries alone",
        description="Recompute every account's balance from the ledger's entries and check it "
        "against the cached balances and each entry's balance after it; check every "
        "transaction sums to zero, no player's balance is negative, every closed pot is "
        "empty and open pots hold their stakes; prove that the chips in circulation are the "
        "chips created (grants, adjustments) less the chips destroyed (fees, the bots' sink). "
        "Exit 1 if anything differs.",
    )
    chips.add_argument("--json", action="store_true", help="one JSON object on stdout")
    chips.add_argument(
        "--pairs",
        action="store_true",
        help="also list pairs of players whose chips flowed one way across staked matches",
    )
    chips.add_argument(
        "--min-matches",
        type=positive_int,
        default=5,
        metavar="N",
        help="with --pairs, only pairs that played at least N staked matches together (default 5)",
    )
    for spec in SETTINGS:
        if spec.name in _DATABASE_SETTINGS:
            chips.add_argument(spec.flag, dest=spec.name, default=None, help=spec.help)
    chips.set_defaults(handler=_audit_chips)


def _audit_chips(args: argparse.Namespace) -> int:
    import asyncio

    from sqlalchemy.exc import SQLAlchemyError

    from okey101.platform.config import ConfigError, load_settings
    from okey101.platform.database import database_url

    try:
        flags = {name: getattr(args, name) for name in _DATABASE_SETTINGS}
        url = database_url("lobby", load_settings("lobby", flags))
    except ConfigError as error:
        raise CommandError(str(error)) from None
    try:
        audit, pairs = asyncio.run(_read(url, args.min_matches if args.pairs else None))
    except (OSError, SQLAlchemyError) as error:
        print(
            f"{PROG} audit chips: cannot read the lobby's ledger ({' '.join(str(error).split())})",
            file=sys.stderr,
        )
        return 1
    from okey101.lobby.chips.audit import text_report

    if args.json:
        found = audit.as_json()
        if pairs is not None:
            found["pairs"] = pairs
        print(json.dumps(found, sort_keys=True))
    else:
        print(text_report(audit, pairs))
    return 0 if audit.chips_balanced else 1


async def _read(url: str, min_matches: int | None) -> tuple[Audit, list[dict[str, Any]] | None]:
    from okey101.lobby.chips.audit import audit_chips, chip_pairs, snapshot
    from okey101.platform.database import Database

    database = Database(url)
    try:
        async with snapshot(database) as session:
            audit = await audit_chips(session)
            pairs = None
            if min_matches is not None:
                pairs = await chip_pairs(session, min_matches=min_matches)
        return audit, pairs
    finally:
        await database.dispose()


__all__ = ["add_audit"]
