"""``python -m okey101.bot [--port P] [--metrics-port M] ...``: start the bot service.

The flags are the platform's (``platform.config``; every one also an ``OKEY_BOT_*`` or
``OKEY_*`` variable). Exit 0 after a graceful stop, 1 if the service could not start, 2 for a
bad flag or setting.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okey101.bot.service import ACCESS, NAME, register
from okey101.platform.config import ConfigError, add_arguments, load_settings
from okey101.platform.server import run as run_service


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m okey101.bot",
        description="Serve okey.v1.BotService (computer players' next steps, stateless).",
    )
    add_arguments(parser)
    return parser


def run(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv``, start the service and serve until SIGTERM/SIGINT; the exit status."""
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings(NAME, args)
    except ConfigError as error:
        print(f"{NAME}: {error}", file=sys.stderr)
        return 2
    return run_service(NAME, register, settings, access=ACCESS)


if __name__ == "__main__":
    sys.exit(run())
