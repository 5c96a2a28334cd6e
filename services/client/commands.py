"""``okey101 play`` and ``okey101 watch``: the terminal client started from the command line.

``play`` logs in as this device's guest (the guest secret kept under ``--var-dir``), finds a
table (quick match with bots filling the empty seats, or, with ``--hands N``, a table of its own
with three bots and a match of N hands) and runs the screen on it. ``watch TABLE`` logs in the
same way and follows a table as a spectator.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from okey101.client.app import OkeyApp
from okey101.client.i18n import Strings
from okey101.client.session import Endpoints, GuestStore, Player, TableSession


async def _logged_in(
    endpoints: Endpoints,
    strings: Strings,
    var_dir: Path,
    name: str,
    progress: Callable[[str], None],
) -> Player:
    progress(strings("logging_in"))
    player = Player(endpoints, strings.locale)
    try:
        profile = await player.login_guest(GuestStore(var_dir, endpoints.lobby), name)
    except BaseException:
        await player.close()
        raise
    progress(strings("logged_in", name=profile.display_name))
    return player


def play_app(
    endpoints: Endpoints,
    strings: Strings,
    *,
    preset: str,
    hands: int | None,
    var_dir: Path,
    name: str = "",
) -> OkeyApp:
    """The screen, set to log in and find a table when it starts."""

    async def connect(progress: Callable[[str], None]) -> TableSession:
        player = await _logged_in(endpoints, strings, var_dir, name, progress)
        try:
            if hands is not None:
                seating = await player.host_with_bots(preset, hands=hands)
            else:

                def waiting(ticket: object) -> None:
                    fill = getattr(ticket, "bots_fill_time", None)
                    when = (
                        fill.ToDatetime().astimezone().strftime("%H:%M:%S")
                        if fill is not None and fill.seconds
                        else datetime.now().strftime("%H:%M:%S")
                    )
                    players = getattr(ticket, "players_waiting", 1)
                    progress(strings("queue_waiting", players=players, time=when))

                seating = await player.quick_match(preset, waiting)
        except BaseException:
            await player.close()
            raise
        progress(strings("seated", table=seating.table_id, seat=seating.seat))
        return player.session(seating.table_id, seating.seat)

    return OkeyApp(connect, strings)


def watch_app(
    endpoints: Endpoints, strings: Strings, *, table_id: str, var_dir: Path, name: str = ""
) -> OkeyApp:
    """The spectator's screen of ``table_id``."""

    async def connect(progress: Callable[[str], None]) -> TableSession:
        player = await _logged_in(endpoints, strings, var_dir, name, progress)
        return player.session(table_id, None)

    return OkeyApp(connect, strings, spectator=True)


def run_app(app: OkeyApp) -> int:
    """Run the screen in this terminal until the player quits; the exit status."""
    app.run()
    return app.return_code or 0
