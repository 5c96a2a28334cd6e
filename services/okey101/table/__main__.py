"""``python -m okey101.table [--port P] [--metrics-port M] [--database-url URL] ...``: start the
table service. Its database is migrated before it reports SERVING.

The flags are the platform's (``platform.config``; every one also an ``OKEY_TABLE_*`` or
``OKEY_*`` variable); the table's own knobs are ``OKEY_TABLE_*`` variables (``TableOptions``).
Exit 0 after a graceful stop, 1 if the service could not start, 2 for a bad flag or setting.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okey101.platform.config import ConfigError, add_arguments, load_settings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m okey101.table",
        description="Serve okey.v1.TableService (live tables, turns, timers, per-seat streams) "
        "over its own database.",
    )
    add_arguments(parser)
    return parser


def run(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv``, start the service and serve until SIGTERM/SIGINT; the exit status."""
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings("table", args)
    except ConfigError as error:
        print(f"table: {error}", file=sys.stderr)
        return 2
    from okey101.table.runtime import main

    return main(settings)


if __name__ == "__main__":
    sys.exit(run())
