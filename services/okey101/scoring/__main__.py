"""``python -m okey101.scoring [--port P] [--metrics-port M] [--database-url URL] ...``: start the
scoring service. Its database is migrated before it reports SERVING.

The flags are the platform's (``platform.config``; every one also an ``OKEY_SCORING_*`` or
``OKEY_*`` variable). Exit 0 after a graceful stop, 1 if the service could not start, 2 for a
bad flag or setting.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okey101.platform.config import ConfigError, add_arguments, load_settings
from okey101.scoring.service import main


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m okey101.scoring",
        description="Serve okey.v1.ScoringService (score sheets, standings, ratings, "
        "leaderboards) over its own database.",
    )
    add_arguments(parser)
    return parser


def run(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv``, start the service and serve until SIGTERM/SIGINT; the exit status."""
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings("scoring", args)
    except ConfigError as error:
        print(f"scoring: {error}", file=sys.stderr)
        return 2
    return main(settings)


if __name__ == "__main__":
    sys.exit(run())
