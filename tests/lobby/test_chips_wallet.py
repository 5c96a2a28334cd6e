"""Wallets over real gRPC, on SQLite and PostgreSQL (docs/chips.md): the starting grant once,
the daily grant once a period, operators' grants and takes (service only, a reason required,
never below zero), the wallet's entries paged newest first, the stake levels; every refusal
with its status, reason and both sentences, and nothing written."""

from __future__ import annotations

import asyncio
import datetime
import uuid
from collections.abc import Callable
from typing import Any

import grpc
from okey.v1 import lobby_pb2
from sqlalchemy import select

from okey101.lobby.chips import accounts
from okey101.lobby.errors import SENTENCES
from okey101.lobby.models import chip_daily_claims, chip_entries, chip_transactions
from okey101.lobby.rpc.wallet import ADJUSTMENT_MAX

from support.chips import ChipsWorld, Player
from support.lobby import refused, run

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def _adjust(player: Player | str, amount: int, reason: str = "goodwill", **fields: Any) -> Any:
    player_id = player.player_id if isinstance(player, Player) else player
    return lobby_pb2.AdjustChipsRequest(
        request_id=fields.pop("request_id", uuid.uuid4().hex),
        player_id=player_id,
        amount=amount,
        reason=reason,
        **fields,
    )


async def _rows(world: ChipsWorld) -> tuple[int, int]:
    """How many ledger transactions and entries there are."""
    return (
        await world.client.count(chip_transactions),
        await world.client.count(chip_entries),
    )


def _sentence_checked(failure: Any, locale: str = "en") -> None:
    assert failure.message == SENTENCES.render(failure.reason, locale, failure.metadata)
    assert failure.locale == {"en": "en-US", "tr": "tr-TR"}[locale]


# ---------------------------------------------------------------------------------------------
# The starting grant


def test_the_starting_grant_is_credited_once_on_the_first_touch(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips(chips_starting_grant=750) as world:
            ayse = await world.player()
            # Logging in alone touches no wallet.
            assert await _rows(world) == (0, 0)
            # Many first touches at once credit it once.
            wallets = await asyncio.gather(*(world.wallet(ayse) for _ in range(5)))
            assert {(w.balance, w.held) for w in wallets} == {(750, 0)}
            assert await _rows(world) == (1, 2)
            entries = await world.stub.ListWalletEntries(
                lobby_pb2.ListWalletEntriesRequest(), metadata=ayse.auth
            )
            (grant,) = entries.entries
            assert (grant.amount, grant.balance_after, grant.reason) == (
                750,
                750,
                lobby_pb2.WALLET_ENTRY_REASON_GRANT,
            )
            assert grant.create_time.seconds > 0 and not grant.table_id and not grant.note
            # A service reads any player's wallet by id; an unknown player is NOT_FOUND.
            served = await world.stub.GetWallet(
                lobby_pb2.GetWalletRequest(player_id=ayse.player_id), metadata=world.service
            )
            assert served.balance == 750
            nobody = await refused(
                world.stub.GetWallet(
                    lobby_pb2.GetWalletRequest(player_id="p_nobody", locale="tr"),
                    metadata=world.service,
                )
            )
            assert (nobody.code, nobody.reason) == (grpc.StatusCode.NOT_FOUND, "PLAYER_NOT_FOUND")
            _sentence_checked(nobody, "tr")
            unnamed = await refused(
                world.stub.GetWallet(lobby_pb2.GetWalletRequest(), metadata=world.service)
            )
            assert (unnamed.code, unnamed.reason) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "FIELD_REQUIRED",
            )
            # A player token reads its own wallet whatever player_id says.
            mehmet = await world.player("Mehmet")
            own = await world.stub.GetWallet(
                lobby_pb2.GetWalletRequest(player_id=mehmet.player_id), metadata=ayse.auth
            )
            assert own.balance == 750
            assert await _rows(world) == (1, 2)  # Mehmet's wallet untouched
            assert (await world.audit()).chips_balanced

    run(scenario())


# ---------------------------------------------------------------------------------------------
# The daily grant


def test_the_daily_grant_is_claimed_once_a_period_and_retries_answer_the_first(
    chips: Callable[..., Any],
) -> None:
    async def scenario() -> None:
        async with chips(chips_daily_amount=60, chips_daily_hours=12) as world:
            ayse = await world.player()
            before = await world.wallet(ayse)
            assert before.daily_amount == 60
            first = lobby_pb2.ClaimDailyChipsRequest(request_id="daily-1")
            claimed = await world.stub.ClaimDailyChips(first, metadata=ayse.auth)
            assert claimed.balance == 1060
            assert claimed.entry.amount == 60
            assert claimed.entry.reason == lobby_pb2.WALLET_ENTRY_REASON_DAILY_GRANT
            due = claimed.next_daily_claim_time.ToDatetime(tzinfo=datetime.UTC)
            now = datetime.datetime.now(tz=datetime.UTC)
            assert (
                datetime.timedelta(hours=11, minutes=59) < due - now <= datetime.timedelta(hours=12)
            )
            # A retry (the answer was lost) is the first answer, and credits nothing.
            assert await world.stub.ClaimDailyChips(first, metadata=ayse.auth) == claimed
            # Another claim within the period is refused, saying when it is due.
            rows = await _rows(world)
            for locale in ("en", "tr"):
                early = await refused(
                    world.stub.ClaimDailyChips(
                        lobby_pb2.ClaimDailyChipsRequest(
                            request_id=f"daily-2{locale}", locale=locale
                        ),
                        metadata=ayse.auth,
                    )
                )
                assert (early.code, early.reason) == (
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "DAILY_CHIPS_NOT_DUE",
                )
                next_time = early.metadata["next_claim_time"]
                parsed = datetime.datetime.fromisoformat(next_time.replace("Z", "+00:00"))
                assert abs((parsed - due).total_seconds()) <= 1
                assert next_time in early.message
                _sentence_checked(early, locale)
            assert await _rows(world) == rows
            assert (await world.chips_of(ayse)) == 1060
            wallet = await world.wallet(ayse)
            assert wallet.next_daily_claim_time == claimed.next_daily_claim_time
            # Two players claiming at once: each once.
            players = [await world.player(f"P{i}") for i in range(4)]
            answers = await asyncio.gather(
                *(
                    world.stub.ClaimDailyChips(
                        lobby_pb2.ClaimDailyChipsRequest(request_id=f"d-{i}"), metadata=p.auth
                    )
                    for i, p in enumerate(players)
                )
            )
            assert {a.balance for a in answers} == {1060}
            assert (await world.audit()).chips_balanced

    run(scenario())


def test_a_period_over_makes_the_next_claim_due(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips(chips_daily_amount=10, chips_daily_hours=1) as world:
            ayse = await world.player()
            await world.stub.ClaimDailyChips(
                lobby_pb2.ClaimDailyChipsRequest(request_id="one"), metadata=ayse.auth
            )
            # Move the last claim back past the period (as if an hour went by).
            async with world.database.write() as session:
                c = chip_daily_claims.c
                last = await session.scalar(select(c.last_claim_us))
                await session.execute(
                    chip_daily_claims.update().values(last_claim_us=int(last) - 3_600_000_001)
                )
            again = await world.stub.ClaimDailyChips(
                lobby_pb2.ClaimDailyChipsRequest(request_id="two"), metadata=ayse.auth
            )
            assert again.balance == 1020
            async with world.database.read() as session:
                assert await session.scalar(select(chip_daily_claims.c.claims)) == 2

    run(scenario())


def test_without_a_daily_grant_a_claim_is_refused(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips(chips_daily_amount=0) as world:
            ayse = await world.player()
            wallet = await world.wallet(ayse)
            assert wallet.daily_amount == 0 and not wallet.HasField("next_daily_claim_time")
            rows = await _rows(world)
            for locale in ("en", "tr"):
                off = await refused(
                    world.stub.ClaimDailyChips(
                        lobby_pb2.ClaimDailyChipsRequest(request_id="x", locale=locale),
                        metadata=ayse.auth,
                    )
                )
                assert (off.code, off.reason) == (
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "DAILY_CHIPS_DISABLED",
                )
                _sentence_checked(off, locale)
            assert await _rows(world) == rows
            # A service cannot claim for a player.
            wrong = await refused(
                world.stub.ClaimDailyChips(
                    lobby_pb2.ClaimDailyChipsRequest(request_id="y"), metadata=world.service
                )
            )
            assert wrong.code == grpc.StatusCode.PERMISSION_DENIED

    run(scenario())


# ---------------------------------------------------------------------------------------------
# Operators


def test_an_operator_grants_and_takes_with_a_reason_never_below_zero(
    chips: Callable[..., Any],
) -> None:
    async def scenario() -> None:
        async with chips() as world:
            ayse = await world.player()
            grant = _adjust(ayse, 250, "tournament compensation", request_id="adj-1")
            granted = await world.stub.AdjustChips(grant, metadata=world.operator)
            assert granted.balance == 1250
            assert granted.entry.amount == 250
            assert granted.entry.note == "tournament compensation"
            assert granted.entry.reason == lobby_pb2.WALLET_ENTRY_REASON_ADJUSTMENT
            # A retry answers the first and moves nothing.
            assert await world.stub.AdjustChips(grant, metadata=world.operator) == granted
            taken = await world.stub.AdjustChips(
                _adjust(ayse, -1200, "  chargeback  "), metadata=world.operator
            )
            assert (taken.balance, taken.entry.amount, taken.entry.note) == (
                50,
                -1200,
                "chargeback",
            )
            rows = await _rows(world)
            for locale in ("en", "tr"):
                short = await refused(
                    world.stub.AdjustChips(
                        _adjust(ayse, -51, locale=locale), metadata=world.operator
                    )
                )
                assert (short.code, short.reason) == (
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "INSUFFICIENT_CHIPS",
                )
                assert short.metadata == {"balance": "50", "needed": "51"}
                assert "50" in short.message and "51" in short.message
                _sentence_checked(short, locale)
            # Exactly the balance may be taken.
            emptied = await world.stub.AdjustChips(_adjust(ayse, -50), metadata=world.operator)
            assert emptied.balance == 0
            assert (await world.wallet(ayse)).balance == 0
            assert await _rows(world) == (rows[0] + 1, rows[1] + 2)
            audit = await world.audit()
            assert audit.chips_balanced
            assert audit.totals["house:adjustments"] == 1000  # 250 granted, 1250 taken
            assert audit.created == 0 and audit.circulating == 0

    run(scenario())


def test_bad_adjustments_are_refused_and_write_nothing(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips() as world:
            ayse = await world.player()
            await world.wallet(ayse)
            cases = [
                (_adjust(ayse, 100, ""), "INVALID_ARGUMENT", "FIELD_REQUIRED", {"field": "reason"}),
                (_adjust(ayse, 100, "   "), "INVALID_ARGUMENT", "FIELD_REQUIRED", {}),
                (_adjust(ayse, 100, "x" * 501), "INVALID_ARGUMENT", "BAD_LENGTH", {}),
                (_adjust(ayse, 100, "two\nlines"), "INVALID_ARGUMENT", "BAD_LENGTH", {}),
                (_adjust(ayse, 0), "INVALID_ARGUMENT", "BAD_CHIP_AMOUNT", {"amount": "0"}),
                (_adjust(ayse, INT64_MAX), "INVALID_ARGUMENT", "BAD_CHIP_AMOUNT", {}),
                (_adjust(ayse, INT64_MIN), "INVALID_ARGUMENT", "BAD_CHIP_AMOUNT", {}),
                (_adjust(ayse, ADJUSTMENT_MAX + 1), "INVALID_ARGUMENT", "BAD_CHIP_AMOUNT", {}),
                (_adjust(ayse, -(2**62)), "INVALID_ARGUMENT", "BAD_CHIP_AMOUNT", {}),
                (_adjust("", 100), "INVALID_ARGUMENT", "FIELD_REQUIRED", {"field": "player_id"}),
                (_adjust("p_nobody", 100), "NOT_FOUND", "PLAYER_NOT_FOUND", {}),
                (_adjust(ayse, 5, request_id=""), "INVALID_ARGUMENT", "FIELD_REQUIRED", {}),
                (_adjust(ayse, 5, request_id="bad id!"), "INVALID_ARGUMENT", "BAD_REQUEST_ID", {}),
            ]
            rows = await _rows(world)
            for request, code, reason, params in cases:
                for locale in ("en", "tr"):
                    request.locale = locale
                    failure = await refused(
                        world.stub.AdjustChips(request, metadata=world.operator)
                    )
                    what = (request.amount, request.reason[:10], request.player_id[:10], locale)
                    assert (failure.code.name, failure.reason) == (code, reason), what
                    assert params.items() <= failure.metadata.items(), what
                    _sentence_checked(failure, locale)
            # Players may not adjust, not even their own.
            own = await refused(world.stub.AdjustChips(_adjust(ayse, 10), metadata=ayse.auth))
            assert (own.code, own.reason) == (grpc.StatusCode.PERMISSION_DENIED, "TOKEN_WRONG_KIND")
            anonymous = await refused(world.stub.AdjustChips(_adjust(ayse, 10)))
            assert anonymous.code == grpc.StatusCode.UNAUTHENTICATED
            # The same request id for another adjustment is refused.
            await world.stub.AdjustChips(
                _adjust(ayse, 7, request_id="same"), metadata=world.operator
            )
            reused = await refused(
                world.stub.AdjustChips(_adjust(ayse, 8, request_id="same"), metadata=world.operator)
            )
            assert reused.reason == "REQUEST_ID_REUSED"
            assert await _rows(world) == (rows[0] + 1, rows[1] + 2)
            assert await world.chips_of(ayse) == 1007

    run(scenario())


# ---------------------------------------------------------------------------------------------
# The wallet's entries, and the stake levels


def test_wallet_entries_are_paged_newest_first(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips(chips_starting_grant=100) as world:
            ayse = await world.player()
            for amount in range(1, 8):  # the grant, then 7 adjustments
                await world.stub.AdjustChips(
                    _adjust(ayse, amount, f"step {amount}"), metadata=world.operator
                )
            seen: list[Any] = []
            token = ""
            while True:
                page = await world.stub.ListWalletEntries(
                    lobby_pb2.ListWalletEntriesRequest(page_size=3, page_token=token),
                    metadata=ayse.auth,
                )
                assert len(page.entries) <= 3
                seen.extend(page.entries)
                token = page.next_page_token
                if not token:
                    break
            assert [e.amount for e in seen] == [7, 6, 5, 4, 3, 2, 1, 100]
            assert [e.balance_after for e in seen] == [128, 121, 115, 110, 106, 103, 101, 100]
            assert len({e.entry_id for e in seen}) == 8
            # The service reads the same list by player id; a token is bound to its list.
            served = await world.stub.ListWalletEntries(
                lobby_pb2.ListWalletEntriesRequest(player_id=ayse.player_id, page_size=200),
                metadata=world.service,
            )
            assert list(served.entries) == seen and not served.next_page_token
            first = await world.stub.ListWalletEntries(
                lobby_pb2.ListWalletEntriesRequest(page_size=2), metadata=ayse.auth
            )
            mehmet = await world.player("Mehmet")
            bound = await refused(
                world.stub.ListWalletEntries(
                    lobby_pb2.ListWalletEntriesRequest(page_token=first.next_page_token),
                    metadata=mehmet.auth,
                )
            )
            assert (bound.code, bound.reason) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "PAGE_TOKEN_INVALID",
            )
            for bad in (
                lobby_pb2.ListWalletEntriesRequest(page_token="junk"),
                lobby_pb2.ListWalletEntriesRequest(page_size=-1),
            ):
                failure = await refused(world.stub.ListWalletEntries(bad, metadata=mehmet.auth))
                assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
            # Refused before the first touch: Mehmet's wallet was never credited.
            assert await world.chips_of(mehmet) == 0
            big = await world.stub.ListWalletEntries(
                lobby_pb2.ListWalletEntriesRequest(page_size=10_000), metadata=ayse.auth
            )
            assert len(big.entries) == 8

    run(scenario())


def test_the_stake_levels_and_fee_are_the_operators(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips(chip_stakes=(500, 20, 100), chip_fee_percent=8) as world:
            ayse = await world.player()
            for auth in (ayse.auth, world.service):
                levels = await world.stub.ListStakeLevels(
                    lobby_pb2.ListStakeLevelsRequest(), metadata=auth
                )
                assert (list(levels.stakes), levels.fee_percent) == ([20, 100, 500], 8)
            assert await _rows(world) == (0, 0)
            nobody = await refused(world.stub.ListStakeLevels(lobby_pb2.ListStakeLevelsRequest()))
            assert nobody.code == grpc.StatusCode.UNAUTHENTICATED
            assert accounts.player(ayse.player_id) == f"player:{ayse.player_id}"

    run(scenario())
