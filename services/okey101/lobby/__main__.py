"""``python -m okey101.lobby [--port P] [--jwks-port J] [--database-url URL] ...``: start the
lobby. Its database is migrated before it reports SERVING; the JWKS is served over HTTP, and the
quick-match matcher and the tournament driver run in the background.

The flags are the platform's (``platform.config``; every one also an ``OKEY_LOBBY_*`` or
``OKEY_*`` variable). Exit 0 after a graceful stop, 1 if the service could not start, 2 for a
bad flag or setting.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okey101.lobby.service import main
from okey101.platform.config import ConfigError, add_arguments, load_settings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m okey101.lobby",
        description="Serve okey.v1.LobbyService (players, tokens, tables, quick match, "
        "tournaments) over its own database.",
    )
    add_arguments(parser)
    return parser


def run(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv``, start the lobby and serve until SIGTERM/SIGINT; the exit status."""
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings("lobby", args)
    except ConfigError as error:
        print(f"lobby: {error}", file=sys.stderr)
        return 2
    return main(settings)


if __name__ == "__main__":
    sys.exit(run())
