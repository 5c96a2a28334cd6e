"""``okey101 play`` and ``okey101 watch``: the terminal client started from the command line.

``play`` logs in as this device's guest (the guest secret kept under ``--var-dir``), says its
balance, finds a table (quick match with bots filling the empty seats, or, with ``--hands N``, a
table of its own with three bots and a match of N hands; either for ``--stake`` chips a seat)
and runs the screen on it. ``watch TABLE`` logs in the
same way and follows a table as a spectator.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import grpc.aio
from okey.v1 import lobby_pb2

from okey101.client.app import OkeyApp
from okey101.client.chips import chips
from okey101.client.i18n import Strings
from okey101.client.memory import TableMemory
from okey101.client.session import Endpoints, GuestStore, Player, Seating, TableSession


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
    with contextlib.suppress(grpc.aio.AioRpcError):  # the balance is news, not a condition
        wallet = await player.wallet()
        balance = chips(wallet.balance, strings.language)
        progress(strings("logged_in_balance", name=profile.display_name, chips=balance))
    return player


async def find_table(
    player: Player,
    store: GuestStore,
    preset: str,
    hands: int | None,
    strings: Strings,
    progress: Callable[[str], None],
    stake: int = 0,
) -> Seating:
    """Back to the match this guest left unfinished (same preset), else a new seat: quick
    match, or with ``hands`` a table of its own with three bots, either for ``stake`` chips a
    seat (0: none; a balance short of it is refused, the server's sentence saying so). The
    seat is remembered."""
    last = store.last_table()
    if last is not None and await player.rejoin(last, preset):
        progress(strings("back_at_table", table=last.table_id))
        return last
    if hands is not None:
        seating = await player.host_with_bots(preset, hands=hands, stake=stake)
    else:

        def waiting(ticket: lobby_pb2.QuickMatchTicket) -> None:
            fill = ticket.bots_fill_time
            when = fill.ToDatetime(tzinfo=UTC) if fill.seconds else datetime.now(UTC)
            shown = when.astimezone().strftime("%H:%M:%S")
            progress(strings("queue_waiting", players=ticket.players_waiting, time=shown))

        seating = await player.quick_match(preset, waiting, stake=stake)
    store.remember_table(seating)
    return seating


def play_app(
    endpoints: Endpoints,
    strings: Strings,
    *,
    preset: str,
    hands: int | None,
    var_dir: Path,
    name: str = "",
    stake: int = 0,
) -> OkeyApp:
    """The screen, set to log in and find a table (for ``stake`` chips a seat) when it
    starts."""

    async def connect(progress: Callable[[str], None]) -> TableSession:
        player = await _logged_in(endpoints, strings, var_dir, name, progress)
        try:
            store = GuestStore(var_dir, endpoints.lobby)
            seating = await find_table(player, store, preset, hands, strings, progress, stake)
        except BaseException:
            await player.close()
            raise
        progress(strings("seated", table=seating.table_id, seat=seating.seat))
        return player.session(seating.table_id, seating.seat)

    return OkeyApp(connect, strings, memory=TableMemory(var_dir))


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
