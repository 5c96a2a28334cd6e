"""Staked tables' chips over real gRPC, on SQLite and PostgreSQL (docs/chips.md): stakes held as
the seating flows hold them, then RecordTableChips as the table's outbox sends it: a seat freed
before the start, the start with a bot, the end with one winner, a tie, partners, a match
abandoned, records repeated or out of order; two holds racing for one balance; every bad record
refused with nothing written. After each flow the audit balances."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from okey.v1 import lobby_pb2
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.chips import accounts, stakes
from okey101.lobby.errors import SENTENCES, Conflict, InsufficientChips
from okey101.lobby.models import chip_entries, chip_holds, chip_pots, chip_transactions
from okey101.lobby.records import now_us

from support.chips import (
    ABANDONED,
    ENDED,
    SEAT_FREED,
    STARTED,
    ChipsWorld,
    Player,
    record,
    seat,
)
from support.lobby import refused, run

FEES, BOTS = accounts.FEES, accounts.BOTS


async def _players(world: ChipsWorld, count: int) -> list[Player]:
    found = [await world.player(f"P{i}") for i in range(count)]
    for player in found:
        await world.wallet(player)  # the starting grant: 1000 each
    return found


async def _rows(world: ChipsWorld) -> tuple[int, ...]:
    return tuple(
        [
            await world.client.count(table)
            for table in (chip_transactions, chip_entries, chip_holds, chip_pots)
        ]
    )


async def _balanced(world: ChipsWorld) -> Any:
    audit = await world.audit()
    assert audit.chips_balanced, audit.differences
    return audit


async def _started(world: ChipsWorld, table: str, stake: int = 100, humans: int = 3) -> Any:
    """``humans`` players seated with their stakes at ``table``, the other seats bots', and the
    match started: (players, their hold keys)."""
    players = await _players(world, humans)
    keys = [await world.hold(p, table, stake) for p in players]
    seats = [seat(i, p, k) for i, (p, k) in enumerate(zip(players, keys, strict=True))]
    seats += [seat(i) for i in range(humans, 4)]
    await world.record(record(STARTED, table, *seats, stake=stake, fee_percent=5))
    return players, keys


def test_a_stake_is_held_at_sit_and_a_freed_seat_refunded_once(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips() as world:
            (ayse,) = await _players(world, 1)
            key = await world.hold(ayse, "t-free", 500)
            # A retry of the same hold holds nothing more.
            assert await world.hold(ayse, "t-free", 500, key=key) == key
            wallet = await world.wallet(ayse)
            assert (wallet.balance, wallet.held) == (500, 500)
            assert await world.balance(accounts.pot("t-free")) == 500
            freed = record(SEAT_FREED, "t-free", seat(2, ayse, key))
            await world.record(freed)
            await world.record(freed)  # delivered again
            await world.record(record(SEAT_FREED, "t-free", seat(2, ayse, key)))  # a new key
            wallet = await world.wallet(ayse)
            assert (wallet.balance, wallet.held) == (1000, 0)
            assert await world.hold_state(key) == stakes.REFUNDED
            entries = await world.stub.ListWalletEntries(
                lobby_pb2.ListWalletEntriesRequest(), metadata=ayse.auth
            )
            assert [(e.amount, e.reason, e.table_id) for e in entries.entries] == [
                (500, lobby_pb2.WALLET_ENTRY_REASON_REFUND, "t-free"),
                (-500, lobby_pb2.WALLET_ENTRY_REASON_STAKE, "t-free"),
                (1000, lobby_pb2.WALLET_ENTRY_REASON_GRANT, ""),
            ]
            # The pot is still open (nobody else sat): it takes the next stake.
            again = await world.hold(ayse, "t-free", 500)
            assert await world.hold_state(again) == stakes.HELD
            await _balanced(world)

    run(scenario())


def test_a_match_started_with_a_bot_and_won_by_one_player(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips() as world:
            leaver, *_ = await _players(world, 1)
            left_key = await world.hold(leaver, "t-one", 100)  # sat, then left: no SEAT_FREED
            (a, b, c), keys = await _started(world, "t-one")
            assert await world.pot_state("t-one") == stakes.STARTED
            assert [await world.hold_state(k) for k in keys] == [stakes.IN_PLAY] * 3
            assert await world.hold_state(left_key) == stakes.REFUNDED
            assert await world.chips_of(leaver) == 1000
            assert await world.balance(accounts.pot("t-one")) == 400
            assert await world.balance(BOTS) == -100
            assert (await world.wallet(a)).held == 100
            # A stake for a seat once the match started is refused.
            with pytest.raises(Conflict) as closed:
                await world.hold(leaver, "t-one", 100)
            assert closed.value.code == "CHIP_POT_CLOSED"
            ended = record(
                ENDED,
                "t-one",
                seat(0, a, keys[0], place=2),
                seat(1, b, keys[1], place=1),
                seat(2, c, keys[2], place=3),
                seat(3, place=4),
            )
            await world.record(ended)
            # Delivered again, under another key, in another call: paid once.
            await world.record(ended)
            await asyncio.gather(
                *(world.record(record(ENDED, "t-one", *ended.seats)) for _ in range(3))
            )
            assert [await world.chips_of(p) for p in (a, b, c)] == [900, 900 + 380, 900]
            assert await world.balance(FEES) == 20
            assert await world.balance(BOTS) == -100
            assert await world.balance(accounts.pot("t-one")) == 0
            assert await world.pot_state("t-one") == stakes.POT_PAID
            assert [await world.hold_state(k) for k in keys] == [stakes.PAID] * 3
            assert (await world.wallet(b)).held == 0
            payout = (
                await world.stub.ListWalletEntries(
                    lobby_pb2.ListWalletEntriesRequest(page_size=1), metadata=b.auth
                )
            ).entries[0]
            assert (payout.amount, payout.reason, payout.table_id) == (
                380,
                lobby_pb2.WALLET_ENTRY_REASON_PAYOUT,
                "t-one",
            )
            # Late news of a settled pot changes nothing.
            rows = await _rows(world)
            await world.record(record(STARTED, "t-one", *ended.seats))
            await world.record(record(SEAT_FREED, "t-one", seat(0, a, keys[0])))
            await world.record(record(ABANDONED, "t-one"))
            assert await _rows(world) == rows
            audit = await _balanced(world)
            assert (audit.created, audit.destroyed) == (4000, -80)  # fee 20, bots -100

    run(scenario())


def test_a_tie_shares_the_pot_and_the_remainder_goes_to_the_house(
    chips: Callable[..., Any],
) -> None:
    async def scenario() -> None:
        async with chips() as world:
            # 4 x 50 = 200, fee 5% = 10, 190 / 2 = 95 each.
            (a, b, c, d), keys = await _started(world, "t-tie", 50, humans=4)
            places = [1, 3, 1, 4]
            await world.record(
                record(
                    ENDED,
                    "t-tie",
                    *(
                        seat(i, p, k, places[i])
                        for i, (p, k) in enumerate(zip((a, b, c, d), keys, strict=True))
                    ),
                )
            )
            assert [await world.chips_of(p) for p in (a, b, c, d)] == [1045, 950, 1045, 950]
            assert await world.balance(FEES) == 10
            # 4 x 10 = 40, fee 5% = 2, 38 among three winners (one a bot): 12 each, 2 left over.
            (e, f), keys = await _started(world, "t-three", 10, humans=2)
            await world.record(
                record(
                    ENDED,
                    "t-three",
                    seat(0, e, keys[0], 1),
                    seat(1, f, keys[1], 1),
                    seat(2, place=1),
                    seat(3, place=2),
                )
            )
            assert [await world.chips_of(p) for p in (e, f)] == [1002, 1002]
            assert await world.balance(FEES) == 10 + 2 + 2
            assert await world.balance(BOTS) == -20 + 12
            await _balanced(world)

    run(scenario())


def test_partners_split_the_teams_share_per_seat(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips() as world:
            # 4 x 100 = 400, fee 20, 380 to seats 0 and 2: 190 each.
            (a, b, c, d), keys = await _started(world, "t-team", 100, humans=4)
            team = [1, 2, 1, 2]
            players = (a, b, c, d)
            await world.record(
                record(
                    ENDED,
                    "t-team",
                    *(seat(i, players[i], keys[i], team[i]) for i in range(4)),
                    partners=True,
                )
            )
            assert [await world.chips_of(p) for p in players] == [1090, 900, 1090, 900]
            # The record names one seat of the team first: its partner wins with it.
            (e, f), keys = await _started(world, "t-team-2", 100, humans=2)
            await world.record(
                record(
                    ENDED,
                    "t-team-2",
                    seat(0, e, keys[0], 2),
                    seat(1, f, keys[1], 1),
                    seat(2, place=2),
                    seat(3, place=2),
                    partners=True,
                )
            )
            assert [await world.chips_of(p) for p in (e, f)] == [900, 1090]
            assert await world.balance(BOTS) == -200 + 190
            await _balanced(world)

    run(scenario())


def test_an_abandoned_match_refunds_every_stake_bots_included(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips() as world:
            (a, b), keys = await _started(world, "t-gone", 100, humans=2)
            assert await world.balance(BOTS) == -200
            await world.record(record(ABANDONED, "t-gone"))
            await world.record(record(ABANDONED, "t-gone"))
            assert [await world.chips_of(p) for p in (a, b)] == [1000, 1000]
            assert await world.balance(BOTS) == 0
            assert await world.balance(accounts.pot("t-gone")) == 0
            assert await world.pot_state("t-gone") == stakes.POT_REFUNDED
            assert {await world.hold_state(k) for k in keys} == {stakes.REFUNDED}
            # Before the start: the holds alone.
            (c,) = await _players(world, 1)
            key = await world.hold(c, "t-early", 1000)
            assert (await world.wallet(c)).balance == 0
            await world.record(record(ABANDONED, "t-early"))
            assert (await world.wallet(c)).balance == 1000
            assert await world.hold_state(key) == stakes.REFUNDED
            # An end after the abandonment pays nothing.
            await world.record(record(ENDED, "t-early", seat(0, c, key, 1)))
            assert (await world.wallet(c)).balance == 1000
            audit = await _balanced(world)
            assert audit.destroyed == 0 and audit.circulating == audit.created

    run(scenario())


def test_an_end_before_its_start_starts_the_match_from_its_own_seats(
    chips: Callable[..., Any],
) -> None:
    async def scenario() -> None:
        async with chips() as world:
            a, b = await _players(world, 2)
            ka, kb = await world.hold(a, "t-late", 100), await world.hold(b, "t-late", 100)
            seats = [seat(0, a, ka, 1), seat(1, b, kb, 2), seat(2, place=3), seat(3, place=4)]
            await world.record(record(ENDED, "t-late", *seats))
            assert [await world.chips_of(p) for p in (a, b)] == [900 + 380, 900]
            rows = await _rows(world)
            await world.record(record(STARTED, "t-late", *seats))
            await world.record(record(SEAT_FREED, "t-late", seat(1, b, kb)))
            assert await _rows(world) == rows
            # Records of a table without a pot (not staked) change nothing.
            await world.record(
                record(STARTED, "t-unstaked", seat(0, a, "nope"), seat(1)),
                record(ENDED, "t-unstaked", seat(0, a, "nope", 1)),
                record(ABANDONED, "t-unstaked"),
                record(SEAT_FREED, "t-unstaked", seat(0, a, ka)),  # another table's hold
            )
            assert await _rows(world) == rows
            await _balanced(world)

    run(scenario())


def test_bad_records_are_refused_and_write_nothing(chips: Callable[..., Any]) -> None:
    async def scenario() -> None:
        async with chips() as world:
            (a,) = await _players(world, 1)
            key = await world.hold(a, "t-bad", 100)
            good = record(SEAT_FREED, "t-bad", seat(0, a, key))

            def variant(**fields: Any) -> Any:
                changed = lobby_pb2.TableChipsRecord()
                changed.CopyFrom(good)
                for name, value in fields.items():
                    if name == "seats":
                        del changed.seats[:]
                        changed.seats.extend(value)
                    else:
                        setattr(changed, name, value)
                return changed

            cases = [
                ([variant(key="")], "FIELD_REQUIRED", {"field": "records[0].key"}),
                ([variant(key="k" * 256)], "BAD_FIELD", {"field": "records[0].key"}),
                ([variant(kind=0)], "FIELD_REQUIRED", {"field": "records[0].kind"}),
                ([variant(kind=9)], "BAD_FIELD", {"field": "records[0].kind"}),
                ([variant(table_id="")], "FIELD_REQUIRED", {"field": "records[0].table_id"}),
                ([variant(table_id="t" * 129)], "BAD_FIELD", {}),
                ([variant(fee_percent=51)], "BAD_FIELD", {"field": "records[0].fee_percent"}),
                ([variant(seats=[seat(4, a, key)])], "BAD_SEAT", {"seat": "4"}),
                ([variant(seats=[seat(1, a, key), seat(1)])], "DUPLICATE_SEAT", {"seat": "1"}),
                ([variant(seats=[seat(0, a)])], "FIELD_REQUIRED", {}),
                ([variant(seats=[seat(0, a, key, place=5)])], "BAD_FIELD", {}),
                ([variant(kind=ENDED, seats=[seat(0, a, key, 2)])], "BAD_FIELD", {}),
                (
                    [variant(kind=STARTED, seats=[])],
                    "FIELD_REQUIRED",
                    {"field": "records[0].seats"},
                ),
                ([good] * 101, "BAD_FIELD", {"field": "records"}),
                # A bad record after a good one: the good one is not applied either.
                ([good, variant(kind=0)], "FIELD_REQUIRED", {"field": "records[1].kind"}),
            ]
            rows = await _rows(world)
            for records, reason, params in cases:
                for locale in ("en", "tr"):
                    failure = await refused(
                        world.stub.RecordTableChips(
                            lobby_pb2.RecordTableChipsRequest(
                                request_id=uuid.uuid4().hex, records=records, locale=locale
                            ),
                            metadata=world.service,
                        )
                    )
                    assert (failure.code, failure.reason) == (
                        grpc.StatusCode.INVALID_ARGUMENT,
                        reason,
                    ), (reason, failure)
                    assert params.items() <= failure.metadata.items(), failure
                    assert failure.message == SENTENCES.render(reason, locale, failure.metadata)
            player = await refused(
                world.stub.RecordTableChips(
                    lobby_pb2.RecordTableChipsRequest(request_id="p", records=[good]),
                    metadata=a.auth,
                )
            )
            assert (player.code, player.reason) == (
                grpc.StatusCode.PERMISSION_DENIED,
                "TOKEN_WRONG_KIND",
            )
            assert await _rows(world) == rows
            assert await world.hold_state(key) == stakes.HELD

    run(scenario())


def test_a_stake_beyond_the_balance_is_refused_with_it_and_holds_nothing(
    chips: Callable[..., Any],
) -> None:
    async def scenario() -> None:
        async with chips(chips_starting_grant=300) as world:
            ayse = await world.player()
            # The first touch of a wallet may be a stake: the grant comes first.
            await world.hold(ayse, "t-a", 200)
            rows = await _rows(world)
            with pytest.raises(InsufficientChips) as short:
                await world.hold(ayse, "t-b", 500)
            assert short.value.params == {"balance": 100, "needed": 500}
            assert short.value.message("tr") == "100 çipin var; bunun için 500 çip gerekiyor."
            assert await _rows(world) == rows  # no pot, no hold, no transaction
            assert await world.pot_state("t-b") is None

            # A caller that catches the refusal goes on in the same transaction.
            async def both(session: AsyncConnection) -> bool:
                with contextlib.suppress(InsufficientChips):
                    await stakes.hold_stake(
                        session, key="k-big", player_id=ayse.player_id, table_id="t-c",
                        stake=5000, fee_percent=5, now_us=now_us(),
                    )  # fmt: skip
                await stakes.hold_stake(
                    session, key="k-small", player_id=ayse.player_id, table_id="t-d",
                    stake=100, fee_percent=5, now_us=now_us(),
                )  # fmt: skip
                return True

            assert await world.database.transaction(both)
            assert await world.hold_state("k-big") is None
            assert await world.hold_state("k-small") == stakes.HELD
            assert await world.chips_of(ayse) == 0
            await _balanced(world)

    run(scenario())


def test_two_holds_racing_for_one_balance_exactly_one_is_held(chips: Callable[..., Any]) -> None:
    """Two matches starting at once for a player whose balance covers one stake: each hold in
    its own transaction on its own connection, at once. Exactly one succeeds, the other is
    INSUFFICIENT_CHIPS; never an overdraft (PostgreSQL's conditional update; SQLite's writers
    take turns). The first touch of the wallet races too: one starting grant."""

    async def scenario() -> None:
        async with chips() as world:
            for round_ in range(3):
                ayse = await world.player(f"racer {round_}")
                if round_:
                    await world.wallet(ayse)  # the grant first: the race is the debits'

                def holding(table: str, player_id: str) -> Any:
                    async def work(session: AsyncConnection) -> None:
                        await stakes.hold_stake(
                            session, key=f"race:{table}:{player_id}", player_id=player_id,
                            table_id=table, stake=1000, fee_percent=5, now_us=now_us(),
                            starting_grant=1000,
                        )  # fmt: skip

                    return world.database.transaction(work)

                tables = [f"t-race-{round_}-{i}" for i in range(2)]
                outcomes = await asyncio.gather(
                    *(holding(t, ayse.player_id) for t in tables), return_exceptions=True
                )
                held = [o for o in outcomes if o is None]
                refused_ = [o for o in outcomes if isinstance(o, InsufficientChips)]
                assert (len(held), len(refused_)) == (1, 1), outcomes
                assert refused_[0].params == {"balance": 0, "needed": 1000}
                assert await world.chips_of(ayse) == 0
                assert (await world.wallet(ayse)).held == 1000
            audit = await _balanced(world)
            assert audit.totals["house:grants"] == -3000

    run(scenario())
