"""Properties of the chips (hypothesis): a pot's split conserves every chip and never pays a seat
that did not win; the ledger refuses entries that do not balance; and whole staked matches
played through the lobby's handler (``record_table_chips``, on a SQLite ledger), in any order
the table's outbox may deliver their records, leave every pot empty, pay only the winners and
keep the books balanced."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from okey.v1 import lobby_pb2
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from okey101.lobby.chips import accounts, ledger, stakes
from okey101.lobby.chips.audit import audit_chips
from okey101.lobby.chips.payouts import split_pot, winning_seats
from okey101.lobby.chips.table_chips import record_table_chips
from okey101.lobby.models import chip_entries, chip_transactions
from okey101.platform.database import Database

PLACES = st.dictionaries(st.integers(0, 3), st.integers(1, 4), min_size=1, max_size=4)


@settings(max_examples=400, deadline=None)
@given(
    pot=st.integers(0, 4 * 10**12),
    fee_percent=st.integers(0, 50),
    places=PLACES,
    partners=st.booleans(),
)
def test_a_split_conserves_every_chip_and_pays_only_winners(
    pot: int, fee_percent: int, places: dict[int, int], partners: bool
) -> None:
    winners = winning_seats(places.items(), partners=partners)
    firsts = {seat for seat, place in places.items() if place == 1}
    if not firsts:
        assert winners == []
        with pytest.raises(ValueError):
            split_pot(pot, fee_percent, winners)
        return
    expected = firsts | ({(s + 2) % 4 for s in firsts} & set(places) if partners else set())
    assert set(winners) == expected
    split = split_pot(pot, fee_percent, winners)
    assert split.fee == pot * fee_percent // 100
    assert split.fee + split.remainder + sum(split.shares.values()) == pot
    assert set(split.shares) == expected  # never a seat that did not win
    assert len(set(split.shares.values())) == 1  # every winner the same
    assert 0 <= split.remainder < len(expected)
    assert split.kept == split.fee + split.remainder


@given(
    st.lists(
        st.tuples(st.sampled_from(["player:a", "pot:t", "house:fees"]), st.integers(-50, 50)),
        min_size=1,
        max_size=6,
    )
)
def test_the_ledger_takes_only_entries_that_balance(entries: list[tuple[str, int]]) -> None:
    total = sum(amount for _account, amount in entries)
    merged: dict[str, int] = {}
    for account, amount in entries:
        merged[account] = merged.get(account, 0) + amount
    if total != 0 or not any(merged.values()):
        with pytest.raises(ledger.LedgerError):
            ledger.normalized(entries)
        return
    normal = ledger.normalized(entries)
    assert sum(entry.amount for entry in normal) == 0
    assert [entry.account for entry in normal] == sorted(a for a, x in merged.items() if x)


def test_the_ledger_refuses_unknown_accounts_and_amounts_that_are_not_chips() -> None:
    for entries in (
        [("wallet:a", 5), ("player:b", -5)],
        [("player:", 5), ("player:b", -5)],
        [("player:a", 5.0), ("player:b", -5)],
        [("player:a", True), ("player:b", -1)],
        [("player:a", 2 * 10**18), ("house:grants", -(2 * 10**18))],
    ):
        with pytest.raises(ledger.LedgerError):
            ledger.normalized(entries)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Whole matches through the handler


@st.composite
def matches(draw: Any) -> dict[str, Any]:
    """A staked match: who sits where (a player or a bot), the stake and fee, who sat and left
    before the start, how it ends (places, partners; or abandoned), and the order the records
    reach the lobby, repeats included."""
    humans = draw(st.sets(st.integers(0, 3), min_size=1))
    leavers = draw(st.integers(0, 2))
    outcome = draw(st.sampled_from(["ended", "ended", "abandoned", "abandoned_early"]))
    places = {seat: draw(st.integers(1, 4)) for seat in range(4)}
    places[draw(st.integers(0, 3))] = 1
    order = draw(st.sampled_from(["in_order", "end_first", "repeated"]))
    return {
        "humans": sorted(humans),
        "leavers": leavers,
        "stake": draw(st.integers(1, 10**6)),
        "fee": draw(st.integers(0, 50)),
        "outcome": outcome,
        "places": places,
        "partners": draw(st.booleans()),
        "order": order,
    }


def _record(kind: int, table: str, n: int, seats: list[Any], partners: bool = False) -> Any:
    return lobby_pb2.TableChipsRecord(
        key=f"{table}/{n}", kind=kind, table_id=table, seats=seats, partners=partners
    )


async def _play(database: Database, number: int, match: dict[str, Any]) -> dict[str, int]:
    """Play ``match`` at table ``t<number>``: each player's expected balance after it."""
    table, stake = f"t{number}", match["stake"]
    expected: dict[str, int] = {}
    seats, freed = [], []

    async def hold(session: AsyncConnection, player: str, key: str) -> None:
        await stakes.hold_stake(
            session, key=key, player_id=player, table_id=table, stake=stake,
            fee_percent=match["fee"], now_us=1, starting_grant=10**7,
        )  # fmt: skip

    async def sit(session: AsyncConnection) -> None:
        for index in range(match["leavers"]):
            player, key = f"{table}-leaver{index}", f"{table}-leaver{index}-hold"
            await hold(session, player, key)
            freed.append(lobby_pb2.TableChipsSeat(seat=index, player_id=player, hold_key=key))
            expected[player] = 10**7
        for seat in range(4):
            if seat in match["humans"]:
                player, key = f"{table}-p{seat}", f"{table}-p{seat}-hold"
                await hold(session, player, key)
                seats.append(lobby_pb2.TableChipsSeat(seat=seat, player_id=player, hold_key=key))
                expected[player] = 10**7 - stake
            else:
                seats.append(lobby_pb2.TableChipsSeat(seat=seat))

    await database.transaction(sit)
    ended = [lobby_pb2.TableChipsSeat() for _ in seats]
    for copy, seat in zip(ended, seats, strict=True):
        copy.CopyFrom(seat)
        copy.place = match["places"][seat.seat]
    start = _record(lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_STARTED, table, 1, seats)
    # Half the leavers' SEAT_FREED come before the start; the start refunds the others.
    before = [
        _record(lobby_pb2.TABLE_CHIPS_EVENT_KIND_SEAT_FREED, table, 10 + i, [s])
        for i, s in enumerate(freed[: len(freed) // 2])
    ]
    if match["outcome"] == "abandoned_early":
        records = [*before, _record(lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ABANDONED, table, 3, [])]
        for player in list(expected):
            expected[player] = 10**7
    elif match["outcome"] == "abandoned":
        records = [
            *before,
            start,
            _record(lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ABANDONED, table, 3, []),
        ]
        for player in list(expected):
            expected[player] = 10**7
    else:
        end = _record(
            lobby_pb2.TABLE_CHIPS_EVENT_KIND_MATCH_ENDED, table, 2, ended, match["partners"]
        )
        records = {
            "in_order": [*before, start, end],
            "end_first": [*before, end, start],
            "repeated": [*before, start, start, end, end, *before],
        }[match["order"]]
        winners = winning_seats(((s.seat, s.place) for s in ended), partners=match["partners"])
        split = split_pot(4 * stake, match["fee"], winners)
        for seat, share in split.shares.items():
            if seat in match["humans"]:
                expected[f"{table}-p{seat}"] += share

    async def deliver(session: AsyncConnection) -> None:
        for item in records:
            await record_table_chips(session, item, 2)

    await database.transaction(deliver)
    return expected


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(matches(), min_size=1, max_size=4))
def test_matches_played_in_any_order_pay_only_winners_and_balance(played: list[Any]) -> None:
    async def scenario(path: Path) -> None:
        database = Database(f"sqlite+aiosqlite:///{path / 'lobby.db'}")
        try:
            await database.migrate("lobby")
            expected: dict[str, int] = {}
            for number, match in enumerate(played):
                expected.update(await _play(database, number, match))
            async with database.read() as session:
                for player, chips in expected.items():
                    assert await ledger.balance(session, accounts.player(player)) == chips, player
                for number in range(len(played)):
                    assert await ledger.balance(session, accounts.pot(f"t{number}")) == 0
                    pot = await stakes.pot_of(session, f"t{number}")
                    assert pot is not None and pot.state in stakes.SETTLED
                # Payouts credit winners only: every player credited by a payout placed first.
                paid = (
                    await session.execute(
                        select(chip_entries.c.account)
                        .join(chip_transactions)
                        .where(chip_transactions.c.reason == ledger.PAYOUT)
                        .where(chip_entries.c.account.like("player:%"))
                    )
                ).scalars()
                for account in paid:
                    table, seat = account.removeprefix("player:").split("-p")
                    match = played[int(table[1:])]
                    partner = match["partners"] and match["places"][(int(seat) + 2) % 4] == 1
                    assert match["places"][int(seat)] == 1 or partner, account
                audit = await audit_chips(session)
            assert audit.chips_balanced, audit.differences
        finally:
            await database.dispose()

    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(scenario(Path(folder)))
