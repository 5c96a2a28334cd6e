"""The ``okey101`` command line.

    okey101 best-opening --rules oyna --indicator Y5 R7 R8 Y6 ...
    okey101 scenario run FILE [--json] | okey101 scenario check PATH...
    okey101 serve SERVICE [--port P ...] | okey101 up | okey101 migrate SERVICE [--check]
    okey101 play | okey101 watch TABLE | okey101 simulate [--matches N]
    okey101 bench solver --hands 2000 [--seed 0] [--json]
    okey101 audit chips [--json] [--pairs] | okey101 chips adjust --player ID --amount N ...
    okey101 organisers grant|revoke --player ID --reason TEXT [--lobby ADDR]

A module per command group: ``hands`` (best-opening, scenario, verify-deal, export-hand),
``servers`` (serve, up, migrate), ``play`` (play, watch, simulate), ``bench`` (its targets
are listed in ``bench.BENCH_TARGETS``), ``audit`` (audit chips), ``chips`` (chips adjust) and
``organisers`` (organisers grant, organisers revoke).
Each command is an ``add_*`` function that adds its parser and a handler taking the parsed
arguments and returning the exit status (``command``); a new command is one more ``add_*`` call
in ``build_parser``. The handlers import what they run, so that ``okey101 --help`` needs none of
the optional extras and ``okey101 serve`` loads only its service.

Bad input (an unknown tile, a third copy of a tile, an unknown rule set) is one line on stderr
and exit status 2, never a traceback; argparse's own usage errors also exit 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okey101.cli import audit, bench, chips, hands, organisers, play, servers
from okey101.cli.command import PROG, USAGE_ERROR, CommandError, Handler
from okey101.engine.errors import OkeyError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Okey 101: engine tools.")
    parser.add_argument(
        "--lang", choices=("en", "tr"), default="en", help="language of error messages"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    hands.add_best_opening(commands)
    hands.add_scenario(commands)
    servers.add_serve(commands)
    servers.add_up(commands)
    play.add_play(commands)
    play.add_watch(commands)
    play.add_simulate(commands)
    servers.add_migrate(commands)
    bench.add_bench(commands)
    hands.add_verify_deal(commands)
    hands.add_export_hand(commands)
    audit.add_audit(commands)
    chips.add_chips(commands)
    organisers.add_organisers(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit status (0 ok, 1 a check failed, 2 bad input)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, or a usage error argparse has printed
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else USAGE_ERROR)
    handler: Handler = args.handler
    try:
        return handler(args)
    except OkeyError as error:
        _fail(error.message(args.lang))
    except CommandError as error:
        _fail(str(error))
    return USAGE_ERROR


def _fail(message: str) -> None:
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)


__all__ = ["build_parser", "main"]
