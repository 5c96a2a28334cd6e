"""``python -m okey101.rules [--port P] [--metrics-port M] ...``: start the rules service.

The flags are the platform's (``platform.config``; every one also an ``OKEY_RULES_*`` or
``OKEY_*`` variable). Exit 0 after a graceful stop, 1 if the service could not start, 2 for a
bad flag or setting.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okey101.platform.config import ConfigError, add_arguments, load_settings
from okey101.platform.server import run as run_service
from okey101.rules.service import ACCESS, register


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m okey101.rules",
        description="Serve okey.v1.RulesService (the rules engine over gRPC, stateless).",
    )
    add_arguments(parser)
    return parser


def run(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv``, start the service and serve until SIGTERM/SIGINT; the exit status."""
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings("rules", args)
    except ConfigError as error:
        print(f"rules: {error}", file=sys.stderr)
        return 2
    return run_service("rules", register, settings, access=ACCESS)


if __name__ == "__main__":
    sys.exit(run())
