"""``play``, ``watch`` and ``simulate``: clients of the public API (``okey101.client``).

The client is imported by the handlers only: the servers' image has no ``client`` extra
(Textual and Rich), and ``okey101 --help`` there still lists these commands.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from okey101.cli.command import CommandError, Commands, positive_int

if TYPE_CHECKING:
    from okey101.client.i18n import Strings
    from okey101.client.session import Endpoints

PRESET_CHOICES = ("oyna", "boombala", "north_sultan")


def _add_client_flags(parser: argparse.ArgumentParser, *services: str) -> None:
    """``--lang`` and the addresses of the public services the command talks to."""
    from okey101.platform.config import SERVICE_PORTS

    parser.add_argument(
        "--lang", dest="client_lang", choices=("en", "tr"), default=None,
        help="the language of the screen and of the servers' sentences (default: --lang "
        "before the command, else en)",
    )  # fmt: skip
    for name in services:
        flag = "--rules-service" if name == "rules" else f"--{name}"
        default = f"127.0.0.1:{SERVICE_PORTS[name][0]}"
        parser.add_argument(
            flag, dest=f"{name}_address", metavar="ADDR", default=default,
            help=f"the {name} service (default: %(default)s)",
        )  # fmt: skip


def _client_strings(args: argparse.Namespace) -> Strings:
    from okey101.client.i18n import Strings, language_of

    return Strings(language_of(args.client_lang or args.lang))


def _endpoints(args: argparse.Namespace) -> Endpoints:
    from okey101.client.session import Endpoints

    base = Endpoints()
    return Endpoints(
        lobby=getattr(args, "lobby_address", None) or base.lobby,
        table=getattr(args, "table_address", None) or base.table,
        scoring=getattr(args, "scoring_address", None) or base.scoring,
        rules=getattr(args, "rules_address", None) or base.rules,
    )


def add_play(commands: Commands) -> None:
    parser = commands.add_parser(
        "play",
        help="sit at a table with three bots in this terminal",
        description="Log in as this device's guest, quick-match with bots filling the empty "
        "seats (or, with --hands, host a table with three bots and a match of N hands) and "
        "play in the terminal. Keys are listed at the bottom of the screen.",
    )
    parser.add_argument("--rules", choices=PRESET_CHOICES, default="oyna", help="the preset")
    parser.add_argument("--hands", type=positive_int, default=None, help="match length")
    parser.add_argument("--name", default="", help="the name shown at the table")
    parser.add_argument(
        "--stake", type=int, default=0, metavar="CHIPS",
        help="chips each seat plays for, one of the lobby's stake levels (default 0: no stake)",
    )  # fmt: skip
    parser.add_argument("--var-dir", default="var", help="where the guest secret is kept")
    _add_client_flags(parser, "lobby", "table", "scoring", "rules")
    parser.set_defaults(handler=_play)


def _play(args: argparse.Namespace) -> int:
    from pathlib import Path

    from okey101.client.commands import play_app, run_app

    app = play_app(
        _endpoints(args),
        _client_strings(args),
        preset=args.rules,
        hands=args.hands,
        var_dir=Path(args.var_dir),
        name=args.name,
        stake=args.stake,
    )
    return run_app(app)


def add_watch(commands: Commands) -> None:
    parser = commands.add_parser(
        "watch",
        help="follow a table as a spectator",
        description="Follow TABLE as a spectator: the same screen without a rack; read-only.",
    )
    parser.add_argument("table", metavar="TABLE", help="the table's id")
    parser.add_argument("--var-dir", default="var", help="where the guest secret is kept")
    _add_client_flags(parser, "table", "lobby")
    parser.set_defaults(handler=_watch)


def _watch(args: argparse.Namespace) -> int:
    from pathlib import Path

    from okey101.client.commands import run_app, watch_app

    app = watch_app(
        _endpoints(args),
        _client_strings(args),
        table_id=args.table,
        var_dir=Path(args.var_dir),
    )
    return run_app(app)


def add_simulate(commands: Commands) -> None:
    parser = commands.add_parser(
        "simulate",
        help="whole matches of four bots through the public API, with their score sheets",
        description="Play whole matches with four bots through the public API (a guest whose "
        "seat the engine's bot plays, with three of the table's bots) and print each score "
        "sheet from the scoring service with the totals and the winner. Without --lobby, a "
        "stack of its own is started on free ports (SQLite in a temporary directory).",
    )
    parser.add_argument("--matches", type=positive_int, default=1, help="how many matches")
    parser.add_argument("--rules", choices=PRESET_CHOICES, default="oyna", help="the preset")
    parser.add_argument("--hands", type=positive_int, default=None, help="match length")
    parser.add_argument(
        "--lobby", dest="lobby_address", metavar="ADDR", default=None,
        help="use the stack whose lobby is here instead of starting one",
    )  # fmt: skip
    parser.add_argument(
        "--var-dir", default="var", help="where the guest secret is kept (with --lobby)"
    )
    _add_client_flags(parser, "table", "scoring")
    parser.set_defaults(handler=_simulate)


def _simulate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from okey101.client import simulate

    try:
        return simulate.run(
            matches=args.matches,
            preset=args.rules,
            hands=args.hands,
            lobby=args.lobby_address,
            table=args.table_address if args.lobby_address else None,
            scoring=args.scoring_address if args.lobby_address else None,
            var_dir=Path(args.var_dir),
            strings=_client_strings(args),
            out=sys.stdout,
        )
    except simulate.SimulationError as error:
        raise CommandError(str(error)) from None
