"""End to end: the whole stack as ``make run`` starts it, every service a process of its own
(``okey101 serve NAME``, local mode, SQLite, one var dir), on free ports, with bots that move
at once; clients talk to it only through the public API, as a frontend would.

- a guest quick-matches through the lobby and plays a whole match (its seat played by the
  engine's bot through Act), the table process is restarted in the middle and the stream
  resumes from its last sequence number with nothing missed or repeated; the score sheet is
  read back from scoring and agrees with the table's match result;
- the terminal client, driven headless with Textual's pilot, plays a hand against the table's
  bots (draws, discards, a refused move with the engine's sentence, the turn timer) and shows
  the score sheet from scoring and the match result;
- a spectator's screen follows a table without a rack and cannot move;
- a client faster than the table's rate limit waits it out and finishes its match;
- ``okey101 simulate --lobby`` plays a match against the stack and prints its score sheet;
- docs/integration.md's example client plays a match while the table service restarts.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from okey.v1 import common_pb2, lobby_pb2

from okey101.client.app import OkeyApp
from okey101.client.commands import find_table, play_app, watch_app
from okey101.client.i18n import Strings
from okey101.client.resume import Reconnecting
from okey101.client.screens import ConfirmScreen, ScoreSheetScreen
from okey101.client.session import Endpoints, GuestStore, Player, new_request_id
from okey101.client.simulate import play_match, play_turn
from okey101.engine.bots.levels import BotLevel
from okey101.engine.sentences import render
from okey101.services import SERVICES, built_services
from okey101.stack import FAST, LocalStack, local_stack

MISSING = [name for name in SERVICES if name not in built_services()]
pytestmark = pytest.mark.skipif(
    bool(MISSING), reason=f"not built yet: {', '.join(MISSING)} (the stack needs all five)"
)
SIZE = (120, 40)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    with local_stack(tmp_path_factory.mktemp("stack"), env=FAST) as running:
        yield running


def endpoints(stack: LocalStack) -> Endpoints:
    return Endpoints(
        lobby=stack.address("lobby"),
        table=stack.address("table"),
        scoring=stack.address("scoring"),
        rules=stack.address("rules"),
    )


def test_every_service_runs_as_a_process_of_its_own(stack: LocalStack) -> None:
    pids = {service.process.pid for service in stack.services.values()}
    assert set(stack.services) == {"rules", "bot", "scoring", "table", "lobby"}
    assert len(pids) == 5
    assert all(service.process.poll() is None for service in stack.services.values())


def test_a_quick_match_is_played_to_its_end_through_the_lobby_and_scored(
    stack: LocalStack, tmp_path: Path
) -> None:
    async def main() -> None:
        store = GuestStore(tmp_path, stack.address("lobby"))
        async with Player(endpoints(stack)) as player:
            profile = await player.login_guest(store, "E2E")
            seating = await player.quick_match("oyna")
            session = player.session(seating.table_id, seating.seat)
            table = await session.get_table()
            assert table.state == common_pb2.TABLE_STATE_PLAYING
            kinds = [seat.kind for seat in table.seats]
            assert kinds.count(common_pb2.OCCUPANT_KIND_BOT) == 3
            assert table.seats[seating.seat].player_id == profile.player_id

            sequences: list[int] = []
            reconnects: list[Reconnecting] = []
            restarts: list[asyncio.Task[Any]] = []

            def on_hand(event: common_pb2.Event) -> None:
                # After the first hand, restart the table process (SIGTERM: it drains, streams
                # end with UNAVAILABLE) on the same port, while the match goes on.
                if not restarts:
                    restarts.append(asyncio.create_task(asyncio.to_thread(stack.restart, "table")))

            result, hands = await play_match(
                session,
                level=BotLevel.NORMAL,
                on_hand=on_hand,
                on_event=lambda event: sequences.append(event.sequence),
                on_reconnect=reconnects.append,
            )
            for task in restarts:
                await task
            # The stream was resumed: every sequence number once, in order, none missing.
            assert restarts and reconnects, "the table was restarted but no reconnection seen"
            assert reconnects[0].rejection.code == grpc.StatusCode.UNAVAILABLE
            assert sequences == list(range(sequences[0], sequences[0] + len(sequences)))

            # The match, as the table ended it and as scoring recorded it.
            assert result.hands_played >= 1 and len(hands) >= result.hands_played
            totals = [seat.total for seat in result.seats]
            assert max(totals) >= 1000  # oyna: until a total reaches 1,000
            winners = [seat.seat for seat in result.seats if seat.winner]
            assert all(totals[seat] == min(totals) for seat in winners)
            sheet = await session.score_sheet_through(
                result.match_id, len(hands), wait=15, ended=True
            )
            assert sheet is not None and sheet.ended
            assert list(sheet.totals) == totals
            assert sorted(sheet.winner_seats) == sorted(winners)
            assert sheet.seats[seating.seat].player_id == profile.player_id
            running = [0, 0, 0, 0]
            for row in sheet.rows:
                running = [a + score.points for a, score in zip(running, row.scores, strict=True)]
                assert list(row.running_totals) == running
            assert running == totals
            finished = await session.get_table()
            assert finished.state == common_pb2.TABLE_STATE_FINISHED

        # The next start logs in as the same player (the guest secret was kept).
        async with Player(endpoints(stack)) as again:
            assert (await again.login_guest(store)).player_id == profile.player_id

    asyncio.run(main())


def test_a_client_faster_than_the_rate_limit_waits_it_out_and_finishes_its_match(
    tmp_path: Path,
) -> None:
    """A table that lets one move through at a time, four a second: the simulated client and
    docs/integration.md's example (which move as fast as the table answers) are refused
    RATE_LIMITED on most turns, wait the ``retry_after_ms`` they are told, send the same
    request again, and play their matches to the end; the refusals are on the table's metrics,
    so they did happen."""
    limits = {**FAST, "OKEY_TABLE_ACT_BURST": "1", "OKEY_TABLE_ACT_PER_SECOND": "4"}

    async def main(stack: LocalStack) -> common_pb2.MatchResult:
        async with Player(endpoints(stack)) as player:
            await player.login_guest(GuestStore(tmp_path, stack.address("lobby")), "Hasty")
            seating = await player.host_with_bots("boombala", hands=1)
            result, hands = await play_match(player.session(seating.table_id, seating.seat))
            assert len(hands) == 1
            return result

    with local_stack(tmp_path / "stack", env=limits) as limited:
        result = asyncio.run(main(limited))
        # docs/integration.md's example waits the limit out too.
        script = tmp_path / "example.py"
        script.write_text(guide_example(), encoding="utf-8")
        env = {
            **os.environ,
            "OKEY_LOBBY": limited.address("lobby"),
            "OKEY_TABLE": limited.address("table"),
        }
        example = subprocess.run(
            [sys.executable, str(script)],
            check=False,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert example.returncode == 0, example.stderr
        assert "(winner)" in example.stdout, example.stdout
        port = limited.services["table"].metrics_port
        scrape = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10)
        metrics = scrape.read().decode()
    assert result.hands_played == 1
    refused = [
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("grpc_server_handled_total{")
        and 'grpc_method="Act"' in line
        and 'grpc_code="RESOURCE_EXHAUSTED"' in line
    ]
    assert refused and refused[0] >= 1, "the client was never rate-limited"


def test_tokens_are_refreshed_before_they_expire_and_a_revoked_login_logs_in_again(
    stack: LocalStack, tmp_path: Path
) -> None:
    async def main() -> None:
        async with Player(endpoints(stack)) as player:
            await player.login_guest(GuestStore(tmp_path, stack.address("lobby")), "Tokens")
            tokens = player.tokens
            assert tokens is not None
            seating = await player.host_with_bots("oyna", hands=1)
            session = player.session(seating.table_id, seating.seat)
            first = tokens.access_token
            expires = tokens._tokens.access_token_expire_time.ToSeconds()
            # Seen from a minute before expiry, the next call refreshes first (RefreshTokens).
            tokens._clock = lambda: expires - 30
            assert (await session.get_table()).table_id == seating.table_id
            second = tokens.access_token
            assert second != first
            # The login revoked (Logout): the refresh is refused, and the guest logs in again
            # with its kept secret; calls go on.
            await player.lobby.Logout(
                lobby_pb2.LogoutRequest(
                    request_id=new_request_id(), refresh_token=tokens._tokens.refresh_token
                )
            )
            tokens._clock = lambda: tokens._tokens.access_token_expire_time.ToSeconds() - 30
            assert (await session.get_table()).table_id == seating.table_id
            assert tokens.access_token not in (first, second)

    asyncio.run(main())


def test_a_client_started_again_goes_back_to_its_unfinished_match(
    stack: LocalStack, tmp_path: Path
) -> None:
    async def main() -> None:
        store = GuestStore(tmp_path, stack.address("lobby"))
        said: list[str] = []
        strings = Strings("en")
        async with Player(endpoints(stack)) as first:
            await first.login_guest(store, "Again")
            seating = await find_table(first, store, "oyna", 3, strings, said.append)
        assert store.last_table() == seating
        # A new process, the same device: the same guest, back at the same seat.
        async with Player(endpoints(stack)) as again:
            await again.login_guest(store)
            back = await find_table(again, store, "oyna", 3, strings, said.append)
            assert back == seating
            assert said[-1] == strings("back_at_table", table=seating.table_id)
            table = await again.session(back.table_id, back.seat).get_table()
            assert table.seats[back.seat].player_id == again.profile.player_id
            assert not table.seats[back.seat].away
            # Asked for another preset, it is seated afresh (the old seat stays a bot's).
            other = await find_table(again, store, "boombala", 1, strings, said.append)
            assert other.table_id != seating.table_id
            assert store.last_table() == other

    asyncio.run(main())


# ---------------------------------------------------------------------------------------------
# The terminal client, headless


async def until(pilot: Any, done: Callable[[], bool], timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not done():
        if loop.time() > deadline:
            raise AssertionError("the client did not get there in time")
        await pilot.pause(0.05)


def screen_text(app: OkeyApp) -> str:
    from rich.console import Console

    console = Console(width=SIZE[0], record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


async def put_cursor(app: OkeyApp, pilot: Any, tile_id: int) -> None:
    rack = app.rack_view.rack
    steps = rack.order.index(tile_id) - rack.cursor
    await pilot.press(*(["right"] * steps if steps > 0 else ["left"] * -steps))


def test_the_terminal_client_plays_a_hand_against_bots(stack: LocalStack, tmp_path: Path) -> None:
    """north_sultan (a 45 s turn timer), one hand: the player draws and discards until the hand
    ends; the score sheet comes from scoring and the match result closes it."""

    async def main() -> None:
        app = play_app(
            endpoints(stack), Strings("en"), preset="north_sultan", hands=1, var_dir=tmp_path
        )
        app.check_delay = 0
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.model.view is not None)
            refused = timer_seen = False
            restarts: list[asyncio.Task[Any]] = []
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 120
            while not (
                isinstance(app.screen, ScoreSheetScreen) and app.model.match_result is not None
            ):
                assert loop.time() < deadline, "the hand did not end in time"
                view = app.model.view
                assert view is not None
                if isinstance(app.screen, ConfirmScreen):
                    await pilot.press("y")
                elif (
                    not isinstance(app.screen, ScoreSheetScreen)
                    and view.HasField("seat")
                    and view.turn == view.seat
                    and view.phase != common_pb2.PHASE_ENDED
                    and not app.model.stale
                ):
                    match = re.search(r"Your turn: [^│]*· (\d+) s", screen_text(app))
                    if match:
                        timer_seen = True
                        assert 0 <= int(match.group(1)) <= 45
                    version = view.state_version
                    if view.phase == common_pb2.PHASE_DRAW:
                        await pilot.press("d")
                    elif not refused:
                        # A second draw is refused by the table with the engine's sentence.
                        await pilot.press("d")
                        await until(pilot, lambda: app.message.startswith("Not allowed"))
                        code = (
                            "NO_DRAW_ON_FIRST_TURN"
                            if view.phase == common_pb2.PHASE_FIRST
                            else "ALREADY_DREW"
                        )
                        assert app.message == f"Not allowed: {render(code, 'en', {})}"
                        refused = True
                        continue
                    else:
                        cheap = [item for item in view.rack if not item.costly_discard]
                        chosen = (cheap or list(view.rack))[-1]
                        await put_cursor(app, pilot, chosen.tile.id)
                        await pilot.press("x")
                        if not restarts:
                            # The table process restarts under the client after its first
                            # discard: the stream drops, the client resumes it and plays on.
                            restart = asyncio.to_thread(stack.restart, "table")
                            restarts.append(asyncio.create_task(restart))

                    def moved(before: int = version) -> bool:
                        shown = app.model.view
                        return (shown is not None and shown.state_version > before) or isinstance(
                            app.screen, ConfirmScreen | ScoreSheetScreen
                        )

                    await until(pilot, moved)
                await pilot.pause(0.05)
            assert refused and timer_seen
            for task in restarts:
                await task
            assert app.reconnects, "the table restarted but the client never reconnected"
            assert app.reconnects[0].rejection.code == grpc.StatusCode.UNAVAILABLE
            await until(pilot, lambda: "Match over" in screen_text(app))
            text = screen_text(app)
            assert "Winner:" in text
            # The rows came from scoring, not from the client's own copy of the results.
            assert "has not answered yet" not in text
            assert app.model.hand_results  # the HAND_ENDED event was seen
            await pilot.press("q")

    asyncio.run(main())


def test_a_spectator_follows_a_table_read_only(stack: LocalStack, tmp_path: Path) -> None:
    async def main() -> None:
        async with Player(endpoints(stack)) as host:
            await host.login_guest(GuestStore(tmp_path / "host", stack.address("lobby")), "Host")
            seating = await host.host_with_bots(
                "boombala", hands=1, visibility=common_pb2.TABLE_VISIBILITY_PUBLIC
            )
            seat = host.session(seating.table_id, seating.seat)
            app = watch_app(
                endpoints(stack), Strings("tr"), table_id=seating.table_id, var_dir=tmp_path
            )
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: app.model.view is not None)
                view = app.model.view
                assert view is not None and not view.HasField("seat") and not view.rack
                assert "izleyicilere ıstaka gösterilmez" in screen_text(app)
                await pilot.press("d", "x", "space", "o")
                assert app.sent == []
                # The host plays a turn; the spectator sees it happen, without private tiles.
                before = app.model.last_sequence
                mine = await seat.seat_view()
                while mine.turn != seating.seat:
                    await asyncio.sleep(0.05)
                    mine = await seat.seat_view()
                await play_turn(seat, mine, BotLevel.EASY)
                await until(pilot, lambda: app.model.last_sequence > before)
                await until(pilot, lambda: any("attı" in line for line in app.model.log))
                shown = app.model.view
                assert shown is not None and not shown.rack
                await pilot.press("q")

    asyncio.run(main())


def test_simulate_plays_a_match_and_prints_the_score_sheet(
    stack: LocalStack, tmp_path: Path
) -> None:
    command = [sys.executable, "-m", "okey101.cli", "simulate", "--matches", "1"]
    command += ["--var-dir", str(tmp_path)]
    command += ["--rules", "boombala", "--hands", "1"]
    command += ["--lobby", stack.address("lobby"), "--table", stack.address("table")]
    command += ["--scoring", stack.address("scoring")]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert finished.returncode == 0, finished.stderr
    lines = finished.stdout.splitlines()
    assert lines[0].startswith("Match 1 of 1 at table ")
    header, row, total, winner = lines[1], lines[2], lines[3], lines[4]
    assert header.startswith("Hand") and row.startswith("1 ")
    totals = [int(number) for number in total.split()[1:]]
    points = [int(cell.split("=")[1]) for cell in row.split()[1:5]]
    assert len(totals) == 4 and totals == points
    assert winner.startswith("winner: ")


# ---------------------------------------------------------------------------------------------
# The integration guide's example


GUIDE = Path(__file__).resolve().parents[2] / "docs" / "integration.md"
MARKER = "<!-- example: run by tests/platform/test_e2e_stack.py -->"


def guide_example() -> str:
    """The Python block that follows the marker in docs/integration.md."""
    after = GUIDE.read_text(encoding="utf-8").split(MARKER, 1)[1]
    return after.split("```python\n", 1)[1].split("\n```", 1)[0]


def test_the_integration_guides_example_plays_a_match_across_a_table_restart(
    stack: LocalStack, tmp_path: Path
) -> None:
    script = tmp_path / "example.py"
    script.write_text(guide_example(), encoding="utf-8")
    env = {**os.environ, "OKEY_LOBBY": stack.address("lobby"), "OKEY_TABLE": stack.address("table")}
    child = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert child.stdout is not None
        first = child.stdout.readline()
        assert first.startswith("playing at table "), child.stderr.read() if child.stderr else ""
        # Its first turn (it prints the refusal of a second draw then): its stream is open.
        refusal = child.stdout.readline()
        # The table service restarts (drains, stops, starts on the same port) while it plays.
        # The client is paused meanwhile: the table plays a whole match in well under a second,
        # and the restart must fall in the middle of it (the client finds its stream ended).
        child.send_signal(signal.SIGSTOP)
        try:
            stack.restart("table")
        finally:
            child.send_signal(signal.SIGCONT)
        out, err = child.communicate(timeout=180)
        out = refusal + out
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    lines = out.splitlines()
    refused = [line for line in lines if line.startswith("refused: ")]
    assert refused and refused[0].split(":")[1].strip() in ("ALREADY_DREW", "NO_DRAW_ON_FIRST_TURN")
    # The stream ended under it and was resumed, silently (counted, then said once at the end).
    assert any(re.fullmatch(r"\(the stream was resumed \d+ times\)", line) for line in lines)
    assert not any("UNAVAILABLE" in line or "dropped" in line for line in lines)
    assert [line.split(":")[0] for line in lines if line.startswith("hand ")] == [
        "hand 1 ended",
        "hand 2 ended",
    ]
    # The reveal: each seat's opening and its points itemized, after each hand.
    reveal = [line for line in lines if line.startswith("  seat ")]
    assert len(reveal) == 4 * sum(1 for line in lines if line.startswith("hand "))
    assert all(re.fullmatch(r"  seat \d \(\w+\): .+ = -?\d+", line) for line in reveal)
    results = lines[-4:]
    assert all(re.fullmatch(r".+: -?\d+( \(winner\))?", line) for line in results)
    assert any(line.endswith("(winner)") for line in results)


def test_simulate_starts_a_stack_of_its_own_when_given_no_lobby() -> None:
    command = [sys.executable, "-m", "okey101.cli", "--lang", "tr", "simulate", "--matches", "1"]
    command += ["--rules", "north_sultan", "--hands", "1"]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    assert finished.returncode == 0, finished.stderr
    lines = finished.stdout.splitlines()
    assert lines[0].startswith("1 maçtan 1. maç, ") and "(north_sultan)" in lines[0]
    assert lines[1].startswith("El") and lines[2].startswith("1 ")
    assert lines[3].startswith("Toplam") and lines[4].startswith("kazanan: ")
