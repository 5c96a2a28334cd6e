"""The terminal client's chips (docs/chips.md): how it says a number of chips, a wallet entry and
a payout; that hosting and quick match send the stake chosen (``okey101 play --stake``); and,
against the real stack, the balance, a stake refused with the lobby's sentence, a staked table's
stake and pot, and the wallet's history as ``session.Player`` reads them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from okey.v1 import common_pb2, lobby_pb2, lobby_pb2_grpc

from okey101.cli import build_parser
from okey101.client import chips
from okey101.client.errors import Rejection
from okey101.client.i18n import Strings
from okey101.client.session import Endpoints, Player
from okey101.platform.auth import TokenIssuer, dev_signing_key
from okey101.stack import FAST, LocalStack, local_stack

EN, TR = Strings("en"), Strings("tr")


def _entry(amount: int, reason: int, after: int, **fields: str) -> lobby_pb2.WalletEntry:
    entry = lobby_pb2.WalletEntry(
        amount=amount,
        balance_after=after,
        reason=reason,  # type: ignore[arg-type]
    )
    for name, value in fields.items():
        setattr(entry, name, value)
    entry.create_time.FromSeconds(1_790_000_000)
    return entry


def test_chips_are_said_in_the_players_language_with_their_sign() -> None:
    assert chips.chips(1_234_567, "en") == "1,234,567"
    assert chips.chips(1_234_567, "tr") == "1.234.567"
    assert chips.signed(100, "en") == "+100" and chips.signed(-1500, "tr") == "-1.500"
    assert chips.signed(0, "en") == "0"
    wallet = lobby_pb2.GetWalletResponse(balance=1900, held=100)
    assert chips.wallet_line(wallet, EN) == "balance 1,900 · in play 100"
    assert chips.wallet_line(lobby_pb2.GetWalletResponse(balance=5), TR) == "bakiye 5"
    assert chips.wallet_line(None, EN) == ""
    staked = common_pb2.Table(stake=1000, pot=4000)
    assert chips.stake_line(staked, TR) == "bahis 1.000 · pot 4.000"
    assert chips.stake_line(common_pb2.Table(), EN) == ""  # not a staked table
    assert chips.title_suffix(staked, wallet, EN) == (
        "stake 1,000 · pot 4,000 · balance 1,900 · in play 100"
    )


def test_a_wallet_entry_says_why_how_much_and_for_what() -> None:
    stake = _entry(-100, lobby_pb2.WALLET_ENTRY_REASON_STAKE, 900, table_id="t-1")
    _when, what, amount, after, belongs = chips.entry_text(stake, TR)
    assert (what, amount, after, belongs) == ("Bahis", "-100", "900", "t-1 masası")
    prize = _entry(2500, lobby_pb2.WALLET_ENTRY_REASON_PRIZE, 3400, tournament_id="cup")
    said = ("Tournament prize", "+2,500", "3,400", "tournament cup")
    assert chips.entry_text(prize, EN)[1:] == said
    taken = _entry(-50, lobby_pb2.WALLET_ENTRY_REASON_ADJUSTMENT, 0, note="chip dumping")
    assert chips.entry_text(taken, EN)[1] == "Adjustment by the operator: chip dumping"
    # Every reason has its words in both languages.
    for reason in lobby_pb2.WalletEntryReason.values():
        if reason:
            assert chips.REASONS[reason], reason
    unknown = _entry(1, 99, 1)
    assert chips.entry_text(unknown, TR)[1] == "Diğer"


def test_the_payout_is_the_tables_payout_entries_once_they_come() -> None:
    pages = [
        [_entry(-100, lobby_pb2.WALLET_ENTRY_REASON_STAKE, 900, table_id="t-1")],
        [
            _entry(95, lobby_pb2.WALLET_ENTRY_REASON_PAYOUT, 995, table_id="t-2"),
            _entry(-100, lobby_pb2.WALLET_ENTRY_REASON_STAKE, 900, table_id="t-1"),
        ],
        [
            _entry(190, lobby_pb2.WALLET_ENTRY_REASON_PAYOUT, 1185, table_id="t-1"),
            _entry(95, lobby_pb2.WALLET_ENTRY_REASON_PAYOUT, 995, table_id="t-2"),
        ],
    ]
    asked = 0

    async def entries() -> lobby_pb2.ListWalletEntriesResponse:
        nonlocal asked
        page = pages[min(asked, len(pages) - 1)]
        asked += 1
        return lobby_pb2.ListWalletEntriesResponse(entries=page)

    assert asyncio.run(chips.payout_of(entries, "t-1", pause=0.01)) == 190
    assert asked == 3
    asked = 0
    assert asyncio.run(chips.payout_of(entries, "t-9", patience=0.05, pause=0.01)) is None
    result = common_pb2.MatchResult()
    result.seats.add(seat=0, winner=False)
    result.seats.add(seat=1, winner=True)
    assert chips.is_winner(result, 1) and not chips.is_winner(result, 0)
    assert not chips.is_winner(result, None)  # a spectator
    assert chips.payout_text("none", TR, stake=100).plain == (
        "Bu sefer kazanç yok: 100 çiplik bahsin pota gitti."
    )
    assert chips.payout_text("paid", EN, amount=1900, stake=500).plain == (
        "Your winnings: +1,900 chips (stake 500)."
    )


# ---------------------------------------------------------------------------------------------
# The stake asked for


def test_play_takes_a_stake() -> None:
    assert build_parser().parse_args(["play", "--stake", "100"]).stake == 100
    assert build_parser().parse_args(["play"]).stake == 0


class _Snapshot:
    """WatchPlayer as the lobby answers it: a snapshot, then nothing until cancelled."""

    def __aiter__(self) -> AsyncIterator[lobby_pb2.WatchPlayerResponse]:
        return self._items()

    async def _items(self) -> AsyncIterator[lobby_pb2.WatchPlayerResponse]:
        yield lobby_pb2.WatchPlayerResponse(snapshot=lobby_pb2.PlayerSnapshot(as_of_sequence=3))
        await asyncio.sleep(3600)

    def cancel(self) -> None:
        pass


class _Lobby:
    """The lobby's stub: records HostTable's and JoinQuickMatch's requests."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def HostTable(self, request: Any, **_: Any) -> lobby_pb2.HostTableResponse:  # noqa: N802
        self.sent.append(request)
        return lobby_pb2.HostTableResponse(table=common_pb2.Table(table_id="t-1"), seat=0)

    async def JoinQuickMatch(self, request: Any, **_: Any) -> lobby_pb2.JoinQuickMatchResponse:  # noqa: N802
        self.sent.append(request)
        ticket = lobby_pb2.QuickMatchTicket(
            state=lobby_pb2.QUICK_MATCH_STATE_MATCHED, table_id="t-2", seat=1, stake=request.stake
        )
        return lobby_pb2.JoinQuickMatchResponse(ticket=ticket)

    def WatchPlayer(self, _request: Any, **_: Any) -> _Snapshot:  # noqa: N802
        return _Snapshot()


def test_hosting_and_quick_match_send_the_stake() -> None:
    async def main() -> list[Any]:
        async with Player(Endpoints(lobby="127.0.0.1:9")) as player:
            stub = _Lobby()
            player.lobby = stub  # type: ignore[assignment]

            async def metadata() -> tuple[tuple[str, str], ...]:
                return (("authorization", "Bearer x"),)

            player.metadata = metadata  # type: ignore[method-assign]
            hosted = await player.host_with_bots("oyna", hands=1, stake=500)
            matched = await player.quick_match("boombala", stake=50, timeout=5)
            assert (hosted.table_id, matched.table_id) == ("t-1", "t-2")
            await player.host_with_bots("oyna")
            return stub.sent

    host, quick, unstaked = asyncio.run(main())
    assert host.stake == 500 and quick.stake == 50 and unstaked.stake == 0
    assert quick.preset == common_pb2.RULE_PRESET_BOOMBALA


# ---------------------------------------------------------------------------------------------
# Against the real stack


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with local_stack(env=FAST, services=("lobby", "table", "scoring", "rules", "bot")) as services:
        yield services


def _endpoints(stack: LocalStack) -> Endpoints:
    return Endpoints(
        lobby=stack.address("lobby"),
        table=stack.address("table"),
        scoring=stack.address("scoring"),
        rules=stack.address("rules"),
    )


@pytest.mark.slow
def test_the_players_chips_through_the_public_api(stack: LocalStack) -> None:
    """A new guest's balance is the starting grant; a stake above it is refused with the lobby's
    sentence naming the balance; one it covers is held: the table has its stake and pot, the
    wallet the chips in play and a STAKE entry for the table."""
    token = TokenIssuer(dev_signing_key(stack.var_dir)).issue("service:test", "service")

    async def main() -> None:
        async with Player(_endpoints(stack)) as player:
            await player.login_guest(None, "Kasa")
            levels = await player.stake_levels()
            assert list(levels.stakes) == sorted(levels.stakes) and levels.stakes
            wallet = await player.wallet()
            start = wallet.balance
            assert start > 0 and wallet.held == 0
            # Poor: a stake above the balance is refused before sitting, with the balance.
            above = next((s for s in levels.stakes if s > start), None)
            if above is None:
                async with grpc.aio.insecure_channel(stack.address("lobby")) as channel:
                    lobby = lobby_pb2_grpc.LobbyServiceStub(channel)
                    take = lobby_pb2.AdjustChipsRequest(
                        request_id="take-kasa",
                        player_id=player.profile.player_id,
                        amount=-(start - 1),
                        reason="a test makes the player poor",
                    )
                    await lobby.AdjustChips(take, metadata=(("authorization", f"Bearer {token}"),))
                above = levels.stakes[-1]
                start = 1
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await player.host_with_bots("oyna", hands=1, stake=above)
            rejection = Rejection.of(refused.value)
            assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert rejection.reason == "INSUFFICIENT_CHIPS"
            assert f"{start:,}" in rejection.message or str(start) in rejection.message
            if start < levels.stakes[0]:
                return
            stake = max(s for s in levels.stakes if s <= start)
            seating = await player.host_with_bots("oyna", hands=1, stake=stake)
            session = player.session(seating.table_id, seating.seat)
            table = await session.get_table()
            assert table.stake == stake and table.fee_percent == levels.fee_percent
            assert table.pot in (stake, 4 * stake)  # the bots' stakes join at the start
            wallet = await player.wallet()
            assert wallet.balance + wallet.held == start and wallet.held == stake
            history = await player.wallet_entries()
            entry = history.entries[0]
            assert entry.reason == lobby_pb2.WALLET_ENTRY_REASON_STAKE
            assert (entry.amount, entry.table_id) == (-stake, seating.table_id)
            assert entry.balance_after == start - stake

    asyncio.run(main())


@pytest.mark.slow
def test_the_terminal_client_plays_for_a_stake(stack: LocalStack, tmp_path: Path) -> None:
    """``okey101 play --hands 1 --stake 100``: the title shows the stake, the pot and the
    balance with the chips in play; ``w`` the wallet's history with the stake for the table. The
    same guest asking for a stake above its balance is refused with the lobby's sentence."""
    from okey101.client.commands import play_app
    from okey101.client.screens import WalletScreen

    async def main() -> None:
        app = play_app(
            _endpoints(stack), EN, preset="oyna", hands=1, var_dir=tmp_path, name="Lale", stake=100
        )
        async with app.run_test(size=(150, 40)) as pilot:
            await _until(pilot, lambda: "pot 400 · balance" in str(app.title_bar.render()))
            title = str(app.title_bar.render())
            assert "stake 100 · pot 400 · balance 900 · in play 100" in title, title
            await pilot.press("w")
            await _until(pilot, lambda: getattr(app.screen, "loaded", False))
            assert isinstance(app.screen, WalletScreen)
            newest = app.screen.entries[0]
            assert newest.reason == lobby_pb2.WALLET_ENTRY_REASON_STAKE
            assert (newest.amount, newest.table_id) == (-100, app.port.table_id if app.port else "")
            app.exit(0)
        # Another preset (so not back at the same match) for more than the balance.
        poor = play_app(
            _endpoints(stack), EN, preset="boombala", hands=1, var_dir=tmp_path, stake=1000
        )
        async with poor.run_test(size=(150, 40)) as pilot:
            await _until(pilot, lambda: bool(poor.failure))
        assert poor.return_code == 1
        assert ("900" in poor.failure and "1,000" in poor.failure) or "1000" in poor.failure

    asyncio.run(main())


async def _until(pilot: Any, done: Any, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not done():
        assert loop.time() < deadline, "not in time"
        await pilot.pause(0.05)
